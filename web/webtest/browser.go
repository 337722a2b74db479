// Package webtest drives Kassa's pages in headless Chromium for the
// binaries' browser tests (KDS, console, OAuth consent page).
package webtest

import (
	"context"
	"os"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/emulation"
	"github.com/chromedp/chromedp"
)

// ChromiumPath returns Debian's chromium. Missing, the test fails in CI
// (CI=true) and is skipped, saying why, anywhere else.
func ChromiumPath(t *testing.T) string {
	t.Helper()
	for _, p := range []string{os.Getenv("KASSA_CHROMIUM"), "/usr/bin/chromium"} {
		if st, err := os.Stat(p); p != "" && err == nil && !st.IsDir() && st.Mode()&0o111 != 0 {
			return p
		}
	}
	msg := "chromium is not installed at /usr/bin/chromium: run deploy/ensure-chromium.sh (apt-get install -y chromium)"
	if ci := os.Getenv("CI"); ci != "" && ci != "false" && ci != "0" {
		t.Fatal(msg)
	}
	t.Skip(msg)
	return ""
}

// Browser is a headless Chromium tab driven over CDP for the page tests.
type Browser struct {
	t *testing.T
	// Ctx is the tab's context, for chromedp.Run.
	Ctx    context.Context
	mu     sync.Mutex
	jsErrs []string
}

// Start starts Debian's chromium headless (with the flags this
// machine's closed network needs) in a fresh profile, with a tab of the
// given size; it stops at the end of the test. Uncaught exceptions of the
// page are collected for JSErrors.
func Start(t *testing.T, chromium string, width, height int) *Browser {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	t.Cleanup(cancel)
	actx, cancelAlloc := chromedp.NewExecAllocator(ctx,
		chromedp.ExecPath(chromium), chromedp.UserDataDir(t.TempDir()),
		chromedp.Flag("headless", true), chromedp.Flag("no-sandbox", true), chromedp.Flag("disable-gpu", true),
		chromedp.Flag("disable-quic", true), chromedp.NoFirstRun, chromedp.NoDefaultBrowserCheck,
		chromedp.Flag("disable-background-networking", true), chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true), chromedp.Flag("disable-dev-shm-usage", true),
		chromedp.Flag("disable-extensions", true), chromedp.WindowSize(width, height),
	)
	t.Cleanup(cancelAlloc)
	bctx, cancelBrowser := chromedp.NewContext(actx)
	t.Cleanup(cancelBrowser)
	if err := chromedp.Do(bctx); err != nil { // starts the browser and its tab
		t.Fatalf("start %s: %v", chromium, err)
	}
	b := &Browser{t: t, Ctx: bctx}
	console := chromedp.Console(bctx)
	go func() {
		for m, err := range console {
			if err != nil {
				return
			}
			if m.Type == chromedp.ConsoleException {
				b.mu.Lock()
				b.jsErrs = append(b.jsErrs, m.Text)
				b.mu.Unlock()
			}
		}
	}()
	return b
}

// Page returns the body's HTML, for failure messages.
func (b *Browser) Page() string {
	html, _ := chromedp.Run(b.Ctx, chromedp.OuterHTML("body"))
	return html
}

// Run runs actions or fails the test showing the page.
func (b *Browser) Run(what string, actions ...chromedp.Action[chromedp.Void]) {
	b.t.Helper()
	if err := chromedp.Do(b.Ctx, actions...); err != nil {
		b.t.Fatalf("%s: %v\npage: %.3000s", what, err, b.Page())
	}
}

// Within runs actions with a deadline (they wait on the page's conditions).
func (b *Browser) Within(d time.Duration, what string, actions ...chromedp.Action[chromedp.Void]) {
	b.t.Helper()
	c, cancel := context.WithTimeout(b.Ctx, d)
	defer cancel()
	if err := chromedp.Do(c, actions...); err != nil {
		b.t.Fatalf("%s (within %s): %v\npage: %.3000s", what, d, err, b.Page())
	}
}

// JSErrors returns the uncaught exceptions the page raised so far.
func (b *Browser) JSErrors() []string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return append([]string(nil), b.jsErrs...)
}

// TimeZone puts the page's clock in zone (an IANA name), as a browser
// in another part of the world has it.
func (b *Browser) TimeZone(zone string) {
	b.t.Helper()
	if _, err := chromedp.Call(b.Ctx, emulation.SetTimezoneOverride, emulation.SetTimezoneOverrideParams{TimezoneID: zone}); err != nil {
		b.t.Fatalf("time zone %s: %v", zone, err)
	}
}
