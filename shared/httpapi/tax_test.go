package httpapi_test

import (
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"kassa.dev/shared/kassa"
)

// Tax by item through HTTP (docs/tax.md): the org's tax categories in its
// settings, a category's and a product's tax category (the product's
// wins), an order's lines taxed at their rates with the tax broken down by
// rate on the order, its receipt and the tax report; a refund of the
// GST-free line returns no tax. Bad references are 422 naming the field;
// a category still named cannot be removed from the settings (409); and
// nothing refused is stored.
func TestTaxCategoriesPriceAnOrderByRateThroughTheAPI(t *testing.T) {
	for _, kind := range []string{kassa.NodeHub, kassa.NodeEdge} {
		t.Run(kind, func(t *testing.T) {
			f := ordFixtureOn(t, MustStartNode(t, kind, nil))
			cats := []any{map[string]any{"id": "gst-free", "name": "GST-free", "rate_bps": 0},
				map[string]any{"id": "reduced", "name": "Reduced", "rate_bps": 500}}
			st := f.settings(map[string]any{"tax_rate_bps": 1000, "tax_inclusive": true, "tax_categories": cats})
			if got, _ := json.Marshal(st["tax_categories"]); string(got) != `[{"id":"gst-free","name":"GST-free","rate_bps":0},{"id":"reduced","name":"Reduced","rate_bps":500}]` {
				t.Fatalf("settings' tax_categories: %s", got)
			}
			bakery := f.create("/catalog/categories", map[string]any{"name": "Bakery", "tax_category_id": "gst-free"})
			bread := f.create("/catalog/products", map[string]any{"name": "Loaf", "sku": "LOAF", "base_price": 650, "category_id": bakery})
			cake := f.create("/catalog/products", map[string]any{"name": "Cake", "sku": "CAKE", "base_price": 420, "category_id": bakery,
				"tax_category_id": "reduced"}) // the product's category wins over its category's
			coffee := f.product("Flat white", "FW", 550)

			before := f.tn.outboxLen()
			f.refused(t, f.do("POST", "/catalog/products", "", map[string]any{"name": "X", "sku": "X", "base_price": 1, "tax_category_id": "zero"}),
				422, "validation", "tax_category_id", before)
			f.refused(t, f.do("PATCH", "/catalog/categories/"+bakery, "", map[string]any{"tax_category_id": "Not A Key"}), 422, "validation", "tax_category_id", before)
			f.refused(t, f.do("PATCH", "/settings", "", map[string]any{"tax_categories": cats[1:]}), 409, "conflict", "", before)
			f.refused(t, f.do("PATCH", "/settings", "", map[string]any{"tax_categories": []any{cats[0], cats[0]}}), 422, "validation", "tax_categories", before)

			o := f.order(map[string]any{"location_id": f.locA, "line_items": []any{
				map[string]any{"product_id": bread, "quantity": 1}, map[string]any{"product_id": cake, "quantity": 1},
				map[string]any{"product_id": coffee, "quantity": 2}}})
			// 650 at 0; 420 at 5 % incl. = 20; 1100 at 10 % incl. = 100.
			wantBreakdown := `[{"rate_bps":0,"tax":0,"taxable":650},{"rate_bps":500,"tax":20,"taxable":400},{"rate_bps":1000,"tax":100,"taxable":1000}]`
			if got, _ := json.Marshal(o["tax_breakdown"]); string(got) != wantBreakdown || ordNum(o["tax_total"]) != 120 || ordNum(o["total"]) != 2170 {
				t.Fatalf("order tax_total %v total %v breakdown %s, want %s", o["tax_total"], o["total"], got, wantBreakdown)
			}
			id := o["id"].(string)
			f.payCash(id, 2170)
			f.complete(id)
			if got, _ := json.Marshal(f.get(id)["tax_breakdown"]); string(got) != wantBreakdown {
				t.Fatalf("the order read back breaks its tax down as %s", got)
			}
			var breadLine string
			for _, l := range o["line_items"].([]any) {
				if m := l.(map[string]any); m["product_id"] == bread {
					breadLine = m["id"].(string)
				}
			}
			rf := f.must(f.do("POST", "/orders/"+id+"/refund", "", map[string]any{"reason": "stale",
				"line_items": []any{map[string]any{"line_item_id": breadLine, "quantity": 1}}}), 200).Data()
			refunds := rf["refunds"].([]any)
			refundID := refunds[len(refunds)-1].(map[string]any)["id"].(string)
			taxes := func(q string) string {
				got, _ := json.Marshal(f.must(f.do("GET", "/orders/"+id+"/receipt"+q, "", nil), 200).Data()["taxes"])
				return string(got)
			}
			if got := taxes(""); got != `[{"net":650,"rate_bps":0,"tax":0},{"net":400,"rate_bps":500,"tax":20},{"net":1000,"rate_bps":1000,"tax":100}]` {
				t.Fatalf("sale receipt's taxes: %s", got)
			}
			if got := taxes("?refund_id=" + refundID); got != `[{"net":650,"rate_bps":0,"tax":0}]` {
				t.Fatalf("the loaf's refund receipt's taxes: %s", got)
			}
			today := time.Now().UTC().Format(time.DateOnly)
			got := map[int64]string{}
			for _, r := range repRows(t, f.tn, f.org.Owner, "/reports/tax?date_from="+today+"&date_to="+today) {
				got[int64(r["rate_bps"].(float64))] = fmt.Sprintf("sales %v tax %v refunds %v refund_tax %v", r["sales"], r["tax"], r["refunds"], r["refund_tax"])
			}
			want := map[int64]string{0: "sales 650 tax 0 refunds 650 refund_tax 0", 500: "sales 420 tax 20 refunds 0 refund_tax 0",
				1000: "sales 1100 tax 100 refunds 0 refund_tax 0"}
			if fmt.Sprint(got) != fmt.Sprint(want) {
				t.Fatalf("tax report by rate:\n got  %v\n want %v", got, want)
			}
		})
	}
}
