package synctest

import (
	"database/sql"
	"fmt"
	"log/slog"
	"net/url"
	"os"
	"runtime"
	"runtime/pprof"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"

	"kassa.dev/shared/pgtest"
	"kassa.dev/sync/natsnode"
	"kassa.dev/sync/wait"
)

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

func pct(ds []time.Duration, p float64) float64 {
	slices.Sort(ds)
	return ms(ds[int(float64(len(ds)-1)*p)])
}

// BenchmarkSync measures, on one machine over loopback: an edge write
// becoming visible on the hub's API, and the catch-up of an outage's
// backlog of orders, beside raw NATS request/reply between a leaf and its
// hub and the catch-up's baseline (rawCatchUp) measured in the same run.
// `make bench` runs it.
func BenchmarkSync(b *testing.B) {
	backlog := 10000
	if s := os.Getenv("KASSA_BENCH_BACKLOG"); s != "" {
		fmt.Sscan(s, &backlog)
	}
	for range b.N {
		raw := rawLeafRTT(b, 500)
		rawWall, rawCPU := rawCatchUp(b, backlog*3) // first: no node's background work in its CPU
		e := MustStartPair(b)
		wait.For(b, 20*time.Second, "the catalog", func() bool { return len(e.products(b, e.edge, e.edgeTok)) == 15 })
		product := e.products(b, e.edge, e.edgeTok)[0]["id"].(string)
		campaigns := 0 // KASSA_BENCH_SYNC_CAMPAIGNS: active campaigns that price every order
		if s := os.Getenv("KASSA_BENCH_SYNC_CAMPAIGNS"); s != "" {
			fmt.Sscan(s, &campaigns)
		}
		for i := range campaigns {
			var c oneResp
			if st := e.hub.Call(b, "POST", "/api/v1/campaigns", e.hubTok, map[string]any{"name": fmt.Sprint("Bench ", i), "type": "discount",
				"rules": []any{map[string]any{"type": "product_discount", "discount_type": "percent", "value": 100 + i, "product_ids": []string{product}}}}, &c); st != 201 {
				b.Fatalf("campaign: %d %v", st, c)
			}
			e.hub.Call(b, "POST", "/api/v1/campaigns/"+c.Data["id"].(string)+"/launch", e.hubTok, nil, nil)
		}
		wait.For(b, 30*time.Second, "the campaigns at the edge", func() bool {
			var l listResp
			e.edge.Call(b, "GET", "/api/v1/campaigns?limit=100", e.edgeMgr, nil, &l)
			return len(l.Data) == campaigns
		})

		// Edge write → visible on the hub API.
		var vis []time.Duration
		for range 200 {
			var o oneResp
			start := time.Now()
			e.edge.Call(b, "POST", "/api/v1/orders", e.edgeTok, map[string]any{"location_id": e.location,
				"line_items": []any{map[string]any{"product_id": product, "quantity": 1}}}, &o)
			id := o.Data["id"].(string)
			for e.hub.TryCall("GET", "/api/v1/orders/"+id, e.hubTok, nil, nil) != 200 {
				time.Sleep(200 * time.Microsecond)
			}
			vis = append(vis, time.Since(start))
		}

		// Catch-up after an outage of `backlog` orders.
		e.proxy.cut()
		wait.For(b, 10*time.Second, "the link down", func() bool { return e.status(b, e.edge, e.edgeMgr)["connected"] == false })
		var next atomic.Int64
		var last atomic.Value
		var wg sync.WaitGroup
		for range 8 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for next.Add(1) <= int64(backlog) {
					var o oneResp
					e.edge.TryCall("POST", "/api/v1/orders", e.edgeTok, map[string]any{"location_id": e.location,
						"line_items": []any{map[string]any{"product_id": product, "quantity": 1}}}, &o)
					if id, ok := o.Data["id"].(string); ok {
						last.Store(id)
					}
				}
			}()
		}
		wg.Wait()
		lastID := last.Load().(string)
		stopProfile := profileCatchUp(b)
		resetStatements(b, e.hubStore)
		pm := postmasterOf(b, e.hubStore) // 0: a hub on SQLite
		start, cpu, pgCPU := time.Now(), processCPU(), pgtest.ProcCPU(nil, pm)
		e.proxy.restore()
		wait.For(b, 5*time.Minute, "the backlog at the hub", func() bool {
			return e.hub.TryCall("GET", "/api/v1/orders/"+lastID, e.hubTok, nil, nil) == 200 &&
				e.status(b, e.edge, e.edgeMgr)["pending_up"] == float64(0)
		})
		catchUp, catchUpCPU := time.Since(start), processCPU()-cpu
		if pm != 0 {
			pgCPU = pgtest.ProcCPU(nil, pm) - pgCPU
		}
		stopProfile()
		if os.Getenv(pgtest.StatementsEnv) != "" && strings.HasPrefix(e.hubStore, "postgres") {
			printStatements(b, e.hubStore, backlog*3/500) // per batch of 500 records
		}

		fmt.Printf("\nSync: loopback, %s, %d CPUs, %s\n", runtime.GOOS+"/"+runtime.GOARCH, runtime.NumCPU(), time.Now().UTC().Format("2006-01-02"))
		fmt.Printf("| %-52s | %9s | %9s |\n", "run", "p50 ms", "p99 ms")
		fmt.Printf("|%s|%s|%s|\n", dashes(54), dashes(11), dashes(11))
		fmt.Printf("| %-52s | %9.2f | %9.2f |\n", "raw NATS request/reply, leaf → hub → leaf", pct(raw, .5), pct(raw, .99))
		fmt.Printf("| %-52s | %9.2f | %9.2f |\n", "Kassa: order created at the edge → readable at hub", pct(vis, .5), pct(vis, .99))
		fmt.Printf("Visibility p99 target <= 100 ms.\n")
		printCatchUp(backlog, catchUp, catchUpCPU, rawWall, rawCPU, campaigns)
		if pm != 0 {
			fmt.Printf("PostgreSQL's server CPU in the catch-up: %.2f s, %.1f µs a record (load %s)\n\n", pgCPU.Seconds(),
				float64(pgCPU.Microseconds())/float64(backlog*3), loadAvg())
		}
	}
}

// postmasterOf is the pid of the PostgreSQL server at dsn (the parent of
// a backend of it), 0 for a store that is not one: BenchmarkSync adds its
// CPU (pgtest.ProcCPU) to the catch-up's figures.
func postmasterOf(b *testing.B, dsn string) int {
	if !strings.HasPrefix(dsn, "postgres") {
		return 0
	}
	db, err := sql.Open("pgx", dsn)
	if err != nil {
		b.Fatal(err)
	}
	defer db.Close()
	var backend int
	if err := db.QueryRow(`SELECT pg_backend_pid()`).Scan(&backend); err != nil {
		b.Fatal(err)
	}
	stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", backend))
	if err != nil {
		return 0 // a server on another machine
	}
	f := strings.Fields(string(stat[strings.LastIndexByte(string(stat), ')')+1:]))
	ppid, _ := strconv.Atoi(f[1])
	return ppid
}

// profileCatchUp writes a CPU profile of the catch-up alone to the file
// KASSA_BENCH_SYNC_PROFILE names (go test's -cpuprofile covers the whole
// run, most of it the offline sales); it returns the function that stops it.
func profileCatchUp(b *testing.B) func() {
	path := os.Getenv("KASSA_BENCH_SYNC_PROFILE")
	if path == "" {
		return func() {}
	}
	f, err := os.Create(path)
	if err != nil {
		b.Fatal(err)
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		b.Fatal(err)
	}
	return func() { pprof.StopCPUProfile(); f.Close() }
}

// resetStatements forgets what PostgreSQL ran so far (KASSA_BENCH_PGSTAT,
// a hub on PostgreSQL): the catch-up's statements are then its own.
func resetStatements(b *testing.B, dsn string) {
	if os.Getenv(pgtest.StatementsEnv) == "" || !strings.HasPrefix(dsn, "postgres") {
		return
	}
	db := statementsDB(b, dsn)
	defer db.Close()
	if _, err := db.Exec(`SELECT pg_stat_statements_reset()`); err != nil {
		b.Fatal(err)
	}
}

// statementsDB opens the PostgreSQL at dsn with pg_stat_statements
// created (KASSA_BENCH_PGSTAT loads it into the server).
func statementsDB(b *testing.B, dsn string) *sql.DB {
	db, err := sql.Open("pgx", dsn)
	if err != nil {
		b.Fatal(err)
	}
	if _, err := db.Exec(`CREATE EXTENSION IF NOT EXISTS pg_stat_statements`); err != nil {
		db.Close()
		b.Fatal(err)
	}
	return db
}

// processCPU is the CPU time the process (edge and hub) used so far:
// less swayed by a busy machine than the catch-up's wall time.
func processCPU() time.Duration {
	var u syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &u)
	return time.Duration(u.Utime.Nano() + u.Stime.Nano())
}

func dashes(n int) string {
	s := make([]byte, n)
	for i := range s {
		s[i] = '-'
	}
	return string(s)
}

// rawLeafRTT measures request/reply between a client on a leaf server and a
// responder on its hub server.
func rawLeafRTT(b *testing.B, n int) []time.Duration {
	lc, stop := rawLeafLink(b, "echo", []byte("x"), func(m *nats.Msg) { m.Respond(m.Data) })
	defer stop()
	ds := make([]time.Duration, 0, n)
	payload := make([]byte, 2048)
	for range n {
		start := time.Now()
		if _, err := lc.Request("echo", payload, time.Second); err != nil {
			b.Fatal(err)
		}
		ds = append(ds, time.Since(start))
	}
	return ds
}

// rawLeafLink starts a hub NATS server and a leaf of it, answers subject
// at the hub with respond, and returns a client of the leaf once probe
// gets an answer through the link, and what stops them all.
func rawLeafLink(b *testing.B, subject string, probe []byte, respond nats.MsgHandler) (*nats.Conn, func()) {
	log := slog.New(slog.DiscardHandler)
	hub, err := natsnode.Start(natsnode.Config{Name: "rawhub", Host: "127.0.0.1", Port: -1, StoreDir: b.TempDir(), LeafHost: "127.0.0.1", LeafPort: -1,
		ClientToken: "t", LeafAuth: func(u, p string) *server.Permissions { return &server.Permissions{} }}, log)
	if err != nil {
		b.Fatal(err)
	}
	u, _ := url.Parse(hub.LeafURL())
	u.User = url.UserPassword("x", "y")
	leaf, err := natsnode.Start(natsnode.Config{Name: "rawleaf", Host: "127.0.0.1", Port: -1, StoreDir: b.TempDir(), LeafRemotes: []string{u.String()}}, log)
	if err != nil {
		hub.Shutdown()
		b.Fatal(err)
	}
	hc, _ := hub.Connect("h", "t")
	hc.Subscribe(subject, respond)
	hc.Flush()
	lc, _ := leaf.Connect("l", "")
	for deadline := time.Now().Add(10 * time.Second); ; {
		if _, err := lc.Request(subject, probe, 100*time.Millisecond); err == nil || time.Now().After(deadline) {
			break
		}
	}
	return lc, func() { lc.Close(); hc.Close(); leaf.Shutdown(); hub.Shutdown() }
}
