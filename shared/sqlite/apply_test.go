package sqlite

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"testing"
	"time"

	"kassa.dev/shared/kassa"
	"kassa.dev/shared/processor"
	"kassa.dev/sync/change"
	"kassa.dev/sync/hlc"
)

// node is one store in a replication test: its DB and services.
type node struct {
	t        *testing.T
	db       *DB
	products *ProductService
	orders   *OrderService
	payments *PaymentService
	inv      *InventoryService
	loyalty  *LoyaltyService
	custs    *CustomerService
}

func mustNode(t *testing.T) *node { return wrapNode(t, MustOpenDB(t)) }

// wrapNode builds the services of an open store.
func wrapNode(t *testing.T, db *DB) *node {
	t.Cleanup(func() { db.Close() })
	pay := NewPaymentService(db, map[kassa.PaymentMethod]kassa.Processor{kassa.PaymentCash: processor.Cash{}})
	return &node{t: t, db: db, products: NewProductService(db), orders: NewOrderService(db, pay), payments: pay,
		inv: NewInventoryService(db), loyalty: NewLoyaltyService(db), custs: NewCustomerService(db)}
}

// ship applies every change from has not seen yet to to.
func ship(t *testing.T, from, to *node) ApplyResult {
	t.Helper()
	cs, _ := changesAfter(t, from.db, 0)
	res, err := to.db.Apply(context.Background(), cs, false)
	if err != nil {
		t.Fatal(err)
	}
	return res
}

// changesAfter are db's change records after its log's seq after, through
// JSON as the wire carries them, and the seq of the last.
func changesAfter(t *testing.T, db *DB, after int64) ([]change.Change, int64) {
	t.Helper()
	log, err := db.ChangesAfter(context.Background(), after, 1_000_000, LogFilter{})
	if err != nil {
		t.Fatal(err)
	}
	cs := make([]change.Change, len(log))
	for i, e := range log {
		b, _ := json.Marshal(e.Change)
		if err := json.Unmarshal(b, &cs[i]); err != nil {
			t.Fatal(err)
		}
		after = e.Seq
	}
	return cs, after
}

// sync ships both ways until neither side learns anything.
func syncPair(t *testing.T, a, b *node) {
	t.Helper()
	for range 3 {
		if ship(t, a, b).Applied+ship(t, b, a).Applied == 0 {
			return
		}
	}
}

// dump reads a table's replicated content (derived columns included,
// bookkeeping excluded) in id order.
func dump(t *testing.T, db *DB, table, cols string) string {
	t.Helper()
	b, _ := json.Marshal(dumpRows(t, db, "SELECT "+cols+" FROM "+table+" ORDER BY id"))
	return string(b)
}

// dumpRows reads a query's rows as values.
func dumpRows(t *testing.T, db *DB, q string, args ...any) [][]any {
	t.Helper()
	rows, err := db.Reader.Query(q, args...)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	cols, _ := rows.Columns()
	var out [][]any
	for rows.Next() {
		vals := make([]any, len(cols))
		ptrs := make([]any, len(cols))
		for i := range vals {
			ptrs[i] = &vals[i]
		}
		if err := rows.Scan(ptrs...); err != nil {
			t.Fatal(err)
		}
		for i, v := range vals {
			if b, ok := v.([]byte); ok {
				vals[i] = string(b)
			}
		}
		out = append(out, vals)
	}
	return out
}

var compared = map[string]string{
	"products":         "id, name, description, sku, base_price, is_active, modifier_group_ids, category_id",
	"orders":           "id, number, status, total, paid_total, refunded_total, loyalty_points_earned, notes, kitchen_status",
	"order_lines":      "id, order_id, quantity, total",
	"payments":         "id, order_id, amount, status",
	"stock_levels":     "id, location_id, product_id, on_hand, reorder_point",
	"stock_movements":  "id, delta, reason",
	"loyalty_accounts": "id, points_balance, lifetime_points, tier",
	"customers":        "id, first_name, email, deleted_at",
}

func mustConverge(t *testing.T, a, b *node) {
	t.Helper()
	for table, cols := range compared {
		if da, db := dump(t, a.db, table, cols), dump(t, b.db, table, cols); da != db {
			t.Fatalf("%s differ:\n A %s\n B %s", table, da, db)
		}
	}
}

// seed makes an org with a location, two products with stock, a customer
// with a loyalty account, on a; returns the owner's context and ids.
type world struct {
	ctx                       context.Context
	org, loc, p1, p2, account string
	customer                  string
}

func seed(t *testing.T, a *node) world { return seedOrg(t, a, "Sync Cafe", "o@sync.test") }

// seedTwo is seed and seedOrg of a second org: two tenants of one hub.
func seedTwo(t *testing.T, a *node) (world, world) {
	return seed(t, a), seedOrg(t, a, "Other Cafe", "o@other.test")
}

// seedOrg is seed of one more org on a, named name, its owner at email.
func seedOrg(t *testing.T, a *node, name, email string) world {
	ctx := context.Background()
	orgs := NewOrgService(a.db)
	org, owner, err := orgs.CreateOrg(ctx, &kassa.OrgCreate{Name: name, Currency: "AUD", OwnerEmail: email, OwnerPassword: "longenough"})
	if err != nil {
		t.Fatal(err)
	}
	w := world{ctx: kassa.WithActor(ctx, &kassa.Actor{OrgID: org.ID, UserID: owner.ID, Role: kassa.RoleOwner, Scopes: kassa.RoleScopes(kassa.RoleOwner)}), org: org.ID}
	loc, err := NewLocationService(a.db).CreateLocation(w.ctx, &kassa.LocationCreate{Name: "Shop", Timezone: "UTC"})
	if err != nil {
		t.Fatal(err)
	}
	w.loc = loc.ID
	for i, id := range []*string{&w.p1, &w.p2} {
		p, err := a.products.CreateProduct(w.ctx, &kassa.ProductCreate{Name: fmt.Sprint("P", i), SKU: fmt.Sprint("S-", i), BasePrice: ptr(int64(500))})
		if err != nil {
			t.Fatal(err)
		}
		*id = p.ID
		if _, err := a.inv.Adjust(w.ctx, &kassa.StockAdjust{LocationID: loc.ID, ProductID: p.ID, Reason: "received", Quantity: 5}); err != nil {
			t.Fatal(err)
		}
	}
	c, err := a.custs.CreateCustomer(w.ctx, &kassa.CustomerCreate{FirstName: "Ann", Email: ptr("ann@x.test")})
	if err != nil {
		t.Fatal(err)
	}
	w.customer = c.ID
	if _, err := a.loyalty.CreateProgram(w.ctx, &kassa.LoyaltyProgramCreate{Name: "Beans", PointsPerUnit: 1, RedemptionValue: 10,
		Tiers: []kassa.LoyaltyTier{{Name: "Gold", MinLifetimePoints: 20}}}); err != nil {
		t.Fatal(err)
	}
	acct, err := a.loyalty.Enrol(w.ctx, &kassa.EnrolRequest{CustomerID: c.ID})
	if err != nil {
		t.Fatal(err)
	}
	w.account = acct.ID
	if _, err := a.loyalty.Earn(w.ctx, acct.ID, &kassa.PointsRequest{Points: 10, Reason: "welcome"}); err != nil {
		t.Fatal(err)
	}
	return w
}

// sell makes, pays and completes an order of qty units of product.
func sell(t *testing.T, n *node, w world, product string, qty int64) *kassa.Order {
	t.Helper()
	o, err := n.orders.CreateOrder(w.ctx, &kassa.OrderCreate{LocationID: w.loc, LineItems: []kassa.OrderLineInput{{ProductID: product, Quantity: qty}}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := n.payments.Initiate(w.ctx, &kassa.PaymentInitiate{OrderID: o.ID, Amount: o.Total, Method: kassa.PaymentCash}); err != nil {
		t.Fatal(err)
	}
	o, err = n.orders.CompleteOrder(w.ctx, o.ID)
	if err != nil {
		t.Fatal(err)
	}
	return o
}

func TestApplyReplicatesEverythingOnceAndIdempotently(t *testing.T) {
	a, b := mustNode(t), mustNode(t)
	w := seed(t, a)
	sell(t, a, w, w.p1, 2)
	first := ship(t, a, b)
	if first.Applied == 0 || first.Duplicate != 0 {
		t.Fatalf("first ship %+v", first)
	}
	mustConverge(t, a, b)
	again := ship(t, a, b)
	if again.Applied != 0 || again.Duplicate != first.Applied {
		t.Fatalf("replay applied something: %+v (first %+v)", again, first)
	}
	mustConverge(t, a, b)
	// b's services work on the replicated org: sell there, ship back.
	sell(t, b, w, w.p1, 1)
	syncPair(t, a, b)
	mustConverge(t, a, b)
	var onHand int64
	a.db.Reader.QueryRow(`SELECT on_hand FROM stock_levels WHERE product_id = ?`, w.p1).Scan(&onHand)
	if onHand != 2 {
		t.Fatalf("on hand %d, want 5-2-1", onHand)
	}
}

func TestConcurrentFieldUpdatesMergeFieldByField(t *testing.T) {
	a, b := mustNode(t), mustNode(t)
	w := seed(t, a)
	syncPair(t, a, b)
	mustUpdate := func(n *node, in *kassa.ProductUpdate) {
		if _, err := n.products.UpdateProduct(w.ctx, w.p1, in); err != nil {
			t.Fatal(err)
		}
	}
	mustUpdate(a, &kassa.ProductUpdate{Name: kassa.Some("Renamed at A"), Description: kassa.Some("from A")})
	mustUpdate(b, &kassa.ProductUpdate{BasePrice: kassa.Some(int64(650)), Description: kassa.Some("from B, later")})
	syncPair(t, a, b)
	mustConverge(t, a, b)
	p, _ := a.products.FindProductByID(w.ctx, w.p1)
	if p.Name != "Renamed at A" || p.BasePrice != 650 || *p.Description != "from B, later" {
		t.Fatalf("merged product %+v %q", p, *p.Description)
	}
}

func TestOfflineOversellAndOverdraftAreRecordedAndAgree(t *testing.T) {
	a, b := mustNode(t), mustNode(t)
	w := seed(t, a)
	syncPair(t, a, b)
	// Both sell 4 of the 5 units and both redeem 8 of the 10 points.
	sell(t, a, w, w.p2, 4)
	sell(t, b, w, w.p2, 4)
	for _, n := range []*node{a, b} {
		if _, err := n.loyalty.Redeem(w.ctx, w.account, &kassa.PointsRequest{Points: 8}); err != nil {
			t.Fatal(err)
		}
	}
	syncPair(t, a, b)
	mustConverge(t, a, b)
	for _, n := range []*node{a, b} {
		var onHand, balance int64
		n.db.Reader.QueryRow(`SELECT on_hand FROM stock_levels WHERE product_id = ?`, w.p2).Scan(&onHand)
		n.db.Reader.QueryRow(`SELECT points_balance FROM loyalty_accounts WHERE id = ?`, w.account).Scan(&balance)
		if onHand != -3 || balance != -6 {
			t.Fatalf("on hand %d (want -3), balance %d (want -6)", onHand, balance)
		}
		kinds := conflictKinds(t, n)
		if kinds["oversold"] != 1 || kinds["overdrawn"] != 1 {
			t.Fatalf("conflicts %v", kinds)
		}
	}
}

func conflictKinds(t *testing.T, n *node) map[string]int {
	rows, err := n.db.Reader.Query(`SELECT kind FROM sync_conflicts`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	out := map[string]int{}
	for rows.Next() {
		var k string
		rows.Scan(&k)
		out[k]++
	}
	return out
}

func TestCancelLosesToComplete(t *testing.T) {
	a, b := mustNode(t), mustNode(t)
	w := seed(t, a)
	o, err := a.orders.CreateOrder(w.ctx, &kassa.OrderCreate{LocationID: w.loc, LineItems: []kassa.OrderLineInput{{ProductID: w.p1, Quantity: 1}}})
	if err != nil {
		t.Fatal(err)
	}
	syncPair(t, a, b)
	// Offline: a cancels, b takes the money and completes.
	if _, err := a.orders.UpdateOrder(w.ctx, o.ID, &kassa.OrderUpdate{Status: kassa.Some(kassa.OrderCancelled)}); err != nil {
		t.Fatal(err)
	}
	if _, err := b.payments.Initiate(w.ctx, &kassa.PaymentInitiate{OrderID: o.ID, Amount: o.Total, Method: kassa.PaymentCash}); err != nil {
		t.Fatal(err)
	}
	if _, err := b.orders.CompleteOrder(w.ctx, o.ID); err != nil {
		t.Fatal(err)
	}
	syncPair(t, a, b)
	mustConverge(t, a, b)
	got, _ := a.orders.FindOrderByID(w.ctx, o.ID)
	if got.Status != kassa.OrderCompleted || got.PaidTotal != o.Total {
		t.Fatalf("order %s paid %d, want completed and paid", got.Status, got.PaidTotal)
	}
	if conflictKinds(t, a)["cancel_lost"] == 0 {
		t.Fatal("the lost cancel was not recorded")
	}
}

func TestFarFutureStampIsClampedAndReported(t *testing.T) {
	a, b := mustNode(t), mustNode(t)
	w := seed(t, a)
	syncPair(t, a, b)
	future := hlc.Timestamp{Wall: time.Now().Add(24 * time.Hour).UnixMilli()}
	c := change.Change{ID: a.db.NewID(), OrgID: w.org, Entity: "product", EntityID: w.p1, Op: change.OpUpdate,
		Fields: map[string]any{"name": "From a broken clock"}, HLC: future, Origin: "skewed-node"}
	if _, err := b.db.Apply(context.Background(), []change.Change{c}, false); err != nil {
		t.Fatal(err)
	}
	if conflictKinds(t, b)["clock_clamped"] != 1 {
		t.Fatal("clamp not reported")
	}
	// A write a little later (beyond the skew window) still wins.
	b.db.Now = func() time.Time { return time.Now().UTC().Add(2 * time.Minute) }
	if _, err := b.products.UpdateProduct(w.ctx, w.p1, &kassa.ProductUpdate{Name: kassa.Some("Fixed")}); err != nil {
		t.Fatal(err)
	}
	p, _ := b.products.FindProductByID(w.ctx, w.p1)
	if p.Name != "Fixed" {
		t.Fatalf("the far-future write still wins: %q", p.Name)
	}
}

// A new row stamps all its fields at once ("*" in field_hlc); a field
// nobody updated since still weighs the insert's stamp against a remote
// write: an older write loses, a newer one wins.
func TestUntouchedFieldsKeepTheInsertStamp(t *testing.T) {
	a := mustNode(t)
	w := seed(t, a)
	var stamps string
	if err := a.db.Reader.QueryRow(`SELECT field_hlc FROM products WHERE id = ?`, w.p1).Scan(&stamps); err != nil {
		t.Fatal(err)
	}
	var m map[string]string
	if err := json.Unmarshal([]byte(stamps), &m); err != nil || len(m) != 1 || m["*"] == "" {
		t.Fatalf("field_hlc of a new row: %s", stamps)
	}
	rename := func(name string, at hlc.Timestamp) string {
		c := change.Change{ID: a.db.NewID(), OrgID: w.org, Entity: "product", EntityID: w.p1, Op: change.OpUpdate,
			Fields: map[string]any{"name": name}, HLC: at, Origin: "other-node"}
		if _, err := a.db.Apply(context.Background(), []change.Change{c}, false); err != nil {
			t.Fatal(err)
		}
		p, _ := a.products.FindProductByID(w.ctx, w.p1)
		return p.Name
	}
	if got := rename("Older than the row", hlc.Timestamp{Wall: 1}); got == "Older than the row" {
		t.Fatal("a write stamped before the insert won")
	}
	if got := rename("Newer", a.db.Clock.Now()); got != "Newer" {
		t.Fatalf("a later write lost: %q", got)
	}
}

func TestDeleteWinsOverConcurrentUpdate(t *testing.T) {
	a, b := mustNode(t), mustNode(t)
	w := seed(t, a)
	syncPair(t, a, b)
	if err := a.custs.DeleteCustomer(w.ctx, w.customer); err != nil {
		t.Fatal(err)
	}
	b.db.Now = func() time.Time { return time.Now().UTC().Add(time.Second) } // b's update is later
	if _, err := b.custs.UpdateCustomer(w.ctx, w.customer, &kassa.CustomerUpdate{FirstName: kassa.Some("Resurrected"), Email: kassa.Some("new@x.test")}); err != nil {
		t.Fatal(err)
	}
	syncPair(t, a, b)
	mustConverge(t, a, b)
	var name string
	var email, deleted any
	a.db.Reader.QueryRow(`SELECT first_name, email, deleted_at FROM customers WHERE id = ?`, w.customer).Scan(&name, &email, &deleted)
	if name != "" || email != nil || deleted == nil {
		t.Fatalf("deleted customer came back: %q %v %v", name, email, deleted)
	}
}

func TestApplyOrderDoesNotMatterAcrossRows(t *testing.T) {
	a, b, c := mustNode(t), mustNode(t), mustNode(t)
	w := seed(t, a)
	sell(t, a, w, w.p1, 1)
	log, _ := a.db.ChangesAfter(context.Background(), 0, 1000, LogFilter{})
	cs := make([]change.Change, len(log))
	for i := range log {
		cs[i] = log[i].Change
	}
	if _, err := b.db.Apply(context.Background(), cs, false); err != nil {
		t.Fatal(err)
	}
	// c gets the same changes twice over in two batches, the second a duplicate of the first half.
	if _, err := c.db.Apply(context.Background(), cs[:len(cs)/2], false); err != nil {
		t.Fatal(err)
	}
	if _, err := c.db.Apply(context.Background(), cs, false); err != nil {
		t.Fatal(err)
	}
	mustConverge(t, b, c)
	if !reflect.DeepEqual(conflictKinds(t, b), conflictKinds(t, c)) {
		t.Fatal("conflicts differ")
	}
}

func TestDuplicateKeysMadeApartAreSettledAlike(t *testing.T) {
	a, b := mustNode(t), mustNode(t)
	w := seed(t, a)
	syncPair(t, a, b)
	// Apart, both nodes create a product with sku NEW-1 and a customer with
	// the same e-mail.
	for _, n := range []*node{a, b} {
		if _, err := n.products.CreateProduct(w.ctx, &kassa.ProductCreate{Name: "New", SKU: "NEW-1", BasePrice: ptr(int64(100))}); err != nil {
			t.Fatal(err)
		}
		if _, err := n.custs.CreateCustomer(w.ctx, &kassa.CustomerCreate{FirstName: "Dup", Email: ptr("dup@x.test")}); err != nil {
			t.Fatal(err)
		}
	}
	syncPair(t, a, b)
	mustConverge(t, a, b)
	for _, n := range []*node{a, b} {
		var skus, emails int
		n.db.Reader.QueryRow(`SELECT count(*) FROM products WHERE sku LIKE 'NEW-1%'`).Scan(&skus)
		n.db.Reader.QueryRow(`SELECT count(*) FROM customers WHERE email = 'dup@x.test'`).Scan(&emails)
		if skus != 2 || emails != 1 {
			t.Fatalf("skus %d (want both products kept), e-mails %d (want one keeps it)", skus, emails)
		}
		if conflictKinds(t, n)["duplicate_key"] == 0 {
			t.Fatal("duplicate not recorded")
		}
	}
	// Selling continues on both sides afterwards.
	sell(t, a, w, w.p1, 1)
	sell(t, b, w, w.p1, 1)
	syncPair(t, a, b)
	mustConverge(t, a, b)
}

func TestFieldStampsIsJSON(t *testing.T) {
	got := fieldStamps([]string{"base_price", "id", "name", "org_id"}, "000000000000001.0000000002@node")
	var m map[string]string
	if err := json.Unmarshal([]byte(got), &m); err != nil || len(m) != 2 || m["name"] != "000000000000001.0000000002@node" {
		t.Fatalf("%s: %v %v", got, m, err)
	}
	if fieldStamps([]string{"id"}, "x") != "{}" {
		t.Fatal("empty stamps")
	}
}

func TestABadRecordIsQuarantinedAndTheRestApplies(t *testing.T) {
	a, b := mustNode(t), mustNode(t)
	w := seed(t, a)
	syncPair(t, a, b)
	sell(t, a, w, w.p1, 1)
	log, _ := a.db.ChangesAfter(context.Background(), 0, 10000, LogFilter{})
	cs := wire(t, log)
	// A record for an entity this node does not know, in the middle.
	bad := change.Change{ID: a.db.NewID(), OrgID: w.org, Entity: "no_such_thing", EntityID: "x", Op: change.OpInsert,
		Fields: map[string]any{}, HLC: hlc.Timestamp{Wall: 1}, Origin: "someone"}
	cs = append(cs[:len(cs)/2], append([]change.Change{bad}, cs[len(cs)/2:]...)...)
	if _, err := b.db.Apply(context.Background(), cs, false); err == nil {
		t.Fatal("a batch with a bad record applied")
	}
	res, q, err := b.db.ApplyEach(context.Background(), cs, false)
	if err != nil || q != 1 || res.Applied == 0 {
		t.Fatalf("ApplyEach: %+v, %d quarantined, %v", res, q, err)
	}
	mustConverge(t, a, b)
	if conflictKinds(t, b)["quarantined"] != 1 {
		t.Fatal("quarantine not listed")
	}
	// A replay skips it.
	if _, q, err := b.db.ApplyEach(context.Background(), cs, false); err != nil || q != 0 {
		t.Fatalf("replay: %d quarantined, %v", q, err)
	}
}

func TestAnUpdateBeforeItsRowIsRefusedNotQuarantined(t *testing.T) {
	a, b := mustNode(t), mustNode(t)
	w := seed(t, a)
	syncPair(t, a, b)
	o := sell(t, a, w, w.p1, 1)
	log, _ := a.db.ChangesAfter(context.Background(), 0, 100000, LogFilter{})
	var updates []change.Change
	for _, c := range wire(t, log) {
		if c.Entity == "order" && c.EntityID == o.ID && c.Op == change.OpUpdate {
			updates = append(updates, c)
		}
	}
	_, q, err := b.db.ApplyEach(context.Background(), updates, false)
	if !errors.Is(err, ErrOutOfOrder) || q != 0 {
		t.Fatalf("ApplyEach of updates before their order: %v, %d quarantined", err, q)
	}
	// Once everything arrives in order, it all applies.
	syncPair(t, a, b)
	mustConverge(t, a, b)
}
