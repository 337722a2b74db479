package pg_test

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"kassa.dev/shared/pgtest"
	"kassa.dev/shared/sqlite/engine/pg"
)

// Three hubs fire the same cron tick at once, several times each: the job
// runs once for the tick, once again for the next, and a run that fails
// leaves its tick to the next hub that tries, with nothing of it kept.
func TestACronTickRunsOnceAcrossThreeHubs(t *testing.T) {
	s := pgtest.Start(t)
	ctx := context.Background()
	dsn := s.Database(t)
	var hubs [3]*pgxpool.Pool
	for i := range hubs {
		pool, err := pgxpool.New(ctx, dsn)
		if err != nil {
			t.Fatal(err)
		}
		defer pool.Close()
		hubs[i] = pool
	}
	if err := pg.Migrate(ctx, hubs[0]); err != nil {
		t.Fatal(err)
	}
	if _, err := hubs[0].Exec(ctx, `CREATE TABLE sweeps (tick timestamptz NOT NULL)`); err != nil {
		t.Fatal(err)
	}
	sweep := func(tick time.Time) func(pgx.Tx) error {
		return func(tx pgx.Tx) error {
			_, err := tx.Exec(ctx, `INSERT INTO sweeps VALUES ($1)`, tick)
			return err
		}
	}
	fire := func(tick time.Time) {
		var wg sync.WaitGroup
		for i := range 12 {
			wg.Go(func() {
				if _, err := pg.Once(ctx, hubs[i%3], "retention-sweep", tick, sweep(tick)); err != nil {
					t.Error(err)
				}
			})
		}
		wg.Wait()
	}
	runs := func(tick time.Time) int {
		var n int
		if err := hubs[0].QueryRow(ctx, `SELECT count(*) FROM sweeps WHERE tick = $1`, tick).Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n
	}
	ten := time.Date(2026, 11, 28, 10, 0, 0, 0, time.UTC)
	fire(ten)
	fire(ten) // a hub late for the tick
	if n := runs(ten); n != 1 {
		t.Fatalf("the 10:00 tick ran %d times across three hubs, want once", n)
	}
	eleven := ten.Add(time.Hour)
	failed, err := pg.Once(ctx, hubs[1], "retention-sweep", eleven, func(tx pgx.Tx) error {
		sweep(eleven)(tx)
		return errors.New("disk full")
	})
	if err == nil || failed {
		t.Fatalf("a failing run: ran %v, %v; want its error", failed, err)
	}
	if n := runs(eleven); n != 0 {
		t.Fatalf("a failed run kept %d rows", n)
	}
	fire(eleven)
	if n := runs(eleven); n != 1 {
		t.Fatalf("the 11:00 tick, after a failed run, ran %d times, want once", n)
	}
}
