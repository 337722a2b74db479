package httpapi_test

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"runtime"
	"runtime/metrics"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"kassa.dev/shared/kassa"
	"kassa.dev/shared/node"
	"kassa.dev/shared/node/hubonly"
	"kassa.dev/sync/wait"
)

// BenchmarkWebhookFanOut measures the hub's webhook sender as it runs in
// production: 10,000 customer.created events, made by real POST /customers
// over HTTP, fanned out to 20 endpoints on 127.0.0.1, one of which never
// answers (each attempt there runs into the attempt timeout). It reports
// the deliveries per second at the 19 healthy endpoints and the latency
// from the event's commit (the customer's created_at, stamped in the unit
// that appends the event) to the delivery's arrival, beside a raw
// baseline in the same run: the same POSTs of the same bodies sent
// directly to the same healthy endpoints by a plain Go client, one
// request in flight per endpoint as the sender. It also prints the peak
// heap and peak RSS during the fan-out. `make bench` runs it.
//
// KASSA_BENCH_EVENTS and KASSA_BENCH_PACE (events per second, 0: as fast
// as the clients go) change the run.
func BenchmarkWebhookFanOut(b *testing.B) {
	const endpoints, clients = 20, 8
	events, pace := envInt("KASSA_BENCH_EVENTS", 10_000), envInt("KASSA_BENCH_PACE", 0)
	const timeout = time.Second
	defer node.Tune(node.DefaultGCPercent, 0, 0)()
	for range b.N {
		// The node's clock is the real one: created_at is the commit's
		// time, and the hanging endpoint's retries come due after a minute,
		// past the run.
		tn := MustStartNode(b, kassa.NodeHub, func(c *node.Config) {
			c.Now = time.Now
			hubonly.Of(c).Webhooks.Timeout = timeout
		})
		o := tn.MustOrg("Bench Hooks")
		hang := make(chan struct{})
		var hungTries atomic.Int64
		hung := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			hungTries.Add(1)
			select { // never answers within the attempt timeout
			case <-hang:
			case <-r.Context().Done():
			}
		}))
		var healthy []*benchReceiver
		urls := []string{hung.URL + "/hook"}
		for i := range endpoints - 1 {
			r := newBenchReceiver(events, i == 0)
			healthy = append(healthy, r)
			urls = append(urls, r.srv.URL+"/hook")
		}
		for _, u := range urls {
			tn.Do("POST", "/api/v1/webhooks", o.Owner, map[string]any{"url": u, "events": []string{kassa.EventCustomerCreated}}).Data()
		}

		peak := watchMemory()
		fan := fanOut(b, tn, o.Owner, clients, events, pace, healthy)
		heap, rss := peak()

		// The raw baseline: the bodies the first healthy endpoint got,
		// posted by a plain client to every healthy endpoint, one in flight
		// per endpoint.
		bodies := healthy[0].bodies()
		for _, r := range healthy {
			r.reset()
		}
		raw := rawPosts(b, healthy, bodies)

		fmt.Printf("\nWebhook fan-out at the hub: %d customer.created events (POST /customers, %d clients%s) to %d endpoints on loopback, 1 hanging (attempt timeout %s), %s, %d CPUs, %s\n",
			events, clients, paceText(pace), endpoints, timeout, runtime.GOOS+"/"+runtime.GOARCH, runtime.NumCPU(), time.Now().UTC().Format("2006-01-02"))
		fmt.Printf("| %-52s | %12s | %9s | %9s |\n", "run (19 healthy endpoints)", "deliveries/s", "p50 ms", "p99 ms")
		fmt.Printf("|%s|%s|%s|%s|\n", dashes(54), dashes(14), dashes(11), dashes(11))
		row := func(name string, r benchResult) {
			fmt.Printf("| %-52s | %12.0f | %9.2f | %9.2f |\n", name, r.salesPerSec, r.p50, r.p99)
		}
		row("raw baseline: plain POSTs (p: round trip)", raw)
		row("Kassa sender (p: event commit to delivery)", fan.deliveries)
		fmt.Printf("Kassa at %.0f%% of the raw baseline; p99 commit to delivery %.0f ms (target <= 250 ms); events made at %.0f/s; %d attempts at the hanging endpoint\n",
			100*fan.deliveries.salesPerSec/raw.salesPerSec, fan.deliveries.p99, fan.eventsPerSec, hungTries.Load())
		fmt.Printf("During the fan-out: peak heap %.0f MiB, peak RSS %.0f MiB (the whole test process: node, clients, receivers); writer %s\n\n",
			float64(heap)/(1<<20), float64(rss)/(1<<20), fan.writer)

		close(hang)
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		tn.N.Shutdown(ctx)
		cancel()
		hung.Close()
		for _, r := range healthy {
			r.srv.Close()
		}
	}
}

func paceText(pace int) string {
	if pace == 0 {
		return ", back to back"
	}
	return fmt.Sprintf(", paced %d events/s", pace)
}

type fanOutResult struct {
	deliveries   benchResult // salesPerSec: deliveries per second
	eventsPerSec float64
	writer       writerUse
}

// fanOut makes events customers over HTTP on clients goroutines (at most
// pace a second in all, if pace > 0) and waits until every healthy
// receiver has had each event once.
func fanOut(b *testing.B, tn *testNode, token string, clients, events, pace int, healthy []*benchReceiver) fanOutResult {
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: clients}}
	defer client.CloseIdleConnections()
	before := tn.N.WriterStats()
	start := time.Now()
	var interval time.Duration
	if pace > 0 {
		interval = time.Second * time.Duration(clients) / time.Duration(pace)
	}
	_, made, _ := drive(clients, events, func(c, k int, lat []time.Duration) []time.Duration {
		if interval > 0 {
			time.Sleep(time.Until(start.Add(interval*time.Duration(k) + interval*time.Duration(c)/time.Duration(clients))))
		}
		body := fmt.Sprintf(`{"first_name":"Bench","last_name":"C%d-%d"}`, c, k)
		req, _ := http.NewRequest("POST", tn.URL+"/api/v1/customers", strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Authorization", "Bearer "+token)
		res, err := client.Do(req)
		if err != nil {
			b.Fatal(err)
		}
		io.Copy(io.Discard, res.Body)
		res.Body.Close()
		if res.StatusCode != 201 {
			b.Fatalf("POST /customers: %d", res.StatusCode)
		}
		return lat
	})
	wait.For(b, 10*time.Minute, "every event at every healthy endpoint", func() bool {
		for _, r := range healthy {
			if r.count() < events {
				return false
			}
		}
		return true
	})
	var lat []time.Duration
	var last time.Time
	for _, r := range healthy {
		l, at := r.latencies()
		lat = append(lat, l...)
		if at.After(last) {
			last = at
		}
	}
	elapsed := last.Sub(start)
	return fanOutResult{
		deliveries:   benchResult{salesPerSec: float64(len(lat)) / elapsed.Seconds(), p50: percentile(lat, .5), p99: percentile(lat, .99)},
		eventsPerSec: float64(events) / made.Seconds(),
		writer:       writerUse{elapsed: elapsed, d: writerDelta(before, tn.N.WriterStats())},
	}
}

// rawPosts posts every body to every receiver, one goroutine (one
// request in flight) per receiver, and reports the round trips.
func rawPosts(b *testing.B, to []*benchReceiver, bodies [][]byte) benchResult {
	lat := make([][]time.Duration, len(to))
	var wg sync.WaitGroup
	start := time.Now()
	for i, r := range to {
		wg.Add(1)
		go func() {
			defer wg.Done()
			client := &http.Client{}
			defer client.CloseIdleConnections()
			for _, body := range bodies {
				t0 := time.Now()
				req, _ := http.NewRequest("POST", r.srv.URL+"/hook", bytes.NewReader(body))
				req.Header.Set("Content-Type", "application/json")
				res, err := client.Do(req)
				if err != nil {
					b.Error(err)
					return
				}
				io.Copy(io.Discard, res.Body)
				res.Body.Close()
				lat[i] = append(lat[i], time.Since(t0))
			}
		}()
	}
	wg.Wait()
	elapsed := time.Since(start)
	var all []time.Duration
	for _, l := range lat {
		all = append(all, l...)
	}
	if len(all) == 0 {
		b.Fatal("no raw POST went through")
	}
	return benchResult{salesPerSec: float64(len(all)) / elapsed.Seconds(), p50: percentile(all, .5), p99: percentile(all, .99)}
}

// benchReceiver is a healthy endpoint that answers 200 at once and
// notes, per delivery id (deduplicated), when it arrived and how long
// after the event's commit (the data's created_at).
type benchReceiver struct {
	srv *httptest.Server

	keep bool        // keeps the bodies (one receiver does, for the baseline)
	raw  atomic.Bool // the baseline's: only answers

	mu   sync.Mutex
	seen map[string]struct{}
	lat  []time.Duration
	last time.Time
	kept [][]byte
}

func newBenchReceiver(events int, keep bool) *benchReceiver {
	r := &benchReceiver{keep: keep, seen: make(map[string]struct{}, events), lat: make([]time.Duration, 0, events)}
	r.srv = httptest.NewServer(http.HandlerFunc(r.serve))
	return r
}

var createdAt = []byte(`"created_at":"`)

func (r *benchReceiver) serve(w http.ResponseWriter, req *http.Request) {
	body, _ := io.ReadAll(req.Body)
	at := time.Now()
	if r.raw.Load() {
		w.Write([]byte("thanks"))
		return
	}
	var committed time.Time
	if i := bytes.Index(body, createdAt); i >= 0 {
		v := body[i+len(createdAt):]
		if j := bytes.IndexByte(v, '"'); j > 0 {
			committed, _ = time.Parse(time.RFC3339, string(v[:j]))
		}
	}
	id := strings.Clone(req.Header.Get("X-Kassa-Delivery"))
	r.mu.Lock()
	if _, dup := r.seen[id]; !dup && id != "" && !committed.IsZero() {
		r.seen[id] = struct{}{}
		r.lat = append(r.lat, max(at.Sub(committed), 0))
		r.last = at
		if r.keep {
			r.kept = append(r.kept, body)
		}
	}
	r.mu.Unlock()
	w.Write([]byte("thanks"))
}

func (r *benchReceiver) count() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.seen)
}

func (r *benchReceiver) latencies() ([]time.Duration, time.Time) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.lat, r.last
}

func (r *benchReceiver) bodies() [][]byte {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.kept
}

// reset turns the receiver into the baseline's: it only answers.
func (r *benchReceiver) reset() { r.raw.Store(true) }

// watchMemory samples the live heap every 10 ms and resets the process's
// peak RSS (Linux); the function it returns stops and reports both peaks.
func watchMemory() func() (heap, rss uint64) {
	os.WriteFile("/proc/self/clear_refs", []byte("5"), 0) // resets VmHWM
	done := make(chan struct{})
	var peak uint64
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		s := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
		t := time.NewTicker(10 * time.Millisecond)
		defer t.Stop()
		for {
			metrics.Read(s)
			peak = max(peak, s[0].Value.Uint64())
			select {
			case <-done:
				return
			case <-t.C:
			}
		}
	}()
	return func() (uint64, uint64) {
		close(done)
		wg.Wait()
		return peak, peakRSS()
	}
}

// writerDelta is what the writer did between two readings of its counters.
func writerDelta(before, after node.WriterStats) node.WriterStats {
	return node.WriterStats{Batches: after.Batches - before.Batches, Units: after.Units - before.Units,
		Busy: after.Busy - before.Busy, Commit: after.Commit - before.Commit}
}

// peakRSS is the process's VmHWM in bytes (0 where /proc is missing).
func peakRSS() uint64 {
	b, _ := os.ReadFile("/proc/self/status")
	for _, line := range strings.Split(string(b), "\n") {
		if f := strings.Fields(line); len(f) >= 2 && f[0] == "VmHWM:" {
			kb, _ := strconv.ParseUint(f[1], 10, 64)
			return kb << 10
		}
	}
	return 0
}
