package synctest

import (
	"errors"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"kassa.dev/edge/edgenode"
	"kassa.dev/hub/hubnode"
	"kassa.dev/shared/demo"
	"kassa.dev/shared/node"
	"kassa.dev/shared/node/nodetest"
	"kassa.dev/sync/wait"
)

// countOrders counts a location's orders at a node, page by page.
func countOrders(t *testing.T, p *nodetest.Proc, tok, loc string) int {
	n, cursor := 0, ""
	for {
		var l struct {
			Data       []map[string]any `json:"data"`
			NextCursor *string          `json:"next_cursor"`
		}
		if st := p.Call(t, "GET", "/api/v1/orders?limit=200&location_id="+loc+cursor, tok, nil, &l); st != 200 {
			t.Fatalf("list orders: %d", st)
		}
		n += len(l.Data)
		if l.NextCursor == nil {
			return n
		}
		cursor = "&cursor=" + *l.NextCursor
	}
}

// burst sells at the edge from a few terminals until stopped; acked
// returns how many sales were acknowledged so far.
type burst struct {
	mu    sync.Mutex
	n     int
	stop  chan struct{}
	wg    sync.WaitGroup
	fails int
}

func (e *env) startBurst(t *testing.T, terminals int, product string) *burst {
	b := &burst{stop: make(chan struct{})}
	for range terminals {
		b.wg.Add(1)
		go func() {
			defer b.wg.Done()
			for {
				select {
				case <-b.stop:
					return
				default:
				}
				var o oneResp
				ok := e.edge.TryCall("POST", "/api/v1/orders", e.edgeTok, map[string]any{"location_id": e.location,
					"line_items": []any{map[string]any{"product_id": product, "quantity": 1}}}, &o) == 201
				id, _ := o.Data["id"].(string)
				ok = ok && e.edge.TryCall("POST", "/api/v1/payments/initiate", e.edgeTok, map[string]any{"order_id": id, "amount": o.Data["total"], "method": "cash"}, nil) == 201
				ok = ok && e.edge.TryCall("POST", "/api/v1/orders/"+id+"/complete", e.edgeTok, nil, nil) == 200
				b.mu.Lock()
				if ok {
					b.n++
				} else {
					b.fails++
				}
				b.mu.Unlock()
			}
		}()
	}
	t.Cleanup(b.end)
	return b
}

func (b *burst) acked() int { b.mu.Lock(); defer b.mu.Unlock(); return b.n }

func (b *burst) end() {
	select {
	case <-b.stop:
	default:
		close(b.stop)
	}
	b.wg.Wait()
}

func run(t *testing.T, cmd func() error) {
	t.Helper()
	if err := cmd(); err != nil {
		t.Fatal(err)
	}
}

// TestAnEdgeRestoredFromABackupGetsBackWhatItSoldSince: an edge backup
// (and a hub backup) taken in the middle of a burst of sales; the burst
// ends and syncs; the edge is lost and restored from its backup into a new
// data directory. The restored edge gets back, from the hub, the sales it
// made after the backup (its own records, which the hub normally leaves
// out of its pulls), and both stores agree again, with no sale lost.
func TestAnEdgeRestoredFromABackupGetsBackWhatItSoldSince(t *testing.T) {
	e := MustStartPair(t)
	product := e.products(t, e.edge, e.edgeTok)[0]["id"].(string)
	b := e.startBurst(t, 4, product)
	wait.For(t, 30*time.Second, "sales before the backups", func() bool { return b.acked() >= 20 })
	dir := t.TempDir()
	edgeBackup, hubBackup := filepath.Join(dir, "edge.db"), filepath.Join(dir, "hub.db")
	var out strings.Builder
	run(t, func() error {
		return edgenode.Commands["backup"](t.Context(), []string{"--data-dir", e.edgeDir, "--out", edgeBackup}, noEnv, &out)
	})
	run(t, func() error {
		return hubnode.Commands["backup"](t.Context(), append([]string{"--data-dir", e.hubDir, "--out", hubBackup}, e.hubArgs...), noEnv, &out)
	})
	atBackup := b.acked()
	wait.For(t, 30*time.Second, "sales after the backups", func() bool { return b.acked() >= atBackup+20 })
	b.end()
	if b.fails > 0 {
		t.Fatalf("%d sales failed during the backups", b.fails)
	}
	// A second backup to the same file is refused without --force.
	if err := edgenode.Commands["backup"](t.Context(), []string{"--data-dir", e.edgeDir, "--out", edgeBackup}, noEnv, &out); !errors.Is(err, node.ErrExists) {
		t.Fatalf("backup over an existing file: %v", err)
	}
	// The hub's backup is a sound store (on PostgreSQL, a pg_dump archive
	// that loads into a new database).
	if len(e.hubArgs) == 0 {
		if err := node.CheckBackup(t.Context(), hubBackup); err != nil {
			t.Fatal(err)
		}
	}
	hubCopy, copyStore, copyArgs := e.newHubStore(t)
	run(t, func() error {
		return hubnode.Commands["restore"](t.Context(), append([]string{"--backup", hubBackup, "--data-dir", hubCopy}, copyArgs...), noEnv, &out)
	})
	if _, es, err := node.ReadEventLog(t.Context(), copyStore, 0, 10); err != nil || len(es) == 0 {
		t.Fatalf("the hub's backup as a store: %v, %d events", err, len(es))
	}

	sold := b.acked()
	wait.For(t, 30*time.Second, "the burst at the hub", func() bool {
		return e.status(t, e.edge, e.edgeMgr)["pending_up"] == float64(0) && countOrders(t, e.hub, e.hubTok, e.location) == sold
	})
	e.edge.Stop(t)

	// Restore: refused over a data directory in use, then into a new one.
	if err := edgenode.Commands["restore"](t.Context(), []string{"--backup", edgeBackup, "--data-dir", e.edgeDir}, noEnv, &out); !errors.Is(err, node.ErrExists) {
		t.Fatalf("restore into a non-empty data directory: %v", err)
	}
	restored := e.restoreEdge(t, edgeBackup)
	// It failed now and then on the PostgreSQL line in whole runs
	// (status.md, "Flakes seen": the restored edge ended its resync while
	// the hub's last commits waited for their positions): the restored
	// edge's orders and sync status as it failed say whether it pulled
	// and what it holds.
	var held int
	var st map[string]any
	defer func() {
		if t.Failed() {
			t.Logf("the restored edge held %d of %d orders; its sync status: %v", held, sold, st)
		}
	}()
	wait.For(t, 30*time.Second, "the restored edge to get its sales back", func() bool {
		held, st = countOrders(t, e.edge, e.edgeMgr, e.location), e.status(t, e.edge, e.edgeMgr)
		return held == sold
	})
	// It sells on, with order numbers of its own, and the sale syncs.
	after := e.sale(t, product)
	var o oneResp
	wait.For(t, 30*time.Second, "a sale after the restore at the hub", func() bool {
		return e.hub.Call(t, "GET", "/api/v1/orders/"+after, e.hubTok, nil, &o) == 200 && o.Data["status"] == "completed"
	})
	wait.For(t, 30*time.Second, "the restored edge to verify", func() bool {
		st := e.status(t, e.edge, e.edgeMgr)
		return st["last_verified"] != nil && st["pending_up"] == float64(0) && countOrders(t, e.hub, e.hubTok, e.location) == sold+1
	})
	out.Reset()
	if err := hubnode.Verify(t.Context(), append([]string{"--data-dir", e.hubDir, "--edge-data-dir", restored}, e.hubArgs...), &out); err != nil {
		t.Fatalf("verify after the restore: %v\n%s", err, out.String())
	}
	t.Logf("%d sales, %d of them after the backup; restored edge and hub identical", sold, sold-atBackup)
}

// TestARestoredEdgeResyncsWhileTheHubsLogWaits: an edge restored from a
// backup asks the hub for its own records until the hub's log serves every
// record committed, not only until its cursor reaches the log's newest
// position. On PostgreSQL a commit gets its log positions once every older
// transaction of the database's cluster has ended (seq_mark.go), and a push
// is acknowledged after at most a short wait for them: here a writing
// transaction held open holds back the sales the edge makes after its
// backup. The restored edge pulls while they wait; it used to end its
// resync at once (its cursor at the log's newest position) and never asked
// for its own records again: the sales it made after the backup stayed at
// the hub only (the restore test's flake, status.md "Flakes seen").
func TestARestoredEdgeResyncsWhileTheHubsLogWaits(t *testing.T) {
	e := MustStartPair(t)
	if len(e.hubArgs) == 0 {
		t.Skip("SQLite: a record has its log position when it commits; the wait is PostgreSQL's")
	}
	product := e.products(t, e.edge, e.edgeTok)[0]["id"].(string)
	synced := func(n int) func() bool {
		return func() bool {
			return e.status(t, e.edge, e.edgeMgr)["pending_up"] == float64(0) && countOrders(t, e.hub, e.hubTok, e.location) == n
		}
	}
	before := countOrders(t, e.hub, e.hubTok, e.location)
	for range 2 {
		e.sale(t, product)
	}
	wait.For(t, 30*time.Second, "the first sales at the hub", synced(before+2))
	backup := filepath.Join(t.TempDir(), "edge.db")
	var out strings.Builder
	run(t, func() error {
		return edgenode.Commands["backup"](t.Context(), []string{"--data-dir", e.edgeDir, "--out", backup}, noEnv, &out)
	})
	tx := beginWriting(t, e.hubStore)
	for range 3 {
		e.sale(t, product)
	}
	wait.For(t, 30*time.Second, "the sales after the backup at the hub", synced(before+5))
	e.edge.Stop(t)
	e.restoreEdge(t, backup)
	wait.For(t, 30*time.Second, "the restored edge to pull while the sales wait", func() bool {
		st := e.status(t, e.edge, e.edgeMgr)
		return st["connected"] == true && st["pending_down"] == float64(0)
	})
	if held := countOrders(t, e.edge, e.edgeMgr, e.location); held != before+2 {
		t.Fatalf("the restored edge holds %d orders while the hub's log waits, want the backup's %d", held, before+2)
	}
	if err := tx.Rollback(t.Context()); err != nil {
		t.Fatal(err)
	}
	wait.For(t, 30*time.Second, "the restored edge to get the sales it made after its backup", func() bool {
		return countOrders(t, e.edge, e.edgeMgr, e.location) == before+5
	})
}

// restoreEdge restores the (stopped) edge from backup into a new data
// folder, starts it there, logs its cashier and manager in, and returns
// the folder.
func (e *env) restoreEdge(t *testing.T, backup string) string {
	restored := t.TempDir()
	var out strings.Builder
	run(t, func() error {
		return edgenode.Commands["restore"](t.Context(), []string{"--backup", backup, "--data-dir", restored}, noEnv, &out)
	})
	args := append([]string(nil), e.edgeArgs...)
	for i := range args {
		if args[i] == e.edgeDir {
			args[i] = restored
		}
	}
	e.edge, e.edgeDir = nodetest.Start(t, edgenode.Run, nil, args...), restored
	e.edgeTok = e.edge.Login(t, "cashier@demo.test", demo.Password)
	e.edgeMgr = e.edge.Login(t, "manager@demo.test", demo.Password)
	return restored
}

// newHubStore is where a restored hub goes: a new data folder and, on
// PostgreSQL, a new database of the pair's server (the restore makes
// it); the store to read it at and the hub's arguments for it.
func (e *env) newHubStore(t *testing.T) (dir, store string, args []string) {
	dir = t.TempDir()
	if len(e.hubArgs) == 0 {
		return dir, dir, nil
	}
	u, err := url.Parse(e.hubStore)
	if err != nil {
		t.Fatal(err)
	}
	u.Path = "/restored_" + strconv.FormatInt(time.Now().UnixNano(), 36)
	return dir, u.String(), []string{"--store", u.String()}
}

// noEnv is an empty environment for the binaries' subcommands.
func noEnv(string) string { return "" }

// TestARestoredHubGetsBackWhatEdgesSentSince: the hub is lost after its
// backup while an edge kept selling and pushing. Restored, the hub's log
// has a new epoch: the edge pulls from the start and pushes its whole
// outbox again, so the sales the hub lost come back, and what the
// restored hub writes reaches the edge though its log positions restart
// below the edge's cursor.
func TestARestoredHubGetsBackWhatEdgesSentSince(t *testing.T) {
	e := MustStartPair(t)
	product := e.products(t, e.edge, e.edgeTok)[0]["id"].(string)
	for range 5 {
		e.sale(t, product)
	}
	synced := func(n int) func() bool {
		return func() bool {
			return e.status(t, e.edge, e.edgeMgr)["pending_up"] == float64(0) && countOrders(t, e.hub, e.hubTok, e.location) == n
		}
	}
	wait.For(t, 30*time.Second, "the first sales at the hub", synced(5))
	backup := filepath.Join(t.TempDir(), "hub.db")
	var out strings.Builder
	run(t, func() error {
		return hubnode.Commands["backup"](t.Context(), append([]string{"--data-dir", e.hubDir, "--out", backup}, e.hubArgs...), noEnv, &out)
	})
	// The backup holds every customer's data: the owner's alone; and it is
	// not overwritten without --force.
	if st, err := os.Stat(backup); err != nil || st.Mode().Perm() != 0o600 {
		t.Fatalf("the hub's backup: %v, %v", st, err)
	}
	if err := hubnode.Commands["backup"](t.Context(), append([]string{"--data-dir", e.hubDir, "--out", backup}, e.hubArgs...), noEnv, &out); !errors.Is(err, node.ErrExists) {
		t.Fatalf("a hub backup over an existing file: %v", err)
	}
	for range 5 {
		e.sale(t, product)
	}
	wait.For(t, 30*time.Second, "the later sales at the hub", synced(10))
	e.hub.Stop(t)

	// Refused over the store in use, then into a new one.
	if err := hubnode.Commands["restore"](t.Context(), append([]string{"--data-dir", e.hubDir}, append(e.hubArgs, backup)...), noEnv, &out); !errors.Is(err, node.ErrExists) {
		t.Fatalf("restore over the hub's store: %v", err)
	}
	restored, store, storeArgs := e.newHubStore(t)
	run(t, func() error {
		return hubnode.Commands["restore"](t.Context(), append([]string{"--data-dir", restored}, append(storeArgs, backup)...), noEnv, &out)
	})
	e.hub = nodetest.Start(t, hubnode.Run, nil, append([]string{"--http-addr", "127.0.0.1:0", "--data-dir", restored, "--leaf-port", "-1"}, storeArgs...)...)
	e.hubDir, e.hubStore, e.hubArgs = restored, store, storeArgs
	e.proxy.retarget(strings.TrimPrefix(field(e.hub.Output(), "leaf "), "nats-leaf://"))
	e.hubTok = e.hub.Login(t, "owner@demo.test", demo.Password)
	wait.For(t, 30*time.Second, "the sales the restored hub lost, pushed again", synced(10))
	var p oneResp
	if st := e.hub.Call(t, "POST", "/api/v1/catalog/products", e.hubTok, map[string]any{"name": "After the restore", "sku": "AFTER-RESTORE", "base_price": 100}, &p); st != 201 {
		t.Fatalf("product at the restored hub: %d", st)
	}
	wait.For(t, 30*time.Second, "the restored hub's product at the edge", func() bool {
		return e.edge.Call(t, "GET", "/api/v1/catalog/products/"+p.Data["id"].(string), e.edgeTok, nil, nil) == 200
	})
	wait.For(t, 30*time.Second, "the edge to verify against the restored hub", func() bool {
		st := e.status(t, e.edge, e.edgeMgr)
		return st["last_verified"] != nil && st["pending_up"] == float64(0) && st["pending_down"] == float64(0)
	})
	out.Reset()
	if err := hubnode.Verify(t.Context(), append([]string{"--data-dir", restored, "--edge-data-dir", e.edgeDir}, storeArgs...), &out); err != nil {
		t.Fatalf("verify after the hub's restore: %v\n%s", err, out.String())
	}
}
