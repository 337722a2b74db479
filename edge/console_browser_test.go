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
	edge, p := startBrowserEdge(t)
	api := newShop(t, p)
	manager := p.Login(t, "manager@demo.test", demo.Password)
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

	b := webtest.Start(t, edge.chromium, 1280, 800)
	bctx, run, within := b.Ctx, b.Run, b.Within
	text := func(sel string) string {
		t.Helper()
		v, err := chromedp.Run(bctx, chromedp.Text(sel))
		if err != nil {
			t.Fatalf("read %s: %v", sel, err)
		}
		return v
	}
	offline := func(pending int) string {
		return fmt.Sprintf(`#status[data-state="offline"][data-pending-up="%d"]`, pending)
	}
	login := func(email string) {
		t.Helper()
		run("open the login form", chromedp.WaitVisible("#login"))
		if _, err := chromedp.Run(bctx, chromedp.Evaluate[string](`document.getElementById("email").value = ""`)); err != nil {
			t.Fatalf("clear the e-mail: %v", err)
		}
		run("log in as "+email, chromedp.SendKeys("#email", email),
			chromedp.SendKeys("#password", demo.Password), chromedp.Click("#login-btn"))
	}

	// The kitchen may not read the sync status: back to the login form.
	run("open the page", chromedp.Navigate(p.URL+"/console"))
	login("kitchen@demo.test")
	within(10*time.Second, "the kitchen is turned away",
		chromedp.WaitVisible(`//p[@id="login-error"][contains(., "manager or owner")]`))

	// The manager sees the red banner with what waits to go up.
	login("manager@demo.test")
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
