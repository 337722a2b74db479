package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"kassa.dev/edge/edgenode"
	"kassa.dev/shared/demo"
	"kassa.dev/shared/node/nodetest"
	"kassa.dev/web/webtest"
)

// TestKDSPageInChromium drives the KDS page in headless Chromium against a
// real edge (the binary's own Run, with the demo org): log in as the
// kitchen user, pick the kitchen station, see tickets of orders taken
// through the API appear with their timers turning amber and red, bump one
// and see it leave, recall it, then stop the edge (the page shows that it
// is reconnecting), start it again and see the page recover by itself and
// show an order taken meanwhile. It saves a screenshot of the page with
// tickets to web/testdata/output/kds.png.
func TestKDSPageInChromium(t *testing.T) {
	edge, p := startBrowserEdge(t)
	api := newShop(t, p)

	b := webtest.Start(t, edge.chromium, 1600, 900)
	bctx, run, within := b.Ctx, b.Run, b.Within
	get := func(what string, a chromedp.Action[string]) string {
		t.Helper()
		v, err := chromedp.Run(bctx, a)
		if err != nil {
			t.Fatalf("%s: %v", what, err)
		}
		return v
	}
	ticket := func(id string) string { return fmt.Sprintf(`.ticket[data-id="%s"]`, id) }

	// Log in as the kitchen, pick the kitchen station.
	run("open the page", chromedp.Navigate(p.URL+"/kds?amber=3&red=6"), chromedp.WaitVisible("#login"))
	run("log in",
		chromedp.SendKeys("#email", "kitchen@demo.test"), chromedp.SendKeys("#password", demo.Password),
		chromedp.Click("#login-btn"), chromedp.WaitVisible(`#stations button[data-station="kitchen"]`))
	run("pick the kitchen", chromedp.Click(`#stations button[data-station="kitchen"]`),
		chromedp.WaitVisible(`#stations button[data-station="kitchen"][aria-pressed="true"]`))

	// An order through the API shows up at once, with only its kitchen lines.
	first := api.order("pos", "no chilli, extra lemon", line{"Avocado Toast", 2, ""}, line{"Latte", 1, "Oat"})
	within(10*time.Second, "the first ticket appears", chromedp.WaitVisible(ticket(first)))
	text := get("read the ticket", chromedp.Text(ticket(first)))
	if !strings.Contains(text, "Avocado Toast") || !strings.Contains(text, "no chilli") || strings.Contains(text, "Latte") {
		t.Fatalf("kitchen ticket shows %q", text)
	}
	// All stations: the bar's lines (with their modifiers) join in.
	run("pick all stations", chromedp.Click(`#stations button[data-station=""]`))
	within(10*time.Second, "the bar line on the first ticket", chromedp.WaitVisible(ticket(first)+" .mods"))
	// Timers: amber after 3 s, red after 6 s; orders a few seconds apart
	// show all three colours.
	within(20*time.Second, "the first ticket turns amber", chromedp.WaitVisible(ticket(first)+".amber"))
	others := []string{api.order("online", "", line{"Ham & Cheese Toastie", 1, ""}, line{"Croissant", 2, ""}, line{"Iced Latte", 1, "Soy"})}
	within(20*time.Second, "the first ticket turns red", chromedp.WaitVisible(ticket(first)+".red"))
	others = append(others,
		api.order("pos", "table 7", line{"Banana Bread", 1, ""}, line{"Flat White", 2, "Almond"}, line{"Blueberry Muffin", 1, ""}),
		api.order("partner", "pickup 12:30", line{"Avocado Toast", 1, ""}, line{"Ham & Cheese Toastie", 2, ""}),
	)
	for _, id := range others {
		within(10*time.Second, "ticket "+id, chromedp.WaitVisible(ticket(id)))
	}
	within(10*time.Second, "the second ticket is amber", chromedp.WaitVisible(ticket(others[0])+".amber"))
	allDay := get("read the all-day count", chromedp.Text("#allday"))
	if !strings.Contains(allDay, "3\nAvocado Toast") && !strings.Contains(allDay, "3 Avocado Toast") {
		t.Errorf("all-day count %q: want 3 Avocado Toast", allDay)
	}
	png, err := chromedp.Run(bctx, chromedp.CaptureScreenshot())
	if err != nil {
		t.Fatalf("screenshot: %v", err)
	}
	out := filepath.Join("..", "web", "testdata", "output")
	if err := os.MkdirAll(out, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(out, "kds.png"), png, 0o644); err != nil {
		t.Fatal(err)
	}

	// Tap to bump: the ticket leaves this screen and the order is ready.
	run("bump", chromedp.Click(ticket(first)+" ul"))
	within(10*time.Second, "the bumped ticket leaves", chromedp.WaitNotPresent(ticket(first)))
	if st := api.kitchenStatus(first); st != "ready" {
		t.Fatalf("after the bump the order is %s, want ready", st)
	}
	run("recall", chromedp.Click("#recall"))
	within(10*time.Second, "the recalled ticket is back", chromedp.WaitVisible(ticket(first)+".in_progress"))

	// Cut the stream: stop the edge. The page says it is reconnecting.
	edge.stop(p)
	within(20*time.Second, "the reconnecting banner", chromedp.WaitVisible("#banner"))

	// Start it again on the same address and data: the page recovers by
	// itself and shows an order taken right after the restart.
	p = edge.restart()
	api = newShop(t, p)
	late := api.order("pos", "after the restart", line{"Croissant", 1, ""})
	within(30*time.Second, "the page recovers", chromedp.WaitNotVisible("#banner"), chromedp.WaitVisible(ticket(late)))
	within(10*time.Second, "the earlier tickets stay", chromedp.WaitVisible(ticket(others[0])))

	if errs := b.JSErrors(); len(errs) > 0 {
		t.Fatalf("JavaScript errors: %v", errs)
	}
}

// shop takes orders at the demo edge through the API, as a terminal does.
type shop struct {
	t        *testing.T
	p        *nodetest.Proc
	cashier  string
	location string
	products map[string]string // name → id
	options  map[string]string // milk option name → id
}

type line struct {
	product string
	qty     int
	milk    string
}

type list struct {
	Data []map[string]any `json:"data"`
}

func newShop(t *testing.T, p *nodetest.Proc) *shop {
	t.Helper()
	s := &shop{t: t, p: p, products: map[string]string{}, options: map[string]string{}}
	owner := p.Login(t, "owner@demo.test", demo.Password)
	s.cashier = p.Login(t, "cashier@demo.test", demo.Password)
	var l list
	p.Call(t, "GET", "/api/v1/locations", owner, nil, &l)
	s.location = l.Data[0]["id"].(string)
	// Drinks go to the bar; bakery and food stay in the kitchen.
	p.Call(t, "GET", "/api/v1/catalog/categories", owner, nil, &l)
	for _, c := range l.Data {
		if name := c["name"].(string); name == "Coffee" || name == "Tea" || name == "Cold Drinks" {
			if st := p.Call(t, "PATCH", "/api/v1/catalog/categories/"+c["id"].(string), owner, map[string]any{"station": "bar"}, nil); st != 200 {
				t.Fatalf("set station of %s: %d", name, st)
			}
		}
	}
	p.Call(t, "GET", "/api/v1/catalog/products?limit=200", owner, nil, &l)
	for _, pr := range l.Data {
		s.products[pr["name"].(string)] = pr["id"].(string)
	}
	p.Call(t, "GET", "/api/v1/catalog/modifiers/groups", owner, nil, &l)
	for _, o := range l.Data[0]["options"].([]any) {
		o := o.(map[string]any)
		s.options[o["name"].(string)] = o["id"].(string)
	}
	return s
}

func (s *shop) order(channel, notes string, lines ...line) string {
	s.t.Helper()
	var items []any
	for _, l := range lines {
		it := map[string]any{"product_id": s.products[l.product], "quantity": l.qty}
		if l.milk != "" {
			it["modifier_option_ids"] = []string{s.options[l.milk]}
		}
		items = append(items, it)
	}
	var out struct {
		Data map[string]any `json:"data"`
	}
	st := s.p.Call(s.t, "POST", "/api/v1/orders", s.cashier,
		map[string]any{"location_id": s.location, "channel": channel, "notes": notes, "line_items": items}, &out)
	if st != 201 {
		s.t.Fatalf("create order: %d %v", st, out)
	}
	return out.Data["id"].(string)
}

func (s *shop) kitchenStatus(id string) string {
	s.t.Helper()
	var out struct {
		Data map[string]any `json:"data"`
	}
	s.p.Call(s.t, "GET", "/api/v1/orders/"+id, s.cashier, nil, &out)
	st, _ := out.Data["kitchen_status"].(string)
	return st
}

// browserEdge is the demo edge a browser test drives: the binary's own Run
// with the demo org, some settings from the environment. stop and restart
// take it away and bring it back on the same address and data, as a page
// sees an edge that was switched off and on.
type browserEdge struct {
	t        *testing.T
	chromium string
	env      map[string]string
	dir      string
	addr     string
}

// startBrowserEdge finds Chromium (the test is skipped without it), then
// starts the edge.
func startBrowserEdge(t *testing.T) (*browserEdge, *nodetest.Proc) {
	t.Helper()
	e := &browserEdge{t: t, chromium: webtest.ChromiumPath(t), dir: t.TempDir(),
		env: map[string]string{"KASSA_LOG_LEVEL": "WARN"}}
	return e, nodetest.Start(t, edgenode.Run, e.env, "--http-addr", "127.0.0.1:0", "--data-dir", e.dir, "--demo")
}

func (e *browserEdge) stop(p *nodetest.Proc) {
	e.t.Helper()
	e.addr = strings.TrimPrefix(p.URL, "http://")
	p.Stop(e.t)
}

func (e *browserEdge) restart() *nodetest.Proc {
	e.t.Helper()
	return nodetest.Start(e.t, edgenode.Run, e.env, "--http-addr", e.addr, "--data-dir", e.dir)
}
