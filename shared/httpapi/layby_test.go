package httpapi_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"kassa.dev/shared/kassa"
	"kassa.dev/shared/node"
	"kassa.dev/shared/processor"
)

// Lay-bys through HTTP (docs/laybys.md): opened with a deposit, the goods
// reserved at the store, paid by instalments of any tender, completed by
// the one that pays in full, cancelled by the customer (the org's charge
// kept) or the store (nothing kept), expired by the node's job. Bad bodies
// are 422 naming the field and store nothing.

// laybyFixture is an ordFixture with a customer and a product in stock at
// store A, the org's termination charge set to charge.
type laybyFixture struct {
	*ordFixture
	customer, product string
}

func newLaybyFixture(t *testing.T, tn *testNode, charge int64) *laybyFixture {
	f := &laybyFixture{ordFixture: ordFixtureOn(t, tn)}
	f.must(f.do("PUT", "/payments/methods", "", map[string]any{"methods": []any{map[string]any{"method": "cash", "enabled": true},
		map[string]any{"method": "card", "enabled": true}, map[string]any{"method": "gift_card", "enabled": true}}}), 200)
	f.must(f.do("PATCH", "/settings", "", map[string]any{"layby_termination_charge": charge}), 200)
	f.customer = f.create("/customers", map[string]any{"first_name": "Lee", "email": "lee@layby.test"})
	f.product = f.ordFixture.product("Pram", "LAY-PRAM", 25000)
	f.must(f.do("POST", "/inventory/stock/adjust", "", map[string]any{"location_id": f.locA, "product_id": f.product,
		"reason": "received", "quantity": 5}), 200)
	return f
}

// open opens a lay-by of qty prams at store A with a cash deposit.
func (f *laybyFixture) open(qty, deposit int64) map[string]any {
	f.t.Helper()
	return f.must(f.do("POST", "/laybys", f.cashier, f.body(qty, map[string]any{"method": "cash", "amount": deposit})), 201).Data()
}

func (f *laybyFixture) body(qty int64, deposit map[string]any) map[string]any {
	return map[string]any{"location_id": f.locA, "customer_id": f.customer,
		"line_items": []any{map[string]any{"product_id": f.product, "quantity": qty}}, "deposit": deposit}
}

// pay takes an instalment and requires status.
func (f *laybyFixture) pay(id string, body map[string]any, status int) *resp {
	f.t.Helper()
	r := f.do("POST", "/laybys/"+id+"/payments", f.cashier, body)
	if status != 0 {
		f.must(r, status)
	}
	return r
}

// stock returns the pram's on-hand and reserved units at store A.
func (f *laybyFixture) stock() (onHand, reserved int64) {
	f.t.Helper()
	l := f.must(f.do("GET", fmt.Sprintf("/inventory/stock?location_id=%s&product_id=%s", f.locA, f.product), "", nil), 200).List()
	m := l[0].(map[string]any)
	return ordNum(m["on_hand"]), ordNum(m["reserved"])
}

func TestALaybysWholeLifeThroughTheAPIAtHubAndEdge(t *testing.T) {
	for _, kind := range []string{kassa.NodeHub, kassa.NodeEdge} {
		t.Run(kind, func(t *testing.T) {
			f := newLaybyFixture(t, MustStartNode(t, kind, nil), 3000)
			events := ordEvents(t, f.tn, "layby.")
			card := f.must(f.do("POST", "/gift-cards", "", map[string]any{"initial_amount": 10000}), 201).Data()
			l := f.open(2, 5000)
			id := l["id"].(string)
			ordWant(t, l, map[string]any{"status": "open", "total": 50000.0, "paid": 5000.0, "balance": 45000.0, "customer_id": f.customer,
				"location_id": f.locA, "termination_charge": 0.0})
			if created := ordNext(t, events, kassa.EventLaybyCreated); created["id"] != id || ordNum(created["paid"]) != 5000 {
				t.Fatalf("layby.created: %v", created)
			}
			if h, r := f.stock(); h != 3 || r != 2 {
				t.Fatalf("after opening: on hand %d, reserved %d; want 3 and 2", h, r)
			}
			// Instalments by card and gift card; one over the balance is refused.
			f.pay(id, map[string]any{"method": "card", "amount": 20000, "card_number": processor.CardApprove}, 200)
			ordNext(t, events, kassa.EventLaybyPaymentReceived)
			f.pay(id, map[string]any{"method": "gift_card", "amount": 10000, "gift_card_code": card["code"]}, 200)
			got := ordNext(t, events, kassa.EventLaybyPaymentReceived)
			if ordNum(got["balance"]) != 15000 || len(got["payments"].([]any)) != 3 {
				t.Fatalf("layby.payment_received after three instalments: %v", got)
			}
			before := f.tn.outboxLen()
			f.refused(t, f.pay(id, map[string]any{"method": "cash", "amount": 15001}, 0), 422, "validation", "amount", before)
			f.refused(t, f.pay(id, map[string]any{"method": "card", "amount": 100, "card_number": processor.CardDecline}, 0), 422, "validation", "card_number", before)
			f.refused(t, f.do("POST", "/laybys/"+id+"/complete", f.cashier, nil), 409, "conflict", "", before)
			if c := f.must(f.do("GET", "/gift-cards/"+card["id"].(string), "", nil), 200).Data(); ordNum(c["balance"]) != 0 {
				t.Fatalf("the gift card after paying 10000: %v", c)
			}
			// The instalment that pays the balance completes it: the goods
			// leave. Taken at a till, its cash is in the till's drawer.
			till := f.create("/registers", map[string]any{"location_id": f.locA, "name": "Lay-by desk"})
			drawer := f.create("/drawers", map[string]any{"register_id": till, "float": map[string]any{"amount": 1000}})
			done := f.pay(id, map[string]any{"method": "cash", "amount": 15000, "register_id": till}, 200).Data()
			if x := f.must(f.do("GET", "/drawers/"+drawer+"/x-report", "", nil), 200).Data(); ordNum(x["expected"]) != 16000 || ordNum(x["cash_sales"]) != 15000 {
				t.Fatalf("the drawer after a 15000 cash instalment on a 1000 float: %v", x)
			}
			ordWant(t, done, map[string]any{"status": "completed", "balance": 0.0, "paid": 50000.0})
			ordNext(t, events, kassa.EventLaybyPaymentReceived)
			ordNext(t, events, kassa.EventLaybyCompleted)
			if h, r := f.stock(); h != 3 || r != 0 {
				t.Fatalf("after collection: on hand %d, reserved %d; want 3 and 0", h, r)
			}
			// The customer cancels: everything paid back less the charge;
			// the store cancels: everything back. The goods go back on sale.
			a := f.open(1, 2500)["id"].(string)
			f.pay(a, map[string]any{"method": "cash", "amount": 2500}, 200)
			c := f.must(f.do("POST", "/laybys/"+a+"/cancel", f.cashier, map[string]any{"by": "customer"}), 200).Data()
			ordWant(t, c, map[string]any{"status": "cancelled", "cancelled_by": "customer", "termination_charge": 3000.0, "refunded": 2000.0})
			ordNext(t, events, kassa.EventLaybyCreated)
			ordNext(t, events, kassa.EventLaybyPaymentReceived)
			if got := ordNext(t, events, kassa.EventLaybyCancelled); got["id"] != a || got["status"] != "cancelled" {
				t.Fatalf("layby.cancelled: %v", got)
			}
			b := f.open(1, 2500)["id"].(string)
			c = f.must(f.do("POST", "/laybys/"+b+"/cancel", f.cashier, map[string]any{"by": "store", "refund_method": "card"}), 200).Data()
			ordWant(t, c, map[string]any{"status": "cancelled", "termination_charge": 0.0, "refunded": 2500.0})
			if h, r := f.stock(); h != 3 || r != 0 {
				t.Fatalf("after two cancellations: on hand %d, reserved %d; want 3 and 0", h, r)
			}
			// Lists filter by status, customer and store.
			for q, n := range map[string]int{"": 3, "?status=completed": 1, "?status=cancelled": 2, "?customer_id=" + f.customer: 3,
				"?location_id=" + f.locB: 0} {
				if got := len(f.must(f.do("GET", "/laybys"+q, f.cashier, nil), 200).List()); got != n {
					t.Errorf("GET /laybys%s: %d lay-bys, want %d", q, got, n)
				}
			}
		})
	}
}

func TestALaybyBodyIsRefusedNamingTheFieldAndStoresNothing(t *testing.T) {
	f := newLaybyFixture(t, MustStartNode(t, kassa.NodeEdge, nil), 0)
	cash := func(amount int64) map[string]any { return map[string]any{"method": "cash", "amount": amount} }
	for _, sc := range []struct {
		name  string
		body  map[string]any
		field string
	}{
		{"no customer", map[string]any{"location_id": f.locA, "line_items": []any{map[string]any{"product_id": f.product, "quantity": 1}}, "deposit": cash(5000)}, "customer_id"},
		{"no goods", map[string]any{"location_id": f.locA, "customer_id": f.customer, "line_items": []any{}, "deposit": cash(5000)}, "line_items"},
		{"a deposit below 10 %", f.body(1, cash(2499)), "deposit.amount"},
		{"a deposit of the whole total", f.body(1, cash(25000)), "deposit.amount"},
		{"an unknown tender", f.body(1, map[string]any{"method": "cheque", "amount": 5000}), "deposit.method"},
		{"a card without its number", f.body(1, map[string]any{"method": "card", "amount": 5000}), "deposit.card_number"},
		{"an unknown product", map[string]any{"location_id": f.locA, "customer_id": f.customer,
			"line_items": []any{map[string]any{"product_id": ordNoSuchID, "quantity": 1}}, "deposit": cash(5000)}, "line_items[0].product_id"},
		{"an unknown customer", map[string]any{"location_id": f.locA, "customer_id": ordNoSuchID,
			"line_items": []any{map[string]any{"product_id": f.product, "quantity": 1}}, "deposit": cash(5000)}, "customer_id"},
	} {
		t.Run(sc.name, func(t *testing.T) {
			before := f.tn.outboxLen()
			f.refused(t, f.do("POST", "/laybys", f.cashier, sc.body), 422, "validation", sc.field, before)
		})
	}
	before := f.tn.outboxLen()
	f.refused(t, f.do("POST", "/laybys/"+ordNoSuchID+"/payments", f.cashier, cash(100)), 404, "not-found", "", before)
	id := f.open(1, 5000)["id"].(string)
	before = f.tn.outboxLen()
	f.refused(t, f.do("POST", "/laybys/"+id+"/cancel", f.cashier, map[string]any{"by": "nobody"}), 422, "validation", "by", before)
	// Another org never sees it.
	other := f.tn.MustOrg("Other Cafe")
	if r := f.tn.Do("GET", "/api/v1/laybys/"+id, other.Owner, nil); r.Status != 404 {
		t.Fatalf("another org reads the lay-by: %d", r.Status)
	}
	if l := f.tn.Do("GET", "/api/v1/laybys", other.Owner, nil); len(l.List()) != 0 {
		t.Fatalf("another org lists %d lay-bys", len(l.List()))
	}
}

// TestALaybyAtAnOfflineEdgeTakesCashAndExpiresByItsJob: a store without
// an uplink opens a lay-by and takes cash instalments; a card instalment
// is 503 with Retry-After (a lay-by's card is not stored to forward).
// Past the org's term, the node's expiry job expires it (the goods stay
// set aside, the charge fixed) and a cancel pays the refund out.
func TestALaybyAtAnOfflineEdgeTakesCashAndExpiresByItsJob(t *testing.T) {
	tn := MustStartNode(t, kassa.NodeEdge, func(c *node.Config) { c.Offline = func() bool { return true } })
	f := newLaybyFixture(t, tn, 1000)
	f.must(f.do("PATCH", "/settings", "", map[string]any{"layby_term_days": 7}), 200)
	id := f.open(1, 5000)["id"].(string)
	f.pay(id, map[string]any{"method": "cash", "amount": 1000}, 200)
	before := f.tn.outboxLen()
	r := f.pay(id, map[string]any{"method": "card", "amount": 1000, "card_number": processor.CardApprove}, 0)
	f.refused(t, r, 503, "unavailable", "", before)
	if r.Header.Get("Retry-After") == "" {
		t.Fatalf("a 503 without Retry-After")
	}
	if n, err := tn.N.ExpireLaybys(context.Background()); err != nil || n != 0 {
		t.Fatalf("expired %d before the term: %v", n, err)
	}
	tn.Clock.Advance(8 * 24 * time.Hour)
	if n, err := tn.N.ExpireLaybys(context.Background()); err != nil || n != 1 {
		t.Fatalf("expired %d past the term: %v", n, err)
	}
	f.org.Owner = tn.MustLogin(f.org.OwnerEmail, testPassword)["accessToken"].(string) // a week later
	f.cashier = tn.MustLogin("c@order.test", testPassword)["accessToken"].(string)
	l := f.must(f.do("GET", "/laybys/"+id, "", nil), 200).Data()
	ordWant(t, l, map[string]any{"status": "expired", "cancelled_by": "store", "termination_charge": 1000.0, "refunded": 0.0})
	if h, r := f.stock(); h != 4 || r != 1 {
		t.Fatalf("expired, not yet refunded: on hand %d, reserved %d; want 4 and 1", h, r)
	}
	before = f.tn.outboxLen()
	f.refused(t, f.pay(id, map[string]any{"method": "cash", "amount": 100}, 0), 409, "conflict", "", before)
	l = f.must(f.do("POST", "/laybys/"+id+"/cancel", f.cashier, map[string]any{"by": "store"}), 200).Data()
	ordWant(t, l, map[string]any{"status": "cancelled", "cancelled_by": "store", "termination_charge": 1000.0, "refunded": 5000.0})
	if h, r := f.stock(); h != 5 || r != 0 {
		t.Fatalf("refunded: on hand %d, reserved %d; want 5 and 0", h, r)
	}
}
