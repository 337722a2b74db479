package httpapi_test

import (
	"context"
	"fmt"
	"regexp"
	"strings"
	"testing"
	"time"

	"kassa.dev/shared/kassa"
	"kassa.dev/shared/node"
	"kassa.dev/sync/change"
	"kassa.dev/sync/hlc"
)

// conflictHub is a hub with an org, an enrolled edge of its first
// location and helpers that push changes as that edge.
type conflictHub struct {
	tn             *testNode
	o              *testOrg
	loc, edge      string
	kitchenID      string
	ownerID        string
	kitchen, ops   string // access tokens
	cashier, other string // a cashier of the org; the owner of another org
}

func mustConflictHub(t *testing.T) *conflictHub {
	t.Helper()
	tn := MustStartNode(t, kassa.NodeHub, func(c *node.Config) {
		c.Extend = func(n *node.Node) error {
			n.Services.Enrolment = n.EnrolmentService(func() string { return "nats-leaf://127.0.0.1:7422" }, nil)
			n.Services.Sync = n.HubSync(node.NewEdgeBook())
			return nil
		}
	})
	h := &conflictHub{tn: tn, o: tn.MustOrg("Conflict Cafe")}
	h.loc = tn.Do("POST", "/api/v1/locations", h.o.Owner, map[string]any{"name": "Main St", "timezone": "Australia/Sydney"}).Data()["id"].(string)
	enrol := tn.Do("POST", "/api/v1/locations/"+h.loc+"/enrolment", h.o.Owner, map[string]any{})
	h.edge = tn.Do("POST", "/api/v1/sync/enrol", "", map[string]any{"token": enrol.Data()["token"]}).Data()["node_id"].(string)
	h.kitchen = tn.MustUser(h.o, "kitchen@conflict.test", kassa.RoleKitchen)
	h.kitchenID = tn.Do("GET", "/api/v1/auth/me", h.kitchen, nil).Data()["id"].(string)
	h.ownerID = tn.Do("GET", "/api/v1/auth/me", h.o.Owner, nil).Data()["id"].(string)
	h.ops = tn.MustUser(h.o, "ops@conflict.test", kassa.RoleOps)
	h.cashier = tn.MustUser(h.o, "cashier@conflict.test", kassa.RoleCashier)
	h.other = tn.MustOrg("Other Cafe").Owner
	return h
}

// push ingests one change as the edge and returns the conflict it made.
func (h *conflictHub) push(t *testing.T, actor string, fields map[string]any, wall time.Time) (change.Change, map[string]any) {
	t.Helper()
	now := time.Now().UTC().Format(time.RFC3339Nano)
	fields["created_at"], fields["updated_at"] = now, now
	c := change.Change{ID: h.tn.N.NewID(), OrgID: h.o.ID, Entity: "customer", EntityID: h.tn.N.NewID(), Op: change.OpInsert,
		Fields: fields, HLC: hlc.Timestamp{Wall: wall.UnixMilli()}, Origin: h.edge, Actor: actor}
	if _, err := h.tn.N.IngestFrom(context.Background(), h.o.ID, h.loc, h.edge, []change.Change{c}); err != nil {
		t.Fatal(err)
	}
	for _, x := range h.tn.Do("GET", "/api/v1/sync/conflicts?limit=200", h.o.Owner, nil).List() {
		if m := x.(map[string]any); m["entity_id"] == c.EntityID {
			return c, m
		}
	}
	t.Fatalf("no conflict recorded for %s", c.EntityID)
	return c, nil
}

// quarantine pushes a customer made by the kitchen, which may not make
// customers: the hub refuses and quarantines it.
func (h *conflictHub) quarantine(t *testing.T, name string) (change.Change, string) {
	t.Helper()
	c, q := h.push(t, h.kitchenID, map[string]any{"first_name": name, "last_name": "Q"}, time.Now())
	if q["kind"] != kassa.ConflictQuarantined || q["status"] != kassa.ConflictOpen {
		t.Fatalf("not an open quarantined record: %v", q)
	}
	return c, q["id"].(string)
}

func (h *conflictHub) conflicts(t *testing.T, status string) map[string]bool {
	t.Helper()
	r := h.tn.Do("GET", "/api/v1/sync/conflicts?limit=200&status="+status, h.o.Owner, nil)
	if r.Status != 200 {
		t.Fatalf("list %s: %d %s", status, r.Status, r.Body)
	}
	out := map[string]bool{}
	for _, x := range r.List() {
		m := x.(map[string]any)
		if m["status"] != status {
			t.Errorf("the %s list holds a %v conflict", status, m["status"])
		}
		out[m["id"].(string)] = true
	}
	return out
}

// TestConflictResolution: ops and owners resolve conflicts at the hub with
// a note, and re-apply a quarantined record once what refused it is gone;
// a record that still fails stays open with the reason, and nothing else
// (another org, a cashier, bad bodies, a second resolve) changes anything.
func TestConflictResolution(t *testing.T) {
	h := mustConflictHub(t)
	tn := h.tn
	_, plain := h.quarantine(t, "Plain")
	stuck, stuckID := h.quarantine(t, "Stuck")
	// An honest change stamped a day ahead: applied, with its clock clamped.
	_, clamped := h.push(t, h.ownerID, map[string]any{"first_name": "Clock", "last_name": "Ahead"}, time.Now().Add(24*time.Hour))
	if clamped["kind"] != kassa.ConflictClockClamped {
		t.Fatalf("want a clock_clamped conflict: %v", clamped)
	}
	clampedID := clamped["id"].(string)
	resolve := func(id string) string { return "/api/v1/sync/conflicts/" + id + "/resolve" }
	reapply := func(id string) string { return "/api/v1/sync/conflicts/" + id + "/reapply" }
	note := map[string]any{"note": "checked with the store"}

	for _, c := range []struct {
		name, method, path, token string
		body                      any
		status                    int
		kind                      string // problem kind
	}{
		{"a cashier may not resolve", "POST", resolve(plain), h.cashier, note, 403, "forbidden"},
		{"the kitchen may not re-apply", "POST", reapply(stuckID), h.kitchen, nil, 403, "forbidden"},
		{"another org's conflict", "POST", resolve(plain), h.other, note, 404, "not-found"},
		{"another org's re-apply", "POST", reapply(stuckID), h.other, nil, 404, "not-found"},
		{"no such conflict", "POST", resolve(tn.N.NewID()), h.o.Owner, note, 404, "not-found"},
		{"no note", "POST", resolve(plain), h.o.Owner, map[string]any{}, 422, "validation"},
		{"a blank note", "POST", resolve(plain), h.o.Owner, map[string]any{"note": "  "}, 422, "validation"},
		{"a note too long", "POST", resolve(plain), h.o.Owner, map[string]any{"note": strings.Repeat("x", 501)}, 422, "validation"},
		{"a note of the wrong type", "POST", resolve(plain), h.o.Owner, map[string]any{"note": 5}, 422, "validation"},
		{"re-apply of another kind", "POST", reapply(clampedID), h.o.Owner, nil, 409, "conflict"},
		{"a record that still fails", "POST", reapply(stuckID), h.ops, nil, 422, "validation"},
		{"a bad status filter", "GET", "/api/v1/sync/conflicts?status=closed", h.o.Owner, nil, 400, "bad-request"},
	} {
		t.Run(c.name, func(t *testing.T) {
			p := mustProblem(t, tn.Do(c.method, c.path, c.token, c.body), c.status, c.kind)
			if c.status == 422 && c.body != nil {
				errs, _ := p["errors"].([]any)
				if len(errs) != 1 || errs[0].(map[string]any)["field"] != "note" {
					t.Errorf("the problem does not name the note: %v", p)
				}
			}
			if c.name == "a record that still fails" && !strings.Contains(p["detail"].(string), "refused_actor") {
				t.Errorf("the problem does not name the reason: %v", p["detail"])
			}
		})
	}
	open := h.conflicts(t, kassa.ConflictOpen)
	if !open[plain] || !open[stuckID] || !open[clampedID] || len(h.conflicts(t, kassa.ConflictResolved)) != 0 {
		t.Fatalf("refused calls changed conflicts: open %v", open)
	}

	// The ops role resolves with a note; a second resolve is 409.
	r := tn.Do("POST", resolve(plain), h.ops, note)
	if r.Status != 200 || r.Data()["status"] != kassa.ConflictResolved || r.Data()["resolution"] != note["note"] ||
		r.Data()["resolved_by"] == nil || r.Data()["resolved_at"] == nil {
		t.Fatalf("resolve: %d %s", r.Status, r.Body)
	}
	mustProblem(t, tn.Do("POST", resolve(plain), h.o.Owner, note), 409, "conflict")
	mustProblem(t, tn.Do("POST", reapply(plain), h.o.Owner, nil), 409, "conflict")
	if !h.conflicts(t, kassa.ConflictResolved)[plain] || h.conflicts(t, kassa.ConflictOpen)[plain] {
		t.Fatal("the resolved conflict is not listed as resolved")
	}
	// The ops role reads sync, not the business.
	mustProblem(t, tn.Do("GET", "/api/v1/customers", h.ops, nil), 403, "forbidden")

	// What refused the record goes away: the kitchen user becomes a
	// cashier, who may make customers. Re-applied, it passes the same
	// admission, the customer exists and the change is in the hub's log.
	outbox := tn.outboxLen()
	tn.applyUserChange(h.o.ID, h.kitchenID, map[string]any{"role": "cashier"})
	r = tn.Do("POST", reapply(stuckID), h.o.Owner, nil)
	if r.Status != 200 || r.Data()["status"] != kassa.ConflictResolved || r.Data()["resolution"] != kassa.ResolutionReapplied {
		t.Fatalf("reapply: %d %s", r.Status, r.Body)
	}
	if c := tn.Do("GET", "/api/v1/customers/"+stuck.EntityID, h.o.Owner, nil); c.Status != 200 || c.Data()["first_name"] != "Stuck" {
		t.Fatalf("the re-applied customer: %d %s", c.Status, c.Body)
	}
	if got := tn.changes("customer", stuck.EntityID); len(got) != 1 || got[0].ID != stuck.ID {
		t.Errorf("the re-applied change is not in the hub's log once: %v", got)
	}
	if tn.outboxLen() < outbox+1 {
		t.Errorf("the outbox did not grow")
	}
	mustProblem(t, tn.Do("POST", reapply(stuckID), h.o.Owner, nil), 409, "conflict")
}

// TestTakingAVersionOfARefusedRecord: ops resolve a quarantined record,
// with a note, by the store's version (the record applied as it was, in
// the hub's log) or by the hub's (the hub's row written to its log anew,
// stamped after the store's change, for the store to take); the hub has
// no version of a row it never admitted (409). Conflicts name the row and
// say what happened in a sentence.
func TestTakingAVersionOfARefusedRecord(t *testing.T) {
	h := mustConflictHub(t)
	tn := h.tn
	resolve := func(id string) string { return "/api/v1/sync/conflicts/" + id + "/resolve" }
	edgeRec, edgeID := h.quarantine(t, "Edge")
	hubless, hublessID := h.quarantine(t, "Hubless")
	_, clamped := h.push(t, h.ownerID, map[string]any{"first_name": "Clock", "last_name": "Ahead"}, time.Now().Add(24*time.Hour))

	for _, x := range tn.Do("GET", "/api/v1/sync/conflicts?status=open&limit=200", h.o.Owner, nil).List() {
		if c := x.(map[string]any); c["id"] == edgeID {
			if c["subject"] != "customer Edge Q" || !strings.HasPrefix(c["summary"].(string), "The hub refused the new customer Edge Q") {
				t.Errorf("named %q, worded %q", c["subject"], c["summary"])
			}
		}
	}
	for _, c := range []struct {
		name   string
		id     string
		body   map[string]any
		status int
		kind   string
	}{
		{"an unknown version", edgeID, map[string]any{"note": "n", "take": "store"}, 422, "validation"},
		{"a version of a merge conflict", clamped["id"].(string), map[string]any{"note": "n", "take": "edge"}, 409, "conflict"},
		{"the hub's version of a row it never had", hublessID, map[string]any{"note": "n", "take": "hub"}, 409, "conflict"},
		{"a cashier", edgeID, map[string]any{"note": "n", "take": "edge"}, 403, "forbidden"},
	} {
		t.Run(c.name, func(t *testing.T) {
			tok := h.o.Owner
			if c.status == 403 {
				tok = h.cashier
			}
			p := mustProblem(t, tn.Do("POST", resolve(c.id), tok, c.body), c.status, c.kind)
			if c.status == 422 && !strings.Contains(fmt.Sprint(p["errors"]), "take") {
				t.Errorf("the problem does not name take: %v", p)
			}
		})
	}
	if open := h.conflicts(t, kassa.ConflictOpen); !open[edgeID] || !open[hublessID] {
		t.Fatal("a refused call resolved something")
	}
	if c := tn.Do("GET", "/api/v1/customers/"+hubless.EntityID, h.o.Owner, nil); c.Status != 404 {
		t.Fatalf("the hubless customer exists: %d", c.Status)
	}

	// The store's version: applied as it was, although its maker may not.
	r := tn.Do("POST", resolve(edgeID), h.ops, map[string]any{"note": "the store made it; checked", "take": "edge"})
	if r.Status != 200 || r.Data()["taken"] != "edge" || r.Data()["resolution"] != "the store made it; checked" {
		t.Fatalf("take the store's version: %d %s", r.Status, r.Body)
	}
	if c := tn.Do("GET", "/api/v1/customers/"+edgeRec.EntityID, h.o.Owner, nil); c.Status != 200 || c.Data()["first_name"] != "Edge" {
		t.Fatalf("the store's customer at the hub: %d %s", c.Status, c.Body)
	}
	if got := tn.changes("customer", edgeRec.EntityID); len(got) != 1 || got[0].ID != edgeRec.ID {
		t.Errorf("the store's record is not in the hub's log once: %v", got)
	}

	// The hub's version of a row it has: a customer of the hub that the
	// kitchen renamed at the store.
	cust := tn.Do("POST", "/api/v1/customers", h.o.Owner, map[string]any{"first_name": "Hubert", "last_name": "Hub"}).Data()["id"].(string)
	now := time.Now().UTC().Format(time.RFC3339Nano)
	rename := change.Change{ID: tn.N.NewID(), OrgID: h.o.ID, Entity: "customer", EntityID: cust, Op: change.OpUpdate,
		Fields: map[string]any{"first_name": "Forged", "updated_at": now}, HLC: tn.N.Stamp(), Origin: h.edge, Actor: h.kitchenID}
	if q, err := tn.N.IngestFrom(context.Background(), h.o.ID, h.loc, h.edge, []change.Change{rename}); err != nil || q != 1 {
		t.Fatalf("the kitchen's rename: %d quarantined, %v", q, err)
	}
	var renameID string
	for _, x := range tn.Do("GET", "/api/v1/sync/conflicts?status=open&limit=200", h.o.Owner, nil).List() {
		if c := x.(map[string]any); c["entity_id"] == cust {
			renameID = c["id"].(string)
			if !strings.Contains(c["summary"].(string), "customer Hubert Hub") {
				t.Errorf("the rename reads %q", c["summary"])
			}
		}
	}
	before := len(tn.changes("customer", cust))
	r = tn.Do("POST", resolve(renameID), h.o.Owner, map[string]any{"note": "nobody renames customers in the kitchen", "take": "hub"})
	if r.Status != 200 || r.Data()["taken"] != "hub" {
		t.Fatalf("take the hub's version: %d %s", r.Status, r.Body)
	}
	got := tn.changes("customer", cust)
	if len(got) != before+1 {
		t.Fatalf("the hub's row was not written to its log: %d changes, had %d", len(got), before)
	}
	last := got[len(got)-1]
	if last.Fields["first_name"] != "Hubert" || last.Origin == h.edge || last.HLC.Compare(rename.HLC) <= 0 {
		t.Errorf("the hub's version in its log: %+v (the store's stamp %v)", last, rename.HLC)
	}
	if c := tn.Do("GET", "/api/v1/customers/"+cust, h.o.Owner, nil); c.Data()["first_name"] != "Hubert" {
		t.Errorf("the hub's customer changed: %s", c.Body)
	}
}

// TestReapplyTakesTheOrdersRecordsInOrder: a store's sale made by a user
// the hub does not let sell (the kitchen) is refused whole — the order,
// then its line and payment (they build on it), then its completion.
// Once the user may sell, re-applying the completion alone re-applies
// the order, its line and payment first, in the order the store made
// them: every conflict of the sale resolved, the hub's order completed
// and paid, each record once in the hub's log; the conflicts name the
// order by its number.
func TestReapplyTakesTheOrdersRecordsInOrder(t *testing.T) {
	h := mustConflictHub(t)
	tn := h.tn
	prod := tn.Do("POST", "/api/v1/catalog/products", h.o.Owner, map[string]any{"name": "Flat White", "sku": "FW", "base_price": 500}).Data()["id"].(string)
	now := time.Now().UTC().Format(time.RFC3339Nano)
	order, pay := tn.N.NewID(), tn.N.NewID()
	rec := func(entity, id string, op change.Op, fields map[string]any) change.Change {
		fields["updated_at"] = now
		if op == change.OpInsert {
			fields["created_at"] = now
		}
		return change.Change{ID: tn.N.NewID(), OrgID: h.o.ID, LocationID: h.loc, Entity: entity, EntityID: id, Op: op, Fields: fields,
			HLC: tn.N.Stamp(), Origin: h.edge, Actor: h.kitchenID}
	}
	sale := []change.Change{
		rec("order", order, change.OpInsert, map[string]any{"location_id": h.loc, "number": "E-00042", "status": "open", "channel": "pos",
			"currency": "AUD", "subtotal": 500, "discount_total": 0, "tax_total": 0, "total": 500, "tax_inclusive": true, "tax_rate_bps": 0,
			"created_by": h.kitchenID, "occurred_at": now}),
		rec("order_line", tn.N.NewID(), change.OpInsert, map[string]any{"order_id": order, "position": 0, "product_id": prod, "name": "Flat White",
			"sku": "FW", "quantity": 1, "unit_price": 500, "modifiers": "[]", "discount": 0, "tax": 0, "total": 500}),
		rec("payment", pay, change.OpInsert, map[string]any{"order_id": order, "location_id": h.loc, "amount": 500, "method": "cash",
			"status": "captured", "offline": false, "tendered": 500, "refunded_amount": 0, "captured_at": now}),
		rec("order", order, change.OpUpdate, map[string]any{"status": "completed", "completed_at": now}),
	}
	if q, err := tn.N.IngestFrom(context.Background(), h.o.ID, h.loc, h.edge, sale); err != nil || q != len(sale) {
		t.Fatalf("the kitchen's sale: %d of %d quarantined, %v", q, len(sale), err)
	}
	var completion string
	mine := map[string]bool{}
	for _, x := range tn.Do("GET", "/api/v1/sync/conflicts?status=open&limit=200", h.o.Owner, nil).List() {
		c := x.(map[string]any)
		remote, _ := c["remote"].(map[string]any)
		for _, r := range sale {
			if remote["id"] == r.ID {
				mine[c["id"].(string)] = true
				if !strings.Contains(c["summary"].(string), "order E-00042") || anyID(c["summary"].(string)) {
					t.Errorf("conflict of %s reads %q", r.Entity, c["summary"])
				}
				if r.Op == change.OpUpdate {
					completion = c["id"].(string)
				}
			}
		}
	}
	if len(mine) != len(sale) || completion == "" {
		t.Fatalf("%d conflicts of the sale's %d records", len(mine), len(sale))
	}
	mustProblem(t, tn.Do("POST", "/api/v1/sync/conflicts/"+completion+"/reapply", h.ops, nil), 422, "validation")

	tn.applyUserChange(h.o.ID, h.kitchenID, map[string]any{"role": "cashier"})
	r := tn.Do("POST", "/api/v1/sync/conflicts/"+completion+"/reapply", h.ops, nil)
	if r.Status != 200 || r.Data()["resolution"] != kassa.ResolutionReapplied || r.Data()["subject"] != "order E-00042" {
		t.Fatalf("re-apply the completion: %d %s", r.Status, r.Body)
	}
	open := h.conflicts(t, kassa.ConflictOpen)
	for id := range mine {
		if open[id] {
			t.Errorf("conflict %s of the sale still open", id)
		}
	}
	o := tn.Do("GET", "/api/v1/orders/"+order, h.o.Owner, nil)
	if o.Status != 200 || o.Data()["status"] != "completed" || o.Data()["paid_total"] != 500.0 || o.Data()["number"] != "E-00042" {
		t.Fatalf("the hub's order: %d %s", o.Status, o.Body)
	}
	for _, rc := range sale {
		n := 0
		for _, c := range tn.changes(rc.Entity, rc.EntityID) {
			if c.ID == rc.ID {
				n++
			}
		}
		if n != 1 {
			t.Errorf("%s %s is %d times in the hub's log", rc.Entity, rc.Op, n)
		}
	}
}

// anyID reports whether s holds a row id.
func anyID(s string) bool {
	return regexp.MustCompile(`[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}`).MatchString(s)
}
