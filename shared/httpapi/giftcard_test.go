package httpapi_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"kassa.dev/shared/kassa"
	"kassa.dev/shared/node"
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

// Gift cards sold and reloaded as order lines (docs/giftcards.md, "Sold at
// the till"): the card activates when the order completes, a reload is
// credited then, both within gift_card_max_balance; a refund of a line
// takes back what is left on its card; the money stays out of sales and
// tax. At the hub, an edge and an edge cut off from the hub.

// Two codes the tests hand over as physical cards.
const (
	lineCodeA = "ABCD2345EFGH6789"
	lineCodeB = "ZZZZ2345EFGH6789"
)

// giftLineOrder takes an order of the cashier at store A: qty lattes and
// the gift card lines.
func (f *giftFixture) giftLineOrder(qty int64, lines ...map[string]any) *resp {
	f.t.Helper()
	items := []any{}
	if qty > 0 {
		items = append(items, map[string]any{"product_id": f.product, "quantity": qty})
	}
	gifts := make([]any, len(lines))
	for i, l := range lines {
		gifts[i] = l
	}
	return f.do("POST", "/orders", f.cashier, map[string]any{"location_id": f.locA, "line_items": items, "gift_cards": gifts})
}

// soldGiftLineOrder takes, pays in cash and completes such an order.
func (f *giftFixture) soldGiftLineOrder(qty int64, lines ...map[string]any) map[string]any {
	f.t.Helper()
	o := f.must(f.giftLineOrder(qty, lines...), 201).Data()
	f.payCash(o["id"].(string), ordNum(o["total"]))
	return f.complete(o["id"].(string))
}

// lookup reads a card by code as the cashier.
func (f *giftFixture) lookup(code string) map[string]any {
	f.t.Helper()
	return f.must(f.do("GET", "/gift-cards/lookup?code="+code, f.cashier, nil), 200).Data()
}

// salesAndTax are the day's sales and tax at store A, as the reports say.
func (f *giftFixture) salesAndTax() (sales, tax int64) {
	f.t.Helper()
	day := f.tn.Clock.Now().UTC().Format(time.DateOnly)
	q := "?group_by=none&date_from=" + day + "&date_to=" + day + "&location_id=" + f.locA
	for _, it := range f.must(f.do("GET", "/reports/sales"+q, "", nil), 200).List() {
		m := it.(map[string]any)
		sales += ordNum(m["sales"]) - ordNum(m["refunds"])
	}
	for _, it := range f.must(f.do("GET", "/reports/tax"+q, "", nil), 200).List() {
		tax += ordNum(it.(map[string]any)["tax"])
	}
	return sales, tax
}

func TestAGiftCardSoldAsALineActivatesOnCompletionReloadsAndRefunds(t *testing.T) {
	for _, kind := range []string{kassa.NodeHub, kassa.NodeEdge, "offline edge"} {
		t.Run(kind, func(t *testing.T) {
			var tn *testNode
			if kind == "offline edge" {
				tn = MustStartNode(t, kassa.NodeEdge, func(c *node.Config) { c.Offline = func() bool { return true } })
			} else {
				tn = MustStartNode(t, kind, nil)
			}
			f := &giftFixture{ordFixture: ordFixtureOn(t, tn)}
			f.must(f.do("PUT", "/payments/methods", "", map[string]any{"methods": []any{map[string]any{"method": "gift_card", "enabled": true}}}), 200)
			f.product = f.ordFixture.product("Latte", "GIFT-LAT", 1000)
			f.must(f.do("PATCH", "/settings", "", map[string]any{"gift_card_max_balance": 10000, "gift_card_offline_limit": 100000}), 200)
			baseSales, baseTax := f.salesAndTax()

			// A latte and a card of 50.00 sold by the cashier: the card is
			// in the total, untaxed, and pays nothing until the sale completes.
			o := f.must(f.giftLineOrder(1, map[string]any{"type": "issue", "amount": 5000, "code": strings.ToLower(lineCodeA)}), 201).Data()
			latte := f.must(f.do("POST", "/orders/quote", f.cashier, map[string]any{"location_id": f.locA,
				"line_items": []any{map[string]any{"product_id": f.product, "quantity": 1}}}), 200).Data()
			ordWant(t, o, map[string]any{"total": 6000.0, "gift_card_total": 5000.0, "tax_total": latte["tax_total"], "subtotal": 1000.0})
			line := o["gift_cards"].([]any)[0].(map[string]any)
			ordWant(t, line, map[string]any{"type": "issue", "amount": 5000.0, "code": kassa.MaskedGiftCardCode(lineCodeA), "refunded": false})
			card := f.lookup(lineCodeA)
			ordWant(t, card, map[string]any{"status": "pending", "balance": 0.0, "id": line["gift_card_id"]})
			other := f.simpleOrder(f.locA, f.product, 1)
			before := f.tn.outboxLen()
			f.refused(t, f.payGift(other["id"].(string), 100, lineCodeA), 422, "validation", "gift_card_code", before)
			f.refused(t, f.giftLineOrder(0, map[string]any{"type": "reload", "amount": 100, "code": lineCodeA}), 422, "validation", "gift_cards[0].code", before)

			f.payCash(o["id"].(string), 6000)
			f.complete(o["id"].(string))
			cardID := card["id"].(string)
			ordWant(t, f.card(cardID), map[string]any{"status": "active", "balance": 5000.0})

			// A reload through the register is credited when its order completes.
			r := f.must(f.giftLineOrder(0, map[string]any{"type": "reload", "amount": 3000, "code": lineCodeA}), 201).Data()
			ordWant(t, r, map[string]any{"total": 3000.0, "tax_total": 0.0, "gift_card_total": 3000.0})
			f.payCash(r["id"].(string), 3000)
			ordWant(t, f.card(cardID), map[string]any{"balance": 5000.0})
			f.complete(r["id"].(string))
			ordWant(t, f.card(cardID), map[string]any{"balance": 8000.0})

			// Over the cap, nothing is stored: 8000 + 2001 > 10000.
			before = f.tn.outboxLen()
			f.refused(t, f.giftLineOrder(0, map[string]any{"type": "reload", "amount": 2001, "code": lineCodeA}), 422, "validation", "gift_cards[0].amount", before)
			f.refused(t, f.giftLineOrder(0, map[string]any{"type": "issue", "amount": 10001}), 422, "validation", "gift_cards[0].amount", before)

			// The cards' money is not sales, nor taxed: the day shows the latte.
			if sales, tax := f.salesAndTax(); sales-baseSales != 1000 || tax-baseTax != ordNum(latte["tax_total"]) {
				t.Fatalf("sales %d and tax %d after a latte and 80.00 of gift cards, want 1000 and %d", sales-baseSales, tax-baseTax, ordNum(latte["tax_total"]))
			}

			// 60.00 spent, then the reload refunded: what is left (20.00) comes back, the card stays active.
			spend := f.simpleOrder(f.locA, f.product, 6)
			f.must(f.payGift(spend["id"].(string), 6000, lineCodeA), 201)
			f.complete(spend["id"].(string))
			rl := r["gift_cards"].([]any)[0].(map[string]any)["id"].(string)
			done := f.must(f.do("POST", "/orders/"+r["id"].(string)+"/refund", f.manager, map[string]any{"gift_card_line_ids": []string{rl}}), 200).Data()
			ordWant(t, done, map[string]any{"refunded_total": 2000.0, "status": "partially_refunded"})
			ordWant(t, done["gift_cards"].([]any)[0].(map[string]any), map[string]any{"refunded": true, "taken_back": 2000.0})
			ordWant(t, f.card(cardID), map[string]any{"status": "active", "balance": 0.0})
			if got := strings.Join(f.ledger(cardID), ", "); got != "issue 5000, reload 3000, redeem -6000, takeback -2000" {
				t.Fatalf("ledger %s", got)
			}
			// Nothing is left of the card sold on the first order: its line cannot be refunded.
			before = f.tn.outboxLen()
			f.refused(t, f.do("POST", "/orders/"+o["id"].(string)+"/refund", f.manager, map[string]any{"gift_card_line_ids": []string{line["id"].(string)}}),
				422, "validation", "gift_card_line_ids", before)

			// A card sold with a latte and refunded whole: the card is disabled, all comes back.
			s := f.soldGiftLineOrder(1, map[string]any{"type": "issue", "amount": 2500, "code": lineCodeB})
			back := f.must(f.do("POST", "/orders/"+s["id"].(string)+"/refund", f.manager, nil), 200).Data()
			ordWant(t, back, map[string]any{"refunded_total": 3500.0, "status": "refunded"})
			ordWant(t, f.lookup(lineCodeB), map[string]any{"status": "disabled", "balance": 0.0})
			if sales, _ := f.salesAndTax(); sales-baseSales != 7000 {
				t.Fatalf("net sales %d, want 7000 (seven lattes; the cards and their refunds are not sales)", sales-baseSales)
			}
		})
	}
}

func TestAGiftCardLineRefusedNamesTheFieldAndStoresNothing(t *testing.T) {
	f := newGiftFixture(t)
	disabled := f.issue(1000, nil)
	f.must(f.do("POST", "/gift-cards/"+disabled["id"].(string)+"/disable", "", nil), 200)
	taken := f.issue(1000, nil)["code"].(string)
	other := f.tn.MustOrg("Other Cafe")
	foreign := f.tn.Do("POST", "/api/v1/gift-cards", other.Owner, map[string]any{"initial_amount": 1000}).Data()["code"].(string)
	f.must(f.do("PATCH", "/settings", "", map[string]any{"gift_card_max_balance": 5000}), 200)
	for _, sc := range []struct {
		name  string
		line  map[string]any
		field string
	}{
		{"a zero amount", map[string]any{"type": "issue", "amount": 0}, "gift_cards[0].amount"},
		{"a negative amount", map[string]any{"type": "reload", "amount": -100, "code": taken}, "gift_cards[0].amount"},
		{"no type", map[string]any{"amount": 100}, "gift_cards[0].type"},
		{"a code that exists", map[string]any{"type": "issue", "amount": 100, "code": taken}, "gift_cards[0].code"},
		{"a malformed code", map[string]any{"type": "issue", "amount": 100, "code": "0000"}, "gift_cards[0].code"},
		{"a reload without a code", map[string]any{"type": "reload", "amount": 100}, "gift_cards[0].code"},
		{"a reload of a disabled card", map[string]any{"type": "reload", "amount": 100, "code": disabled["code"]}, "gift_cards[0].code"},
		{"a reload of another org's card", map[string]any{"type": "reload", "amount": 100, "code": foreign}, "gift_cards[0].code"},
		{"a reload over the cap", map[string]any{"type": "reload", "amount": 4001, "code": taken}, "gift_cards[0].amount"},
	} {
		t.Run(sc.name, func(t *testing.T) {
			before := f.tn.outboxLen()
			f.refused(t, f.giftLineOrder(1, sc.line), 422, "validation", sc.field, before)
		})
	}
	// The same new code twice on one order.
	before := f.tn.outboxLen()
	f.refused(t, f.giftLineOrder(0, map[string]any{"type": "issue", "amount": 100, "code": lineCodeA},
		map[string]any{"type": "issue", "amount": 100, "code": lineCodeA}), 422, "validation", "gift_cards[1].code", before)
	f.refused(t, f.do("PATCH", "/settings", "", map[string]any{"gift_card_max_balance": -1}), 422, "validation", "gift_card_max_balance", before)
	if n := len(f.must(f.do("GET", "/orders", "", nil), 200).List()); n != 0 {
		t.Fatalf("%d orders stored by refused requests", n)
	}
	if n := len(f.must(f.do("GET", "/gift-cards", "", nil), 200).List()); n != 2 {
		t.Fatalf("%d cards, want the 2 issued", n)
	}
}
