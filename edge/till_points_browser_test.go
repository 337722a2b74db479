package main

import (
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"kassa.dev/shared/demo"
	"kassa.dev/web/webtest"
)

// TestTillTakesLoyaltyPointsInChromium (issue 26, docs/loyalty.md): the
// org takes loyalty points; a customer has 25 points worth $0.10 each.
// At the till, by touch, a croissant ($4.50) is sold to a customer
// without an account first — no Points tender — then to her: the Points
// tender offers her 25 points for $2.50, takes them, and the rest is paid
// in cash. The order holds a $2.50 loyalty_points payment and her points
// are spent (less what the cash part earned). Screenshot:
// $KASSA_SCREENSHOTS/till-points-pay.png.
func TestTillTakesLoyaltyPointsInChromium(t *testing.T) {
	c := startConsole(t, 1024, 768)
	front := c.till("Front till")
	owner := c.p.Login(t, "owner@demo.test", demo.Password)
	c.call("PUT", "/api/v1/payments/methods", owner, map[string]any{"methods": []any{map[string]any{"method": "loyalty_points", "enabled": true}}}, 200)
	c.call("POST", "/api/v1/loyalty/programs", c.manager, map[string]any{"name": "Beans", "points_per_unit": 1, "redemption_value": 10}, 201)
	pia := c.call("POST", "/api/v1/customers", c.manager, map[string]any{"first_name": "Pia", "last_name": "Points"}, 201)["id"].(string)
	acct := c.call("POST", "/api/v1/loyalty/accounts", c.manager, map[string]any{"customer_id": pia}, 201)["id"].(string)
	c.call("POST", "/api/v1/loyalty/accounts/"+acct+"/earn", c.manager, map[string]any{"points": 25}, 201)

	cashier := webtest.NewCashier(t, c.b)
	cashier.Do("a till", chromedp.EmulateViewport(1024, 768))
	cashier.SignIn(c.p.URL, "cashier@demo.test", demo.Password)
	cashier.SetUp(front)
	cashier.OpenDrawer(map[int64]int{5000: 2}, "")
	cashier.Do("a croissant", chromedp.Click(webtest.Tile("BAK-CRO")))
	cashier.Priced(1)
	// No customer: no Points tender.
	cashier.Do("pay", chromedp.Click("#pay-btn"), chromedp.WaitVisible("#pay-amount"))
	cashier.Poll("no Points tender without a customer", `document.getElementById('tender-points').hidden`)
	cashier.Do("back to the sale", chromedp.Click("#pay-back"), chromedp.WaitVisible("#customer-btn"))
	cashier.FindCustomer("Pia")
	cashier.Poll("her points", `document.getElementById('customer').textContent.includes('25 points')`)
	cashier.Priced(1) // the sale priced again for her
	cashier.Do("pay with points", chromedp.Click("#pay-btn"), chromedp.WaitVisible("#tender-points"), chromedp.Click("#tender-points"),
		chromedp.WaitVisible("#take-points"))
	if got := cashier.Text("#points-worth"); !strings.Contains(got, "25 pay") || !strings.Contains(got, "2.50") {
		t.Fatalf("the Points tender says %q, want 25 points paying 2.50", got)
	}
	cashier.Shot("till-points-pay")
	cashier.Do("take the points", chromedp.Click("#take-points"))
	cashier.Poll("part paid", `document.querySelectorAll('#pay-done li').length === 1`)
	if got := cashier.Text("#pay-done li"); !strings.Contains(got, "Points") || !strings.Contains(got, "2.50") {
		t.Fatalf("the paid line says %q, want Points 2.50", got)
	}
	cashier.Do("the rest in cash", chromedp.WaitVisible("#quick button"), chromedp.Click("#quick button"))
	number := cashier.Receipt()

	var l struct {
		Data []map[string]any `json:"data"`
	}
	c.p.Call(t, "GET", "/api/v1/orders?number="+number, c.manager, nil, &l)
	if len(l.Data) != 1 {
		t.Fatalf("orders numbered %s: %d", number, len(l.Data))
	}
	o := l.Data[0]
	var points float64
	for _, p := range o["payments"].([]any) {
		if m := p.(map[string]any); m["method"] == "loyalty_points" {
			points += m["amount"].(float64)
		}
	}
	bal := c.call("GET", "/api/v1/loyalty/accounts/"+acct, c.manager, nil, 200)["points_balance"].(float64)
	if points != 250 || bal != o["loyalty_points_earned"].(float64) {
		t.Fatalf("order %s: %v paid with points, her balance %v (earned %v); want 250 and only what she earned", number, points, bal, o["loyalty_points_earned"])
	}
	cashier.NoJSErrors()
}
