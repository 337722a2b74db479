package httpapi_test

import (
	"fmt"
	"runtime"
	"runtime/debug"
	"testing"

	"kassa.dev/shared/kassa"
	"kassa.dev/shared/node"
	"kassa.dev/shared/password"
)

// BenchmarkMemory reports an edge's peak RSS (VmHWM, reset before each run)
// during the order flow — 3,000 sales from 8 concurrent terminals over
// loopback HTTP as fast as they go (its sales/s and p99 show what the
// memory limit costs) — and during a login storm of 64
// concurrent logins with unknown e-mails, with the runtime as the edge
// binary runs it (node.Tune and node.TuneMemory with their defaults). The
// load generator shares the process, so the figures include it. Target:
// <= 100 MiB for both. It prints a table; `make bench` runs it.
func BenchmarkMemory(b *testing.B) {
	defer node.Tune(node.DefaultGCPercent, 0, 0)()
	limit, restore := node.TuneMemory(kassa.NodeEdge, 0)
	defer restore()
	type row struct {
		name             string
		idle, peak, heap int64
		flow             benchResult
	}
	measure := func(name string, run func() benchResult) row {
		runtime.GC()
		debug.FreeOSMemory()
		idle, _ := node.RSS()
		if err := node.ResetPeakRSS(); err != nil {
			b.Skipf("cannot reset the peak RSS: %v", err)
		}
		flow := run()
		_, peak := node.RSS()
		var ms runtime.MemStats
		runtime.ReadMemStats(&ms)
		return row{name, idle, peak, int64(ms.HeapSys), flow}
	}
	for range b.N {
		rows := []row{
			measure("edge: order flow, 3,000 sales, 8 terminals", func() benchResult { return benchAPI(b, 8, 1500, 0, 0) }),
			measure("edge: login storm, 64 unknown e-mails", func() benchResult {
				stormNode(b).loginStorm(64)
				return benchResult{}
			}),
		}
		fmt.Printf("\nMemory: %s, %d CPUs, GC target %d%%, memory limit %d MiB, %d password slots\n",
			runtime.GOOS+"/"+runtime.GOARCH, runtime.NumCPU(), node.DefaultGCPercent, limit>>20, password.Slots())
		fmt.Printf("| %-44s | %12s | %12s | %14s | %8s | %8s |\n", "run", "RSS before", "peak RSS", "Go heap sys", "sales/s", "p99 ms")
		fmt.Printf("|%s|%s|%s|%s|%s|%s|\n", dashes(46), dashes(14), dashes(14), dashes(16), dashes(10), dashes(10))
		for _, r := range rows {
			fmt.Printf("| %-44s | %8d MiB | %8d MiB | %10d MiB | %8.0f | %8.2f |\n", r.name, r.idle>>20, r.peak>>20, r.heap>>20, r.flow.salesPerSec, r.flow.p99)
		}
		fmt.Println("Target: peak RSS <= 100 MiB for both (the load generator shares the process).")
	}
}
