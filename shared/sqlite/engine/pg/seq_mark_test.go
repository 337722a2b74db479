package pg_test

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"kassa.dev/shared/pgtest"
	"kassa.dev/shared/sqlite"
	"kassa.dev/shared/sqlite/engine"
	"kassa.dev/shared/sqlite/engine/pg"
)

// openHubs opens n hubs' stores on one PostgreSQL database.
func openHubs(t testing.TB, n int) []*sqlite.DB {
	t.Helper()
	pg.Register(sqlite.PostgresMigrations)
	dsn := pgtest.Start(t).DSN
	var hubs []*sqlite.DB
	for range n {
		db, err := sqlite.Open(context.Background(), dsn, sqlite.Options{Hub: true})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { db.Close() })
		hubs = append(hubs, db)
	}
	return hubs
}

// followed is a table a reader follows by seq: how a unit writes a row
// of it, and how its reader reads the ids after a cursor.
type followed struct {
	table string
	write func(ctx context.Context, tx *engine.Tx, id string) error
	read  func(ctx context.Context, db *sqlite.DB, after int64) (ids []string, last int64, err error)
}

var followedTables = []followed{
	{table: "events", // the event log: automations, webhooks, partner feeds (engine.EventsAfter)
		write: func(ctx context.Context, tx *engine.Tx, id string) error {
			_, err := tx.ExecContext(ctx, `INSERT INTO events (id, org_id, type, data, occurred_at, created_at, updated_at, hlc, origin)
				VALUES (?, 'org-1', 'order.paid', '{}', '2026-11-28T10:00:00.000Z', '2026-11-28T10:00:00.000Z', '2026-11-28T10:00:00.000Z', '1', 'hub')`, id)
			return err
		},
		read: func(ctx context.Context, db *sqlite.DB, after int64) ([]string, int64, error) {
			evs, err := db.EventsAfter(ctx, after, 100)
			var ids []string
			for _, e := range evs {
				ids, after = append(ids, e.ID), e.Seq
			}
			return ids, after, err
		}},
	{table: "kds_events", // the kitchen screens' feed (KDSService.TicketEvents' statement)
		write: func(ctx context.Context, tx *engine.Tx, id string) error {
			_, err := tx.ExecContext(ctx, `INSERT INTO kds_events (org_id, location_id, order_id, type, data, created_at)
				VALUES ('org-1', 'loc-1', ?, 'ticket.created', '{}', '2026-11-28T10:00:00.000Z')`, id)
			return err
		},
		read: func(ctx context.Context, db *sqlite.DB, after int64) ([]string, int64, error) {
			rows, err := db.Reader.QueryContext(ctx, `SELECT seq, order_id FROM kds_events WHERE org_id = 'org-1' AND seq > ?`+
				engine.D(db.Reader).Settled("seq", "kds_events")+` ORDER BY seq`, after)
			if err != nil {
				return nil, 0, err
			}
			defer rows.Close()
			var ids []string
			for rows.Next() {
				var id string
				if err := rows.Scan(&after, &id); err != nil {
					return nil, 0, err
				}
				ids = append(ids, id)
			}
			return ids, after, rows.Err()
		}},
}

// TestAFollowedSeqIsNeverPassedByARowThatCommitsLate: on two hubs of one
// PostgreSQL, a unit on hub A takes a seq and holds its transaction open;
// a unit on hub B takes the next seq and commits first. A reader that
// follows the table by seq (the event log, the kitchen's feed) reads
// nothing past the gap while A runs, and once A commits reads both, in
// seq order, each once.
func TestAFollowedSeqIsNeverPassedByARowThatCommitsLate(t *testing.T) {
	hubs := openHubs(t, 2)
	for _, f := range followedTables {
		t.Run(f.table, func(t *testing.T) { checkLateRow(t, hubs[0], hubs[1], f, lateBeginsFirst) })
	}
}

// begins is which of checkLateRow's two transactions begins first (takes
// the lower transaction id).
type begins int

const (
	lateBeginsFirst  begins = iota // the unit that holds its seq and commits late
	earlyBeginsFirst               // the unit that takes the next seq and commits first
)

// checkLateRow: a unit on hub a writes f.table-late and holds its
// transaction; a unit on hub b writes f.table-early after it and commits
// first. b's reader reads nothing past the gap while a's unit runs, then
// each row once, in seq order.
func checkLateRow(t *testing.T, a, b *sqlite.DB, f followed, first begins) {
	ctx := context.Background()
	if err := b.Write(ctx, func(tx *engine.Tx) error { return f.write(ctx, tx, f.table+"-first") }); err != nil {
		t.Fatal(err)
	}
	seen, cursor := readUntil(t, b, f, 0, 1)
	began, wrote, release, done := make(chan struct{}), make(chan struct{}), make(chan struct{}), make(chan error, 1)
	var once sync.Once
	unblock := func() { once.Do(func() { close(release) }) }
	defer unblock() // a failure below still lets a's unit end, and the hub close
	go func() {
		<-began
		done <- a.Write(ctx, func(tx *engine.Tx) error {
			if err := f.write(ctx, tx, f.table+"-late"); err != nil {
				return err
			}
			close(wrote)
			<-release
			return nil
		})
	}()
	if first == lateBeginsFirst {
		close(began)
		<-wrote
	}
	err := b.Write(ctx, func(tx *engine.Tx) error {
		if first == earlyBeginsFirst {
			var one int // a read: the transaction's id is taken now (BeginSQL goes with it)
			if err := tx.QueryRowContext(ctx, `SELECT 1`).Scan(&one); err != nil {
				return err
			}
			close(began)
			<-wrote
		}
		return f.write(ctx, tx, f.table+"-early")
	})
	if err != nil {
		t.Fatal(err)
	}
	ids, next, err := f.read(ctx, b, cursor)
	if err != nil {
		t.Fatal(err)
	}
	if len(ids) > 0 {
		t.Fatalf("while %s-late's unit still ran, the reader passed its seq: read %v (cursor %d -> %d)", f.table, ids, cursor, next)
	}
	unblock()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	more, _ := readUntil(t, b, f, cursor, 2)
	seen = append(seen, more...)
	if want := []string{f.table + "-first", f.table + "-late", f.table + "-early"}; !slices.Equal(seen, want) {
		t.Fatalf("the reader read %v, want each row once in seq order %v", seen, want)
	}
}

// readUntil follows f from cursor until it has read n rows (or fails at
// a deadline), and returns them and the cursor after them.
func readUntil(t *testing.T, db *sqlite.DB, f followed, cursor int64, n int) ([]string, int64) {
	t.Helper()
	var got []string
	for deadline := time.Now().Add(10 * time.Second); len(got) < n; {
		ids, next, err := f.read(context.Background(), db, cursor)
		if err != nil {
			t.Fatal(err)
		}
		got, cursor = append(got, ids...), next
		if time.Now().After(deadline) {
			t.Fatalf("%s: read %v, want %d rows", f.table, got, n)
		}
		if len(got) < n {
			time.Sleep(10 * time.Millisecond)
		}
	}
	if len(got) != n {
		t.Fatalf("%s: read %v, want %d rows", f.table, got, n)
	}
	return got, cursor
}

// TestAFollowedSeqIsNeverPassedByALaterTransactionsRow: as above, but the
// unit that commits first began first (a lower transaction id) and takes
// its seq after the other's: a mark whose bound is one past the latest
// completed transaction (pg_snapshot_xmax) counted the later one, still
// running with its seq, as ended once it was the oldest running, and the
// reader passed its row (2026-11-29, session 19: the bound is now the
// marking transaction's own id, taken after the sequences were read).
func TestAFollowedSeqIsNeverPassedByALaterTransactionsRow(t *testing.T) {
	hubs := openHubs(t, 2)
	for _, f := range followedTables {
		t.Run(f.table, func(t *testing.T) { checkLateRow(t, hubs[0], hubs[1], f, earlyBeginsFirst) })
	}
}

// TestATableWhoseSeqDidNotMoveGetsNoNewMark: commits that write events
// only mark events; the kitchen's feed, whose sequence did not move, gets
// no mark from them (migration 0014: a mark already there as high answers
// every reader the same).
func TestATableWhoseSeqDidNotMoveGetsNoNewMark(t *testing.T) {
	db := openHubs(t, 1)[0]
	ctx := context.Background()
	for i := range 10 {
		if err := db.Write(ctx, func(tx *engine.Tx) error { return followedTables[0].write(ctx, tx, fmt.Sprint("ev-", i)) }); err != nil {
			t.Fatal(err)
		}
	}
	var events, kds int
	if err := db.Reader.QueryRowContext(ctx, `SELECT count(*) FILTER (WHERE tbl = 'events'), count(*) FILTER (WHERE tbl = 'kds_events') FROM seq_marks`).Scan(&events, &kds); err != nil {
		t.Fatal(err)
	}
	if events == 0 || kds > 1 {
		t.Fatalf("after 10 commits writing events: %d marks of events, %d of kds_events; want some, and at most one", events, kds)
	}
}

// TestTheLogsMarkIsWrittenOnlyWhenItsSequenceMoved: positioning the log
// again and again (a commit's wait for its positions, the retries) writes
// no mark of the commit sequence while it stays where a mark already is;
// once it moved, the next call marks it (migration 0015).
func TestTheLogsMarkIsWrittenOnlyWhenItsSequenceMoved(t *testing.T) {
	db := openHubs(t, 1)[0]
	ctx := context.Background()
	marks := func() (n, upto int64) {
		t.Helper()
		if err := db.Reader.QueryRowContext(ctx, `SELECT count(*), coalesce(max(upto), -1) FROM seq_marks WHERE tbl = 'outbox_commits'`).Scan(&n, &upto); err != nil {
			t.Fatal(err)
		}
		return n, upto
	}
	position := func(times int) {
		t.Helper()
		for range times {
			var waiting int64
			if err := db.Writer.QueryRowContext(ctx, `SELECT kassa_position(0)`).Scan(&waiting); err != nil {
				t.Fatal(err)
			}
		}
	}
	position(1)
	n0, _ := marks()
	position(20)
	if n, _ := marks(); n != n0 || n0 == 0 {
		t.Fatalf("20 positionings with the sequence still: %d marks of it, then %d; want one, then no more", n0, n)
	}
	var cseq int64
	if err := db.Writer.QueryRowContext(ctx, `SELECT nextval('outbox_commit_seq')`).Scan(&cseq); err != nil {
		t.Fatal(err)
	}
	position(3)
	if n, upto := marks(); n != n0+1 || upto != cseq {
		t.Fatalf("the sequence moved to %d: %d marks (%d before), the highest %d; want one more, at it", cseq, n, n0, upto)
	}
}
