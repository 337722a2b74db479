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

// TestHubReportsPageInChromium: head office has two stores (the demo's, with
// an edge, and a second one in Auckland); head office sells a gift card; the
// edge sells a latte for cash and two croissants paid 5.00 by that card and
// the rest by card, and the sales reach the hub. At the hub's /reports a
// cashier signs in and is told the account cannot read reports; after they
// sign out, the owner signs in to a fresh view and, typing and with clicks
// only: the store filter lists both stores; all stores' sales by store over
// typed days show the demo store's row as the hub's API has it; gift cards
// owed: head office owes the store 5.00, both named; the demo store picked,
// by hour, shows the chart and the API's figures, and Download CSV saves the
// API's CSV of that query; payments and tax of that store too; Today at the
// Auckland store is Auckland's business day (the browser a day behind, in
// Pago Pago). Screenshots at 1024×768 and on a phone (390 wide, the page no
// wider than the screen): $KASSA_SCREENSHOTS/hub-reports.png and
// hub-reports-{table,owed,phone}.png.
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
	// Head office sells a gift card (its money is at head office); the
	// store takes it, so head office owes the store what was spent.
	var one oneResp
	if st := e.hub.Call(t, "PUT", "/api/v1/payments/methods", e.hubTok, map[string]any{"methods": []any{map[string]any{"method": "gift_card", "enabled": true}}}, &one); st != 200 {
		t.Fatalf("enable gift cards: %d %v", st, one.Data)
	}
	if st := e.hub.Call(t, "POST", "/api/v1/gift-cards", e.hubTok, map[string]any{"initial_amount": 1000}, &one); st != 201 {
		t.Fatalf("gift card: %d %v", st, one.Data)
	}
	gift := one.Data["code"].(string)
	wait.For(t, 30*time.Second, "the gift card tender at the edge", func() bool {
		var m oneResp
		var methods struct {
			Data struct {
				Methods []struct {
					Method  string
					Enabled bool
				}
			}
		}
		if e.edge.Call(t, "GET", "/api/v1/gift-cards/lookup?code="+gift, e.edgeMgr, nil, &m) != 200 ||
			e.edge.Call(t, "GET", "/api/v1/payments/methods", e.edgeMgr, nil, &methods) != 200 {
			return false
		}
		for _, x := range methods.Data.Methods {
			if x.Method == "gift_card" {
				return x.Enabled
			}
		}
		return false
	})
	pay := func(body map[string]any) {
		t.Helper()
		var r oneResp
		if st := e.edge.Call(t, "POST", "/api/v1/payments/initiate", e.edgeTok, body, &r); st != 201 {
			t.Fatalf("pay %v: %d %v", body, st, r.Data)
		}
	}
	// sell rings up items at the edge, pays 5.00 by the gift card when
	// there is one, the rest by method, and completes the order.
	sell := func(method, gift string, items ...any) {
		t.Helper()
		var o oneResp
		if st := e.edge.Call(t, "POST", "/api/v1/orders", e.edgeTok, map[string]any{"location_id": e.location, "channel": "pos", "line_items": items}, &o); st != 201 {
			t.Fatalf("order: %d %v", st, o.Data)
		}
		rest := o.Data["total"].(float64)
		if gift != "" {
			pay(map[string]any{"order_id": o.Data["id"], "amount": 500, "method": "gift_card", "gift_card_code": gift})
			rest -= 500
		}
		body := map[string]any{"order_id": o.Data["id"], "amount": rest, "method": method, "tendered": rest}
		if method == "card" {
			body = map[string]any{"order_id": o.Data["id"], "amount": rest, "method": method, "card_number": "4242424242424242"}
		}
		pay(body)
		if st := e.edge.Call(t, "POST", "/api/v1/orders/"+o.Data["id"].(string)+"/complete", e.edgeTok, map[string]any{}, &o); st != 200 {
			t.Fatalf("complete: %d %v", st, o.Data)
		}
	}
	sell("cash", "", map[string]any{"product_id": id["Latte"], "quantity": 1})
	sell("card", gift, map[string]any{"product_id": id["Croissant"], "quantity": 2})
	var day string
	wait.For(t, 30*time.Second, "both sales at the hub", func() bool {
		var r listResp
		if e.hub.Call(t, "GET", "/api/v1/reports/sales?group_by=day&location_id="+e.location, e.hubTok, nil, &r) != 200 || len(r.Data) != 1 {
			return false
		}
		day, _ = r.Data[0]["group"].(string)
		var owed listResp
		return r.Data[0]["orders"] == 2.0 && e.hub.Call(t, "GET", "/api/v1/reports/gift-cards/owed", e.hubTok, nil, &owed) == 200 && len(owed.Data) == 1
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

	// What the stores owe each other: head office owes the demo store
	// the 5.00 its gift card paid there.
	r.Pick("gift-cards-owed")
	r.Shown("/reports/gift-cards/owed?" + span)
	if owed := r.SameAsAPI(); len(owed) != 1 || owed[0]["amount"] != "5.00" || owed[0]["issued_location_id"] != "" {
		t.Errorf("gift cards owed %v, want head office owing 5.00", owed)
	}
	if row := r.Text("#report-rows tr"); !strings.Contains(row, "Head office") || !strings.Contains(row, "Demo Coffee") {
		t.Errorf("gift cards owed %q: want head office and the store by name", row)
	}
	r.ScreenshotAt("hub-reports-owed", "report-kinds")
	r.Pick("sales")

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
	if rows := r.SameAsAPI(); len(rows) != 3 {
		t.Errorf("payments %v, want cash, card and gift card", rows)
	}
	r.Pick("tax")
	r.Shown("/reports/tax?" + span + "&group_by=none&location_id=" + e.location)
	r.SameAsAPI()

	// Today at the Auckland store is its own business day, even in a
	// browser in Pago Pago (a day behind Auckland).
	b.TimeZone("Pacific/Pago_Pago")
	auckland := created.Data["id"].(string)
	today := func() string {
		z, err := time.LoadLocation("Pacific/Auckland")
		if err != nil {
			t.Fatal(err)
		}
		now := time.Now().In(z)
		if now.Hour() < int(created.Data["day_cutoff_hour"].(float64)) {
			now = now.AddDate(0, 0, -1)
		}
		return now.Format(time.DateOnly)
	}
	before := today()
	r.Store("Harbour Kiosk")
	r.Preset("today")
	r.Do("Auckland's today", chromedp.WaitVisible(`#reports[data-state="shown"]`))
	if q, after := r.Query(), today(); q != "/reports/tax?date_from="+before+"&date_to="+before+"&group_by=none&location_id="+auckland &&
		q != "/reports/tax?date_from="+after+"&date_to="+after+"&group_by=none&location_id="+auckland {
		t.Errorf("today at the Auckland store asks %s, want its business day %s", q, after)
	}
	r.Store("Demo Coffee Surry Hills")
	r.Days(from, to)

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

// TestConsoleReportsWithTheHubLinkCut: an edge enrolled at a hub loses its
// link; a latte is sold at the edge meanwhile. The store's manager signs
// in to the edge's console (red OFFLINE banner) and clicks Today: the
// sale is in the store's sales as the edge's API has it. The link comes
// back; at the hub's /reports the owner picks the store and the same day:
// the hub shows that sale once, every figure equal to the edge's.
func TestConsoleReportsWithTheHubLinkCut(t *testing.T) {
	chromium := webtest.ChromiumPath(t)
	e := MustStartPair(t)
	e.proxy.cut()
	wait.For(t, 30*time.Second, "the edge offline", func() bool {
		var st oneResp
		return e.edge.Call(t, "GET", "/api/v1/sync/status", e.edgeMgr, nil, &st) == 200 && st.Data["connected"] == false
	})
	var products listResp
	e.edge.Call(t, "GET", "/api/v1/catalog/products?q=Latte&limit=10", e.edgeTok, nil, &products)
	var latte string
	for _, p := range products.Data {
		if p["name"] == "Latte" {
			latte = p["id"].(string)
		}
	}
	var o oneResp
	if st := e.edge.Call(t, "POST", "/api/v1/orders", e.edgeTok, map[string]any{"location_id": e.location, "channel": "pos",
		"line_items": []any{map[string]any{"product_id": latte, "quantity": 1}}}, &o); st != 201 {
		t.Fatalf("order: %d %v", st, o.Data)
	}
	id := o.Data["id"].(string)
	if st := e.edge.Call(t, "POST", "/api/v1/payments/initiate", e.edgeTok, map[string]any{"order_id": id, "amount": o.Data["total"],
		"method": "cash", "tendered": o.Data["total"]}, &o); st != 201 {
		t.Fatalf("pay: %d %v", st, o.Data)
	}
	if st := e.edge.Call(t, "POST", "/api/v1/orders/"+id+"/complete", e.edgeTok, map[string]any{}, &o); st != 200 {
		t.Fatalf("complete: %d %v", st, o.Data)
	}

	b := webtest.Start(t, chromium, 1024, 768)
	store := webtest.NewReader(t, b, e.edge.URL, e.edgeMgr)
	store.Do("the console", chromedp.Navigate(e.edge.URL+"/console"), chromedp.WaitVisible("#login"),
		chromedp.SendKeys("#email", "manager@demo.test"), chromedp.SendKeys("#password", demo.Password), chromedp.Click("#login-btn"),
		chromedp.WaitVisible(`#status[data-state="offline"]`), chromedp.WaitVisible("#report-form"))
	store.Preset("today")
	store.Do("today's sales", chromedp.WaitVisible(`#reports[data-state="shown"]`))
	offline := store.SameAsAPI()
	if len(offline) != 1 || offline[0]["orders"] != "1" {
		t.Fatalf("the store's sales offline %v, want the latte's order", offline)
	}
	day := offline[0]["group"]

	e.proxy.restore()
	wait.For(t, 60*time.Second, "the sale at the hub", func() bool {
		var r listResp
		return e.hub.Call(t, "GET", "/api/v1/reports/sales?date_from="+day+"&date_to="+day+"&location_id="+e.location, e.hubTok, nil, &r) == 200 &&
			len(r.Data) == 1 && r.Data[0]["orders"] == 1.0
	})
	office := webtest.NewReader(t, b, e.hub.URL, e.hubTok)
	office.Do("the hub's reports", chromedp.Navigate(e.hub.URL+"/reports"), chromedp.WaitVisible("#login"),
		chromedp.SendKeys("#email", "owner@demo.test"), chromedp.SendKeys("#password", demo.Password), chromedp.Click("#login-btn"),
		chromedp.WaitReady(`#report-location option[value="`+e.location+`"]`))
	office.Store("Demo Coffee Surry Hills")
	office.Days(day, day)
	office.Show("/reports/sales?date_from=" + day + "&date_to=" + day + "&group_by=day&location_id=" + e.location)
	online := office.SameAsAPI()
	if len(online) != 1 || !reflect.DeepEqual(online[0], offline[0]) {
		t.Errorf("the hub's day %v, the store's offline %v: want the same, once", online, offline)
	}
	if errs := b.JSErrors(); len(errs) > 0 {
		t.Fatalf("JavaScript errors: %v", errs)
	}
}
