package synctest

import (
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"kassa.dev/shared/demo"
	"kassa.dev/sync/wait"
	"kassa.dev/web/webtest"
)

// TestTillWithTheHubLinkCut drives the edge's /till in headless Chromium
// at an edge enrolled at a real hub: the page says Online; the edge's link
// to the hub is cut and the page says Offline by itself; the cashier rings
// up a latte and a croissant and takes $20 cash, the receipt shows the
// change, the page shows changes waiting; the link comes back, the page
// says Online with nothing waiting, and the hub has the completed order.
func TestTillWithTheHubLinkCut(t *testing.T) {
	chromium := webtest.ChromiumPath(t)
	e := MustStartPair(t)
	b := webtest.Start(t, chromium, 1024, 768)
	shot := screenshots(t, b)
	poll := func(what, js string) {
		t.Helper()
		b.Within(40*time.Second, what, chromedp.Poll[chromedp.Void](js, chromedp.WithPollingTimeout(40*time.Second)))
	}
	link := func(prefix string) string {
		return `document.getElementById('link').textContent.startsWith('` + prefix + `')`
	}

	b.Run("open the till", chromedp.EmulateViewport(1024, 768), chromedp.Navigate(e.edge.URL+"/till"), chromedp.WaitVisible("#login"))
	b.Run("sign in", chromedp.SendKeys("#email", "cashier@demo.test"), chromedp.SendKeys("#password", demo.Password),
		chromedp.Click("#login-btn"), chromedp.WaitVisible(`#grid .tile[data-sku="COF-LAT"]`))
	poll("online", link("Online"))

	e.proxy.cut()
	poll("offline, by itself", link("Offline"))
	b.Within(20*time.Second, "a latte", chromedp.Click(`#grid .tile[data-sku="COF-LAT"]`), chromedp.WaitVisible("#mods-ok"), chromedp.Click("#mods-ok"))
	b.Within(20*time.Second, "a croissant", chromedp.Click(`#grid .tile[data-sku="BAK-CRO"]`))
	poll("priced by the edge", `document.querySelectorAll('#lines li').length === 2 && !document.getElementById('pay-btn').disabled`)
	shot("till-offline-sale")
	b.Within(20*time.Second, "$20 cash", chromedp.Click("#pay-btn"), chromedp.WaitVisible(`#quick button[data-cash="20.00"]`),
		chromedp.Click(`#quick button[data-cash="20.00"]`), chromedp.WaitVisible("#receipt .barcode"))
	number, err := chromedp.Run(b.Ctx, chromedp.Text("#receipt .code"))
	if err != nil {
		t.Fatal(err)
	}
	number = strings.TrimSpace(number)
	// A latte with full cream (the default, +0) 4.80 and a croissant 4.50: change 10.70.
	if got, _ := chromedp.Run(b.Ctx, chromedp.Text("#change")); !strings.Contains(got, "10.70") {
		t.Fatalf("offline receipt says %q", got)
	}
	poll("changes wait to sync", `/\d+ changes? wait to sync/.test(document.getElementById('link').textContent)`)
	shot("till-offline-receipt")

	e.proxy.restore()
	poll("online again, all synced", link("Online")+` && document.getElementById('link').textContent.includes('all synced')`)
	wait.For(t, 30*time.Second, "the sale at the hub", func() bool {
		var l listResp
		e.hub.Call(t, "GET", "/api/v1/orders?number="+number, e.hubTok, nil, &l)
		return len(l.Data) == 1 && l.Data[0]["status"] == "completed" && l.Data[0]["paid_total"] == l.Data[0]["total"]
	})
	if errs := b.JSErrors(); len(errs) > 0 {
		t.Fatalf("JavaScript errors: %v", errs)
	}
}
