package webtest

import (
	"context"
	"encoding/csv"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/browser"
	"github.com/chromedp/chromedp"
)

// Reader drives the reports view (web/static/common/reports.js) of the
// store console or the hub's /reports page as a manager would: clicks on
// the report and the day presets, dates typed, groupings and stores picked
// from their lists. Its checks read what the page shows and compare it
// with the API's answer to the same query, fetched with Token from Base.
type Reader struct {
	T *testing.T
	B *Browser
	// Base is the node's URL; Token a bearer token of the same org.
	Base, Token string
	downloads   string
}

// NewReader is a reader of the reports view on b.
func NewReader(t *testing.T, b *Browser, base, token string) *Reader {
	return &Reader{T: t, B: b, Base: base, Token: token}
}

// Do runs actions within 20 s, or fails showing the page.
func (r *Reader) Do(what string, actions ...chromedp.Action[chromedp.Void]) {
	r.T.Helper()
	r.B.Within(20*time.Second, what, actions...)
}

// Pick clicks the report button of kind (sales, tax, payments, inventory,
// movements, loyalty, gift-cards, gift-cards-owed, cash, campaigns); the
// page shows it at once.
func (r *Reader) Pick(kind string) {
	r.T.Helper()
	r.Do("pick the "+kind+" report", chromedp.Click(fmt.Sprintf(`#report-kinds button[data-kind="%s"]`, kind)),
		chromedp.WaitVisible(fmt.Sprintf(`#reports[data-kind="%s"][data-state="shown"]`, kind)))
}

// Preset clicks a day preset: today, yesterday, week, month, last-month.
func (r *Reader) Preset(name string) {
	r.T.Helper()
	r.Do("days: "+name, chromedp.Click(fmt.Sprintf(`.rp-presets button[data-preset="%s"]`, name)))
}

// Days types the business days from and to (YYYY-MM-DD) into the date
// fields: a tap on the field's first part, then the digits in the order
// the browser's locale shows them (month, day, year in en-US), as a user
// types them.
func (r *Reader) Days(from, to string) {
	r.T.Helper()
	order := r.eval(`new Intl.DateTimeFormat(undefined, {year: 'numeric', month: '2-digit', day: '2-digit'})
		.formatToParts(new Date(2006, 0, 2)).filter(p => p.type !== 'literal').map(p => p.type).join(',')`)
	layout := strings.NewReplacer("year", "2006", "month", "01", "day", "02", ",", "").Replace(order)
	for _, f := range [][2]string{{"#report-from", from}, {"#report-to", to}} {
		sel, day := f[0], f[1]
		d, err := time.Parse(time.DateOnly, day)
		if err != nil {
			r.T.Fatal(err)
		}
		r.Do("scroll to "+sel, chromedp.ScrollIntoView(sel))
		box, err := chromedp.Run(r.B.Ctx, chromedp.Evaluate[[]float64](`(() => { const b = document.querySelector('`+sel+`').getBoundingClientRect();
			return [b.left, b.top + b.height / 2]; })()`))
		if err != nil {
			r.T.Fatalf("where is %s: %v", sel, err)
		}
		r.Do("type "+day, chromedp.MouseClickXY(box[0]+10, box[1]), chromedp.KeyEvent(d.Format(layout)))
		if got := r.value(sel); got != day {
			r.T.Fatalf("typed %s into %s, the field holds %q", day, sel, got)
		}
	}
}

// Group picks a grouping by its name in the list ("Hour of day").
func (r *Reader) Group(name string) {
	r.T.Helper()
	r.choose("#report-group", name)
}

// Store picks a store in the hub's filter by its name ("All stores").
func (r *Reader) Store(name string) {
	r.T.Helper()
	r.choose("#report-location", name)
}

// choose picks the option named name in the list sel, by the keyboard.
func (r *Reader) choose(sel, name string) {
	r.T.Helper()
	r.Do("pick "+name, chromedp.Focus(sel), chromedp.SendKeys(sel, name))
	got := r.eval(`(() => { const s = document.querySelector('` + sel + `'); return s.options[s.selectedIndex].text; })()`)
	if got != name {
		r.T.Fatalf("picked %q in %s, it shows %q", name, sel, got)
	}
}

// Show clicks Show and waits until the page shows the report of query
// (the API path and query string, as the page asks for it).
func (r *Reader) Show(query string) {
	r.T.Helper()
	r.Do("show", chromedp.Click("#report-show"))
	r.Shown(query)
}

// Shown waits until the page shows the report of query.
func (r *Reader) Shown(query string) {
	r.T.Helper()
	r.Do("the report of "+query, chromedp.WaitVisible(fmt.Sprintf(`#reports[data-state="shown"][data-query="%s"]`, query)))
}

// Query is the API query of the report on screen (path and query string).
func (r *Reader) Query() string {
	r.T.Helper()
	return r.eval(`document.getElementById('reports').dataset.query || ''`)
}

// Text is the text of the first element sel matches.
func (r *Reader) Text(sel string) string {
	r.T.Helper()
	v, err := chromedp.Run(r.B.Ctx, chromedp.Text(sel))
	if err != nil {
		r.T.Fatalf("text of %s: %v", sel, err)
	}
	return strings.TrimSpace(v)
}

func (r *Reader) value(sel string) string {
	return r.eval(`document.querySelector('` + sel + `').value`)
}

func (r *Reader) eval(js string) string {
	r.T.Helper()
	v, err := chromedp.Run(r.B.Ctx, chromedp.Evaluate[string](js))
	if err != nil {
		r.T.Fatalf("%s: %v", js, err)
	}
	return v
}

// Table is the figures the table shows: per body row, its key (the first
// column's text, "" without one) and the text of each cell that shows a
// field as the API's CSV has it (money, counts, names) by column.
func (r *Reader) Table() []Row {
	r.T.Helper()
	rows, err := chromedp.Run(r.B.Ctx, chromedp.Evaluate[[]Row](`[...document.querySelectorAll('#report-rows tr:not(.none)')].map(tr => ({
		key: (tr.querySelector('th') || {}).textContent || '',
		cells: Object.fromEntries([...tr.querySelectorAll('td[data-col][data-plain]')].map(td => [td.dataset.col, td.textContent]))}))`))
	if err != nil {
		r.T.Fatalf("read the table: %v", err)
	}
	return rows
}

// Row is a row of the report's table as the page shows it.
type Row struct {
	Key   string            `json:"key"`
	Cells map[string]string `json:"cells"`
}

// Total is the total row's figure cells by column (nil without one).
func (r *Reader) Total() map[string]string {
	r.T.Helper()
	cells, err := chromedp.Run(r.B.Ctx, chromedp.Evaluate[map[string]string](`(() => { const tr = document.getElementById('report-total');
		return tr ? Object.fromEntries([...tr.querySelectorAll('td[data-col]')].map(td => [td.dataset.col, td.textContent])) : null; })()`))
	if err != nil {
		r.T.Fatalf("read the total: %v", err)
	}
	return cells
}

// CSV answers the API's CSV of query (path and query string under
// /api/v1, as the page asks): its header and records.
func (r *Reader) CSV(query string) [][]string {
	r.T.Helper()
	sep := "&"
	if !strings.Contains(query, "?") {
		sep = "?"
	}
	req, err := http.NewRequest("GET", r.Base+"/api/v1"+query+sep+"format=csv", nil)
	if err != nil {
		r.T.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+r.Token)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		r.T.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != 200 {
		r.T.Fatalf("CSV of %s: %d %s", query, resp.StatusCode, body)
	}
	recs, err := csv.NewReader(strings.NewReader(string(body))).ReadAll()
	if err != nil || len(recs) == 0 {
		r.T.Fatalf("CSV of %s: %v %q", query, err, body)
	}
	return recs
}

// Figure is a figure as the page shows it, as the CSV writes it: no
// thousands separators, a minus sign as "-".
func Figure(shown string) string {
	return strings.ReplaceAll(strings.ReplaceAll(strings.TrimSpace(shown), ",", ""), "−", "-")
}

// SameAsAPI checks that the table shows the API's rows of the report on
// screen, in its order, each figure equal to the API's CSV field of the
// same name (money in major units with the currency's decimals); it
// answers the rows the API gave (by column name) for further checks.
func (r *Reader) SameAsAPI() []map[string]string {
	r.T.Helper()
	query := r.Query()
	recs := r.CSV(query)
	head, api := recs[0], recs[1:]
	shown := r.Table()
	if len(shown) != len(api) {
		r.T.Fatalf("%s: the page shows %d rows, the API has %d:\npage %v\nAPI %v", query, len(shown), len(api), shown, api)
	}
	out := make([]map[string]string, len(api))
	for i, rec := range api {
		out[i] = map[string]string{}
		for j, name := range head {
			out[i][name] = rec[j]
		}
		if len(shown[i].Cells) == 0 {
			r.T.Errorf("%s row %d: no figures shown", query, i)
		}
		for name, text := range shown[i].Cells {
			if want, ok := out[i][name]; !ok || Figure(text) != want {
				r.T.Errorf("%s row %d (%s) %s: the page shows %q, the API %q", query, i, shown[i].Key, name, text, want)
			}
		}
	}
	return out
}

// DownloadCSV clicks Download CSV and answers the file the browser saved.
func (r *Reader) DownloadCSV() []byte {
	r.T.Helper()
	if r.downloads == "" {
		r.downloads = r.T.TempDir()
		if _, err := chromedp.CallBrowser(r.B.Ctx, browser.SetDownloadBehavior, browser.SetDownloadBehaviorParams{
			Behavior: browser.SetDownloadBehaviorBehaviorAllow, DownloadPath: r.downloads}); err != nil {
			r.T.Fatalf("allow downloads: %v", err)
		}
	}
	name := r.eval(`document.getElementById('report-csv').download`)
	path := filepath.Join(r.downloads, name)
	os.Remove(path)
	r.Do("download the CSV", chromedp.WaitVisible("#report-csv"), chromedp.Click("#report-csv"))
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	for {
		if b, err := os.ReadFile(path); err == nil {
			return b
		}
		select {
		case <-ctx.Done():
			entries, _ := os.ReadDir(r.downloads)
			r.T.Fatalf("no %s downloaded within 20 s (the directory holds %v)", name, entries)
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// Overflow names what of the reports view is wider than the screen
// ("" when it fits): the table may be, in its own scrolling box.
func (r *Reader) Overflow() string {
	r.T.Helper()
	return r.eval(`[...document.querySelectorAll('#reports, #reports *')].filter(e => !e.closest('.rp-scroll table') &&
		e.getBoundingClientRect().right > document.documentElement.clientWidth + 0.5).map(e => e.tagName + '#' + e.id + '.' + e.className).join(', ')`)
}

// Screenshot scrolls the reports view to the top of the screen and saves what the
// screen shows as <$KASSA_SCREENSHOTS or a temporary directory>/<name>.png;
// it answers the file's path.
func (r *Reader) Screenshot(name string) string {
	r.T.Helper()
	return r.ScreenshotAt(name, "report-kinds")
}

// ScreenshotAt is Screenshot with the element of that id at the top.
func (r *Reader) ScreenshotAt(name, id string) string {
	r.T.Helper()
	dir := os.Getenv("KASSA_SCREENSHOTS")
	if dir == "" {
		dir = r.T.TempDir()
	} else if err := os.MkdirAll(dir, 0o755); err != nil {
		r.T.Fatal(err)
	}
	if _, err := chromedp.Run(r.B.Ctx, chromedp.Evaluate[bool](`document.getElementById('`+id+`').scrollIntoView({block: 'start'}), true`)); err != nil {
		r.T.Fatalf("scroll to the reports: %v", err)
	}
	png, err := chromedp.Run(r.B.Ctx, chromedp.CaptureScreenshot())
	if err != nil {
		r.T.Fatalf("screenshot %s: %v", name, err)
	}
	path := filepath.Join(dir, name+".png")
	if err := os.WriteFile(path, png, 0o644); err != nil {
		r.T.Fatal(err)
	}
	return path
}
