package sqlite

import (
	"context"
	"testing"

	"kassa.dev/shared/kassa"
	"kassa.dev/shared/processor"
	"kassa.dev/sync/change"
)

// TestTheHubAdmitsPointsPaymentsOnlyAsTheAPIMovesThem: an edge pays part
// of a customer's order with her points (10 points worth 10 each) and the
// rest in cash; the hub debits her points as the edge did. A forged
// loyalty_points payment — its points not debited, or debited wrongly —
// and forged points refunds are refused; an honest refund gives the
// points back at both nodes.
func TestTheHubAdmitsPointsPaymentsOnlyAsTheAPIMovesThem(t *testing.T) {
	edge, hub, w := edgeAndHub(t)
	ctx := context.Background()
	if _, err := NewSettingsService(hub.db).SetPaymentMethods(w.ctx, []kassa.PaymentMethodConfig{{Method: kassa.PaymentCash, Enabled: true},
		{Method: kassa.PaymentLoyaltyPoints, Enabled: true}}); err != nil {
		t.Fatal(err)
	}
	ship(t, hub, edge)
	pay := NewPaymentService(edge.db, map[kassa.PaymentMethod]kassa.Processor{kassa.PaymentCash: processor.Cash{},
		kassa.PaymentLoyaltyPoints: processor.LoyaltyPoints{}})
	o := must[*kassa.Order](t, "order")(edge.orders.CreateOrder(w.ctx, &kassa.OrderCreate{LocationID: w.loc, CustomerID: &w.customer,
		LineItems: []kassa.OrderLineInput{{ProductID: w.p1, Quantity: 2}}}))
	points := must[*kassa.Payment](t, "points")(pay.Initiate(w.ctx, &kassa.PaymentInitiate{OrderID: o.ID, Amount: 30, Method: kassa.PaymentLoyaltyPoints}))
	must[*kassa.Payment](t, "cash")(pay.Initiate(w.ctx, &kassa.PaymentInitiate{OrderID: o.ID, Amount: o.Total - 30, Method: kassa.PaymentCash}))
	push(t, edge, hub, w)
	balance := func(n *node) int64 {
		a := must[*kassa.LoyaltyAccount](t, "account")(NewLoyaltyService(n.db).FindAccountByID(w.ctx, w.account))
		return a.PointsBalance
	}
	if e, h := balance(edge), balance(hub); e != 7 || h != 7 {
		t.Fatalf("after paying 30 with points: edge %d, hub %d points; want 7 at both", e, h)
	}
	from := EdgeScope{OrgID: w.org, LocationID: w.loc, NodeID: edge.db.NodeID}
	owner := kassa.ActorFrom(w.ctx).UserID
	now := fmtTime(hub.db.Now())
	entry := func(typ string, points int64, payment string) change.Change {
		f := map[string]any{"account_id": w.account, "type": typ, "points": points, "balance_after": 0, "order_id": o.ID, "reason": "",
			"created_at": now, "updated_at": now}
		if payment != "" {
			f["payment_id"] = payment
		}
		return change.Change{ID: hub.db.NewID(), OrgID: w.org, Entity: "points_transaction", EntityID: hub.db.NewID(), Op: change.OpInsert,
			Fields: f, HLC: hub.db.Clock.Now(), Origin: from.NodeID, Actor: owner}
	}
	payment := func(id string, amount int64) change.Change {
		return change.Change{ID: hub.db.NewID(), OrgID: w.org, LocationID: w.loc, Entity: "payment", EntityID: id, Op: change.OpInsert,
			Fields: map[string]any{"order_id": o.ID, "location_id": w.loc, "amount": amount, "method": "loyalty_points", "status": "captured",
				"offline": 0, "refunded_amount": 0, "created_at": now, "updated_at": now},
			HLC: hub.db.Clock.Now(), Origin: from.NodeID, Actor: owner}
	}
	notDebited, underDebited, neverHeld, othersPoints := hub.db.NewID(), hub.db.NewID(), hub.db.NewID(), hub.db.NewID()
	other := must[*kassa.Customer](t, "customer")(NewCustomerService(hub.db).CreateCustomer(w.ctx, &kassa.CustomerCreate{FirstName: "Other"}))
	otherAccount := must[*kassa.LoyaltyAccount](t, "enrol")(NewLoyaltyService(hub.db).Enrol(w.ctx, &kassa.EnrolRequest{CustomerID: other.ID}))
	onOthers := entry("redeem", -3, othersPoints)
	onOthers.Fields["account_id"] = otherAccount.ID
	for _, tc := range []struct {
		name    string
		cs      []change.Change
		refused int // the index of the refused record
	}{
		{"a points payment whose points were not debited", []change.Change{payment(notDebited, 20)}, 0},
		{"a points payment debiting 1 point for 20", []change.Change{entry("redeem", -1, underDebited), payment(underDebited, 20)}, 1},
		{"a points payment at a value the program never held (15)", []change.Change{entry("redeem", -2, neverHeld), payment(neverHeld, 30)}, 1},
		{"a points payment debiting another customer's points", []change.Change{onOthers, payment(othersPoints, 30)}, 1},
		{"a second redeem for the honest payment", []change.Change{entry("redeem", -3, points.ID)}, 0},
		{"a points refund no refund or void covers", []change.Change{entry("refund", 3, points.ID)}, 0},
		{"a points refund of no payment", []change.Change{entry("refund", 3, "")}, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, q, err := hub.db.Ingest(ctx, from, tc.cs)
			if err != nil || q != 1 {
				t.Fatalf("ingest: %v, %d quarantined; want one refused", err, q)
			}
			var reason string
			hub.db.Reader.QueryRow(`SELECT reason FROM sync_quarantine WHERE id = ?`, tc.cs[tc.refused].ID).Scan(&reason)
			if reason == "" {
				t.Fatalf("record %d was admitted, want it refused", tc.refused)
			}
		})
	}
	var forged int
	hub.db.Reader.QueryRow(`SELECT count(*) FROM payments WHERE id IN (?, ?, ?, ?)`, notDebited, underDebited, neverHeld, othersPoints).Scan(&forged)
	if forged != 0 {
		t.Fatalf("the hub holds %d forged points payments", forged)
	}
	// An honest full refund at the edge gives the 3 points back at both.
	done := must[*kassa.Order](t, "complete")(edge.orders.CompleteOrder(w.ctx, o.ID))
	if done.LoyaltyPointsEarned != (o.Total-30)/100 {
		t.Fatalf("the order of %d earned %v points; want those of the %d not paid with points", o.Total, done.LoyaltyPointsEarned, o.Total-30)
	}
	must[*kassa.Order](t, "refund")(NewOrderService(edge.db, pay).RefundOrder(w.ctx, o.ID, &kassa.RefundRequest{Amount: &o.Total, Reason: "cold"}))
	push(t, edge, hub, w)
	// The forged redeems of 1 and 2 points were admitted as redeems (a
	// points debit of no payment yet, as POST …/redeem writes): 3 points
	// less at the hub.
	if e, h, want := balance(edge), balance(hub), 10+done.LoyaltyPointsEarned; e != want || h != want-3 {
		t.Fatalf("after the refund: edge %d, hub %d points; want %d and %d", e, h, want, want-1)
	}
}

// TestAStoreOfflineWhileTheRedemptionValueChangesIsNeverRefused: a store
// takes 30 in points (3 points worth 10 each) while offline; head office
// meanwhile makes a point worth 20; the store reconnects and the hub
// admits the payment at the value the program held when the store sold:
// nothing refused, the customer's points and the order's money agree at
// both nodes. A forged payment at a value the program never held (15), or
// paid with another customer's points, is still refused.
func TestAStoreOfflineWhileTheRedemptionValueChangesIsNeverRefused(t *testing.T) {
	edge, hub, w := edgeAndHub(t)
	if _, err := NewSettingsService(hub.db).SetPaymentMethods(w.ctx, []kassa.PaymentMethodConfig{{Method: kassa.PaymentCash, Enabled: true},
		{Method: kassa.PaymentLoyaltyPoints, Enabled: true}}); err != nil {
		t.Fatal(err)
	}
	ship(t, hub, edge)
	pay := NewPaymentService(edge.db, map[kassa.PaymentMethod]kassa.Processor{kassa.PaymentCash: processor.Cash{},
		kassa.PaymentLoyaltyPoints: processor.LoyaltyPoints{}})
	o := must[*kassa.Order](t, "order")(edge.orders.CreateOrder(w.ctx, &kassa.OrderCreate{LocationID: w.loc, CustomerID: &w.customer,
		LineItems: []kassa.OrderLineInput{{ProductID: w.p1, Quantity: 2}}}))
	must[*kassa.Payment](t, "points")(pay.Initiate(w.ctx, &kassa.PaymentInitiate{OrderID: o.ID, Amount: 30, Method: kassa.PaymentLoyaltyPoints}))
	must[*kassa.Payment](t, "cash")(pay.Initiate(w.ctx, &kassa.PaymentInitiate{OrderID: o.ID, Amount: o.Total - 30, Method: kassa.PaymentCash}))
	must[*kassa.Order](t, "complete")(edge.orders.CompleteOrder(w.ctx, o.ID))
	a := must[*kassa.LoyaltyAccount](t, "account")(NewLoyaltyService(hub.db).FindAccountByID(w.ctx, w.account))
	if err := hub.db.Write(w.ctx, func(tx *Tx) error {
		return tx.Update(w.ctx, entProgram, w.org, a.ProgramID, map[string]any{"redemption_value": 20})
	}); err != nil {
		t.Fatal(err)
	}
	push(t, edge, hub, w) // fails on any record refused
	for _, n := range []*node{edge, hub} {
		got := must[*kassa.Order](t, "order")(n.orders.FindOrderByID(w.ctx, o.ID))
		acc := must[*kassa.LoyaltyAccount](t, "account")(NewLoyaltyService(n.db).FindAccountByID(w.ctx, w.account))
		if got.Status != kassa.OrderCompleted || got.PaidTotal != o.Total || acc.PointsBalance != 7+got.LoyaltyPointsEarned {
			t.Fatalf("%s: order %s paid %d of %d, %d points; want completed, paid in full, %d points",
				n.db.NodeID, got.Status, got.PaidTotal, o.Total, acc.PointsBalance, 7+got.LoyaltyPointsEarned)
		}
	}
}
