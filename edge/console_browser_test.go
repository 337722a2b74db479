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
	"kassa.dev/shared/node/nodetest"
	"kassa.dev/web/webtest"
)

// TestConsolePageInChromium drives the store console in headless Chromium
// against a real edge (the binary's own Run, with the demo org). The edge
// is not enrolled at a hub, so its link is down: after the manager logs in
// the page shows the red OFFLINE banner with the number of changes waiting
// to go up, and that number grows when an order is taken through the API
// (the outbox keeps filling while offline). A kitchen user is turned away;
// a reload keeps the session; stopping the edge shows "Edge not answering"
// and the page recovers by itself when it is back. It saves a screenshot of
// the offline console to web/testdata/output/console.png.
func TestConsolePageInChromium(t *testing.T) {
	c := startConsole(t, 1280, 800)
	p, api, manager := c.p, c.shop, c.manager
	type syncStatus struct {
		Data struct {
			Connected bool   `json:"connected"`
			PendingUp int    `json:"pending_up"`
			LastError string `json:"last_error"`
		} `json:"data"`
	}
	status := func() syncStatus {
		t.Helper()
		var st syncStatus
		if code := p.Call(t, "GET", "/api/v1/sync/status", manager, nil, &st); code != 200 {
			t.Fatalf("sync status: %d", code)
		}
		return st
	}
	if st := status(); st.Data.Connected || !strings.Contains(st.Data.LastError, "not enrolled at a hub") {
		t.Fatalf("a standalone edge reports %+v, want not connected, not enrolled", st.Data)
	}

	b, edge := c.b, c.edge
	bctx, run, within, text := b.Ctx, b.Run, b.Within, c.text
	offline := func(pending int) string {
		return fmt.Sprintf(`#status[data-state="offline"][data-pending-up="%d"]`, pending)
	}
	// The kitchen may not read the sync status: back to the login form.
	c.signIn("kitchen@demo.test")
	within(10*time.Second, "the kitchen is turned away",
		chromedp.WaitVisible(`//p[@id="login-error"][contains(., "manager or owner")]`))

	// The manager sees the red banner with what waits to go up.
	c.signIn("manager@demo.test")
	within(10*time.Second, "the offline banner", chromedp.WaitVisible(`#status[data-state="offline"]`))
	before := status().Data.PendingUp
	if before == 0 {
		t.Fatal("a demo edge has nothing in its outbox")
	}
	within(10*time.Second, "the pending count", chromedp.WaitVisible(offline(before)))
	banner := text("#status-text")
	if !strings.HasPrefix(banner, "OFFLINE") || !strings.Contains(banner, "sales are saved and will sync when the link returns") ||
		!strings.Contains(banner, fmt.Sprintf("(%d changes waiting)", before)) {
		t.Fatalf("banner %q: want OFFLINE … (%d changes waiting)", banner, before)
	}
	if e := text("#last-error"); !strings.Contains(e, "not enrolled at a hub") {
		t.Fatalf("last error %q", e)
	}
	if v := text("#last-verified"); v != "never" {
		t.Fatalf("last verified %q, want never", v)
	}
	if c := text("#conflict-rows"); !strings.Contains(c, "No conflicts") {
		t.Fatalf("conflicts %q", c)
	}

	// An order taken while offline waits in the outbox: the count grows.
	api.order("pos", "taken offline", line{"Latte", 2, "Oat"}, line{"Croissant", 1, ""})
	after := status().Data.PendingUp
	if after <= before {
		t.Fatalf("after an order %d changes wait, before %d", after, before)
	}
	within(10*time.Second, "the pending count grows", chromedp.WaitVisible(offline(after)))
	if banner := text("#status-text"); !strings.Contains(banner, fmt.Sprintf("(%d changes waiting)", after)) {
		t.Fatalf("banner %q: want (%d changes waiting)", banner, after)
	}
	if v := text("#pending-up"); v != fmt.Sprint(after) {
		t.Fatalf("changes to send %q, want %d", v, after)
	}
	png, err := chromedp.Run(bctx, chromedp.CaptureScreenshot())
	if err != nil {
		t.Fatalf("screenshot: %v", err)
	}
	out := filepath.Join("..", "web", "testdata", "output")
	if err := os.MkdirAll(out, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(out, "console.png"), png, 0o644); err != nil {
		t.Fatal(err)
	}

	// The session lives in the tab: a reload goes straight to the status.
	run("reload", chromedp.Reload())
	within(10*time.Second, "the status after a reload", chromedp.WaitVisible(offline(after)))

	// The edge stops: the page says so and keeps asking.
	edge.stop(p)
	within(20*time.Second, "edge not answering", chromedp.WaitVisible(`#status[data-state="unreachable"]`))
	if banner := text("#status-text"); !strings.HasPrefix(banner, "Edge not answering") {
		t.Fatalf("banner %q: want Edge not answering", banner)
	}

	// Back on the same address and data: the page recovers by itself.
	p = edge.restart()
	manager = p.Login(t, "manager@demo.test", demo.Password)
	within(30*time.Second, "the page recovers", chromedp.WaitVisible(offline(status().Data.PendingUp)))

	if errs := b.JSErrors(); len(errs) > 0 {
		t.Fatalf("JavaScript errors: %v", errs)
	}
}

// consoleTest is what every browser test of the console starts with: the
// demo edge (standalone: its link to a hub is down), its shop, the
// manager's token and a Chromium tab of the given size.
type consoleTest struct {
	t       *testing.T
	edge    *browserEdge
	p       *nodetest.Proc
	shop    *shop
	manager string
	b       *webtest.Browser
}

func startConsole(t *testing.T, width, height int) *consoleTest {
	t.Helper()
	edge, p := startBrowserEdge(t)
	c := &consoleTest{t: t, edge: edge, p: p, shop: newShop(t, p), manager: p.Login(t, "manager@demo.test", demo.Password)}
	c.b = webtest.Start(t, edge.chromium, width, height)
	return c
}

// signIn opens the console and signs in as email, typing into the form.
func (c *consoleTest) signIn(email string) {
	c.t.Helper()
	c.b.Run("open the console", chromedp.Navigate(c.p.URL+"/console"), chromedp.WaitVisible("#login"))
	if _, err := chromedp.Run(c.b.Ctx, chromedp.Evaluate[string](`document.getElementById("email").value = ""`)); err != nil {
		c.t.Fatalf("clear the e-mail: %v", err)
	}
	c.b.Run("sign in as "+email, chromedp.SendKeys("#email", email),
		chromedp.SendKeys("#password", demo.Password), chromedp.Click("#login-btn"))
}

// text is the text of the first element sel matches.
func (c *consoleTest) text(sel string) string {
	c.t.Helper()
	v, err := chromedp.Run(c.b.Ctx, chromedp.Text(sel))
	if err != nil {
		c.t.Fatalf("read %s: %v", sel, err)
	}
	return v
}

// call makes an API call with tok and answers its data, failing the test
// on another status than want.
func (c *consoleTest) call(method, path, tok string, body any, want int) map[string]any {
	c.t.Helper()
	var r struct {
		Data map[string]any `json:"data"`
	}
	if st := c.p.Call(c.t, method, path, tok, body, &r); st != want {
		c.t.Fatalf("%s %s: %d, want %d: %v", method, path, st, want, r.Data)
	}
	return r.Data
}

// till adds a register named name at the shop's location.
func (c *consoleTest) till(name string) string {
	c.t.Helper()
	return c.call("POST", "/api/v1/registers", c.manager, map[string]any{"location_id": c.shop.location, "name": name}, 201)["id"].(string)
}

// openDrawer opens register's drawer with float (minor units) as the cashier.
func (c *consoleTest) openDrawer(register string, float int) string {
	c.t.Helper()
	return c.call("POST", "/api/v1/drawers", c.shop.cashier, map[string]any{"register_id": register, "float": map[string]any{"amount": float}}, 201)["id"].(string)
}

// sell rings up lines at register as the cashier, pays the total by
// method (cash handed over as 50.00; a test card) and completes the
// order; it answers the order's id and total.
func (c *consoleTest) sell(register, method string, lines ...line) (string, float64) {
	c.t.Helper()
	order := c.shop.order("pos", "", lines...)
	total := c.call("GET", "/api/v1/orders/"+order, c.shop.cashier, nil, 200)["total"].(float64)
	pay := map[string]any{"order_id": order, "amount": total, "method": method, "register_id": register}
	if method == "cash" {
		pay["tendered"] = 5000
	} else {
		pay["card_number"] = "4242424242424242"
	}
	c.call("POST", "/api/v1/payments/initiate", c.shop.cashier, pay, 201)
	c.call("POST", "/api/v1/orders/"+order+"/complete", c.shop.cashier, map[string]any{"register_id": register}, 200)
	return order, total
}
