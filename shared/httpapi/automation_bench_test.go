package httpapi_test

import (
	"context"
	"fmt"
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
// the customer; the 99 others record a skipped execution). It prints the
// events' rate, the engine's rate of recorded executions and the time from
// each event to its recorded execution (p50, p99). `make bench` runs it.
func BenchmarkAutomations(b *testing.B) {
	const clients, events, rules = 8, 10000, 100
	for range b.N {
		// The wall clock: the lag is measured from the node's times.
		tn := MustStartNode(b, kassa.NodeHub, func(c *node.Config) { c.Now = func() time.Time { return time.Now().UTC() } })
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
		_, took := drive(clients, events, func(c, k int, lat []time.Duration) []time.Duration {
			n := c*events + k
			r := tn.Do("POST", "/api/v1/customers", o.Owner, map[string]any{"first_name": "B", "email": fmt.Sprintf("c%d-%d@b.test", n, n%rules)})
			if r.Status != 201 {
				b.Fatalf("customer: %d %s", r.Status, r.Body)
			}
			return lat
		})
		var lags []time.Duration
		wait.For(b, 15*time.Minute, "every execution recorded", func() bool {
			var err error
			lags, err = tn.N.AutomationLags(context.Background(), o.ID)
			if err != nil {
				b.Fatal(err)
			}
			return len(lags) >= events*rules
		})
		var last time.Duration
		for _, l := range lags {
			last = max(last, l)
		}
		fmt.Printf("\nAutomations at the hub: %d customer.created events by %d clients against %d rules, %s, %d CPUs, %s\n",
			events, clients, rules, runtime.GOOS+"/"+runtime.GOARCH, runtime.NumCPU(), time.Now().UTC().Format("2006-01-02"))
		fmt.Printf("| %-40s | %12s |\n", "measure", "value")
		fmt.Printf("|%s|%s|\n", dashes(42), dashes(14))
		fmt.Printf("| %-40s | %12.0f |\n", "events/s (API)", float64(events)/took.Seconds())
		fmt.Printf("| %-40s | %12d |\n", "executions recorded", len(lags))
		fmt.Printf("| %-40s | %12.2f |\n", "event → recorded execution p50 ms", percentile(lags, 0.50))
		fmt.Printf("| %-40s | %12.2f |\n", "event → recorded execution p99 ms", percentile(lags, 0.99))
		fmt.Printf("| %-40s | %12.2f |\n", "event → recorded execution max ms", float64(last)/float64(time.Millisecond))
	}
}
