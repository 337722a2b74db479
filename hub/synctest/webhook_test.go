package synctest

import (
	"fmt"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"kassa.dev/hub/hubnode"
	"kassa.dev/shared/demo"
	"kassa.dev/shared/kassa"
	"kassa.dev/shared/node/nodetest"
	"kassa.dev/shared/webhooktest"
	"kassa.dev/sync/wait"
)

// registerHook registers r at the hub p for events and gives it the secret.
func registerHook(t *testing.T, p *nodetest.Proc, tok string, r *webhooktest.Receiver, events ...string) string {
	t.Helper()
	var w oneResp
	if st := p.Call(t, "POST", "/api/v1/webhooks", tok, map[string]any{"url": r.URL(), "events": events}, &w); st != 201 {
		t.Fatalf("register webhook: %d %v", st, w)
	}
	r.SetSecret(w.Data["secret"].(string))
	return w.Data["id"].(string)
}

// onePerDelivery checks that every delivery id carried one event and
// returns, per data.id, the delivery ids that carried it.
func onePerDelivery(t *testing.T, got []webhooktest.Received) map[string]map[string]bool {
	t.Helper()
	byDelivery := map[string]string{}
	out := map[string]map[string]bool{}
	for _, g := range got {
		id, _ := g.Body["data"].(map[string]any)["id"].(string)
		if prev, ok := byDelivery[g.Delivery]; ok && prev != id {
			t.Fatalf("delivery %s carried %s and %s", g.Delivery, prev, id)
		}
		byDelivery[g.Delivery] = id
		if out[id] == nil {
			out[id] = map[string]bool{}
		}
		out[id][g.Delivery] = true
	}
	return out
}

// TestAnEdgesEventsAreDeliveredOnceByTheHub makes sales at an edge while
// its link is cut and after it is restored: the hub delivers each sale's
// order.created and order.completed once, however the edge's changes
// arrive, keeping the edge's times.
func TestAnEdgesEventsAreDeliveredOnceByTheHub(t *testing.T) {
	e := MustStartPair(t)
	r := webhooktest.New(t)
	registerHook(t, e.hub, e.hubTok, r, kassa.EventOrderCreated, kassa.EventOrderCompleted)
	wait.For(t, 20*time.Second, "the demo catalog at the edge", func() bool { return len(e.products(t, e.edge, e.edgeTok)) == 15 })
	products := e.products(t, e.edge, e.edgeTok)

	e.proxy.cut()
	wait.For(t, 10*time.Second, "the edge to see the link down", func() bool { return e.status(t, e.edge, e.edgeMgr)["connected"] == false })
	var orders []string
	for i := range 3 {
		orders = append(orders, e.sale(t, products[i]["id"].(string)))
	}
	if n := len(r.All()); n != 0 {
		t.Fatalf("%d deliveries while the edge was cut off", n)
	}
	e.proxy.restore()
	orders = append(orders, e.sale(t, products[3]["id"].(string)))
	created := r.WaitFor(30*time.Second, kassa.EventOrderCreated, len(orders))
	completed := r.WaitFor(30*time.Second, kassa.EventOrderCompleted, len(orders))
	wait.For(t, 20*time.Second, "the edge to verify after reconnect", func() bool {
		st := e.status(t, e.edge, e.edgeMgr)
		return st["connected"] == true && st["last_verified"] != nil && st["pending_up"] == float64(0)
	})
	for _, got := range [][]webhooktest.Received{created, completed} {
		by := onePerDelivery(t, got)
		for _, id := range orders {
			if len(by[id]) != 1 {
				t.Fatalf("order %s delivered under %d delivery ids: %v", id, len(by[id]), by[id])
			}
		}
		if len(by) != len(orders) {
			t.Fatalf("deliveries of %d orders, the edge made %d", len(by), len(orders))
		}
	}
	if n := len(r.All()); n != 2*len(orders) {
		t.Fatalf("%d POSTs for %d orders' two events", n, len(orders))
	}
}

func buildHub(t *testing.T) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "hub")
	out, err := exec.Command("go", "build", "-o", bin, "kassa.dev/hub").CombinedOutput()
	if err != nil {
		t.Fatalf("go build hub: %v\n%s", err, out)
	}
	return bin
}

// TestKillDashNineOfTheHubLosesNoWebhook runs the hub as a process whose
// receiver holds every POST, so that one delivery is in flight and the
// others wait behind it, kills the hub with SIGKILL, and restarts it on
// the same data directory: every event arrives, and an event that arrived
// twice did so under the same delivery id.
func TestKillDashNineOfTheHubLosesNoWebhook(t *testing.T) {
	bin, dir := buildHub(t), t.TempDir()
	args := []string{"--demo", "--http-addr", "127.0.0.1:0", "--data-dir", dir, "--leaf-port", "-1", "--webhook-allow-loopback"}
	hub := startProcess(t, bin, args...)
	hp := &nodetest.Proc{URL: hub.URL}
	tok := hp.Login(t, "owner@demo.test", demo.Password)
	r := webhooktest.New(t)
	release := make(chan struct{})
	r.Hang(release)
	registerHook(t, hp, tok, r, kassa.EventCustomerCreated)
	var customers []string
	for i := range 10 {
		var c oneResp
		if st := hp.Call(t, "POST", "/api/v1/customers", tok, map[string]any{"first_name": "Guest", "last_name": string(rune('A' + i))}, &c); st != 201 {
			t.Fatalf("create customer: %d %v", st, c)
		}
		customers = append(customers, c.Data["id"].(string))
	}
	hub.cmd.Process.Signal(syscall.SIGKILL)
	hub.cmd.Wait()
	r.Hang(nil)
	close(release)

	startProcess(t, bin, args...)
	got := r.WaitFor(30*time.Second, kassa.EventCustomerCreated, len(customers))
	by := onePerDelivery(t, got)
	for _, id := range customers {
		if len(by[id]) != 1 {
			t.Fatalf("customer %s delivered under %d delivery ids (%d POSTs in all)", id, len(by[id]), len(got))
		}
	}
	t.Logf("%d events, %d POSTs after the kill and restart", len(customers), len(got))
}

// TestTheHubSendsWebhooksThroughEgress: without --webhook-allow-loopback
// the hub binary refuses a receiver on loopback, an IP literal and a
// plain-http URL at registration (422 naming url) and stores nothing;
// with it, the same loopback receiver registers (MustStartPair).
func TestTheHubSendsWebhooksThroughEgress(t *testing.T) {
	hub := nodetest.Start(t, hubnode.Run, nil, "--demo", "--http-addr", "127.0.0.1:0", "--data-dir", t.TempDir(), "--leaf-port", "-1")
	tok := hub.Login(t, "owner@demo.test", demo.Password)
	r := webhooktest.New(t)
	for _, url := range []string{r.URL(), "https://10.0.0.1/hook", "https://2130706433/hook", "https://localhost/hook", "http://partner.example/hook"} {
		var p map[string]any
		st := hub.Call(t, "POST", "/api/v1/webhooks", tok, map[string]any{"url": url, "events": []string{kassa.EventOrderCreated}}, &p)
		if st != 422 || !strings.Contains(fmt.Sprint(p["errors"]), "url") {
			t.Errorf("register %s: %d %v, want 422 naming url", url, st, p)
		}
	}
	var list struct{ Data []any }
	if st := hub.Call(t, "GET", "/api/v1/webhooks", tok, nil, &list); st != 200 || len(list.Data) != 0 {
		t.Fatalf("endpoints after refusals: %d %v", st, list.Data)
	}
	e := MustStartPair(t)
	registerHook(t, e.hub, e.hubTok, webhooktest.New(t), kassa.EventOrderCreated)
}
