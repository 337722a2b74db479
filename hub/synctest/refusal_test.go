package synctest

import (
	"context"
	"fmt"
	"maps"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"kassa.dev/shared/demo"
	"kassa.dev/shared/node"
	"kassa.dev/sync/wait"
	"kassa.dev/web/webtest"
)

var anyUUID = regexp.MustCompile(`[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}`)

// consoleLogin opens the edge's console and signs in as the demo manager.
func consoleLogin(t *testing.T, b *webtest.Browser, edgeURL string) {
	b.Run("open the console", chromedp.Navigate(edgeURL+"/console"), chromedp.WaitVisible("#login"))
	b.Run("log in as the manager", chromedp.SendKeys("#email", "manager@demo.test"), chromedp.SendKeys("#password", demo.Password),
		chromedp.Click("#login-btn"), chromedp.WaitVisible("#console"))
}

// TestARefusedChangeIsShownAtTheStoreAndFixedFromTheOpsPage: an honest
// store refunds a sale while cut off, within the refund limit it knows;
// meanwhile head office lowered the limit, so the hub refuses the refund.
// The edge learns it: its status and console say NOT in sync and show the
// refusal as a sentence naming the order by its number, never "in sync".
// The ops page shows the refusal the same way, with its sides labelled;
// a re-apply under the lowered limit says why it still fails; once the
// limit is back, a re-apply from the page admits it, and the store's
// console turns green by itself, with hub and edge equal (hub verify).
func TestARefusedChangeIsShownAtTheStoreAndFixedFromTheOpsPage(t *testing.T) {
	chromium := webtest.ChromiumPath(t)
	e := MustStartPair(t)
	wait.For(t, 20*time.Second, "the demo catalog at the edge", func() bool { return len(e.products(t, e.edge, e.edgeTok)) == 15 })
	orderID := e.sale(t, e.products(t, e.edge, e.edgeTok)[0]["id"].(string))
	var order oneResp
	wait.For(t, 20*time.Second, "the sale at the hub", func() bool {
		return e.hub.Call(t, "GET", "/api/v1/orders/"+orderID, e.hubTok, nil, &order) == 200 && order.Data["status"] == "completed"
	})
	number, total := order.Data["number"].(string), order.Data["total"].(float64)
	wait.For(t, 30*time.Second, "the edge in sync", func() bool { return e.status(t, e.edge, e.edgeMgr)["in_sync"] == true })

	// A browser's context lasts 3 minutes (webtest.Start): one per page.
	b := webtest.Start(t, chromium, 1400, 900)
	shot := screenshots(t, b)
	consoleLogin(t, b, e.edge.URL)
	b.Within(20*time.Second, "the console is green", chromedp.WaitVisible(`#status[data-state="ok"]`))
	shot("console-1-in-sync")

	// Cut off, the store refunds within the limit it knows; head office
	// lowered it meanwhile.
	e.proxy.cut()
	wait.For(t, 20*time.Second, "the edge to see the link down", func() bool { return e.status(t, e.edge, e.edgeMgr)["connected"] == false })
	if st := e.hub.Call(t, "PATCH", "/api/v1/settings", e.hubTok, map[string]any{"refund_limit": 100}, nil); st != 200 {
		t.Fatalf("lower the refund limit: %d", st)
	}
	if st := e.edge.Call(t, "POST", "/api/v1/orders/"+orderID+"/refund", e.edgeTok, map[string]any{"reason": "cold"}, nil); st != 200 {
		t.Fatalf("refund at the edge: %d", st)
	}
	e.proxy.restore()

	// The edge learns of the refusal and never says in sync.
	var refusal map[string]any
	wait.For(t, 30*time.Second, "the refusal at the edge", func() bool {
		st := e.status(t, e.edge, e.edgeMgr)
		if st["in_sync"] == true {
			t.Fatalf("the edge says in sync while the hub refused its refund: %v", st)
		}
		rs, _ := st["refused"].([]any)
		for _, x := range rs {
			if r := x.(map[string]any); r["entity"] == "refund" {
				refusal = r
			}
		}
		return refusal != nil && st["connected"] == true
	})
	wait.For(t, 10*time.Second, "the edge's refused-changes gauge", func() bool {
		// The refund, and the receipt it was numbered with (docs/receipts.md).
		return regexp.MustCompile(`(?m)^kassa_sync_refused_changes [1-9]`).MatchString(metricsText(t, e.edge.URL))
	})
	summary := refusal["summary"].(string)
	if !strings.Contains(summary, "order "+number) || !strings.Contains(summary, "refund_limit") || anyUUID.MatchString(summary) {
		t.Errorf("the refusal reads %q: want order %s named by its number, the reason, no ids", summary, number)
	}
	b.Within(20*time.Second, "the console says the hub refused a change",
		chromedp.WaitVisible(`#status[data-state="refused"]`), chromedp.WaitVisible(`#refusal-rows li[data-reason="refused_actor"]`))
	if li := get(t, b, "the refusal in the console", chromedp.Text(`#refusal-rows li[data-reason="refused_actor"]`)); !strings.Contains(li, "order "+number) {
		t.Errorf("the console lists %q", li)
	}
	if banner := get(t, b, "the banner", chromedp.Text("#status-text")); strings.Contains(banner, "in sync") && !strings.Contains(banner, "NOT in sync") {
		t.Errorf("the banner reads %q while a change is refused", banner)
	}
	shot("console-2-refused")
	if errs := b.JSErrors(); len(errs) > 0 {
		t.Fatalf("the console raised: %v", errs)
	}

	// The ops page shows it as a sentence, sides labelled.
	var conflictID string
	for _, c := range (hubState{e, e.hubTok}).list(t, "/api/v1/sync/conflicts?status=open&limit=200") {
		if c["kind"] == "quarantined" && c["entity"] == "refund" {
			conflictID = c["id"].(string)
		}
	}
	if conflictID == "" {
		t.Fatal("no quarantined refund at the hub")
	}
	b = webtest.Start(t, chromium, 1500, 900)
	shot = screenshots(t, b)
	opsLogin(t, b, e.hub.URL)
	crow := fmt.Sprintf(`#conflict-rows tr[data-id=%q]`, conflictID)
	b.Within(20*time.Second, "the refusal on the ops page", chromedp.WaitVisible(crow+" button.reapply"), chromedp.WaitVisible(crow+" button.take-hub"))
	if what := get(t, b, "the conflict's sentence", chromedp.Text(crow+" td.what")); !strings.Contains(what, "order "+number) ||
		anyUUID.MatchString(what) || !strings.HasPrefix(what, "The hub refused") {
		t.Errorf("the ops page says %q", what)
	}
	if head := get(t, b, "the conflicts' headers", chromedp.Text("#conflicts thead")); !strings.Contains(head, "Hub's side") ||
		!strings.Contains(head, "Store's side") || strings.Contains(head, "Local (edge)") {
		t.Errorf("conflict columns: %q", head)
	}

	// Under the lowered limit a re-apply still fails, and says why.
	b.Run("re-apply under the lowered limit", chromedp.Click(crow+" button.reapply"))
	get(t, b, "the reason in the row", chromedp.Poll[bool](fmt.Sprintf(
		`document.querySelector('#conflict-rows tr[data-id="%s"] .row-error').textContent.length > 0`, conflictID),
		chromedp.WithPollingTimeout(10*time.Second)))
	if msg := get(t, b, "the row's error", chromedp.Text(crow+" .row-error")); !strings.Contains(msg, "refund_limit") {
		t.Errorf("re-apply refusal reads %q", msg)
	}
	shot("ops-5-refused")

	// Head office puts the limit back; a re-apply from the page admits it.
	if st := e.hub.Call(t, "PATCH", "/api/v1/settings", e.hubTok, map[string]any{"refund_limit": 5000}, nil); st != 200 {
		t.Fatalf("raise the refund limit: %d", st)
	}
	b.Run("re-apply under the restored limit", chromedp.Click(crow+" button.reapply"))
	b.Within(20*time.Second, "the conflict leaves the open list", chromedp.WaitNotPresent(crow))
	if o := (hubState{e, e.hubTok}).get(t, "/api/v1/orders/"+orderID); o["refunded_total"] != total {
		t.Errorf("hub's order after the re-apply: %v", o)
	}

	// The store's console turns green by itself; both stores hold the same.
	if errs := b.JSErrors(); len(errs) > 0 {
		t.Fatalf("the ops page raised: %v", errs)
	}
	b = webtest.Start(t, chromium, 1400, 900)
	shot = screenshots(t, b)
	consoleLogin(t, b, e.edge.URL)
	b.Within(60*time.Second, "the console is green again", chromedp.WaitVisible(`#status[data-state="ok"]`))
	if st := e.status(t, e.edge, e.edgeMgr); st["refused_count"] != nil && st["refused_count"] != 0.0 {
		t.Errorf("the edge still counts refusals: %v", st)
	}
	shot("console-3-fixed")
	if !strings.Contains(metricsText(t, e.edge.URL), "kassa_sync_refused_changes 0") {
		t.Error("the edge's gauge still counts the refusal")
	}
	cmp, err := node.CompareScope(context.Background(), e.hubStore, e.edgeDir)
	if err != nil || !maps.Equal(cmp.Hub, cmp.Edge) {
		t.Fatalf("hub verify: %v\nhub  %v\nedge %v", err, cmp.Hub, cmp.Edge)
	}
	if errs := b.JSErrors(); len(errs) > 0 {
		t.Fatalf("the pages raised: %v", errs)
	}
}
