package sqlite

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"kassa.dev/shared/kassa"
	"kassa.dev/shared/processor"
	"kassa.dev/sync/change"
)

// TestTheHubAdmitsGiftCardMoneyOnlyAsTheAPIMovesIt: an edge's card, its
// redeem with a gift_card payment and the events of both are admitted; a
// stolen store machine's forged entries are refused, each with its reason:
// money moved without a gift_card payment of the edge, or by another
// amount than the payment's, a second issue, a refund beyond the payment,
// another org's card, a card made with a forged code, given an unknown
// status or re-enabled by a cashier, a balance on the wire.
func TestTheHubAdmitsGiftCardMoneyOnlyAsTheAPIMovesIt(t *testing.T) {
	edge, hub, w := edgeAndHub(t)
	ctx := context.Background()
	if _, err := NewSettingsService(hub.db).SetPaymentMethods(w.ctx, []kassa.PaymentMethodConfig{{Method: kassa.PaymentGiftCard, Enabled: true}}); err != nil {
		t.Fatal(err)
	}
	ship(t, hub, edge)
	pay := NewPaymentService(edge.db, map[kassa.PaymentMethod]kassa.Processor{kassa.PaymentCash: processor.Cash{}, kassa.PaymentGiftCard: processor.GiftCard{}})
	cards := NewGiftCardService(edge.db)
	card, err := cards.IssueGiftCard(w.ctx, &kassa.GiftCardIssue{InitialAmount: 1000})
	if err != nil {
		t.Fatal(err)
	}
	o, err := edge.orders.CreateOrder(w.ctx, &kassa.OrderCreate{LocationID: w.loc, LineItems: []kassa.OrderLineInput{{ProductID: w.p1, Quantity: 2}}})
	if err != nil {
		t.Fatal(err)
	}
	gift, err := pay.Initiate(w.ctx, &kassa.PaymentInitiate{OrderID: o.ID, Amount: 600, Method: kassa.PaymentGiftCard, GiftCardCode: card.Code})
	if err != nil {
		t.Fatal(err)
	}
	cash, err := pay.Initiate(w.ctx, &kassa.PaymentInitiate{OrderID: o.ID, Amount: o.Total - 600, Method: kassa.PaymentCash})
	if err != nil {
		t.Fatal(err)
	}
	push(t, edge, hub, w)
	if got, err := NewGiftCardService(hub.db).FindGiftCardByID(w.ctx, card.ID); err != nil || got.Balance != 400 {
		t.Fatalf("the hub's card: %+v, %v; want balance 400", got, err)
	}
	v := mustVictim(t, hub)
	theirs, err := NewGiftCardService(hub.db).IssueGiftCard(v.ctx, &kassa.GiftCardIssue{InitialAmount: 1000})
	if err != nil {
		t.Fatal(err)
	}
	other, err := NewGiftCardService(hub.db).IssueGiftCard(w.ctx, &kassa.GiftCardIssue{InitialAmount: 1000})
	if err != nil {
		t.Fatal(err)
	}
	from := EdgeScope{OrgID: w.org, LocationID: w.loc, NodeID: edge.db.NodeID}
	owner := kassa.ActorFrom(w.ctx).UserID
	cashier := mustCashier(t, hub, w)
	now := fmtTime(hub.db.Now())
	entry := func(typ string, amount int64, cardID, payment string) change.Change {
		f := map[string]any{"gift_card_id": cardID, "type": typ, "amount": amount, "order_id": o.ID, "created_at": now, "updated_at": now}
		if payment != "" {
			f["payment_id"] = payment
		}
		return change.Change{ID: hub.db.NewID(), OrgID: w.org, Entity: "gift_card_transaction", EntityID: hub.db.NewID(), Op: change.OpInsert,
			Fields: f, HLC: hub.db.Clock.Now(), Origin: from.NodeID, Actor: owner}
	}
	cardChange := func(op change.Op, id string, f map[string]any) change.Change {
		return change.Change{ID: hub.db.NewID(), OrgID: w.org, Entity: "gift_card", EntityID: id, Op: op,
			Fields: f, HLC: hub.db.Clock.Now(), Origin: from.NodeID, Actor: owner}
	}
	for _, tc := range []struct {
		name, reason string
		c            change.Change
	}{
		{"a redeem of a cash payment", RefusedValue, entry("redeem", -100, card.ID, cash.ID)},
		{"a second redeem of the gift payment", RefusedValue, entry("redeem", -600, card.ID, gift.ID)},
		{"a redeem of no payment", RefusedReference, entry("redeem", -100, card.ID, "")},
		{"a second issue", RefusedValue, entry("issue", 1000, card.ID, "")},
		{"a refund beyond the payment", RefusedValue, entry("refund", 601, card.ID, gift.ID)},
		// The sale stands (no refund, no void): a card refilled by an entry
		// alone would be money made from nothing.
		{"a refund no refund or void covers", RefusedValue, entry("refund", 600, card.ID, gift.ID)},
		{"a refund to another card", RefusedValue, entry("refund", 100, other.ID, gift.ID)},
		{"a refund to another org's card", RefusedReference, entry("refund", 100, theirs.ID, gift.ID)},
		{"an adjustment", RefusedValue, entry("adjust", 100_000, card.ID, "")},
		{"a card with a forged code", RefusedValue, cardChange(change.OpInsert, hub.db.NewID(), map[string]any{"code": "0000000000000000",
			"currency": "AUD", "initial_amount": 1000, "status": "active", "created_at": now, "updated_at": now})},
		{"a card given an unknown status", RefusedValue, cardChange(change.OpUpdate, card.ID, map[string]any{"status": "frozen"})},
		{"a card re-enabled by a cashier", RefusedActor, func() change.Change {
			c := cardChange(change.OpUpdate, card.ID, map[string]any{"status": "active"})
			c.Actor = cashier.ID
			return c
		}()},
		{"a card issued by a cashier", RefusedActor, func() change.Change {
			c := cardChange(change.OpInsert, hub.db.NewID(), map[string]any{"code": kassa.NewGiftCardCode(),
				"currency": "AUD", "initial_amount": 1000, "status": "active", "created_at": now, "updated_at": now})
			c.Actor = cashier.ID
			return c
		}()},
		{"a card disabled by a cashier", RefusedActor, func() change.Change {
			c := cardChange(change.OpUpdate, card.ID, map[string]any{"status": "disabled"})
			c.Actor = cashier.ID
			return c
		}()},
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
	// A card pays only in its order's currency: a forged gift_card payment
	// redeemed from a card in another currency is admitted, its redeem not.
	nzd, err := NewGiftCardService(hub.db).IssueGiftCard(w.ctx, &kassa.GiftCardIssue{InitialAmount: 1000, Currency: "NZD"})
	if err != nil {
		t.Fatal(err)
	}
	forged := hub.db.NewID()
	payment := change.Change{ID: hub.db.NewID(), OrgID: w.org, LocationID: w.loc, Entity: "payment", EntityID: forged, Op: change.OpInsert,
		Fields: map[string]any{"order_id": o.ID, "location_id": w.loc, "amount": 100, "method": "gift_card", "status": "captured",
			"offline": 0, "refunded_amount": 0, "created_at": now, "updated_at": now},
		HLC: hub.db.Clock.Now(), Origin: from.NodeID, Actor: owner}
	redeem := entry("redeem", -100, nzd.ID, forged)
	if _, q, err := hub.db.Ingest(ctx, from, []change.Change{payment, redeem}); err != nil || q != 1 {
		t.Fatalf("a redeem from a card in another currency: %v, %d quarantined; want the redeem", err, q)
	}
	var reason string
	hub.db.Reader.QueryRow(`SELECT reason FROM sync_quarantine WHERE id = ?`, redeem.ID).Scan(&reason)
	if got, _ := NewGiftCardService(hub.db).FindGiftCardByID(w.ctx, nzd.ID); reason != RefusedValue || got.Balance != 1000 {
		t.Fatalf("the NZD card's redeem: refused as %q, balance %d; want refused_value and 1000", reason, got.Balance)
	}
	// A balance on the wire is recomputed, not taken.
	if _, q, err := hub.db.Ingest(ctx, from, []change.Change{cardChange(change.OpUpdate, card.ID, map[string]any{"balance": 1_000_000})}); err != nil || q != 0 {
		t.Fatalf("a balance update: %v, %d quarantined", err, q)
	}
	if got, _ := NewGiftCardService(hub.db).FindGiftCardByID(w.ctx, card.ID); got.Balance != 400 || got.Status != kassa.GiftCardActive {
		t.Fatalf("forged entries moved the card: %+v", got)
	}
	// An honest full refund at the edge is admitted, and the hub's card
	// gets back the card's payment, as the edge's does.
	if _, err := edge.orders.CompleteOrder(w.ctx, o.ID); err != nil {
		t.Fatal(err)
	}
	r, err := NewOrderService(edge.db, pay).RefundOrder(w.ctx, o.ID, &kassa.RefundRequest{Amount: &o.Total, Reason: "cold"})
	if err != nil {
		t.Fatal(err)
	}
	push(t, edge, hub, w)
	edgeCard, _ := NewGiftCardService(edge.db).FindGiftCardByID(w.ctx, card.ID)
	hubCard, _ := NewGiftCardService(hub.db).FindGiftCardByID(w.ctx, card.ID)
	if r.RefundedTotal != o.Total || edgeCard.Balance != 1000 || hubCard.Balance != 1000 {
		t.Fatalf("after an honest refund: edge card %d, hub card %d (refunded %d); want the card's share back at both", edgeCard.Balance, hubCard.Balance, r.RefundedTotal)
	}
}

// TestAnEdgeOfFormat2IsServedNoGiftCards: its store has no gift card
// tables, so the hub leaves their records out of what it serves it; an
// edge of format 3 gets them.
func TestAnEdgeOfFormat2IsServedNoGiftCards(t *testing.T) {
	ctx := context.Background()
	for _, entity := range []string{"gift_card", "gift_card_transaction"} {
		c := change.Change{Entity: entity, Op: change.OpInsert, Fields: map[string]any{"amount": int64(1)}}
		for format, want := range map[int]bool{1: false, 2: false, 3: true} {
			s, err := SchemaOf(ctx, format)
			if err != nil {
				t.Fatal(err)
			}
			if _, ok := s.Downgrade(c); ok != want {
				t.Errorf("%s at format %d: served %v, want %v", entity, format, ok, want)
			}
		}
	}
}

// TestAnEdgesGiftCardEventCarriesTheCodeMasked: webhooks and automations
// get a gift card event's data, so an edge's event must carry the card's
// code masked, and a redeemed event be about a card a payment was
// redeemed from; the refused event's listing masks the code as well.
func TestAnEdgesGiftCardEventCarriesTheCodeMasked(t *testing.T) {
	edge, hub, w := edgeAndHub(t)
	ship(t, hub, edge)
	card, err := NewGiftCardService(edge.db).IssueGiftCard(w.ctx, &kassa.GiftCardIssue{InitialAmount: 1000})
	if err != nil {
		t.Fatal(err)
	}
	push(t, edge, hub, w)
	from := EdgeScope{OrgID: w.org, LocationID: w.loc, NodeID: edge.db.NodeID}
	now := fmtTime(hub.db.Now())
	event := func(typ, code string) change.Change {
		id := edge.db.NewID()
		data := fmt.Sprintf(`{"id":%q,"currency":%q,"initial_amount":1000,"balance":1000,"code":%q}`, card.ID, card.Currency, code)
		return change.Change{ID: edge.db.NewID(), OrgID: w.org, LocationID: w.loc, Entity: "event", EntityID: id, Op: change.OpInsert,
			Fields: map[string]any{"id": id, "org_id": w.org, "location_id": w.loc, "type": typ, "data": data,
				"occurred_at": now, "created_at": now, "updated_at": now},
			HLC: edge.db.Clock.Now(), Origin: edge.db.NodeID}
	}
	masked := kassa.MaskedGiftCardCode(card.Code)
	for _, tc := range []struct {
		name, reason string
		c            change.Change
	}{
		{"issued, with the full code", RefusedValue, event(kassa.EventGiftCardIssued, card.Code)},
		{"redeemed, of a card never redeemed", RefusedReference, event(kassa.EventGiftCardRedeemed, masked)},
		{"issued, masked", "", event(kassa.EventGiftCardIssued, masked)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, q, err := hub.db.Ingest(context.Background(), from, []change.Change{tc.c})
			var reason string
			hub.db.Reader.QueryRow(`SELECT reason FROM sync_quarantine WHERE id = ?`, tc.c.ID).Scan(&reason)
			if err != nil || reason != tc.reason || (q == 1) != (tc.reason != "") {
				t.Fatalf("ingest: %v, %d quarantined as %q; want %q", err, q, reason, tc.reason)
			}
		})
	}
	var listed string
	if err := hub.db.Reader.QueryRow(`SELECT remote FROM sync_conflicts WHERE kind = 'quarantined' AND entity = 'event'`).Scan(&listed); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(listed, card.Code) || !strings.Contains(listed, card.Code[len(card.Code)-4:]) {
		t.Fatalf("the refused event's listing shows the full code: %s", listed)
	}
}

// hubHolds authorizes an edge's gift card payments at the hub's store, as
// the hub's link does for the edge from.
type hubHolds struct {
	hub  *DB
	from EdgeScope
}

func (h hubHolds) Authorize(ctx context.Context, g *kassa.GiftCardHold) (bool, error) {
	return true, h.hub.HoldGiftCard(ctx, h.from, g)
}

func (h hubHolds) Release(ctx context.Context, paymentID string) {
	h.hub.ReleaseGiftCardHold(ctx, h.from, paymentID)
}

// namesCode reports whether err is a 422 naming gift_card_code.
func namesCode(err error) bool {
	var ke *kassa.Error
	return errors.As(err, &ke) && ke.Kind == kassa.EInvalid && len(ke.Fields) == 1 && ke.Fields[0].Field == "gift_card_code"
}

// TestTheHubHoldsGiftCardPaymentsPerCardInTheEdgesOrg: the hub holds a
// store's gift card payment only on a card of the store's own org, only
// while the card's balance less the holds outstanding covers it, and at
// most kassa.MaxGiftCardHolds at once; a hub-local payment respects the
// holds; a released hold frees its amount, and so does the payment's
// redeem entry when it arrives (the balance then has it). Another
// location cannot release a store's hold.
func TestTheHubHoldsGiftCardPaymentsPerCardInTheEdgesOrg(t *testing.T) {
	edge, hub, w := edgeAndHub(t)
	ctx := context.Background()
	if _, err := NewSettingsService(hub.db).SetPaymentMethods(w.ctx, []kassa.PaymentMethodConfig{{Method: kassa.PaymentGiftCard, Enabled: true}}); err != nil {
		t.Fatal(err)
	}
	card, err := NewGiftCardService(hub.db).IssueGiftCard(w.ctx, &kassa.GiftCardIssue{InitialAmount: 1000})
	if err != nil {
		t.Fatal(err)
	}
	victim := mustVictim(t, hub)
	theirs, err := NewGiftCardService(hub.db).IssueGiftCard(victim.ctx, &kassa.GiftCardIssue{InitialAmount: 1000})
	if err != nil {
		t.Fatal(err)
	}
	ship(t, hub, edge)
	from := EdgeScope{OrgID: w.org, LocationID: w.loc, NodeID: edge.db.NodeID}
	hold := func(code string, amount int64) (string, error) {
		id := hub.db.NewID()
		return id, hub.db.HoldGiftCard(ctx, from, &kassa.GiftCardHold{PaymentID: id, Code: code, Amount: amount, Currency: card.Currency})
	}
	holds := func() (n int) {
		hub.db.Reader.QueryRowContext(ctx, `SELECT count(*) FROM gift_card_holds`).Scan(&n)
		return n
	}
	if _, err := hold(theirs.Code, 100); !namesCode(err) || holds() != 0 {
		t.Fatalf("another org's card: %v, %d holds; want a 422 naming gift_card_code and none", err, holds())
	}
	first, err := hold(card.Code, 700)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := hold(card.Code, 400); !namesCode(err) {
		t.Fatalf("400 more of 1000 with 700 held: %v", err)
	}
	if _, err := hold(card.Code, 300); err != nil {
		t.Fatalf("the last 300: %v", err)
	}
	pay := NewPaymentService(hub.db, map[kassa.PaymentMethod]kassa.Processor{kassa.PaymentGiftCard: processor.GiftCard{}})
	local, err := hub.orders.CreateOrder(w.ctx, &kassa.OrderCreate{LocationID: w.loc, LineItems: []kassa.OrderLineInput{{ProductID: w.p1, Quantity: 1}}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := pay.Initiate(w.ctx, &kassa.PaymentInitiate{OrderID: local.ID, Amount: 100, Method: kassa.PaymentGiftCard, GiftCardCode: card.Code}); !namesCode(err) {
		t.Fatalf("a hub-local payment of a card all held: %v", err)
	}
	other := from
	other.LocationID = victim.loc
	if err := hub.db.ReleaseGiftCardHold(ctx, other, first); err != nil || holds() != 2 {
		t.Fatalf("another location released a store's hold: %v, %d holds", err, holds())
	}
	if err := hub.db.ReleaseGiftCardHold(ctx, from, first); err != nil {
		t.Fatal(err)
	}
	// The edge takes the 700 released, authorized by the hub; its redeem
	// entry arriving there frees the hold, and the balance has the 700.
	edgePay := NewPaymentService(edge.db, map[kassa.PaymentMethod]kassa.Processor{kassa.PaymentGiftCard: processor.GiftCard{}})
	edgePay.GiftCards = hubHolds{hub: hub.db, from: from}
	o, err := edge.orders.CreateOrder(w.ctx, &kassa.OrderCreate{LocationID: w.loc, LineItems: []kassa.OrderLineInput{{ProductID: w.p1, Quantity: 2}}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := edgePay.Initiate(w.ctx, &kassa.PaymentInitiate{OrderID: o.ID, Amount: 700, Method: kassa.PaymentGiftCard, GiftCardCode: card.Code}); err != nil {
		t.Fatalf("the edge's authorized payment: %v", err)
	}
	push(t, edge, hub, w)
	if _, err := hold(card.Code, 1); !namesCode(err) {
		t.Fatalf("a hold beyond balance 300 less 300 held: %v", err)
	}
	if g, _ := NewGiftCardService(hub.db).FindGiftCardByID(w.ctx, card.ID); g.Balance != 300 {
		t.Fatalf("the hub's balance: %d, want 300", g.Balance)
	}
	// At most kassa.MaxGiftCardHolds outstanding holds of one card.
	small, err := NewGiftCardService(hub.db).IssueGiftCard(w.ctx, &kassa.GiftCardIssue{InitialAmount: 100})
	if err != nil {
		t.Fatal(err)
	}
	for i := range kassa.MaxGiftCardHolds {
		if _, err := hold(small.Code, 1); err != nil {
			t.Fatalf("hold %d: %v", i, err)
		}
	}
	if _, err := hold(small.Code, 1); !namesCode(err) {
		t.Fatalf("hold %d of a card: %v", kassa.MaxGiftCardHolds+1, err)
	}
}

// TestTheHubAdmitsGiftCardLinesOnlyAsTheTillWritesThem: a cashier at an
// edge sells a card and reloads another as order lines, completes the
// sales and refunds the reload: every record is admitted and the hub's
// cards hold what the edge's do. Forged records are refused, each with its
// reason: a card activated or credited before its sale completed, a
// credit of another amount or a second one, an issue line of a card that
// is not pending, a takeback no refund covers.
func TestTheHubAdmitsGiftCardLinesOnlyAsTheTillWritesThem(t *testing.T) {
	edge, hub, w := edgeAndHub(t)
	ctx := context.Background()
	if _, err := NewSettingsService(hub.db).SetPaymentMethods(w.ctx, []kassa.PaymentMethodConfig{{Method: kassa.PaymentCash, Enabled: true}}); err != nil {
		t.Fatal(err)
	}
	cashier := mustCashier(t, hub, w)
	ship(t, hub, edge)
	till := kassa.WithActor(ctx, &kassa.Actor{OrgID: w.org, UserID: cashier.ID, Role: kassa.RoleCashier, Scopes: kassa.RoleScopes(kassa.RoleCashier)})
	pay := NewPaymentService(edge.db, map[kassa.PaymentMethod]kassa.Processor{kassa.PaymentCash: processor.Cash{}})
	orders := NewOrderService(edge.db, pay)
	reloaded, err := NewGiftCardService(edge.db).IssueGiftCard(w.ctx, &kassa.GiftCardIssue{InitialAmount: 1000})
	if err != nil {
		t.Fatal(err)
	}
	sell := func(lines ...kassa.GiftCardLineInput) *kassa.Order {
		t.Helper()
		o, err := orders.CreateOrder(till, &kassa.OrderCreate{LocationID: w.loc, GiftCards: lines,
			LineItems: []kassa.OrderLineInput{{ProductID: w.p1, Quantity: 1}}})
		if err != nil {
			t.Fatal(err)
		}
		return o
	}
	complete := func(o *kassa.Order) {
		t.Helper()
		if _, err := pay.Initiate(till, &kassa.PaymentInitiate{OrderID: o.ID, Amount: o.Total, Method: kassa.PaymentCash}); err != nil {
			t.Fatal(err)
		}
		if _, err := orders.CompleteOrder(till, o.ID); err != nil {
			t.Fatal(err)
		}
	}
	sold := sell(kassa.GiftCardLineInput{Type: kassa.GiftCardLineIssue, Amount: 2500},
		kassa.GiftCardLineInput{Type: kassa.GiftCardLineReload, Amount: 700, Code: &reloaded.Code})
	open := sell(kassa.GiftCardLineInput{Type: kassa.GiftCardLineIssue, Amount: 900}) // never completed
	complete(sold)
	done, err := orders.RefundOrder(till, sold.ID, &kassa.RefundRequest{GiftCardLineIDs: []string{sold.GiftCards[1].ID}})
	if err != nil {
		t.Fatal(err)
	}
	push(t, edge, hub, w)
	for _, id := range []string{sold.GiftCards[0].GiftCardID, reloaded.ID, open.GiftCards[0].GiftCardID} {
		e, _ := NewGiftCardService(edge.db).FindGiftCardByID(w.ctx, id)
		h, _ := NewGiftCardService(hub.db).FindGiftCardByID(w.ctx, id)
		if e.Balance != h.Balance || e.Status != h.Status {
			t.Fatalf("card %s: edge %d %s, hub %d %s", id, e.Balance, e.Status, h.Balance, h.Status)
		}
	}
	if got, _ := NewGiftCardService(hub.db).FindGiftCardByID(w.ctx, reloaded.ID); got.Balance != 1000 || done.RefundedTotal != 700 {
		t.Fatalf("the reloaded card holds %d at the hub after its reload was refunded (refunded %d); want 1000 and 700", got.Balance, done.RefundedTotal)
	}
	if got, _ := NewGiftCardService(hub.db).FindGiftCardByID(w.ctx, sold.GiftCards[0].GiftCardID); got.Balance != 2500 || got.Status != kassa.GiftCardActive {
		t.Fatalf("the card sold at the edge at the hub: %+v", got)
	}

	from := EdgeScope{OrgID: w.org, LocationID: w.loc, NodeID: edge.db.NodeID}
	now := fmtTime(hub.db.Now())
	rec := func(entity, id string, op change.Op, f map[string]any) change.Change {
		if op == change.OpInsert {
			f["created_at"], f["updated_at"] = now, now
		}
		return change.Change{ID: hub.db.NewID(), OrgID: w.org, LocationID: w.loc, Entity: entity, EntityID: id, Op: op,
			Fields: f, HLC: hub.db.Clock.Now(), Origin: from.NodeID, Actor: cashier.ID}
	}
	entry := func(typ string, amount int64, line kassa.GiftCardLine, orderID string, extra ...string) change.Change {
		f := map[string]any{"gift_card_id": line.GiftCardID, "type": typ, "amount": amount, "order_id": orderID, "line_id": line.ID}
		if len(extra) > 0 {
			f["refund_id"] = extra[0]
		}
		return rec("gift_card_transaction", hub.db.NewID(), change.OpInsert, f)
	}
	pending := open.GiftCards[0]
	for _, tc := range []struct {
		name, reason string
		c            change.Change
	}{
		{"a card activated before its sale completed", RefusedActor, rec("gift_card", pending.GiftCardID, change.OpUpdate, map[string]any{"status": "active"})},
		{"a card credited before its sale completed", RefusedValue, entry("issue", 900, pending, open.ID)},
		{"a reload credited twice", RefusedValue, entry("reload", 700, sold.GiftCards[1], sold.ID)},
		{"a credit of another amount", RefusedValue, entry("issue", 9000, sold.GiftCards[0], sold.ID)},
		{"a takeback no refund covers", RefusedReference, entry("takeback", -100, sold.GiftCards[0], sold.ID, hub.db.NewID())},
		{"an issue line of an active card", RefusedValue, rec("gift_card_line", hub.db.NewID(), change.OpInsert, map[string]any{"order_id": open.ID,
			"position": 1, "gift_card_id": reloaded.ID, "type": "issue", "amount": 1000})},
		{"a pending card disabled by a cashier", RefusedActor, rec("gift_card", pending.GiftCardID, change.OpUpdate, map[string]any{"status": "disabled"})},
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
	if got, _ := NewGiftCardService(hub.db).FindGiftCardByID(w.ctx, pending.GiftCardID); got.Status != kassa.GiftCardPending || got.Balance != 0 {
		t.Fatalf("forged records moved the pending card: %+v", got)
	}
}
