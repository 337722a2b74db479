package main

import (
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"kassa.dev/shared/demo"
	"kassa.dev/web/webtest"
)

// TestConsoleAddsAVariantInChromium (issue 26, docs/catalog.md): in the
// store console a manager picks a product, adds a size with its own sku
// and price (typed in major units), and sees it listed; a sku another
// product has is refused as the API says it (409 naming sku), and nothing
// is added. The variant is sold at its price. Screenshot:
// $KASSA_SCREENSHOTS/console-variants.png.
func TestConsoleAddsAVariantInChromium(t *testing.T) {
	c := startConsole(t, 1024, 768)
	tee := c.call("POST", "/api/v1/catalog/products", c.manager, map[string]any{"name": "Tee", "sku": "TEE", "base_price": 2000}, 201)["id"].(string)
	b := webtest.NewCashier(t, c.b)
	b.Do("a back-office screen", chromedp.EmulateViewport(1024, 1400))
	b.Do("log in", chromedp.Navigate(c.p.URL+"/console"), chromedp.WaitVisible("#login"), chromedp.SendKeys("#email", "manager@demo.test"),
		chromedp.SendKeys("#password", demo.Password), chromedp.Click("#login-btn"), chromedp.WaitReady(`#var-product option[value="`+tee+`"]`))
	b.Do("the tee", chromedp.SetValue("#var-product", tee), chromedp.Evaluate[chromedp.Void](`document.getElementById('var-product').dispatchEvent(new Event('change'))`))
	b.Poll("no variants yet", `document.getElementById('var-rows').textContent.includes('No variants')`)
	b.Do("a taken sku", chromedp.SendKeys("#var-options", "size=M"), chromedp.SendKeys("#var-sku", "TEE"), chromedp.Click("#var-add"))
	b.Poll("the refusal", `document.getElementById('var-msg').textContent.includes('Not added') && document.getElementById('var-msg').textContent.includes('sku')`)
	b.Do("its own sku and price", chromedp.Evaluate[chromedp.Void](`document.getElementById('var-sku').value = ''`), chromedp.SendKeys("#var-sku", "TEE-M"), chromedp.SendKeys("#var-price", "22.50"),
		chromedp.Click("#var-add"))
	b.Poll("the variant listed", `!!document.querySelector('#var-rows tr[data-sku="TEE-M"]')`)
	if got := b.Text(`#var-rows tr[data-sku="TEE-M"]`); !strings.Contains(got, "Tee M") || !strings.Contains(got, "size M") || !strings.Contains(got, "22.50") {
		t.Fatalf("the variant's row says %q", got)
	}
	b.Do("see the section", chromedp.ScrollIntoView("#variants"))
	b.Shot("console-variants")
	var l struct {
		Data []map[string]any `json:"data"`
	}
	c.p.Call(t, "GET", "/api/v1/catalog/products/"+tee+"/variants", c.manager, nil, &l)
	if len(l.Data) != 1 || l.Data[0]["base_price"] != float64(2250) {
		t.Fatalf("the tee's variants: %v, want one at 2250", l.Data)
	}
	b.NoJSErrors()
}
