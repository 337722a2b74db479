package pgtest_test

import (
	"context"
	"errors"
	"os"
	"syscall"
	"testing"

	"github.com/jackc/pgx/v5"

	"kassa.dev/shared/pgtest"
)

// A test gets a running PostgreSQL it can write to, a database of its own,
// and nothing left behind: the server's process and folder are gone when the
// test ends.
func TestAThrowawayPostgreSQLRunsForOneTestAndLeavesNothing(t *testing.T) {
	var pid int
	var dir string
	t.Run("inner", func(t *testing.T) {
		s := pgtest.Start(t)
		pid, dir = s.PID, s.Dir
		ctx := context.Background()
		conn, err := pgx.Connect(ctx, s.Database(t))
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close(ctx)
		var n int
		for _, q := range []string{`CREATE TABLE t (n int)`, `INSERT INTO t VALUES (41)`} {
			if _, err := conn.Exec(ctx, q); err != nil {
				t.Fatal(err)
			}
		}
		if err := conn.QueryRow(ctx, `SELECT n + 1 FROM t`).Scan(&n); err != nil || n != 42 {
			t.Fatalf("read back %d, %v; want 42", n, err)
		}
		var user string
		if err := conn.QueryRow(ctx, `SELECT current_user`).Scan(&user); err != nil || user != "postgres" {
			t.Fatalf("connected as %q, %v; want postgres", user, err)
		}
	})
	if pid == 0 {
		t.Skip("no PostgreSQL here (the inner test says why)")
	}
	if err := syscall.Kill(pid, 0); !errors.Is(err, syscall.ESRCH) {
		t.Errorf("the postmaster (pid %d) still exists after the test: %v", pid, err)
	}
	if _, err := os.Stat(dir); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the data folder %s is still there: %v", dir, err)
	}
}
