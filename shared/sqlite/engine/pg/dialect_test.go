package pg_test

import (
	"context"
	"database/sql"
	"encoding/json"
	"path/filepath"
	"reflect"
	"testing"

	"kassa.dev/shared/pgtest"
	"kassa.dev/shared/sqlite/engine"
	"kassa.dev/shared/sqlite/engine/pg"
)

// dialectCase is one statement written once through a dialect's helpers,
// its arguments, and the answer both backends must give.
type dialectCase struct {
	name string
	sql  func(d engine.Dialect) string
	args []any
	want string
}

var dialectCases = []dialectCase{
	{"the values of a JSON array parameter", func(d engine.Dialect) string {
		return `SELECT j.value FROM ` + d.JSONValues("?", "j") + ` ORDER BY 1 DESC LIMIT 1`
	}, []any{`["a","c","b"]`}, "c"},
	{"a value of an array compared with a parameter", func(d engine.Dialect) string {
		return `SELECT count(*) FROM ` + d.JSONValues("?", "j") + ` WHERE j.value = ?`
	}, []any{`["l1","l2"]`, "l2"}, "1"},
	{"the sum of a field of an array's documents", func(d engine.Dialect) string {
		return `SELECT coalesce(sum(` + d.JSONInt("j.value", "amount") + `), 0) FROM ` + d.JSONElements("?", "j") +
			` WHERE ` + d.JSONText("j.value", "payment_id") + ` = ?`
	}, []any{`[{"amount":500,"payment_id":"p1"},{"amount":250,"payment_id":"p2"},{"amount":7,"payment_id":"p1"}]`, "p1"}, "507"},
	{"a nested field as text", func(d engine.Dialect) string {
		return `SELECT ` + d.JSONText("?", "fields.order_id")
	}, []any{`{"fields":{"order_id":"o-1"},"entity":"payment"}`}, "o-1"},
	{"an array's length", func(d engine.Dialect) string { return `SELECT ` + d.JSONArrayLength("?") }, []any{`[1,2,3]`}, "3"},
	{"search folds any script", func(d engine.Dialect) string { return `SELECT ` + d.Fold("?") }, []any{"ÄÖÜ Straße ΣΑΣ"}, "äöü straße σασ"},
	{"the greater of two stamps", func(d engine.Dialect) string { return `SELECT ` + d.Greatest("?", "?") }, []any{"0001-b", "0001-a"}, "0001-b"},
	{"numbered parameters bind alike", func(d engine.Dialect) string { return `SELECT ?2 || ?1 || ?2` }, []any{"x", "y"}, "yxy"},
	{"a Go bool binds as 1", func(d engine.Dialect) string { return `SELECT ? + 0` }, []any{true}, "1"},
}

// jsonCases give a JSON document whose text differs between the backends
// (jsonb re-renders it): compared decoded.
var jsonCases = []dialectCase{
	{"a patch over the field stamps", func(d engine.Dialect) string { return `SELECT ` + d.JSONMerge("?", "?") },
		[]any{`{"*":"s1","name":"s2"}`, `{"name":"s3","price":"s3"}`}, `{"*":"s1","name":"s3","price":"s3"}`},
	{"an object built of values and a document", func(d engine.Dialect) string {
		return `SELECT ` + d.JSONObject("'id'", "CAST(? AS text)", "'rules'", d.JSON("?"))
	}, []any{"c1", `{"pct":10}`}, `{"id":"c1","rules":{"pct":10}}`},
}

// TestOneSQLTextGivesTheSameAnswerOnBothBackends: a statement written once
// through the dialect's helpers, with SQLite's parameters, gives the same
// answer on SQLite and on PostgreSQL (through the engine's driver, which
// rewrites its parameters); SQLite's helpers give the text the nouns
// always ran.
func TestOneSQLTextGivesTheSameAnswerOnBothBackends(t *testing.T) {
	ctx := context.Background()
	lite, err := sql.Open(engine.DriverName, "file:"+filepath.Join(t.TempDir(), "d.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer lite.Close()
	pgdb, err := sql.Open(pg.DriverName, pgtest.Start(t).DSN)
	if err != nil {
		t.Fatal(err)
	}
	defer pgdb.Close()
	backends := []struct {
		db *sql.DB
		d  engine.Dialect
	}{{lite, engine.SQLite}, {pgdb, pg.Dialect{}}}
	for _, c := range append(dialectCases, jsonCases...) {
		for _, b := range backends {
			var got string
			if err := b.db.QueryRowContext(ctx, c.sql(b.d), c.args...).Scan(&got); err != nil {
				t.Errorf("%s on %s: %v (%s)", c.name, b.d.Name(), err, c.sql(b.d))
				continue
			}
			if !sameAnswer(got, c.want) {
				t.Errorf("%s on %s: got %q, want %q", c.name, b.d.Name(), got, c.want)
			}
		}
	}
	if got := engine.SQLite.JSONElements("r.payments", "j") + " " + engine.SQLite.JSONText("change", "fields.order_id"); got != `json_each(r.payments) AS j json_extract(change, '$.fields.order_id')` {
		t.Errorf("SQLite's helpers give %q, not the text the nouns ran", got)
	}
}

// sameAnswer compares two answers, as JSON documents when both are.
func sameAnswer(got, want string) bool {
	var g, w any
	if json.Unmarshal([]byte(got), &g) == nil && json.Unmarshal([]byte(want), &w) == nil {
		if _, ok := w.(map[string]any); ok {
			return reflect.DeepEqual(g, w)
		}
	}
	return got == want
}

// TestTheEngineTellsBothBackendsErrorsApart: the engine's classifiers
// (engine.IsUniqueViolation, IsForeignKeyViolation), which the nouns call
// without holding the store, know PostgreSQL's errors once the backend is
// registered, and SQLite's as before.
func TestTheEngineTellsBothBackendsErrorsApart(t *testing.T) {
	pg.Register()
	ctx := context.Background()
	lite, err := sql.Open(engine.DriverName, "file:"+filepath.Join(t.TempDir(), "d.db")+"?_foreign_keys=1")
	if err != nil {
		t.Fatal(err)
	}
	defer lite.Close()
	pgdb, err := sql.Open(pg.DriverName, pgtest.Start(t).DSN)
	if err != nil {
		t.Fatal(err)
	}
	defer pgdb.Close()
	for _, db := range []*sql.DB{lite, pgdb} {
		for _, q := range []string{`CREATE TABLE a (id text PRIMARY KEY, code text UNIQUE)`, `CREATE TABLE b (id text PRIMARY KEY, a_id text REFERENCES a(id))`,
			`INSERT INTO a (id, code) VALUES ('x', 'c')`} {
			if _, err := db.ExecContext(ctx, q); err != nil {
				t.Fatal(err)
			}
		}
		_, dup := db.ExecContext(ctx, `INSERT INTO a (id, code) VALUES (?, ?)`, "y", "c")
		_, missing := db.ExecContext(ctx, `INSERT INTO b (id, a_id) VALUES (?, ?)`, "y", "nope")
		if !engine.IsUniqueViolation(dup) || engine.IsForeignKeyViolation(dup) {
			t.Errorf("a taken key (%v) is not told a unique violation", dup)
		}
		if !engine.IsForeignKeyViolation(missing) || engine.IsUniqueViolation(missing) {
			t.Errorf("a missing reference (%v) is not told a foreign key violation", missing)
		}
	}
}
