package sqlite

import (
	"context"
	"database/sql"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"kassa.dev/shared/pgtest"
	"kassa.dev/shared/sqlite/engine"
	"kassa.dev/shared/sqlite/engine/pg"
)

// sqliteOnly are the SQLite tables with no twin on PostgreSQL, and why
// (docs/postgres.md, "The nouns' schema").
var sqliteOnly = map[string]string{
	"outbox":            "the hub's log on PostgreSQL is engine/pg's (outbox_log, outbox_commits, read through the view outbox), in its safe order",
	"offline_forwards":  "an edge's: only the node that took a card payment offline forwards it",
	"sync_refusals":     "an edge's: its changes the hub refused, as the hub last said",
	"schema_migrations": "each backend's own",
	"sqlite_sequence":   "SQLite's AUTOINCREMENT counters",
}

// pgOnly are PostgreSQL's own tables and columns (after a table's SQLite
// columns), for several hubs on one database.
var pgOnly = map[string]string{
	"outbox_log":                       "engine/pg's log (the view outbox reads it in its safe order)",
	"outbox_commits":                   "engine/pg's log: the positions given per transaction",
	"rate_buckets":                     "an org's rate limit counted once across the hubs (pg.Take)",
	"lockouts":                         "login throttles counted once across the hubs (pg.Lockout)",
	"job_ticks":                        "a cron tick run once across the hubs (pg.Once)",
	"seq_marks":                        "how far each followed seq has settled: its readers never pass a row that commits late",
	"schema_migrations":                "each backend's own",
	"webhook_deliveries.claimed_until": "the lease of the hub sending a delivery (pg.ClaimDeliveries)",
	"edge_reports.hub_id":              "the hub that last heard the edge (pg.SaveEdgeReports)",
	"edge_reports.seen_at":             "when it heard it: a write never replaces a newer one",
}

// twinTable is what the twin test compares of a table: its columns in
// order with their kinds (SQLite's storage classes: integer, text, real,
// blob), its primary key, its unique indexes by columns (the nouns'
// ON CONFLICT targets) and its named indexes.
type twinTable struct {
	cols     []string // "name kind"
	pk       string
	uniques  []string // "(a, b)", "(a) partial"
	indexes  map[string]string
	triggers []string
}

type twinSchema map[string]*twinTable

// pgKinds maps PostgreSQL's types to the SQLite storage class they stand
// for (docs/postgres.md, "Values stay as they are stored now").
var pgKinds = map[string]string{
	"bigint": "integer", "integer": "integer", "smallint": "integer",
	"text": "text", "jsonb": "text",
	"double precision": "real", "bytea": "blob",
}

// TestThePostgreSQLSchemaIsTheSQLiteSchemasTwin migrates a fresh SQLite
// store and a fresh PostgreSQL database and compares their tables, columns
// (names, order and kinds), primary keys, unique indexes, named indexes
// and triggers: a SQLite migration without its PostgreSQL twin in
// pgmigrations fails it, naming the table and column.
func TestThePostgreSQLSchemaIsTheSQLiteSchemasTwin(t *testing.T) {
	ctx := context.Background()
	pool := migratedPostgres(t)
	want := pgTwin(t, pool)
	db := openTwinStore(t)
	if diffs := twinDiff(sqliteTwin(t, db.Writer), want); len(diffs) > 0 {
		t.Fatalf("the PostgreSQL schema (shared/sqlite/pgmigrations) is not the SQLite schema's twin:\n%s", strings.Join(diffs, "\n"))
	}

	// A later SQLite migration without its twin: each thing it adds is named.
	if _, err := db.Writer.ExecContext(ctx, `ALTER TABLE orders ADD COLUMN twin_probe_total INTEGER NOT NULL DEFAULT 0;
		CREATE TABLE twin_probes (id TEXT PRIMARY KEY, org_id TEXT NOT NULL, amount INTEGER NOT NULL) STRICT;
		CREATE UNIQUE INDEX payments_processor_ref ON payments(processor_ref) WHERE processor_ref IS NOT NULL;
		CREATE TRIGGER twin_probes_org BEFORE INSERT ON orders BEGIN SELECT 1; END;`); err != nil {
		t.Fatal(err)
	}
	// A digest hashes a replicated row's every column (SELECT *): a column
	// of PostgreSQL's own there would make the hub's digests differ.
	for key := range pgOnly {
		if table, _, ok := strings.Cut(key, "."); ok && slices.Contains(engine.ReplicatedTables(), table) {
			t.Errorf("%s is PostgreSQL's own on a replicated table: its digests would differ from an edge's", key)
		}
	}

	diffs := strings.Join(twinDiff(sqliteTwin(t, db.Writer), want), "\n")
	for _, named := range []string{
		"column orders.twin_probe_total (integer) has no PostgreSQL twin",
		"table twin_probes has no PostgreSQL twin",
		"index payments_processor_ref ON payments (processor_ref) unique partial has no PostgreSQL twin",
		"payments: unique index (processor_ref) partial has no PostgreSQL twin",
		"trigger twin_probes_org ON orders has no PostgreSQL twin",
	} {
		if !strings.Contains(diffs, named) {
			t.Errorf("a SQLite migration without its twin: the failure does not say %q; it says:\n%s", named, diffs)
		}
	}
}

// migratedPostgres is a fresh PostgreSQL database with the backend's and
// the nouns' migrations.
func migratedPostgres(t *testing.T) *pgxpool.Pool {
	t.Helper()
	ctx := context.Background()
	pool, err := pgxpool.New(ctx, pgtest.Start(t).Database(t))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(pool.Close)
	if err := pg.Migrate(ctx, pool, PostgresMigrations); err != nil {
		t.Fatal(err)
	}
	return pool
}

func openTwinStore(t *testing.T) *DB {
	t.Helper()
	db, err := Open(context.Background(), filepath.Join(t.TempDir(), "twin.db"), Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

// twinDiff says, one line each, how the SQLite schema and the PostgreSQL
// one differ, leaving out what each has of its own.
func twinDiff(lite, post twinSchema) []string {
	var out []string
	for _, name := range sortedKeys(lite) {
		if sqliteOnly[name] != "" {
			continue
		}
		p := post[name]
		if p == nil {
			out = append(out, fmt.Sprintf("table %s has no PostgreSQL twin: add CREATE TABLE %s to shared/sqlite/pgmigrations", name, name))
			continue
		}
		out = append(out, tableDiff(name, lite[name], p)...)
	}
	for _, name := range sortedKeys(post) {
		if lite[name] == nil && pgOnly[name] == "" {
			out = append(out, fmt.Sprintf("table %s is on PostgreSQL only: no SQLite migration makes it (or list it in pgOnly)", name))
		}
	}
	return out
}

func tableDiff(name string, l, p *twinTable) []string {
	var out []string
	pcols := slices.DeleteFunc(slices.Clone(p.cols), func(c string) bool {
		return pgOnly[name+"."+strings.Fields(c)[0]] != ""
	})
	for i, c := range l.cols {
		switch {
		case i < len(pcols) && pcols[i] == c:
		case !slices.ContainsFunc(pcols, sameName(c)):
			out = append(out, fmt.Sprintf("column %s.%s) has no PostgreSQL twin: add it to %s in shared/sqlite/pgmigrations", name, strings.Replace(c, " ", " (", 1), name))
		default:
			j := slices.IndexFunc(pcols, sameName(c))
			out = append(out, fmt.Sprintf("column %s.%s is %q on SQLite and %q on PostgreSQL, at %d and %d (a digest hashes the columns in order)", name, strings.Fields(c)[0], c, pcols[j], i+1, j+1))
		}
	}
	for _, c := range pcols {
		if !slices.ContainsFunc(l.cols, sameName(c)) {
			out = append(out, fmt.Sprintf("column %s.%s is on PostgreSQL only (or list it in pgOnly)", name, strings.Fields(c)[0]))
		}
	}
	if l.pk != p.pk {
		out = append(out, fmt.Sprintf("%s: the primary key is (%s) on SQLite, (%s) on PostgreSQL", name, l.pk, p.pk))
	}
	for _, u := range l.uniques {
		if !slices.Contains(p.uniques, u) {
			out = append(out, fmt.Sprintf("%s: unique index %s has no PostgreSQL twin", name, u))
		}
	}
	for _, u := range p.uniques {
		if !slices.Contains(l.uniques, u) {
			out = append(out, fmt.Sprintf("%s: unique index %s is on PostgreSQL only", name, u))
		}
	}
	for _, tr := range l.triggers {
		if !slices.Contains(p.triggers, tr) {
			out = append(out, fmt.Sprintf("trigger %s ON %s has no PostgreSQL twin", tr, name))
		}
	}
	for _, ix := range sortedKeys(l.indexes) {
		if p.indexes[ix] != l.indexes[ix] {
			out = append(out, fmt.Sprintf("index %s ON %s %s has no PostgreSQL twin (there: %q)", ix, name, l.indexes[ix], p.indexes[ix]))
		}
	}
	return out
}

func sameName(c string) func(string) bool {
	name := strings.Fields(c)[0]
	return func(o string) bool { return strings.Fields(o)[0] == name }
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// indexDesc is how both sides write an index: its columns, unique,
// partial.
func indexDesc(cols []string, unique, partial bool) string {
	s := "(" + strings.Join(cols, ", ") + ")"
	if unique {
		s += " unique"
	}
	if partial {
		s += " partial"
	}
	return s
}

// uniqueDesc is a unique index by what it keeps unique, whatever its name
// (SQLite names a UNIQUE constraint's index, PostgreSQL its own way).
func uniqueDesc(cols []string, partial bool) string { return indexDesc(cols, false, partial) }

// sqliteTwin reads a SQLite store's schema.
func sqliteTwin(t *testing.T, db *sql.DB) twinSchema {
	t.Helper()
	out := twinSchema{}
	for _, name := range sqlStrings(t, db, `SELECT name FROM sqlite_master WHERE type = 'table'`) {
		tt := &twinTable{indexes: map[string]string{}}
		rows, err := db.Query(`SELECT name, lower(type), pk FROM pragma_table_info(?) ORDER BY cid`, name)
		if err != nil {
			t.Fatal(err)
		}
		pk := map[int]string{}
		for rows.Next() {
			var col, kind string
			var n int
			if err := rows.Scan(&col, &kind, &n); err != nil {
				t.Fatal(err)
			}
			tt.cols = append(tt.cols, col+" "+kind)
			if n > 0 {
				pk[n] = col
			}
		}
		rows.Close()
		for i := 1; i <= len(pk); i++ {
			tt.pk = strings.TrimPrefix(tt.pk+", "+pk[i], ", ")
		}
		sqliteIndexes(t, db, name, tt)
		tt.triggers = sqlStrings(t, db, `SELECT name FROM sqlite_master WHERE type = 'trigger' AND tbl_name = ?`, name)
		out[name] = tt
	}
	return out
}

func sqliteIndexes(t *testing.T, db *sql.DB, table string, tt *twinTable) {
	t.Helper()
	rows, err := db.Query(`SELECT name, "unique", origin, partial FROM pragma_index_list(?)`, table)
	if err != nil {
		t.Fatal(err)
	}
	type index struct {
		name, origin    string
		unique, partial bool
	}
	var ixs []index
	for rows.Next() {
		var ix index
		if err := rows.Scan(&ix.name, &ix.unique, &ix.origin, &ix.partial); err != nil {
			t.Fatal(err)
		}
		ixs = append(ixs, ix)
	}
	rows.Close()
	for _, ix := range ixs {
		cols := sqlStrings(t, db, `SELECT coalesce(name, '<expr>') FROM pragma_index_info(?) ORDER BY seqno`, ix.name)
		if ix.origin == "pk" {
			continue
		}
		if ix.unique {
			tt.uniques = append(tt.uniques, uniqueDesc(cols, ix.partial))
		}
		if ix.origin == "c" {
			tt.indexes[ix.name] = indexDesc(cols, ix.unique, ix.partial)
		}
	}
	slices.Sort(tt.uniques)
}

func sqlStrings(t *testing.T, db *sql.DB, q string, args ...any) []string {
	t.Helper()
	rows, err := db.Query(q, args...)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var s string
		if err := rows.Scan(&s); err != nil {
			t.Fatal(err)
		}
		out = append(out, s)
	}
	return out
}

// pgTwin reads a PostgreSQL database's schema, its types as the SQLite
// storage classes they stand for (a type with none is named as it is).
func pgTwin(t *testing.T, pool *pgxpool.Pool) twinSchema {
	t.Helper()
	ctx := context.Background()
	out := twinSchema{}
	rows, err := pool.Query(ctx, `SELECT table_name, column_name, data_type FROM information_schema.columns
		WHERE table_schema = current_schema() ORDER BY table_name, ordinal_position`)
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var table, col, typ string
		if err := rows.Scan(&table, &col, &typ); err != nil {
			t.Fatal(err)
		}
		if out[table] == nil {
			out[table] = &twinTable{indexes: map[string]string{}}
		}
		kind := pgKinds[typ]
		if kind == "" {
			kind = typ
		}
		out[table].cols = append(out[table].cols, col+" "+kind)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	pgIndexes(t, pool, out)
	pgTriggers(t, pool, out)
	return out
}

func pgTriggers(t *testing.T, pool *pgxpool.Pool, out twinSchema) {
	t.Helper()
	rows, err := pool.Query(context.Background(), `SELECT c.relname, g.tgname FROM pg_trigger g JOIN pg_class c ON c.oid = g.tgrelid
		WHERE NOT g.tgisinternal AND c.relnamespace = current_schema()::regnamespace`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	for rows.Next() {
		var table, name string
		if err := rows.Scan(&table, &name); err != nil {
			t.Fatal(err)
		}
		if tt := out[table]; tt != nil {
			tt.triggers = append(tt.triggers, name)
		}
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
}

func pgIndexes(t *testing.T, pool *pgxpool.Pool, out twinSchema) {
	t.Helper()
	rows, err := pool.Query(context.Background(), `SELECT tc.relname, ic.relname, x.indisprimary, x.indisunique, x.indpred IS NOT NULL,
			EXISTS (SELECT 1 FROM pg_constraint k WHERE k.conindid = x.indexrelid),
			array(SELECT coalesce(a.attname, '<expr>') FROM unnest(x.indkey::int2[]) WITH ORDINALITY k(n, o)
				LEFT JOIN pg_attribute a ON a.attrelid = x.indrelid AND a.attnum = k.n ORDER BY k.o)
		FROM pg_index x JOIN pg_class ic ON ic.oid = x.indexrelid JOIN pg_class tc ON tc.oid = x.indrelid
		WHERE tc.relnamespace = current_schema()::regnamespace`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	for rows.Next() {
		var table, name string
		var primary, unique, partial, constraint bool
		var cols []string
		if err := rows.Scan(&table, &name, &primary, &unique, &partial, &constraint, &cols); err != nil {
			t.Fatal(err)
		}
		tt := out[table]
		switch {
		case tt == nil:
		case primary:
			tt.pk = strings.Join(cols, ", ")
		default:
			if unique {
				tt.uniques = append(tt.uniques, uniqueDesc(cols, partial))
				slices.Sort(tt.uniques)
			}
			if !constraint {
				tt.indexes[name] = indexDesc(cols, unique, partial)
			}
		}
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
}

// bothRun is a statement run on both schemas; refused, the message the
// failure must carry on both ("" for none).
type bothRun struct{ sql, refused string }

// TestPostgreSQLRefusesACrossOrgReferenceAsSQLiteDoes runs the same
// statements on a SQLite store and on the PostgreSQL schema: a row naming
// another org's (or another location's) row is refused on both with the
// message the engine recognizes (apply.go quarantines on it), a same-org
// one is not, and deactivating a user ends their sessions on both.
func TestPostgreSQLRefusesACrossOrgReferenceAsSQLiteDoes(t *testing.T) {
	ctx := context.Background()
	pool := migratedPostgres(t)
	db := openTwinStore(t)
	const meta = `'2026-11-28T09:00:00.000Z', '2026-11-28T09:00:00.000Z', 'h', 'o'`
	steps := []bothRun{
		{`INSERT INTO orgs (id, name, currency, created_at, updated_at, hlc, origin) VALUES ('org_a', 'A', 'EUR', ` + meta + `), ('org_b', 'B', 'EUR', ` + meta + `)`, ""},
		{`INSERT INTO locations (id, org_id, name, timezone, currency, created_at, updated_at, hlc, origin) VALUES
			('loc_a', 'org_a', 'A', 'UTC', 'EUR', ` + meta + `), ('loc_a2', 'org_a', 'A2', 'UTC', 'EUR', ` + meta + `), ('loc_b', 'org_b', 'B', 'UTC', 'EUR', ` + meta + `)`, ""},
		{`INSERT INTO registers (id, org_id, location_id, name, created_at, updated_at, hlc, origin) VALUES ('reg_x', 'org_a', 'loc_b', 'X', ` + meta + `)`,
			"kassa: cross-org reference registers.location_id"},
		{`INSERT INTO registers (id, org_id, location_id, name, created_at, updated_at, hlc, origin) VALUES ('reg_a', 'org_a', 'loc_a', 'A', ` + meta + `)`, ""},
		{`INSERT INTO drawer_sessions (id, org_id, location_id, register_id, currency, business_day, status, opened_by, opened_at, float, created_at, updated_at, hlc, origin)
			VALUES ('dr_x', 'org_a', 'loc_a2', 'reg_a', 'EUR', '2026-11-28', 'open', 'u1', 't', 0, ` + meta + `)`,
			"kassa: cross-org reference drawer_sessions.register_id"},
		{`INSERT INTO users (id, org_id, email, role, password_hash, created_at, updated_at, hlc, origin) VALUES ('u1', 'org_a', 'ana@example.com', 'owner', 'x', ` + meta + `)`, ""},
		{`INSERT INTO sessions (id, org_id, user_id, refresh_jti, created_at, expires_at) VALUES ('s_b', 'org_b', 'u1', 'j', 't', 't')`,
			"kassa: cross-org reference sessions.user_id"},
		{`INSERT INTO sessions (id, org_id, user_id, refresh_jti, created_at, expires_at) VALUES ('s_a', 'org_a', 'u1', 'j', 't', 't')`, ""},
		{`UPDATE sessions SET user_id = 'u1' WHERE id = 's_a'`, ""},
		{`UPDATE users SET is_active = 0 WHERE id = 'u1'`, ""},
	}
	for _, s := range steps {
		_, lerr := db.Writer.ExecContext(ctx, s.sql)
		_, perr := pool.Exec(ctx, s.sql)
		for side, err := range map[string]error{"SQLite": lerr, "PostgreSQL": perr} {
			switch {
			case s.refused == "" && err != nil:
				t.Fatalf("%s refuses %s: %v", side, s.sql, err)
			case s.refused != "" && (err == nil || !strings.Contains(err.Error(), s.refused)):
				t.Fatalf("%s: %s gives %v; want it refused with %q", side, s.sql, err, s.refused)
			}
		}
	}
	const revoked = `SELECT coalesce(revoked_at, '') FROM sessions WHERE id = 's_a'`
	var lite, post string
	if err := db.Writer.QueryRowContext(ctx, revoked).Scan(&lite); err != nil {
		t.Fatal(err)
	}
	if err := pool.QueryRow(ctx, revoked).Scan(&post); err != nil {
		t.Fatal(err)
	}
	if len(lite) != len(TimeFormat) || len(post) != len(TimeFormat) || post[:10] != lite[:10] {
		t.Fatalf("a deactivated user's session ends at %q on SQLite and %q on PostgreSQL; want both a time in TimeFormat", lite, post)
	}
}

// sqliteOnlySQL are constructs of the nouns' SQL that PostgreSQL does not
// speak and that the dialect does not rewrite (docs/postgres.md, the
// inventory); the json_* calls, fold and the placeholders are the
// dialect's.
var sqliteOnlySQL = map[string]*regexp.Regexp{
	"rowid (a sequence column of its own)":                regexp.MustCompile(`(?i)\browid\b`),
	"INSERT OR REPLACE/IGNORE (ON CONFLICT)":              regexp.MustCompile(`(?i)\bINSERT\s+OR\s+(REPLACE|IGNORE)\b`),
	"the SQLite catalog (sqlite_master, pragma_*)":        regexp.MustCompile(`(?i)\b(sqlite_master|sqlite_schema|pragma_\w+|PRAGMA)\b`),
	"scalar max(a, b) or min(a, b) (CASE or the dialect)": regexp.MustCompile(`(?i)\b(max|min)\(\s*[^()]*,`),
	"a literal (for char(n), a type to PostgreSQL)":       regexp.MustCompile(`(?i)\bchar\(\s*\d+\s*\)\s*\|\|`),
	"IS NOT DISTINCT FROM ? (for IS ?)":                   regexp.MustCompile(`(?i)\bIS\s+(NOT\s+)?\?`),
}

// TestTheNounsSQLIsPortable: the nouns' statements (shared/sqlite/*.go)
// run on SQLite and on PostgreSQL alike, but for what the dialect rewrites;
// a rowid, INSERT OR REPLACE, a look into SQLite's catalog, a scalar
// max(a, b), a comparison `IS ?` or a driver's LastInsertId (RETURNING
// instead) fails it.
// backup.go is the file store's own (pg_dump backs up PostgreSQL).
func TestTheNounsSQLIsPortable(t *testing.T) {
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	checked := 0
	for _, name := range files {
		if strings.HasSuffix(name, "_test.go") || name == "backup.go" {
			continue
		}
		f, err := parser.ParseFile(token.NewFileSet(), name, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		checked++
		ast.Inspect(f, func(n ast.Node) bool {
			switch x := n.(type) {
			case *ast.BasicLit:
				if x.Kind != token.STRING {
					break
				}
				for what, re := range sqliteOnlySQL {
					if m := re.FindString(x.Value); m != "" {
						t.Errorf("%s: %q in a statement is SQLite's only: use %s", name, m, what)
					}
				}
			case *ast.SelectorExpr:
				if x.Sel.Name == "LastInsertId" {
					t.Errorf("%s: LastInsertId: PostgreSQL's driver has none; read the key with RETURNING", name)
				}
			}
			return true
		})
	}
	if checked < 20 {
		t.Fatalf("checked only %d files of the nouns; the walk is broken", checked)
	}
}

// Migration 0050 gives applied_changes and automation_executions a seq of
// their own: each row keeps its rowid as its seq, so a live feed's saved
// position and the sweep's order mean what they meant, gaps included, and
// a change applied afterwards comes after every one before.
func TestMigration0050KeepsEachRowsPositionAsItsSeq(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "edge.db")
	old, err := Open(ctx, path, Options{MigrateTo: 43})
	if err != nil {
		t.Fatal(err)
	}
	const exec = `INSERT INTO automation_executions (id, org_id, rule_id, trigger, matched, status, depth, results, error, duration_ms,
		started_at, finished_at, created_at) VALUES (?, 'o', 'r', 'event', 1, 'ok', 0, '[]', '', 1, ?, ?, ?)`
	for i, id := range []string{"c1", "c2", "c3", "c4", "c5"} {
		if _, err := old.Writer.ExecContext(ctx, `INSERT INTO applied_changes (id, origin, applied_at, org_id, entity, entity_id, op)
			VALUES (?, 'hub', 't', 'o', 'product', ?, 'upsert')`, id, id); err != nil {
			t.Fatal(err)
		}
		at := fmt.Sprintf("2026-11-2%dT00:00:00.000Z", i)
		if _, err := old.Writer.ExecContext(ctx, exec, "e"+id[1:], at, at, at); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := old.Writer.ExecContext(ctx, `DELETE FROM applied_changes WHERE id = 'c3'; DELETE FROM automation_executions WHERE id = 'e2'`); err != nil {
		t.Fatal(err)
	}
	old.Close()

	db, err := Open(ctx, path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if _, err := db.Writer.ExecContext(ctx, `INSERT INTO applied_changes (id, origin, applied_at, org_id, entity, entity_id, op)
		VALUES ('c6', 'hub', 't', 'o', 'product', 'c6', 'upsert')`); err != nil {
		t.Fatal(err)
	}
	for q, want := range map[string]string{
		`SELECT seq || ':' || id FROM applied_changes ORDER BY seq`:       "1:c1 2:c2 4:c4 5:c5 6:c6",
		`SELECT seq || ':' || id FROM automation_executions ORDER BY seq`: "1:e1 3:e3 4:e4 5:e5",
	} {
		if got := strings.Join(sqlStrings(t, db.Writer, q), " "); got != want {
			t.Errorf("after migration 0050, %s gives %s; want %s (each row's rowid as its seq)", q, got, want)
		}
	}
	if n, err := NewAutomationStore(db).DeleteExecutionsBefore(ctx, time.Date(2026, 11, 24, 0, 0, 0, 0, time.UTC)); err != nil || n != 3 {
		t.Fatalf("the sweep before the 24th deleted %d (%v); want the 3 older executions, walked in seq order", n, err)
	}
}

// TestNoCrossOrgTriggerBuildsItsCheckAtEachRow: after the migrations every
// cross-org trigger calls a function of its own with the check written
// out (pgmigrations 0007), none the generic kassa_same_org, which parsed
// and planned its check at every row (EXECUTE format). A migration that
// adds a trigger with kassa_same_org fails this until the trigger is
// given its own function the same way.
func TestNoCrossOrgTriggerBuildsItsCheckAtEachRow(t *testing.T) {
	pool := migratedPostgres(t)
	var generic, own int
	err := pool.QueryRow(context.Background(), `SELECT count(*) FILTER (WHERE p.proname = 'kassa_same_org'),
		count(*) FILTER (WHERE p.proname LIKE 'kassa_same_org_%')
		FROM pg_trigger g JOIN pg_proc p ON p.oid = g.tgfoid WHERE NOT g.tgisinternal`).Scan(&generic, &own)
	if err != nil {
		t.Fatal(err)
	}
	if generic != 0 || own == 0 {
		t.Fatalf("%d triggers call kassa_same_org, %d their own check; want 0 and some", generic, own)
	}
}

// TestEachCrossOrgTriggerRunsOnlyForAReference: after the migrations every
// cross-org trigger has WHEN (NEW.col IS NOT NULL), so a row without the
// reference calls no plpgsql, and its function's check is the lookup alone
// (pgmigrations 0008), not `NEW.col IS NOT NULL AND EXISTS (...)`, whose
// custom plan folds to false for a NULL and which PostgreSQL therefore
// planned again at every row. A migration that adds a cross-org trigger
// written as 0007's fails this until it is written as 0008's.
func TestEachCrossOrgTriggerRunsOnlyForAReference(t *testing.T) {
	pool := migratedPostgres(t)
	rows, err := pool.Query(context.Background(), `SELECT g.tgname, pg_get_triggerdef(g.oid), p.prosrc
		FROM pg_trigger g JOIN pg_proc p ON p.oid = g.tgfoid WHERE NOT g.tgisinternal AND p.proname LIKE 'kassa\_same\_org\_%'`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	n := 0
	for rows.Next() {
		var name, def, src string
		if err := rows.Scan(&name, &def, &src); err != nil {
			t.Fatal(err)
		}
		n++
		if !regexp.MustCompile(`WHEN \(\(new\.\w+ IS NOT NULL\)\)`).MatchString(def) || strings.Contains(src, "IS NOT NULL AND EXISTS") {
			t.Errorf("cross-org trigger %s: %s, its check %q; want WHEN (NEW.col IS NOT NULL) and the lookup alone", name, def, src)
		}
	}
	if rows.Err() != nil || n == 0 {
		t.Fatalf("%d cross-org triggers (%v); want some", n, rows.Err())
	}
}
