package main

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	_ "github.com/mattn/go-sqlite3"

	"kassa.dev/shared/demo"
	"kassa.dev/web/webtest"
)

// TestTerminalPageInChromium drives the terminal page in two tabs of
// headless Chromium (two tills) against a real edge: an order taken over
// the API appears on both without a reload, a stock adjustment changes
// the level shown on both, it leaves the open orders once completed; then
// the edge stops (the page says it is reconnecting) and starts again, and
// an order taken right after shows up: the page resumed by itself; last,
// the cashier loses the till's scopes and the page signs out saying why.
func TestTerminalPageInChromium(t *testing.T) {
	edge, p := startBrowserEdge(t)
	api := newShop(t, p)
	owner := p.Login(t, "owner@demo.test", demo.Password)

	b := webtest.Start(t, edge.chromium, 1200, 800)
	tillA := b.Ctx
	tillB, closeB := chromedp.NewContext(b.Ctx) // a second tab, same sign-in storage
	defer closeB()
	// The tab is allocated by the first action on its own context (one
	// with a deadline would close it when the deadline's context ends).
	if err := chromedp.Do(tillB); err != nil {
		t.Fatal(err)
	}
	within := func(tab context.Context, what string, actions ...chromedp.Action[chromedp.Void]) {
		t.Helper()
		c, cancel := context.WithTimeout(tab, 30*time.Second)
		defer cancel()
		if err := chromedp.Do(c, actions...); err != nil {
			html, _ := chromedp.Run(tab, chromedp.OuterHTML("body"))
			t.Fatalf("%s: %v\npage: %.3000s", what, err, html)
		}
	}
	order := func(id string) string { return fmt.Sprintf(`#orders li[data-id="%s"]`, id) }
	qty := func(product, want string) chromedp.Action[chromedp.Void] {
		return chromedp.Poll[chromedp.Void](fmt.Sprintf(`(document.querySelector('#stock tr[data-product="%s"] .qty')||{}).textContent === %q`,
			product, want), chromedp.WithPollingTimeout(20*time.Second))
	}

	within(tillA, "open the page", chromedp.Navigate(p.URL+"/terminal"), chromedp.WaitVisible("#login"))
	within(tillA, "log in",
		chromedp.SendKeys("#email", "cashier@demo.test"), chromedp.SendKeys("#password", demo.Password),
		chromedp.Click("#login-btn"), chromedp.WaitVisible("#live.on"))
	within(tillB, "till B opens, signed in", chromedp.Navigate(p.URL+"/terminal"), chromedp.WaitVisible("#live.on"))

	first := api.order("pos", "", line{"Latte", 1, "Oat"}, line{"Croissant", 2, ""})
	within(tillA, "the order on till A", chromedp.WaitVisible(order(first)))
	within(tillB, "the order on till B", chromedp.WaitVisible(order(first)))

	croissant := api.products["Croissant"]
	var level struct {
		Data struct {
			OnHand int `json:"on_hand"`
		} `json:"data"`
	}
	if st := p.Call(t, "POST", "/api/v1/inventory/stock/adjust", owner, map[string]any{"location_id": api.location,
		"product_id": croissant, "reason": "count", "quantity": 37}, &level); st != 200 && st != 201 {
		t.Fatalf("adjust: %d", st)
	}
	within(tillA, "the count on till A", qty(croissant, "37"))
	within(tillB, "the count on till B", qty(croissant, "37"))

	// Paid and completed, the order leaves both tills.
	var o struct {
		Data map[string]any `json:"data"`
	}
	p.Call(t, "GET", "/api/v1/orders/"+first, api.cashier, nil, &o)
	if st := p.Call(t, "POST", "/api/v1/payments/initiate", api.cashier, map[string]any{"order_id": first, "amount": o.Data["total"], "method": "cash"}, nil); st != 201 {
		t.Fatalf("pay: %d", st)
	}
	if st := p.Call(t, "POST", "/api/v1/orders/"+first+"/complete", api.cashier, nil, nil); st != 200 {
		t.Fatalf("complete: %d", st)
	}
	within(tillB, "the completed order leaves till B", chromedp.WaitNotPresent(order(first)))
	within(tillB, "the sale's stock on till B", qty(croissant, "35"))

	// Stop the edge: the page says so; start it again: it resumes and
	// shows an order taken right after the restart.
	edge.stop(p)
	within(tillA, "the reconnecting banner", chromedp.WaitVisible("#banner"))
	edge.env["KASSA_WS_PING"] = "300ms" // the feed re-checks its token at each ping (below)
	p = edge.restart()
	api = newShop(t, p)
	late := api.order("pos", "", line{"Croissant", 1, ""})
	within(tillA, "till A resumes", chromedp.WaitNotVisible("#banner"), chromedp.WaitVisible(order(late)))
	within(tillB, "till B resumes", chromedp.WaitVisible(order(late)))
	within(tillA, "the stock after the restart", qty(croissant, "35"))

	// The cashier's role changes to kitchen (the owner, through the
	// store's API, as a synced change from the hub would): at the next
	// ping the feed closes (4403) and the page signs out with the reason
	// instead of reconnecting for ever.
	owner = p.Login(t, "owner@demo.test", demo.Password)
	var users struct{ Data []map[string]any }
	p.Call(t, "GET", "/api/v1/users?limit=100", owner, nil, &users)
	cashierID := ""
	for _, u := range users.Data {
		if u["email"] == "cashier@demo.test" {
			cashierID = u["id"].(string)
		}
	}
	if st := p.Call(t, "PATCH", "/api/v1/users/"+cashierID, owner, map[string]any{"role": "kitchen"}, nil); st != 200 {
		t.Fatalf("demote the cashier: %d", st)
	}
	within(tillA, "the demoted till signs out, saying why", chromedp.WaitVisible("#login"),
		chromedp.Poll[chromedp.Void](`document.querySelector('#login-error').textContent.includes('may not use the terminal')`, chromedp.WithPollingTimeout(20*time.Second)))

	if errs := b.JSErrors(); len(errs) > 0 {
		t.Fatalf("JavaScript errors: %v", errs)
	}
}
