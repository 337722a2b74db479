package synctest

import (
	"regexp"
	"strconv"
	"testing"
	"time"

	"kassa.dev/hub/hubnode"
	"kassa.dev/shared/demo"
	"kassa.dev/shared/kassa"
	"kassa.dev/shared/node/nodetest"
	"kassa.dev/shared/webhooktest"
	"kassa.dev/sync/wait"
)

// metricValue returns the value of the sample of a metric in /metrics
// text, series as written there (name plus labels, e.g.
// `kassa_webhook_deliveries_total{result="ok"}`); -1 when absent.
func metricValue(text, series string) float64 {
	m := regexp.MustCompile(`(?m)^` + regexp.QuoteMeta(series) + ` (\S+)$`).FindStringSubmatch(text)
	if m == nil {
		return -1
	}
	v, err := strconv.ParseFloat(m[1], 64)
	if err != nil {
		return -1
	}
	return v
}

// TestAFailingReceiverMovesTheWebhookMetrics: a receiver that answers 500
// makes the hub's failed attempts and dead deliveries count up in
// /metrics; while a delivery waits it is in the queue gauge; a receiver
// that answers again counts ok attempts.
func TestAFailingReceiverMovesTheWebhookMetrics(t *testing.T) {
	hub := nodetest.Start(t, hubnode.Run, nil, "--demo", "--http-addr", "127.0.0.1:0", "--data-dir", t.TempDir(),
		"--leaf-port", "-1", "--webhook-allow-loopback", "--webhook-retry-delays", "10ms")
	tok := hub.Login(t, "owner@demo.test", demo.Password)
	m := func(series string) float64 { return metricValue(metricsText(t, hub.URL), series) }
	ok, failed := `kassa_webhook_deliveries_total{result="ok"}`, `kassa_webhook_deliveries_total{result="failed"}`
	if m(ok) != 0 || m(failed) != 0 || m("kassa_webhook_dead_total") != 0 || m("kassa_webhook_queue") != 0 || m("kassa_webhook_oldest_seconds") != 0 {
		t.Fatalf("webhook metrics of a new hub:\n%s", metricsText(t, hub.URL))
	}
	r := webhooktest.New(t)
	registerHook(t, hub, tok, r, kassa.EventProductCreated)
	product := func(sku string) {
		if st := hub.Call(t, "POST", "/api/v1/catalog/products", tok, map[string]any{"name": sku, "sku": sku, "base_price": 100}, nil); st != 201 {
			t.Fatalf("create product: %d", st)
		}
	}
	r.SetStatus(500)
	product("FAIL-1")
	wait.For(t, 20*time.Second, "two failed attempts and a dead delivery", func() bool {
		return m(failed) == 2 && m("kassa_webhook_dead_total") == 1 && m("kassa_webhook_queue") == 0
	})
	// A delivery held by a receiver that does not answer yet is queued.
	release := make(chan struct{})
	r.Hang(release)
	r.SetStatus(200)
	product("HELD-1")
	wait.For(t, 20*time.Second, "the held delivery in the queue", func() bool { return m("kassa_webhook_queue") == 1 })
	wait.For(t, 20*time.Second, "the held delivery to age", func() bool { return m("kassa_webhook_oldest_seconds") >= 1 })
	r.Hang(nil) // the receiver closes what it still holds at the end
	close(release)
	wait.For(t, 20*time.Second, "the delivery through", func() bool {
		return m(ok) == 1 && m("kassa_webhook_queue") == 0 && m("kassa_webhook_oldest_seconds") == 0
	})
	if m(failed) != 2 || m("kassa_webhook_dead_total") != 1 {
		t.Fatalf("a success moved the failure counts:\n%s", metricsText(t, hub.URL))
	}
}
