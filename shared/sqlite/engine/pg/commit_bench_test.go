package pg_test

import (
	"context"
	"fmt"
	"os"
	"testing"
	"time"

	"kassa.dev/shared/pgtest"
	"kassa.dev/shared/sqlite"
	"kassa.dev/shared/sqlite/engine"
	"kassa.dev/shared/sqlite/engine/pg"
)

// BenchmarkACommitOnPostgreSQL: one caller's units one after the other,
// each its own transaction (an event written: a followed table marked
// after the commit), on a hub's store of one write loop: what a commit
// costs when nothing shares it. It reports the driver's round trips a
// unit and this process's CPU a unit (the hub's side; PostgreSQL runs
// with durability off).
func BenchmarkACommitOnPostgreSQL(b *testing.B) {
	pg.Register(sqlite.PostgresMigrations)
	srv := pgtest.Start(b)
	ctx := context.Background()
	db, err := sqlite.Open(ctx, srv.DSN, sqlite.Options{Hub: true, Writers: 1})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { db.Close() })
	unit := func(i int) error {
		return db.Write(ctx, func(tx *engine.Tx) error {
			_, err := tx.ExecContext(ctx, `INSERT INTO events (id, org_id, type, data, occurred_at, created_at, updated_at, hlc, origin)
				VALUES (?, 'org-1', 'order.paid', '{}', '2026-11-28T10:00:00.000Z', '2026-11-28T10:00:00.000Z', '2026-11-28T10:00:00.000Z', '1', 'hub')`,
				fmt.Sprint("c-", i, "-", time.Now().UnixNano()))
			return err
		})
	}
	for i := range 50 { // statements prepared, marks there
		if err := unit(i); err != nil {
			b.Fatal(err)
		}
	}
	self := []int{os.Getpid()}
	trips, cpu, pgCPU := pg.RoundTrips(), pgtest.ProcCPU(self, 0), pgtest.ProcCPU(nil, srv.PID)
	b.ResetTimer()
	for i := range b.N {
		if err := unit(i); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(pg.RoundTrips()-trips)/float64(b.N), "trips/unit")
	b.ReportMetric(float64((pgtest.ProcCPU(self, 0)-cpu).Microseconds())/float64(b.N), "cpu-µs/unit")
	b.ReportMetric(float64((pgtest.ProcCPU(nil, srv.PID)-pgCPU).Microseconds())/float64(b.N), "pg-cpu-µs/unit")
}
