package pg_test

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"kassa.dev/shared/sqlite/engine"
)

// BenchmarkUnitsByWriterOnPostgreSQL: units that each log an event
// (followed by its readers below a settled mark), written by one, two or
// four writers on one PostgreSQL — each writer a hub's store, so what
// several hubs give today and what a pool of writers in one hub would
// give at most. Sixteen callers queue units at once (group commit joins
// them); it reports units a second. The throwaway PostgreSQL runs with
// durability off: it measures the SQL and the writers, not the disk.
func BenchmarkUnitsByWriterOnPostgreSQL(b *testing.B) {
	for _, writers := range []int{1, 2, 4} {
		b.Run(fmt.Sprint(writers, "writers"), func(b *testing.B) {
			hubs := openHubs(b, writers)
			ctx := context.Background()
			const callers, perCaller = 16, 200
			for range b.N {
				began := time.Now()
				var wg sync.WaitGroup
				for c := range callers {
					db := hubs[c%writers]
					wg.Go(func() {
						for i := range perCaller {
							err := db.Write(ctx, func(tx *engine.Tx) error {
								_, err := tx.ExecContext(ctx, `INSERT INTO events (id, org_id, type, data, occurred_at, created_at, updated_at, hlc, origin)
									VALUES (?, 'org-1', 'order.paid', '{}', '2026-11-28T10:00:00.000Z', '2026-11-28T10:00:00.000Z', '2026-11-28T10:00:00.000Z', '1', 'hub')`,
									fmt.Sprint(c, "-", i, "-", began.UnixNano()))
								return err
							})
							if err != nil {
								b.Error(err)
								return
							}
						}
					})
				}
				wg.Wait()
				b.ReportMetric(float64(callers*perCaller)/time.Since(began).Seconds(), "units/s")
			}
		})
	}
}
