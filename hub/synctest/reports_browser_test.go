package synctest

import (
	"encoding/csv"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"kassa.dev/shared/demo"
	"kassa.dev/sync/wait"
	"kassa.dev/web/webtest"
)

// TestHubReportsPageInChromium: head office has two stores (the demo's,
// with an edge, and a second one in Auckland); the edge sells a latte
// for cash and two croissants by card, and the sales reach the hub. At
// the hub's /reports a cashier signs in and is told the account cannot
// read reports; after they sign out, the owner signs in to a fresh view
// and, typing and with clicks only: the store filter lists both stores;
// all stores' sales by store over typed days show the demo store's row
// as the hub's API has it; the demo store picked, by hour, shows the
// chart and the API's figures, and Download CSV saves the API's CSV of
// that query; payments and tax of that store too. Screenshots at
// 1024×768 and on a phone (390 wide, the page no wider than the screen):
// $KASSA_SCREENSHOTS/hub-reports.png, hub-reports-table.png,
// hub-reports-phone.png.
func TestHubReportsPageInChromium(t *testing.T) {
	chromium := webtest.ChromiumPath(t)
	e := MustStartPair(t)
	var created oneResp
	if st := e.hub.Call(t, "POST", "/api/v1/locations", e.hubTok, map[string]any{"name": "Harbour Kiosk", "timezone": "Pacific/Auckland"}, &created); st != 201 {
		t.Fatalf("second store: %d %v", st, created.Data)
	}
	var products listResp
	e.edge.Call(t, "GET", "/api/v1/catalog/products?limit=200", e.edgeTok, nil, &products)
	id := map[string]string{}
	for _, p := range products.Data {
		id[p["name"].(string)] = p["id"].(string)
	}
	sell := func(method string, items ...any) {
		t.Helper()
		var o oneResp
		if st := e.edge.Call(t, "POST", "/api/v1/orders", e.edgeTok, map[string]any{"location_id": e.location, "channel": "pos", "line_items": items}, &o); st != 201 {
			t.Fatalf("order: %d %v", st, o.Data)
		}
		pay := map[string]any{"order_id": o.Data["id"], "amount": o.Data["total"], "method": method}
		if method == "card" {
			pay["card_number"] = "4242424242424242"
		} else {
			pay["tendered"] = o.Data["total"]
		}
		var r oneResp
		if st := e.edge.Call(t, "POST", "/api/v1/payments/initiate", e.edgeTok, pay, &r); st != 201 {
			t.Fatalf("pay: %d %v", st, r.Data)
		}
		if st := e.edge.Call(t, "POST", "/api/v1/orders/"+o.Data["id"].(string)+"/complete", e.edgeTok, map[string]any{}, &r); st != 200 {
			t.Fatalf("complete: %d %v", st, r.Data)
		}
	}
	sell("cash", map[string]any{"product_id": id["Latte"], "quantity": 1})
	sell("card", map[string]any{"product_id": id["Croissant"], "quantity": 2})
	var day string
	wait.For(t, 30*time.Second, "both sales at the hub", func() bool {
		var r listResp
		if e.hub.Call(t, "GET", "/api/v1/reports/sales?group_by=day&location_id="+e.location, e.hubTok, nil, &r) != 200 || len(r.Data) != 1 {
			return false
		}
		day, _ = r.Data[0]["group"].(string)
		return r.Data[0]["orders"] == 2.0
	})

	b := webtest.Start(t, chromium, 1024, 768)
	r := webtest.NewReader(t, b, e.hub.URL, e.hubTok)
	r.Do("open the reports page", chromedp.Navigate(e.hub.URL+"/reports"), chromedp.WaitVisible("#login"))
	signIn := func(email string) {
		t.Helper()
		if _, err := chromedp.Run(b.Ctx, chromedp.Evaluate[bool](`document.getElementById('email').value = '', true`)); err != nil {
			t.Fatalf("clear the e-mail: %v", err)
		}
		r.Do("sign in as "+email, chromedp.SendKeys("#email", email),
			chromedp.SendKeys("#password", demo.Password), chromedp.Click("#login-btn"), chromedp.WaitVisible("#report-form"))
	}
	// A cashier may not read reports: the page says so. The next sign-in
	// starts afresh.
	signIn("cashier@demo.test")
	r.Do("show as the cashier", chromedp.Click("#report-show"), chromedp.WaitVisible(`#reports[data-state="failed"]`))
	if msg := r.Text("#report-error"); !strings.Contains(msg, "cannot read reports") {
		t.Errorf("a cashier's reports say %q, want that this account cannot read reports", msg)
	}
	r.Do("sign out", chromedp.Click("#logout"), chromedp.WaitVisible("#login"))
	signIn("owner@demo.test")
	if rows, msg := r.Text("#report-rows"), r.Text("#report-error"); rows != "Pick a report and the days, then Show." || msg != "" {
		t.Errorf("after the cashier, the owner sees rows %q, error %q: want a fresh view", rows, msg)
	}
	r.Do("both stores to pick", chromedp.WaitReady(`#report-location option[value="`+created.Data["id"].(string)+`"]`))
	if stores := r.Text("#report-location"); !strings.Contains(stores, "All stores") || !strings.Contains(stores, "Harbour Kiosk") ||
		!strings.Contains(stores, "Demo Coffee") {
		t.Errorf("store filter %q: want All stores and both stores", stores)
	}

	// Every store, by store, over typed days.
	d, _ := time.Parse(time.DateOnly, day)
	from, to := d.AddDate(0, 0, -1).Format(time.DateOnly), d.AddDate(0, 0, 1).Format(time.DateOnly)
	span := "date_from=" + from + "&date_to=" + to
	r.Days(from, to)
	r.Group("Store")
	r.Show("/reports/sales?" + span + "&group_by=location")
	if rows := r.SameAsAPI(); len(rows) != 1 || rows[0]["group"] != e.location || rows[0]["orders"] != "2" {
		t.Errorf("sales by store %v, want the demo store's 2 orders", rows)
	}
	if keys := r.Text("#report-rows"); !strings.Contains(keys, "Demo Coffee") {
		t.Errorf("by store %q: want the store's name", keys)
	}

	// The demo store, by hour: the chart, the figures, the CSV.
	r.Store("Demo Coffee Surry Hills")
	r.Group("Hour of day")
	hour := "/reports/sales?" + span + "&group_by=hour&location_id=" + e.location
	r.Show(hour)
	r.Do("the chart by hour", chromedp.WaitVisible("#report-chart canvas"))
	r.SameAsAPI()
	file := r.DownloadCSV()
	got, err := csv.NewReader(strings.NewReader(string(file))).ReadAll()
	if err != nil || !reflect.DeepEqual(got, r.CSV(hour)) {
		t.Errorf("downloaded CSV %q (%v), want the API's %v", file, err, r.CSV(hour))
	}
	r.Screenshot("hub-reports")
	r.ScreenshotAt("hub-reports-table", "report-about")

	r.Pick("payments")
	r.Shown("/reports/payments?" + span + "&group_by=none&location_id=" + e.location)
	if rows := r.SameAsAPI(); len(rows) != 2 {
		t.Errorf("payments %v, want cash and card", rows)
	}
	r.Pick("tax")
	r.Shown("/reports/tax?" + span + "&group_by=none&location_id=" + e.location)
	r.SameAsAPI()

	r.Do("a phone", chromedp.EmulateViewport(390, 844))
	r.Pick("sales")
	r.Group("Business day")
	r.Show("/reports/sales?" + span + "&group_by=day&location_id=" + e.location)
	r.SameAsAPI()
	if wide := r.Overflow(); wide != "" {
		t.Errorf("on a phone the reports are wider than the screen: %s", wide)
	}
	r.Screenshot("hub-reports-phone")
	if errs := b.JSErrors(); len(errs) > 0 {
		t.Fatalf("JavaScript errors: %v", errs)
	}
}
