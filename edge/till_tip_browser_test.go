package main

import (
	"fmt"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"kassa.dev/shared/demo"
	"kassa.dev/web/webtest"
)

// TestTillTakesTipsInChromium (docs/tips.md): at a standalone demo edge
// the cashier sells a latte and, by touch, picks a 15 % tip on the pay
// screen: the screen shows the tip and the quick-cash "Exact" covers the
// latte and the tip; the receipt shows the tip beside the cash and "Tips
// (not in the total)" under the total. A croissant by card with a custom
// tip typed in. The edge holds both tips as the screen showed them, the
// order's total is the latte's price alone, and the drawer's expected
// cash has the cash tip. Screenshots: $KASSA_SCREENSHOTS/till-tip-pay.png,
// till-tip-receipt.png, till-tip-card.png.
func TestTillTakesTipsInChromium(t *testing.T) {
	c := startConsole(t, 1024, 768)
	front := c.till("Front till")
	cashier := webtest.NewCashier(t, c.b)
	cashier.Do("a till", chromedp.EmulateViewport(1024, 768))
	cashier.SignIn(c.p.URL, "cashier@demo.test", demo.Password)
	cashier.SetUp(front)
	cashier.OpenDrawer(map[int64]int{5000: 2}, "")
	cashier.Do("a latte", chromedp.Click(webtest.Tile("COF-LAT")), chromedp.WaitVisible("#mods-ok"), chromedp.Click("#mods-ok"))
	cashier.Priced(1)
	cashier.Do("pay with a 15 % tip", chromedp.Click("#pay-btn"), chromedp.WaitVisible("#pay-amount"),
		chromedp.Click(`#tip button[data-tip="1500"]`), chromedp.WaitVisible(`#tip-shown`))
	cashier.Poll("the tip shown", `document.getElementById('tip-shown').textContent.startsWith('Tip ')`)
	shown := cashier.Text("#tip-shown")
	cashier.Shot("till-tip-pay")
	cashier.Do("exact cash", chromedp.Click(`#quick button`))
	number := cashier.Receipt()
	receipt := cashier.Text("#receipt")
	cashier.Shot("till-tip-receipt")

	var list struct {
		Data []map[string]any `json:"data"`
	}
	if st := c.p.Call(t, "GET", "/api/v1/orders?number="+number, c.manager, nil, &list); st != 200 || len(list.Data) != 1 {
		t.Fatalf("the latte's order: %d %v", st, list.Data)
	}
	latte := list.Data[0]
	total := int64(latte["total"].(float64))
	tip := (total*1500 + 5000) / 10000
	pay := latte["payments"].([]any)[0].(map[string]any)
	money := func(v int64) string { return fmt.Sprintf("%d.%02d", v/100, v%100) }
	if int64(pay["tip"].(float64)) != tip || int64(pay["amount"].(float64)) != total || int64(pay["tendered"].(float64)) != total+tip {
		t.Fatalf("the latte's payment %v: want amount %d, tip %d, tendered %d", pay, total, tip, total+tip)
	}
	if !strings.Contains(shown, money(tip)) || !strings.Contains(shown, money(total+tip)) {
		t.Errorf("the pay screen said %q; the tip is %s on %s", shown, money(tip), money(total))
	}
	if !strings.Contains(receipt, "tip ") || !strings.Contains(receipt, "Tips (not in the total)") || !strings.Contains(receipt, money(tip)) {
		t.Errorf("the receipt %q shows no tip of %s", receipt, money(tip))
	}
	cashier.NewSale()

	// A croissant by card, with a custom tip typed in.
	cashier.Do("a croissant", chromedp.Click(webtest.Tile("BAK-CRO")))
	cashier.Priced(1)
	cashier.Do("card with a custom tip", chromedp.Click("#pay-btn"), chromedp.WaitVisible("#pay-amount"), chromedp.Click(`[data-tender="card"]`),
		chromedp.Click(`#tip button[data-tip="custom"]`), chromedp.WaitVisible("#tip-custom"), chromedp.SendKeys("#tip-custom", "1.00"))
	cashier.Poll("the custom tip shown", `document.getElementById('tip-shown').textContent.startsWith('Tip ')`)
	cashier.Shot("till-tip-card")
	cashier.Do("charge", chromedp.Click("#take-card"))
	cardNumber := cashier.Receipt()
	if st := c.p.Call(t, "GET", "/api/v1/orders?number="+cardNumber, c.manager, nil, &list); st != 200 || len(list.Data) != 1 {
		t.Fatalf("the croissant's order: %d", st)
	}
	if p := list.Data[0]["payments"].([]any)[0].(map[string]any); p["tip"] != 100.0 || p["method"] != "card" {
		t.Fatalf("the card payment: %v, want a tip of 100", p)
	}

	// The drawer expects the float, the latte and its tip; the tips
	// report credits the cashier with both.
	var drawers struct {
		Data []map[string]any `json:"data"`
	}
	c.p.Call(t, "GET", "/api/v1/drawers?status=open&register_id="+front, c.manager, nil, &drawers)
	x := c.call("GET", "/api/v1/drawers/"+drawers.Data[0]["id"].(string)+"/x-report", c.manager, nil, 200)
	if int64(x["expected"].(float64)) != 10000+total+tip || int64(x["cash_tips"].(float64)) != tip || int64(x["tips"].(float64)) != tip+100 {
		t.Fatalf("X report %v: want expected %d with the cash tip %d", x, 10000+total+tip, tip)
	}
	var rep struct {
		Data []map[string]any `json:"data"`
	}
	c.p.Call(t, "GET", "/api/v1/reports/tips?group_by=staff", c.manager, nil, &rep)
	if len(rep.Data) != 1 || int64(rep.Data[0]["net"].(float64)) != tip+100 || rep.Data[0]["label"] != "cashier" {
		t.Fatalf("tips by staff: %v", rep.Data)
	}
	cashier.NoJSErrors()

	// The store's manager reads the tips in the console's reports (the
	// shared view): by staff member, today, as the API has them.
	r := webtest.NewReader(t, c.b, c.p.URL, c.manager)
	c.signIn("manager@demo.test")
	r.Do("the console", chromedp.WaitVisible("#report-form"))
	r.Preset("today")
	r.Do("today's sales", chromedp.WaitVisible(`#reports[data-state="shown"]`))
	r.Pick("tips")
	rows := r.SameAsAPI()
	if len(rows) != 1 || rows[0]["net"] != money(tip+100) || rows[0]["cash"] != money(tip) {
		t.Fatalf("the console's tips %v, want the cashier's %s (cash %s)", rows, money(tip+100), money(tip))
	}
	cashier.Shot("console-reports-tips")
	cashier.NoJSErrors()
}
