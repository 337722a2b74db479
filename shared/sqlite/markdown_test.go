package sqlite

import (
	"context"
	"testing"
	"time"

	"kassa.dev/shared/kassa"
	"kassa.dev/sync/change"
)

// onHand is product's on-hand at w's location on n.
func onHand(t *testing.T, n *node, w world, product string) int64 {
	t.Helper()
	var q int64
	if err := n.db.Reader.QueryRow(`SELECT coalesce(sum(on_hand), 0) FROM stock_levels WHERE location_id = ? AND product_id = ?`, w.loc, product).Scan(&q); err != nil {
		t.Fatal(err)
	}
	return q
}

// TestAnEdgeSellsAVariantABundleAndAMarkdownOfflineAndTheHubAdmitsIt: the
// hub makes a T-shirt with a variant, a bundle of two of that variant,
// and a markdown of P0 to 300; the edge, holding them, sells all three
// while the hub withdraws the markdown. The edge moved the variant's stock
// (one for the variant's line, two for the bundle's) and sold P0 at 300,
// keeping 500 as its original price; the hub admits every record (the
// markdown as it stood when the sale was made) and holds the same lines.
func TestAnEdgeSellsAVariantABundleAndAMarkdownOfflineAndTheHubAdmitsIt(t *testing.T) {
	edge, hub, w := edgeAndHub(t)
	tee, err := hub.products.CreateProduct(w.ctx, &kassa.ProductCreate{Name: "Tee", SKU: "TEE", BasePrice: ptr(int64(2000))})
	if err != nil {
		t.Fatal(err)
	}
	teeM, err := hub.products.CreateVariant(w.ctx, tee.ID, &kassa.VariantCreate{SKU: "TEE-M", Options: map[string]string{"size": "M"}, BasePrice: ptr(int64(2200))})
	if err != nil {
		t.Fatal(err)
	}
	pack, err := hub.products.CreateProduct(w.ctx, &kassa.ProductCreate{Name: "Two tees", SKU: "TEE-2", BasePrice: ptr(int64(3500)),
		Components: []kassa.BundleComponent{{ProductID: teeM.ID, Quantity: 2}}})
	if err != nil {
		t.Fatal(err)
	}
	now := time.Now().UTC()
	md, err := NewMarkdownService(hub.db).CreateMarkdown(w.ctx, &kassa.MarkdownCreate{Name: "Clearance", Type: kassa.MarkdownPrice, Value: ptr(int64(300)),
		ProductIDs: []string{w.p1}, StartsAt: ptr(now.Add(-time.Hour)), EndsAt: ptr(now.Add(time.Hour))})
	if err != nil {
		t.Fatal(err)
	}
	ship(t, hub, edge)
	if _, err := edge.inv.Adjust(w.ctx, &kassa.StockAdjust{LocationID: w.loc, ProductID: teeM.ID, Reason: "received", Quantity: 10}); err != nil {
		t.Fatal(err)
	}
	o, err := edge.orders.CreateOrder(w.ctx, &kassa.OrderCreate{LocationID: w.loc, LineItems: []kassa.OrderLineInput{
		{ProductID: w.p1, Quantity: 1}, {ProductID: tee.ID, VariantID: &teeM.ID, Quantity: 1}, {ProductID: pack.ID, Quantity: 1}}})
	if err != nil {
		t.Fatal(err)
	}
	l := o.LineItems
	if l[0].UnitPrice != 300 || l[0].OriginalPrice == nil || *l[0].OriginalPrice != 500 || l[0].MarkdownID == nil || *l[0].MarkdownID != md.ID {
		t.Fatalf("the marked-down line: %+v", l[0])
	}
	if l[1].UnitPrice != 2200 || l[1].SKU != "TEE-M" || l[1].VariantID == nil || *l[1].VariantID != teeM.ID || l[1].ProductID != tee.ID || l[1].OriginalPrice != nil {
		t.Fatalf("the variant's line: %+v", l[1])
	}
	if l[2].UnitPrice != 3500 || o.Subtotal != 300+2200+3500 {
		t.Fatalf("the bundle's line %+v, subtotal %d", l[2], o.Subtotal)
	}
	if _, err := edge.payments.Initiate(w.ctx, &kassa.PaymentInitiate{OrderID: o.ID, Amount: o.Total, Method: kassa.PaymentCash}); err != nil {
		t.Fatal(err)
	}
	if _, err := edge.orders.CompleteOrder(w.ctx, o.ID); err != nil {
		t.Fatal(err)
	}
	if got := onHand(t, edge, w, teeM.ID); got != 7 {
		t.Fatalf("the variant's stock after selling it and a bundle of two: %d, want 7", got)
	}
	if got := onHand(t, edge, w, tee.ID) + onHand(t, edge, w, pack.ID); got != 0 {
		t.Fatalf("the product and the bundle moved stock of their own: %d", got)
	}
	hub.db.Now = func() time.Time { return time.Now().Add(time.Minute) } // withdrawn after the sale
	if _, err := NewMarkdownService(hub.db).UpdateMarkdown(w.ctx, md.ID, &kassa.MarkdownUpdate{IsActive: kassa.Some(false)}); err != nil {
		t.Fatal(err)
	}
	push(t, edge, hub, w) // fails on a quarantined record
	got, err := hub.orders.FindOrderByID(w.ctx, o.ID)
	if err != nil {
		t.Fatal(err)
	}
	if got.Total != o.Total || len(got.LineItems) != 3 || *got.LineItems[0].OriginalPrice != 500 || *got.LineItems[0].MarkdownID != md.ID ||
		*got.LineItems[1].VariantID != teeM.ID {
		t.Fatalf("the order at the hub: %+v", got)
	}
	if got := onHand(t, hub, w, teeM.ID); got != 7 {
		t.Fatalf("the variant's stock at the hub: %d, want 7", got)
	}
}

// TestTheHubRefusesAForgedMarkdownPrice: a cashier's line claiming a
// markdown is admitted only when the markdown, as it stood at the hub when
// the order was made, lowered that product's price to the line's: 20 %
// off P0 from t0+1m, withdrawn at t0+5m.
func TestTheHubRefusesAForgedMarkdownPrice(t *testing.T) {
	hub := mustNode(t)
	w := seed(t, hub)
	cashier := mustCashier(t, hub, w)
	t0 := time.Now().UTC().Truncate(time.Millisecond)
	now := t0
	hub.db.Now = func() time.Time { return now }
	svc := NewMarkdownService(hub.db)
	md, err := svc.CreateMarkdown(w.ctx, &kassa.MarkdownCreate{Name: "20 % off", Type: kassa.MarkdownPercent, Value: ptr(int64(2000)),
		ProductIDs: []string{w.p1}, StartsAt: ptr(t0.Add(time.Minute)), EndsAt: ptr(t0.Add(time.Hour))})
	if err != nil {
		t.Fatal(err)
	}
	now = t0.Add(5 * time.Minute)
	if _, err := svc.UpdateMarkdown(w.ctx, md.ID, &kassa.MarkdownUpdate{IsActive: kassa.Some(false)}); err != nil {
		t.Fatal(err)
	}
	now = t0.Add(6 * time.Minute)
	for _, tc := range []struct {
		name            string
		product         string
		unit, original  int64
		markdown        string
		at              time.Time
		wantQuarantined int
	}{
		{"as it stood", w.p1, 400, 500, md.ID, t0.Add(2 * time.Minute), 0},
		{"before it started", w.p1, 400, 500, md.ID, t0.Add(-time.Minute), 1},
		// An edge clock 30 s behind the hub's (within its MaxSkew).
		{"by a clock behind, just after it started", w.p1, 400, 500, md.ID, t0.Add(30 * time.Second), 0},
		{"after it was withdrawn", w.p1, 400, 500, md.ID, t0.Add(5*time.Minute + time.Second), 1},
		{"deeper than it went", w.p1, 300, 500, md.ID, t0.Add(2 * time.Minute), 1},
		{"on a product it does not name", w.p2, 400, 500, md.ID, t0.Add(2 * time.Minute), 1},
		{"an original price without a markdown", w.p1, 400, 500, "", t0.Add(2 * time.Minute), 1},
		{"no markdown at all", w.p1, 400, 400, "", t0.Add(2 * time.Minute), 0},
	} {
		if q := markedDownSale(t, hub, w, cashier.ID, tc.product, tc.unit, tc.original, tc.markdown, tc.at); q != tc.wantQuarantined {
			t.Errorf("a line %s: quarantined %d, want %d", tc.name, q, tc.wantQuarantined)
		}
	}
}

// markedDownSale pushes, as an edge would, a cashier's order of one line
// of product at unit, claiming original and markdown ("" none), made at
// occurred; it returns how many records the hub quarantined.
func markedDownSale(t *testing.T, hub *node, w world, cashier, product string, unit, original int64, markdown string, occurred time.Time) int {
	t.Helper()
	from := EdgeScope{OrgID: w.org, LocationID: w.loc, NodeID: hub.db.NewID()}
	now := hub.db.Now()
	push := func(entity, id string, fields map[string]any) int {
		t.Helper()
		ch := change.Change{ID: hub.db.NewID(), OrgID: w.org, LocationID: w.loc, Entity: entity, EntityID: id, Op: change.OpInsert,
			Fields: fields, HLC: hub.db.Clock.Now(), Origin: from.NodeID, Actor: cashier}
		_, q, err := hub.db.Ingest(context.Background(), from, []change.Change{ch})
		if err != nil {
			t.Fatal(err)
		}
		return q
	}
	order := hub.db.NewID()
	if q := push("order", order, map[string]any{"location_id": w.loc, "number": "E-" + order[len(order)-8:], "status": "open", "channel": "pos",
		"currency": "AUD", "subtotal": unit, "discount_total": 0, "tax_total": 0, "total": unit, "tax_inclusive": true, "tax_rate_bps": 0,
		"created_by": cashier, "occurred_at": occurred, "created_at": now, "updated_at": now, "campaigns": "[]"}); q != 0 {
		t.Fatal("the order row was quarantined")
	}
	line := map[string]any{"order_id": order, "position": 0, "product_id": product, "name": "P", "sku": "S", "quantity": 1, "unit_price": unit,
		"modifiers": "[]", "discount": 0, "tax": 0, "total": unit, "campaign_discounts": "[]", "original_price": original, "created_at": now, "updated_at": now}
	if markdown != "" {
		line["markdown_id"] = markdown
	}
	return push("order_line", hub.db.NewID(), line)
}
