package main

import (
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"kassa.dev/shared/demo"
	"kassa.dev/web/webtest"
)

// TestTillReturnsAndExchangesInChromium (issue 26, docs/returns.md): by
// touch, a cashier sells two banana breads ($5.50) to Rae, then scans the
// receipt: one comes back onto her store credit (the dialog says her
// balance), the other is exchanged for avocado toast ($16.50) — the
// exchange's return pays $5.50 of it, her store credit $5.50 more, the
// rest in cash. The first order ends refunded; the new one is paid by
// store credit and cash; her credit is spent. Screenshots:
// till-return-credit.png, till-exchange-cart.png, till-exchange-pay.png.
func TestTillReturnsAndExchangesInChromium(t *testing.T) {
	c := startConsole(t, 1024, 768)
	front := c.till("Front till")
	rae := c.call("POST", "/api/v1/customers", c.manager, map[string]any{"first_name": "Rae", "last_name": "Return"}, 201)["id"].(string)

	cashier := webtest.NewCashier(t, c.b)
	cashier.Do("a till", chromedp.EmulateViewport(1024, 768))
	cashier.SignIn(c.p.URL, "cashier@demo.test", demo.Password)
	cashier.SetUp(front)
	cashier.OpenDrawer(map[int64]int{5000: 2}, "")
	cashier.FindCustomer("Rae")
	cashier.Poll("Rae on the sale", `document.getElementById('customer').textContent.includes('Rae')`)
	cashier.Do("two banana breads", chromedp.Click(webtest.Tile("BAK-BB")), chromedp.Click(webtest.Tile("BAK-BB")))
	cashier.Poll("two of them", `document.querySelector('#lines li .qty') && document.querySelector('#lines li .qty').textContent === '2×'`)
	cashier.Priced(1) // the pay button waits for the edge's price
	number := cashier.PayQuickCash("", "")
	cashier.NewSale()

	// One back onto her store credit: the receipt scanned, a tap on +,
	// Store credit, Refund.
	cashier.Do("scan the receipt", chromedp.Click("#search"), chromedp.SendKeys("#search", number+"\r"))
	cashier.Do("the order found", chromedp.WaitVisible(`#refund-order li[data-line="Banana Bread"]`))
	cashier.Do("one comes back", chromedp.Click(`#refund-order li[data-line="Banana Bread"] .qty button:last-child`),
		chromedp.Click("#return-to-credit"))
	cashier.Shot("till-return-credit")
	cashier.Do("return it", chromedp.Click("#refund-ok"))
	cashier.Poll("returned", `document.getElementById('refund-msg').textContent.startsWith('Returned')`)
	if got := cashier.Text("#refund-msg"); !strings.Contains(got, "5.50 to store credit") || !strings.Contains(got, "balance A$5.50") {
		t.Fatalf("the return says %q, want 5.50 to store credit, balance 5.50", got)
	}
	if b := c.call("GET", "/api/v1/customers/"+rae+"/store-credit", c.manager, nil, 200)["balance"].(float64); b != 550 {
		t.Fatalf("Rae's store credit: %v, want 550", b)
	}

	// The other exchanged for avocado toast.
	cashier.Do("the other", chromedp.Click(`#refund-order li[data-line="Banana Bread"] .qty button:last-child`),
		chromedp.Click("#exchange-btn"), chromedp.WaitVisible("#exchange-note"))
	cashier.Poll("Rae on the sale", `document.getElementById('customer').textContent.includes("store credit A$5.50")`)
	cashier.Do("avocado toast", chromedp.Click(webtest.Tile("FOOD-AVO")))
	cashier.Priced(1)
	if got := cashier.Text("#exchange-note"); !strings.Contains(got, number) || !strings.Contains(got, "1× Banana Bread") {
		t.Fatalf("the cart says %q", got)
	}
	cashier.Shot("till-exchange-cart")
	cashier.Do("pay", chromedp.Click("#pay-btn"), chromedp.WaitVisible("#tender-credit"))
	if got := cashier.Text("#due"); !strings.Contains(got, "11.00") {
		t.Fatalf("due after the exchange: %q, want 11.00", got)
	}
	cashier.Do("store credit", chromedp.Click("#tender-credit"), chromedp.WaitVisible("#take-credit"))
	cashier.Shot("till-exchange-pay")
	cashier.Do("take it", chromedp.Click("#take-credit"))
	cashier.Poll("part paid", `document.querySelectorAll('#pay-done li').length === 2`)
	cashier.Do("the rest in cash", chromedp.WaitVisible("#quick button"), chromedp.Click("#quick button"))
	newNumber := cashier.Receipt()

	var l struct {
		Data []map[string]any `json:"data"`
	}
	c.p.Call(t, "GET", "/api/v1/orders?number="+number, c.manager, nil, &l)
	if len(l.Data) != 1 || l.Data[0]["status"] != "refunded" {
		t.Fatalf("the first order: %v", l.Data)
	}
	c.p.Call(t, "GET", "/api/v1/orders?number="+newNumber, c.manager, nil, &l)
	if len(l.Data) != 1 || l.Data[0]["status"] != "completed" || l.Data[0]["customer_id"] != rae {
		t.Fatalf("the exchange's order: %v", l.Data)
	}
	paid := map[string]float64{}
	for _, p := range l.Data[0]["payments"].([]any) {
		m := p.(map[string]any)
		paid[m["method"].(string)] += m["amount"].(float64)
	}
	if paid["store_credit"] != 1100 || paid["cash"] != 550 {
		t.Fatalf("the exchange's order was paid %v; want 11.00 store credit (the return's 5.50 and hers) and 5.50 cash", paid)
	}
	if b := c.call("GET", "/api/v1/customers/"+rae+"/store-credit", c.manager, nil, 200)["balance"].(float64); b != 0 {
		t.Fatalf("Rae's store credit after the exchange: %v, want 0", b)
	}
	cashier.NoJSErrors()
}
