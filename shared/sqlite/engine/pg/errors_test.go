package pg_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"kassa.dev/shared/pgtest"
	"kassa.dev/shared/sqlite/engine/pg"
)

// The errors the engine acts on are told apart as on SQLite: a taken
// unique key, a missing reference, and a deadlock between two units that
// lock two orders in opposite orders (one of them is ended, and may run
// again).
func TestTheEngineTellsPostgreSQLErrorsApart(t *testing.T) {
	s := pgtest.Start(t)
	ctx := context.Background()
	pool, err := pgxpool.New(ctx, s.Database(t))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(pool.Close) // after the open transactions roll back (cleanups run last first)
	for _, q := range []string{
		`CREATE TABLE orders (id text PRIMARY KEY, total bigint NOT NULL)`,
		`CREATE TABLE payments (id text PRIMARY KEY, order_id text NOT NULL REFERENCES orders(id))`,
		`INSERT INTO orders VALUES ('o1', 100), ('o2', 200)`,
	} {
		if _, err := pool.Exec(ctx, q); err != nil {
			t.Fatal(err)
		}
	}
	_, dup := pool.Exec(ctx, `INSERT INTO orders VALUES ('o1', 5)`)
	_, ref := pool.Exec(ctx, `INSERT INTO payments VALUES ('p1', 'nope')`)
	if !pg.IsUniqueViolation(dup) || pg.IsForeignKeyViolation(dup) || pg.IsRetryable(dup) {
		t.Errorf("a taken key: %v", dup)
	}
	if !pg.IsForeignKeyViolation(ref) || pg.IsUniqueViolation(ref) {
		t.Errorf("a missing reference: %v", ref)
	}

	a, b := begin(t, pool), begin(t, pool)
	lock := func(tx pgx.Tx, id string) error {
		_, err := tx.Exec(ctx, `SELECT 1 FROM orders WHERE id = $1 FOR UPDATE`, id)
		return err
	}
	if err := lock(a, "o1"); err != nil {
		t.Fatal(err)
	}
	if err := lock(b, "o2"); err != nil {
		t.Fatal(err)
	}
	second := make(chan error, 1)
	go func() { second <- lock(a, "o2") }() // waits for b
	errB := lock(b, "o1")                   // closes the cycle: one of the two is ended
	if errB == nil {
		b.Rollback(ctx)
	}
	errA := <-second
	ended := []error{errA, errB}
	n := 0
	for _, err := range ended {
		if err != nil {
			n++
			if !pg.IsRetryable(err) {
				t.Errorf("the deadlock's victim is not retryable: %v", err)
			}
		}
	}
	if n != 1 {
		t.Errorf("%s: want exactly one unit ended", fmt.Sprint(ended))
	}
	if pg.IsRetryable(nil) || pg.IsUniqueViolation(fmt.Errorf("wrapped: %w", ref)) {
		t.Error("nil is not retryable, and a wrapped foreign key failure is no unique one")
	}
}
