package synctest

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"kassa.dev/shared/demo"
	"kassa.dev/shared/node"
	"kassa.dev/sync/change"
	"kassa.dev/sync/wait"
	"kassa.dev/web/webtest"
)

// screenshots saves the page as <dir>/<name>.png, dir being
// $KASSA_SCREENSHOTS or the test's temporary directory.
func screenshots(t *testing.T, b *webtest.Browser) func(name string) {
	dir := os.Getenv("KASSA_SCREENSHOTS")
	if dir == "" {
		dir = t.TempDir()
	} else if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	return func(name string) {
		t.Helper()
		png := get(t, b, "screenshot "+name, chromedp.CaptureScreenshot())
		if err := os.WriteFile(filepath.Join(dir, name+".png"), png, 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// get runs a for its value or fails the test.
func get[T any](t *testing.T, b *webtest.Browser, what string, a chromedp.Action[T]) T {
	t.Helper()
	v, err := chromedp.Run(b.Ctx, a)
	if err != nil {
		t.Fatalf("%s: %v\npage: %.2000s", what, err, b.Page())
	}
	return v
}

// opsLogin opens the hub's /ops page and signs in as the demo owner.
func opsLogin(t *testing.T, b *webtest.Browser, hubURL string) {
	b.Run("open the ops page", chromedp.Navigate(hubURL+"/ops"), chromedp.WaitVisible("#login"))
	b.Run("log in as the owner", chromedp.SendKeys("#email", "owner@demo.test"), chromedp.SendKeys("#password", demo.Password),
		chromedp.Click("#login-btn"), chromedp.WaitVisible("#ops"))
}

// TestOpsPageInChromium drives the hub's ops monitor in headless Chromium
// against a real hub and a real edge: the owner signs in and sees the
// edge's row green; its leaf link is cut and the row turns red by itself;
// a stolen store machine pushes a change the hub quarantines, which
// appears in the conflicts panel; the owner resolves it from the page with
// a note, it leaves the open list and the API says resolved.
func TestOpsPageInChromium(t *testing.T) {
	chromium := webtest.ChromiumPath(t)
	e := MustStartPair(t)
	var edgeID string
	wait.For(t, 20*time.Second, "the hub to see the edge connected", func() bool {
		edges, _ := e.status(t, e.hub, e.hubTok)["edges"].([]any)
		for _, x := range edges {
			if ed := x.(map[string]any); ed["connected"] == true {
				edgeID = ed["node_id"].(string)
			}
		}
		return edgeID != ""
	})

	b := webtest.Start(t, chromium, 1500, 900)
	shot := screenshots(t, b)
	opsLogin(t, b, e.hub.URL)
	row := fmt.Sprintf(`#edge-rows tr[data-node=%q]`, edgeID)
	b.Within(20*time.Second, "the edge's row is green", chromedp.WaitVisible(row+".up"))
	if up := get(t, b, "read the counts", chromedp.Text("#n-connected")); up != "1" {
		t.Errorf("connected count %q, want 1", up)
	}
	// The Link cell names the hub the store's leaf link is attached to.
	hubName := "hub-" + regexp.MustCompile(`kassa hub (\S+) serving`).FindStringSubmatch(e.hub.Output())[1]
	if link := get(t, b, "read the link cell", chromedp.Text(row+" td:nth-child(2)")); !strings.Contains(link, "at "+hubName) {
		t.Errorf("the link cell says %q, want it to name %s", link, hubName)
	}
	shot("ops-1-connected")

	// The store's link is cut: the hub stops hearing from it, the row
	// turns red with nothing reloaded.
	e.proxy.cut()
	b.Within(30*time.Second, "the row turns red", chromedp.WaitVisible(row+".down"))
	if state := get(t, b, "read the row", chromedp.Text(row+" td:nth-child(2)")); !strings.Contains(state, "Disconnected") {
		t.Errorf("cut row says %q", state)
	}
	if top := get(t, b, "the first row", chromedp.Evaluate[string](`document.querySelector('#edge-rows tr').dataset.node`)); top != edgeID {
		t.Errorf("the cut store is not first: %s", top)
	}
	shot("ops-2-disconnected")

	// A stolen store machine pushes a customer made by nobody: the hub
	// quarantines it and the page lists it.
	f := e.mustForge(t, e.location)
	now := time.Now().UTC().Format(time.RFC3339Nano)
	bad := f.change("customer", newID(), change.OpInsert, "", newID(),
		map[string]any{"first_name": "A", "last_name": "B", "created_at": now, "updated_at": now})
	if rep := f.push(t, bad); rep.Error != "" {
		t.Fatalf("push: %s", rep.Error)
	}
	var conflictID string
	wait.For(t, 10*time.Second, "the quarantined record at the hub", func() bool {
		var l listResp
		e.hub.Call(t, "GET", "/api/v1/sync/conflicts?limit=200", e.hubTok, nil, &l)
		for _, c := range l.Data {
			if c["kind"] == "quarantined" && c["entity_id"] == bad.EntityID {
				conflictID = c["id"].(string)
			}
		}
		return conflictID != ""
	})
	crow := fmt.Sprintf(`#conflict-rows tr[data-id=%q]`, conflictID)
	b.Within(20*time.Second, "the conflict appears in the panel", chromedp.WaitVisible(crow+" button.resolve"),
		chromedp.WaitVisible(crow+" button.reapply"))
	shot("ops-3-conflict")

	// Re-applying it cannot pass (its actor is still nobody): the row says
	// why and stays open.
	b.Run("re-apply", chromedp.Click(crow+" button.reapply"))
	get(t, b, "the refusal shown in the row", chromedp.Poll[bool](fmt.Sprintf(
		`document.querySelector('#conflict-rows tr[data-id="%s"] .row-error').textContent.length > 0`, conflictID),
		chromedp.WithPollingTimeout(10*time.Second)))
	if msg := get(t, b, "the row's error", chromedp.Text(crow+" .row-error")); !strings.Contains(msg, "actor") {
		t.Errorf("re-apply refusal reads %q", msg)
	}

	// Resolve it from the page, with a note.
	b.Run("resolve with a note", chromedp.Click(crow+" button.resolve"), chromedp.WaitVisible(crow+" form input"),
		chromedp.SendKeys(crow+" form input", "customer made by no user; checked with the store"),
		chromedp.Click(crow+" button.confirm"))
	b.Within(20*time.Second, "the conflict leaves the open list", chromedp.WaitNotPresent(crow))
	var one oneResp
	var l listResp
	e.hub.Call(t, "GET", "/api/v1/sync/conflicts?status=resolved&limit=200", e.hubTok, nil, &l)
	for _, c := range l.Data {
		if c["id"] == conflictID {
			one.Data = c
		}
	}
	if one.Data["status"] != "resolved" || !strings.Contains(fmt.Sprint(one.Data["resolution"]), "checked with the store") {
		t.Fatalf("after resolving from the page the API says %v", one.Data)
	}
	shot("ops-4-resolved")
	if errs := b.JSErrors(); len(errs) > 0 {
		t.Fatalf("the page raised: %v", errs)
	}
}

// TestOpsPageWithAThousandEdges seeds 1,000 enrolled edges into a real
// hub's store beside a real, connected one and checks that the page shows
// every row, the worst first (the never-seen edges, in a stable order, the
// connected one last), and that the filter narrows the table to one row.
// It logs the snapshot's size and the time to the first full render.
func TestOpsPageWithAThousandEdges(t *testing.T) {
	chromium := webtest.ChromiumPath(t)
	e := MustStartPair(t)
	var st oneResp
	e.hub.Call(t, "GET", "/api/v1/auth/me", e.hubTok, nil, &st)
	org, _ := st.Data["org_id"].(string)
	if org == "" {
		t.Fatalf("no org in /auth/me: %v", st.Data)
	}
	ids, err := node.SeedEdges(context.Background(), e.hubStore, org, e.location, 1000)
	if err != nil {
		t.Fatal(err)
	}
	wait.For(t, 20*time.Second, "the hub to list 1,001 edges, one connected", func() bool {
		edges, _ := e.status(t, e.hub, e.hubTok)["edges"].([]any)
		up := 0
		for _, x := range edges {
			if x.(map[string]any)["connected"] == true {
				up++
			}
		}
		return len(edges) == 1001 && up == 1
	})

	began := time.Now()
	e.status(t, e.hub, e.hubTok)
	t.Logf("1,001 edges: GET /sync/status %s", time.Since(began).Round(time.Millisecond))

	b := webtest.Start(t, chromium, 1500, 900)
	start := time.Now()
	opsLogin(t, b, e.hub.URL)
	b.Within(30*time.Second, "all 1,001 rows", chromedp.WaitVisible(`#edge-rows tr:nth-child(1001)`))
	t.Logf("1,001 edges: every row visible to chromedp %s after it sent the sign-in", time.Since(start).Round(time.Millisecond))
	order := get(t, b, "read the order", chromedp.Evaluate[[]string](`Array.from(document.querySelectorAll('#edge-rows tr')).map(function (r) { return r.dataset.node + ' ' + r.className; })`))
	if len(order) != 1001 || !strings.HasSuffix(order[1000], " up") {
		t.Fatalf("%d rows; the connected edge is not last: %.200v", len(order), order[len(order)-1:])
	}
	for i := 1; i < 1000; i++ {
		if order[i-1] >= order[i] {
			t.Fatalf("equal rows not in a stable order at %d: %s, %s", i, order[i-1], order[i])
		}
	}
	b.Run("filter by one node", chromedp.SendKeys("#filter", ids[500]),
		chromedp.WaitVisible(fmt.Sprintf(`#edge-rows tr[data-node=%q]`, ids[500])))
	shown, down := get(t, b, "shown", chromedp.Text("#shown")), get(t, b, "disconnected", chromedp.Text("#n-disconnected"))
	if shown != "1 of 1001 shown" || down != "1000" {
		t.Fatalf("after filtering: shown %q, disconnected %q", shown, down)
	}
	visible := get(t, b, "count visible rows", chromedp.Evaluate[int](`Array.from(document.querySelectorAll('#edge-rows tr')).filter(function (r) { return !r.hidden; }).length`))
	if visible != 1 {
		t.Fatalf("%d rows visible after filtering by a node id", visible)
	}
	size := get(t, b, "snapshot size", chromedp.Evaluate[string](`document.body.dataset.snapshotBytes || ''`))
	render := get(t, b, "render time", chromedp.Evaluate[string](`document.body.dataset.renderMs || ''`))
	first := get(t, b, "first rows", chromedp.Evaluate[string](`document.body.dataset.firstMs || ''`))
	t.Logf("1,001 edges: snapshot %s bytes, rows built in %s ms, %s ms from signed in to every row (page clock)", size, render, first)
	shot := screenshots(t, b)
	shot("ops-5-thousand-filtered")
	if errs := b.JSErrors(); len(errs) > 0 {
		t.Fatalf("the page raised: %v", errs)
	}
}
