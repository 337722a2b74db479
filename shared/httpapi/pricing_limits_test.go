package httpapi_test

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"
)

// Money limits through HTTP (issue 10): pricing beyond the documented
// maximums is 422 naming the field and answers at once (an order discount
// over lines of 10^12 used to overflow and spin the pricing for hours);
// manual discounts need the role's discount_limits; the cashier refund
// limit holds per order across split refunds. The fixture is ordFixture of
// order_test.go.

// limAnswerWithin bounds how long a pricing request may take before the
// test calls it a hang: a deadline to fail by, not a measured time.
const limAnswerWithin = 30 * time.Second

// limDo sends a request below /api/v1 ("" token: the owner's) and fails
// the test when no answer comes within limAnswerWithin.
func (f *ordFixture) limDo(t *testing.T, method, path, token string, body any) *resp {
	t.Helper()
	if token == "" {
		token = f.org.Owner
	}
	var rd io.Reader = http.NoBody
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			t.Fatal(err)
		}
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequest(method, f.tn.URL+"/api/v1"+path, rd)
	if err != nil {
		t.Fatal(err)
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	req.Header.Set("Authorization", "Bearer "+token)
	res, err := (&http.Client{Timeout: limAnswerWithin}).Do(req)
	if err != nil {
		t.Fatalf("%s %s: no answer within %s: %v", method, path, limAnswerWithin, err)
	}
	defer res.Body.Close()
	rb, _ := io.ReadAll(res.Body)
	return &resp{Status: res.StatusCode, Header: res.Header, Body: rb}
}

// limLine is an order line of qty units of product, with an optional discount.
func limLine(product string, qty int64, discount map[string]any) map[string]any {
	l := map[string]any{"product_id": product, "quantity": qty}
	if discount != nil {
		l["discount"] = discount
	}
	return l
}

func limPercent(bps int64) map[string]any { return map[string]any{"type": "percent", "value": bps} }
func limAmount(v int64) map[string]any    { return map[string]any{"type": "amount", "value": v} }

func TestOrderMoneyLimits(t *testing.T) {
	f := newOrdFixture(t, nil)
	f.settings(map[string]any{"tax_inclusive": false, "tax_rate_bps": 5000})
	grand := f.product("Grand piano", "PIA-1", 100_000_000) // × 10000 = 10^12, the line limit
	sixty := f.product("Sixty", "SIX-1", 60_000_000)        // × 10000 = 6 × 10^11
	forty := f.product("Forty", "FOR-1", 40_000_000)        // × 10000 = 4 × 10^11
	over := f.product("Over", "OVR-1", 100_000_001)         // × 10000 > 10^12
	top := f.product("Top", "TOP-1", 1_000_000_000_000)     // the largest price
	many := make([]any, 101)
	for i := range many {
		many[i] = limLine(forty, 1, nil)
	}
	order := func(discount map[string]any, lines ...any) map[string]any {
		b := map[string]any{"location_id": f.locA, "line_items": lines}
		if discount != nil {
			b["discount"] = discount
		}
		return b
	}
	cases := []struct {
		name  string
		body  map[string]any
		field string         // a 422 naming it
		want  map[string]any // or a 201 with these totals
	}{
		{name: "100 % off two lines of 10^12 (the overflow)",
			body: order(limPercent(10_000), limLine(grand, 10_000, nil), limLine(grand, 10_000, nil)), field: "line_items"},
		{name: "10^12 off two lines of 10^12",
			body: order(limAmount(1_000_000_000_000), limLine(grand, 10_000, nil), limLine(grand, 10_000, nil)), field: "line_items"},
		{name: "three lines of 4 × 10^11, half off",
			body: order(limPercent(5_000), limLine(forty, 10_000, nil), limLine(forty, 10_000, nil), limLine(forty, 10_000, nil)), field: "line_items"},
		{name: "a line above 10^12", body: order(nil, limLine(over, 10_000, nil)), field: "line_items[0].quantity"},
		{name: "the largest price × 10000", body: order(nil, limLine(forty, 1, nil), limLine(top, 10_000, nil)), field: "line_items[1].quantity"},
		{name: "exclusive tax taking the total above 10^12", body: order(nil, limLine(grand, 10_000, nil)), field: "line_items"},
		{name: "a quantity above 10000", body: order(nil, limLine(forty, 10_001, nil)), field: "line_items[0].quantity"},
		{name: "101 lines", body: order(nil, many...), field: "line_items"},
		{name: "an amount discount above 10^12", body: order(limAmount(1_000_000_000_001), limLine(forty, 1, nil)), field: "discount.value"},
		{name: "a line percent above 100 %", body: order(nil, limLine(forty, 1, limPercent(10_001))), field: "line_items[0].discount.value"},
		// 6 × 10^11 and 4 × 10^11, half off: 3 × 10^11 and 2 × 10^11 off, exactly; 50 % tax added.
		{name: "half off an order of 10^12", body: order(limAmount(500_000_000_000), limLine(sixty, 10_000, nil), limLine(forty, 10_000, nil)),
			want: map[string]any{"subtotal": 1e12, "discount_total": 5e11, "tax_total": 2.5e11, "total": 7.5e11}},
		{name: "a line at 10^12, all off", body: order(limPercent(10_000), limLine(grand, 10_000, nil)),
			want: map[string]any{"subtotal": 1e12, "discount_total": 1e12, "tax_total": 0.0, "total": 0.0}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			before := f.tn.outboxLen()
			r := f.limDo(t, "POST", "/orders", "", tc.body)
			if tc.field != "" {
				f.refused(t, r, 422, "validation", tc.field, before)
				return
			}
			o := f.must(r, 201).Data()
			ordWant(t, o, tc.want)
			var discounts float64
			for _, l := range ordLines(o) {
				discounts += l["discount"].(float64)
			}
			if discounts != tc.want["discount_total"] {
				t.Fatalf("line discounts sum to %v, want %v", discounts, tc.want["discount_total"])
			}
		})
	}
	t.Run("a refund above 10^12", func(t *testing.T) {
		o := f.soldOrder(f.locA, forty, 1)
		before := f.tn.outboxLen()
		r := f.limDo(t, "POST", "/orders/"+o["id"].(string)+"/refund", "", map[string]any{"amount": 1_000_000_000_001})
		f.refused(t, r, 422, "validation", "amount", before)
	})
}

func TestOrderDiscountNeedsTheRolesLimit(t *testing.T) {
	f := newOrdFixture(t, nil)
	cake := f.product("Cake", "CAK-1", 1000)
	order := func(discount map[string]any, lines ...any) map[string]any {
		b := map[string]any{"location_id": f.locA, "line_items": lines}
		if discount != nil {
			b["discount"] = discount
		}
		return b
	}
	steps := []struct {
		name     string
		token    string
		settings map[string]any // patched by the owner first
		body     map[string]any
		status   int
		names    string  // in a 403's detail
		total    float64 // of a 201
	}{
		{name: "a cashier, 100 % off the order", token: f.cashier, body: order(limPercent(10_000), limLine(cake, 2, nil)),
			status: 403, names: "discount_limits.cashier"},
		{name: "a cashier, 10 % off a line", token: f.cashier, body: order(nil, limLine(cake, 1, limPercent(1_000))),
			status: 403, names: "discount_limits.cashier"},
		{name: "a cashier, 1 unit off", token: f.cashier, body: order(limAmount(1), limLine(cake, 1, nil)),
			status: 403, names: "discount_limits.cashier"},
		{name: "a cashier, a zero discount", token: f.cashier, body: order(limAmount(0), limLine(cake, 1, limPercent(0))),
			status: 201, total: 1000},
		{name: "a manager, 100 % off", token: f.manager, body: order(limPercent(10_000), limLine(cake, 2, nil)),
			status: 201, total: 0},
		{name: "the owner, 100 % off", body: order(nil, limLine(cake, 2, limAmount(5000))), status: 201, total: 0},
		{name: "a cashier within a raised limit", token: f.cashier, settings: map[string]any{"discount_limits": map[string]any{"cashier": 1000}},
			body: order(limPercent(500), limLine(cake, 2, limPercent(500))), status: 201, total: 1805}, // 100 + 95 off 2000
		{name: "a cashier at the limit exactly", token: f.cashier, body: order(limAmount(200), limLine(cake, 2, nil)), status: 201, total: 1800},
		{name: "a cashier one unit above it", token: f.cashier, body: order(limAmount(201), limLine(cake, 2, nil)),
			status: 403, names: "discount_limits.cashier"},
		{name: "a manager above a lowered limit", token: f.manager, settings: map[string]any{"discount_limits": map[string]any{"manager": 2500}},
			body: order(limPercent(3000), limLine(cake, 1, nil)), status: 403, names: "discount_limits.manager"},
		{name: "a manager within it", token: f.manager, body: order(limPercent(2500), limLine(cake, 1, nil)), status: 201, total: 750},
	}
	for _, st := range steps {
		t.Run(st.name, func(t *testing.T) {
			if st.settings != nil {
				f.settings(st.settings)
			}
			before, orders := f.tn.outboxLen(), len(f.must(f.do("GET", "/orders?limit=200", "", nil), 200).List())
			r := f.limDo(t, "POST", "/orders", st.token, st.body)
			if st.status == 403 {
				p := f.refused(t, r, 403, "forbidden", "", before)
				if !strings.Contains(p["detail"].(string), st.names) {
					t.Fatalf("the problem does not name %s: %s", st.names, r.Body)
				}
				if n := len(f.must(f.do("GET", "/orders?limit=200", "", nil), 200).List()); n != orders {
					t.Fatalf("a refused order was stored: %d orders, were %d", n, orders)
				}
				return
			}
			if got := f.must(r, st.status).Data()["total"]; got != st.total {
				t.Fatalf("total %v, want %v", got, st.total)
			}
		})
	}
	t.Run("the limits in the settings", func(t *testing.T) {
		got := f.must(f.do("GET", "/settings", f.cashier, nil), 200).Data()["discount_limits"]
		want := map[string]any{"manager": 2500.0, "cashier": 1000.0, "partner": 10000.0}
		ordWant(t, got.(map[string]any), want)
	})
	for _, bad := range []struct {
		name, token string
		body        map[string]any
		status      int
		field       string
	}{
		{"a cashier raising their own limit", f.cashier, map[string]any{"discount_limits": map[string]any{"cashier": 10_000}}, 403, ""},
		{"a manager raising theirs", f.manager, map[string]any{"discount_limits": map[string]any{"manager": 10_000}}, 403, ""},
		{"above 100 %", "", map[string]any{"discount_limits": map[string]any{"cashier": 10_001}}, 422, "discount_limits.cashier"},
		{"negative", "", map[string]any{"discount_limits": map[string]any{"partner": -1}}, 422, "discount_limits.partner"},
		{"null", "", map[string]any{"discount_limits": map[string]any{"manager": nil}}, 422, "discount_limits.manager"},
	} {
		t.Run(bad.name, func(t *testing.T) {
			before := f.tn.outboxLen()
			kind := "forbidden"
			if bad.status == 422 {
				kind = "validation"
			}
			f.refused(t, f.do("PATCH", "/settings", bad.token, bad.body), bad.status, kind, bad.field, before)
		})
	}
}

func TestOrderRefundLimitHoldsAcrossSplitRefunds(t *testing.T) {
	f := newOrdFixture(t, nil) // refund_limit 5000
	hamper := f.product("Hamper", "HAM-1", 6000)
	box := f.product("Box", "BOX-1", 2000)
	byAmount := f.soldOrder(f.locA, hamper, 1)["id"].(string)
	byLines := f.soldOrder(f.locA, box, 3)["id"].(string)
	boxLine := ordLines(f.get(byLines))[0]["id"].(string)
	lines := func(qty int64) map[string]any {
		return map[string]any{"line_items": []any{map[string]any{"line_item_id": boxLine, "quantity": qty}}}
	}
	steps := []struct {
		name     string
		order    string
		token    string
		body     any
		status   int
		refunded float64 // the order's refunded_total after the step
	}{
		{"a cashier's first refund, within the limit", byAmount, f.cashier, map[string]any{"amount": 3000}, 200, 3000},
		{"a second that takes the order beyond it", byAmount, f.cashier, map[string]any{"amount": 3000}, 403, 3000},
		{"the rest up to the limit", byAmount, f.cashier, map[string]any{"amount": 2000}, 200, 5000},
		{"one unit more", byAmount, f.cashier, map[string]any{"amount": 1}, 403, 5000},
		{"everything left, in full", byAmount, f.cashier, nil, 403, 5000},
		{"a manager refunds the rest", byAmount, f.manager, nil, 200, 6000},
		{"two of three units by line", byLines, f.cashier, lines(2), 200, 4000},
		{"the third unit by line", byLines, f.cashier, lines(1), 403, 4000},
		{"the owner refunds it", byLines, "", lines(1), 200, 6000},
	}
	for _, st := range steps {
		t.Run(st.name, func(t *testing.T) {
			before := f.tn.outboxLen()
			r := f.limDo(t, "POST", "/orders/"+st.order+"/refund", st.token, st.body)
			if st.status == 403 {
				p := f.refused(t, r, 403, "forbidden", "", before)
				if !strings.Contains(p["detail"].(string), "refund_limit") {
					t.Fatalf("the problem does not name refund_limit: %s", r.Body)
				}
			} else {
				f.must(r, st.status)
			}
			if got := f.get(st.order)["refunded_total"]; got != st.refunded {
				t.Fatalf("refunded_total %v, want %v", got, st.refunded)
			}
		})
	}
}
