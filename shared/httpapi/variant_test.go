package httpapi_test

import (
	"encoding/json"
	"testing"

	"kassa.dev/shared/kassa"
	"kassa.dev/shared/node"
)

// catalogNodes are the nodes the catalog's capabilities are tested at:
// the hub, an edge, and an edge cut off from its hub.
var catalogNodes = []struct {
	name  string
	kind  string
	tweak func(*node.Config)
}{
	{"hub", kassa.NodeHub, nil},
	{"edge", kassa.NodeEdge, nil},
	{"offline edge", kassa.NodeEdge, func(c *node.Config) { c.Offline = func() bool { return true } }},
}

// TestVariantsAreSoldWithTheirOwnSkuPriceAndStock: a T-shirt with sizes M
// (its own price) and L (the product's); an order line names the product
// and the variant, sells at the variant's price and moves only its stock.
// A variant's sku taken by a product or another variant is a 409 naming
// sku; a line of a product with variants without one, or with another
// product's, is a 422 naming variant_id; nothing is stored.
func TestVariantsAreSoldWithTheirOwnSkuPriceAndStock(t *testing.T) {
	for _, n := range catalogNodes {
		t.Run(n.name, func(t *testing.T) {
			f := ordFixtureOn(t, MustStartNode(t, n.kind, n.tweak))
			tee := f.product("Tee", "TEE", 2000)
			mug := f.product("Mug", "MUG", 900)
			m := f.must(f.do("POST", "/catalog/products/"+tee+"/variants", "", map[string]any{"options": map[string]any{"size": "M"},
				"sku": "TEE-M", "base_price": 2200, "barcodes": []string{"9300000000029"}}), 201).Data()
			l := f.must(f.do("POST", "/catalog/products/"+tee+"/variants", f.manager, map[string]any{"options": map[string]any{"size": "L"}, "sku": "TEE-L"}), 201).Data()
			if m["variant_of"] != tee || m["name"] != "Tee M" || ordNum(m["base_price"]) != 2200 || l["name"] != "Tee L" || ordNum(l["base_price"]) != 2000 {
				t.Fatalf("variants %v and %v", m, l)
			}
			mID, lID := m["id"].(string), l["id"].(string)

			before := f.tn.outboxLen()
			for _, sku := range []string{"TEE-M", "TEE", "MUG"} {
				f.refused(t, f.do("POST", "/catalog/products/"+tee+"/variants", "", map[string]any{"options": map[string]any{"size": "S"}, "sku": sku}), 409, "conflict", "sku", before)
			}
			f.refused(t, f.do("POST", "/catalog/products/"+tee+"/variants", "", map[string]any{"options": map[string]any{}, "sku": "TEE-S"}), 422, "validation", "options", before)
			f.refused(t, f.do("POST", "/catalog/products/"+mID+"/variants", "", map[string]any{"options": map[string]any{"fit": "slim"}, "sku": "TEE-M-SLIM"}), 422, "validation", "variant_of", before)
			f.refused(t, f.do("POST", "/catalog/products/"+tee+"/variants", f.cashier, map[string]any{"options": map[string]any{"size": "S"}, "sku": "TEE-S"}), 403, "forbidden", "", before)
			f.refused(t, f.do("PATCH", "/catalog/products/"+mID, "", map[string]any{"options": map[string]any{"size": "XL"}}), 422, "validation", "options", before)
			f.refused(t, f.do("POST", "/orders", "", map[string]any{"location_id": f.locA, "line_items": []any{map[string]any{"product_id": tee, "quantity": 1}}}),
				422, "validation", "line_items[0].variant_id", before)
			f.refused(t, f.do("POST", "/orders", "", map[string]any{"location_id": f.locA, "line_items": []any{map[string]any{"product_id": mug, "variant_id": mID, "quantity": 1}}}),
				422, "validation", "line_items[0].variant_id", before)

			if got := f.must(f.do("GET", "/catalog/products/"+tee+"/variants", f.cashier, nil), 200).List(); len(got) != 2 {
				t.Fatalf("the tee's variants: %v", got)
			}
			if got := f.must(f.do("GET", "/catalog/products", "", nil), 200).List(); len(got) != 2 {
				t.Fatalf("the product list shows %d rows, want the tee and the mug (not their variants)", len(got))
			}
			if got := f.must(f.do("GET", "/catalog/products?include_variants=true", "", nil), 200).List(); len(got) != 4 {
				t.Fatalf("the product list with variants shows %d rows, want 4", len(got))
			}
			if got := f.must(f.do("GET", "/catalog/products?q=9300000000029", "", nil), 200).List(); len(got) != 1 || got[0].(map[string]any)["id"] != mID {
				t.Fatalf("a scan of the variant's barcode finds %v", got)
			}

			f.receive(f.locA, mID, 5)
			f.receive(f.locA, lID, 5)
			o := f.order(map[string]any{"location_id": f.locA, "line_items": []any{map[string]any{"product_id": tee, "variant_id": mID, "quantity": 2}}})
			line := o["line_items"].([]any)[0].(map[string]any)
			if line["product_id"] != tee || line["variant_id"] != mID || line["sku"] != "TEE-M" || line["name"] != "Tee M" || ordNum(line["unit_price"]) != 2200 || ordNum(o["total"]) != 4400 {
				t.Fatalf("the variant's line %v, total %v", line, o["total"])
			}
			f.payCash(o["id"].(string), 4400)
			f.complete(o["id"].(string))
			if got := []int64{f.onHand(f.locA, mID), f.onHand(f.locA, lID), f.onHand(f.locA, tee)}; got[0] != 3 || got[1] != 5 || got[2] != 0 {
				t.Fatalf("on hand M, L, the tee: %v, want [3 5 0]", got)
			}
			if got := f.get(o["id"].(string))["line_items"].([]any)[0].(map[string]any); got["variant_id"] != mID {
				t.Fatalf("the line read back: %v", got)
			}
		})
	}
}

// TestABundleSellsAsOneLineAndMovesItsComponents: a gift pack of two tees
// (M) and a mug at its own price; its availability is its scarcest
// component's; selling one moves each component, a refund with restock
// returns them. A bundle containing itself (directly or through another
// bundle) or a product with variants is a 422 naming components, and
// nothing is stored.
func TestABundleSellsAsOneLineAndMovesItsComponents(t *testing.T) {
	for _, n := range catalogNodes {
		t.Run(n.name, func(t *testing.T) {
			f := ordFixtureOn(t, MustStartNode(t, n.kind, n.tweak))
			tee := f.product("Tee", "TEE", 2000)
			m := f.create("/catalog/products/"+tee+"/variants", map[string]any{"options": map[string]any{"size": "M"}, "sku": "TEE-M"})
			mug := f.product("Mug", "MUG", 900)
			pack := f.create("/catalog/products", map[string]any{"name": "Gift pack", "sku": "PACK", "base_price": 4000,
				"components": []any{map[string]any{"product_id": m, "quantity": 2}, map[string]any{"product_id": mug, "quantity": 1}}})
			box := f.create("/catalog/products", map[string]any{"name": "Gift box", "sku": "BOX", "base_price": 5000,
				"components": []any{map[string]any{"product_id": pack, "quantity": 1}}})

			before := f.tn.outboxLen()
			f.refused(t, f.do("PATCH", "/catalog/products/"+pack, "", map[string]any{"components": []any{map[string]any{"product_id": pack, "quantity": 1}}}),
				422, "validation", "components", before)
			f.refused(t, f.do("PATCH", "/catalog/products/"+pack, "", map[string]any{"components": []any{map[string]any{"product_id": box, "quantity": 1}}}),
				422, "validation", "components", before)
			f.refused(t, f.do("POST", "/catalog/products", "", map[string]any{"name": "X", "sku": "X", "base_price": 1,
				"components": []any{map[string]any{"product_id": tee, "quantity": 1}}}), 422, "validation", "components", before)
			f.refused(t, f.do("POST", "/catalog/products", "", map[string]any{"name": "X", "sku": "X", "base_price": 1,
				"components": []any{map[string]any{"product_id": mug, "quantity": 0}}}), 422, "validation", "components", before)
			f.refused(t, f.do("POST", "/catalog/products/"+pack+"/variants", "", map[string]any{"options": map[string]any{"size": "S"}, "sku": "PACK-S"}),
				422, "validation", "variant_of", before)
			f.refused(t, f.do("POST", "/inventory/stock/adjust", "", map[string]any{"location_id": f.locA, "product_id": pack, "reason": "received", "quantity": 5}),
				422, "validation", "product_id", before)

			f.receive(f.locA, m, 9)
			f.receive(f.locA, mug, 3)
			avail := func(id string) int64 {
				t.Helper()
				return ordNum(f.must(f.do("GET", "/catalog/products/"+id+"/availability?location_id="+f.locA, f.cashier, nil), 200).Data()["available"])
			}
			if a, b := avail(pack), avail(box); a != 3 || b != 3 {
				t.Fatalf("available packs %d, boxes %d; want 3 (3 mugs)", a, b)
			}
			o := f.order(map[string]any{"location_id": f.locA, "line_items": []any{map[string]any{"product_id": box, "quantity": 1}}})
			if ordNum(o["total"]) != 5000 || len(o["line_items"].([]any)) != 1 {
				t.Fatalf("the box sold as %v", o)
			}
			id := o["id"].(string)
			f.payCash(id, 5000)
			f.complete(id)
			if got := []int64{f.onHand(f.locA, m), f.onHand(f.locA, mug), f.onHand(f.locA, pack), f.onHand(f.locA, box)}; got[0] != 7 || got[1] != 2 || got[2] != 0 || got[3] != 0 {
				t.Fatalf("on hand M, mug, pack, box: %v, want [7 2 0 0]", got)
			}
			if a := avail(pack); a != 2 {
				t.Fatalf("available packs after the sale: %d, want 2", a)
			}
			line := f.get(id)["line_items"].([]any)[0].(map[string]any)["id"].(string)
			f.must(f.do("POST", "/orders/"+id+"/refund", "", map[string]any{"reason": "gift returned", "restock": true,
				"line_items": []any{map[string]any{"line_item_id": line, "quantity": 1}}}), 200)
			if got := []int64{f.onHand(f.locA, m), f.onHand(f.locA, mug)}; got[0] != 9 || got[1] != 3 {
				t.Fatalf("on hand M, mug after the restocked refund: %v, want [9 3]", got)
			}
			f.refused(t, f.do("GET", "/catalog/products/"+pack+"/availability", "", nil), 400, "bad-request", "", f.tn.outboxLen())
			f.refused(t, f.do("GET", "/catalog/products/"+pack+"/availability?location_id="+ordNoSuchID, "", nil), 422, "validation", "location_id", f.tn.outboxLen())
		})
	}
}

// TestTheGraphQLCatalogShowsVariantsBundlesAndTaxCategories: what the
// REST catalog gained is in the GraphQL view too, where the spec's schema
// allows it (added fields, no new operations): a product's variants with
// their options and prices, a bundle's components, and the product's and
// category's tax categories; the product list, like REST's, leaves the
// variants out.
func TestTheGraphQLCatalogShowsVariantsBundlesAndTaxCategories(t *testing.T) {
	for _, n := range catalogNodes {
		t.Run(n.name, func(t *testing.T) {
			f := ordFixtureOn(t, MustStartNode(t, n.kind, n.tweak))
			f.settings(map[string]any{"tax_categories": []any{map[string]any{"id": "gst-free", "name": "GST-free", "rate_bps": 0}}})
			cat := f.create("/catalog/categories", map[string]any{"name": "Bakery", "tax_category_id": "gst-free"})
			tee := f.create("/catalog/products", map[string]any{"name": "Tee", "sku": "TEE", "base_price": 2000, "category_id": cat, "tax_category_id": "gst-free"})
			m := f.create("/catalog/products/"+tee+"/variants", map[string]any{"options": map[string]any{"size": "M", "colour": "red"}, "sku": "TEE-M", "base_price": 2250})
			pack := f.create("/catalog/products", map[string]any{"name": "Pack", "sku": "PACK", "base_price": 4000,
				"components": []any{map[string]any{"product_id": m, "quantity": 2}}})
			d := f.tn.gql(f.cashier, `query($id: ID!, $pack: ID!) {
				product(id: $id) { taxCategoryId category { taxCategoryId } variants { id sku basePrice variantOf options { name value } } }
				pack: product(id: $pack) { components { productId quantity } variantOf options { name } }
				products { sku } }`, map[string]any{"id": tee, "pack": pack}).ok(t)
			got, _ := json.Marshal(d)
			want := `{"pack":{"components":[{"productId":"` + m + `","quantity":2}],"options":[],"variantOf":null},` +
				`"product":{"category":{"taxCategoryId":"gst-free"},"taxCategoryId":"gst-free","variants":[{"basePrice":22.5,"id":"` + m +
				`","options":[{"name":"colour","value":"red"},{"name":"size","value":"M"}],"sku":"TEE-M","variantOf":"` + tee + `"}]},` +
				`"products":[{"sku":"TEE"},{"sku":"PACK"}]}`
			if string(got) != want {
				t.Fatalf("GraphQL catalog:\n got  %s\n want %s", got, want)
			}
		})
	}
}

// TestABundleEditedBetweenTwoSalesMovesItsNewComponents: the completion
// reads the bundles' components from memory on SQLite (catalogCache); a
// bundle edited after a sale moves its new components at the next one,
// on the edge as on the hub.
func TestABundleEditedBetweenTwoSalesMovesItsNewComponents(t *testing.T) {
	for _, n := range catalogNodes {
		t.Run(n.name, func(t *testing.T) {
			f := ordFixtureOn(t, MustStartNode(t, n.kind, n.tweak))
			mug, cup := f.product("Mug", "MUG", 900), f.product("Cup", "CUP", 500)
			pack := f.create("/catalog/products", map[string]any{"name": "Pack", "sku": "PACK", "base_price": 1500,
				"components": []any{map[string]any{"product_id": mug, "quantity": 1}}})
			f.receive(f.locA, mug, 5)
			f.receive(f.locA, cup, 5)
			sell := func() {
				t.Helper()
				id := f.order(map[string]any{"location_id": f.locA, "line_items": []any{map[string]any{"product_id": pack, "quantity": 1}}})["id"].(string)
				f.payCash(id, 1500)
				f.complete(id)
			}
			sell()
			f.must(f.do("PATCH", "/catalog/products/"+pack, "", map[string]any{"components": []any{map[string]any{"product_id": cup, "quantity": 2}}}), 200)
			sell()
			if got := []int64{f.onHand(f.locA, mug), f.onHand(f.locA, cup)}; got[0] != 4 || got[1] != 3 {
				t.Fatalf("on hand mug, cup after a pack of a mug then a pack of two cups: %v, want [4 3]", got)
			}
		})
	}
}
