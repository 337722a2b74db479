package sqlite

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"kassa.dev/shared/kassa"
	"kassa.dev/shared/password"
	"kassa.dev/sync/change"
)

// victim is a second org on the same hub, with a product, its stock and
// an open order.
type victim struct {
	ctx                           context.Context
	org, loc, product, order, cat string
}

func mustVictim(t *testing.T, n *node) victim {
	t.Helper()
	ctx := context.Background()
	org, owner, err := NewOrgService(n.db).CreateOrg(ctx, &kassa.OrgCreate{Name: "Victim Bakery", Currency: "AUD", OwnerEmail: "v@victim.test", OwnerPassword: "longenough"})
	if err != nil {
		t.Fatal(err)
	}
	v := victim{ctx: kassa.WithActor(ctx, &kassa.Actor{OrgID: org.ID, UserID: owner.ID, Role: kassa.RoleOwner, Scopes: kassa.RoleScopes(kassa.RoleOwner)}), org: org.ID}
	loc, err := NewLocationService(n.db).CreateLocation(v.ctx, &kassa.LocationCreate{Name: "Bakery", Timezone: "UTC"})
	if err != nil {
		t.Fatal(err)
	}
	v.loc = loc.ID
	cat, err := NewCategoryService(n.db).CreateCategory(v.ctx, &kassa.CategoryCreate{Name: "Bread"})
	if err != nil {
		t.Fatal(err)
	}
	v.cat = cat.ID
	p, err := n.products.CreateProduct(v.ctx, &kassa.ProductCreate{Name: "Loaf", SKU: "LOAF", BasePrice: ptr(int64(700))})
	if err != nil {
		t.Fatal(err)
	}
	v.product = p.ID
	if _, err := n.inv.Adjust(v.ctx, &kassa.StockAdjust{LocationID: loc.ID, ProductID: p.ID, Reason: "received", Quantity: 9}); err != nil {
		t.Fatal(err)
	}
	o, err := n.orders.CreateOrder(v.ctx, &kassa.OrderCreate{LocationID: loc.ID, LineItems: []kassa.OrderLineInput{{ProductID: p.ID, Quantity: 1}}})
	if err != nil {
		t.Fatal(err)
	}
	v.order = o.ID
	return v
}

// TestTheSchemaRefusesCrossOrgReferences: whatever writes a row, the
// schema refuses a reference to another org's row (migration 0006).
func TestTheSchemaRefusesCrossOrgReferences(t *testing.T) {
	hub := mustNode(t)
	w := seed(t, hub)
	v := mustVictim(t, hub)
	now := fmtTime(hub.db.Now())
	for _, tc := range []struct {
		name, query string
		args        []any
	}{
		{"a movement of another org's product", `INSERT INTO stock_movements (id, org_id, location_id, product_id, delta, reason, ref_type, origin, created_at, updated_at, hlc)
			VALUES (?, ?, ?, ?, -5, 'theft', 'adjustment', 'x', ?, ?, 'h')`, []any{hub.db.NewID(), w.org, w.loc, v.product, now, now}},
		{"a payment on another org's order", `INSERT INTO payments (id, org_id, location_id, order_id, amount, method, status, created_at, updated_at, hlc, origin)
			VALUES (?, ?, ?, ?, 700, 'cash', 'captured', ?, ?, 'h', 'x')`, []any{hub.db.NewID(), w.org, w.loc, v.order, now, now}},
		{"a payment on its org's order at another location", `INSERT INTO payments (id, org_id, location_id, order_id, amount, method, status, created_at, updated_at, hlc, origin)
			VALUES (?, ?, ?, ?, 700, 'cash', 'captured', ?, ?, 'h', 'x')`, []any{hub.db.NewID(), v.org, mustLocation(t, hub.db, v.org), v.order, now, now}},
		{"a product moved into another org's category", `UPDATE products SET category_id = ? WHERE id = ?`, []any{v.cat, w.p1}},
		{"an order at another org's location", `INSERT INTO orders (id, org_id, location_id, number, status, channel, currency, subtotal, discount_total, tax_total, total,
			tax_inclusive, tax_rate_bps, occurred_at, created_at, updated_at, hlc, origin) VALUES (?, ?, ?, 'N-1', 'open', 'pos', 'AUD', 0, 0, 0, 0, 1, 0, ?, ?, ?, 'h', 'x')`,
			[]any{hub.db.NewID(), w.org, v.loc, now, now, now}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := hub.db.Writer.Exec(tc.query, tc.args...)
			if err == nil || !strings.Contains(err.Error(), "kassa: cross-org reference") {
				t.Fatalf("err = %v, want a cross-org reference refusal", err)
			}
		})
	}
}

// TestIngestKeepsAnEdgeInsideItsOrg: changes an edge of one org pushes
// cannot reach another org's rows through references, and the recompute
// that follows a batch touches only the edge's org.
func TestIngestKeepsAnEdgeInsideItsOrg(t *testing.T) {
	hub := mustNode(t)
	w := seed(t, hub)
	v := mustVictim(t, hub)
	owner := kassa.ActorFrom(w.ctx).UserID
	from := EdgeScope{OrgID: w.org, LocationID: w.loc, NodeID: hub.db.NewID()}
	stamp := func(entity, id, loc string, fields map[string]any) change.Change {
		return change.Change{ID: hub.db.NewID(), OrgID: w.org, LocationID: loc, Entity: entity, EntityID: id, Op: change.OpInsert,
			Fields: fields, HLC: hub.db.Clock.Now(), Origin: from.NodeID, Actor: owner}
	}
	now := hub.db.Now()
	cs := []change.Change{
		stamp("payment", hub.db.NewID(), w.loc, map[string]any{"location_id": w.loc, "order_id": v.order, "amount": 700,
			"method": "cash", "status": "captured", "created_at": now, "updated_at": now}),
		stamp("stock_movement", hub.db.NewID(), w.loc, map[string]any{"location_id": w.loc, "product_id": v.product, "delta": -9,
			"reason": "theft", "ref_type": "adjustment", "note": "", "created_at": now, "updated_at": now}),
	}
	res, quarantined, err := hub.db.Ingest(context.Background(), from, cs)
	if err != nil {
		t.Fatalf("ingest: %v (res %+v)", err, res)
	}
	if quarantined != 2 || res.Applied != 0 {
		t.Errorf("applied %d, quarantined %d; want none applied, both quarantined", res.Applied, quarantined)
	}
	o, err := hub.orders.FindOrderByID(v.ctx, v.order)
	if err != nil {
		t.Fatal(err)
	}
	if o.PaidTotal != 0 {
		t.Errorf("the victim's order is paid %d by another org's change", o.PaidTotal)
	}
	lvl, err := findLevel(context.Background(), hub.db.Reader, v.org, v.loc, v.product)
	if err != nil || lvl == nil || lvl.OnHand != 9 {
		t.Errorf("the victim's stock: %+v, %v; want 9 on hand", lvl, err)
	}
	var reasons []string
	rows, err := hub.db.Reader.Query(`SELECT reason FROM sync_quarantine WHERE org_id = ? ORDER BY created_at`, w.org)
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var r string
		rows.Scan(&r)
		reasons = append(reasons, r)
	}
	rows.Close()
	if len(reasons) < 2 || reasons[0] != RefusedReference || reasons[1] != RefusedReference {
		t.Errorf("quarantine reasons %v, want the payment and the movement refused as references", reasons)
	}
	if got := hub.db.RefusedCounts()[RefusedReference]; got < 2 {
		t.Errorf("refused references counted: %d", got)
	}
	var forVictim int
	hub.db.Reader.QueryRow(`SELECT count(*) FROM sync_quarantine WHERE org_id = ?`, v.org).Scan(&forVictim)
	if forVictim != 0 {
		t.Errorf("%d refusals listed for the victim's org", forVictim)
	}
}

// TestAnUnarrivedReferenceWaitsAndAQuarantinedOneIsRefused: a record
// naming a row the hub has not got is out of order (the edge retries),
// unless that row was quarantined, so the link never stalls.
func TestAnUnarrivedReferenceWaitsAndAQuarantinedOneIsRefused(t *testing.T) {
	hub := mustNode(t)
	w := seed(t, hub)
	owner := kassa.ActorFrom(w.ctx).UserID
	from := EdgeScope{OrgID: w.org, LocationID: w.loc, NodeID: hub.db.NewID()}
	now := hub.db.Now()
	order := hub.db.NewID()
	line := change.Change{ID: hub.db.NewID(), OrgID: w.org, LocationID: w.loc, Entity: "order_line", EntityID: hub.db.NewID(), Op: change.OpInsert,
		Fields: map[string]any{"order_id": order, "position": 0, "product_id": w.p1, "name": "P", "sku": "S", "quantity": 1, "unit_price": 500,
			"modifiers": "[]", "discount": 0, "tax": 0, "total": 500, "created_at": now, "updated_at": now},
		HLC: hub.db.Clock.Now(), Origin: from.NodeID, Actor: owner}
	_, _, err := hub.db.Ingest(context.Background(), from, []change.Change{line})
	if !errors.Is(err, ErrOutOfOrder) {
		t.Fatalf("a line before its order: %v, want out of order", err)
	}
	// The order arrives refused (a cashier cannot open an order at another org's... here: a status it cannot be created in).
	bad := change.Change{ID: hub.db.NewID(), OrgID: w.org, LocationID: w.loc, Entity: "order", EntityID: order, Op: change.OpInsert,
		Fields: map[string]any{"location_id": w.loc, "number": "X-1", "status": "completed", "channel": "pos", "currency": "AUD",
			"subtotal": 500, "discount_total": 0, "tax_total": 0, "total": 500, "tax_inclusive": true, "tax_rate_bps": 0,
			"occurred_at": now, "created_at": now, "updated_at": now},
		HLC: hub.db.Clock.Now(), Origin: from.NodeID, Actor: owner}
	_, q, err := hub.db.Ingest(context.Background(), from, []change.Change{bad, line})
	if err != nil || q != 2 {
		t.Fatalf("order created completed and its line: quarantined %d, err %v; want both quarantined", q, err)
	}
}

// TestTheHubReplaysTheRefundAndDiscountLimits: a cashier's refund beyond
// the org's refund limit, or a cashier's manual discount, pushed by an
// edge, is refused as the edge's API would have refused it.
func TestTheHubReplaysTheRefundAndDiscountLimits(t *testing.T) {
	hub := mustNode(t)
	w := seed(t, hub)
	cashier := mustCashier(t, hub, w)
	if _, err := NewSettingsService(hub.db).UpdateSettings(w.ctx, &kassa.SettingsUpdate{RefundLimit: kassa.Opt[int64]{Set: true, Value: 300}}); err != nil {
		t.Fatal(err)
	}
	sold := sell(t, hub, w, w.p1, 2) // 1000, paid in cash
	from := EdgeScope{OrgID: w.org, LocationID: w.loc, NodeID: hub.db.NewID()}
	now := hub.db.Now()
	push := func(entity, id string, fields map[string]any) (ApplyResult, int) {
		t.Helper()
		c := change.Change{ID: hub.db.NewID(), OrgID: w.org, LocationID: w.loc, Entity: entity, EntityID: id, Op: change.OpInsert,
			Fields: fields, HLC: hub.db.Clock.Now(), Origin: from.NodeID, Actor: cashier.ID}
		res, q, err := hub.db.Ingest(context.Background(), from, []change.Change{c})
		if err != nil {
			t.Fatal(err)
		}
		return res, q
	}
	refund := func(amount int64) map[string]any {
		return map[string]any{"order_id": sold.ID, "location_id": w.loc, "amount": amount, "reason": "", "restock": false,
			"lines": "[]", "payments": `[{"payment_id":"` + sold.Payments[0].ID + `","amount":` + fmt.Sprint(amount) + `}]`,
			"actor": cashier.ID, "created_at": now, "updated_at": now}
	}
	if res, q := push("refund", hub.db.NewID(), refund(200)); res.Applied != 1 || q != 0 {
		t.Fatalf("a refund within the limit: applied %d, quarantined %d", res.Applied, q)
	}
	if res, q := push("refund", hub.db.NewID(), refund(200)); res.Applied != 0 || q != 1 {
		t.Errorf("a second refund taking the cashier past the limit: applied %d, quarantined %d", res.Applied, q)
	}
	o, err := hub.orders.FindOrderByID(w.ctx, sold.ID)
	if err != nil || o.RefundedTotal != 200 {
		t.Errorf("refunded %d (%v), want 200", o.RefundedTotal, err)
	}

	order := hub.db.NewID()
	if res, q := push("order", order, map[string]any{"location_id": w.loc, "number": "E-00001", "status": "open", "channel": "pos",
		"currency": "AUD", "subtotal": 500, "discount_total": 500, "tax_total": 0, "total": 0, "tax_inclusive": true, "tax_rate_bps": 0,
		"created_by": cashier.ID, "occurred_at": now, "created_at": now, "updated_at": now}); res.Applied != 1 || q != 0 {
		t.Fatalf("the order row: applied %d, quarantined %d", res.Applied, q)
	}
	if res, q := push("order_line", hub.db.NewID(), map[string]any{"order_id": order, "position": 0, "product_id": w.p1, "name": "P0",
		"sku": "S-0", "quantity": 1, "unit_price": 500, "modifiers": "[]", "discount": 500, "tax": 0, "total": 0,
		"created_at": now, "updated_at": now}); res.Applied != 0 || q != 1 {
		t.Errorf("a cashier's 100 %% line discount: applied %d, quarantined %d", res.Applied, q)
	}
}

// TestTheHubAdmitsAnOAuthClientAsActorByItsScopes: a write made at the hub
// with a client_credentials token and run at the store comes back with the
// client id as its actor; the hub admits it by the app's registered scopes,
// refuses it without the scope or once the app is gone, and never takes
// the authorization server's own rows from an edge.
func TestTheHubAdmitsAnOAuthClientAsActorByItsScopes(t *testing.T) {
	hub := mustNode(t)
	w := seed(t, hub)
	oauth := NewOAuthService(hub.db)
	app := func(scopes ...kassa.Scope) string {
		t.Helper()
		a, err := oauth.CreateApp(w.ctx, &kassa.OAuthAppCreate{Name: "Stock sync", RedirectURIs: []string{"https://p.example/cb"}, Scopes: scopes})
		if err != nil {
			t.Fatal(err)
		}
		return a.ClientID
	}
	stocker, reader, gone := app(kassa.ScopeInventoryWrite), app(kassa.ScopeInventoryRead), app(kassa.ScopeInventoryWrite)
	if err := oauth.DeleteApp(w.ctx, gone); err != nil {
		t.Fatal(err)
	}
	from := EdgeScope{OrgID: w.org, LocationID: w.loc, NodeID: hub.db.NewID()}
	movement := func(actor string) change.Change {
		now := hub.db.Now()
		return change.Change{ID: hub.db.NewID(), OrgID: w.org, LocationID: w.loc, Entity: "stock_movement", EntityID: hub.db.NewID(), Op: change.OpInsert,
			Fields: map[string]any{"location_id": w.loc, "product_id": w.p1, "delta": 2, "reason": "received", "ref_type": "adjustment",
				"note": "", "created_at": now, "updated_at": now}, HLC: hub.db.Clock.Now(), Origin: from.NodeID, Actor: actor}
	}
	forged := change.Change{ID: hub.db.NewID(), OrgID: w.org, Entity: "oauth_app", EntityID: hub.db.NewID(), Op: change.OpInsert,
		Fields: map[string]any{"name": "Backdoor", "secret_hash": strings.Repeat("0", 64)}, HLC: hub.db.Clock.Now(), Origin: from.NodeID,
		Actor: kassa.ActorFrom(w.ctx).UserID}
	for _, tc := range []struct {
		name   string
		c      change.Change
		refuse string
	}{
		{"a client with inventory:write", movement(stocker), ""},
		{"a client without it", movement(reader), RefusedActor},
		{"a deleted app", movement(gone), RefusedActor},
		{"the authorization server's rows", forged, RefusedEntity},
	} {
		t.Run(tc.name, func(t *testing.T) {
			before := hub.db.RefusedCounts()[tc.refuse]
			res, quarantined, err := hub.db.Ingest(context.Background(), from, []change.Change{tc.c})
			if err != nil {
				t.Fatalf("ingest: %v", err)
			}
			if tc.refuse == "" {
				if res.Applied != 1 || quarantined != 0 {
					t.Fatalf("applied %d, quarantined %d; want it admitted", res.Applied, quarantined)
				}
				return
			}
			if quarantined != 1 || hub.db.RefusedCounts()[tc.refuse] != before+1 {
				t.Fatalf("quarantined %d, %s refusals %d → %d", quarantined, tc.refuse, before, hub.db.RefusedCounts()[tc.refuse])
			}
		})
	}
	var apps int
	hub.db.Reader.QueryRow(`SELECT count(*) FROM oauth_apps WHERE name = 'Backdoor'`).Scan(&apps)
	if apps != 0 {
		t.Error("an edge wrote an OAuth app")
	}
}

// TestAPushIsRefusedOnceItsEdgeIsRevoked: the hub's link asks whether a
// pushing edge is enrolled in the push's own unit (EnrolmentChecked), not
// beforehand. A sale of an edge enrolled at the location is admitted; once
// an owner revoked the edge (or for an edge enrolled at another location)
// its next push is refused and changes nothing: no row, no quarantine.
func TestAPushIsRefusedOnceItsEdgeIsRevoked(t *testing.T) {
	hub, edge := mustNode(t), mustNode(t)
	w := seed(t, hub)
	ship(t, hub, edge)
	from := EdgeScope{OrgID: w.org, LocationID: w.loc, NodeID: edge.db.NodeID, Enrolment: EnrolmentChecked}
	if err := hub.db.Write(w.ctx, func(tx *Tx) error {
		_, err := tx.ExecContext(w.ctx, `INSERT INTO sync_nodes (node_id, org_id, location_id, secret_hash, enrolled_at) VALUES (?, ?, ?, '-', ?)`,
			from.NodeID, w.org, w.loc, fmtTime(tx.Now))
		return err
	}); err != nil {
		t.Fatal(err)
	}
	push := func(scope EdgeScope) (*kassa.Order, error) {
		before, err := edge.db.ChangesAfter(w.ctx, 0, 100000, LogFilter{})
		if err != nil {
			t.Fatal(err)
		}
		o := sell(t, edge, w, w.p1, 1)
		all, err := edge.db.ChangesAfter(w.ctx, 0, 100000, LogFilter{})
		if err != nil {
			t.Fatal(err)
		}
		_, q, err := hub.db.Ingest(w.ctx, scope, wire(t, all[len(before):]))
		if q != 0 {
			t.Errorf("the push quarantined %d records", q)
		}
		return o, err
	}
	if o, err := push(from); err != nil {
		t.Fatalf("the enrolled edge's sale: %v", err)
	} else if _, err := hub.orders.FindOrderByID(w.ctx, o.ID); err != nil {
		t.Fatalf("the enrolled edge's sale is not at the hub: %v", err)
	}
	elsewhere := from
	elsewhere.LocationID = hub.db.NewID()
	if _, err := push(elsewhere); !errors.Is(err, ErrUnknownEdge) {
		t.Errorf("a push naming another location than the edge's enrolment: %v, want ErrUnknownEdge", err)
	}
	if err := NewEnrolmentService(hub.db, func() string { return "" }).RevokeNode(w.ctx, from.NodeID); err != nil {
		t.Fatal(err)
	}
	o, err := push(from)
	if !errors.Is(err, ErrUnknownEdge) {
		t.Fatalf("the revoked edge's push: %v, want ErrUnknownEdge", err)
	}
	if _, err := hub.orders.FindOrderByID(w.ctx, o.ID); kassa.ErrorKind(err) != kassa.ENotFound {
		t.Errorf("the revoked edge's sale reached the hub: %v", err)
	}
	l, err := hub.db.Conflicts(w.ctx, kassa.ConflictFilter{Page: kassa.Page{Limit: 200}})
	if err != nil || len(l.Items) != 0 {
		t.Errorf("the refused pushes left conflicts: %v %v", l.Items, err)
	}
}

// TestAPushReadsItsActorsAsItsEarlierChangesLeftThem: a push's first read
// fetches its actors with the rows it names, but a user the push writes
// is read again for that user's later changes in it: a cashier the push
// deactivates cannot open an order in the same push, and one the push
// hires can.
func TestAPushReadsItsActorsAsItsEarlierChangesLeftThem(t *testing.T) {
	hub := mustNode(t)
	w := seed(t, hub)
	owner := kassa.ActorFrom(w.ctx).UserID
	cashier, err := NewUserService(hub.db).CreateUser(w.ctx, &kassa.UserCreate{Email: "till@sync.test", Role: kassa.RoleCashier,
		Password: "longenough", LocationIDs: []string{w.loc}})
	if err != nil {
		t.Fatal(err)
	}
	from := EdgeScope{OrgID: w.org, LocationID: w.loc, NodeID: hub.db.NewID()}
	now := hub.db.Now()
	stamp := func(entity, id string, op change.Op, actor string, fields map[string]any) change.Change {
		return change.Change{ID: hub.db.NewID(), OrgID: w.org, LocationID: w.loc, Entity: entity, EntityID: id, Op: op,
			Fields: fields, HLC: hub.db.Clock.Now(), Origin: from.NodeID, Actor: actor}
	}
	orders := 0
	order := func(actor string) change.Change {
		orders++
		return stamp("order", hub.db.NewID(), change.OpInsert, actor, map[string]any{"location_id": w.loc, "number": fmt.Sprintf("P-%d", orders),
			"status": "open", "channel": "pos", "currency": "AUD", "subtotal": 0, "discount_total": 0, "tax_total": 0, "total": 0,
			"tax_inclusive": true, "tax_rate_bps": 0, "occurred_at": now, "created_at": now, "updated_at": now})
	}
	ingest := func(cs ...change.Change) int {
		t.Helper()
		_, q, err := hub.db.Ingest(context.Background(), from, cs)
		if err != nil {
			t.Fatal(err)
		}
		return q
	}
	opened := order(cashier.ID)
	if q := ingest(opened); q != 0 {
		t.Fatalf("the cashier's order was quarantined (%d): the actor is not found", q)
	}
	off := stamp("user", cashier.ID, change.OpUpdate, owner, map[string]any{"is_active": false, "updated_at": now})
	if q := ingest(off, order(cashier.ID)); q != 1 {
		t.Errorf("deactivated and then selling in one push: %d quarantined, want the order", q)
	}
	var reason string
	if err := hub.db.Reader.QueryRow(`SELECT reason FROM sync_quarantine WHERE org_id = ? ORDER BY created_at DESC LIMIT 1`, w.org).Scan(&reason); err != nil || reason != RefusedActor {
		t.Errorf("the deactivated cashier's order: reason %q (%v), want %s", reason, err, RefusedActor)
	}
	hash, err := password.Hash("longenough")
	if err != nil {
		t.Fatal(err)
	}
	hired := hub.db.NewID()
	hire := stamp("user", hired, change.OpInsert, owner, map[string]any{"email": "hired@sync.test", "name": "Hired", "role": "cashier",
		"password_hash": hash, "location_ids": `["` + w.loc + `"]`, "is_active": true, "created_at": now, "updated_at": now})
	if q := ingest(hire, order(hired)); q != 0 {
		t.Errorf("hired and then selling in one push: %d quarantined, want none", q)
	}
}
