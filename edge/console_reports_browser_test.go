package main

import (
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"kassa.dev/shared/demo"
	"kassa.dev/web/webtest"
)

// TestConsoleReportsSalesInChromium: at a demo edge the cashier sells two
// lattes for cash; the manager logs in to the console, picks the days
// around today and groups by hour, and sees the chart of net sales by
// hour, a table row for the sale's hour with its order and net, and a
// Download CSV link to the same report as CSV whose file has that net.
// Then by business day. The screenshot goes to
// $KASSA_SCREENSHOTS/console-reports.png (docs/screenshots when refreshed).
func TestConsoleReportsSalesInChromium(t *testing.T) {
	edge, p := startBrowserEdge(t)
	api := newShop(t, p)
	manager := p.Login(t, "manager@demo.test", demo.Password)
	call := func(method, path, tok string, body any, want int) map[string]any {
		t.Helper()
		var r struct {
			Data map[string]any `json:"data"`
		}
		if st := p.Call(t, method, path, tok, body, &r); st != want {
			t.Fatalf("%s %s: %d, want %d: %v", method, path, st, want, r.Data)
		}
		return r.Data
	}
	front := call("POST", "/api/v1/registers", manager, map[string]any{"location_id": api.location, "name": "Front till"}, 201)["id"].(string)
	call("POST", "/api/v1/drawers", api.cashier, map[string]any{"register_id": front, "float": map[string]any{"amount": 20000}}, 201)
	order := api.order("pos", "", line{"Latte", 2, "Oat"})
	total := call("GET", "/api/v1/orders/"+order, api.cashier, nil, 200)["total"].(float64)
	call("POST", "/api/v1/payments/initiate", api.cashier, map[string]any{"order_id": order, "amount": total, "method": "cash",
		"tendered": 5000, "register_id": front}, 201)
	call("POST", "/api/v1/orders/"+order+"/complete", api.cashier, map[string]any{"register_id": front}, 200)
	net := fmt.Sprintf("%.2f", total/100)

	b := webtest.Start(t, edge.chromium, 1024, 768)
	bctx, run, within := b.Ctx, b.Run, b.Within
	text := func(sel string) string {
		t.Helper()
		v, err := chromedp.Run(bctx, chromedp.Text(sel))
		if err != nil {
			t.Fatalf("read %s: %v", sel, err)
		}
		return v
	}
	now := time.Now().UTC()
	from, to := now.AddDate(0, 0, -1).Format("2006-01-02"), now.AddDate(0, 0, 1).Format("2006-01-02")
	run("open the page", chromedp.Navigate(p.URL+"/console"))
	run("log in", chromedp.WaitVisible("#login"), chromedp.SendKeys("#email", "manager@demo.test"),
		chromedp.SendKeys("#password", demo.Password), chromedp.Click("#login-btn"))
	within(15*time.Second, "the reports form", chromedp.WaitVisible("#report-form"))
	run("pick the days and group by hour", chromedp.SetValue("#report-from", from), chromedp.SetValue("#report-to", to),
		chromedp.SetValue("#report-group", "hour"), chromedp.Click("#report-show"))
	within(15*time.Second, "the chart and the CSV link", chromedp.WaitVisible("#report-chart canvas"), chromedp.WaitVisible("#report-csv"))
	rows := text("#report-rows")
	if !strings.Contains(rows, net) || text("#report-key") != "Hour" {
		t.Errorf("by hour: rows %q key %q, want the sale's net %s by Hour", rows, text("#report-key"), net)
	}
	src, err := chromedp.Run(bctx, chromedp.Evaluate[string](`document.getElementById('report-csv').dataset.src`))
	if err != nil {
		t.Fatalf("CSV link: %v", err)
	}
	href, _ := chromedp.Run(bctx, chromedp.Evaluate[string](`document.getElementById('report-csv').href`))
	if !strings.HasPrefix(href, "blob:") {
		t.Errorf("CSV link %q: want the fetched file (blob:)", href)
	}
	req, err := http.NewRequest("GET", p.URL+src, nil)
	if err != nil {
		t.Fatalf("CSV link %q: %v", src, err)
	}
	req.Header.Set("Authorization", "Bearer "+manager)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	file := string(body)
	if want := "/api/v1/reports/sales?date_from=" + from + "&date_to=" + to + "&group_by=hour&format=csv"; src != want {
		t.Errorf("CSV link %q, want %q", src, want)
	}
	if !strings.Contains(file, net) || !strings.Contains(strings.SplitN(file, "\n", 2)[0], "net") {
		t.Errorf("CSV file %q: want a header with net and the sale's net %s", file, net)
	}
	run("group by business day", chromedp.SetValue("#report-group", "day"), chromedp.Click("#report-show"))
	within(15*time.Second, "the table by day", chromedp.WaitVisible(`#report-rows tr[data-group^="20"]`))
	if k := text("#report-key"); k != "Business day" {
		t.Errorf("key %q, want Business day", k)
	}
	run("scroll to the report", chromedp.ScrollIntoView("#reports"))
	png, err := chromedp.Run(bctx, chromedp.CaptureScreenshot())
	if err != nil {
		t.Fatalf("screenshot: %v", err)
	}
	dir := os.Getenv("KASSA_SCREENSHOTS")
	if dir == "" {
		dir = t.TempDir()
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "console-reports.png"), png, 0o644); err != nil {
		t.Fatal(err)
	}
	if errs := b.JSErrors(); len(errs) > 0 {
		t.Fatalf("JavaScript errors: %v", errs)
	}
}
