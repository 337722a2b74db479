package synctest

import (
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"kassa.dev/shared/demo"
	"kassa.dev/web/webtest"
)

// TestHubReportsPageInChromium: at the hub's /reports the owner signs in,
// types a range of business days, groups by hour and shows it: the chart
// of net sales by hour (24 bars, 0 in a range without sales), the table
// saying there were no sales, and a Download CSV link to the same report
// as CSV, which the hub answers with its header row. Then by business day.
// Screenshot: $KASSA_SCREENSHOTS/hub-reports.png.
func TestHubReportsPageInChromium(t *testing.T) {
	chromium := webtest.ChromiumPath(t)
	e := MustStartPair(t)
	b := webtest.Start(t, chromium, 1024, 768)
	shot := screenshots(t, b)
	b.Run("open the reports page", chromedp.Navigate(e.hub.URL+"/reports"), chromedp.WaitVisible("#login"))
	b.Run("log in as the owner", chromedp.SendKeys("#email", "owner@demo.test"), chromedp.SendKeys("#password", demo.Password),
		chromedp.Click("#login-btn"), chromedp.WaitVisible("#report-form"))
	from, to := "2026-01-05", "2026-01-11"
	b.Run("pick the days and group by hour", chromedp.SetValue("#report-from", from), chromedp.SetValue("#report-to", to),
		chromedp.SetValue("#report-group", "hour"), chromedp.Click("#report-show"))
	b.Within(15*time.Second, "the chart and the CSV link", chromedp.WaitVisible("#report-chart canvas"), chromedp.WaitVisible("#report-csv"))
	if rows := get(t, b, "rows", chromedp.Text("#report-rows")); rows != "No sales in these days." {
		t.Errorf("rows %q, want No sales in these days.", rows)
	}
	src := get(t, b, "CSV link", chromedp.Evaluate[string](`document.getElementById('report-csv').dataset.src`))
	if want := "/api/v1/reports/sales?date_from=" + from + "&date_to=" + to + "&group_by=hour&format=csv"; src != want {
		t.Errorf("CSV link %q, want %q", src, want)
	}
	req, err := http.NewRequest("GET", e.hub.URL+src, nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+e.hubTok)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || !strings.Contains(string(body), "net") {
		t.Errorf("CSV: %d %q, want 200 with a header naming net", resp.StatusCode, body)
	}
	b.Run("group by business day", chromedp.SetValue("#report-group", "day"), chromedp.Click("#report-show"))
	b.Within(15*time.Second, "the key says business day", chromedp.WaitVisible(`//th[@id="report-key"][text()="Business day"]`))
	shot("hub-reports")
	if errs := b.JSErrors(); len(errs) > 0 {
		t.Fatalf("JavaScript errors: %v", errs)
	}
}
