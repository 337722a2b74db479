package synctest

import (
	"testing"
	"time"

	"kassa.dev/sync/wait"
)

// TestAPriceChangedAtTheHubPricesTheEdgesNextSale (docs/write-path.md,
// the catalog cache): the edge prices a sale, which keeps what it read of
// the catalog in memory; the hub changes the product's price; once the
// change reached the edge by sync, the edge's next sale is priced at the
// new price, not at the remembered one.
func TestAPriceChangedAtTheHubPricesTheEdgesNextSale(t *testing.T) {
	e := MustStartPair(t)
	wait.For(t, 20*time.Second, "the demo catalog at the edge", func() bool { return len(e.products(t, e.edge, e.edgeTok)) == 15 })
	product := e.products(t, e.edge, e.edgeTok)[0]
	id, price := product["id"].(string), product["base_price"].(float64)
	unitPrice := func() any {
		var o oneResp
		if st := e.edge.Call(t, "POST", "/api/v1/orders", e.edgeTok, map[string]any{"location_id": e.location,
			"line_items": []any{map[string]any{"product_id": id, "quantity": 1}}}, &o); st != 201 {
			t.Fatalf("a sale at the edge: %d %v", st, o.Data)
		}
		return o.Data["line_items"].([]any)[0].(map[string]any)["unit_price"]
	}
	if got := unitPrice(); got != price {
		t.Fatalf("the first sale's unit price: %v, want the base price %v", got, price)
	}
	if st := e.hub.Call(t, "PATCH", "/api/v1/catalog/products/"+id, e.hubTok, map[string]any{"base_price": price + 100}, nil); st != 200 {
		t.Fatalf("the price change at the hub: %d", st)
	}
	wait.For(t, 20*time.Second, "the new price at the edge", func() bool {
		var p oneResp
		return e.edge.Call(t, "GET", "/api/v1/catalog/products/"+id, e.edgeTok, nil, &p) == 200 && p.Data["base_price"] == price+100
	})
	if got := unitPrice(); got != price+100 {
		t.Fatalf("the sale after the change reached the edge: unit price %v, want %v", got, price+100)
	}
}
