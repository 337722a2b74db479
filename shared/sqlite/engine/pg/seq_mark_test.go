package pg_test

import (
	"context"
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
	a, b := hubs[0], hubs[1]
	ctx := context.Background()
	for _, f := range followedTables {
		t.Run(f.table, func(t *testing.T) {
			write := func(db *sqlite.DB, id string) error {
				return db.Write(ctx, func(tx *engine.Tx) error { return f.write(ctx, tx, id) })
			}
			if err := write(b, f.table+"-first"); err != nil {
				t.Fatal(err)
			}
			seen, cursor := readUntil(t, b, f, 0, 1)
			wrote, release, done := make(chan struct{}), make(chan struct{}), make(chan error, 1)
			go func() {
				done <- a.Write(ctx, func(tx *engine.Tx) error {
					if err := f.write(ctx, tx, f.table+"-late"); err != nil {
						return err
					}
					close(wrote)
					<-release
					return nil
				})
			}()
			var once sync.Once
			unblock := func() { once.Do(func() { close(release) }) }
			defer unblock() // a failure below still lets A's unit end, and the hub close
			<-wrote
			if err := write(b, f.table+"-early"); err != nil {
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
			want := []string{f.table + "-first", f.table + "-late", f.table + "-early"}
			if !slices.Equal(seen, want) {
				t.Fatalf("the reader read %v, want each row once in seq order %v", seen, want)
			}
		})
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
