package pg_test

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"kassa.dev/shared/pgtest"
	"kassa.dev/shared/sqlite/engine/pg"
)

// Two hubs on one database serve one org's requests at once: the org's
// burst is admitted once across both, not once per hub; another org's
// bucket is its own; a costly request's spend holds the next back at the
// other hub too; and time refills the bucket (a minute moved back on
// the row stands for a minute passed).
func TestAnOrgsRateLimitCountsOnceAcrossTwoHubs(t *testing.T) {
	s := pgtest.Start(t)
	ctx := context.Background()
	dsn := s.Database(t)
	var hubs [2]*pgxpool.Pool
	for i := range hubs {
		pool, err := pgxpool.New(ctx, dsn+"&pool_max_conns=8")
		if err != nil {
			t.Fatal(err)
		}
		defer pool.Close()
		hubs[i] = pool
	}
	if err := pg.Migrate(ctx, hubs[0]); err != nil {
		t.Fatal(err)
	}
	// One token a minute back: while the clients ask (seconds), at most
	// one more than the burst can pass.
	limit := pg.Rate{PerMinute: 1, Burst: 50}
	var allowed atomic.Int64
	var wg sync.WaitGroup
	errs := make(chan error, 16)
	for g := range 16 { // 16 clients, 8 at each hub, 10 requests each: 160 asked, 50 may pass
		wg.Go(func() {
			for range 10 {
				got, err := pg.Take(ctx, hubs[g%2], "org:org-1", limit)
				if err != nil {
					errs <- err
					return
				}
				if got.Allowed {
					allowed.Add(1)
				} else if got.RetryAfter <= 0 {
					errs <- errRetry
					return
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	if n := allowed.Load(); n < 50 || n > 51 {
		t.Fatalf("%d requests of 160 admitted across two hubs, want the burst of 50 once (not 50 a hub)", n)
	}
	if got, err := pg.Take(ctx, hubs[1], "org:org-2", limit); err != nil || !got.Allowed || got.Remaining != 49 {
		t.Fatalf("another org's first request: %+v, %v; want allowed with 49 left", got, err)
	}
	// A costly request spends after the fact: the bucket goes below zero
	// and holds the next request back until it has refilled past one.
	if got, err := pg.Spend(ctx, hubs[0], "org:org-2", limit, 60); err != nil || !got.Allowed || got.Remaining != 0 {
		t.Fatalf("spending 60 of 49: %+v, %v", got, err)
	}
	peek, err := pg.Peek(ctx, hubs[1], "org:org-2", limit)
	if err != nil || peek.Allowed || peek.RetryAfter < 11*time.Minute {
		t.Fatalf("after spending past zero the other hub peeks %+v, %v; want refused for over 11 minutes at 1 a minute", peek, err)
	}
	if got, err := pg.Take(ctx, hubs[1], "org:org-2", limit); err != nil || got.Allowed {
		t.Fatalf("a request after the spend: %+v, %v; want refused", got, err)
	}
	if peek, err := pg.Peek(ctx, hubs[0], "org:org-3", limit); err != nil || !peek.Allowed || peek.Remaining != 50 {
		t.Fatalf("peeking at a new org: %+v, %v; want a full bucket", peek, err)
	}
	if _, err := hubs[0].Exec(ctx, `UPDATE rate_buckets SET tokens = 0, at = at - interval '30 seconds' WHERE key = 'org:org-1'`); err != nil {
		t.Fatal(err)
	}
	got, err := pg.Take(ctx, hubs[1], "org:org-1", pg.Rate{PerMinute: 60, Burst: 50})
	if err != nil || !got.Allowed || got.Remaining != 29 {
		t.Fatalf("after 30 s at 60 a minute: %+v, %v; want allowed with 29 left", got, err)
	}
}

var errRetry = errors.New("refused without a Retry-After")
