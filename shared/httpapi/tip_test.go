package httpapi_test

import (
	"encoding/csv"
	"strings"
	"testing"

	"kassa.dev/shared/kassa"
)

// Tips through HTTP (docs/tips.md): a tip on a cash and a card payment
// entered at the till, one the card terminal sends, kept out of the
// order's total and tax and out of sales; in the drawer's expected cash
// and the Z to the cent; on the receipt; given back with the whole of its
// payment (a partial refund leaves it); reported per staff member, JSON
// and CSV; every bad tip a 422 naming the field that stores nothing.

// tipPay takes a payment at the fixture's till as the cashier.
func (f *drawerFixture) tipPay(body map[string]any) map[string]any {
	f.t.Helper()
	body["register_id"] = f.register
	p := f.must(f.do("POST", "/payments/initiate", f.cashier, body), 201).Data()
	if p["status"] != "captured" {
		f.t.Fatalf("payment: %v", p)
	}
	return p
}

func TestTipsFromTheTillToTheZAndTheTipsReport(t *testing.T) {
	for _, kind := range []string{kassa.NodeEdge, kassa.NodeHub} {
		t.Run(kind, func(t *testing.T) { tipsAtTheTill(t, kind) })
	}
}

func tipsAtTheTill(t *testing.T, kind string) {
	f := &drawerFixture{ordFixture: ordFixtureOn(t, MustStartNode(t, kind, nil))}
	f.product = f.ordFixture.product("Flat white", "DRW-FW", 450)
	f.register = f.must(f.do("POST", "/registers", f.manager, map[string]any{"location_id": f.locA, "name": "Front"}), 201).Data()["id"].(string)
	drawer := f.must(f.open(f.cashier, map[string]any{"amount": 10000}), 201).Data()["id"].(string)

	// Two flat whites (9.00) in cash with a 15 % tip, 20.00 handed over.
	o1 := f.simpleOrder(f.locA, f.product, 2)
	id1, total1, tax1 := o1["id"].(string), ordNum(o1["total"]), ordNum(o1["tax_total"])
	p1 := f.tipPay(map[string]any{"order_id": id1, "amount": total1, "method": "cash", "tendered": 2000, "tip": 135})
	ordWant(t, p1, map[string]any{"amount": float64(total1), "tip": 135.0, "tendered": 2000.0, "change_due": float64(2000 - total1 - 135)})
	after := f.get(id1)
	if ordNum(after["total"]) != total1 || ordNum(after["tax_total"]) != tax1 || ordNum(after["paid_total"]) != total1 {
		t.Fatalf("the tip moved the order: total %v tax %v paid %v, was %d %d", after["total"], after["tax_total"], after["paid_total"], total1, tax1)
	}

	// A card with a tip from the till; a card whose customer tips 10 % on
	// the terminal (the simulator's 4000000000001505).
	o2 := f.simpleOrder(f.locA, f.product, 1)
	p2 := f.tipPay(map[string]any{"order_id": o2["id"], "amount": o2["total"], "method": "card", "card_number": "4242424242424242", "tip": 100})
	o3 := f.simpleOrder(f.locA, f.product, 1)
	p3 := f.tipPay(map[string]any{"order_id": o3["id"], "amount": o3["total"], "method": "card", "card_number": "4000000000001505"})
	if ordNum(p2["tip"]) != 100 || ordNum(p3["tip"]) != 45 {
		t.Fatalf("card tips: %v and %v, want 100 and 45 (10 %% of 450 on the terminal)", p2["tip"], p3["tip"])
	}
	tips := f.must(f.do("GET", "/tips?payment_id="+p3["id"].(string), f.manager, nil), 200).List()
	if len(tips) != 1 || tips[0].(map[string]any)["source"] != "terminal" || tips[0].(map[string]any)["status"] != "held" {
		t.Fatalf("the terminal's tip: %v", tips)
	}

	// Bad tips: each a 422 naming its field, nothing stored.
	o4 := f.simpleOrder(f.locA, f.product, 1)
	bad := func(field string, body map[string]any) {
		t.Helper()
		body["order_id"], body["amount"] = o4["id"], o4["total"]
		f.refused(t, f.do("POST", "/payments/initiate", f.cashier, body), 422, "validation", field, f.tn.outboxLen())
	}
	bad("tip", map[string]any{"method": "cash", "tip": -1})
	bad("tip", map[string]any{"method": "cash", "tip": 451}) // over tip_max_percent (100 %) of 4.50
	bad("tip", map[string]any{"method": "card", "card_number": "4242424242424242", "capture": false, "tip": 50})
	bad("tip", map[string]any{"method": "external", "tip": 50})
	bad("tendered", map[string]any{"method": "cash", "tendered": 500, "tip": 100})
	f.refused(t, f.do("PATCH", "/settings", "", map[string]any{"tip_max_percent": 1001}), 422, "validation", "tip_max_percent", f.tn.outboxLen())
	f.settings(map[string]any{"tip_max_percent": 20})
	bad("tip", map[string]any{"method": "cash", "tip": 91})
	f.settings(map[string]any{"tip_max_percent": 100})

	// A payment voided on its open order voids its tip (away from the till:
	// no drawer entry); a voided tip counts nowhere.
	v := f.must(f.do("POST", "/payments/initiate", f.cashier, map[string]any{"order_id": o4["id"], "amount": o4["total"], "method": "card",
		"card_number": "4242424242424242", "tip": 50}), 201).Data()
	f.must(f.do("POST", "/payments/"+v["id"].(string)+"/void", f.cashier, nil), 200)
	if tip := f.must(f.do("GET", "/tips?payment_id="+v["id"].(string), f.manager, nil), 200).List()[0].(map[string]any); tip["status"] != "voided" {
		t.Fatalf("the voided payment's tip: %v", tip)
	}

	// The X report: cash tips are in the expected cash, to the cent.
	cashSales := total1
	x := f.must(f.do("GET", "/drawers/"+drawer+"/x-report", f.manager, nil), 200).Data()
	ordWant(t, x, map[string]any{"cash_sales": float64(cashSales), "tips": 280.0, "cash_tips": 135.0,
		"expected": float64(10000 + cashSales + 135), "cash_tendered": 2000.0, "change_given": float64(2000 - total1 - 135)})

	// A partial refund leaves the tip; the rest of the payment takes it back.
	f.complete(id1)
	f.must(f.do("POST", "/orders/"+id1+"/refund", f.cashier, map[string]any{"amount": 450, "reason": "one spilt", "register_id": f.register}), 200)
	if tip := f.must(f.do("GET", "/tips?payment_id="+p1["id"].(string), f.manager, nil), 200).List()[0].(map[string]any); tip["status"] != "held" {
		t.Fatalf("a partial refund gave the tip back: %v", tip)
	}
	refunded := f.must(f.do("POST", "/orders/"+id1+"/refund", f.cashier, map[string]any{"reason": "both", "register_id": f.register}), 200).Data()
	tip := f.must(f.do("GET", "/tips?payment_id="+p1["id"].(string), f.manager, nil), 200).List()[0].(map[string]any)
	refunds := ordItems(refunded, "refunds")
	if tip["status"] != "refunded" || tip["refund_id"] != refunds[len(refunds)-1]["id"] {
		t.Fatalf("the full refund did not give the tip back: %v", tip)
	}

	// Receipts: the sale's tender shows its tip; the last refund the tip it gave back.
	sale := f.must(f.do("GET", "/orders/"+id1+"/receipt", f.manager, nil), 200).Data()
	ordWant(t, sale, map[string]any{"total": float64(total1), "tip_total": 135.0})
	back := f.must(f.do("GET", "/orders/"+id1+"/receipt?refund_id="+tip["refund_id"].(string), f.manager, nil), 200).Data()
	ordWant(t, back, map[string]any{"tip_total": 135.0})
	html := f.do("GET", "/orders/"+id1+"/receipt?format=html&width=80", f.manager, nil)
	if html.Status != 200 || !strings.Contains(string(html.Body), "<td>tip</td>") || !strings.Contains(string(html.Body), "1.35") {
		t.Fatalf("the printable receipt shows no tip: %s", html.Body)
	}

	// The Z: expected is float + cash sales − cash refunds + cash tips −
	// cash tips given back; counted to the cent, nothing over or short.
	expected := int64(10000) + cashSales - total1 + 135 - 135
	z := f.must(f.do("POST", "/drawers/"+drawer+"/close", f.cashier, map[string]any{"count": map[string]any{"amount": expected}}), 201).Data()
	ordWant(t, z, map[string]any{"expected": float64(expected), "over_short": 0.0, "tips": 280.0, "tips_refunded": 135.0,
		"cash_tips": 135.0, "cash_tips_refunded": 135.0})

	// The tips report per staff member: the cashier took all three.
	rep := f.must(f.do("GET", "/reports/tips?group_by=staff", f.manager, nil), 200).List()
	if len(rep) != 1 {
		t.Fatalf("tips by staff: %v", rep)
	}
	ordWant(t, rep[0].(map[string]any), map[string]any{"label": "cashier", "count": 3.0, "tips": 280.0, "refunded": 135.0,
		"net": 145.0, "cash": 0.0, "card": 145.0, "currency": "AUD"})
	r := f.do("GET", "/reports/tips?group_by=staff&format=csv", f.manager, nil)
	rows, err := csv.NewReader(strings.NewReader(string(r.Body))).ReadAll()
	if err != nil || len(rows) != 2 || !strings.Contains(strings.Join(rows[1], ","), "2.80,1.35,1.45,0.00,1.45") {
		t.Fatalf("tips CSV: %v %q", err, r.Body)
	}
	// Sales never count a tip: the day's one completed sale is its order's
	// total and tax, its refunds what the order gave back.
	sales := f.must(f.do("GET", "/reports/sales?group_by=none", f.manager, nil), 200).List()[0].(map[string]any)
	if ordNum(sales["sales"]) != total1 || ordNum(sales["tax"]) != tax1 || ordNum(sales["refunds"]) != total1 {
		t.Fatalf("sales %v include tips", sales)
	}
	mustProblem(t, f.do("GET", "/reports/tips", f.cashier, nil), 403, "forbidden")
	mustProblem(t, f.do("GET", "/reports/tips?group_by=product", f.manager, nil), 422, "validation")
}
