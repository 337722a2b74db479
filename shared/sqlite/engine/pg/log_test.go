package pg_test

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"kassa.dev/shared/pgtest"
	"kassa.dev/shared/sqlite/engine/pg"
	"kassa.dev/sync/change"
	"kassa.dev/sync/hlc"
)

func openLog(t testing.TB, s *pgtest.Server) *pgxpool.Pool {
	t.Helper()
	ctx := context.Background()
	pool, err := pgxpool.New(ctx, s.Database(t)+"&pool_max_conns=20")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(pool.Close)
	if err := pg.Migrate(ctx, pool); err != nil {
		t.Fatal(err)
	}
	if err := pg.Migrate(ctx, pool); err != nil { // a second hub starting: nothing to do
		t.Fatalf("migrating again: %v", err)
	}
	return pool
}

func record(id string) change.Change {
	return change.Change{ID: id, OrgID: "org-1", LocationID: "loc-1", Entity: "order", EntityID: "o-" + id,
		Op: "upsert", Fields: map[string]any{"total": float64(1250)}, HLC: hlc.Timestamp{Wall: 1, Logical: 1}, Origin: "hub"}
}

func begin(t *testing.T, pool *pgxpool.Pool) pgx.Tx {
	t.Helper()
	tx, err := pool.Begin(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { tx.Rollback(context.Background()) })
	return tx
}

func appendTo(t *testing.T, tx pgx.Tx, ids ...string) {
	t.Helper()
	var cs []change.Change
	for _, id := range ids {
		cs = append(cs, record(id))
	}
	if err := pg.Append(context.Background(), tx, cs); err != nil {
		t.Fatal(err)
	}
}

// pull positions what can be, then reads after *cursor and moves it.
func pull(t *testing.T, pool *pgxpool.Pool, cursor *int64) []string {
	t.Helper()
	ctx := context.Background()
	if _, err := pg.Position(ctx, pool); err != nil {
		t.Fatal(err)
	}
	es, err := pg.After(ctx, pool, *cursor, "org-1", 100)
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, e := range es {
		if e.Pos <= *cursor {
			t.Fatalf("position %d at or below the cursor %d", e.Pos, *cursor)
		}
		*cursor = e.Pos
		ids = append(ids, e.ID)
	}
	return ids
}

// Two transactions write the hub's log and commit in the opposite order:
// an edge pulling by cursor between the two commits must not move past the
// row that commits late. Both ways a transaction can be "first" are forced:
// the earlier write (the lower id of the sequence) and the earlier
// transaction id (taken before the other began, its row written after).
func TestTheLogCursorNeverPassesARowThatCommitsLate(t *testing.T) {
	s := pgtest.Start(t)
	ctx := context.Background()
	for _, first := range []string{"write", "transaction id"} {
		t.Run("earlier "+first, func(t *testing.T) {
			pool := openLog(t, s)
			early, late := begin(t, pool), begin(t, pool)
			if first == "write" {
				appendTo(t, early, "a1") // two appends in one unit: ordinals go on
				appendTo(t, early, "a2")
			} else if _, err := early.Exec(ctx, `SELECT pg_current_xact_id()`); err != nil {
				t.Fatal(err)
			}
			appendTo(t, late, "b1")
			if err := late.Commit(ctx); err != nil {
				t.Fatal(err)
			}
			if first == "transaction id" {
				appendTo(t, early, "a1", "a2")
			}
			// The hazard is real: by the sequence, the committed row sits
			// above the running one's, so a cursor at it would skip a1, a2.
			var visible, lowest int64
			if err := pool.QueryRow(ctx, `SELECT max(id) FROM outbox_log`).Scan(&visible); err != nil {
				t.Fatal(err)
			}
			if err := early.QueryRow(ctx, `SELECT min(id) FROM outbox_log`).Scan(&lowest); err != nil {
				t.Fatal(err)
			}
			if first == "write" && lowest >= visible {
				t.Fatalf("the running transaction's row (id %d) should lie below the committed one's (id %d)", lowest, visible)
			}

			var cursor int64
			if got := pull(t, pool, &cursor); len(got) != 0 {
				t.Fatalf("while an older transaction runs, the edge pulled %v: the cursor would pass its rows", got)
			}
			if err := early.Commit(ctx); err != nil {
				t.Fatal(err)
			}
			// The early transaction's rows were written before b1's
			// (write) or after b1 committed (transaction id): the log
			// keeps the order of the writes that could see each other.
			want := map[string]string{"write": "[a1 a2 b1]", "transaction id": "[b1 a1 a2]"}[first]
			got := pull(t, pool, &cursor)
			if fmt.Sprint(got) != want {
				t.Fatalf("after both commits the edge pulled %v, want %s (every row once, in commit-safe order)", got, want)
			}
			if more := pull(t, pool, &cursor); len(more) != 0 {
				t.Fatalf("pulled again: %v", more)
			}
		})
	}
}

// A hub's writer begins a transaction (taking its id), and a unit queued
// while it runs joins it: an edge's next push, sent once another hub had
// committed and acknowledged the push before it. That unit reads the order
// the other hub inserted and writes its change. The order's insert must
// come first in the log, though its transaction's id is the higher one: an
// edge applying the change first has no order to change (the failover
// test's edge stopped there: "change of a row that has not arrived").
func TestTheLogKeepsAChangeAfterTheCommitItRead(t *testing.T) {
	s := pgtest.Start(t)
	ctx := context.Background()
	pool := openLog(t, s)
	if _, err := pool.Exec(ctx, `CREATE TABLE orders (id text PRIMARY KEY, status text)`); err != nil {
		t.Fatal(err)
	}
	joined := begin(t, pool) // hub 2's writer: its batch began first
	if _, err := joined.Exec(ctx, `SELECT pg_current_xact_id()`); err != nil {
		t.Fatal(err)
	}
	appendTo(t, joined, "other") // another edge's push in the same batch
	other := begin(t, pool)      // hub 3 admits the edge's push: the order
	if _, err := other.Exec(ctx, `INSERT INTO orders VALUES ('o-1', 'open')`); err != nil {
		t.Fatal(err)
	}
	appendTo(t, other, "insert")
	if err := other.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	// Acknowledged; the edge's next push joins hub 2's batch and reads the
	// order it changes.
	var status string
	if err := joined.QueryRow(ctx, `UPDATE orders SET status = 'paid' WHERE id = 'o-1' RETURNING status`).Scan(&status); err != nil {
		t.Fatalf("the joined unit does not see the order committed before it: %v", err)
	}
	appendTo(t, joined, "update")
	if err := joined.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	var cursor int64
	got := fmt.Sprint(pull(t, pool, &cursor))
	if got != "[insert other update]" {
		t.Fatalf("the edge pulled %s, want [insert other update]: the order's change after the order", got)
	}
}

// pullOnce is pull for a goroutine of its own: it positions what can be,
// reads after *cursor and moves it, and reports trouble as an error.
func pullOnce(ctx context.Context, pool *pgxpool.Pool, cursor *int64) ([]string, error) {
	if _, err := pg.Position(ctx, pool); err != nil {
		return nil, err
	}
	es, err := pg.After(ctx, pool, *cursor, "org-1", 100)
	if err != nil {
		return nil, err
	}
	var ids []string
	for _, e := range es {
		if e.Pos <= *cursor {
			return nil, fmt.Errorf("position %d at or below the cursor %d", e.Pos, *cursor)
		}
		*cursor = e.Pos
		ids = append(ids, e.ID)
	}
	return ids, nil
}

// idFirst is whether writeUnits' transactions take their id first, as
// the engine's writer does (Dialect.BeginSQL), before their cseq.
type idFirst bool

const (
	idWhenWriting idFirst = false // at the log's insert, after its cseq
	idAtBegin     idFirst = true
)

// writeUnits commits units of two records each, and rolls back every fifth.
func writeUnits(ctx context.Context, pool *pgxpool.Pool, w, units int, id idFirst) error {
	for u := range units {
		tx, err := pool.Begin(ctx)
		if err != nil {
			return err
		}
		if id == idAtBegin {
			if _, err := tx.Exec(ctx, `SELECT pg_current_xact_id()`); err != nil {
				return err
			}
		}
		id := fmt.Sprintf("w%d-u%d", w, u)
		if err := pg.Append(ctx, tx, []change.Change{record(id + "-1"), record(id + "-2")}); err != nil {
			return err
		}
		if u%5 == 4 {
			tx.Rollback(ctx)
			continue
		}
		if err := tx.Commit(ctx); err != nil {
			return err
		}
	}
	return nil
}

// startWriters runs writeUnits on writers goroutines, their errors to
// errs; the channel it returns is closed once they are all done.
func startWriters(ctx context.Context, pool *pgxpool.Pool, writers, units int, id idFirst, errs chan<- error) <-chan struct{} {
	var wg sync.WaitGroup
	for w := range writers {
		wg.Go(func() {
			if err := writeUnits(ctx, pool, w, units, id); err != nil {
				errs <- err
			}
		})
	}
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()
	return done
}

// follow is one hub's edge pulling until the writers are done and the
// log has nothing left to position or to pull: what it pulled, in order.
func follow(ctx context.Context, pool *pgxpool.Pool, done <-chan struct{}) ([]string, error) {
	var cursor int64
	var got []string
	for {
		// Settled before this pull: every record is positioned, so a
		// pull that finds nothing finds the end.
		settled := false
		select {
		case <-done:
			pending, err := pg.Unpositioned(ctx, pool)
			if err != nil {
				return got, err
			}
			settled = pending == 0
		default:
		}
		ids, err := pullOnce(ctx, pool, &cursor)
		if err != nil {
			return got, err
		}
		got = append(got, ids...)
		if settled && len(ids) == 0 {
			return got, nil
		}
	}
}

// Many writers commit and roll back in whatever order the machine makes,
// while two hubs position the log and each pulls it by cursor the whole
// time: each ends with every committed record exactly once, none of the
// rolled-back ones, and both in the same order.
func TestTheLogCursorGetsEveryCommittedRecordOnceUnderConcurrentWriters(t *testing.T) {
	s := pgtest.Start(t)
	pool := openLog(t, s)
	ctx := context.Background()
	const writers, units = 8, 25
	errs := make(chan error, writers+2)
	done := startWriters(ctx, pool, writers, units, idWhenWriting, errs)
	var hubs [2][]string
	var pulling sync.WaitGroup
	for h := range hubs {
		pulling.Go(func() {
			var err error
			if hubs[h], err = follow(ctx, pool, done); err != nil {
				errs <- err
			}
		})
	}
	pulling.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	want := writers * units * 4 / 5 * 2
	for h, got := range hubs {
		seen := map[string]int{}
		for _, id := range got {
			seen[id]++
			var w, u, k int
			fmt.Sscanf(id, "w%d-u%d-%d", &w, &u, &k)
			if u%5 == 4 {
				t.Errorf("hub %d: record %s of a rolled-back unit was pulled", h, id)
			}
		}
		if len(got) != want || len(seen) != want {
			t.Errorf("hub %d pulled %d records (%d distinct), want %d once each", h, len(got), len(seen), want)
		}
	}
	if fmt.Sprint(hubs[0]) != fmt.Sprint(hubs[1]) {
		t.Errorf("the two hubs pulled the log in different orders")
	}
}

// TestEveryCommitAtOrBelowTheAnsweredSeqIsPositioned: under concurrent
// writers (some rolling back) that take their transaction ids before their
// commit seqs, as the engine's writer does (a transaction that takes its
// id after its seq may end after a mark above its seq settled: it is then
// positioned later, above, and the answer does not cover it), what kassa_position_upto answers (migration
// 0016: the highest commit seq positioned, which tells a hub's write loops
// whether their commits are) never has a committed transaction at or below
// it without its positions, and it reaches the last commit once the
// writers are done.
func TestEveryCommitAtOrBelowTheAnsweredSeqIsPositioned(t *testing.T) {
	s := pgtest.Start(t)
	pool := openLog(t, s)
	ctx := context.Background()
	errs := make(chan error, 6)
	done := startWriters(ctx, pool, 6, 25, idAtBegin, errs)
	deadline := time.Now().Add(30 * time.Second)
	for ended := false; ; {
		select {
		case <-done:
			ended = true
		default:
		}
		var upto, behind, last int64
		if err := pool.QueryRow(ctx, `SELECT kassa_position_upto(0)`).Scan(&upto); err != nil {
			t.Fatal(err)
		}
		if err := pool.QueryRow(ctx, `SELECT count(*) FILTER (WHERE cseq <= $1 AND last_pos IS NULL), coalesce(max(cseq), 0) FROM outbox_commits`, upto).Scan(&behind, &last); err != nil {
			t.Fatal(err)
		}
		if behind != 0 {
			t.Fatalf("answered %d positioned; %d committed transactions at or below it have no positions", upto, behind)
		}
		if ended && upto == last {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the writers done, the answer %d has not reached the last commit %d", upto, last)
		}
	}
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
}

// TestAReadOfTheLogReadsOnlyWhatFollowsTheCursor: the log's readers
// (Dialect.LogAfter) read the records after their cursor through the
// commits' last positions, not the whole log: seq is computed in the
// outbox view, and a read by seq alone joined every record of the log to
// its commit, each pull, at a hub that keeps the log for good. So does
// the newest position each pull asks first (Dialect.LastSeqSQL).
func TestAReadOfTheLogReadsOnlyWhatFollowsTheCursor(t *testing.T) {
	ctx := context.Background()
	pool := openLog(t, pgtest.Start(t))
	const commits, per = 3000, 10
	for u := range commits {
		var cs []change.Change
		for k := range per {
			cs = append(cs, record(fmt.Sprintf("u%d-%d", u, k)))
		}
		tx := begin(t, pool)
		if err := pg.Append(ctx, tx, cs); err != nil {
			t.Fatal(err)
		}
		if err := tx.Commit(ctx); err != nil {
			t.Fatal(err)
		}
	}
	for waiting := int64(1); waiting > 0; {
		var err error
		if waiting, err = pg.Position(ctx, pool); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := pool.Exec(ctx, `ANALYZE`); err != nil {
		t.Fatal(err)
	}
	var plan string
	err := pool.QueryRow(ctx, `EXPLAIN (ANALYZE, FORMAT JSON) SELECT seq, org_id FROM outbox WHERE `+
		pg.Dialect{}.LogAfter("seq", "$1")+` ORDER BY seq LIMIT 100`, commits*per-100).Scan(&plan)
	if err != nil {
		t.Fatal(err)
	}
	var nodes []struct{ Plan planNode }
	if err := json.Unmarshal([]byte(plan), &nodes); err != nil || len(nodes) != 1 {
		t.Fatalf("the plan: %v\n%s", err, plan)
	}
	if n := nodes[0].Plan.rowsOf("outbox_log"); n > 1000 {
		t.Fatalf("reading the last 100 of %d records read %.0f of them:\n%s", commits*per, n, plan)
	}
	readsOnlyTheTail(t, pool, commits*per)

	// The newest position, which every pull asks first: the view's, read
	// from one index entry.
	var last, viewLast int64
	if err := pool.QueryRow(ctx, pg.Dialect{}.LastSeqSQL()).Scan(&last); err != nil {
		t.Fatal(err)
	}
	if err := pool.QueryRow(ctx, `SELECT max(seq) FROM outbox`).Scan(&viewLast); err != nil || last != viewLast || last != commits*per {
		t.Fatalf("the newest position: %d, the view's %d (%v), want %d", last, viewLast, err, commits*per)
	}
	if err := pool.QueryRow(ctx, `EXPLAIN (ANALYZE, FORMAT JSON) `+pg.Dialect{}.LastSeqSQL()).Scan(&plan); err != nil {
		t.Fatal(err)
	}
	nodes = nil
	if err := json.Unmarshal([]byte(plan), &nodes); err != nil || len(nodes) != 1 {
		t.Fatalf("the plan: %v\n%s", err, plan)
	}
	if n := nodes[0].Plan.rowsOf("outbox_commits") + nodes[0].Plan.rowsOf("outbox_log"); n > 10 {
		t.Fatalf("the newest of %d positions read %.0f rows:\n%s", commits*per, n, plan)
	}
}

// readsOnlyTheTail: the engine's cursor reads of the log (Dialect.LogFrom,
// LogAfter, LogOrder) read what they return under either plan PostgreSQL
// may cache, the generic one (which guesses a third of the commits follow
// any cursor: through the view it joined the whole log by hash) and a
// custom one, after a cursor near the end (1,000 records) and at the
// start (a LIMIT of 500 of n).
func readsOnlyTheTail(t *testing.T, pool *pgxpool.Pool, n int) {
	ctx := context.Background()
	d := pg.Dialect{}
	q := `SELECT seq, org_id FROM ` + d.LogFrom("") + ` WHERE ` + d.LogAfter("seq", "$1") + ` ORDER BY ` + d.LogOrder("seq") + ` LIMIT $2`
	for _, mode := range []string{"force_generic_plan", "force_custom_plan"} {
		c, err := pool.Acquire(ctx)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Release()
		if _, err := c.Exec(ctx, `SET plan_cache_mode = `+mode); err != nil {
			t.Fatal(err)
		}
		if _, err := c.Exec(ctx, `PREPARE tail_`+mode+`(bigint, bigint) AS `+q); err != nil {
			t.Fatal(err)
		}
		for _, cur := range []struct{ after, limit, most int }{{n - 1000, 1000, 1100}, {0, 500, 600}} {
			var plan string
			if err := c.QueryRow(ctx, fmt.Sprintf(`EXPLAIN (ANALYZE, FORMAT JSON) EXECUTE tail_%s(%d, %d)`, mode, cur.after, cur.limit)).Scan(&plan); err != nil {
				t.Fatal(err)
			}
			var nodes []struct{ Plan planNode }
			if err := json.Unmarshal([]byte(plan), &nodes); err != nil || len(nodes) != 1 {
				t.Fatalf("the plan: %v\n%s", err, plan)
			}
			if got := nodes[0].Plan.rowsOf("outbox_log"); got > float64(cur.most) {
				t.Fatalf("%s: reading %d records after %d of %d read %.0f of them:\n%s", mode, cur.limit, cur.after, n, got, plan)
			}
		}
	}
}

// planNode is a node of EXPLAIN (ANALYZE, FORMAT JSON).
type planNode struct {
	Relation string     `json:"Relation Name"`
	Rows     float64    `json:"Actual Rows"`
	Loops    float64    `json:"Actual Loops"`
	Removed  float64    `json:"Rows Removed by Filter"`
	Plans    []planNode `json:"Plans"`
}

// rowsOf is how many rows of table the plan's scans read.
func (p planNode) rowsOf(table string) float64 {
	n := 0.0
	if p.Relation == table {
		n = (p.Rows + p.Removed) * p.Loops
	}
	for _, c := range p.Plans {
		n += c.rowsOf(table)
	}
	return n
}

// TestAPollForACommitPositionsTheLogOnlyWhenItCan: a write loop's poll for
// its commit's positions (kassa_position_upto with the commit's seq,
// migration 0018) answers at once, marking and positioning nothing, while
// no settled mark covers the commit (an older transaction runs), and
// positions it once one does.
func TestAPollForACommitPositionsTheLogOnlyWhenItCan(t *testing.T) {
	ctx := context.Background()
	pool := openLog(t, pgtest.Start(t))
	older := begin(t, pool)
	if _, err := older.Exec(ctx, `SELECT pg_current_xact_id()`); err != nil {
		t.Fatal(err)
	}
	tx := begin(t, pool)
	if err := pg.Append(ctx, tx, []change.Change{record("a")}); err != nil {
		t.Fatal(err)
	}
	if err := tx.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	var cseq, upto, marks, after int64
	if err := pool.QueryRow(ctx, `SELECT kassa_after_commit_upto(0, '', ''), (SELECT max(cseq) FROM outbox_commits)`).Scan(&upto, &cseq); err != nil {
		t.Fatal(err)
	}
	poll := func() int64 {
		t.Helper()
		var upto int64
		if err := pool.QueryRow(ctx, `SELECT kassa_position_upto(0, $1)`, cseq).Scan(&upto); err != nil {
			t.Fatal(err)
		}
		return upto
	}
	countMarks := func() (n int64) {
		if err := pool.QueryRow(ctx, `SELECT count(*) FROM seq_marks`).Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n
	}
	marks = countMarks()
	if upto >= cseq || poll() >= cseq {
		t.Fatalf("commit %d positioned while an older transaction runs", cseq)
	}
	if after = countMarks(); after != marks {
		t.Errorf("a poll that could position nothing wrote %d marks", after-marks)
	}
	if err := older.Rollback(ctx); err != nil {
		t.Fatal(err)
	}
	if upto = poll(); upto < cseq {
		t.Fatalf("the older transaction ended, a poll answered %d, below commit %d", upto, cseq)
	}
	if upto = poll(); upto < cseq {
		t.Fatalf("a second poll answered %d, below the positioned commit %d", upto, cseq)
	}
}
