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

// screenshot saves the page as <dir>/<name>.png, dir being
// $KASSA_SCREENSHOTS (docs/screenshots when refreshing them) or the
// test's temporary directory.
func screenshot(t *testing.T, b *webtest.Browser, name string) {
	t.Helper()
	dir := os.Getenv("KASSA_SCREENSHOTS")
	if dir == "" {
		dir = t.TempDir()
	} else if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	png, err := chromedp.Run(b.Ctx, chromedp.CaptureScreenshot())
	if err != nil {
		t.Fatalf("screenshot %s: %v", name, err)
	}
	if err := os.WriteFile(filepath.Join(dir, name+".png"), png, 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestTerminalLoginFormHidesAfterSignIn: once the cashier is signed in,
// the terminal shows the till and no longer the login form (terminal.css
// gave .login a display that beat the hidden attribute, so the form
// stayed above the till); signing out brings the form back (issue 21).
func TestTerminalLoginFormHidesAfterSignIn(t *testing.T) {
	edge, p := startBrowserEdge(t)
	b := webtest.Start(t, edge.chromium, 1200, 800)
	shown := func(id string) string {
		return fmt.Sprintf(`getComputedStyle(document.getElementById(%q)).display !== 'none'`, id)
	}
	b.Run("open the page", chromedp.Navigate(p.URL+"/terminal"), chromedp.WaitVisible("#login"))
	b.Run("log in",
		chromedp.SendKeys("#email", "cashier@demo.test"), chromedp.SendKeys("#password", demo.Password),
		chromedp.Click("#login-btn"), chromedp.WaitVisible("#live.on"))
	b.Within(10*time.Second, "the login form is gone",
		chromedp.Poll[chromedp.Void]("!("+shown("login")+") && "+shown("screen"), chromedp.WithPollingTimeout(10*time.Second)),
		chromedp.WaitNotVisible("#email"))
	screenshot(t, b, "terminal-1-signed-in")
	b.Run("sign out", chromedp.Click("#logout"), chromedp.WaitVisible("#login"))
	b.Within(10*time.Second, "the till is gone",
		chromedp.Poll[chromedp.Void]("!("+shown("screen")+")", chromedp.WithPollingTimeout(10*time.Second)))
	if errs := b.JSErrors(); len(errs) > 0 {
		t.Fatalf("JavaScript errors: %v", errs)
	}
}

// TestKDSVoidsTicketsAndNumbersThemPerDayInChromium: tickets are told
// apart by a number the edge gives per location and business day (#1,
// #2, #3), not the end of the order number; an order cancelled, or
// refunded in full, before the kitchen served it shows VOID on the
// screen, then leaves it, and leaves the board; a partly refunded one
// stays; a void ticket cannot be bumped (issue 21).
func TestKDSVoidsTicketsAndNumbersThemPerDayInChromium(t *testing.T) {
	edge, p := startBrowserEdge(t)
	api := newShop(t, p)
	owner := p.Login(t, "owner@demo.test", demo.Password)
	b := webtest.Start(t, edge.chromium, 1400, 800)
	ticket := func(id string) string { return fmt.Sprintf(`.ticket[data-id="%s"]`, id) }
	text := func(sel string) string {
		t.Helper()
		v, err := chromedp.Run(b.Ctx, chromedp.Text(sel))
		if err != nil {
			t.Fatalf("read %s: %v\n%s", sel, err, b.Page())
		}
		return v
	}

	b.Run("open the page", chromedp.Navigate(p.URL+"/kds?void=3"), chromedp.WaitVisible("#login"))
	b.Run("log in",
		chromedp.SendKeys("#email", "kitchen@demo.test"), chromedp.SendKeys("#password", demo.Password),
		chromedp.Click("#login-btn"), chromedp.WaitVisible(`#stations button[data-station=""][aria-pressed="true"]`))
	cancelled := api.order("pos", "", line{"Avocado Toast", 1, ""})
	refunded := api.order("pos", "", line{"Croissant", 2, ""}, line{"Latte", 1, "Oat"})
	partly := api.order("online", "", line{"Banana Bread", 2, ""})
	for i, id := range []string{cancelled, refunded, partly} {
		b.Within(10*time.Second, "ticket "+id, chromedp.WaitVisible(ticket(id)))
		if got, want := text(ticket(id)+" .num"), fmt.Sprintf("#%d", i+1); got != want {
			t.Fatalf("ticket %d shows %q, want %q", i+1, got, want)
		}
	}
	screenshot(t, b, "kds-1-ticket-numbers")

	if st := p.Call(t, "PATCH", "/api/v1/orders/"+cancelled, api.cashier, map[string]any{"status": "cancelled"}, nil); st != 200 {
		t.Fatalf("cancel: %d", st)
	}
	b.Within(10*time.Second, "the cancelled ticket is marked void", chromedp.WaitVisible(ticket(cancelled)+".void .voided"))
	if v := text(ticket(cancelled) + " .voided"); !strings.Contains(v, "VOID") || !strings.Contains(v, "cancelled") {
		t.Fatalf("the void mark says %q", v)
	}
	screenshot(t, b, "kds-2-void")
	b.Within(15*time.Second, "the void ticket leaves", chromedp.WaitNotPresent(ticket(cancelled)))

	pay := func(id string) {
		t.Helper()
		var o struct {
			Data map[string]any `json:"data"`
		}
		p.Call(t, "GET", "/api/v1/orders/"+id, owner, nil, &o)
		if st := p.Call(t, "POST", "/api/v1/payments/initiate", owner, map[string]any{"order_id": id, "amount": o.Data["total"], "method": "cash"}, nil); st != 201 {
			t.Fatalf("pay: %d", st)
		}
		if st := p.Call(t, "POST", "/api/v1/orders/"+id+"/complete", owner, nil, nil); st != 200 {
			t.Fatalf("complete: %d", st)
		}
	}
	pay(refunded)
	pay(partly)
	if st := p.Call(t, "POST", "/api/v1/orders/"+partly+"/refund", owner, map[string]any{"amount": 100, "reason": "burnt edge"}, nil); st != 200 {
		t.Fatalf("partial refund: %d", st)
	}
	if st := p.Call(t, "POST", "/api/v1/orders/"+refunded+"/refund", owner, map[string]any{"reason": "customer left"}, nil); st != 200 {
		t.Fatalf("refund: %d", st)
	}
	b.Within(10*time.Second, "the refunded ticket is marked void", chromedp.WaitVisible(ticket(refunded)+".void"))
	if v := text(ticket(refunded) + " .voided"); !strings.Contains(v, "refunded") {
		t.Fatalf("the void mark says %q", v)
	}
	b.Within(15*time.Second, "the refunded ticket leaves", chromedp.WaitNotPresent(ticket(refunded)))
	if got := text("#count"); got != "1 ticket" {
		t.Fatalf("the count says %q, want 1 ticket (the partly refunded order)", got)
	}
	b.Run("the partly refunded ticket stays", chromedp.WaitVisible(ticket(partly)+":not(.void)"))

	var board struct {
		Data struct {
			Tickets []map[string]any `json:"tickets"`
		} `json:"data"`
	}
	kitchen := p.Login(t, "kitchen@demo.test", demo.Password)
	p.Call(t, "GET", "/api/v1/kds/tickets", kitchen, nil, &board)
	if len(board.Data.Tickets) != 1 || board.Data.Tickets[0]["id"] != partly || board.Data.Tickets[0]["ticket_number"] != float64(3) {
		t.Fatalf("the board: %v", board.Data.Tickets)
	}
	if st := p.Call(t, "POST", "/api/v1/kds/tickets/"+refunded+"/bump", kitchen, nil, nil); st != 409 {
		t.Fatalf("bumping a void ticket: %d, want 409", st)
	}
	b.Run("reload", chromedp.Reload(), chromedp.WaitVisible(ticket(partly)))
	if n := text("#tickets"); strings.Contains(n, "Avocado") || strings.Contains(n, "Croissant") {
		t.Fatalf("void tickets came back on reload: %q", n)
	}
	if errs := b.JSErrors(); len(errs) > 0 {
		t.Fatalf("JavaScript errors: %v", errs)
	}
}
