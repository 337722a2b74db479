package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"kassa.dev/shared/demo"
	"kassa.dev/web/webtest"
)

// TestConsoleShowsTheStoresDayInChromium: at a demo edge, the front till
// sells for cash, refunds part of it and is closed one coin short (its Z);
// the bar till's drawer stays open. After the manager logs in, the
// console shows today's takings and refunds as the settlement has them,
// the bar till's open drawer with who opened it and its float, and the
// front till's Z report, short by 50c with its note. The screenshot goes
// to $KASSA_SCREENSHOTS/console-day.png (docs/screenshots when refreshed).
func TestConsoleShowsTheStoresDayInChromium(t *testing.T) {
	edge, p := startBrowserEdge(t)
	api := newShop(t, p)
	manager := p.Login(t, "manager@demo.test", demo.Password)
	call := func(method, path, tok string, body any, want int) map[string]any {
		t.Helper()
		var r struct {
			Data map[string]any `json:"data"`
		}
		if st := p.Call(t, method, path, tok, body, &r); st != want {
			t.Fatalf("%s %s: %d, want %d: %v", method, path, st, want, r.Data)
		}
		return r.Data
	}
	till := func(name string) string {
		return call("POST", "/api/v1/registers", manager, map[string]any{"location_id": api.location, "name": name}, 201)["id"].(string)
	}
	front, bar := till("Front till"), till("Bar till")
	open := func(register string, float int) string {
		return call("POST", "/api/v1/drawers", api.cashier, map[string]any{"register_id": register, "float": map[string]any{"amount": float}}, 201)["id"].(string)
	}
	// The front till's printer does not answer; the bar till's prints.
	call("PUT", "/api/v1/registers/"+front+"/printer", manager, map[string]any{"host": "127.0.0.1", "port": closedPort(t)}, 200)
	call("PUT", "/api/v1/registers/"+bar+"/printer", manager, map[string]any{"host": "127.0.0.1", "port": startPrinter(t).port}, 200)
	frontDrawer := open(front, 20000)
	order := api.order("pos", "", line{"Latte", 2, "Oat"})
	total := call("GET", "/api/v1/orders/"+order, api.cashier, nil, 200)["total"].(float64)
	call("POST", "/api/v1/payments/initiate", api.cashier, map[string]any{"order_id": order, "amount": total, "method": "cash",
		"tendered": 5000, "register_id": front}, 201)
	call("POST", "/api/v1/orders/"+order+"/complete", api.cashier, map[string]any{"register_id": front}, 200)
	call("POST", "/api/v1/orders/"+order+"/refund", manager, map[string]any{"amount": 100, "reason": "cold", "register_id": front}, 200)
	expected := 20000 + total - 100
	call("POST", "/api/v1/drawers/"+frontDrawer+"/close", api.cashier, map[string]any{"count": map[string]any{"amount": expected - 50},
		"note": "one coin short"}, 201)
	barDrawer := open(bar, 15000)
	card := api.order("pos", "", line{"Latte", 1, "Oat"})
	cardTotal := call("GET", "/api/v1/orders/"+card, api.cashier, nil, 200)["total"].(float64)
	call("POST", "/api/v1/payments/initiate", api.cashier, map[string]any{"order_id": card, "amount": cardTotal, "method": "card",
		"card_number": "4242424242424242", "register_id": bar}, 201)
	call("POST", "/api/v1/orders/"+card+"/complete", api.cashier, map[string]any{"register_id": bar}, 200)
	total += cardTotal

	b := webtest.Start(t, edge.chromium, 1280, 1180)
	bctx, run, within := b.Ctx, b.Run, b.Within
	text := func(sel string) string {
		t.Helper()
		v, err := chromedp.Run(bctx, chromedp.Text(sel))
		if err != nil {
			t.Fatalf("read %s: %v", sel, err)
		}
		return v
	}
	run("open the page", chromedp.Navigate(p.URL+"/console"))
	run("log in", chromedp.WaitVisible("#login"), chromedp.SendKeys("#email", "manager@demo.test"),
		chromedp.SendKeys("#password", demo.Password), chromedp.Click("#login-btn"))
	within(15*time.Second, "the bar till's open drawer", chromedp.WaitVisible(`#drawer-rows tr[data-id="`+barDrawer+`"]`))
	within(15*time.Second, "the front till's Z", chromedp.WaitVisible(`#last-z[data-number="1"]`))
	within(30*time.Second, "the printers' status", chromedp.WaitVisible(`#printer-rows tr[data-register="`+front+`"][data-status="unreachable"]`),
		chromedp.WaitVisible(`#printer-rows tr[data-register="`+bar+`"][data-status="ok"]`))

	money := func(minor float64) string { return fmt.Sprintf("%.2f", minor/100) }
	if s := text("#day-sales"); !strings.Contains(s, money(total)) || !strings.Contains(s, "2 payments") {
		t.Errorf("today's sales %q, want %s in 2 payments", s, money(total))
	}
	if r := text(`#printer-rows tr[data-register="` + front + `"]`); !strings.Contains(r, "Front till") || !strings.Contains(r, "failed") || !strings.HasSuffix(r, "2") {
		t.Errorf("front printer %q: want its last print failed, the sale's and the refund's receipts waiting", r)
	}
	if r := text(`#printer-rows tr[data-register="` + bar + `"]`); !strings.Contains(r, "Bar till") || !strings.Contains(r, "ok at") || !strings.HasSuffix(r, "0") {
		t.Errorf("bar printer %q: want its last print ok, none waiting", r)
	}
	if r := text("#day-refunds"); r != "1.00" {
		t.Errorf("today's refunds %q, want 1.00", r)
	}
	if n := text("#day-net"); n != money(total-100) {
		t.Errorf("today's net %q, want %s", n, money(total-100))
	}
	row := text(`#drawer-rows tr[data-id="` + barDrawer + `"]`)
	if !strings.Contains(row, "Bar till") || !strings.Contains(row, "cashier") || !strings.Contains(row, "AUD 150.00") {
		t.Errorf("open drawer row %q: want the bar till, opened by the cashier, float AUD 150.00", row)
	}
	if rows := text("#drawer-rows"); strings.Contains(rows, "Front till") {
		t.Errorf("the closed front till is listed as open: %q", rows)
	}
	z := text("#last-z")
	if !strings.Contains(z, "Z 1 · Front till") || !strings.Contains(z, "counted AUD "+money(expected-50)) ||
		text("#last-z-diff") != "short AUD 0.50" || !strings.Contains(z, "one coin short") {
		t.Errorf("last Z %q (%q): want Z 1 of the front till, short AUD 0.50, with its note", z, text("#last-z-diff"))
	}

	png, err := chromedp.Run(bctx, chromedp.CaptureScreenshot())
	if err != nil {
		t.Fatalf("screenshot: %v", err)
	}
	dir := os.Getenv("KASSA_SCREENSHOTS")
	if dir == "" {
		dir = t.TempDir()
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "console-day.png"), png, 0o644); err != nil {
		t.Fatal(err)
	}
	if errs := b.JSErrors(); len(errs) > 0 {
		t.Fatalf("JavaScript errors: %v", errs)
	}
}
