package main

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// browser is a headless Chromium tab driven over CDP for the page tests.
type browser struct {
	t      *testing.T
	ctx    context.Context
	mu     sync.Mutex
	jsErrs []string
}

// startBrowser starts Debian's chromium headless (with the flags this
// machine's closed network needs) in a fresh profile, with a tab of the
// given size; it stops at the end of the test. Uncaught exceptions of the
// page are collected for jsErrors.
func startBrowser(t *testing.T, chromium string, width, height int) *browser {
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
	b := &browser{t: t, ctx: bctx}
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

// page returns the body's HTML, for failure messages.
func (b *browser) page() string {
	html, _ := chromedp.Run(b.ctx, chromedp.OuterHTML("body"))
	return html
}

// run runs actions or fails the test showing the page.
func (b *browser) run(what string, actions ...chromedp.Action[chromedp.Void]) {
	b.t.Helper()
	if err := chromedp.Do(b.ctx, actions...); err != nil {
		b.t.Fatalf("%s: %v\npage: %.3000s", what, err, b.page())
	}
}

// within runs actions with a deadline (they wait on the page's conditions).
func (b *browser) within(d time.Duration, what string, actions ...chromedp.Action[chromedp.Void]) {
	b.t.Helper()
	c, cancel := context.WithTimeout(b.ctx, d)
	defer cancel()
	if err := chromedp.Do(c, actions...); err != nil {
		b.t.Fatalf("%s (within %s): %v\npage: %.3000s", what, d, err, b.page())
	}
}

// jsErrors returns the uncaught exceptions the page raised so far.
func (b *browser) jsErrors() []string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return append([]string(nil), b.jsErrs...)
}
