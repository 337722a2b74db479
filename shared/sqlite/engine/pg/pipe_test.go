package pg_test

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgconn"

	"kassa.dev/shared/pgtest"
	"kassa.dev/shared/sqlite"
	"kassa.dev/shared/sqlite/engine"
	"kassa.dev/shared/sqlite/engine/pg"
)

// pipeHub is a hub on a throwaway PostgreSQL, with one write loop (so
// that units queued together share its batch) and a table of keys.
func pipeHub(t *testing.T) *sqlite.DB {
	t.Helper()
	pg.Register(sqlite.PostgresMigrations)
	ctx := context.Background()
	db, err := sqlite.Open(ctx, pgtest.Start(t).DSN, sqlite.Options{Hub: true, Writers: 1})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	for _, q := range []string{`CREATE TABLE piped (k text PRIMARY KEY, n bigint)`, `CREATE SEQUENCE piped_sent`} {
		if err := db.Exec(ctx, q); err != nil {
			t.Fatal(err)
		}
	}
	return db
}

func countPiped(t *testing.T, db *sqlite.DB, where string) int {
	t.Helper()
	var n int
	if err := db.Reader.QueryRow(`SELECT count(*) FROM piped WHERE ` + where).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

// TestAStatementRunLaterIsSeenByTheUnitsNextRead: the rows a unit writes
// with ExecLater are there for its next read, in the first unit of a
// transaction and in the ones after it.
func TestAStatementRunLaterIsSeenByTheUnitsNextRead(t *testing.T) {
	db := pipeHub(t)
	ctx := context.Background()
	unit := func(key string) func(tx *engine.Tx) error {
		return func(tx *engine.Tx) error {
			for i := range 3 {
				if err := tx.ExecLater(ctx, `INSERT INTO piped (k, n) VALUES (?, ?)`, fmt.Sprintf("%s-%d", key, i), i); err != nil {
					return err
				}
			}
			var n int
			if err := tx.QueryRowContext(ctx, `SELECT count(*) FROM piped WHERE k LIKE ?`, key+"-%").Scan(&n); err != nil {
				return err
			}
			if n != 3 {
				return fmt.Errorf("the unit read %d of the 3 rows it wrote later", n)
			}
			return nil
		}
	}
	errs := inOneBatch(t, db, unit("a"), unit("b"), unit("c"))
	for i, err := range errs {
		if err != nil {
			t.Fatalf("unit %d: %v", i, err)
		}
	}
	if n := countPiped(t, db, `true`); n != 9 {
		t.Fatalf("%d rows committed, want 9", n)
	}
}

// inOneBatch runs the units in one batch of the writer: the first holds
// the writer until the others are queued. It returns each one's error.
func inOneBatch(t *testing.T, db *sqlite.DB, units ...func(tx *engine.Tx) error) []error {
	t.Helper()
	ctx := context.Background()
	started, hold := make(chan struct{}), make(chan struct{})
	errs := make([]chan error, len(units))
	for i := range errs {
		errs[i] = make(chan error, 1)
	}
	go func() {
		errs[0] <- db.Write(ctx, func(tx *engine.Tx) error { close(started); <-hold; return units[0](tx) })
	}()
	<-started
	for i := 1; i < len(units); i++ {
		go func() { errs[i] <- db.Write(ctx, units[i]) }()
	}
	for deadline := time.Now().Add(10 * time.Second); db.WriterStats().Queued < len(units)-1; time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) {
			close(hold)
			t.Fatalf("%d units queued, want %d", db.WriterStats().Queued, len(units)-1)
		}
	}
	close(hold)
	out := make([]error, len(units))
	for i := range units {
		out[i] = <-errs[i]
	}
	return out
}

// TestAStatementRunLaterThatFailsFailsItsUnitAlone: a unit's insert run
// later that takes a key already taken fails that unit, with
// PostgreSQL's unique violation (the engine's kinds read it), whether it
// is the first unit of its transaction (no savepoint) or a later one,
// and whatever the unit made of the error of its next statement; the
// other units of the batch commit.
func TestAStatementRunLaterThatFailsFailsItsUnitAlone(t *testing.T) {
	db := pipeHub(t)
	ctx := context.Background()
	if err := db.Exec(ctx, `INSERT INTO piped (k, n) VALUES ('taken', 0)`); err != nil {
		t.Fatal(err)
	}
	insert := func(keys ...string) func(tx *engine.Tx) error {
		return func(tx *engine.Tx) error {
			for _, k := range keys {
				if err := tx.ExecLater(ctx, `INSERT INTO piped (k, n) VALUES (?, 1)`, k); err != nil {
					return err
				}
			}
			return nil
		}
	}
	// A unit that reads after the failed insert and words the read's
	// error its own way still returns the insert's.
	insertAndRead := func(keys ...string) func(tx *engine.Tx) error {
		return func(tx *engine.Tx) error {
			if err := insert(keys...)(tx); err != nil {
				return err
			}
			var n int
			if err := tx.QueryRowContext(ctx, `SELECT count(*) FROM piped`).Scan(&n); err != nil {
				return fmt.Errorf("counting: %v", err)
			}
			return nil
		}
	}
	for _, failing := range []int{0, 1, 2, 3, 4, 5} {
		units := []func(tx *engine.Tx) error{insert("a0"), insert("a1"), insert("a2")}
		units[failing%3] = insert(fmt.Sprintf("f%d", failing), "taken")
		if failing >= 3 {
			units[failing%3] = insertAndRead(fmt.Sprintf("f%d", failing), "taken")
		}
		failing %= 3
		errs := inOneBatch(t, db, units...)
		for i, err := range errs {
			switch {
			case i == failing && !pg.IsUniqueViolation(err):
				t.Fatalf("unit %d (failing) returned %v, want a unique violation", i, err)
			case i != failing && err != nil:
				t.Fatalf("unit %d (failing: %d) returned %v", i, failing, err)
			}
		}
		if n := countPiped(t, db, `k LIKE 'a%'`); n != 2 {
			t.Fatalf("failing %d: %d of the other units' rows committed, want 2", failing, n)
		}
		if n := countPiped(t, db, `k LIKE 'f%'`); n != 0 {
			t.Fatalf("failing %d: the failed unit's other row committed", failing)
		}
		if err := db.Exec(ctx, `DELETE FROM piped WHERE k <> 'taken'`); err != nil {
			t.Fatal(err)
		}
	}
}

// TestTheStatementsOfAUnitRolledBackAreNeverSent: a unit that fails
// before anything sent its statements run later has them dropped: the
// sequence they would call is never called (a sequence is not rolled
// back), whether the unit was the first of its transaction or not.
func TestTheStatementsOfAUnitRolledBackAreNeverSent(t *testing.T) {
	db := pipeHub(t)
	ctx := context.Background()
	refused := errors.New("refused")
	failing := func(tx *engine.Tx) error {
		if err := tx.ExecLater(ctx, `INSERT INTO piped (k, n) VALUES ('never', nextval('piped_sent'))`); err != nil {
			return err
		}
		return refused
	}
	ok := func(tx *engine.Tx) error {
		return tx.ExecLater(ctx, `INSERT INTO piped (k, n) VALUES ('ok', 0)`)
	}
	errs := inOneBatch(t, db, failing, ok, failing)
	if !errors.Is(errs[0], refused) || errs[1] != nil || !errors.Is(errs[2], refused) {
		t.Fatalf("the units returned %v", errs)
	}
	var called bool
	if err := db.Reader.QueryRow(`SELECT is_called FROM piped_sent`).Scan(&called); err != nil {
		t.Fatal(err)
	}
	if called || countPiped(t, db, `k = 'never'`) != 0 {
		t.Fatalf("a rolled-back unit's statement run later reached the database")
	}
	if countPiped(t, db, `k = 'ok'`) != 1 {
		t.Fatalf("the unit between them did not commit")
	}
}

// TestStatementsRunLaterShareARoundTrip: a unit of eight inserts and a
// read costs the writer a round trip for them all when the inserts run
// later, nine when each runs now.
func TestStatementsRunLaterShareARoundTrip(t *testing.T) {
	db := pipeHub(t)
	ctx := context.Background()
	run := 0
	unit := func(exec func(tx *engine.Tx, q string, args ...any) error) func(tx *engine.Tx) error {
		return func(tx *engine.Tx) error {
			run++
			for i := range 8 {
				if err := exec(tx, `INSERT INTO piped (k, n) VALUES (?, ?)`, fmt.Sprintf("%d-%d", run, i), i); err != nil {
					return err
				}
			}
			var n int
			return tx.QueryRowContext(ctx, `SELECT count(*) FROM piped`).Scan(&n)
		}
	}
	later := unit(func(tx *engine.Tx, q string, args ...any) error { return tx.ExecLater(ctx, q, args...) })
	now := unit(func(tx *engine.Tx, q string, args ...any) error {
		_, err := tx.ExecContext(ctx, q, args...)
		return err
	})
	trips := func(fn func(tx *engine.Tx) error) int64 {
		least := int64(1 << 40)
		for range 5 { // the least of a few: the hub's own loops may run a statement meanwhile
			before := pg.RoundTrips()
			if err := db.Write(ctx, fn); err != nil {
				t.Fatal(err)
			}
			least = min(least, pg.RoundTrips()-before)
		}
		return least
	}
	trips(later) // its statements prepared
	trips(now)
	l, n := trips(later), trips(now)
	t.Logf("round trips a unit (with its transaction): %d run later, %d run now", l, n)
	if n-l < 8 {
		t.Fatalf("round trips a unit: %d run later, %d run now: want 8 fewer", l, n)
	}
}

// TestAUnitThatIgnoresAFailedStatementFailsAlone: a unit that goes on
// after a statement of it failed (the transaction is aborted) does not
// count as succeeded (its release, which runs later only in a sound
// transaction, fails it); the units around it commit.
func TestAUnitThatIgnoresAFailedStatementFailsAlone(t *testing.T) {
	db := pipeHub(t)
	ctx := context.Background()
	ok := func(k string) func(tx *engine.Tx) error {
		return func(tx *engine.Tx) error { return tx.ExecLater(ctx, `INSERT INTO piped (k, n) VALUES (?, 0)`, k) }
	}
	ignoring := func(tx *engine.Tx) error {
		tx.ExecContext(ctx, `INSERT INTO piped (k, n) VALUES ('x', 'not a number')`)
		return nil
	}
	errs := inOneBatch(t, db, ok("a"), ignoring, ok("b"))
	if errs[0] != nil || errs[1] == nil || errs[2] != nil {
		t.Fatalf("the units returned %v", errs)
	}
	if n := countPiped(t, db, `true`); n != 2 {
		t.Fatalf("%d rows committed, want the 2 of the sound units", n)
	}
}

// oneConnDB is a pool of one connection of the driver on a throwaway
// PostgreSQL, with what ddl creates.
func oneConnDB(t *testing.T, ddl ...string) *sql.DB {
	t.Helper()
	db, err := sql.Open(pg.DriverName, pgtest.Start(t).DSN)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	db.SetMaxOpenConns(1)
	for _, q := range ddl {
		if _, err := db.Exec(q); err != nil {
			t.Fatal(err)
		}
	}
	return db
}

// TestTheStatementAfterACommitGoesWithItAndRunsOnlyWhenItSucceeded: a
// statement kept to run after the COMMIT (engine.AfterCommit, the writer's
// kassa_after_commit) costs no round trip of its own, runs outside the
// transaction (an id of its own, above the transaction's), answers its
// value; a COMMIT that fails never runs it and answers its own error; a
// statement after it that fails leaves the commit committed.
func TestTheStatementAfterACommitGoesWithItAndRunsOnlyWhenItSucceeded(t *testing.T) {
	ctx := context.Background()
	db := oneConnDB(t, `CREATE TABLE d (k int, CONSTRAINT d_k UNIQUE (k) DEFERRABLE INITIALLY DEFERRED)`, `CREATE SEQUENCE after_ran`)
	commit := func(after string, keys ...int) (int64, engine.AfterCommitAnswer, int64, error) {
		tx, err := db.BeginTx(ctx, nil)
		if err != nil {
			t.Fatal(err)
		}
		for _, k := range keys {
			if _, err := tx.ExecContext(engine.Later(ctx), `INSERT INTO d (k) VALUES (?)`, k); err != nil {
				t.Fatal(err)
			}
		}
		var xid int64
		if err := tx.QueryRowContext(ctx, `SELECT pg_current_xact_id()::text::bigint`).Scan(&xid); err != nil {
			t.Fatal(err)
		}
		var a engine.AfterCommitAnswer
		if _, err := tx.ExecContext(engine.AfterCommit(ctx, &a), after); err != nil {
			t.Fatal(err)
		}
		before := pg.RoundTrips()
		err = tx.Commit()
		return xid, a, pg.RoundTrips() - before, err
	}
	xid, a, trips, err := commit(`SELECT pg_current_xact_id()::text::bigint + 0*nextval('after_ran')`, 1)
	if err != nil || !a.Sent || a.Err != nil || a.Value <= xid || trips != 1 {
		t.Fatalf("commit: %v, after it: %+v (the transaction's id %d), %d round trips; want it run after, in one", err, a, xid, trips)
	}
	_, a, _, err = commit(`SELECT nextval('after_ran')`, 2, 2)
	var pgErr *pgconn.PgError
	if !errors.As(err, &pgErr) || pgErr.Code != "23505" || a.Sent {
		t.Fatalf("a COMMIT failing its deferred check: %v, after it: %+v; want the unique violation, and nothing after", err, a)
	}
	_, a, _, err = commit(`SELECT 1/0`, 3)
	if err != nil || !a.Sent || a.Err == nil {
		t.Fatalf("a statement failing after the commit: commit %v, after it %+v; want the commit's nil and its error", err, a)
	}
	var rows, ran int64
	if err := db.QueryRowContext(ctx, `SELECT (SELECT count(*) FROM d), (SELECT last_value FROM after_ran)`).Scan(&rows, &ran); err != nil {
		t.Fatal(err)
	}
	if rows != 2 || ran != 1 {
		t.Fatalf("%d rows committed, the after statement ran %d times; want 2 (keys 1 and 3), and once", rows, ran)
	}
}

// TestTheStatementBeforeACommitGoesWithItAndItsFailureIsTheCommits: a
// statement kept to run last before the COMMIT (engine.BeforeCommit, the
// writer's row of outbox_commits) costs no round trip of its own, runs in
// the transaction (its id is the transaction's), and answers its value
// with the COMMIT, beside the statement after it; when it fails the
// transaction does not commit, the COMMIT answers its error, and nothing
// runs after it.
func TestTheStatementBeforeACommitGoesWithItAndItsFailureIsTheCommits(t *testing.T) {
	ctx := context.Background()
	db := oneConnDB(t, `CREATE TABLE d (k int PRIMARY KEY)`)
	commit := func(last string, k int) (int64, engine.BeforeCommitAnswer, engine.AfterCommitAnswer, int64, error) {
		tx, err := db.BeginTx(ctx, nil)
		if err != nil {
			t.Fatal(err)
		}
		var xid int64
		if err := tx.QueryRowContext(ctx, `SELECT pg_current_xact_id()::text::bigint`).Scan(&xid); err != nil {
			t.Fatal(err)
		}
		if _, err := tx.ExecContext(engine.Later(ctx), `INSERT INTO d (k) VALUES (?)`, k); err != nil {
			t.Fatal(err)
		}
		var b engine.BeforeCommitAnswer
		var a engine.AfterCommitAnswer
		if _, err := tx.ExecContext(engine.BeforeCommit(ctx, &b), last, k); err != nil {
			t.Fatal(err)
		}
		if _, err := tx.ExecContext(engine.AfterCommit(ctx, &a), `SELECT count(*) FROM d`); err != nil {
			t.Fatal(err)
		}
		before := pg.RoundTrips()
		err = tx.Commit()
		return xid, b, a, pg.RoundTrips() - before, err
	}
	xid, b, a, trips, err := commit(`SELECT pg_current_xact_id()::text::bigint + 0*?::int`, 1)
	if err != nil || !b.Kept || b.Value != xid || !a.Sent || a.Value != 1 || trips != 1 {
		t.Fatalf("commit: %v, before it %+v (the transaction's id %d), after it %+v, %d round trips; want it run in the transaction, in one", err, b, xid, a, trips)
	}
	_, b, a, _, err = commit(`SELECT 1/(?::int - 2)`, 2)
	var pgErr *pgconn.PgError
	if !errors.As(err, &pgErr) || pgErr.Code != "22012" || a.Sent || b.Value != 0 {
		t.Fatalf("a statement failing before the COMMIT: %v, before it %+v, after it %+v; want its division by zero, and nothing after", err, b, a)
	}
	var rows int64
	if err := db.QueryRowContext(ctx, `SELECT count(*) FROM d`).Scan(&rows); err != nil {
		t.Fatal(err)
	}
	if rows != 1 {
		t.Fatalf("%d rows committed; want 1 (key 2's transaction failed)", rows)
	}
}

// TestAKeptBatchWritesAndReadsAsPgxDoes: a batch of kept statements
// goes through the connection's own pipeline (piped.go), the first time
// its statements are sent and after, and what it writes and reads is what
// pgx wrote and read: text, integers, NULL, booleans as 1/0, times; a kept
// insert that fails answers with PostgreSQL's error in the next
// statement's place.
func TestAKeptBatchWritesAndReadsAsPgxDoes(t *testing.T) {
	db := pipeHub(t)
	ctx := context.Background()
	if err := db.Exec(ctx, `ALTER TABLE piped ADD COLUMN at timestamptz, ADD COLUMN flag bigint`); err != nil {
		t.Fatal(err)
	}
	at := time.Date(2026, 11, 29, 12, 0, 0, 123456000, time.UTC)
	before := pg.PipedSends()
	for round := range 3 {
		err := db.Write(ctx, func(tx *engine.Tx) error {
			for i, n := range []any{int64(round), nil} {
				if err := tx.ExecLater(ctx, `INSERT INTO piped (k, n, at, flag) VALUES (?, ?, ?, ?)`, fmt.Sprintf("r%d-%d", round, i), n, at, i == 0); err != nil {
					return err
				}
			}
			rows, err := tx.QueryContext(ctx, `SELECT k, n, at, flag FROM piped WHERE k LIKE ? ORDER BY k`, fmt.Sprintf("r%d-%%", round))
			if err != nil {
				return err
			}
			defer rows.Close()
			var got []string
			for rows.Next() {
				var k string
				var n, flag *int64
				var when time.Time
				if err := rows.Scan(&k, &n, &when, &flag); err != nil {
					return err
				}
				got = append(got, fmt.Sprintf("%s %v %v %d", k, deref(n), when.UTC().Equal(at), *flag))
			}
			want := fmt.Sprintf("[r%d-0 %d true 1 r%d-1 <nil> true 0]", round, round, round)
			if fmt.Sprint(got) != want {
				return fmt.Errorf("round %d read %v, want %s", round, got, want)
			}
			return rows.Err()
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	if pg.PipedSends() == before {
		t.Fatal("no batch went through the connection's own pipeline")
	}
	before = pg.PipedSends()
	err := db.Write(ctx, func(tx *engine.Tx) error {
		if err := tx.ExecLater(ctx, `INSERT INTO piped (k, n, at, flag) VALUES (?, ?, ?, ?)`, "r0-0", 1, at, true); err != nil {
			return err
		}
		_, err := tx.QueryContext(ctx, `SELECT k, n, at, flag FROM piped WHERE k LIKE ? ORDER BY k`, "r0-%")
		return err
	})
	if !pg.IsUniqueViolation(err) {
		t.Fatalf("a kept insert of a taken key: %v, want a unique violation", err)
	}
	if pg.PipedSends() == before {
		t.Fatal("the failing batch did not go through the connection's own pipeline")
	}
	if n := countPiped(t, db, `true`); n != 6 {
		t.Fatalf("%d rows, want the 6 of the three rounds", n)
	}
	// A kept statement that does not prepare, in a transaction begun on
	// the server: its own error, not "current transaction is aborted";
	// the connection serves the next unit.
	err = db.Write(ctx, func(tx *engine.Tx) error {
		var n int
		if err := tx.QueryRowContext(ctx, `SELECT count(*) FROM piped`).Scan(&n); err != nil {
			return err
		}
		if err := tx.ExecLater(ctx, `INSERT INTO no_such_table (k) VALUES (?)`, "x"); err != nil {
			return err
		}
		return tx.QueryRowContext(ctx, `SELECT count(*) FROM piped`).Scan(&n)
	})
	if err == nil || !strings.Contains(err.Error(), "no_such_table") {
		t.Fatalf("a kept statement that does not prepare: %v, want its own error", err)
	}
	if err := db.Write(ctx, func(tx *engine.Tx) error {
		return tx.ExecLater(ctx, `INSERT INTO piped (k, n) VALUES (?, ?)`, "after", 1)
	}); err != nil {
		t.Fatal(err)
	}
	if n := countPiped(t, db, `k = 'after'`); n != 1 {
		t.Fatalf("the unit after the failed one wrote %d rows, want 1", n)
	}
}

func deref(n *int64) any {
	if n == nil {
		return nil
	}
	return *n
}

// TestAConnectionLetsGoOfItsPreparedStatementsPastTheBound: a writer
// connection that sent more distinct texts through its pipeline than it
// keeps prepared deallocates them and goes on: each text still writes.
func TestAConnectionLetsGoOfItsPreparedStatementsPastTheBound(t *testing.T) {
	pg.SetMaxPrepared(t, 4)
	db := pipeHub(t)
	ctx := context.Background()
	for i := range 12 {
		err := db.Write(ctx, func(tx *engine.Tx) error {
			q := fmt.Sprintf(`INSERT INTO piped (k, n) VALUES (?, %d)`, i) // a text of its own
			if err := tx.ExecLater(ctx, q, fmt.Sprint("b", i)); err != nil {
				return err
			}
			var n int
			return tx.QueryRowContext(ctx, fmt.Sprintf(`SELECT count(*) + %d FROM piped`, i)).Scan(&n)
		})
		if err != nil {
			t.Fatalf("write %d: %v", i, err)
		}
	}
	if n := countPiped(t, db, `k LIKE 'b%'`); n != 12 {
		t.Fatalf("%d rows, want 12", n)
	}
	var prepared int
	if err := db.Write(ctx, func(tx *engine.Tx) error {
		if err := tx.ExecLater(ctx, `INSERT INTO piped (k, n) VALUES (?, 0)`, "last"); err != nil {
			return err
		}
		return tx.QueryRowContext(ctx, `SELECT count(*) FROM pg_prepared_statements WHERE name LIKE 'kassa\_pipe\_%'`).Scan(&prepared)
	}); err != nil {
		t.Fatal(err)
	}
	if prepared > 4 {
		t.Fatalf("the connection keeps %d statements prepared for its pipeline, want at most 4", prepared)
	}
}
