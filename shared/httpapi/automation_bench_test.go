package httpapi_test

import (
	"context"
	"fmt"
	"os"
	"runtime"
	"testing"
	"time"

	"kassa.dev/shared/kassa"
	"kassa.dev/shared/node"
	"kassa.dev/sync/wait"
)

// BenchmarkAutomations measures the hub's automation engine (issue 14):
// 10,000 customer.created events, made over the API by 8 clients, against
// 100 active rules on that type (each event matches one rule, which tags
// the customer; the 99 others record a skipped execution). Two runs, each
// on a fresh hub: saturated (the clients as fast as they go: the engine
// falls behind, the lag is the backlog) and paced (the events at a steady
// rate the engine sustains: the lag is the engine's own). Each prints the
// events' rate and the time from each event to its recorded execution
// (p50, p99, max). `make bench` runs it.
//
// KASSA_BENCH_AUTOMATION_EVENTS (10,000), KASSA_BENCH_AUTOMATION_PACE
// (events per second of the paced run, 30) and KASSA_BENCH_AUTOMATION_ONLY=paced or
// saturated change the run.
func BenchmarkAutomations(b *testing.B) {
	const clients, rules = 8, 100
	events, pace := envInt("KASSA_BENCH_AUTOMATION_EVENTS", 10_000), envInt("KASSA_BENCH_AUTOMATION_PACE", 30)
	only := os.Getenv("KASSA_BENCH_AUTOMATION_ONLY")
	for range b.N {
		fmt.Printf("\nAutomations at the hub: %d customer.created events by %d clients against %d rules, %s, %d CPUs, %s\n",
			events, clients, rules, runtime.GOOS+"/"+runtime.GOARCH, runtime.NumCPU(), time.Now().UTC().Format("2006-01-02"))
		fmt.Printf("| %-32s | %9s | %11s | %9s | %9s | %9s |\n", "run", "events/s", "executions", "p50 ms", "p99 ms", "max ms")
		fmt.Printf("|%s|%s|%s|%s|%s|%s|\n", dashes(34), dashes(11), dashes(13), dashes(11), dashes(11), dashes(11))
		for _, p := range []int{0, pace} {
			if (only == "paced" && p == 0) || (only == "saturated" && p != 0) {
				continue
			}
			name := "saturated (back to back)"
			if p > 0 {
				name = fmt.Sprintf("paced at %d events/s", p)
			}
			r := automationRun(b, clients, events, rules, p)
			fmt.Printf("| %-32s | %9.0f | %11d | %9.2f | %9.2f | %9.2f |\n", name, r.eventsPerSec, r.executions, r.p50, r.p99, r.max)
		}
	}
}

type automationResult struct {
	eventsPerSec  float64
	executions    int
	p50, p99, max float64 // event → recorded execution, ms
}

// automationRun starts a hub with rules rules and makes events customers
// on clients goroutines (at most pace a second in all, if pace > 0), then
// waits until every execution is recorded.
func automationRun(b *testing.B, clients, events, rules, pace int) automationResult {
	// The wall clock: the lag is measured from the node's times.
	tn := MustStartNode(b, kassa.NodeHub, func(c *node.Config) { c.Now = func() time.Time { return time.Now().UTC() } })
	defer func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		tn.N.Shutdown(ctx)
		cancel()
	}()
	o := tn.MustOrg("Bench automations")
	for i := range rules {
		r := tn.Do("POST", "/api/v1/automations", o.Owner, map[string]any{"name": fmt.Sprint("rule ", i),
			"trigger":    map[string]any{"type": "event", "event": "customer.created"},
			"conditions": []any{map[string]any{"field": "email", "operator": "contains", "value": fmt.Sprintf("-%d@", i)}},
			"actions":    []any{map[string]any{"type": "tag_customer", "params": map[string]any{"customer_id": "$data.id", "tag": fmt.Sprint("r", i)}}}})
		if r.Status != 201 {
			b.Fatalf("rule: %d %s", r.Status, r.Body)
		}
	}
	var interval time.Duration
	if pace > 0 {
		interval = time.Second * time.Duration(clients) / time.Duration(pace)
	}
	start := time.Now()
	_, took, _ := drive(clients, events, func(c, k int, lat []time.Duration) []time.Duration {
		if interval > 0 {
			time.Sleep(time.Until(start.Add(interval*time.Duration(k) + interval*time.Duration(c)/time.Duration(clients))))
		}
		n := c*events + k
		r := tn.Do("POST", "/api/v1/customers", o.Owner, map[string]any{"first_name": "B", "email": fmt.Sprintf("c%d-%d@b.test", n, n%rules)})
		if r.Status != 201 {
			b.Fatalf("customer: %d %s", r.Status, r.Body)
		}
		return lat
	})
	// Wait on the engine's backlog (one cheap query), then read the lags
	// once: polling them (a join of every execution) took a quarter of
	// the CPU from the engine it measures.
	var lags []time.Duration
	wait.For(b, 15*time.Minute, "every execution recorded", func() bool {
		if n, err := tn.Hub().AutomationBacklog(context.Background()); err != nil || n > 0 {
			return false
		}
		var err error
		if lags, err = tn.Hub().AutomationLags(context.Background(), o.ID); err != nil {
			b.Fatal(err)
		}
		return len(lags) >= events*rules
	})
	var last time.Duration
	for _, l := range lags {
		last = max(last, l)
	}
	return automationResult{eventsPerSec: float64(events) / took.Seconds(), executions: len(lags),
		p50: percentile(lags, 0.50), p99: percentile(lags, 0.99), max: float64(last) / float64(time.Millisecond)}
}

// envInt reads a benchmark setting from the environment, def when unset.
func envInt(name string, def int) int {
	if s := os.Getenv(name); s != "" {
		fmt.Sscan(s, &def)
	}
	return def
}
