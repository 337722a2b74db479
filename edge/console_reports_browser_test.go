package main

import (
	"encoding/csv"
	"fmt"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"kassa.dev/shared/demo"
	"kassa.dev/web/webtest"
)

// TestConsoleReportsInChromium: at a demo edge that has no link to a hub
// (offline), the front till sells two lattes for cash, refunds 1.00 of them
// and is closed 50c short; the bar till sells a latte and a croissant to a
// loyalty member with a voucher (10 % off bakery), paid 5.00 by a gift card
// and the rest by card. The manager signs in to the console and, by clicks
// and typing only, reads every report: sales of today (the Today preset), by
// hour (with its chart), by till (with a total row equal to the API's
// totals), over typed days by business day (the chart, then Download CSV:
// the file the browser saves is the API's CSV); then tax, payments (cash,
// card, gift card), stock (its total value the sum of the API's; low stock
// only: the croissants counted below their reorder point), movements (by
// product, named), loyalty, gift cards, gift cards owed, cash (the front
// till's opener 0.50 short, in red) and campaigns; days typed the wrong way
// round show the API's problem naming date_to. Every figure the table shows
// equals the API's for the same query. Screenshots at 1024×768 and on a
// phone (390 wide, where the reports are no wider than the screen, only the
// table scrolls): $KASSA_SCREENSHOTS/console-reports.png and
// console-reports-{table,cash,stock,phone,phone-table}.png.
func TestConsoleReportsInChromium(t *testing.T) {
	c := startConsole(t, 1024, 768)
	front, bar := c.till("Front till"), c.till("Bar till")
	drawer := c.openDrawer(front, 20000)
	c.openDrawer(bar, 15000)
	cashSale, cashTotal := c.sell(front, "cash", line{"Latte", 2, "Oat"})
	cardTotal := c.loyalSale(bar)
	// The croissants are counted: 190, to be reordered at 250 (low stock).
	c.call("POST", "/api/v1/inventory/stock/adjust", c.manager, map[string]any{"location_id": c.shop.location,
		"product_id": c.shop.products["Croissant"], "reason": "count", "quantity": 190, "reorder_point": 250}, 200)
	c.call("POST", "/api/v1/orders/"+cashSale+"/refund", c.manager, map[string]any{"amount": 100, "reason": "cold", "register_id": front}, 200)
	expected := 20000 + cashTotal - 100
	c.call("POST", "/api/v1/drawers/"+drawer+"/close", c.shop.cashier, map[string]any{"count": map[string]any{"amount": expected - 50}}, 201)
	net := fmt.Sprintf("%.2f", (cashTotal+cardTotal-100)/100)

	r := webtest.NewReader(t, c.b, c.p.URL, c.manager)
	c.signIn("manager@demo.test")
	r.Do("the console, offline", chromedp.WaitVisible(`#status[data-state="offline"]`), chromedp.WaitVisible("#report-form"))

	// Today, by business day: one row, the day's net.
	r.Preset("today")
	r.Do("today's sales", chromedp.WaitVisible(`#reports[data-state="shown"]`))
	rows := r.SameAsAPI()
	if len(rows) != 1 || rows[0]["net"] != net {
		t.Fatalf("today's sales %v, want one day of net %s", rows, net)
	}
	day := rows[0]["group"]
	if got := webtest.Figure(r.Text(`#report-rows td[data-col="net"]`)); got != net {
		t.Errorf("today's net shows %q, want %s", got, net)
	}
	q := "/reports/sales?date_from=" + day + "&date_to=" + day
	r.Shown(q + "&group_by=day")

	// By hour: the chart and the sale's hour.
	r.Group("Hour of day")
	r.Show(q + "&group_by=hour")
	r.Do("the chart by hour", chromedp.WaitVisible("#report-chart canvas"))
	if k := r.Text("#report-key"); k != "Hour" {
		t.Errorf("key column %q, want Hour", k)
	}
	r.SameAsAPI()

	// By till: two rows and their total, which is the API's whole day.
	r.Group("Till")
	r.Show(q + "&group_by=register")
	tills := r.SameAsAPI()
	keys := []string{}
	for _, row := range r.Table() {
		keys = append(keys, row.Key)
	}
	if len(tills) != 2 || !reflect.DeepEqual(keys, []string{"Bar till", "Front till"}) && !reflect.DeepEqual(keys, []string{"Front till", "Bar till"}) {
		t.Errorf("by till: keys %v, want the two tills by name", keys)
	}
	whole := r.CSV(q + "&group_by=none")
	total := r.Total()
	if total == nil {
		t.Fatal("no total row by till")
	}
	for i, name := range whole[0] {
		if shown, ok := total[name]; ok && webtest.Figure(shown) != whole[1][i] {
			t.Errorf("total %s shows %q, the API's whole day %q", name, shown, whole[1][i])
		}
	}
	if webtest.Figure(total["net"]) != net {
		t.Errorf("total net %q, want %s", total["net"], net)
	}

	// Typed days around today, by business day: the chart, and the CSV
	// the browser downloads is the API's.
	d, _ := time.Parse(time.DateOnly, day)
	from, to := d.AddDate(0, 0, -3).Format(time.DateOnly), d.AddDate(0, 0, 1).Format(time.DateOnly)
	r.Days(from, to)
	r.Group("Business day")
	week := "/reports/sales?date_from=" + from + "&date_to=" + to + "&group_by=day"
	r.Show(week)
	r.Do("the chart by day", chromedp.WaitVisible("#report-chart canvas"))
	r.SameAsAPI()
	file := r.DownloadCSV()
	got, err := csv.NewReader(strings.NewReader(string(file))).ReadAll()
	if err != nil || !reflect.DeepEqual(got, r.CSV(week)) {
		t.Errorf("downloaded CSV %q (%v), want the API's %v", file, err, r.CSV(week))
	}
	r.Screenshot("console-reports")
	r.ScreenshotAt("console-reports-table", "report-about")

	// Days the wrong way round: the API's problem, naming the field, and
	// no CSV of it offered.
	r.Days(to, from)
	r.Do("show the wrong days", chromedp.Click("#report-show"), chromedp.WaitVisible(`#reports[data-state="failed"]`),
		chromedp.WaitNotVisible("#report-csv"))
	if e := r.Text("#report-error"); !strings.Contains(e, "date_to") {
		t.Errorf("error %q: want the field date_to named", e)
	}
	r.Days(from, to)

	// Every other report over the same days, by business day where it
	// can be (the grouping picked stays): the figures are the API's.
	span := "date_from=" + from + "&date_to=" + to
	for _, k := range []struct{ kind, query string }{
		{"tax", "/reports/tax?" + span + "&group_by=day"},
		{"payments", "/reports/payments?" + span + "&group_by=day"},
		{"inventory", "/reports/inventory"},
		{"movements", "/reports/inventory/movements?" + span + "&group_by=day"},
		{"loyalty", "/reports/loyalty?" + span + "&group_by=day"},
		{"gift-cards", "/reports/gift-cards?" + span + "&group_by=day"},
		{"gift-cards-owed", "/reports/gift-cards/owed?" + span},
		{"campaigns", "/reports/campaigns?" + span},
	} {
		r.Pick(k.kind)
		r.Shown(k.query)
		rows := r.SameAsAPI()
		switch k.kind {
		case "payments":
			methods := map[string]bool{}
			for _, row := range rows {
				methods[row["method"]] = true
			}
			if !methods["cash"] || !methods["card"] || !methods["gift_card"] {
				t.Errorf("payments %v, want cash, card and gift card", rows)
			}
		case "inventory", "tax", "movements", "loyalty", "gift-cards", "campaigns":
			if len(rows) == 0 {
				t.Errorf("%s: no rows", k.kind)
			}
		}
	}
	r.Pick("movements")
	r.Group("Product")
	r.Show("/reports/inventory/movements?" + span + "&group_by=product")
	r.SameAsAPI()
	if keys := r.Text("#report-rows"); !strings.Contains(keys, "Latte") {
		t.Errorf("movements by product %q: want the products by name", keys)
	}
	r.Pick("cash")
	r.Group("Staff member")
	r.Show("/reports/cash?" + span + "&group_by=staff")
	r.SameAsAPI()
	short := `#report-rows td[data-col="over_short"].short`
	if s := r.Text(short); s != "−0.50" {
		t.Errorf("cash over/short %q, want −0.50", s)
	}
	r.ScreenshotAt("console-reports-cash", "report-about")
	// Stock: its total value is the sum of the API's values.
	r.Pick("inventory")
	var value int64
	for _, row := range r.SameAsAPI() {
		var major, minor int64
		fmt.Sscanf(row["value"], "%d.%d", &major, &minor)
		value += major*100 + minor
	}
	if got, want := webtest.Figure(r.Total()["value"]), fmt.Sprintf("%d.%02d", value/100, value%100); got != want {
		t.Errorf("stock's total value %q, want the sum of the API's %s", got, want)
	}
	r.ScreenshotAt("console-reports-stock", "report-about")
	r.Do("low stock only", chromedp.Click("#report-low"), chromedp.Click("#report-show"))
	r.Shown("/reports/inventory?low_stock=true")
	if low := r.SameAsAPI(); len(low) != 1 || low[0]["name"] != "Croissant" || r.Text("#report-rows tr.low td[data-col=low]") != "low" {
		t.Errorf("low stock %v: want the croissant, marked low", low)
	}

	// A phone: the page fits its width; the table scrolls in its box.
	r.Do("a phone", chromedp.EmulateViewport(390, 844))
	r.Pick("sales")
	r.Group("Business day")
	r.Show(week)
	if w := r.Text("#report-about"); w == "" {
		t.Error("no line saying what the report covers")
	}
	if wide := r.Overflow(); wide != "" {
		t.Errorf("on a phone the reports are wider than the screen: %s", wide)
	}
	// Nor is any other section of the console (the day's drawers and
	// printers tables scroll in their own boxes).
	// Name the elements that stick out, so a failure says which section to fix.
	sticking, err := chromedp.Run(c.b.Ctx, chromedp.Evaluate[string](`(() => {
		const w = document.documentElement.clientWidth;
		if (document.documentElement.scrollWidth <= w + 1) return '';
		return [...document.querySelectorAll('body *')].filter((e) => {
			const r = e.getBoundingClientRect();
			let scrolls = false; for (let a = e.parentElement; a; a = a.parentElement) { if (['auto', 'scroll'].includes(getComputedStyle(a).overflowX)) scrolls = true; }
			return r.width > 0 && r.right > w + 1 && !scrolls && !(e.parentElement && e.parentElement.getBoundingClientRect().right > w + 1);
		}).slice(0, 5).map((e) => (e.closest('section[id]') ? e.closest('section[id]').id + ' ' : '') + e.tagName.toLowerCase() + (e.id ? '#' + e.id : '') + (e.className ? '.' + e.className : '') + ' ' + Math.round(e.getBoundingClientRect().right) + 'px').join(', ');
	})()`))
	if err != nil || sticking != "" {
		t.Errorf("on a phone the console is wider than the screen (%v): %s stick out", err, sticking)
	}
	r.Screenshot("console-reports-phone")
	r.ScreenshotAt("console-reports-phone-table", "report-about")
	if errs := c.b.JSErrors(); len(errs) > 0 {
		t.Fatalf("JavaScript errors: %v", errs)
	}
}

// loyalSale sets up a gift card (10.00), a voucher campaign (TREAT: 10 %
// off bakery) and a loyalty member, then sells a latte and a croissant at
// register to the member with the voucher, paid 5.00 by the gift card and
// the rest by card; it answers the order's total.
func (c *consoleTest) loyalSale(register string) float64 {
	c.t.Helper()
	owner := c.p.Login(c.t, "owner@demo.test", demo.Password)
	c.call("PUT", "/api/v1/payments/methods", owner, map[string]any{"methods": []any{map[string]any{"method": "gift_card", "enabled": true}}}, 200)
	gift := c.call("POST", "/api/v1/gift-cards", c.manager, map[string]any{"initial_amount": 1000}, 201)["code"].(string)
	var cats list
	c.p.Call(c.t, "GET", "/api/v1/catalog/categories", c.manager, nil, &cats)
	var bakery string
	for _, k := range cats.Data {
		if k["name"] == "Bakery" {
			bakery = k["id"].(string)
		}
	}
	camp := c.call("POST", "/api/v1/campaigns", c.manager, map[string]any{"name": "Treat: 10 % off bakery", "type": "discount", "voucher_code": "TREAT",
		"location_ids": []string{c.shop.location}, "rules": []any{map[string]any{"type": "category_discount", "discount_type": "percent",
			"value": 1000, "category_ids": []string{bakery}}}}, 201)
	c.call("POST", "/api/v1/campaigns/"+camp["id"].(string)+"/launch", c.manager, nil, 200)
	c.call("POST", "/api/v1/loyalty/programs", c.manager, map[string]any{"name": "Beans", "points_per_unit": 1, "redemption_value": 1}, 201)
	lena := c.call("POST", "/api/v1/customers", c.manager, map[string]any{"first_name": "Lena", "last_name": "Loyal"}, 201)["id"].(string)
	c.call("POST", "/api/v1/loyalty/accounts", c.manager, map[string]any{"customer_id": lena}, 201)
	order := c.call("POST", "/api/v1/orders", c.shop.cashier, map[string]any{"location_id": c.shop.location, "channel": "pos",
		"customer_id": lena, "voucher_code": "TREAT", "line_items": []any{
			map[string]any{"product_id": c.shop.products["Latte"], "quantity": 1},
			map[string]any{"product_id": c.shop.products["Croissant"], "quantity": 1}}}, 201)
	id, total := order["id"].(string), order["total"].(float64)
	c.call("POST", "/api/v1/payments/initiate", c.shop.cashier, map[string]any{"order_id": id, "amount": 500, "method": "gift_card",
		"gift_card_code": gift, "register_id": register}, 201)
	c.call("POST", "/api/v1/payments/initiate", c.shop.cashier, map[string]any{"order_id": id, "amount": total - 500, "method": "card",
		"card_number": "4242424242424242", "register_id": register}, 201)
	c.call("POST", "/api/v1/orders/"+id+"/complete", c.shop.cashier, map[string]any{"register_id": register}, 200)
	return total
}
