package httpapi_test

import (
	"testing"

	"kassa.dev/shared/kassa"
	"kassa.dev/shared/node"
)

// Returns, exchanges and store credit through HTTP (docs/returns.md), at
// the hub, an edge and an edge cut off from its hub.

var returnNodes = []struct {
	name  string
	node  string
	tweak func(*node.Config)
}{
	{"hub", kassa.NodeHub, nil},
	{"edge", kassa.NodeEdge, nil},
	{"offline edge", kassa.NodeEdge, func(c *node.Config) { c.Offline = func() bool { return true } }},
}

// retFixture is an ordFixture with a customer and a shirt (20.00) in
// stock at store A.
type retFixture struct {
	*ordFixture
	ann, shirt string
}

func newRetFixture(t *testing.T, tn *testNode) *retFixture {
	f := &retFixture{ordFixture: ordFixtureOn(t, tn)}
	f.ann = f.customer("Ann")
	f.shirt = f.product("Shirt", "RET-SHIRT", 2000)
	f.receive(f.locA, f.shirt, 10)
	return f
}

// sale sells qty shirts to Ann for cash and returns the completed order.
func (f *retFixture) sale(qty int64) map[string]any {
	f.t.Helper()
	o := f.order(map[string]any{"location_id": f.locA, "customer_id": f.ann, "line_items": []any{map[string]any{"product_id": f.shirt, "quantity": qty}}})
	f.payCash(o["id"].(string), ordNum(o["total"]))
	return f.complete(o["id"].(string))
}

// lineOf is the id of an order's first line.
func lineOf(o map[string]any) string {
	return o["line_items"].([]any)[0].(map[string]any)["id"].(string)
}

// credit is Ann's store credit balance.
func (f *retFixture) credit() int64 {
	f.t.Helper()
	return ordNum(f.must(f.do("GET", "/customers/"+f.ann+"/store-credit", f.cashier, nil), 200).Data()["balance"])
}

func (f *retFixture) giveBack(token string, body map[string]any) *resp {
	f.t.Helper()
	return f.do("POST", "/returns", token, body)
}

func TestReturnsWithAndWithoutReceiptAndStoreCreditAtEveryNode(t *testing.T) {
	for _, at := range returnNodes {
		t.Run(at.name, func(t *testing.T) {
			f := newRetFixture(t, MustStartNode(t, at.node, at.tweak))
			o := f.sale(3)
			oid, line := o["id"].(string), lineOf(o)
			ret := func(qty int64, restock bool, to string) map[string]any {
				return map[string]any{"order_id": oid, "refund_to": to, "line_items": []any{map[string]any{"line_item_id": line, "quantity": qty, "restock": restock}}}
			}
			// One back to cash, restocked: the customer sees the money, the shelf the shirt.
			r := f.must(f.giveBack(f.cashier, ret(1, true, "")), 200).Data()
			ordWant(t, r, map[string]any{"amount": 2000.0, "to_tender": 2000.0, "to_credit": 0.0, "refund_to": "original"})
			ordWant(t, r["order"].(map[string]any), map[string]any{"status": "partially_refunded", "refunded_total": 2000.0})
			if n := f.onHand(f.locA, f.shirt); n != 8 {
				t.Fatalf("after a restocked return: %d on hand, want 8", n)
			}
			// One back to store credit, damaged: not restocked.
			r = f.must(f.giveBack(f.cashier, ret(1, false, "store_credit")), 200).Data()
			ordWant(t, r, map[string]any{"amount": 2000.0, "to_tender": 0.0, "to_credit": 2000.0, "customer_id": f.ann})
			ordWant(t, r["store_credit"].(map[string]any), map[string]any{"balance": 2000.0, "customer_id": f.ann})
			rc := f.must(f.do("GET", "/orders/"+oid+"/receipt?refund_id="+r["id"].(string), f.cashier, nil), 200).Data()
			if ps := rc["payments"].([]any); len(ps) != 1 || ps[0].(map[string]any)["method"] != "store_credit" || ordNum(ps[0].(map[string]any)["amount"]) != 2000 {
				t.Fatalf("the return's receipt says it went back %v, want 20.00 to store credit", rc["payments"])
			}
			if n := f.onHand(f.locA, f.shirt); n != 8 || f.credit() != 2000 {
				t.Fatalf("after a return to store credit: %d on hand (want 8), credit %d (want 2000)", n, f.credit())
			}
			// More than is left of the line: 422 naming its quantity, nothing stored.
			f.refused(t, f.giveBack(f.cashier, ret(2, true, "")), 422, "validation", "line_items[0].quantity", f.tn.outboxLen())
			// Store credit as a tender, never below zero.
			n := f.order(map[string]any{"location_id": f.locA, "customer_id": f.ann, "line_items": []any{map[string]any{"product_id": f.shirt, "quantity": 2}}})
			pay := func(amount int64) *resp {
				return f.do("POST", "/payments/initiate", f.cashier, map[string]any{"order_id": n["id"], "amount": amount, "method": "store_credit"})
			}
			f.refused(t, pay(2001), 422, "validation", "amount", f.tn.outboxLen())
			p := f.must(pay(1500), 201).Data()
			ordWant(t, p, map[string]any{"method": "store_credit", "status": "captured"})
			if c := f.credit(); c != 500 {
				t.Fatalf("after paying 15.00 with store credit: %d left, want 500", c)
			}
			f.payCash(n["id"].(string), ordNum(n["total"])-1500)
			f.complete(n["id"].(string))
			f.must(f.do("POST", "/orders/"+n["id"].(string)+"/refund", f.manager, nil), 200)
			if c := f.credit(); c != 2000 {
				t.Fatalf("after refunding the order paid with store credit: %d, want 2000", c)
			}
			// Without a receipt: a cashier alone is refused; with a
			// manager's approval the shirt comes back at the lowest price
			// it sold at lately, not today's dearer one.
			f.must(f.do("PATCH", "/catalog/products/"+f.shirt, "", map[string]any{"base_price": 2500}), 200)
			noReceipt := map[string]any{"location_id": f.locA, "customer_id": f.ann,
				"line_items": []any{map[string]any{"product_id": f.shirt, "quantity": 1, "restock": true}}}
			f.refused(t, f.giveBack(f.cashier, noReceipt), 403, "forbidden", "approval_token", f.tn.outboxLen())
			noReceipt["approval_token"] = f.manager
			r = f.must(f.giveBack(f.cashier, noReceipt), 200).Data()
			ordWant(t, r, map[string]any{"amount": 2000.0, "to_credit": 2000.0, "refund_to": "store_credit", "order": nil})
			if c, n := f.credit(), f.onHand(f.locA, f.shirt); c != 4000 || n != 7 {
				t.Fatalf("after a return without receipt: credit %d (want 4000), %d on hand (want 7: the second sale was refunded without restock)", c, n)
			}
			txns := f.must(f.do("GET", "/customers/"+f.ann+"/store-credit/transactions", f.cashier, nil), 200).List()
			var types []string
			for _, x := range txns {
				types = append(types, x.(map[string]any)["type"].(string))
			}
			if want := []string{"return", "redeem", "refund", "return"}; len(types) != len(want) || types[0] != want[0] || types[3] != want[3] {
				t.Fatalf("store credit entries %v, want %v", types, want)
			}
			if c := f.must(f.do("GET", "/customers/"+f.ann, f.cashier, nil), 200).Data(); ordNum(c["store_credit"]) != 4000 {
				t.Fatalf("the customer shows store credit %v, want 4000", c["store_credit"])
			}
			last := txns[3].(map[string]any)
			ordWant(t, last, map[string]any{"product_id": f.shirt, "quantity": 1.0, "restock": true, "amount": 2000.0})
			if last["approved_by"] == nil {
				t.Fatalf("a cashier's return without receipt names its approver: %v", last)
			}
		})
	}
}

func TestAReturnBodyIsRefusedNamingTheFieldAndStoresNothing(t *testing.T) {
	f := newRetFixture(t, MustStartNode(t, kassa.NodeEdge, nil))
	o := f.sale(1)
	oid, line := o["id"].(string), lineOf(o)
	anon := f.soldOrder(f.locA, f.shirt, 1)
	lines := func(qty int64) []any { return []any{map[string]any{"line_item_id": line, "quantity": qty}} }
	for _, sc := range []struct {
		name, field string
		status      int
		body        map[string]any
	}{
		{"no lines", "line_items", 422, map[string]any{"order_id": oid}},
		{"a quantity of 0", "line_items[0].quantity", 422, map[string]any{"order_id": oid, "line_items": lines(0)}},
		{"more than was sold", "line_items[0].quantity", 422, map[string]any{"order_id": oid, "line_items": lines(2)}},
		{"an unknown destination", "refund_to", 422, map[string]any{"order_id": oid, "line_items": lines(1), "refund_to": "cash"}},
		{"store credit for an order without customer", "customer_id", 422, map[string]any{"order_id": anon["id"], "refund_to": "store_credit",
			"line_items": []any{map[string]any{"line_item_id": lineOf(anon), "quantity": 1}}}},
		{"without receipt to the tender", "refund_to", 422, map[string]any{"refund_to": "original", "location_id": f.locA, "customer_id": f.ann,
			"line_items": []any{map[string]any{"product_id": f.shirt, "quantity": 1}}}},
		{"without receipt, no customer", "customer_id", 422, map[string]any{"location_id": f.locA,
			"line_items": []any{map[string]any{"product_id": f.shirt, "quantity": 1}}}},
		{"without receipt, an unknown product", "line_items[0].product_id", 422, map[string]any{"location_id": f.locA, "customer_id": f.ann,
			"line_items": []any{map[string]any{"product_id": "00000000-0000-4000-8000-000000000000", "quantity": 1}}}},
	} {
		t.Run(sc.name, func(t *testing.T) {
			f.refused(t, f.giveBack(f.manager, sc.body), sc.status, "validation", sc.field, f.tn.outboxLen())
		})
	}
	if c := f.credit(); c != 0 {
		t.Fatalf("refused returns credited %d", c)
	}
	ordWant(t, f.get(oid), map[string]any{"status": "completed", "refunded_total": 0.0})
}

func TestAnExchangeAtEveryNode(t *testing.T) {
	for _, at := range returnNodes {
		t.Run(at.name, func(t *testing.T) {
			f := newRetFixture(t, MustStartNode(t, at.node, at.tweak))
			hat, jacket := f.product("Hat", "RET-HAT", 1500), f.product("Jacket", "RET-JACKET", 5000)
			o := f.sale(2)
			oid, line := o["id"].(string), lineOf(o)
			swap := func(product string) map[string]any {
				return map[string]any{"order_id": oid, "return_lines": []any{map[string]any{"line_item_id": line, "quantity": 1, "restock": true}},
					"line_items": []any{map[string]any{"product_id": product, "quantity": 1}}}
			}
			// A shirt for a cheaper hat: the hat is paid, 5.00 back in cash.
			x := f.must(f.do("POST", "/exchanges", f.cashier, swap(hat)), 200).Data()
			ordWant(t, x, map[string]any{"due": 0.0})
			ordWant(t, x["return"].(map[string]any), map[string]any{"amount": 2000.0, "to_tender": 500.0, "to_credit": 1500.0})
			ordWant(t, x["order"].(map[string]any), map[string]any{"status": "completed", "total": 1500.0, "paid_total": 1500.0, "customer_id": f.ann})
			if c := f.credit(); c != 0 {
				t.Fatalf("an exchange leaves %d of store credit, want 0", c)
			}
			// The other shirt for a dearer jacket: 30.00 due, paid in cash.
			x = f.must(f.do("POST", "/exchanges", f.cashier, swap(jacket)), 200).Data()
			ordWant(t, x, map[string]any{"due": 3000.0})
			nid := x["order"].(map[string]any)["id"].(string)
			ordWant(t, x["order"].(map[string]any), map[string]any{"status": "open", "paid_total": 2000.0})
			f.payCash(nid, 3000)
			f.complete(nid)
			ordWant(t, f.get(oid), map[string]any{"status": "refunded", "refunded_total": 4000.0})
			if n := f.onHand(f.locA, f.shirt); n != 10 {
				t.Fatalf("both shirts restocked: %d on hand, want 10", n)
			}
			// A third exchange: nothing left to return, nothing stored.
			f.refused(t, f.do("POST", "/exchanges", f.cashier, swap(hat)), 409, "conflict", "", f.tn.outboxLen())
		})
	}
}

// TestAReturnsCashLeavesTheTillsDrawer: a return at a till pays its cash
// out of the drawer (the X and Z reports' cash refunds and expected
// cash); one onto store credit leaves the drawer as it was.
func TestAReturnsCashLeavesTheTillsDrawer(t *testing.T) {
	f := newRetFixture(t, MustStartNode(t, kassa.NodeEdge, nil))
	register := f.must(f.do("POST", "/registers", f.manager, map[string]any{"location_id": f.locA, "name": "Front"}), 201).Data()["id"].(string)
	drawer := f.must(f.do("POST", "/drawers", f.cashier, map[string]any{"register_id": register, "float": map[string]any{"amount": 10000}}), 201).Data()["id"].(string)
	o := f.order(map[string]any{"location_id": f.locA, "customer_id": f.ann, "line_items": []any{map[string]any{"product_id": f.shirt, "quantity": 2}}})
	f.must(f.do("POST", "/payments/initiate", f.cashier, map[string]any{"order_id": o["id"], "amount": o["total"], "method": "cash", "register_id": register}), 201)
	o = f.complete(o["id"].(string))
	back := func(to string) {
		f.must(f.giveBack(f.cashier, map[string]any{"order_id": o["id"], "refund_to": to, "register_id": register,
			"line_items": []any{map[string]any{"line_item_id": lineOf(o), "quantity": 1, "restock": true}}}), 200)
	}
	back("original")
	back("store_credit")
	x := f.must(f.do("GET", "/drawers/"+drawer+"/x-report", f.manager, nil), 200).Data()
	ordWant(t, x, map[string]any{"cash_sales": 4000.0, "cash_refunds": 2000.0, "expected": 12000.0})
	z := f.must(f.do("POST", "/drawers/"+drawer+"/close", f.cashier, map[string]any{"count": map[string]any{"amount": 12000}}), 201).Data()
	ordWant(t, z, map[string]any{"expected": 12000.0, "over_short": 0.0, "cash_refunds": 2000.0})
}

// TestAnExchangeAboveTheCashiersLimitNeedsAManager: the return of an
// exchange counts against the cashier's refund_limit (50.00) like any
// refund: 60.00 back is 403, nothing stored (not even the new order);
// with a manager's approval_token it goes through.
func TestAnExchangeAboveTheCashiersLimitNeedsAManager(t *testing.T) {
	f := newRetFixture(t, MustStartNode(t, kassa.NodeEdge, nil))
	o := f.sale(3)
	body := map[string]any{"order_id": o["id"], "return_lines": []any{map[string]any{"line_item_id": lineOf(o), "quantity": 3}},
		"line_items": []any{map[string]any{"product_id": f.shirt, "quantity": 1}}}
	f.refused(t, f.do("POST", "/exchanges", f.cashier, body), 403, "forbidden", "", f.tn.outboxLen())
	body["approval_token"] = f.manager
	x := f.must(f.do("POST", "/exchanges", f.cashier, body), 200).Data()
	ordWant(t, x["return"].(map[string]any), map[string]any{"amount": 6000.0, "to_credit": 2000.0, "to_tender": 4000.0})
}
