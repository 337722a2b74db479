package synctest

import (
	"testing"
)

// TestAReturnAtTheHubRunsAtTheStore (docs/returns.md): a store's online
// order, sold and completed at the hub, is returned at the hub — one line
// back to the card, then an exchange of the other for the same product
// carried on a customer's store credit — and both run at the store (the
// hub routes them; it would refuse them itself, 409): the hub and the
// store agree on the order, and the exchange's order is completed at both.
func TestAReturnAtTheHubRunsAtTheStore(t *testing.T) {
	e, product := moneyPair(t)
	stocked(t, e, product, 10)
	id, _, _ := hubSale(t, e, product, 2)
	if a := raw(t, e.hub, "POST", "/api/v1/orders/"+id+"/complete", e.hubTok, nil); a.status != 200 {
		t.Fatalf("complete at the hub: %d %v", a.status, a.body)
	}
	line := order(t, e.hub, e.hubTok, id)["line_items"].([]any)[0].(map[string]any)["id"]
	back := []any{map[string]any{"line_item_id": line, "quantity": 1, "restock": true}}
	a := raw(t, e.hub, "POST", "/api/v1/returns", e.hubTok, map[string]any{"order_id": id, "line_items": back})
	if a.status != 200 || a.body["data"].(map[string]any)["to_tender"] != float64(6600) {
		t.Fatalf("a return at the hub: %d %v", a.status, a.body)
	}
	if got := money(agreed(t, e, id)); got == "" || order(t, e.edge, e.edgeMgr, id)["refunded_total"] != float64(6600) {
		t.Fatalf("after the return the store holds %s", got)
	}
	var c oneResp
	if st := e.hub.Call(t, "POST", "/api/v1/customers", e.hubTok, map[string]any{"first_name": "Ren"}, &c); st != 201 {
		t.Fatalf("customer: %d", st)
	}
	x := raw(t, e.hub, "POST", "/api/v1/exchanges", e.hubTok, map[string]any{"order_id": id, "customer_id": c.Data["id"], "return_lines": back,
		"line_items": []any{map[string]any{"product_id": product, "quantity": 1}}})
	if x.status != 200 || x.body["data"].(map[string]any)["due"] != float64(0) {
		t.Fatalf("an exchange at the hub: %d %v", x.status, x.body)
	}
	n := x.body["data"].(map[string]any)["order"].(map[string]any)["id"].(string)
	if got := agreed(t, e, n); got["status"] != "completed" || got["paid_total"] != float64(6600) {
		t.Fatalf("the exchange's order at the store: %v", money(got))
	}
	if got := agreed(t, e, id); got["status"] != "refunded" {
		t.Fatalf("the returned order: %v", money(got))
	}
}
