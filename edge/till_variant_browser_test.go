package main

import (
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"kassa.dev/shared/demo"
	"kassa.dev/web/webtest"
)

// TestTillSellsAVariantByTouchAndABundleInChromium (issue 26,
// docs/catalog.md): a T-shirt in sizes S and M (M at its own price,
// marked down 25 % this week) and a gift pack of a tee M and a mug. At
// the till, by touch, the tee's tile opens the options dialog with its
// sizes; Add waits for a size; M is picked; the pack is a tile like any
// product. The order's line names the variant, M's stock and the mug's
// move (the pack's own does not), and the receipt shows the tee's
// original price and the markdown. Screenshots:
// $KASSA_SCREENSHOTS/till-variant-pick.png, till-markdown-receipt.png.
func TestTillSellsAVariantByTouchAndABundleInChromium(t *testing.T) {
	c := startConsole(t, 1024, 768)
	front := c.till("Front till")
	owner := c.p.Login(t, "owner@demo.test", demo.Password)
	tee := c.call("POST", "/api/v1/catalog/products", owner, map[string]any{"name": "Tee", "sku": "TEE", "base_price": 2000}, 201)["id"].(string)
	c.call("POST", "/api/v1/catalog/products/"+tee+"/variants", owner, map[string]any{"options": map[string]any{"size": "S"}, "sku": "TEE-S"}, 201)
	m := c.call("POST", "/api/v1/catalog/products/"+tee+"/variants", owner, map[string]any{"options": map[string]any{"size": "M"}, "sku": "TEE-M", "base_price": 2200}, 201)["id"].(string)
	mug := c.call("POST", "/api/v1/catalog/products", owner, map[string]any{"name": "Mug", "sku": "MUG", "base_price": 900}, 201)["id"].(string)
	pack := c.call("POST", "/api/v1/catalog/products", owner, map[string]any{"name": "Gift pack", "sku": "PACK", "base_price": 2800,
		"components": []any{map[string]any{"product_id": m, "quantity": 1}, map[string]any{"product_id": mug, "quantity": 1}}}, 201)["id"].(string)
	now := time.Now().UTC()
	c.call("POST", "/api/v1/catalog/markdowns", owner, map[string]any{"name": "Tee week", "type": "percent", "value": 2500, "product_ids": []string{tee},
		"starts_at": now.Add(-time.Hour), "ends_at": now.Add(7 * 24 * time.Hour)}, 201)
	for _, id := range []string{m, mug} {
		c.call("POST", "/api/v1/inventory/stock/adjust", c.manager, map[string]any{"location_id": c.shop.location, "product_id": id, "reason": "received", "quantity": 5}, 200)
	}

	cashier := webtest.NewCashier(t, c.b)
	cashier.Do("a till", chromedp.EmulateViewport(1024, 768))
	cashier.SignIn(c.p.URL, "cashier@demo.test", demo.Password)
	cashier.SetUp(front)
	cashier.OpenDrawer(map[int64]int{5000: 2}, "")
	cashier.Do("the tee", chromedp.Click(webtest.Tile("TEE")), chromedp.WaitVisible(`#mods-groups button[data-variant="TEE-M"]`))
	cashier.Poll("Add waits for a size", `document.getElementById('mods-ok').disabled`)
	cashier.Do("size M", chromedp.Click(`#mods-groups button[data-variant="TEE-M"]`))
	cashier.Poll("M chosen", `document.querySelector('#mods-groups button[data-variant="TEE-M"]').getAttribute('aria-pressed') === 'true' && !document.getElementById('mods-ok').disabled`)
	cashier.Shot("till-variant-pick")
	cashier.Do("add it", chromedp.Click("#mods-ok"))
	cashier.Do("the gift pack", chromedp.Click(webtest.Tile("PACK")))
	cashier.Priced(2)
	if got := cashier.Text("#lines"); !strings.Contains(got, "Tee M") || !strings.Contains(got, "16.50") || !strings.Contains(got, "Gift pack") {
		t.Fatalf("the cart says %q, want Tee M at 16.50 (22.00 less 25 %%) and the gift pack", got)
	}
	cashier.PayQuickCash("", "")
	cashier.Poll("the markdown on the receipt", `[...document.querySelectorAll('#receipt .markdown')].some(e => e.textContent.includes('22.00'))`)
	cashier.Shot("till-markdown-receipt")
	number := cashier.Text("#receipt .code")

	var l struct {
		Data []map[string]any `json:"data"`
	}
	c.p.Call(t, "GET", "/api/v1/orders?number="+number, c.manager, nil, &l)
	if len(l.Data) != 1 {
		t.Fatalf("orders numbered %s: %d", number, len(l.Data))
	}
	lines := l.Data[0]["line_items"].([]any)
	first, second := lines[0].(map[string]any), lines[1].(map[string]any)
	if first["product_id"] != tee || first["variant_id"] != m || first["unit_price"] != float64(1650) || first["original_price"] != float64(2200) || second["product_id"] != pack {
		t.Fatalf("the order's lines: %v", lines)
	}
	stock := func(id string) float64 {
		var s struct {
			Data []map[string]any `json:"data"`
		}
		c.p.Call(t, "GET", "/api/v1/inventory/stock?location_id="+c.shop.location+"&product_id="+id, c.manager, nil, &s)
		if len(s.Data) == 0 {
			return 0
		}
		return s.Data[0]["on_hand"].(float64)
	}
	if got := []float64{stock(m), stock(mug), stock(pack)}; got[0] != 3 || got[1] != 4 || got[2] != 0 {
		t.Fatalf("on hand M, mug, pack: %v, want [3 4 0]", got)
	}
	cashier.NoJSErrors()
}
