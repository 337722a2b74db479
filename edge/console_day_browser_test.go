package main

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// TestConsoleShowsTheStoresDayInChromium: at a demo edge, the front till
// sells for cash, refunds part of it and is closed one coin short (its Z);
// the bar till's drawer stays open. After the manager logs in, the
// console shows today's takings and refunds as the settlement has them,
// the bar till's open drawer with who opened it and its float, and the
// front till's Z report, short by 50c with its note. The screenshot goes
// to $KASSA_SCREENSHOTS/console-day.png (docs/screenshots when refreshed).
func TestConsoleShowsTheStoresDayInChromium(t *testing.T) {
	c := startConsole(t, 1280, 1180)
	manager, call := c.manager, c.call
	front, bar := c.till("Front till"), c.till("Bar till")
	// The front till's printer does not answer; the bar till's prints.
	call("PUT", "/api/v1/registers/"+front+"/printer", manager, map[string]any{"host": "127.0.0.1", "port": closedPort(t)}, 200)
	call("PUT", "/api/v1/registers/"+bar+"/printer", manager, map[string]any{"host": "127.0.0.1", "port": startPrinter(t).port}, 200)
	frontDrawer := c.openDrawer(front, 20000)
	order, total := c.sell(front, "cash", line{"Latte", 2, "Oat"})
	call("POST", "/api/v1/orders/"+order+"/refund", manager, map[string]any{"amount": 100, "reason": "cold", "register_id": front}, 200)
	expected := 20000 + total - 100
	call("POST", "/api/v1/drawers/"+frontDrawer+"/close", c.shop.cashier, map[string]any{"count": map[string]any{"amount": expected - 50},
		"note": "one coin short"}, 201)
	barDrawer := c.openDrawer(bar, 15000)
	_, cardTotal := c.sell(bar, "card", line{"Latte", 1, "Oat"})
	total += cardTotal

	within, text := c.b.Within, c.text
	c.signIn("manager@demo.test")
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

	screenshot(t, c.b, "console-day")
	if errs := c.b.JSErrors(); len(errs) > 0 {
		t.Fatalf("JavaScript errors: %v", errs)
	}
}
