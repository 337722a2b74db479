package pg_test

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"kassa.dev/shared/sqlite/engine"
	"kassa.dev/shared/sqlite/engine/pg"
)

// TestAUnitEndedByADeadlockRunsAgain: on two hubs of one PostgreSQL, two
// units lock the same two rows in opposite orders (Tx.LockRow); the
// database ends one of them (a deadlock), and the engine runs that unit
// again once its batch has ended (after a short pause, so that the other
// takes the row first): both writes succeed, neither caller sees the
// deadlock.
func TestAUnitEndedByADeadlockRunsAgain(t *testing.T) {
	hubs := openHubs(t, 2)
	ctx := context.Background()
	if err := hubs[0].Exec(ctx, `CREATE TABLE lockables (id text PRIMARY KEY)`); err != nil {
		t.Fatal(err)
	}
	if err := hubs[0].Exec(ctx, `INSERT INTO lockables (id) VALUES ('x'), ('y')`); err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	runs := 0
	locked := []chan struct{}{make(chan struct{}), make(chan struct{})}
	var once [2]sync.Once
	unit := func(i int, first, second string) func(tx *engine.Tx) error {
		return func(tx *engine.Tx) error {
			mu.Lock()
			runs++
			mu.Unlock()
			if err := tx.LockRow(ctx, "lockables", first); err != nil {
				return err
			}
			once[i].Do(func() { close(locked[i]) })
			<-locked[1-i] // both hold their first row: each now wants the other's
			if err := tx.LockRow(ctx, "lockables", second); err != nil {
				return err
			}
			_, err := tx.ExecContext(ctx, `UPDATE lockables SET id = id WHERE id = ?`, second)
			return err
		}
	}
	errs := make(chan error, 2)
	go func() { errs <- hubs[0].Write(ctx, unit(0, "x", "y")) }()
	go func() { errs <- hubs[1].Write(ctx, unit(1, "y", "x")) }()
	for range 2 {
		if err := <-errs; err != nil {
			t.Fatalf("a unit ended by the deadlock reached its caller: %v", err)
		}
	}
	if runs < 3 {
		t.Fatalf("the units ran %d times: the deadlock ended none of them", runs)
	}
}

// TestAKeyLockHoldsUnitsOfTheKeyAndNoOtherWriter: on two hubs of one
// PostgreSQL, a unit holding keys (Tx.LockKeys) makes another unit that
// locks one of them wait for its commit — which it then reads — while a
// unit that updates the row of that id without the key goes on at once.
func TestAKeyLockHoldsUnitsOfTheKeyAndNoOtherWriter(t *testing.T) {
	hubs := openHubs(t, 2)
	ctx := context.Background()
	if err := hubs[0].Exec(ctx, `CREATE TABLE keyed (id text PRIMARY KEY, n integer NOT NULL)`); err != nil {
		t.Fatal(err)
	}
	if err := hubs[0].Exec(ctx, `INSERT INTO keyed (id, n) VALUES ('x', 0), ('y', 0)`); err != nil {
		t.Fatal(err)
	}
	held, release := make(chan struct{}), make(chan struct{})
	first := make(chan error, 1)
	go func() {
		first <- hubs[0].Write(ctx, func(tx *engine.Tx) error {
			if err := tx.LockKeys(ctx, "test", []string{"y", "x", "x"}); err != nil {
				return err
			}
			if _, err := tx.ExecContext(ctx, `UPDATE keyed SET n = n + 1 WHERE id = 'x'`); err != nil {
				return err
			}
			close(held)
			<-release
			return nil
		})
	}()
	<-held
	// Another writer updates y's row with no key: it does not wait.
	if err := hubs[1].Exec(ctx, `UPDATE keyed SET n = n + 10 WHERE id = 'y'`); err != nil {
		t.Fatal(err)
	}
	second := make(chan int, 1)
	go func() {
		var n int
		err := hubs[1].Write(ctx, func(tx *engine.Tx) error {
			if err := tx.LockKeys(ctx, "test", []string{"x"}); err != nil {
				return err
			}
			return tx.QueryRowContext(ctx, `SELECT n FROM keyed WHERE id = 'x'`).Scan(&n)
		})
		if err != nil {
			t.Error(err)
		}
		second <- n
	}()
	select {
	case n := <-second:
		t.Fatalf("a unit locking a held key went on (read %d)", n)
	case <-time.After(200 * time.Millisecond):
	}
	close(release)
	if err := <-first; err != nil {
		t.Fatal(err)
	}
	if n := <-second; n != 1 {
		t.Errorf("the waiting unit read %d, want 1: the holder's commit", n)
	}
}

// TestAUnitWaitsForARowLockAtMostTheWritersBound: a write loop's
// statements see no cancellable context (engine/direct.go), so the bound
// on a lock wait is the writer's own (pg.WriterLockTimeout): a unit that
// wants a row another hub's transaction holds and does not let go fails
// alone once the bound passed, and the same hub's next unit commits.
func TestAUnitWaitsForARowLockAtMostTheWritersBound(t *testing.T) {
	old := pg.WriterLockTimeout
	pg.WriterLockTimeout = 300 * time.Millisecond
	hubs := openHubs(t, 2)
	pg.WriterLockTimeout = old // read when the pools opened
	ctx := context.Background()
	if err := hubs[0].Exec(ctx, `CREATE TABLE held (id text PRIMARY KEY, n integer NOT NULL)`); err != nil {
		t.Fatal(err)
	}
	if err := hubs[0].Exec(ctx, `INSERT INTO held (id, n) VALUES ('x', 0), ('y', 0)`); err != nil {
		t.Fatal(err)
	}
	locked, release, holder := make(chan struct{}), make(chan struct{}), make(chan error, 1)
	go func() {
		holder <- hubs[0].Write(ctx, func(tx *engine.Tx) error {
			if err := tx.LockRow(ctx, "held", "x"); err != nil {
				return err
			}
			close(locked)
			<-release
			return nil
		})
	}()
	<-locked
	began := time.Now()
	err := hubs[1].Write(ctx, func(tx *engine.Tx) error {
		_, err := tx.ExecContext(ctx, `UPDATE held SET n = n + 1 WHERE id = 'x'`)
		return err
	})
	waited := time.Since(began)
	close(release)
	if err == nil || !strings.Contains(err.Error(), "lock timeout") {
		t.Fatalf("a unit waiting for a held row: err = %v after %v, want PostgreSQL's lock timeout", err, waited)
	}
	if err := <-holder; err != nil {
		t.Fatal(err)
	}
	if err := hubs[1].Write(ctx, func(tx *engine.Tx) error {
		_, err := tx.ExecContext(ctx, `UPDATE held SET n = n + 1 WHERE id = 'y'`)
		return err
	}); err != nil {
		t.Fatalf("the hub's next unit: %v", err)
	}
}
