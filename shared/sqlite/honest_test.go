package sqlite

import (
	"context"
	"fmt"
	"maps"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"kassa.dev/shared/kassa"
	"kassa.dev/shared/processor"
	"kassa.dev/sync/change"
)

// An honest edge is never refused (issue 21). Two tests keep the
// admission rules (each noun's edge rule, registry.go) in step with what an edge writes:
//
//   - TestEveryColumnOfAnEdgeWritableTableHasAnAdmissionRule reads every
//     column of every table an edge may write from the store's own schema
//     and fails for one the rules do not place: a column added to such a
//     table must be made updatable, insert-only or derived on purpose.
//   - TestEveryRecordAnHonestEdgeWritesIsAdmitted runs the edge's own
//     services through every kind of write a till makes (each tender,
//     online and offline, refunds, voids, cancels, stock, customers,
//     loyalty, gift cards, transfers, the kitchen) and has a hub ingest
//     the records they made: none may be refused, and together they write
//     every column the rules let an edge update.

// bookkeeping columns every replicated row has; the change capture writes
// them, never an edge's operation on its own.
var bookkeeping = []string{"id", "org_id", "created_at", "updated_at", "hlc", "origin", "field_hlc"}

func TestEveryColumnOfAnEdgeWritableTableHasAnAdmissionRule(t *testing.T) {
	db := MustOpenDB(t)
	for _, r := range registered() {
		rule, entity := r.Edge, r.Name
		cols := tableColumns(t, db, r)
		// What the registry says of the noun names columns its table has.
		for _, col := range slices.Concat(r.Derived, slices.Collect(maps.Keys(r.Lattice)), slices.Collect(maps.Keys(r.Erase))) {
			if !slices.Contains(cols, col) {
				t.Errorf("noun %q names %q, which %s does not have", entity, col, r.Table)
			}
		}
		if rule == nil {
			continue // written at the hub only
		}
		for _, rf := range rule.Refs {
			if !slices.Contains(cols, rf.Col) {
				t.Errorf("edge rule of %q refers by %q, which %s does not have", entity, rf.Col, r.Table)
			}
		}
		if rule.Update == nil {
			if r.LWW() {
				t.Errorf("%s merges field by field but its edge rule lets an edge change none of its columns", entity)
			}
			continue // never updated: an insert may carry every column of the table
		}
		for _, col := range cols {
			placed := slices.Contains(bookkeeping, col) || slices.Contains(rule.Update, col) ||
				slices.Contains(rule.Once, col) || slices.Contains(r.Derived, col)
			if !placed {
				t.Errorf("%s.%s has no admission rule: list it in the edge rule of %q (%s.go): update (an edge may change it) or once (written only when the row is made)",
					r.Table, col, entity, entity)
			}
		}
		for _, col := range slices.Concat(rule.Update, rule.Once, rule.System) {
			if !slices.Contains(cols, col) {
				t.Errorf("the edge rule of %q names %q, which %s does not have", entity, col, r.Table)
			}
		}
		for _, col := range rule.Once {
			if slices.Contains(rule.Update, col) {
				t.Errorf("the edge rule of %q lists %q both as updatable and as insert-only", entity, col)
			}
		}
	}
}

// tableColumns reads a noun's table's columns off the store's schema.
func tableColumns(t *testing.T, db *DB, r *noun) []string {
	t.Helper()
	rows := dumpRows(t, db, "SELECT name FROM pragma_table_info(?)", r.Table)
	if len(rows) == 0 {
		t.Fatalf("%s: no table %s", r.Name, r.Table)
	}
	var cols []string
	for _, row := range rows {
		cols = append(cols, row[0].(string))
	}
	return cols
}

// edgeWorld is a hub and an edge enrolled at one of its locations, the
// edge's payments taken online or offline as the test says.
type edgeWorld struct {
	world
	hub, edge *node
	offline   bool
	loc2      string // another location of the org (transfers)
	inbound   string // a transfer from loc2 to the edge's location, in transit
	gifts     *GiftCardService
	kds       *KDSService
}

func mustEdgeWorld(t *testing.T) *edgeWorld {
	t.Helper()
	hubDB, err := Open(context.Background(), filepath.Join(t.TempDir(), "hub.db"), Options{Hub: true})
	if err != nil {
		t.Fatal(err)
	}
	return mustEdgeWorldAt(t, wrapNode(t, hubDB))
}

// mustEdgeWorldAt is mustEdgeWorld with its hub on hub's store.
func mustEdgeWorldAt(t *testing.T, hub *node) *edgeWorld {
	t.Helper()
	ctx := context.Background()
	ew := &edgeWorld{hub: hub, world: seed(t, hub)}
	loc2, err := NewLocationService(hub.db).CreateLocation(ew.ctx, &kassa.LocationCreate{Name: "Depot", Timezone: "UTC"})
	if err != nil {
		t.Fatal(err)
	}
	ew.loc2 = loc2.ID
	tr, err := hub.inv.CreateTransfer(ew.ctx, &kassa.TransferCreate{FromLocationID: loc2.ID, ToLocationID: ew.loc,
		Lines: []kassa.TransferLine{{ProductID: ew.p1, Quantity: 2}}})
	if err != nil {
		t.Fatal(err)
	}
	ew.inbound = tr.ID
	settings := NewSettingsService(hub.db)
	if _, err := settings.SetPaymentMethods(ew.ctx, []kassa.PaymentMethodConfig{{Method: kassa.PaymentCash, Enabled: true},
		{Method: kassa.PaymentCard, Enabled: true}, {Method: kassa.PaymentGiftCard, Enabled: true}, {Method: kassa.PaymentExternal, Enabled: true},
		{Method: kassa.PaymentLoyaltyPoints, Enabled: true}}); err != nil {
		t.Fatal(err)
	}
	if _, err := settings.UpdateSettings(ew.ctx, &kassa.SettingsUpdate{LaybyTerminationCharge: kassa.Some(int64(150)),
		TaxCategories: kassa.Some([]kassa.TaxCategory{{ID: "gst-free", Name: "GST-free", RateBps: 0}, {ID: "reduced", Name: "Reduced", RateBps: 500}})}); err != nil {
		t.Fatal(err)
	}
	// p2 is GST-free (docs/tax.md): a sale of both has two rates.
	if _, err := hub.products.UpdateProduct(ew.ctx, ew.p2, &kassa.ProductUpdate{TaxCategoryID: kassa.Some("gst-free")}); err != nil {
		t.Fatal(err)
	}
	edgeDB := MustOpenDB(t)
	pay := NewPaymentService(edgeDB, map[kassa.PaymentMethod]kassa.Processor{kassa.PaymentCash: processor.Cash{},
		kassa.PaymentCard: processor.NewCardSimulator(), kassa.PaymentExternal: processor.External{}, kassa.PaymentGiftCard: processor.GiftCard{},
		kassa.PaymentLoyaltyPoints: processor.LoyaltyPoints{}})
	pay.Offline = func() bool { return ew.offline }
	ew.edge = &node{t: t, db: edgeDB, products: NewProductService(edgeDB), orders: NewOrderService(edgeDB, pay), payments: pay,
		inv: NewInventoryService(edgeDB), loyalty: NewLoyaltyService(edgeDB), custs: NewCustomerService(edgeDB)}
	ew.gifts, ew.kds = NewGiftCardService(edgeDB), NewKDSService(edgeDB)
	ship(t, hub, ew.edge)
	edgeDB.SetUnderHub()
	// Enrolled at the hub (re-apply reads the pushing edge's scope there).
	if _, err := hub.db.Writer.ExecContext(ctx, `INSERT INTO sync_nodes (node_id, org_id, location_id, secret_hash, enrolled_at) VALUES (?, ?, ?, '-', ?)`,
		edgeDB.NodeID, ew.org, ew.loc, fmtTime(hub.db.Now())); err != nil {
		t.Fatal(err)
	}
	return ew
}

// push has the hub ingest every record the edge made that it has not
// pushed yet, through JSON as the link carries them, and returns the
// records and how many the hub quarantined.
func (ew *edgeWorld) push(t *testing.T, after int64) ([]change.Change, int64) {
	t.Helper()
	cs, after, q := ew.ingest(t, after)
	if q > 0 {
		t.Errorf("the hub quarantined %d of the honest edge's records:\n%s", q, quarantined(t, ew.hub.db))
	}
	return cs, after
}

// ingest is push that leaves the refusals to the caller.
func (ew *edgeWorld) ingest(t *testing.T, after int64) ([]change.Change, int64, int) {
	t.Helper()
	ctx := context.Background()
	cs, after := changesAfter(t, ew.edge.db, after)
	from := EdgeScope{OrgID: ew.org, LocationID: ew.loc, NodeID: ew.edge.db.NodeID}
	_, q, err := ew.hub.db.Ingest(ctx, from, cs)
	if err != nil {
		t.Fatalf("ingest: %v", err)
	}
	return cs, after, q
}

// quarantined lists the hub's quarantined records as lines of entity, id
// and reason.
func quarantined(t *testing.T, db *DB) string {
	var out []string
	for _, r := range dumpRows(t, db, `SELECT json_extract(change, '$.entity'), json_extract(change, '$.op'), error FROM sync_quarantine ORDER BY created_at`) {
		out = append(out, fmt.Sprintf("  %v %v: %v", r[0], r[1], r[2]))
	}
	return strings.Join(out, "\n")
}

func must[T any](t *testing.T, what string) func(T, error) T {
	return func(v T, err error) T {
		t.Helper()
		if err != nil {
			t.Fatalf("%s: %v", what, err)
		}
		return v
	}
}

// tills makes every kind of write a store makes at the edge.
func (ew *edgeWorld) tills(t *testing.T) {
	ctx, e := ew.ctx, ew.edge
	order := func(qty int64, customer *string) *kassa.Order {
		return must[*kassa.Order](t, "order")(e.orders.CreateOrder(ctx, &kassa.OrderCreate{LocationID: ew.loc, CustomerID: customer,
			LineItems: []kassa.OrderLineInput{{ProductID: ew.p1, Quantity: qty}}, Notes: "table 4"}))
	}
	pay := func(o *kassa.Order, in kassa.PaymentInitiate) *kassa.Payment {
		in.OrderID = o.ID
		p := must[*kassa.Payment](t, "pay "+string(in.Method))(e.payments.Initiate(ctx, &in))
		if p.Status == kassa.PaymentFailed {
			t.Fatalf("payment %s failed: %v", in.Method, p.FailureReason)
		}
		return p
	}
	complete := func(o *kassa.Order) *kassa.Order {
		return must[*kassa.Order](t, "complete")(e.orders.CompleteOrder(ctx, o.ID))
	}
	no := false
	tendered := int64(2000)
	card := must[*kassa.GiftCard](t, "issue a gift card")(ew.gifts.IssueGiftCard(ctx, &kassa.GiftCardIssue{InitialAmount: 5000, CustomerID: &ew.customer}))
	// A till's drawer (docs/drawers.md): registers made and changed, a
	// drawer opened here records every sale and refund below.
	regs, drawers := NewRegisterService(e.db), NewDrawerService(e.db)
	till := must[*kassa.Register](t, "register")(regs.CreateRegister(ctx, &kassa.RegisterCreate{LocationID: ew.loc, Name: "Front"}))
	spare := must[*kassa.Register](t, "register")(regs.CreateRegister(ctx, &kassa.RegisterCreate{LocationID: ew.loc, Name: "Spare"}))
	must[*kassa.Register](t, "retire register")(regs.UpdateRegister(ctx, spare.ID, &kassa.RegisterUpdate{Name: ptr("Old"), IsActive: &no}))
	float := int64(10000)
	drawer := must[*kassa.DrawerSession](t, "open drawer")(drawers.OpenDrawer(ctx, &kassa.DrawerOpenRequest{RegisterID: till.ID,
		Float: kassa.CashCount{Denominations: []kassa.DenominationCount{{Value: 5000, Count: 2}}, Amount: &float}}))
	for _, off := range []bool{false, true} {
		ew.offline = off
		// Cash with change, a customer earning points; kitchen moves.
		o := order(2, &ew.customer)
		pay(o, kassa.PaymentInitiate{Amount: o.Total, Method: kassa.PaymentCash, Tendered: &tendered, RegisterID: till.ID})
		must[*kassa.Ticket](t, "bump")(ew.kds.BumpTicket(ctx, o.ID, &kassa.TicketMove{}))
		o = complete(o)
		// Refunds: partial by line, then the rest.
		must[*kassa.Order](t, "partial refund")(e.orders.RefundOrder(ctx, o.ID, &kassa.RefundRequest{
			LineItems: []kassa.RefundLineInput{{LineItemID: o.LineItems[0].ID, Quantity: 1}}, Reason: "spilt", Restock: true}))
		must[*kassa.Order](t, "full refund")(e.orders.RefundOrder(ctx, o.ID, &kassa.RefundRequest{Reason: "unhappy", RegisterID: till.ID}))
		// A card sale (offline: store-and-forward), refunded in part.
		o = order(1, nil)
		pay(o, kassa.PaymentInitiate{Amount: o.Total, Method: kassa.PaymentCard, CardNumber: processor.CardApprove, RegisterID: till.ID})
		o = complete(o)
		amount := int64(100)
		must[*kassa.Order](t, "card refund")(e.orders.RefundOrder(ctx, o.ID, &kassa.RefundRequest{Amount: &amount, Reason: "late"}))
		// Split: gift card, external, the customer's points (paid,
		// voided, paid again) and card; one card authorized, voided,
		// authorized again and captured.
		o = order(3, &ew.customer)
		pay(o, kassa.PaymentInitiate{Amount: 300, Method: kassa.PaymentGiftCard, GiftCardCode: card.Code})
		pay(o, kassa.PaymentInitiate{Amount: 170, Method: kassa.PaymentExternal})
		points := pay(o, kassa.PaymentInitiate{Amount: 30, Method: kassa.PaymentLoyaltyPoints})
		must[*kassa.Payment](t, "void points")(e.payments.Void(ctx, points.ID))
		pay(o, kassa.PaymentInitiate{Amount: 30, Method: kassa.PaymentLoyaltyPoints})
		auth := pay(o, kassa.PaymentInitiate{Amount: 100, Method: kassa.PaymentCard, CardNumber: processor.CardApprove, Capture: &no})
		must[*kassa.Payment](t, "void")(e.payments.Void(ctx, auth.ID))
		auth = pay(o, kassa.PaymentInitiate{Amount: o.Total - 500, Method: kassa.PaymentCard, CardNumber: processor.CardApprove, Capture: &no})
		must[*kassa.Payment](t, "capture")(e.payments.Capture(ctx, auth.ID))
		o = complete(o)
		must[*kassa.Order](t, "split refund")(e.orders.RefundOrder(ctx, o.ID, &kassa.RefundRequest{Reason: "all back"}))
		// The drawer's own entries.
		must[*kassa.DrawerEntry](t, "paid in")(drawers.PayIn(ctx, drawer.ID, &kassa.DrawerCashRequest{Amount: 500, Reason: "coins"}))
		must[*kassa.DrawerEntry](t, "paid out")(drawers.PayOut(ctx, drawer.ID, &kassa.DrawerCashRequest{Amount: 300, Reason: "milk"}))
		must[*kassa.DrawerEntry](t, "no sale")(drawers.NoSale(ctx, drawer.ID, &kassa.DrawerNoSaleRequest{}))
		// Two tax rates: p2 GST-free beside p1 at the org's rate.
		o = must[*kassa.Order](t, "order of two rates")(e.orders.CreateOrder(ctx, &kassa.OrderCreate{LocationID: ew.loc,
			LineItems: []kassa.OrderLineInput{{ProductID: ew.p1, Quantity: 1}, {ProductID: ew.p2, Quantity: 1}}, Discount: &kassa.Discount{Type: kassa.DiscountAmount, Value: 33}}))
		if len(o.TaxBreakdown) != 2 {
			t.Fatalf("an order of two rates has the breakdown %+v", o.TaxBreakdown)
		}
		pay(o, kassa.PaymentInitiate{Amount: o.Total, Method: kassa.PaymentCash, Tendered: &tendered, RegisterID: till.ID})
		complete(o)
		// An order changed, then cancelled.
		o = order(1, nil)
		must[*kassa.Order](t, "update")(e.orders.UpdateOrder(ctx, o.ID, &kassa.OrderUpdate{Notes: kassa.Some("no ice"), CustomerID: kassa.Some(ew.customer)}))
		must[*kassa.Order](t, "cancel")(e.orders.UpdateOrder(ctx, o.ID, &kassa.OrderUpdate{Status: kassa.Some(kassa.OrderCancelled)}))
		// Stock, transfers, customers, loyalty, gift cards.
		reorder := int64(3)
		must[*kassa.StockLevel](t, "adjust")(e.inv.Adjust(ctx, &kassa.StockAdjust{LocationID: ew.loc, ProductID: ew.p2, Reason: "received", Quantity: 7, ReorderPoint: &reorder}))
		tr := must[*kassa.Transfer](t, "transfer")(e.inv.CreateTransfer(ctx, &kassa.TransferCreate{FromLocationID: ew.loc, ToLocationID: ew.loc2,
			Lines: []kassa.TransferLine{{ProductID: ew.p2, Quantity: 1}}, Notes: "to the depot"}))
		must[*kassa.Transfer](t, "cancel transfer")(e.inv.CancelTransfer(ctx, tr.ID))
		c := must[*kassa.Customer](t, "customer")(e.custs.CreateCustomer(ctx, &kassa.CustomerCreate{FirstName: "Bo", Email: ptr(fmt.Sprintf("bo%v@x.test", off))}))
		must[*kassa.Customer](t, "update customer")(e.custs.UpdateCustomer(ctx, c.ID, &kassa.CustomerUpdate{Phone: kassa.Some("+61 400 000 000"),
			Tags: kassa.Some([]string{"regular"}), Notes: kassa.Some("oat milk")}))
		must[*kassa.LoyaltyAccount](t, "enrol")(e.loyalty.Enrol(ctx, &kassa.EnrolRequest{CustomerID: c.ID}))
		must[*kassa.PointsTransaction](t, "redeem")(e.loyalty.Redeem(ctx, ew.account, &kassa.PointsRequest{Points: 1}))
		if err := e.custs.DeleteCustomer(ctx, c.ID); err != nil {
			t.Fatal(err)
		}
	}
	must[*kassa.Transfer](t, "receive transfer")(e.inv.ReceiveTransfer(ctx, ew.inbound))
	ew.catalog(t)
	// A card approved offline that the network declines when forwarded.
	ew.offline = true
	o := order(1, nil)
	pay(o, kassa.PaymentInitiate{Amount: o.Total, Method: kassa.PaymentCard, CardNumber: processor.CardDecline})
	complete(o)
	must[*kassa.GiftCard](t, "disable")(ew.gifts.DisableGiftCard(ctx, card.ID))
	must[*kassa.GiftCard](t, "re-enable")(ew.gifts.EnableGiftCard(ctx, card.ID))
	// The drawer's blind close and its Z.
	count := int64(20000)
	must[*kassa.ZReport](t, "close drawer")(drawers.CloseDrawer(ctx, drawer.ID, &kassa.DrawerCloseRequest{Count: kassa.CashCount{Amount: &count}, Note: "end of day"}))
	// Back online: the offline card payments are forwarded.
	ew.offline = false
	if n, err := e.payments.ForwardOffline(context.Background(), 100); err != nil || n == 0 {
		t.Fatalf("forwarded %d offline payments: %v", n, err)
	}
}

// laybys makes every kind of lay-by write a store makes (docs/laybys.md):
// opened with a cash deposit, paid by card and gift card, completed by the
// instalment that pays it in full; one cancelled by the customer (the
// org's charge kept), one by the store (refunded to a card); one expired
// by the node's job (no actor), its refund then paid out. The expiry moves
// both clocks past the term, so it comes after every other step.
func (ew *edgeWorld) laybys(t *testing.T) {
	ctx, e := ew.ctx, ew.edge
	svc := NewLaybyService(e.db, processor.NewCardSimulator())
	card := must[*kassa.GiftCard](t, "issue a gift card")(ew.gifts.IssueGiftCard(ctx, &kassa.GiftCardIssue{InitialAmount: 5000}))
	open := func() *kassa.Layby {
		return must[*kassa.Layby](t, "open a lay-by")(svc.CreateLayby(ctx, &kassa.LaybyCreate{LocationID: ew.loc, CustomerID: ew.customer,
			LineItems: []kassa.LaybyLineInput{{ProductID: ew.p1, Quantity: 2}}, Deposit: kassa.LaybyTender{Method: kassa.PaymentCash, Amount: 200}}))
	}
	pay := func(l *kassa.Layby, in kassa.LaybyPay) *kassa.Layby {
		return must[*kassa.Layby](t, "pay "+string(in.Method))(svc.PayLayby(ctx, l.ID, &in))
	}
	// A till's drawer records a cash instalment and a refund (docs/laybys.md).
	regs, drawers := NewRegisterService(e.db), NewDrawerService(e.db)
	till := must[*kassa.Register](t, "register")(regs.CreateRegister(ctx, &kassa.RegisterCreate{LocationID: ew.loc, Name: "Lay-by desk"}))
	float := int64(5000)
	drawer := must[*kassa.DrawerSession](t, "open drawer")(drawers.OpenDrawer(ctx, &kassa.DrawerOpenRequest{RegisterID: till.ID,
		Float: kassa.CashCount{Amount: &float}}))
	l := open()
	pay(l, kassa.LaybyPay{Method: kassa.PaymentCash, Amount: 50, RegisterID: till.ID})
	pay(l, kassa.LaybyPay{Method: kassa.PaymentCard, Amount: 300, CardNumber: processor.CardApprove, RegisterID: till.ID})
	l = pay(l, kassa.LaybyPay{Method: kassa.PaymentGiftCard, Amount: 100, GiftCardCode: card.Code})
	if l = pay(l, kassa.LaybyPay{Method: kassa.PaymentCash, Amount: l.Balance}); l.Status != kassa.LaybyCompleted {
		t.Fatalf("paid in full: %+v", l)
	}
	l = open()
	pay(l, kassa.LaybyPay{Method: kassa.PaymentCash, Amount: 100})
	must[*kassa.Layby](t, "customer cancels")(svc.CancelLayby(ctx, l.ID, &kassa.LaybyCancel{By: kassa.LaybyByCustomer, RegisterID: till.ID}))
	count := float + 50 - 150 // the cash instalment in, the customer's refund (300 paid less the 150 charge) out
	must[*kassa.ZReport](t, "close drawer")(drawers.CloseDrawer(ctx, drawer.ID, &kassa.DrawerCloseRequest{Count: kassa.CashCount{Amount: &count}}))
	must[*kassa.Layby](t, "store cancels")(svc.CancelLayby(ctx, open().ID, &kassa.LaybyCancel{By: kassa.LaybyByStore, RefundMethod: kassa.PaymentCard}))
	l = open()
	later := e.db.Now().AddDate(0, 0, 60)
	e.db.Now, ew.hub.db.Now = func() time.Time { return later }, func() time.Time { return later }
	if n, err := svc.ExpireLaybys(context.Background(), ew.loc); err != nil || n != 1 {
		t.Fatalf("expired %d lay-bys: %v", n, err)
	}
	must[*kassa.Layby](t, "refund an expired lay-by")(svc.CancelLayby(ctx, l.ID, &kassa.LaybyCancel{By: kassa.LaybyByCustomer}))
}

// catalog makes and changes every kind of catalog row at the edge, each
// column an update may change changed once.
func (ew *edgeWorld) catalog(t *testing.T) {
	ctx, db := ew.ctx, ew.edge.db
	cats, groups, lists := NewCategoryService(db), NewModifierGroupService(db), NewPriceListService(db)
	parent := must[*kassa.Category](t, "category")(cats.CreateCategory(ctx, &kassa.CategoryCreate{Name: "Drinks"}))
	cat := must[*kassa.Category](t, "category")(cats.CreateCategory(ctx, &kassa.CategoryCreate{Name: "Tea", Station: ptr("bar")}))
	must[*kassa.Category](t, "update category")(cats.UpdateCategory(ctx, cat.ID, &kassa.CategoryUpdate{Name: kassa.Some("Teas"),
		Description: kassa.Some("leaf"), ParentID: kassa.Some(parent.ID), SortOrder: kassa.Some(2), IsActive: kassa.Some(false), Station: kassa.Some("kitchen"),
		TaxCategoryID: kassa.Some("reduced")}))
	g := must[*kassa.ModifierGroup](t, "modifier group")(groups.CreateModifierGroup(ctx, &kassa.ModifierGroupCreate{Name: "Milk",
		Options: []kassa.ModifierOptionInput{{Name: "Oat", PriceAdjustment: 50}, {Name: "Soy"}}}))
	must[*kassa.ModifierGroup](t, "update modifier group")(groups.UpdateModifierGroup(ctx, g.ID, &kassa.ModifierGroupUpdate{Name: kassa.Some("Milks"),
		Required: kassa.Some(true), MinSelections: kassa.Some(1), MaxSelections: kassa.Some(3),
		Options: kassa.Some([]kassa.ModifierOptionInput{{Name: "Oat", PriceAdjustment: 60}, {Name: "Soy"}, {Name: "Almond"}})}))
	p := must[*kassa.Product](t, "product")(ew.edge.products.CreateProduct(ctx, &kassa.ProductCreate{Name: "Chai", SKU: "CHAI-1",
		Barcodes: []string{"9300000000012"}, BasePrice: ptr(int64(450)), Cost: ptr(int64(120))}))
	must[*kassa.Product](t, "update product")(ew.edge.products.UpdateProduct(ctx, p.ID, &kassa.ProductUpdate{Name: kassa.Some("Chai latte"),
		Description: kassa.Some("spiced"), BasePrice: kassa.Some(int64(500)), Cost: kassa.Some(int64(140)), CategoryID: kassa.Some(cat.ID), TaxCategoryID: kassa.Some("gst-free"), Tags: kassa.Some([]string{"hot"}),
		ModifierGroupIDs: kassa.Some([]string{g.ID}), Station: kassa.Some("bar")}))
	must[*kassa.Product](t, "archive product")(ew.edge.products.ArchiveProduct(ctx, p.ID))
	// A variant and a bundle (docs/catalog.md), its components changed.
	tee := must[*kassa.Product](t, "product")(ew.edge.products.CreateProduct(ctx, &kassa.ProductCreate{Name: "Tee", SKU: "TEE-1", BasePrice: ptr(int64(2000))}))
	teeM := must[*kassa.Product](t, "variant")(ew.edge.products.CreateVariant(ctx, tee.ID, &kassa.VariantCreate{SKU: "TEE-1-M",
		Options: map[string]string{"size": "M"}, BasePrice: ptr(int64(2200))}))
	pack := must[*kassa.Product](t, "bundle")(ew.edge.products.CreateProduct(ctx, &kassa.ProductCreate{Name: "Tee pack", SKU: "TEE-PACK",
		BasePrice: ptr(int64(3500)), Components: []kassa.BundleComponent{{ProductID: teeM.ID, Quantity: 2}}}))
	must[*kassa.Product](t, "update bundle")(ew.edge.products.UpdateProduct(ctx, pack.ID, &kassa.ProductUpdate{
		Components: kassa.Some([]kassa.BundleComponent{{ProductID: teeM.ID, Quantity: 3}})}))
	l := must[*kassa.PriceList](t, "price list")(lists.CreatePriceList(ctx, &kassa.PriceListCreate{Name: "Happy hour",
		Prices: []kassa.PriceListPrice{{ProductID: ew.p1, Price: 400}}}))
	start, end := ew.hub.db.Now().Add(time.Hour), ew.hub.db.Now().Add(2*time.Hour)
	must[*kassa.PriceList](t, "update price list")(lists.UpdatePriceList(ctx, l.ID, &kassa.PriceListUpdate{Name: kassa.Some("Late"),
		LocationIDs: kassa.Some([]string{ew.loc}), Prices: kassa.Some([]kassa.PriceListPrice{{ProductID: ew.p1, Price: 350}}),
		StartsAt: kassa.Some(start), EndsAt: kassa.Some(end), IsActive: kassa.Some(false)}))
}

func TestEveryRecordAnHonestEdgeWritesIsAdmitted(t *testing.T) {
	ew := mustEdgeWorld(t)
	ew.tills(t)
	ew.laybys(t)
	cs, _ := ew.push(t, 0)
	// Every column an edge may update was written by some update here:
	// an operation that writes a new one belongs in tills.
	written := map[string]map[string]bool{}
	for _, c := range cs {
		if written[c.Entity] == nil {
			written[c.Entity] = map[string]bool{}
		}
		if c.Op == change.OpUpdate {
			for k := range c.Fields {
				written[c.Entity][k] = true
			}
		}
	}
	var missed []string
	for _, entity := range []string{"order", "payment", "stock_level", "transfer", "customer", "gift_card", "loyalty_account",
		"category", "product", "modifier_group", "price_list", "register", "drawer_session", "layby"} {
		for _, col := range nouns[entity].Edge.Update {
			if !written[entity][col] && !slices.Contains(nouns[entity].Derived, col) {
				missed = append(missed, entity+"."+col)
			}
		}
	}
	sort.Strings(missed)
	if len(missed) > 0 {
		t.Errorf("no operation of the edge's till changed %v: add one to tills", missed)
	}
	ew.hubHoldsWhatTheEdgeHas(t)
}

// hubHoldsWhatTheEdgeHas checks that the hub holds every order and
// payment as the edge does, and every receipt the edge's tills numbered.
func (ew *edgeWorld) hubHoldsWhatTheEdgeHas(t *testing.T) {
	t.Helper()
	if n := len(dumpRows(t, ew.edge.db, "SELECT id FROM receipts WHERE org_id = ?", ew.org)); n < 2 {
		t.Errorf("the edge's tills numbered %d receipts, want a sale's and a refund's at least", n)
	}
	for _, table := range []string{"orders", "payments", "refunds", "receipts", "order_lines", "gift_card_transactions", "stock_movements", "transfers",
		"laybys", "layby_payments", "points_transactions"} {
		cols := map[string]string{
			"orders":              "id, status, total, paid_total, refunded_total, completed_at, loyalty_points_earned, notes, customer_id, kitchen_status",
			"payments":            "id, order_id, amount, method, status, offline, processor_ref, refunded_amount, card_last4, captured_at, failure_reason",
			"receipts":            "id, number, kind, order_id, refund_id, register_id, origin",
			"laybys":              "id, status, total, paid, refunded, termination_charge, cancelled_by, completed_at, cancelled_at",
			"order_lines":         "id, tax, total, tax_rate_bps",
			"points_transactions": "id, account_id, type, points, order_id, payment_id",
		}[table]
		if cols == "" {
			cols = "id"
		}
		q := "SELECT " + cols + " FROM " + table + " WHERE org_id = '" + ew.org + "' ORDER BY id"
		hubRows, edgeRows := dumpRows(t, ew.hub.db, q), dumpRows(t, ew.edge.db, q)
		if fmt.Sprint(hubRows) != fmt.Sprint(edgeRows) {
			t.Errorf("%s differ:\n hub  %v\n edge %v", table, hubRows, edgeRows)
		}
	}
}

// TestAnEventOfARefusedChangeIsHeldUntilItIsAdmitted: a cashier's order
// reaches the hub; offline, she takes its payment and completes it, and
// is moved to the kitchen at the hub before the store reconnects. The hub
// refuses the payment and the completion (a cook may not take money), so
// the order stays open there — but the edge's order.completed about it,
// which any active user may log, is admitted; it is held: not in the
// hub's event log, no webhook queued (on main it was both). Once her role
// is given back and ops re-apply the refused records, the event is
// logged and queued, once.
func TestAnEventOfARefusedChangeIsHeldUntilItIsAdmitted(t *testing.T) {
	ew := mustEdgeWorld(t)
	ctx := context.Background()
	hooks := NewWebhookStore(ew.hub.db)
	if _, err := hooks.CreateWebhook(ew.ctx, &kassa.WebhookCreate{URL: "https://partner.example/hook",
		Events: []string{kassa.EventOrderCompleted}}, "whsec_test_secret_0123456789"); err != nil {
		t.Fatal(err)
	}
	o := must[*kassa.Order](t, "order")(ew.edge.orders.CreateOrder(ew.ctx, &kassa.OrderCreate{LocationID: ew.loc,
		LineItems: []kassa.OrderLineInput{{ProductID: ew.p1, Quantity: 1}}}))
	_, after := ew.push(t, 0)
	must[*kassa.Payment](t, "pay")(ew.edge.payments.Initiate(ew.ctx, &kassa.PaymentInitiate{OrderID: o.ID, Amount: o.Total, Method: kassa.PaymentCash}))
	must[*kassa.Order](t, "complete")(ew.edge.orders.CompleteOrder(ew.ctx, o.ID))
	owner := kassa.ActorFrom(ew.ctx).UserID
	setRole := func(role kassa.Role) {
		if _, err := ew.hub.db.Writer.ExecContext(ctx, `UPDATE users SET role = ? WHERE id = ?`, string(role), owner); err != nil {
			t.Fatal(err)
		}
	}
	setRole(kassa.RoleKitchen)
	if _, _, q := ew.ingest(t, after); q == 0 {
		t.Fatal("the hub admitted a cook's payment")
	}
	completed := func() (logged, queued int) {
		t.Helper()
		for _, q := range []struct {
			n   *int
			sql string
		}{{&logged, `SELECT count(*) FROM events WHERE type = 'order.completed' AND json_extract(data, '$.id') = ?`},
			{&queued, `SELECT count(*) FROM webhook_deliveries WHERE event_type = 'order.completed' AND json_extract(body, '$.data.id') = ?`}} {
			if err := ew.hub.db.Reader.QueryRowContext(ctx, q.sql, o.ID).Scan(q.n); err != nil {
				t.Fatal(err)
			}
		}
		return logged, queued
	}
	hubOrder := func() *kassa.Order {
		return must[*kassa.Order](t, "the order at the hub")(ew.hub.orders.FindOrderByID(ew.ctx, o.ID))
	}
	if got := hubOrder(); got.Status != kassa.OrderOpen {
		t.Fatalf("the hub shows the order %s", got.Status)
	}
	if logged, queued := completed(); logged != 0 || queued != 0 {
		t.Fatalf("order.completed of an order the hub shows open: %d in the event log, %d webhooks queued", logged, queued)
	}
	// Her role back, one re-apply: it retries the order's other refused
	// records with it, in the order they came.
	setRole(kassa.RoleOwner)
	conflicts := NewConflictService(ew.hub.db)
	first := dumpRows(t, ew.hub.db, `SELECT id FROM sync_conflicts WHERE kind = 'quarantined' AND status = 'open' AND org_id = ? ORDER BY detected_at, id LIMIT 1`, ew.org)
	if len(first) != 1 {
		t.Fatalf("no refused record listed")
	}
	if _, err := conflicts.Reapply(ew.ctx, first[0][0].(string)); err != nil {
		t.Fatalf("re-apply %v: %v", first[0][0], err)
	}
	if got := hubOrder(); got.Status != kassa.OrderCompleted || got.PaidTotal != got.Total {
		t.Fatalf("after re-apply the hub shows the order %s, paid %d of %d", got.Status, got.PaidTotal, got.Total)
	}
	if logged, queued := completed(); logged != 1 || queued != 1 {
		t.Fatalf("after re-apply: order.completed %d times in the event log, %d webhooks queued; want 1 and 1", logged, queued)
	}
	var held int
	ew.hub.db.Reader.QueryRowContext(ctx, `SELECT count(*) FROM held_events`).Scan(&held)
	if held != 0 {
		t.Fatalf("%d events still held", held)
	}
}
