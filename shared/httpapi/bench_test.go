package httpapi_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/google/uuid"

	"kassa.dev/shared/kassa"
	"kassa.dev/shared/node"
)

// BenchmarkOrderFlow measures a sale over HTTP — POST /orders (3 lines, one
// with a modifier), POST /payments/initiate (cash), POST
// /orders/:id/complete, each with an Idempotency-Key as a till sends it —
// with 16 concurrent clients against a real edge on loopback, beside two
// baselines that write the same rows per sale straight into the store
// (bench_raw_test.go): the store's group-commit limit (one writer
// goroutine group-committing the clients' requests) and a naive writer
// (one transaction per request). The three are measured saturated in
// interleaved turns of the same run, so a slow spell of a shared machine
// falls on all of them alike; each warms up with as many sales first, as
// a store that has been trading (the first sales of a fresh store also
// pay for growing its files). Then a paced run (terminals ringing up at a
// cashier's pace) and the order flow with and without 50 campaigns, in
// turns. It prints a table; `make bench` runs it.
//
// KASSA_BENCH_ONLY=saturated runs Kassa's saturated run alone (with
// KASSA_BENCH_CAMPAIGNS active campaigns) and prints one line: for
// comparing two builds, run their test binaries interleaved (go test -c),
// as single runs on a shared machine mislead (KASSA_BENCH_ONLY=paced: the
// paced run alone). KASSA_BENCH_ONLY=limit runs
// the side-by-side turns alone; KASSA_BENCH_ONLY=campaigns the comparison
// with and without campaigns alone.
func BenchmarkOrderFlow(b *testing.B) {
	clients, sales := 16, 1500
	if s := os.Getenv("KASSA_BENCH_CLIENTS"); s != "" {
		fmt.Sscan(s, &clients)
	}
	if s := os.Getenv("KASSA_BENCH_SALES"); s != "" {
		fmt.Sscan(s, &sales)
	}
	// The runtime the kassa binaries run with (node.Run applies the same
	// with the flags' defaults); the baselines share the process and so
	// the settings.
	defer node.Tune(node.DefaultGCPercent, 0, 0)()
	campaigns := 0
	if s := os.Getenv("KASSA_BENCH_CAMPAIGNS"); s != "" {
		fmt.Sscan(s, &campaigns)
	}
	only := os.Getenv("KASSA_BENCH_ONLY")
	for range b.N {
		switch only {
		case "saturated":
			api := benchAPI(b, clients, sales, 0, campaigns)
			fmt.Printf("saturated: %.0f sales/s p50 %.2f ms p99 %.2f ms, process CPU %.2f ms per sale; %s\n", api.salesPerSec, api.p50, api.p99, api.cpu, api.writer)
			continue
		case "paced":
			paced := benchAPI(b, clients, sales/3, 10*time.Millisecond*time.Duration(clients), 0)
			fmt.Printf("paced: %.0f sales/s p50 %.2f ms p99 %.2f ms, process CPU %.2f ms per sale; %s\n", paced.salesPerSec, paced.p50, paced.p99, paced.cpu, paced.writer)
			continue
		case "campaigns":
			// The runs with and without campaigns are compared in turns
			// too: one after the other, a shared machine's slow spell
			// decides the comparison (session 6 saw 71-94 %).
			plain, promo := benchCampaignTurns(b, clients, sales)
			fmt.Printf("50 campaigns: %.0f%% (%.0f vs %.0f sales/s); writer without %s; with %s\n",
				100*promo.salesPerSec/plain.salesPerSec, promo.salesPerSec, plain.salesPerSec, plain.writer, promo.writer)
			continue
		}
		side := benchInterleaved(clients, sales, benchRounds, startBench(b, clients, 0), startRaw(b, true), startRaw(b, false))
		api, limit, naive := side[0], side[1], side[2]
		if only == "limit" {
			fmt.Printf("Kassa %.0f%% of the limit (%.0f / %.0f / naive %.0f sales/s), p50 %.2f p99 %.2f ms; writer %.2f ms and %.1f units per sale (limit %.2f ms); CPU per sale %.2f ms (limit %.2f)\n",
				100*api.salesPerSec/limit.salesPerSec, api.salesPerSec, limit.salesPerSec, naive.salesPerSec, api.p50, api.p99,
				api.writer.msPerSale(), api.writer.unitsPerSale(), limit.writer.msPerSale(), api.cpu, limit.cpu)
			continue
		}
		paced := benchAPI(b, clients, sales/3, 10*time.Millisecond*time.Duration(clients), 0)
		plain, promo := benchCampaignTurns(b, clients, sales)
		fmt.Printf("\nOrder flow: %d sales (3 requests each), %d concurrent clients, %s, %d CPUs, %s\n",
			sales, clients, runtime.GOOS+"/"+runtime.GOARCH, runtime.NumCPU(), time.Now().UTC().Format("2006-01-02"))
		fmt.Printf("| %-56s | %8s | %10s | %7s | %7s | %14s | %10s | %11s |\n", "run", "sales/s", "requests/s", "p50 ms", "p99 ms", "writer ms/sale", "units/sale", "CPU ms/sale")
		fmt.Printf("|%s|%s|%s|%s|%s|%s|%s|%s|\n", dashes(58), dashes(10), dashes(12), dashes(9), dashes(9), dashes(16), dashes(12), dashes(13))
		row := func(name string, r benchResult) {
			fmt.Printf("| %-56s | %8.0f | %10.0f | %7.2f | %7.2f | %14.2f | %10.1f | %11.2f |\n", name, r.salesPerSec, r.salesPerSec*3, r.p50, r.p99,
				r.writer.msPerSale(), r.writer.unitsPerSale(), r.cpu)
		}
		row(fmt.Sprintf("store's group-commit limit (same rows, %d turns)", benchRounds), limit)
		row(fmt.Sprintf("naive writer, 1 tx per request (same rows, %d turns)", benchRounds), naive)
		row(fmt.Sprintf("Kassa edge over HTTP (saturated, %d turns)", benchRounds), api)
		row("Kassa edge over HTTP (paced 100 sales/s)", paced)
		row(fmt.Sprintf("Kassa edge, no campaigns (saturated, %d turns)", benchRounds), plain)
		row(fmt.Sprintf("Kassa edge, 50 campaigns (saturated, %d turns)", benchRounds), promo)
		fmt.Printf("Kassa at %.0f%% of the store's group-commit limit (target >= 40%%), %.0f%% of the naive writer; writer %.2f ms per sale (target <= 1.0 ms, limit %.2f ms)\n",
			100*api.salesPerSec/limit.salesPerSec, 100*api.salesPerSec/naive.salesPerSec, api.writer.msPerSale(), limit.writer.msPerSale())
		fmt.Printf("p99 per request %.2f ms saturated (target <= 12 ms), %.2f ms paced\n", api.p99, paced.p99)
		fmt.Printf("With 50 active campaigns: %.0f%% of the sales/s without, in turns with it (target >= 90%%)\n", 100*promo.salesPerSec/plain.salesPerSec)
		fmt.Printf("Writers, saturated: Kassa %s; the limit %s; naive %s\n", api.writer, limit.writer, naive.writer)
		fmt.Printf("Kassa's writer, in turns: without campaigns %s; with 50 %s\n\n", plain.writer, promo.writer)
	}
}

// benchCampaignTurns measures the order flow without and with 50 active
// campaigns, in turns (benchInterleaved). Their latencies are not the
// saturated run's: the node idle between its turns folds its WAL back
// while the other runs.
func benchCampaignTurns(b *testing.B, clients, sales int) (plain, promo benchResult) {
	both := benchInterleaved(clients, sales, benchRounds, startBench(b, clients, 0), startBench(b, clients, 50))
	return both[0], both[1]
}

// benchRounds is how many turns benchInterleaved gives each node.
const benchRounds = 6

func dashes(n int) string { return string(bytes.Repeat([]byte("-"), n)) }

type benchResult struct {
	salesPerSec, p50, p99 float64
	// cpu is the process's CPU time per sale in ms (rusage): the node's
	// and the load generator's, less swayed by a busy machine than the
	// wall-clock figures.
	cpu    float64
	writer writerUse // Kassa runs only
}

// writerUse is what the store's single writer did during a measured run.
type writerUse struct {
	elapsed time.Duration
	sales   int
	d       node.WriterStats // counters' growth over the run
}

func (w writerUse) String() string {
	if w.d.Batches == 0 {
		return "no writes"
	}
	return fmt.Sprintf("busy %.0f%% of the run, %.1f units per commit, committing %.0f%% of its busy time, %.2f ms and %.1f units per sale",
		100*w.d.Busy.Seconds()/w.elapsed.Seconds(), float64(w.d.Units)/float64(w.d.Batches), 100*w.d.Commit.Seconds()/w.d.Busy.Seconds(),
		float64(w.d.Busy)/float64(time.Millisecond)/float64(w.sales), float64(w.d.Units)/float64(w.sales))
}

// msPerSale is the writer's busy time per sale, in milliseconds.
func (w writerUse) msPerSale() float64 {
	if w.sales == 0 {
		return 0
	}
	return float64(w.d.Busy) / float64(time.Millisecond) / float64(w.sales)
}

// unitsPerSale is how many units (transactions, for the naive writer)
// the writer ran per sale.
func (w writerUse) unitsPerSale() float64 {
	if w.sales == 0 {
		return 0
	}
	return float64(w.d.Units) / float64(w.sales)
}

func percentile(ds []time.Duration, p float64) float64 {
	slices.Sort(ds)
	return float64(ds[int(float64(len(ds)-1)*p)]) / float64(time.Millisecond)
}

// benchAPI runs the sales over HTTP on a node of its own (startBench);
// with pace > 0 each client starts a sale at most every pace (a
// terminal's cashier takes time between sales), so the node runs below
// saturation.
func benchAPI(b *testing.B, clients, sales int, pace time.Duration, campaigns int) benchResult {
	n := startBench(b, clients, campaigns)
	defer n.stop()
	return warmThenMeasure(clients, sales,
		func(c, k int, lat []time.Duration) []time.Duration { return n.sale(c, k, 0, lat) },
		func(c, k int, lat []time.Duration) []time.Duration { return n.sale(c, k, pace, lat) },
		n.stats)
}

// benchNode is an edge set up for the order flow: a location, three
// products with stock, a modifier, and campaigns active campaigns that
// apply to every sale's pricing (benchCampaigns).
type benchNode struct {
	// sale rings up client c's k-th sale and appends its requests'
	// latencies; with pace > 0 a client starts a sale at most every pace,
	// and the clients do not all ring up at the same instant.
	sale  func(c, k int, pace time.Duration, lat []time.Duration) []time.Duration
	stats func() node.WriterStats
	stop  func()
	node  *node.Node
}

func startBench(b *testing.B, clients, campaigns int) *benchNode {
	tn := MustStartNode(b, kassa.NodeEdge, nil)
	o := tn.MustOrg("Bench Cafe")
	loc := tn.Do("POST", "/api/v1/locations", o.Owner, map[string]any{"name": "Bench", "timezone": "UTC"}).Data()["id"].(string)
	var products []string
	for i := range 3 {
		p := tn.Do("POST", "/api/v1/catalog/products", o.Owner, map[string]any{"name": fmt.Sprint("P", i), "sku": fmt.Sprint("B-", i), "base_price": 450 + i*10})
		products = append(products, p.Data()["id"].(string))
		tn.Do("POST", "/api/v1/inventory/stock/adjust", o.Owner, map[string]any{"location_id": loc, "product_id": products[i], "reason": "received", "quantity": 1_000_000})
	}
	g := tn.Do("POST", "/api/v1/catalog/modifiers/groups", o.Owner, map[string]any{"name": "Milk", "options": []any{
		map[string]any{"name": "Oat", "price_adjustment": 70}, map[string]any{"name": "Soy", "price_adjustment": 60}}, "product_ids": products[:1]}).Data()
	oat := g["options"].([]any)[0].(map[string]any)["id"].(string)
	benchCampaigns(b, tn, o.Owner, campaigns, products)
	order, _ := json.Marshal(map[string]any{"location_id": loc, "line_items": []any{
		map[string]any{"product_id": products[0], "quantity": 2, "modifier_option_ids": []string{oat}},
		map[string]any{"product_id": products[1], "quantity": 1},
		map[string]any{"product_id": products[2], "quantity": 1},
	}})
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: clients * 2}}
	post := func(path string, body []byte, out any) time.Duration {
		req, _ := http.NewRequest("POST", tn.URL+path, bytes.NewReader(body))
		req.Header.Set("Authorization", "Bearer "+o.Owner)
		req.Header.Set("Content-Type", "application/json")
		// A till sends every POST with a key of its own (CONTRACT.md), so
		// the flow pays for Idempotency-Key as in the field.
		req.Header.Set("Idempotency-Key", uuid.NewString())
		start := time.Now()
		res, err := client.Do(req)
		if err != nil {
			panic(err) // see below
		}
		data, _ := io.ReadAll(res.Body)
		res.Body.Close()
		d := time.Since(start)
		if res.StatusCode >= 300 {
			// Not b.Fatal: it would end this client's goroutine only,
			// and the run would go on measuring fewer sales than it counts.
			panic(fmt.Sprintf("%s: %d %s", path, res.StatusCode, data))
		}
		if out != nil {
			json.Unmarshal(data, out)
		}
		return d
	}
	sale := func(c, k int, pace time.Duration, lat []time.Duration) []time.Duration {
		if pace > 0 && k == 0 {
			time.Sleep(pace * time.Duration(c) / time.Duration(clients))
		}
		began := time.Now()
		var created struct {
			Data struct {
				ID    string `json:"id"`
				Total int64  `json:"total"`
			} `json:"data"`
		}
		lat = append(lat, post("/api/v1/orders", order, &created))
		pay, _ := json.Marshal(map[string]any{"order_id": created.Data.ID, "amount": created.Data.Total, "method": "cash"})
		lat = append(lat, post("/api/v1/payments/initiate", pay, nil))
		lat = append(lat, post("/api/v1/orders/"+created.Data.ID+"/complete", nil, nil))
		if pace > 0 {
			time.Sleep(pace - time.Since(began))
		}
		return lat
	}
	// stop stops the node at once, not at the benchmark's cleanup: with
	// -benchtime Nx, nodes left open pile up in the process (heap,
	// goroutines) and slow the later runs.
	stop := func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		client.CloseIdleConnections()
		tn.N.Shutdown(ctx)
	}
	return &benchNode{sale: sale, stats: tn.N.WriterStats, stop: stop, node: tn.N}
}

// benchInterleaved measures nodes set up alike but for what is compared,
// saturated, in turns: each warms up with sales sales, then, after a
// second's lull, rounds turns of sales/rounds sales each, one node after
// the other, so a slow spell of a shared machine falls on all of them
// alike. It stops the nodes.
func benchInterleaved(clients, sales, rounds int, nodes ...*benchNode) []benchResult {
	sale := func(n *benchNode) func(c, k int, lat []time.Duration) []time.Duration {
		return func(c, k int, lat []time.Duration) []time.Duration { return n.sale(c, k, 0, lat) }
	}
	for _, n := range nodes {
		defer n.stop()
		drive(clients, sales, sale(n))
	}
	time.Sleep(time.Second)
	lat := make([][]time.Duration, len(nodes))
	elapsed, cpu := make([]time.Duration, len(nodes)), make([]time.Duration, len(nodes))
	busy := make([]node.WriterStats, len(nodes))
	for range rounds {
		for i, n := range nodes {
			before := n.stats()
			l, d, c := drive(clients, sales/rounds, sale(n))
			lat[i], elapsed[i], cpu[i] = append(lat[i], l...), elapsed[i]+d, cpu[i]+c
			d2 := writerDelta(before, n.stats())
			busy[i] = node.WriterStats{Batches: busy[i].Batches + d2.Batches, Units: busy[i].Units + d2.Units,
				Busy: busy[i].Busy + d2.Busy, Commit: busy[i].Commit + d2.Commit}
		}
	}
	out := make([]benchResult, len(nodes))
	for i := range nodes {
		done := sales / rounds * rounds
		out[i] = benchResult{salesPerSec: float64(done) / elapsed[i].Seconds(), p50: percentile(lat[i], .5), p99: percentile(lat[i], .99),
			cpu:    float64(cpu[i]) / float64(time.Millisecond) / float64(done),
			writer: writerUse{elapsed: elapsed[i], sales: done, d: busy[i]}}
	}
	return out
}

// drive runs n sales on clients goroutines; sale rings up a client's k-th
// sale and appends its requests' latencies. It returns all latencies and
// the time the n sales took.
func drive(clients, n int, sale func(c, k int, lat []time.Duration) []time.Duration) ([]time.Duration, time.Duration, time.Duration) {
	cpu := processCPU()
	var next atomic.Int64
	lat := make([][]time.Duration, clients)
	var wg sync.WaitGroup
	start := time.Now()
	for c := range clients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for k := 0; next.Add(1) <= int64(n); k++ {
				lat[c] = sale(c, k, lat[c])
			}
		}()
	}
	wg.Wait()
	return slices.Concat(lat...), time.Since(start), processCPU() - cpu
}

// processCPU is the CPU time the process used so far.
func processCPU() time.Duration {
	var u syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &u)
	return time.Duration(u.Utime.Nano() + u.Stime.Nano())
}

// warmThenMeasure warms up with n sales, pauses for a second as a store
// does between customers (the writer folds its WAL back in such a lull;
// see sqlite/tx.go — folding the warm-up's takes a good part of that
// second), then measures n sales. With stats (Kassa's writer counters) it
// also reports what the writer did during the measured sales.
func warmThenMeasure(clients, n int, warm, sale func(c, k int, lat []time.Duration) []time.Duration, stats func() node.WriterStats) benchResult {
	drive(clients, n, warm)
	time.Sleep(time.Second)
	var before node.WriterStats
	if stats != nil {
		before = stats()
	}
	all, elapsed, cpu := drive(clients, n, sale)
	r := benchResult{salesPerSec: float64(n) / elapsed.Seconds(), p50: percentile(all, .5), p99: percentile(all, .99),
		cpu: float64(cpu) / float64(time.Millisecond) / float64(n)}
	if stats != nil {
		after := stats()
		r.writer = writerUse{elapsed: elapsed, sales: n, d: writerDelta(before, after)}
	}
	return r
}

// benchCampaigns launches n automatic campaigns that all apply to the
// bench's sales: product, order (with a minimum spend), buy-x-get-y and
// points rules, in turn, at small percentages, every day.
func benchCampaigns(b *testing.B, tn *testNode, tok string, n int, products []string) {
	rules := []map[string]any{
		{"type": "product_discount", "discount_type": "percent", "value": 100, "product_ids": products[:2]},
		{"type": "order_discount", "discount_type": "percent", "value": 100},
		{"type": "buy_x_get_y", "discount_type": "percent", "value": 500, "buy_quantity": 1, "get_quantity": 1, "product_ids": products[:1]},
		{"type": "points_multiplier", "value": 15000},
	}
	for i := range n {
		body := map[string]any{"name": fmt.Sprint("Promo ", i), "type": "promotion",
			"rules":    []any{rules[i%len(rules)], map[string]any{"type": "min_spend", "min_subtotal": 100}},
			"schedule": map[string]any{"days_of_week": []int{0, 1, 2, 3, 4, 5, 6}}}
		c := tn.Do("POST", "/api/v1/campaigns", tok, body)
		if c.Status != 201 {
			b.Fatalf("campaign: %d %s", c.Status, c.Body)
		}
		if r := tn.Do("POST", "/api/v1/campaigns/"+c.Data()["id"].(string)+"/launch", tok, nil); r.Status != 200 {
			b.Fatalf("launch: %d %s", r.Status, r.Body)
		}
	}
}
