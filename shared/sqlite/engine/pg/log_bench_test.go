package pg_test

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"kassa.dev/shared/pgtest"
	"kassa.dev/shared/sqlite/engine/pg"
	"kassa.dev/sync/change"
)

// BenchmarkTheLogOnPostgreSQL: eight writers commit units of ten change
// records while one hub positions and pulls the log by cursor, on the
// throwaway PostgreSQL (durability off: it measures the log's SQL, not the
// disk). It reports records a second from the first commit to the last
// record pulled: the ceiling the log's order puts on a hub's ingest.
func BenchmarkTheLogOnPostgreSQL(b *testing.B) {
	s := pgtest.Start(b)
	ctx := context.Background()
	const writers, units, perUnit = 8, 250, 10
	for range b.N {
		pool := openLog(b, s)
		began := time.Now()
		var wg sync.WaitGroup
		for w := range writers {
			wg.Go(func() {
				for u := range units {
					var cs []change.Change
					for k := range perUnit {
						cs = append(cs, record(fmt.Sprintf("w%d-u%d-%d", w, u, k)))
					}
					tx, err := pool.Begin(ctx)
					if err == nil {
						err = pg.Append(ctx, tx, cs)
					}
					if err == nil {
						err = tx.Commit(ctx)
					}
					if err != nil {
						b.Error(err)
						return
					}
				}
			})
		}
		done := make(chan struct{})
		var wrote time.Duration
		go func() { wg.Wait(); wrote = time.Since(began); close(done) }()
		got, err := follow(ctx, pool, done)
		if err != nil {
			b.Fatal(err)
		}
		if len(got) != writers*units*perUnit {
			b.Fatalf("pulled %d records, want %d", len(got), writers*units*perUnit)
		}
		b.ReportMetric(float64(len(got))/time.Since(began).Seconds(), "records/s")
		b.ReportMetric(float64(len(got))/wrote.Seconds(), "written/s")
	}
}
