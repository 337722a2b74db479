package httpapi_test

import (
	"encoding/json"
	"strings"
	"testing"
	"time"
)

// TestAMarkdownLowersThePriceBeforeCampaignsAndShowsOnTheReceipt: a winter
// markdown of 25 % on a category and a new price of 80.00 on the coat; the
// coat takes the lower (75.00), the GST-free hat 15.00, and a 10 % campaign
// on the hat comes off the marked-down price. Each line keeps its original
// price, the receipt shows it and the markdown, tax by rate sums to the
// tax total. Withdrawn, the markdown no longer prices; a markdown that
// would raise a price (or keep it) is a 422 on value, and nothing is
// stored.
func TestAMarkdownLowersThePriceBeforeCampaignsAndShowsOnTheReceipt(t *testing.T) {
	for _, n := range catalogNodes {
		t.Run(n.name, func(t *testing.T) {
			f := ordFixtureOn(t, MustStartNode(t, n.kind, n.tweak))
			f.settings(map[string]any{"tax_rate_bps": 1000, "tax_inclusive": true,
				"tax_categories": []any{map[string]any{"id": "gst-free", "name": "GST-free", "rate_bps": 0}}})
			outer := f.create("/catalog/categories", map[string]any{"name": "Outerwear"})
			coat := f.create("/catalog/products", map[string]any{"name": "Coat", "sku": "COAT", "base_price": 10000, "category_id": outer})
			hat := f.create("/catalog/products", map[string]any{"name": "Hat", "sku": "HAT", "base_price": 2000, "category_id": outer, "tax_category_id": "gst-free"})
			now := time.Now().UTC()
			window := func(body map[string]any) map[string]any {
				body["starts_at"], body["ends_at"] = now.Add(-time.Hour), now.Add(time.Hour)
				return body
			}

			before := f.tn.outboxLen()
			f.refused(t, f.do("POST", "/catalog/markdowns", "", window(map[string]any{"name": "Up", "type": "price", "value": 12000, "product_ids": []string{coat}})),
				422, "validation", "value", before)
			f.refused(t, f.do("POST", "/catalog/markdowns", "", window(map[string]any{"name": "Same", "type": "price", "value": 2000, "category_ids": []string{outer}})),
				422, "validation", "value", before)
			f.refused(t, f.do("POST", "/catalog/markdowns", "", window(map[string]any{"name": "None", "type": "percent", "value": 0, "product_ids": []string{coat}})),
				422, "validation", "value", before)
			f.refused(t, f.do("POST", "/catalog/markdowns", "", map[string]any{"name": "Back", "type": "percent", "value": 100, "product_ids": []string{coat},
				"starts_at": now, "ends_at": now.Add(-time.Hour)}), 422, "validation", "ends_at", before)
			f.refused(t, f.do("POST", "/catalog/markdowns", "", window(map[string]any{"name": "Ghost", "type": "percent", "value": 100, "product_ids": []string{ordNoSuchID}})),
				422, "validation", "product_ids", before)
			f.refused(t, f.do("POST", "/catalog/markdowns", f.cashier, window(map[string]any{"name": "Mine", "type": "percent", "value": 100, "product_ids": []string{coat}})),
				403, "forbidden", "", before)

			winter := f.create("/catalog/markdowns", window(map[string]any{"name": "Winter", "type": "percent", "value": 2500, "category_ids": []string{outer}}))
			f.create("/catalog/markdowns", window(map[string]any{"name": "Coat deal", "type": "price", "value": 8000, "product_ids": []string{coat}}))
			camp := f.create("/campaigns", map[string]any{"name": "Hats 10 %", "type": "discount", "rules": []any{map[string]any{"type": "product_discount",
				"discount_type": "percent", "value": 1000, "product_ids": []string{hat}}}})
			f.must(f.do("POST", "/campaigns/"+camp+"/launch", "", nil), 200)

			o := f.order(map[string]any{"location_id": f.locA, "line_items": []any{map[string]any{"product_id": coat, "quantity": 1},
				map[string]any{"product_id": hat, "quantity": 2}}})
			lines := o["line_items"].([]any)
			c, h := lines[0].(map[string]any), lines[1].(map[string]any)
			if ordNum(c["unit_price"]) != 7500 || ordNum(c["original_price"]) != 10000 || c["markdown_id"] != winter ||
				ordNum(h["unit_price"]) != 1500 || ordNum(h["original_price"]) != 2000 || ordNum(h["discount"]) != 300 {
				t.Fatalf("lines: coat %v, hat %v", c, h)
			}
			// Coat 7500 with 10 % GST included: 682; hats 3000 − 300 GST-free.
			wantBreakdown := `[{"rate_bps":0,"tax":0,"taxable":2700},{"rate_bps":1000,"tax":682,"taxable":6818}]`
			if got, _ := json.Marshal(o["tax_breakdown"]); string(got) != wantBreakdown || ordNum(o["total"]) != 10200 || ordNum(o["tax_total"]) != 682 || ordNum(o["subtotal"]) != 10500 {
				t.Fatalf("order subtotal %v total %v tax %v breakdown %s", o["subtotal"], o["total"], o["tax_total"], got)
			}
			id := o["id"].(string)
			f.payCash(id, 10200)
			f.complete(id)
			r := f.must(f.do("GET", "/orders/"+id+"/receipt", "", nil), 200).Data()
			rl := r["lines"].([]any)
			if a, b := rl[0].(map[string]any), rl[1].(map[string]any); ordNum(a["original_price"]) != 10000 || ordNum(a["markdown"]) != 2500 ||
				ordNum(b["original_price"]) != 2000 || ordNum(b["markdown"]) != 1000 {
				t.Fatalf("receipt lines %v", rl)
			}
			if html := f.do("GET", "/orders/"+id+"/receipt?format=html", "", nil); html.Status != 200 || !strings.Contains(string(html.Body), "was 100.00, markdown") {
				t.Fatalf("the printed receipt does not show the markdown: %d %s", html.Status, html.Body)
			}

			f.must(f.do("PATCH", "/catalog/markdowns/"+winter, "", map[string]any{"is_active": false}), 200)
			before = f.tn.outboxLen()
			f.refused(t, f.do("PATCH", "/catalog/markdowns/"+winter, "", map[string]any{"type": "price"}), 422, "validation", "type", before)
			q := f.must(f.do("POST", "/orders/quote", "", map[string]any{"location_id": f.locA, "line_items": []any{map[string]any{"product_id": coat, "quantity": 1},
				map[string]any{"product_id": hat, "quantity": 1}}}), 200).Data()
			ql := q["line_items"].([]any)
			if a, b := ql[0].(map[string]any), ql[1].(map[string]any); ordNum(a["unit_price"]) != 8000 || ordNum(b["unit_price"]) != 2000 || b["original_price"] != nil {
				t.Fatalf("after the winter markdown was withdrawn: coat %v, hat %v", a, b)
			}
			live := f.must(f.do("GET", "/catalog/markdowns?active_at="+time.Now().UTC().Format(time.RFC3339), f.cashier, nil), 200).List()
			if len(live) != 1 || live[0].(map[string]any)["name"] != "Coat deal" {
				t.Fatalf("markdowns applying now: %v", live)
			}
		})
	}
}
