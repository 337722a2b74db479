package httpapi_test

import (
	"testing"

	"kassa.dev/shared/kassa"
	"kassa.dev/shared/node"
	"kassa.dev/sync/link"
)

// TestOrderQuotePricesAndStoresNothing: the till's running total. A quote
// prices exactly as the order it becomes (lines, discount, tax, total),
// stores nothing (no order, no number used, nothing to sync), and answers
// the same 403 as POST /orders for a cashier's discount above the limit
// and 422 for bad input.
func TestOrderQuotePricesAndStoresNothing(t *testing.T) {
	f := newOrdFixture(t, nil)
	p := f.product("Quote Latte", "Q-LAT", 480)
	body := map[string]any{"location_id": f.locA, "discount": map[string]any{"type": "amount", "value": 100},
		"line_items": []any{map[string]any{"product_id": p, "quantity": 3}}}
	outbox := f.tn.outboxLen()
	q := f.must(f.do("POST", "/orders/quote", f.manager, body), 200).Data()
	if q["id"] != "" || q["number"] != "" {
		t.Fatalf("a quote has id %v and number %v, want none", q["id"], q["number"])
	}
	if n := len(f.must(f.do("GET", "/orders", "", nil), 200).List()); n != 0 {
		t.Fatalf("after a quote there are %d orders, want 0", n)
	}
	if got := f.tn.outboxLen(); got != outbox {
		t.Fatalf("a quote wrote %d changes to sync", got-outbox)
	}
	o := f.must(f.do("POST", "/orders", f.manager, body), 201).Data()
	for _, k := range []string{"subtotal", "discount_total", "tax_total", "total"} {
		if q[k] != o[k] {
			t.Errorf("%s: quoted %v, the order has %v", k, q[k], o[k])
		}
	}
	if q["total"] != float64(1340) {
		t.Errorf("quoted total %v, want 1340", q["total"])
	}
	// A cashier's discount above the limit (0 by default) is the same 403.
	mustProblem(t, f.do("POST", "/orders/quote", f.cashier, body), 403, "forbidden")
	mustProblem(t, f.do("POST", "/orders/quote", f.cashier, map[string]any{"location_id": f.locA}), 422, "validation")
}

// TestOrderListByNumber: a receipt's order number finds its order, only
// in the caller's org; an unknown number finds nothing.
func TestOrderListByNumber(t *testing.T) {
	f := newOrdFixture(t, nil)
	p := f.product("Number Bun", "N-BUN", 300)
	f.simpleOrder(f.locA, p, 1)
	o := f.simpleOrder(f.locA, p, 2)
	l := f.must(f.do("GET", "/orders?number="+o["number"].(string), f.cashier, nil), 200).List()
	if len(l) != 1 || l[0].(map[string]any)["id"] != o["id"] {
		t.Fatalf("by number %v: %v", o["number"], l)
	}
	if l := f.must(f.do("GET", "/orders?number=NOPE-00001", f.cashier, nil), 200).List(); len(l) != 0 {
		t.Fatalf("an unknown number finds %v", l)
	}
	other := f.tn.MustOrg("Other Cafe")
	if l := f.must(f.do("GET", "/orders?number="+o["number"].(string), other.Owner, nil), 200).List(); len(l) != 0 {
		t.Fatalf("another org finds %v", l)
	}
}

// TestSyncStatusForATillAtTheEdge: a cashier reads the edge's link status
// (the till's online/offline) without reports:read; the kitchen does not.
func TestSyncStatusForATillAtTheEdge(t *testing.T) {
	f := newOrdFixture(t, func(c *node.Config) {
		c.Extend = func(n *node.Node) error { // a standalone edge: no link
			n.Services.Sync = n.EdgeSync(func() *link.Edge { return nil })
			return nil
		}
	})
	r := f.must(f.do("GET", "/sync/status", f.cashier, nil), 200).Data()
	if r["node"] != "edge" || r["connected"] != false {
		t.Fatalf("status %v", r)
	}
	// The kitchen has neither reports:read nor orders:write.
	kitchen := f.tn.MustUser(f.org, "k@order.test", kassa.RoleKitchen)
	mustProblem(t, f.do("GET", "/sync/status", kitchen, nil), 403, "forbidden")
}
