package pg_test

import (
	"context"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"kassa.dev/shared/pgtest"
	"kassa.dev/shared/sqlite/engine/pg"
)

// Wrong passwords for one account spread over two hubs meet one count:
// the lock after the sixth is the sixth's, whichever hub is asked; a
// success at one hub clears it at both; an hour without a failure starts
// the count again, and the sweep drops what no longer matters.
func TestLoginFailuresCountOnceAcrossTwoHubs(t *testing.T) {
	s := pgtest.Start(t)
	ctx := context.Background()
	dsn := s.Database(t)
	var hubs [2]pg.Lockout
	delay := func(failures int) time.Duration { return time.Duration(failures) * time.Minute }
	for i := range hubs {
		pool, err := pgxpool.New(ctx, dsn)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(pool.Close)
		if err := pg.Migrate(ctx, pool); err != nil {
			t.Fatal(err)
		}
		hubs[i] = pg.Lockout{DB: pool, Delay: delay}
	}
	const account = "login:ana@example.com"
	var last time.Duration
	for i := range 6 {
		d, err := hubs[i%2].Fail(ctx, account)
		if err != nil {
			t.Fatal(err)
		}
		last = d
	}
	if last != 6*time.Minute {
		t.Fatalf("the sixth failure, three at each hub, locks for %s; want 6m (one count, not three a hub)", last)
	}
	for i, h := range hubs {
		left, err := h.Locked(ctx, account)
		if err != nil || left <= 5*time.Minute || left > 6*time.Minute {
			t.Fatalf("hub %d says the account is locked for %s (%v), want just under 6m", i, left, err)
		}
	}
	if left, err := hubs[0].Locked(ctx, "login:bo@example.com"); err != nil || left != 0 {
		t.Fatalf("another account: locked %s, %v", left, err)
	}
	if err := hubs[1].Reset(ctx, account); err != nil {
		t.Fatal(err)
	}
	if left, err := hubs[0].Locked(ctx, account); err != nil || left != 0 {
		t.Fatalf("after a success at the other hub: locked %s, %v", left, err)
	}

	for range 3 {
		if _, err := hubs[0].Fail(ctx, account); err != nil {
			t.Fatal(err)
		}
	}
	pool := hubs[0].DB
	if _, err := pool.Exec(ctx, `UPDATE lockouts SET last = last - interval '61 minutes', until = until - interval '61 minutes'`); err != nil {
		t.Fatal(err)
	}
	if d, err := hubs[1].Fail(ctx, account); err != nil || d != time.Minute {
		t.Fatalf("a failure an hour after the last: locked %s, %v; want 1m (the count starts again)", d, err)
	}
	if _, err := hubs[0].Fail(ctx, "login:old@example.com"); err != nil {
		t.Fatal(err)
	}
	if _, err := pool.Exec(ctx, `UPDATE lockouts SET last = last - interval '2 hours', until = until - interval '2 hours' WHERE key = 'login:old@example.com'`); err != nil {
		t.Fatal(err)
	}
	if n, err := pg.SweepLockouts(ctx, pool); err != nil || n != 1 {
		t.Fatalf("the sweep dropped %d keys (%v), want the one idle for two hours", n, err)
	}
}
