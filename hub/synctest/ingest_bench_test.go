package synctest

import (
	"database/sql"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	_ "github.com/jackc/pgx/v5/stdlib"
	"github.com/nats-io/nats.go"

	"kassa.dev/shared/demo"
	"kassa.dev/shared/kassa"
	"kassa.dev/shared/node/nodetest"
	"kassa.dev/shared/pgtest"
	"kassa.dev/sync/change"
	"kassa.dev/sync/hlc"
	"kassa.dev/sync/link"
	"kassa.dev/sync/natsnode"
)

// BenchmarkIngest is issue 25's hub ingest bench: simulated edges, each
// enrolled at a hub (POST /sync/enrol, its own node id and leaf
// credentials) and linked by its own leaf NATS server with the edge's
// permissions, push sales as an edge's link sends them (one request per
// sale on the edge's up subject, the records of an order made at the hub
// and re-minted for the edge: new ids, the edge's origin and clock). For
// one hub on SQLite, one on PostgreSQL and three on one PostgreSQL, in one
// run, it prints change records a second, visibility (an edge's push to
// the hub's reply, which comes after the hub's commit: the records are
// then in the hub's log) and CPU µs per record of the hubs (the hub
// binary, built by the bench, one process each), of PostgreSQL (the
// postmaster and its backends) — both from /proc/<pid>/stat — and of this
// process (the simulated edges). KASSA_BENCH_EDGES (default 100)
// and KASSA_BENCH_INGEST_SALES (sales per edge, default 20) change the
// run; KASSA_BENCH_ONLY=ingest runs it alone (make bench-ingest).
func BenchmarkIngest(b *testing.B) {
	if only := os.Getenv("KASSA_BENCH_ONLY"); only != "" && only != "ingest" {
		b.Skip("KASSA_BENCH_ONLY=" + only)
	}
	edges, sales := benchKnob("KASSA_BENCH_EDGES", 100), benchKnob("KASSA_BENCH_INGEST_SALES", 20)
	for range b.N {
		runs := []struct {
			key, name string
			hubs      int
			store     string
		}{{"sqlite", "1 hub, SQLite", 1, "sqlite"}, {"pg1", "1 hub, PostgreSQL", 1, "postgres"}, {"pg3", "3 hubs, one PostgreSQL", 3, "postgres"}}
		bin := ingestBinary(b)
		var rows []ingestResult
		for _, r := range runs {
			if !ingestRunWanted(r.key) {
				continue
			}
			rows = append(rows, ingestRun(b, bin, r.name, r.hubs, r.store, edges, sales))
		}
		printIngest(edges, sales, rows)
	}
}

// ingestBinary is the hub binary the runs start: KASSA_BENCH_HUB_BIN's, a
// build made beforehand (to compare two builds in turns), or one built now
// from this tree.
func ingestBinary(b *testing.B) string {
	if bin := os.Getenv("KASSA_BENCH_HUB_BIN"); bin != "" {
		return bin
	}
	bin := filepath.Join(b.TempDir(), "hub")
	args := []string{"build", "-o", bin, "kassa.dev/hub"}
	if os.Getenv("KASSA_PPROF_ADDR") != "" {
		args = append(args[:1], append([]string{"-tags", "pprof"}, args[1:]...)...)
	}
	if out, err := exec.Command("go", args...).CombinedOutput(); err != nil {
		b.Fatalf("go build kassa.dev/hub: %v\n%s", err, out)
	}
	return bin
}

// ingestRunWanted reports whether KASSA_BENCH_INGEST_RUNS (a comma list of
// sqlite, pg1, pg3; unset: all) names the run.
func ingestRunWanted(key string) bool {
	runs := os.Getenv("KASSA_BENCH_INGEST_RUNS")
	return runs == "" || slices.Contains(strings.Split(runs, ","), key)
}

func benchKnob(name string, def int) int {
	if s := os.Getenv(name); s != "" {
		fmt.Sscan(s, &def)
	}
	return def
}

type ingestResult struct {
	name                         string
	records                      int
	wall                         time.Duration
	p50, p99                     float64
	hubCPU, postgresCPU, edgeCPU time.Duration
	refused, duplicate           int
	postgres                     bool
}

// ingestHubs are the hubs of one run, the store's DSN (or the first
// hub's SQLite file) and the postmaster's pid (0 on SQLite).
type ingestHubs struct {
	procs  []*nodetest.Proc
	pids   []int
	stop   []func()
	driver string
	dsn    string
	pgPID  int
}

func startIngestHubs(b *testing.B, bin string, n int, store string) ingestHubs {
	args := []string{"--demo", "--http-addr", "127.0.0.1:0", "--leaf-port", "-1"}
	h := ingestHubs{driver: "sqlite3"}
	if store == "postgres" {
		pg := pgtest.Start(b)
		h.driver, h.dsn, h.pgPID = "pgx", pg.DSN, pg.PID
		args = append(args, "--store", pg.DSN)
		if n > 1 {
			// As docs/postgres.md has several hubs set up: write loops
			// about PostgreSQL's cores (this machine's) ÷ the hubs.
			args = append(args, "--writers", strconv.Itoa(max(1, runtime.NumCPU()/n)))
		}
	}
	for range n {
		dir := b.TempDir()
		if h.dsn == "" {
			h.dsn = "file:" + filepath.Join(dir, "kassa.db") + "?_busy_timeout=10000&mode=ro"
		}
		p := startProcess(b, bin, append([]string{"--data-dir", dir}, args...)...)
		h.procs, h.pids = append(h.procs, &nodetest.Proc{URL: p.URL}), append(h.pids, p.cmd.Process.Pid)
		h.stop = append(h.stop, func() { p.cmd.Process.Signal(os.Interrupt); p.cmd.Wait() })
	}
	return h
}

// ingestRun starts the hubs, enrols and links the edges, then has every
// edge push its sales at once and measures.
func ingestRun(b *testing.B, bin, name string, nHubs int, store string, nEdges, sales int) ingestResult {
	trips := countTrips(b, store)
	h := startIngestHubs(b, bin, nHubs, store)
	defer func() {
		for _, stop := range h.stop {
			stop()
		}
	}()
	tok := h.procs[0].WaitLogin(b, 60*time.Second, "owner@demo.test", demo.Password)
	template, loc := orderTemplate(b, h, tok)
	edges := make([]*simEdge, nEdges)
	for i := range edges {
		edges[i] = enrolSimEdge(b, h.procs[i%nHubs], tok, loc)
		defer edges[i].stop()
	}
	pushes := make([][][]byte, nEdges) // made before the clock starts
	for i, e := range edges {
		for s := range sales {
			pushes[i] = append(pushes[i], e.sale(b, template, i, s))
		}
	}
	res := ingestResult{name: name, records: nEdges * sales * len(template), postgres: h.pgPID != 0}
	var mu sync.Mutex
	var lat []time.Duration
	var wg sync.WaitGroup
	go profileIngest(name)
	if trips != nil {
		trips.pids = h.pids
		trips.before = trips.snapshot(b)
	}
	start, cpu, hubCPU, pgCPU := time.Now(), processCPU(), pgtest.ProcCPU(h.pids, 0), pgtest.ProcCPU(nil, h.pgPID)
	for i, e := range edges {
		wg.Add(1)
		go func() {
			defer wg.Done()
			mine, refused, dup := e.pushAll(b, pushes[i])
			mu.Lock()
			lat, res.refused, res.duplicate = append(lat, mine...), res.refused+refused, res.duplicate+dup
			mu.Unlock()
		}()
	}
	wg.Wait()
	res.wall, res.edgeCPU = time.Since(start), processCPU()-cpu
	res.hubCPU, res.postgresCPU = pgtest.ProcCPU(h.pids, 0)-hubCPU, pgtest.ProcCPU(nil, h.pgPID)-pgCPU
	res.p50, res.p99 = pct(lat, .5), pct(lat, .99)
	if trips != nil {
		trips.print(b, nEdges*sales)
	}
	if os.Getenv(pgtest.StatementsEnv) != "" && h.pgPID != 0 {
		printStatements(b, h.dsn, nEdges*sales)
	}
	if n := originRecords(b, h, edges[0].id.Node); n != sales*len(template) {
		b.Fatalf("%s: the hub's log holds %d records of the first edge, want %d", name, n, sales*len(template))
	}
	return res
}

// printStatements prints what PostgreSQL ran most often (or, with
// KASSA_BENCH_PGSTAT=time, longest), per push (the
// run's statements since the server started: setup too, so the calls a
// push makes stand out as those near a whole number per push).
func printStatements(b *testing.B, dsn string, pushes int) {
	db := statementsDB(b, dsn)
	defer db.Close()
	order := "calls" // KASSA_BENCH_PGSTAT=time: the statements that took longest first
	if os.Getenv(pgtest.StatementsEnv) == "time" {
		order = "total_exec_time"
	}
	rows, err := db.Query(`SELECT calls, plans, total_exec_time, total_plan_time, left(regexp_replace(query, '\s+', ' ', 'g'), 110)
		FROM pg_stat_statements ORDER BY ` + order + ` DESC LIMIT 40`)
	if err != nil {
		b.Fatal(err)
	}
	defer rows.Close()
	fmt.Printf("\nPostgreSQL's statements, most called first (%d pushes):\n| calls/push | plans/call | ms run | ms planned | statement |\n|---|---|---|---|---|\n", pushes)
	for rows.Next() {
		var calls, plans int
		var ms, planned float64
		var q string
		if err := rows.Scan(&calls, &plans, &ms, &planned, &q); err != nil {
			b.Fatal(err)
		}
		fmt.Printf("| %.2f | %.2f | %.0f | %.0f | `%s` |\n", float64(calls)/float64(pushes), float64(plans)/float64(max(calls, 1)), ms, planned, strings.ReplaceAll(q, "|", "/"))
	}
}

// profileIngest saves a CPU profile of the first hub (the one that holds
// KASSA_PPROF_ADDR; the hub binary is built with -tags pprof then) over
// KASSA_BENCH_INGEST_PROFILE seconds (default 5) of the pushes, as
// $TMPDIR/kassa-ingest-<run>.pprof.
func profileIngest(run string) {
	addr := os.Getenv("KASSA_PPROF_ADDR")
	if addr == "" {
		return
	}
	res, err := http.Get(fmt.Sprintf("http://%s/debug/pprof/profile?seconds=%d", addr, benchKnob("KASSA_BENCH_INGEST_PROFILE", 5)))
	if err != nil {
		return
	}
	defer res.Body.Close()
	path := filepath.Join(os.TempDir(), "kassa-ingest-"+strings.NewReplacer(" ", "-", ",", "").Replace(run)+".pprof")
	if f, err := os.Create(path); err == nil {
		io.Copy(f, res.Body)
		f.Close()
		fmt.Println("saved", path)
	}
}

// originRecords counts the records of origin node in the hub's log.
func originRecords(b *testing.B, h ingestHubs, node string) int {
	db, err := sql.Open(h.driver, h.dsn)
	if err != nil {
		b.Fatal(err)
	}
	defer db.Close()
	var n int
	if err := db.QueryRow(`SELECT count(*) FROM outbox WHERE origin = '` + node + `'`).Scan(&n); err != nil {
		b.Fatal(err)
	}
	return n
}

// orderTemplate is the hub log's records of one order made at the hub (a
// sale of one product) and its location.
func orderTemplate(b *testing.B, h ingestHubs, tok string) ([]change.Change, string) {
	var locs, products listResp
	h.procs[0].Call(b, "GET", "/api/v1/locations", tok, nil, &locs)
	h.procs[0].Call(b, "GET", "/api/v1/catalog/products?limit=1", tok, nil, &products)
	loc := locs.Data[0]["id"].(string)
	db, err := sql.Open(h.driver, h.dsn)
	if err != nil {
		b.Fatal(err)
	}
	defer db.Close()
	var before int64
	if err := db.QueryRow(`SELECT coalesce(max(seq), 0) FROM outbox`).Scan(&before); err != nil {
		b.Fatal(err)
	}
	var o oneResp
	if st := h.procs[0].Call(b, "POST", "/api/v1/orders", tok, map[string]any{"location_id": loc,
		"line_items": []any{map[string]any{"product_id": products.Data[0]["id"], "quantity": 1}}}, &o); st != 201 {
		b.Fatalf("the template order: %d %v", st, o)
	}
	rows, err := db.Query(`SELECT id, org_id, location_id, entity, entity_id, op, fields, actor FROM outbox WHERE seq > ` +
		strconv.FormatInt(before, 10) + ` ORDER BY seq`)
	if err != nil {
		b.Fatal(err)
	}
	defer rows.Close()
	var cs []change.Change
	for rows.Next() {
		var c change.Change
		var op, fields string
		if err := rows.Scan(&c.ID, &c.OrgID, &c.LocationID, &c.Entity, &c.EntityID, &op, &fields, &c.Actor); err != nil {
			b.Fatal(err)
		}
		c.Op = change.Op(op)
		if err := json.Unmarshal([]byte(fields), &c.Fields); err != nil {
			b.Fatal(err)
		}
		cs = append(cs, c)
	}
	if len(cs) == 0 {
		b.Fatal("the template order left no records in the hub's log")
	}
	return cs, loc
}

// simEdge is a simulated edge: its identity and its leaf server's client.
type simEdge struct {
	id   link.Identity
	leaf *natsnode.Server
	nc   *nats.Conn
	wall int64
}

func enrolSimEdge(b *testing.B, hub *nodetest.Proc, tok, loc string) *simEdge {
	var en oneResp
	if st := hub.Call(b, "POST", "/api/v1/locations/"+loc+"/enrolment", tok, nil, &en); st != 201 {
		b.Fatalf("enrolment: %d %v", st, en)
	}
	var res struct {
		Data kassa.EnrolResult `json:"data"`
	}
	if st := hub.Call(b, "POST", "/api/v1/sync/enrol", "", map[string]any{"token": en.Data["token"]}, &res); st != 200 {
		b.Fatalf("enrol: %d", st)
	}
	r := res.Data
	u, err := url.Parse(r.LeafURL)
	if err != nil {
		b.Fatal(err)
	}
	u.User = url.UserPassword(r.LeafUser, r.LeafPassword)
	leaf, err := natsnode.Start(natsnode.Config{Name: "sim-" + r.NodeID, Host: "127.0.0.1", Port: -1, StoreDir: b.TempDir(),
		LeafRemotes: []string{u.String()}}, slog.New(slog.DiscardHandler))
	if err != nil {
		b.Fatal(err)
	}
	e := &simEdge{id: link.Identity{Org: r.OrgID, Location: r.LocationID, Node: r.NodeID}, leaf: leaf, wall: time.Now().UnixMilli()}
	if e.nc, err = leaf.Connect("sim", "", nats.CustomInboxPrefix(e.id.InboxPrefix())); err != nil {
		b.Fatal(err)
	}
	for deadline := time.Now().Add(20 * time.Second); ; {
		var rep link.PushReply
		m, err := e.nc.Request(e.id.UpSubject(), fmt.Appendf(nil, `{"changes":[],"format":%d}`, change.Format), 200*time.Millisecond)
		if err == nil && json.Unmarshal(m.Data, &rep) == nil && rep.Error == "" {
			return e
		}
		if time.Now().After(deadline) {
			b.Fatalf("the simulated edge's link: %v %v", err, rep)
		}
	}
}

func (e *simEdge) stop() { e.nc.Close(); e.leaf.Shutdown() }

// sale is the push of sale s of edge i: the template's records with new
// ids (every id of the template replaced where it appears), the edge as
// origin and actor's org kept, a unique order number, the edge's clock.
func (e *simEdge) sale(b *testing.B, template []change.Change, i, s int) []byte {
	raw, _ := json.Marshal(template)
	text := string(raw)
	for n, c := range template {
		text = strings.ReplaceAll(text, c.ID, fmt.Sprintf("019a%04x-%04x-7000-8000-%012x", i, s, 2*n))
		text = strings.ReplaceAll(text, c.EntityID, fmt.Sprintf("019a%04x-%04x-7000-8000-%012x", i, s, 2*n+1))
	}
	var cs []change.Change
	if err := json.Unmarshal([]byte(text), &cs); err != nil {
		b.Fatal(err)
	}
	for k := range cs {
		e.wall++
		cs[k].Origin, cs[k].HLC, cs[k].LocationID = e.id.Node, hlc.Timestamp{Wall: e.wall}, e.id.Location
		if cs[k].Entity == "order" {
			if _, ok := cs[k].Fields["number"]; ok {
				cs[k].Fields["number"] = fmt.Sprintf("S%03d-%04d", i, s)
			}
		}
	}
	p, err := json.Marshal(link.PushRequest{Changes: cs, Format: change.Format})
	if err != nil {
		b.Fatal(err)
	}
	return p
}

// pushAll sends the pushes one after the other, as an edge's link does,
// and returns each one's time to the hub's reply.
func (e *simEdge) pushAll(b *testing.B, pushes [][]byte) (lat []time.Duration, refused, duplicate int) {
	for _, p := range pushes {
		start := time.Now()
		m, err := e.nc.Request(e.id.UpSubject(), p, 60*time.Second)
		if err != nil {
			b.Errorf("push: %v", err)
			return
		}
		lat = append(lat, time.Since(start))
		var rep link.PushReply
		if err := json.Unmarshal(m.Data, &rep); err != nil || rep.Error != "" {
			b.Errorf("push reply: %v %s", err, m.Data)
			return
		}
		refused, duplicate = refused+len(rep.Refused), duplicate+rep.Duplicate
		if len(rep.Refused) > 0 && refused == len(rep.Refused) {
			b.Logf("the hub refused a record: %s", rep.Refused[0].Error)
		}
	}
	return
}

func printIngest(edges, sales int, rows []ingestResult) {
	fmt.Printf("\nHub ingest: %d simulated edges × %d sales, loopback, %s, %d CPUs, load %s, %s\n", edges, sales,
		runtime.GOOS+"/"+runtime.GOARCH, runtime.NumCPU(), loadAvg(), time.Now().UTC().Format("2006-01-02"))
	fmt.Printf("| %-24s | %8s | %9s | %8s | %8s | %13s | %13s | %14s | %8s |\n", "run", "records", "records/s", "p50 ms", "p99 ms",
		"hub CPU µs/rec", "PG CPU µs/rec", "edges CPU µs/rec", "refused")
	fmt.Printf("|%s|%s|%s|%s|%s|%s|%s|%s|%s|\n", dashes(26), dashes(10), dashes(11), dashes(10), dashes(10), dashes(16), dashes(15), dashes(18), dashes(10))
	for _, r := range rows {
		per := func(d time.Duration) float64 { return float64(d.Microseconds()) / float64(r.records) }
		pgCol := "-"
		if r.postgres {
			pgCol = fmt.Sprintf("%.1f", per(r.postgresCPU))
		}
		fmt.Printf("| %-24s | %8d | %9.0f | %8.2f | %8.2f | %14.1f | %13s | %16.1f | %8d |\n", r.name, r.records,
			float64(r.records)/r.wall.Seconds(), r.p50, r.p99, per(r.hubCPU), pgCol, per(r.edgeCPU), r.refused)
	}
	fmt.Printf("Goals: one hub on PostgreSQL >= 5,000 records/s, visibility p99 <= 100 ms. Hubs: the hub binary's processes; edges: the bench's own.\n\n")
}

func loadAvg() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "?"
	}
	return strings.Join(strings.Fields(string(b))[:3], " ")
}
