package httpapi_test

import (
	"encoding/json"
	"reflect"
	"testing"

	"kassa.dev/shared/kassa"
)

// TestCreatedOrderIsWhatAReadReturns guards the create path, which answers
// with the order assembled from what it wrote instead of reading it back:
// the answer must be exactly what GET /orders/:id returns.
func TestCreatedOrderIsWhatAReadReturns(t *testing.T) {
	tn := MustStartNode(t, kassa.NodeEdge, nil)
	o := tn.MustOrg("Echo Cafe")
	loc := tn.Do("POST", "/api/v1/locations", o.Owner, map[string]any{"name": "Echo", "timezone": "UTC"}).Data()["id"]
	p1 := tn.Do("POST", "/api/v1/catalog/products", o.Owner, map[string]any{"name": "Flat White", "sku": "E-1", "base_price": 480}).Data()["id"].(string)
	p2 := tn.Do("POST", "/api/v1/catalog/products", o.Owner, map[string]any{"name": "Scone", "sku": "E-2", "base_price": 395}).Data()["id"].(string)
	g := tn.Do("POST", "/api/v1/catalog/modifiers/groups", o.Owner, map[string]any{"name": "Milk", "product_ids": []string{p1},
		"options": []any{map[string]any{"name": "Oat", "price_adjustment": 70}}}).Data()
	oat := g["options"].([]any)[0].(map[string]any)["id"]
	cust := tn.Do("POST", "/api/v1/customers", o.Owner, map[string]any{"first_name": "Ed", "email": "ed@echo.test"}).Data()["id"]
	r := tn.Do("POST", "/api/v1/orders", o.Owner, map[string]any{"location_id": loc, "customer_id": cust, "channel": "online",
		"notes": "no foam", "discount": map[string]any{"type": "amount", "value": 50},
		"line_items": []any{
			map[string]any{"product_id": p1, "quantity": 2, "modifier_option_ids": []any{oat}, "discount": map[string]any{"type": "percent", "value": 1000}},
			map[string]any{"product_id": p2, "quantity": 1},
		}})
	if r.Status != 201 {
		t.Fatalf("create: %d %s", r.Status, r.Body)
	}
	created := r.Data()
	read := tn.Do("GET", "/api/v1/orders/"+created["id"].(string), o.Owner, nil).Data()
	if !reflect.DeepEqual(created, read) {
		a, _ := json.Marshal(created)
		b, _ := json.Marshal(read)
		t.Fatalf("created and read differ:\n%s\n%s", a, b)
	}
}

// TestCompletedOrderIsWhatAReadReturns does the same for completion.
func TestCompletedOrderIsWhatAReadReturns(t *testing.T) {
	tn := MustStartNode(t, kassa.NodeEdge, nil)
	o := tn.MustOrg("Echo Two")
	loc := tn.Do("POST", "/api/v1/locations", o.Owner, map[string]any{"name": "Echo", "timezone": "UTC"}).Data()["id"]
	p := tn.Do("POST", "/api/v1/catalog/products", o.Owner, map[string]any{"name": "Tea", "sku": "T-1", "base_price": 400}).Data()["id"]
	tn.Do("POST", "/api/v1/loyalty/programs", o.Owner, map[string]any{"name": "Beans", "points_per_unit": 1, "redemption_value": 10})
	cust := tn.Do("POST", "/api/v1/customers", o.Owner, map[string]any{"first_name": "Ed", "email": "ed@two.test"}).Data()["id"]
	tn.Do("POST", "/api/v1/loyalty/accounts", o.Owner, map[string]any{"customer_id": cust})
	ord := tn.Do("POST", "/api/v1/orders", o.Owner, map[string]any{"location_id": loc, "customer_id": cust,
		"line_items": []any{map[string]any{"product_id": p, "quantity": 3}}}).Data()
	id := ord["id"].(string)
	tn.Do("POST", "/api/v1/payments/initiate", o.Owner, map[string]any{"order_id": id, "amount": 500, "method": "cash"})
	tn.Do("POST", "/api/v1/payments/initiate", o.Owner, map[string]any{"order_id": id, "amount": ord["total"].(float64) - 500, "method": "cash", "tendered": 2000})
	tn.Do("POST", "/api/v1/kds/tickets/"+id+"/bump", o.Owner, nil)
	r := tn.Do("POST", "/api/v1/orders/"+id+"/complete", o.Owner, nil)
	if r.Status != 200 {
		t.Fatalf("complete: %d %s", r.Status, r.Body)
	}
	done := r.Data()
	read := tn.Do("GET", "/api/v1/orders/"+id, o.Owner, nil).Data()
	if !reflect.DeepEqual(done, read) || done["loyalty_points_earned"].(float64) != 12 || len(done["payments"].([]any)) != 2 {
		a, _ := json.Marshal(done)
		b, _ := json.Marshal(read)
		t.Fatalf("completed and read differ:\n%s\n%s", a, b)
	}
}
