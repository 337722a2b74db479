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
// at an edge enrolled at a real hub, with the cashier's steps of the
// edge's own browser test (webtest.Cashier): the page says Online; the
// edge's link to the hub is cut and the page says Offline by itself. With
// the link down the cashier sets the till up, counts the float and opens
// the drawer, takes $20 cash for a latte and a loaf (the receipt shows
// the change), rings up a voucher and a loyalty customer paid part by gift
// card and part by card, reloads twice in the middle of a sale, and
// refunds the first sale by scanning its receipt; the page shows the
// changes waiting. The link comes back: the page says Online with nothing
// waiting, and the hub holds the same orders, refund and drawer
// figures, nothing quarantined (an honest edge is never refused).
func TestTillWithTheHubLinkCut(t *testing.T) {
	chromium := webtest.ChromiumPath(t)
	e := MustStartPair(t)
	hubCall := func(method, path string, body any) map[string]any {
		t.Helper()
		var r oneResp
		if st := e.hub.Call(t, method, "/api/v1"+path, e.hubTok, body, &r); st/100 != 2 {
			t.Fatalf("hub %s %s: %d %v", method, path, st, r.Data)
		}
		return r.Data
	}
	edgeCall := func(method, path string, body any) map[string]any {
		t.Helper()
		var r oneResp
		if st := e.edge.Call(t, method, "/api/v1"+path, e.edgeMgr, body, &r); st/100 != 2 {
			t.Fatalf("edge %s %s: %d %v", method, path, st, r.Data)
		}
		return r.Data
	}
	// Head office sets up what the sales need (the gift card tender and
	// the offline limits, a gift card, a barcode, a voucher, a loyalty
	// member); the store's manager adds the till. All of it reaches the
	// edge before the link is cut.
	hubCall("PUT", "/payments/methods", map[string]any{"methods": []any{map[string]any{"method": "gift_card", "enabled": true}}})
	hubCall("PATCH", "/settings", map[string]any{"offline_card_limit": 100000, "offline_card_daily_limit": 1000000, "gift_card_offline_limit": 5000})
	gift := hubCall("POST", "/gift-cards", map[string]any{"initial_amount": 1000})["code"].(string)
	var bakery string
	var cats listResp
	e.hub.Call(t, "GET", "/api/v1/catalog/categories", e.hubTok, nil, &cats)
	for _, c := range cats.Data {
		if c["name"] == "Bakery" {
			bakery = c["id"].(string)
		}
	}
	hubCall("POST", "/catalog/products", map[string]any{"name": "Sourdough Loaf", "sku": "BAK-SD", "base_price": 800,
		"category_id": bakery, "barcodes": []string{"9300000000011"}})
	camp := hubCall("POST", "/campaigns", map[string]any{"name": "Treat: 10 % off bakery", "type": "discount", "voucher_code": "TREAT",
		"location_ids": []string{e.location}, "rules": []any{map[string]any{"type": "category_discount", "discount_type": "percent",
			"value": 1000, "category_ids": []string{bakery}}}})
	hubCall("POST", "/campaigns/"+camp["id"].(string)+"/launch", nil)
	hubCall("POST", "/loyalty/programs", map[string]any{"name": "Beans", "points_per_unit": 1, "redemption_value": 1})
	lena := hubCall("POST", "/customers", map[string]any{"first_name": "Lena", "last_name": "Loyal", "phone": "0400 000 111"})["id"].(string)
	hubCall("POST", "/loyalty/accounts", map[string]any{"customer_id": lena})
	wait.For(t, 30*time.Second, "head office's setup at the edge", func() bool {
		var l listResp
		var s, a oneResp
		return e.edge.Call(t, "GET", "/api/v1/catalog/products?q=9300000000011", e.edgeMgr, nil, &l) == 200 && len(l.Data) == 1 &&
			e.edge.Call(t, "GET", "/api/v1/settings", e.edgeMgr, nil, &s) == 200 && s.Data["gift_card_offline_limit"] == 5000.0 &&
			e.edge.Call(t, "GET", "/api/v1/loyalty/accounts/customer/"+lena, e.edgeMgr, nil, &a) == 200 &&
			e.edge.Call(t, "GET", "/api/v1/gift-cards/lookup?code="+gift, e.edgeMgr, nil, &s) == 200
	})
	front := edgeCall("POST", "/registers", map[string]any{"location_id": e.location, "name": "Front till"})["id"].(string)

	b := webtest.Start(t, chromium, 1024, 768)
	c := webtest.NewCashier(t, b)
	link := func(prefix string) string {
		return `document.getElementById('link').textContent.startsWith('` + prefix + `')`
	}
	c.Do("a till", chromedp.EmulateViewport(1024, 768))
	c.SignIn(e.edge.URL, "cashier@demo.test", demo.Password)
	c.Poll("online", link("Online"))

	e.proxy.cut()
	c.Poll("offline, by itself", link("Offline"))
	c.SetUp(front)
	c.OpenDrawer(map[int64]int{5000: 2, 1000: 5}, "")

	// A cash sale with change.
	c.LatteAndLoaf()
	c.Shot("till-offline-sale")
	first := c.PayQuickCash("20.00", "")
	// A latte with oat milk 5.50 and a loaf 8.00: change 6.50.
	if got := c.Text("#change"); !strings.Contains(got, "6.50") {
		t.Fatalf("offline receipt says %q", got)
	}
	c.Poll("changes wait to sync", `/\d+ changes? to sync/.test(document.getElementById('link').textContent)`)
	c.Shot("till-offline-receipt")
	c.NewSale()
	// A voucher, a loyalty customer, a gift card and a card, offline.
	second := c.VoucherCustomerGiftCard("treat", "Lena", gift, "")
	if got := c.Text("#receipt"); !strings.Contains(got, "Points earned") || !strings.Contains(got, "**** 4242") || !strings.Contains(got, "Treat") {
		t.Fatalf("offline split receipt: %q", got)
	}
	c.NewSale()
	// Reloads in the middle of a sale.
	third := c.ReloadMidSale()
	c.NewSale()
	// The first sale refunded by scanning its receipt.
	c.ScanRefund(first, "Sourdough Loaf", "")
	c.Refunded()
	c.Shot("till-offline-refund")
	c.Do("close", chromedp.Click("#refund .close"), chromedp.WaitNotVisible("#overlay"))

	e.proxy.restore()
	c.Poll("online again, all synced", link("Online")+` && document.getElementById('link').textContent.includes('all synced')`)
	for number, status := range map[string]string{first: "refunded", second: "completed", third: "completed"} {
		wait.For(t, 30*time.Second, "order "+number+" "+status+" at the hub", func() bool {
			var l listResp
			e.hub.Call(t, "GET", "/api/v1/orders?number="+number, e.hubTok, nil, &l)
			return len(l.Data) == 1 && l.Data[0]["status"] == status && l.Data[0]["paid_total"] == l.Data[0]["total"]
		})
	}
	// The drawer's figures at the hub are the edge's.
	var edgeDrawers, hubDrawers listResp
	e.edge.Call(t, "GET", "/api/v1/drawers?register_id="+front, e.edgeMgr, nil, &edgeDrawers)
	drawer := edgeDrawers.Data[0]["id"].(string)
	x := edgeCall("GET", "/drawers/"+drawer+"/x-report", nil)
	wait.For(t, 30*time.Second, "the drawer's figures at the hub", func() bool {
		var hx oneResp
		return e.hub.Call(t, "GET", "/api/v1/drawers?register_id="+front, e.hubTok, nil, &hubDrawers) == 200 && len(hubDrawers.Data) == 1 &&
			e.hub.Call(t, "GET", "/api/v1/drawers/"+drawer+"/x-report", e.hubTok, nil, &hx) == 200 && hx.Data["expected"] == x["expected"] &&
			hx.Data["sales"] == x["sales"] && hx.Data["refunds"] == x["refunds"]
	})
	var cs listResp
	e.hub.Call(t, "GET", "/api/v1/sync/conflicts", e.hubTok, nil, &cs)
	for _, c := range cs.Data {
		if c["kind"] == "quarantined" {
			t.Errorf("a record of the till's day was quarantined: %v", c)
		}
	}
	c.NoJSErrors()
}
