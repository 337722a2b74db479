package main

import (
	"encoding/json"
	"fmt"
	"regexp"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"kassa.dev/shared/demo"
	"kassa.dev/web/webtest"
)

// TestTillMySalesInChromium: at a standalone demo edge (offline), the
// cashier signs in to /till at 1024×768, opens the drawer and sells a
// latte for exact cash and a croissant by card, by touch; the manager
// sells one more order the cashier did not take. The cashier taps My
// sales: the totals (2 sales, taken, net) and the rows by tender, by hour
// and by product are the edge's GET /reports/my-sales for the cashier, to
// the cent, and the manager's sale is not in them. Screenshots at
// 1024×768 and on a phone: $KASSA_SCREENSHOTS/till-my-sales.png,
// till-my-sales-phone.png.
func TestTillMySalesInChromium(t *testing.T) {
	c := startConsole(t, 1024, 768)
	front := c.till("Front till")
	cashier := webtest.NewCashier(t, c.b)
	cashier.Do("a till", chromedp.EmulateViewport(1024, 768))
	cashier.SignIn(c.p.URL, "cashier@demo.test", demo.Password)
	cashier.SetUp(front)
	cashier.OpenDrawer(map[int64]int{5000: 2}, "")
	cashier.Do("a latte", chromedp.Click(webtest.Tile("COF-LAT")), chromedp.WaitVisible("#mods-ok"), chromedp.Click("#mods-ok"))
	cashier.Priced(1)
	cashier.PayQuickCash("", "")
	cashier.NewSale()
	cashier.Do("a croissant", chromedp.Click(webtest.Tile("BAK-CRO")))
	cashier.Priced(1)
	cashier.Do("pay by card", chromedp.Click("#pay-btn"), chromedp.WaitVisible("#pay-amount"), chromedp.Click(`[data-tender="card"]`),
		chromedp.Click("#take-card"))
	cashier.Receipt()
	cashier.NewSale()
	// The manager's own sale is not the cashier's.
	order := c.call("POST", "/api/v1/orders", c.manager, map[string]any{"location_id": c.shop.location, "channel": "pos",
		"line_items": []any{map[string]any{"product_id": c.shop.products["Flat White"], "quantity": 3}}}, 201)["id"].(string)
	total := c.call("GET", "/api/v1/orders/"+order, c.manager, nil, 200)["total"].(float64)
	c.call("POST", "/api/v1/payments/initiate", c.manager, map[string]any{"order_id": order, "amount": total, "method": "card",
		"card_number": "4242424242424242"}, 201)
	c.call("POST", "/api/v1/orders/"+order+"/complete", c.manager, map[string]any{}, 200)

	token := c.p.Login(t, "cashier@demo.test", demo.Password)
	mine := func(group string) []map[string]any {
		t.Helper()
		var r struct {
			Data []map[string]any `json:"data"`
		}
		if st := c.p.Call(t, "GET", "/api/v1/reports/my-sales?group_by="+group, token, nil, &r); st != 200 {
			t.Fatalf("my sales by %s: %d", group, st)
		}
		return r.Data
	}
	money := func(v any) string { return fmt.Sprintf("%.2f", v.(float64)/100) }
	figure := regexp.MustCompile(`[^0-9.\-]`)
	shown := func(sel string) string {
		return figure.ReplaceAllString(strings.ReplaceAll(cashier.Text(sel), "−", "-"), "")
	}

	cashier.Do("my sales", chromedp.Click("#mysales-btn"), chromedp.WaitVisible(`#mysales[data-state="shown"][data-group="payment_method"]`))
	all := mine("none")
	if len(all) != 1 || all[0]["orders"] != 2.0 {
		t.Fatalf("my sales %v: want the cashier's 2 orders", all)
	}
	for _, k := range []string{"orders", "gross", "tax", "sales", "refunds", "net"} {
		want := money(all[0][k])
		if k == "orders" {
			want = "2"
		}
		if got := shown(`#mysales-sums dd[data-col="` + k + `"]`); got != want {
			t.Errorf("my sales %s shows %q, the API %s", k, got, want)
		}
	}
	for _, g := range []string{"payment_method", "hour", "product"} {
		if g != "payment_method" {
			cashier.Do("by "+g, chromedp.Click(`#mysales-by button[data-group="`+g+`"]`),
				chromedp.WaitVisible(`#mysales[data-state="shown"][data-group="`+g+`"]`))
		}
		rows := mine(g)
		n, err := chromedp.Run(c.b.Ctx, chromedp.Evaluate[int](`document.querySelectorAll('#mysales-rows tbody tr').length`))
		if err != nil || n != len(rows) || len(rows) == 0 {
			b, _ := json.Marshal(rows)
			t.Fatalf("by %s: %d rows shown, the API has %s", g, n, b)
		}
		for i, r := range rows {
			for _, k := range []string{"sales", "refunds", "net"} {
				if got := shown(fmt.Sprintf(`#mysales-rows tbody tr:nth-child(%d) td[data-col="%s"]`, i+1, k)); got != money(r[k]) {
					t.Errorf("by %s row %d %s shows %q, the API %s", g, i, k, got, money(r[k]))
				}
			}
		}
		if g == "product" {
			if text := cashier.Text("#mysales-rows"); !strings.Contains(text, "Latte") || !strings.Contains(text, "Croissant") || strings.Contains(text, "Flat White") {
				t.Errorf("by product %q: want the latte and the croissant, not the manager's flat whites", text)
			}
		}
	}
	cashier.Shot("till-my-sales")
	cashier.Do("a phone", chromedp.EmulateViewport(390, 844))
	cashier.Do("by tender", chromedp.Click(`#mysales-by button[data-group="payment_method"]`),
		chromedp.WaitVisible(`#mysales[data-state="shown"][data-group="payment_method"]`))
	cashier.Shot("till-my-sales-phone")
	cashier.NoJSErrors()
}
