package sqlite

import (
	"context"
	"testing"

	"kassa.dev/shared/kassa"
	"kassa.dev/shared/processor"
	"kassa.dev/sync/change"
)

// openLayby opens a lay-by of two of w's first product at w's store on
// svc, with a cash deposit.
func openLayby(t *testing.T, svc *LaybyService, w world, deposit int64) *kassa.Layby {
	t.Helper()
	l, err := svc.CreateLayby(w.ctx, &kassa.LaybyCreate{LocationID: w.loc, CustomerID: w.customer,
		LineItems: []kassa.LaybyLineInput{{ProductID: w.p1, Quantity: 2}}, Deposit: kassa.LaybyTender{Method: kassa.PaymentCash, Amount: deposit}})
	if err != nil {
		t.Fatal(err)
	}
	return l
}

// TestTheHubAdmitsLaybyMoneyOnlyAsTheAPIMovesIt: an edge's lay-by and
// its deposit are admitted; a stolen store machine's forged lay-by writes
// are refused, each with its reason: money paid out of a lay-by nobody
// cancelled, an instalment over the total or at another store, goods
// collected before they are paid, an expiry before the term, a
// termination charge over the org's setting, a lay-by opened for another
// store, a gift card debited for a cash instalment, a till's drawer
// recording an instalment for more or as a refund. A paid total on the
// wire is recomputed, not taken.
func TestTheHubAdmitsLaybyMoneyOnlyAsTheAPIMovesIt(t *testing.T) {
	edge, hub, w := edgeAndHub(t)
	ctx := context.Background()
	other, err := NewLocationService(hub.db).CreateLocation(w.ctx, &kassa.LocationCreate{Name: "Other", Timezone: "UTC"})
	if err != nil {
		t.Fatal(err)
	}
	card, err := NewGiftCardService(hub.db).IssueGiftCard(w.ctx, &kassa.GiftCardIssue{InitialAmount: 1000})
	if err != nil {
		t.Fatal(err)
	}
	ship(t, hub, edge)
	l := openLayby(t, NewLaybyService(edge.db, nil), w, 200)
	till, err := NewRegisterService(edge.db).CreateRegister(w.ctx, &kassa.RegisterCreate{LocationID: w.loc, Name: "Desk"})
	if err != nil {
		t.Fatal(err)
	}
	float := int64(1000)
	drawer, err := NewDrawerService(edge.db).OpenDrawer(w.ctx, &kassa.DrawerOpenRequest{RegisterID: till.ID, Float: kassa.CashCount{Amount: &float}})
	if err != nil {
		t.Fatal(err)
	}
	push(t, edge, hub, w)
	from := EdgeScope{OrgID: w.org, LocationID: w.loc, NodeID: edge.db.NodeID}
	owner := kassa.ActorFrom(w.ctx).UserID
	now := fmtTime(hub.db.Now())
	rec := func(entity, id string, op change.Op, f map[string]any) change.Change {
		f["updated_at"] = now
		if op == change.OpInsert {
			f["created_at"] = now
		}
		return change.Change{ID: hub.db.NewID(), OrgID: w.org, Entity: entity, EntityID: id, Op: op, Fields: f,
			HLC: hub.db.Clock.Now(), Origin: from.NodeID, Actor: owner}
	}
	entry := func(typ string, amount int64, loc string) change.Change {
		return rec("layby_payment", hub.db.NewID(), change.OpInsert, map[string]any{"layby_id": l.ID, "location_id": loc, "type": typ,
			"method": "cash", "amount": amount})
	}
	update := func(f map[string]any) change.Change { return rec("layby", l.ID, change.OpUpdate, f) }
	drawerEntry := func(f map[string]any) change.Change {
		for k, v := range map[string]any{"location_id": w.loc, "drawer_id": drawer.ID, "method": "cash", "payment_id": l.Payments[0].ID,
			"reason": "", "created_by": owner} {
			f[k] = v
		}
		c := rec("drawer_entry", hub.db.NewID(), change.OpInsert, f)
		c.LocationID = w.loc
		return c
	}
	expiry := update(map[string]any{"status": "expired", "cancelled_by": "store", "cancelled_at": now})
	expiry.Actor = ""
	for _, tc := range []struct {
		name, reason string
		c            change.Change
	}{
		{"a refund of a lay-by nobody cancelled", RefusedValue, entry("refund", -200, w.loc)},
		{"an instalment over the total", RefusedValue, entry("payment", l.Total+1, w.loc)},
		{"an instalment at another store", RefusedScope, entry("payment", 100, other.ID)},
		{"goods collected before they are paid", RefusedValue, update(map[string]any{"status": "completed", "completed_at": now})},
		{"an expiry before the term", RefusedValue, expiry},
		{"a termination charge over the org's", RefusedValue, update(map[string]any{"status": "cancelled", "cancelled_by": "customer",
			"termination_charge": 100, "cancelled_at": now})},
		{"a lay-by opened for another store", RefusedScope, rec("layby", hub.db.NewID(), change.OpInsert, map[string]any{"location_id": other.ID,
			"customer_id": w.customer, "status": "open", "currency": "AUD", "line_items": `[{"product_id":"` + w.p1 + `","quantity":1}]`,
			"subtotal": 500, "tax_total": 45, "total": 500, "expires_at": now})},
		{"a drawer sale of more than the instalment", RefusedValue, drawerEntry(map[string]any{"type": "sale", "amount": 999})},
		{"a drawer refund of an instalment", RefusedValue, drawerEntry(map[string]any{"type": "refund", "amount": -200, "refund_id": l.Payments[0].ID})},
		{"a gift card debited for a cash instalment", RefusedValue, rec("gift_card_transaction", hub.db.NewID(), change.OpInsert,
			map[string]any{"gift_card_id": card.ID, "type": "redeem", "amount": -200, "payment_id": l.Payments[0].ID})},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, q, err := hub.db.Ingest(ctx, from, []change.Change{tc.c})
			if err != nil || q != 1 {
				t.Fatalf("ingest: %v, %d quarantined; want it refused", err, q)
			}
			var reason string
			hub.db.Reader.QueryRow(`SELECT reason FROM sync_quarantine WHERE id = ?`, tc.c.ID).Scan(&reason)
			if reason != tc.reason {
				t.Fatalf("refused as %q, want %q", reason, tc.reason)
			}
		})
	}
	if _, q, err := hub.db.Ingest(ctx, from, []change.Change{update(map[string]any{"paid": l.Total})}); err != nil || q != 0 {
		t.Fatalf("a paid total on the wire: %v, %d quarantined", err, q)
	}
	got, err := NewLaybyService(hub.db, nil).FindLaybyByID(w.ctx, l.ID)
	if err != nil || got.Status != kassa.LaybyOpen || got.Paid != 200 || got.Refunded != 0 || len(got.Payments) != 1 {
		t.Fatalf("forged writes moved the hub's lay-by: %+v, %v", got, err)
	}
	if card, _ := NewGiftCardService(hub.db).FindGiftCardByID(w.ctx, card.ID); card.Balance != 1000 {
		t.Fatalf("the card's balance is %d, want 1000", card.Balance)
	}
}

// TestInstalmentsTakenWhileApartAddUp: the hub and a store each take an
// instalment of the same lay-by while apart, both knowing only the
// deposit; once they exchange, both hold both instalments and the same
// paid total, and the lay-by — paid in full by the two together, which
// neither saw — is completed by hand. Had each taken the whole balance,
// the merge records the lay-by overpaid; so it does for an instalment taken
// at the hub while the store cancelled the lay-by.
func TestInstalmentsTakenWhileApartAddUp(t *testing.T) {
	edge, hub, w := edgeAndHub(t)
	at := map[string]*LaybyService{"edge": NewLaybyService(edge.db, processor.NewCardSimulator()), "hub": NewLaybyService(hub.db, nil)}
	l := openLayby(t, at["edge"], w, 200)
	push(t, edge, hub, w)
	half := (l.Total - 200) / 2
	for _, n := range []string{"edge", "hub"} {
		if _, err := at[n].PayLayby(w.ctx, l.ID, &kassa.LaybyPay{Method: kassa.PaymentCash, Amount: half}); err != nil {
			t.Fatalf("%s: %v", n, err)
		}
	}
	push(t, edge, hub, w)
	ship(t, hub, edge)
	for n, svc := range at {
		got, err := svc.FindLaybyByID(w.ctx, l.ID)
		if err != nil || got.Paid != 200+2*half || len(got.Payments) != 3 || got.Status != kassa.LaybyOpen {
			t.Fatalf("%s after the merge: %+v, %v; want both instalments, paid %d", n, got, err, 200+2*half)
		}
	}
	done, err := at["edge"].CompleteLayby(w.ctx, l.ID)
	if err != nil || done.Status != kassa.LaybyCompleted || done.Balance != 0 {
		t.Fatalf("complete: %+v, %v", done, err)
	}
	push(t, edge, hub, w)
	if got, _ := at["hub"].FindLaybyByID(w.ctx, l.ID); got.Status != kassa.LaybyCompleted {
		t.Fatalf("the hub's lay-by is %s after the completion", got.Status)
	}
	// Both take the whole balance of another while apart: overpaid.
	l = openLayby(t, at["edge"], w, 200)
	push(t, edge, hub, w)
	for _, n := range []string{"edge", "hub"} {
		if _, err := at[n].PayLayby(w.ctx, l.ID, &kassa.LaybyPay{Method: kassa.PaymentCash, Amount: l.Balance}); err != nil {
			t.Fatalf("%s: %v", n, err)
		}
	}
	push(t, edge, hub, w)
	var kind string
	hub.db.Reader.QueryRow(`SELECT kind FROM sync_conflicts WHERE entity_id = ?`, l.ID).Scan(&kind)
	if got, _ := at["hub"].FindLaybyByID(w.ctx, l.ID); kind != kassa.ConflictOverpaid || got.Paid != 2*l.Total-200 || got.Balance != 200-l.Total {
		t.Fatalf("overpaid while apart: conflict %q, %+v", kind, got)
	}
	// The store cancels one (refunding the deposit) while the hub takes an
	// instalment of it: the instalment is the customer's, unrefunded.
	l = openLayby(t, at["edge"], w, 200)
	push(t, edge, hub, w)
	if _, err := at["hub"].PayLayby(w.ctx, l.ID, &kassa.LaybyPay{Method: kassa.PaymentCash, Amount: 300}); err != nil {
		t.Fatal(err)
	}
	if _, err := at["edge"].CancelLayby(w.ctx, l.ID, &kassa.LaybyCancel{By: kassa.LaybyByStore}); err != nil {
		t.Fatal(err)
	}
	push(t, edge, hub, w)
	kind = ""
	hub.db.Reader.QueryRow(`SELECT kind FROM sync_conflicts WHERE entity_id = ?`, l.ID).Scan(&kind)
	if got, _ := at["hub"].FindLaybyByID(w.ctx, l.ID); kind != kassa.ConflictOverpaid || got.Status != kassa.LaybyCancelled || got.Unsettled() != 300 {
		t.Fatalf("an instalment taken while the lay-by was cancelled elsewhere: conflict %q, %+v", kind, got)
	}
}

// TestALaybyReservesItsGoodsUntilCollectedOrReleased: opening takes the
// goods off the store's sellable on-hand and shows them reserved; a
// completion keeps them off (collected) and unreserved; a cancellation
// puts them back. A cancellation by the customer keeps the org's charge
// (never more than was paid); the store's keeps nothing. Bad instalments
// change nothing.
func TestALaybyReservesItsGoodsUntilCollectedOrReleased(t *testing.T) {
	n := mustNode(t)
	w := seed(t, n)
	svc := NewLaybyService(n.db, processor.NewCardSimulator())
	if _, err := NewSettingsService(n.db).UpdateSettings(w.ctx, &kassa.SettingsUpdate{LaybyTerminationCharge: kassa.Some(int64(250))}); err != nil {
		t.Fatal(err)
	}
	level := func() (onHand, reserved int64) {
		l, err := findLevel(context.Background(), n.db.Reader, w.org, w.loc, w.p1)
		if err == nil {
			err = addReserved(context.Background(), n.db.DB, n.db.Reader, l)
		}
		if err != nil {
			t.Fatal(err)
		}
		return l.OnHand, l.Reserved
	}
	if h, r := level(); h != 5 || r != 0 {
		t.Fatalf("before: on hand %d, reserved %d", h, r)
	}
	a, b := openLayby(t, svc, w, 200), openLayby(t, svc, w, 100)
	if h, r := level(); h != 1 || r != 4 {
		t.Fatalf("two lay-bys of 2 open: on hand %d, reserved %d; want 1 and 4", h, r)
	}
	for _, bad := range []kassa.LaybyPay{{Method: kassa.PaymentCash, Amount: a.Balance + 1}, {Method: kassa.PaymentCard, Amount: 100, CardNumber: processor.CardDecline}} {
		if _, err := svc.PayLayby(w.ctx, a.ID, &bad); kassa.ErrorKind(err) != kassa.EInvalid {
			t.Fatalf("%+v: %v, want invalid", bad, err)
		}
	}
	a, err := svc.PayLayby(w.ctx, a.ID, &kassa.LaybyPay{Method: kassa.PaymentCard, Amount: a.Balance, CardNumber: processor.CardApprove})
	if err != nil || a.Status != kassa.LaybyCompleted || len(a.Payments) != 2 {
		t.Fatalf("paid in full: %+v, %v", a, err)
	}
	if h, r := level(); h != 1 || r != 2 {
		t.Fatalf("one collected: on hand %d, reserved %d; want 1 and 2", h, r)
	}
	b, err = svc.CancelLayby(w.ctx, b.ID, &kassa.LaybyCancel{By: kassa.LaybyByCustomer})
	if err != nil || b.Status != kassa.LaybyCancelled || b.TerminationCharge != 100 || b.Refunded != 0 {
		t.Fatalf("customer cancels with 100 paid and a charge of 250: %+v, %v; want 100 kept, nothing refunded", b, err)
	}
	if h, r := level(); h != 3 || r != 0 {
		t.Fatalf("one released: on hand %d, reserved %d; want 3 and 0", h, r)
	}
	c := openLayby(t, svc, w, 300)
	if c, err = svc.CancelLayby(w.ctx, c.ID, &kassa.LaybyCancel{By: kassa.LaybyByStore}); err != nil || c.TerminationCharge != 0 || c.Refunded != 300 {
		t.Fatalf("store cancels: %+v, %v; want all 300 back", c, err)
	}
	if _, err := svc.CancelLayby(w.ctx, a.ID, &kassa.LaybyCancel{By: kassa.LaybyByStore}); kassa.ErrorKind(err) != kassa.EConflict {
		t.Fatalf("cancelling a collected lay-by: %v, want a conflict", err)
	}
}
