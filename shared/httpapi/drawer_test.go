package httpapi_test

import (
	"testing"
	"time"

	"kassa.dev/shared/kassa"
)

// Cash drawers through HTTP (docs/drawers.md): a register's day from the
// float to the Z, every refusal a 4xx naming its field that changes
// nothing, and the Z's figures the sum of the payments it covers.

// drawerFixture is an ordFixture with a register at location A and a
// product.
type drawerFixture struct {
	*ordFixture
	register, product string
}

func newDrawerFixture(t *testing.T) *drawerFixture {
	f := &drawerFixture{ordFixture: newOrdFixture(t, nil)}
	f.product = f.ordFixture.product("Flat white", "DRW-FW", 450)
	f.register = f.must(f.do("POST", "/registers", f.manager, map[string]any{"location_id": f.locA, "name": "Front"}), 201).Data()["id"].(string)
	return f
}

func (f *drawerFixture) open(token string, float map[string]any) *resp {
	f.t.Helper()
	return f.do("POST", "/drawers", token, map[string]any{"register_id": f.register, "float": float})
}

func TestDrawerDayFromFloatToZ(t *testing.T) {
	f := newDrawerFixture(t)
	mustProblem(t, f.do("POST", "/registers", f.cashier, map[string]any{"location_id": f.locA, "name": "Mine"}), 403, "forbidden")

	// The café's day runs to 02:00.
	loc := f.must(f.do("PATCH", "/locations/"+f.locA, "", map[string]any{"timezone": "Australia/Sydney", "day_cutoff_hour": 2}), 200).Data()
	ordWant(t, loc, map[string]any{"timezone": "Australia/Sydney", "day_cutoff_hour": 2.0})
	f.refused(t, f.do("PATCH", "/locations/"+f.locA, "", map[string]any{"day_cutoff_hour": 14}), 422, "validation", "day_cutoff_hour", f.tn.outboxLen())
	f.refused(t, f.do("PATCH", "/locations/"+f.locA, "", map[string]any{"timezone": "Mars/Base"}), 422, "validation", "timezone", f.tn.outboxLen())

	// Bad counts: each a 422 naming the field, nothing written.
	for _, c := range []struct {
		float map[string]any
		field string
	}{
		{map[string]any{"denominations": []any{map[string]any{"value": 5000, "count": -2}}}, "float.denominations[0].count"},
		{map[string]any{"denominations": []any{map[string]any{"value": 5000, "count": 1_000_000}}}, "float.denominations[0].count"},
		{map[string]any{"denominations": []any{map[string]any{"value": 300, "count": 1}}}, "float.denominations[0].value"},
		{map[string]any{"amount": -100}, "float.amount"},
		{map[string]any{"amount": 1_000_000_000_000}, "float.amount"},
		{map[string]any{"amount": 900, "denominations": []any{map[string]any{"value": 1000, "count": 1}}}, "float.amount"},
		{map[string]any{}, "float.denominations"},
	} {
		f.refused(t, f.open(f.cashier, c.float), 422, "validation", c.field, f.tn.outboxLen())
	}
	f.refused(t, f.do("POST", "/drawers", f.cashier, map[string]any{"register_id": ordNoSuchID, "float": map[string]any{"amount": 0}}),
		422, "validation", "register_id", f.tn.outboxLen())

	// A float of 2 × $50 and 5 × $10, counted by the cashier.
	d := f.must(f.open(f.cashier, map[string]any{"denominations": []any{
		map[string]any{"value": 5000, "count": 2}, map[string]any{"value": 1000, "count": 5}}}), 201).Data()
	drawer := d["id"].(string)
	want := kassa.BusinessDay(time.Now(), kassa.DaySettings{Timezone: "Australia/Sydney", CutoffHour: 2})
	ordWant(t, d, map[string]any{"status": "open", "float": 15000.0, "currency": "AUD", "business_day": want, "register_id": f.register})
	f.refused(t, f.open(f.cashier, map[string]any{"amount": 100}), 409, "conflict", "register_id", f.tn.outboxLen())

	// Sales: cash with change, cash exact, card; one cash sale not at the till.
	var cash, card, sales int64
	sell := func(qty int64, body map[string]any) (string, int64) {
		o := f.simpleOrder(f.locA, f.product, qty)
		id, total := o["id"].(string), ordNum(o["total"])
		body["order_id"], body["amount"] = id, total
		p := f.must(f.do("POST", "/payments/initiate", f.cashier, body), 201).Data()
		if p["status"] != "captured" {
			t.Fatalf("payment: %v", p)
		}
		return id, total
	}
	o1, t1 := sell(3, map[string]any{"method": "cash", "tendered": 2000, "register_id": f.register})
	cash, sales = cash+t1, sales+1
	_, t2 := sell(1, map[string]any{"method": "cash", "register_id": f.register})
	cash, sales = cash+t2, sales+1
	_, t3 := sell(2, map[string]any{"method": "card", "card_number": "4242424242424242", "register_id": f.register})
	card, sales = card+t3, sales+1
	_, outside := sell(1, map[string]any{"method": "cash"}) // an online order's cash: no register, no drawer

	// A cash refund at the till, a paid-out and a no-sale.
	f.complete(o1)
	f.must(f.do("POST", "/orders/"+o1+"/refund", f.manager, map[string]any{"amount": 450, "reason": "spilt", "register_id": f.register}), 200)
	mustProblem(t, f.do("POST", "/drawers/"+drawer+"/paid-out", f.cashier, map[string]any{"amount": 500, "reason": "milk"}), 403, "forbidden")
	f.must(f.do("POST", "/drawers/"+drawer+"/paid-out", f.manager, map[string]any{"amount": 500, "reason": "milk"}), 201)
	f.must(f.do("POST", "/drawers/"+drawer+"/no-sale", f.cashier, map[string]any{}), 201)
	f.refused(t, f.do("POST", "/drawers/"+drawer+"/paid-in", f.manager, map[string]any{"amount": -5, "reason": "x"}), 422, "validation", "amount", f.tn.outboxLen())
	f.refused(t, f.do("POST", "/drawers/"+drawer+"/paid-in", f.manager, map[string]any{"amount": 5}), 422, "validation", "reason", f.tn.outboxLen())
	expected := 15000 + cash - 450 - 500
	f.refused(t, f.do("POST", "/drawers/"+drawer+"/paid-out", f.manager, map[string]any{"amount": expected + 1, "reason": "bank"}),
		409, "conflict", "amount", f.tn.outboxLen())

	// The X report (managers): the figures so far; a cashier may not see them.
	mustProblem(t, f.do("GET", "/drawers/"+drawer+"/x-report", f.cashier, nil), 403, "forbidden")
	x := f.must(f.do("GET", "/drawers/"+drawer+"/x-report", f.manager, nil), 200).Data()
	ordWant(t, x, map[string]any{"float": 15000.0, "cash_sales": float64(cash), "cash_refunds": 450.0, "paid_out": 500.0,
		"expected": float64(expected), "sales": float64(sales), "refunds": 1.0, "no_sales": 1.0,
		"cash_tendered": float64(2000 + t2), "change_given": float64(2000 - t1)})

	// A blind close: the count alone; the answer shows expected against it.
	f.refused(t, f.do("POST", "/drawers/"+drawer+"/close", f.cashier, map[string]any{"count": map[string]any{"amount": -1}}),
		422, "validation", "count.amount", f.tn.outboxLen())
	z := f.must(f.do("POST", "/drawers/"+drawer+"/close", f.cashier, map[string]any{"count": map[string]any{"amount": expected - 50}, "note": "one coin short"}), 201).Data()
	ordWant(t, z, map[string]any{"number": 1.0, "expected": float64(expected), "counted": float64(expected - 50), "over_short": -50.0,
		"note": "one coin short", "cash_sales": float64(cash), "business_day": want})
	f.refused(t, f.do("POST", "/drawers/"+drawer+"/close", f.cashier, map[string]any{"count": map[string]any{"amount": 0}}),
		409, "conflict", "status", f.tn.outboxLen())
	f.refused(t, f.do("POST", "/drawers/"+drawer+"/no-sale", f.cashier, map[string]any{}), 409, "conflict", "status", f.tn.outboxLen())
	o := f.simpleOrder(f.locA, f.product, 1)
	f.refused(t, f.do("POST", "/payments/initiate", f.cashier, map[string]any{"order_id": o["id"], "amount": o["total"], "method": "cash",
		"register_id": f.register}), 409, "conflict", "register_id", f.tn.outboxLen())

	// The Z's figures are the sum of the payments the register took: the
	// location's payments but the one made away from the till.
	byMethod, n := map[string]int64{}, int64(0)
	for _, p := range f.payList(f.manager, "?location_id="+f.locA) {
		byMethod[p["method"].(string)] += ordNum(p["amount"])
		n++
	}
	tenders := map[string]map[string]any{}
	for _, tt := range z["tenders"].([]any) {
		tenders[tt.(map[string]any)["method"].(string)] = tt.(map[string]any)
	}
	if ordNum(tenders["cash"]["sales"]) != byMethod["cash"]-outside || ordNum(tenders["card"]["sales"]) != byMethod["card"] ||
		ordNum(z["sales"]) != n-1 || card != byMethod["card"] || ordNum(tenders["cash"]["refunds"]) != 450 {
		t.Fatalf("Z tenders %v, sales %v; payments by method %v (%d), %d of them away from the till", tenders, z["sales"], byMethod, n, outside)
	}

	// Head office reads it; the next drawer's Z is number 2.
	zs := f.must(f.do("GET", "/z-reports?location_id="+f.locA, f.manager, nil), 200).List()
	if len(zs) != 1 || zs[0].(map[string]any)["id"] != z["id"] {
		t.Fatalf("z reports: %v", zs)
	}
	d2 := f.must(f.open(f.cashier, map[string]any{"amount": 0}), 201).Data()
	z2 := f.must(f.do("POST", "/drawers/"+d2["id"].(string)+"/close", f.cashier, map[string]any{"count": map[string]any{"amount": 0}}), 201).Data()
	ordWant(t, z2, map[string]any{"number": 2.0, "expected": 0.0, "over_short": 0.0})
}
