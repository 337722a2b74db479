package pg_test

import (
	"context"
	"database/sql"
	"testing"

	_ "github.com/mattn/go-sqlite3"

	"github.com/jackc/pgx/v5/pgxpool"

	"kassa.dev/shared/pgtest"
	"kassa.dev/shared/sqlite/engine/pg"
)

// The engine's and the nouns' SQL is written with SQLite's parameters;
// rewritten, it binds the same arguments on PostgreSQL: bare, numbered
// and mixed (SQLite numbers a bare ? one above the largest so far), and a
// ? inside a string, a quoted name or a comment is not a parameter.
func TestSQLiteParametersBindAlikeOnPostgreSQL(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{`SELECT 1`, `SELECT 1`},
		{`SELECT * FROM t WHERE a = ? AND b = ? LIMIT ?`, `SELECT * FROM t WHERE a = $1 AND b = $2 LIMIT $3`},
		{`WHERE org_id = ?1 AND (id = ?2 OR parent = ?2)`, `WHERE org_id = $1 AND (id = $2 OR parent = $2)`},
		{`WHERE a = ?2 AND b = ? AND c = ?1 AND d = ?`, `WHERE a = $2 AND b = $3 AND c = $1 AND d = $4`},
		{`SELECT '?' || ? || 'it''s ?', "odd?name" FROM t -- why?` + "\n" + `WHERE x = ? /* ?1 */`,
			`SELECT '?' || $1 || 'it''s ?', "odd?name" FROM t -- why?` + "\n" + `WHERE x = $2 /* ?1 */`},
	} {
		if got := pg.Rebind(c.in); got != c.want {
			t.Errorf("Rebind(%q)\n got %q\nwant %q", c.in, got, c.want)
		}
	}

	s := pgtest.Start(t)
	ctx := context.Background()
	pool, err := pgxpool.New(ctx, s.DSN)
	if err != nil {
		t.Fatal(err)
	}
	defer pool.Close()
	const stmt = `SELECT ?2 || '?' || ?1 || ? || ?1`
	lite, err := sql.Open("sqlite3", ":memory:")
	if err != nil {
		t.Fatal(err)
	}
	defer lite.Close()
	var onSQLite, onPostgres string
	if err := lite.QueryRow(stmt, "a", "b", "c").Scan(&onSQLite); err != nil {
		t.Fatal(err)
	}
	if err := pool.QueryRow(ctx, pg.Rebind(stmt), "a", "b", "c").Scan(&onPostgres); err != nil || onPostgres != onSQLite {
		t.Fatalf("%s with a, b, c: %q on PostgreSQL (%v), %q on SQLite", stmt, onPostgres, err, onSQLite)
	}
	if onSQLite != "b?aca" {
		t.Fatalf("SQLite bound %q, want b?aca", onSQLite)
	}
}
