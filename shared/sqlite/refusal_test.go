package sqlite

import (
	"context"
	"strings"
	"testing"

	"kassa.dev/shared/kassa"
	"kassa.dev/shared/sqlite/engine"
	"kassa.dev/sync/change"
)

// refusedSale is a cash sale made at an edge of hub that an older
// release's admission refused in part: the hub quarantined the payment
// (olderRules) and then the order's completion, which needs it.
type refusedSale struct {
	hub, edge *node
	w         world
	order     *kassa.Order
	from      EdgeScope
}

func mustRefusedSale(t *testing.T) *refusedSale {
	t.Helper()
	ctx := context.Background()
	hub, edge := mustNode(t), mustNode(t)
	w := seed(t, hub)
	ship(t, hub, edge)
	from := EdgeScope{OrgID: w.org, LocationID: w.loc, NodeID: edge.db.NodeID}
	if err := hub.db.Write(ctx, func(tx *Tx) error {
		_, err := tx.ExecContext(ctx, `INSERT INTO sync_nodes (node_id, org_id, location_id, secret_hash, enrolled_at) VALUES (?, ?, ?, '-', ?)`,
			from.NodeID, w.org, w.loc, fmtTime(tx.Now))
		return err
	}); err != nil {
		t.Fatal(err)
	}
	o := sell(t, edge, w, w.p1, 2)
	es, err := edge.db.ChangesAfter(ctx, 0, 10000, LogFilter{Unsent: true})
	if err != nil {
		t.Fatal(err)
	}
	engine.OlderRules = func(c *change.Change) error {
		if c.Entity == "payment" {
			return refuse(RefusedField, "an edge may not change payment.tendered")
		}
		return nil
	}
	t.Cleanup(func() { engine.OlderRules = nil })
	res, q, err := hub.db.Ingest(ctx, from, wire(t, es))
	if err != nil || q < 2 {
		t.Fatalf("ingest under the older rules: %d quarantined, %v", q, err)
	}
	if len(res.Refused) != q {
		t.Fatalf("the push's result lists %d refusals of %d", len(res.Refused), q)
	}
	return &refusedSale{hub: hub, edge: edge, w: w, order: o, from: from}
}

// openQuarantined lists the hub's open quarantined conflicts by entity.
func (s *refusedSale) openQuarantined(t *testing.T) map[string]kassa.Conflict {
	t.Helper()
	l, err := s.hub.db.Conflicts(s.w.ctx, kassa.ConflictFilter{Status: kassa.ConflictOpen, Page: kassa.Page{Limit: 200}})
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]kassa.Conflict{}
	for _, c := range l.Items {
		if c.Kind == kassa.ConflictQuarantined {
			if c.Entity == "order" && !strings.Contains(string(c.Remote), `"completed"`) {
				continue
			}
			out[c.Entity] = c
		}
	}
	return out
}

// TestReapplyAdmitsUnderTheRunningRulesAndRetriesTheOrder: an older
// release refused a sale's payment, then its completion ("completed with
// 0 of 1000 paid"). Re-applying the completion while the older rule holds
// still fails (422, nothing resolved); under the running rules it
// re-applies the payment first, then the completion: both resolved, the
// hub's order completed and paid, nothing left in quarantine for it; the
// conflicts name the order by its number and word the refusal.
func TestReapplyAdmitsUnderTheRunningRulesAndRetriesTheOrder(t *testing.T) {
	s := mustRefusedSale(t)
	open := s.openQuarantined(t)
	pay, done := open["payment"], open["order"]
	if pay.ID == "" || done.ID == "" {
		t.Fatalf("want the payment and the completion quarantined, have %v", open)
	}
	if want := "order " + s.order.Number; !strings.Contains(pay.Subject, want) || !strings.Contains(done.Summary, want) ||
		strings.Contains(done.Summary, s.order.ID) || !strings.HasPrefix(done.Summary, "The hub refused marking order") {
		t.Errorf("named %q / %q, want %q and no ids", pay.Subject, done.Summary, want)
	}
	for _, c := range open {
		t.Logf("%s: %s", c.Entity, c.Summary)
	}
	svc := NewConflictService(s.hub.db)
	if _, err := svc.Reapply(s.w.ctx, done.ID); kassa.ErrorKind(err) != kassa.EInvalid || !strings.Contains(err.Error(), "paid") {
		t.Fatalf("re-apply under the older rules: %v, want still refused for want of payment", err)
	}
	if len(s.openQuarantined(t)) != len(open) {
		t.Fatalf("a failed re-apply resolved something: before %v after %v", open, s.openQuarantined(t))
	}
	engine.OlderRules = nil // the upgrade
	c, err := svc.Reapply(s.w.ctx, done.ID)
	if err != nil || c.Status != kassa.ConflictResolved || *c.Resolution != kassa.ResolutionReapplied {
		t.Fatalf("re-apply under the running rules: %v %+v", err, c)
	}
	if left := s.openQuarantined(t); len(left) != 0 {
		t.Fatalf("still quarantined: %v", left)
	}
	o, err := s.hub.orders.FindOrderByID(s.w.ctx, s.order.ID)
	if err != nil || o.Status != kassa.OrderCompleted || o.PaidTotal != s.order.Total {
		t.Fatalf("hub's order %s paid %d of %d (%v)", o.Status, o.PaidTotal, s.order.Total, err)
	}
	refused, n, err := s.hub.db.EdgeRefusals(context.Background(), s.w.org, s.w.loc, s.from.NodeID, 100)
	if err != nil || n != 0 || len(refused) != 0 {
		t.Fatalf("the edge is still told of %d refusals (%v)", n, err)
	}
}

// TestTakingTheHubsVersionSendsItsRowToTheEdge: ops resolve the refused
// payment by the hub's version: its row goes into the hub's log stamped
// now, the edge applies it over its own, and the conflict says so. The
// hub has no version of a record it never admitted a row of.
func TestTakingTheHubsVersionSendsItsRowToTheEdge(t *testing.T) {
	s := mustRefusedSale(t)
	pay := s.openQuarantined(t)["payment"]
	svc := NewConflictService(s.hub.db)
	_, err := svc.Resolve(s.w.ctx, pay.ID, &kassa.ConflictResolve{Note: "store took no money", Take: kassa.TakeHub})
	if kassa.ErrorKind(err) != kassa.EConflict || !strings.Contains(err.Error(), "no hub version") {
		t.Fatalf("take the hub's version of a payment it never had: %v", err)
	}
	engine.OlderRules = nil
	done := s.openQuarantined(t)["order"]
	c, err := svc.Resolve(s.w.ctx, done.ID, &kassa.ConflictResolve{Note: "checked with the store", Take: kassa.TakeEdge})
	if err != nil || c.Taken == nil || *c.Taken != kassa.TakeEdge || *c.Resolution != "checked with the store" {
		t.Fatalf("take the edge's version: %v %+v", err, c)
	}
	if left := s.openQuarantined(t); len(left) != 0 {
		t.Fatalf("still quarantined after taking the edge's version: %v", left)
	}
}

// TestTheHubsVersionOverwritesTheEdgesRow: the store renames a customer
// and an older release refuses the rename; ops take the hub's version:
// the hub's row goes into its log stamped after the rename, and the
// store, applying the hub's log, has the hub's name again.
func TestTheHubsVersionOverwritesTheEdgesRow(t *testing.T) {
	s := mustRefusedSale(t)
	ctx := context.Background()
	sent, err := s.edge.db.ChangesAfter(ctx, 0, 10000, LogFilter{Unsent: true})
	if err != nil || len(sent) == 0 {
		t.Fatalf("the sale's records: %d %v", len(sent), err)
	}
	if err := s.edge.db.MarkSent(ctx, sent[len(sent)-1].Seq); err != nil {
		t.Fatal(err)
	}
	if _, err := s.edge.custs.UpdateCustomer(s.w.ctx, s.w.customer, &kassa.CustomerUpdate{FirstName: kassa.Opt[string]{Set: true, Value: "Renamed"}}); err != nil {
		t.Fatal(err)
	}
	rename, err := s.edge.db.ChangesAfter(ctx, 0, 10000, LogFilter{Unsent: true})
	if err != nil {
		t.Fatal(err)
	}
	engine.OlderRules = func(c *change.Change) error {
		if c.Entity == "customer" {
			return refuse(RefusedField, "an edge may not change customer.first_name")
		}
		return nil
	}
	if _, q, err := s.hub.db.Ingest(ctx, s.from, wire(t, rename)); err != nil || q != 1 {
		t.Fatalf("the rename: %d quarantined, %v", q, err)
	}
	engine.OlderRules = nil
	var id string
	l, _ := s.hub.db.Conflicts(s.w.ctx, kassa.ConflictFilter{Status: kassa.ConflictOpen, Page: kassa.Page{Limit: 200}})
	for _, c := range l.Items {
		if c.EntityID == s.w.customer {
			id = c.ID
		}
	}
	c, err := NewConflictService(s.hub.db).Resolve(s.w.ctx, id, &kassa.ConflictResolve{Note: "the hub's name is right", Take: kassa.TakeHub})
	if err != nil || *c.Taken != kassa.TakeHub {
		t.Fatalf("take the hub's version: %v", err)
	}
	log, err := s.hub.db.ChangesAfter(ctx, 0, 100000, LogFilter{ExcludeOrigin: s.edge.db.NodeID})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.edge.db.Apply(ctx, wire(t, log), false); err != nil {
		t.Fatal(err)
	}
	got, err := s.edge.custs.FindCustomerByID(s.w.ctx, s.w.customer)
	if err != nil || got.FirstName != "Ann" {
		t.Fatalf("the store's customer after taking the hub's version: %+v %v", got, err)
	}
}
