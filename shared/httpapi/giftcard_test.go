package httpapi_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"kassa.dev/shared/kassa"
)

// Gift cards through HTTP (docs/giftcards.md): issued with a generated
// code, looked up by it, paid with as part of an order, refunded and
// voided back onto the card; every refused payment is a 422 naming
// gift_card_code that stores nothing.

// giftFixture is an ordFixture whose org accepts gift cards.
type giftFixture struct {
	*ordFixture
	product string
}

func newGiftFixture(t *testing.T) *giftFixture {
	f := &giftFixture{ordFixture: newOrdFixture(t, nil)}
	f.must(f.do("PUT", "/payments/methods", "", map[string]any{"methods": []any{map[string]any{"method": "gift_card", "enabled": true}}}), 200)
	f.product = f.ordFixture.product("Latte", "GIFT-LAT", 1000)
	return f
}

// issue issues a card of amount (and the extra fields) and returns it.
func (f *giftFixture) issue(amount int64, extra map[string]any) map[string]any {
	f.t.Helper()
	body := map[string]any{"initial_amount": amount}
	for k, v := range extra {
		body[k] = v
	}
	return f.must(f.do("POST", "/gift-cards", "", body), 201).Data()
}

// card reads a card by id.
func (f *giftFixture) card(id string) map[string]any {
	f.t.Helper()
	return f.must(f.do("GET", "/gift-cards/"+id, "", nil), 200).Data()
}

// ledger lists a card's transactions as "type amount" lines.
func (f *giftFixture) ledger(id string) []string {
	f.t.Helper()
	var out []string
	for _, it := range f.must(f.do("GET", "/gift-cards/"+id+"/transactions", "", nil), 200).List() {
		m := it.(map[string]any)
		out = append(out, fmt.Sprintf("%s %d", m["type"], ordNum(m["amount"])))
	}
	return out
}

// payGift sends a gift card payment for order id.
func (f *giftFixture) payGift(orderID string, amount int64, code string, headers ...string) *resp {
	f.t.Helper()
	body := map[string]any{"order_id": orderID, "amount": amount, "method": "gift_card", "gift_card_code": code}
	return f.tn.Do("POST", "/api/v1/payments/initiate", f.cashier, body, headers...)
}

func TestGiftCardIssueValidatesAndStoresNothingWhenRefused(t *testing.T) {
	f := newGiftFixture(t)
	past := time.Now().Add(-time.Hour).UTC().Format(time.RFC3339)
	for _, sc := range []struct {
		name  string
		body  map[string]any
		field string
	}{
		{"no amount", map[string]any{}, "initial_amount"},
		{"a negative amount", map[string]any{"initial_amount": -5}, "initial_amount"},
		{"beyond the money limit", map[string]any{"initial_amount": kassa.MaxMoney + 1}, "initial_amount"},
		{"a bad currency", map[string]any{"initial_amount": 100, "currency": "dollars"}, "currency"},
		{"an expiry in the past", map[string]any{"initial_amount": 100, "expires_at": past}, "expires_at"},
		{"an unknown customer", map[string]any{"initial_amount": 100, "customer_id": ordNoSuchID}, "customer_id"},
	} {
		t.Run(sc.name, func(t *testing.T) {
			before := f.tn.outboxLen()
			f.refused(t, f.do("POST", "/gift-cards", "", sc.body), 422, "validation", sc.field, before)
		})
	}
	// A card is stored value made without a sale: a cashier may neither
	// issue nor disable one (the till sells and takes them), a manager may.
	t.Run("a cashier issues a card", func(t *testing.T) {
		before := f.tn.outboxLen()
		f.refused(t, f.do("POST", "/gift-cards", f.cashier, map[string]any{"initial_amount": 100}), 403, "forbidden", "", before)
	})
	if n := len(f.must(f.do("GET", "/gift-cards", "", nil), 200).List()); n != 0 {
		t.Fatalf("%d cards after refusals only", n)
	}
	card := f.issue(100, nil)
	before := f.tn.outboxLen()
	f.refused(t, f.do("POST", "/gift-cards/"+card["id"].(string)+"/disable", f.cashier, nil), 403, "forbidden", "", before)
	if got := f.card(card["id"].(string)); got["status"] != "active" {
		t.Fatalf("a cashier's refused disable changed the card: %v", got)
	}
}

func TestGiftCardPaysPartOfAnOrderAndTakesItsRefundBack(t *testing.T) {
	f := newGiftFixture(t)
	events := ordEvents(t, f.tn, "gift_card.")
	g := f.issue(5000, nil)
	id, code := g["id"].(string), g["code"].(string)
	ordWant(t, g, map[string]any{"balance": 5000.0, "initial_amount": 5000.0, "status": "active", "currency": "AUD"})
	if norm, ok := kassa.NormalizeGiftCardCode(code); !ok || norm != code {
		t.Fatalf("code %q is not %d characters of the alphabet", code, kassa.GiftCardCodeLen)
	}
	issued := ordNext(t, events, kassa.EventGiftCardIssued)
	if issued["id"] != id || issued["code"] == code || !strings.HasSuffix(issued["code"].(string), code[12:]) {
		t.Fatalf("gift_card.issued carries %v: want the card, its code masked", issued)
	}

	// The lookup reads a code as a person types it.
	typed := strings.ToLower(code[:4] + "-" + code[4:8] + " " + code[8:])
	looked := f.must(f.do("GET", "/gift-cards/lookup?code="+typed, f.cashier, nil), 200).Data()
	if looked["id"] != id || looked["code"] != code {
		t.Fatalf("lookup: %v", looked)
	}
	mustProblem(t, f.do("GET", "/gift-cards/lookup?code=2345678923456789", "", nil), 404, "not-found")

	// 2 lattes: 1200 on the card, the rest in cash.
	o := f.simpleOrder(f.locA, f.product, 2)
	oid, total := o["id"].(string), ordNum(o["total"])
	pay := f.must(f.payGift(oid, 1200, code), 201).Data()
	ordWant(t, pay, map[string]any{"method": "gift_card", "status": "captured", "amount": 1200.0})
	redeemed := ordNext(t, events, kassa.EventGiftCardRedeemed)
	if redeemed["id"] != id || ordNum(redeemed["balance"]) != 3800 {
		t.Fatalf("gift_card.redeemed carries %v", redeemed)
	}
	f.payCash(oid, total-1200)
	ordWant(t, f.get(oid), map[string]any{"paid_total": float64(total)})
	ordWant(t, f.card(id), map[string]any{"balance": 3800.0})
	txns := f.must(f.do("GET", "/gift-cards/"+id+"/transactions", "", nil), 200).List()
	last := txns[len(txns)-1].(map[string]any)
	ordWant(t, last, map[string]any{"type": "redeem", "amount": -1200.0, "payment_id": pay["id"], "order_id": oid})

	// A full refund goes back through every payment: the card's part to the card.
	f.complete(oid)
	f.must(f.do("POST", "/orders/"+oid+"/refund", f.manager, nil), 200)
	ordWant(t, f.card(id), map[string]any{"balance": 5000.0})

	// A voided gift card payment returns to the card too.
	o2 := f.simpleOrder(f.locA, f.product, 1)
	p2 := f.must(f.payGift(o2["id"].(string), 700, code), 201).Data()
	ordWant(t, f.card(id), map[string]any{"balance": 4300.0})
	f.must(f.do("POST", "/payments/"+p2["id"].(string)+"/void", "", nil), 200)
	ordWant(t, f.card(id), map[string]any{"balance": 5000.0})
	got := strings.Join(f.ledger(id), ", ")
	if want := "issue 5000, redeem -1200, refund 1200, redeem -700, refund 700"; got != want {
		t.Fatalf("ledger %s, want %s", got, want)
	}
}

func TestGiftCardPaymentReplaysByIdempotencyKey(t *testing.T) {
	f := newGiftFixture(t)
	g := f.issue(1000, nil)
	o := f.simpleOrder(f.locA, f.product, 1)
	first := f.payGift(o["id"].(string), 600, g["code"].(string), "Idempotency-Key", "gift-pay-1")
	f.must(first, 201)
	before := f.tn.outboxLen()
	mustReplay(t, first, f.payGift(o["id"].(string), 600, g["code"].(string), "Idempotency-Key", "gift-pay-1"))
	if f.tn.outboxLen() != before {
		t.Fatal("the replay wrote change records")
	}
	ordWant(t, f.card(g["id"].(string)), map[string]any{"balance": 400.0})
	if got := strings.Join(f.ledger(g["id"].(string)), ", "); got != "issue 1000, redeem -600" {
		t.Fatalf("ledger %s", got)
	}
}

func TestGiftCardPaymentsRefusedStoreNothing(t *testing.T) {
	f := newGiftFixture(t)
	active := f.issue(1000, nil)["code"].(string)
	disabled := f.issue(1000, nil)
	f.must(f.do("POST", "/gift-cards/"+disabled["id"].(string)+"/disable", "", nil), 200)
	euro := f.issue(1000, map[string]any{"currency": "EUR"})["code"].(string)
	expiring := f.issue(1000, map[string]any{"expires_at": f.tn.Clock.Now().Add(time.Minute)})
	other := f.tn.MustOrg("Other Cafe")
	foreign := f.tn.Do("POST", "/api/v1/gift-cards", other.Owner, map[string]any{"initial_amount": 1000}).Data()["code"].(string)
	f.tn.Clock.Advance(2 * time.Minute)
	o := f.simpleOrder(f.locA, f.product, 2)
	oid := o["id"].(string)
	for _, sc := range []struct {
		name   string
		amount int64
		code   any
	}{
		{"no code", 500, nil},
		{"a malformed code", 500, "not-a-code"},
		{"an unknown code", 500, "2345678923456789"},
		{"another org's card", 500, foreign},
		{"a disabled card", 500, disabled["code"]},
		{"an expired card", 500, expiring["code"]},
		{"a card in another currency", 500, euro},
		{"more than the balance", 1001, active},
	} {
		t.Run(sc.name, func(t *testing.T) {
			body := map[string]any{"order_id": oid, "amount": sc.amount, "method": "gift_card"}
			if sc.code != nil {
				body["gift_card_code"] = sc.code
			}
			before := f.tn.outboxLen()
			f.refused(t, f.do("POST", "/payments/initiate", f.cashier, body), 422, "validation", "gift_card_code", before)
		})
	}
	// Another org's code is no card here, and its lookup is 404 too.
	mustProblem(t, f.do("GET", "/gift-cards/lookup?code="+foreign, "", nil), 404, "not-found")
	ordWant(t, f.get(oid), map[string]any{"paid_total": 0.0})
	if n := len(f.must(f.do("GET", "/payments?order_id="+oid, "", nil), 200).List()); n != 0 {
		t.Fatalf("%d payments stored by refused requests", n)
	}
	// The card that could not cover 1001 pays 1000.
	f.must(f.payGift(oid, 1000, active), 201)
	// A gift_card_code on another method is refused as well.
	before := f.tn.outboxLen()
	f.refused(t, f.do("POST", "/payments/initiate", "", map[string]any{"order_id": oid, "amount": 100, "method": "cash",
		"gift_card_code": active}), 422, "validation", "gift_card_code", before)
}

// A disabled card is re-enabled by a manager and pays again from the
// balance it kept; a cashier may not re-enable it, and another org's card
// is not found; neither changes anything.
func TestGiftCardReEnabledByAManagerPaysAgain(t *testing.T) {
	f := newGiftFixture(t)
	card := f.issue(1000, nil)
	id := card["id"].(string)
	f.must(f.do("POST", "/gift-cards/"+id+"/disable", "", nil), 200)
	other := f.tn.MustOrg("Other Cafe")
	before := f.tn.outboxLen()
	f.refused(t, f.do("POST", "/gift-cards/"+id+"/enable", f.cashier, nil), 403, "forbidden", "", before)
	f.refused(t, f.tn.Do("POST", "/api/v1/gift-cards/"+id+"/enable", other.Owner, nil), 404, "not-found", "", before)
	if got := f.card(id); got["status"] != "disabled" {
		t.Fatalf("a refused enable changed the card: %v", got)
	}
	ordWant(t, f.must(f.do("POST", "/gift-cards/"+id+"/enable", "", nil), 200).Data(), map[string]any{"status": "active", "balance": 1000.0})
	o := f.simpleOrder(f.locA, f.product, 1)
	f.must(f.payGift(o["id"].(string), 600, card["code"].(string)), 201)
	ordWant(t, f.card(id), map[string]any{"status": "active", "balance": 400.0})
}
