package engine

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
	"sync"

	sqlite3 "github.com/mattn/go-sqlite3"

	"kassa.dev/sync/hlc"
)

// Dialect is what differs between the store's backends (docs/postgres.md,
// "The engine is the one place that knows the backend"). The SQL of the
// engine and the nouns is written once, in SQLite's words (? and ?N
// parameters, ON CONFLICT, RETURNING); where the two backends disagree a
// statement asks its dialect for the expression (D(q).JSONText(…)). SQLite's
// dialect gives back today's text, so SQLite's behaviour does not move;
// PostgreSQL's (shared/sqlite/engine/pg) rewrites each statement's final
// text for its parameters in its database/sql driver, so no call site
// changes for them.
type Dialect interface {
	// Name is the backend's name: "sqlite" or "postgres".
	Name() string
	// JSONValues is a FROM item: one row per element of the JSON array
	// expr (a column or a parameter), alias.value the element as a
	// scalar (an id, a number), for arrays of strings and numbers.
	JSONValues(expr, alias string) string
	// JSONElements is a FROM item: one row per element of the JSON array
	// expr, alias.value the element as a document, read with JSONText and
	// JSONInt (arrays of objects).
	JSONElements(expr, alias string) string
	// JSONText is the field at path (dot-separated keys) of the JSON
	// document expr, as text; JSONInt the same as an integer.
	JSONText(expr, path string) string
	JSONInt(expr, path string) string
	// JSONArrayLength is the length of the JSON array expr.
	JSONArrayLength(expr string) string
	// JSONObject builds a JSON object from key, value, key, value, …
	// expressions; JSON reads the text or document expr as JSON inside one.
	JSONObject(pairs ...string) string
	JSON(expr string) string
	// JSONMerge is the document col with the keys of the JSON parameter
	// (or expression) patch set over it (field_hlc's stamps).
	JSONMerge(col, patch string) string
	// Fold lower-cases text of any script, for search.
	Fold(expr string) string
	// Greatest is the larger of two values.
	Greatest(a, b string) string
	// PerRow is a FROM item that runs the query sub once for each row
	// before it (sub may name that row's columns) as alias, and true;
	// false where the backend has none (SQLite: its caller writes a
	// scalar subquery per value, which SQLite runs well). PostgreSQL runs
	// one subquery of several aggregates for what a scalar subquery each
	// would look up again and again.
	PerRow(sub, alias string) (string, bool)
	// LogInsertSQL appends n change records to the log in the unit's
	// transaction, in order; its parameters, for each record: id, org_id,
	// location_id, entity, entity_id, op, fields, hlc, origin, actor,
	// created_at — all preceded, where LogCommitSQL is not "", by the
	// first record's ordinal in the transaction (the writer counts them
	// across the batch's units).
	LogInsertSQL(n int) string
	// LogCommitSQL runs once before the COMMIT of a writer transaction
	// that wrote n change records to the log, its one parameter n (""
	// for nothing), and returns the transaction's place in the log's
	// order: on PostgreSQL the transaction's row of outbox_commits,
	// written once instead of once per log statement, and its cseq. The
	// writer sends it last before the COMMIT, in the COMMIT's round trip
	// (PipeBeforeCommit).
	LogCommitSQL() string
	// AfterCommitSQL is a statement the writer sends right after the
	// COMMIT of each transaction that wrote, on its connection and in the
	// COMMIT's round trip, as a statement of its own ("" for none), and
	// its arguments; it answers one integer (AfterCommitAnswer), which
	// AfterCommit reads.
	AfterCommitSQL(ctx context.Context, writer *sql.DB) (string, []any, error)
	// AfterCommit runs on the writer after each commit that wrote: on
	// PostgreSQL it gives the log's new rows their positions and marks how
	// far each followed seq has settled (Settled), or finishes what
	// AfterCommitSQL's statement did (sent, its answer; not sent or
	// failed: it does it all itself); given the commit's place
	// (LogCommitSQL's, 0 when it wrote no record), it returns once that
	// commit's records are positioned, or after a bound.
	AfterCommit(ctx context.Context, writer *sql.DB, place int64, sent AfterCommitAnswer) error
	// BeginSQL runs first in each writer transaction ("" for nothing): on
	// PostgreSQL it gives the transaction its id before it takes any seq,
	// which Settled's marks rely on.
	BeginSQL() string
	// Settled bounds a reader that follows table by its seq (col, as the
	// reader's statement names it): " AND col <= …", the highest seq below
	// which no row can still commit, where writers commit concurrently;
	// "" on SQLite, whose one writer commits seq in order. A cursor read
	// within it never passes a row that commits late.
	Settled(col, table string) string
	// LogAfter is a reader's condition on the log's position, col (the
	// outbox's seq, as the statement names it) > bound: on PostgreSQL,
	// where seq is computed in the outbox view, it adds a bound on the
	// commit's last position that its index serves, so a read costs what
	// it returns, not the whole log (postgres.md, "Reading the log").
	LogAfter(col, bound string) string
	// LogFrom is the FROM item a cursor read of the log (LogAfter) reads,
	// named alias ("" for outbox), and LogOrder its order by col (the
	// seq, as the statement names it): on PostgreSQL the commits after the
	// cursor by their last position's index, each one's rows by its key,
	// so a read costs what it returns whatever plan the database caches.
	LogFrom(alias string) string
	LogOrder(col string) string
	// LogWaitingSQL answers whether committed records of one origin (its
	// one parameter) still wait for their log positions ("" where a record
	// has its position when it commits: SQLite).
	LogWaitingSQL() string
	// LastSeqSQL reads the log's newest position (0 when empty): every
	// edge's pull asks it first.
	LastSeqSQL() string
	// LockRowsSQL locks n rows of table by their ids (its n parameters)
	// for the rest of the unit, in id order ("" for nothing: SQLite's one
	// writer serializes every unit); Tx.LockRow and LockRows run it.
	LockRowsSQL(table string, n int) string
	// LockKeysSQL takes n keys' locks (its n bigint parameters, in their
	// order) for the rest of the unit, locking no row ("" for nothing, as
	// LockRowsSQL); Tx.LockKeys runs it.
	LockKeysSQL(n int) string
	// ColumnsSQL lists a table's column names in their order; its one
	// parameter is the table's name.
	ColumnsSQL() string
	// IsUniqueViolation, IsForeignKeyViolation and IsRetryable classify
	// the backend's errors: a unique key taken, a reference missing, a
	// unit that may simply run again (SQLite's one writer never is).
	IsUniqueViolation(err error) bool
	IsForeignKeyViolation(err error) bool
	IsRetryable(err error) bool
}

// SQLite is the SQLite dialect: the text the nouns have always run.
var SQLite Dialect = sqliteDialect{}

type sqliteDialect struct{}

func (sqliteDialect) Name() string { return "sqlite" }
func (sqliteDialect) JSONValues(expr, alias string) string {
	return "json_each(" + expr + ") AS " + alias
}
func (sqliteDialect) JSONElements(expr, alias string) string {
	return "json_each(" + expr + ") AS " + alias
}
func (sqliteDialect) JSONText(expr, path string) string {
	return "json_extract(" + expr + ", '$." + path + "')"
}
func (sqliteDialect) JSONInt(expr, path string) string {
	return "json_extract(" + expr + ", '$." + path + "')"
}
func (sqliteDialect) JSONArrayLength(expr string) string { return "json_array_length(" + expr + ")" }
func (sqliteDialect) JSONObject(pairs ...string) string {
	return "json_object(" + strings.Join(pairs, ", ") + ")"
}
func (sqliteDialect) JSON(expr string) string { return "json(" + expr + ")" }
func (sqliteDialect) JSONMerge(col, patch string) string {
	return "json_patch(" + col + ", " + patch + ")"
}
func (sqliteDialect) Fold(expr string) string              { return "fold(" + expr + ")" }
func (sqliteDialect) Greatest(a, b string) string          { return "max(" + a + ", " + b + ")" }
func (sqliteDialect) PerRow(string, string) (string, bool) { return "", false }
func (sqliteDialect) LogInsertSQL(n int) string {
	return `INSERT INTO outbox (id, org_id, location_id, entity, entity_id, op, fields, hlc, origin, actor, created_at)
		VALUES ` + strings.Repeat(", (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)", n)[2:]
}
func (sqliteDialect) LogCommitSQL() string { return "" }
func (sqliteDialect) AfterCommitSQL(context.Context, *sql.DB) (string, []any, error) {
	return "", nil, nil
}
func (sqliteDialect) AfterCommit(context.Context, *sql.DB, int64, AfterCommitAnswer) error {
	return nil
}
func (sqliteDialect) BeginSQL() string                  { return "" }
func (sqliteDialect) Settled(string, string) string     { return "" }
func (sqliteDialect) LogAfter(col, bound string) string { return col + " > " + bound }
func (sqliteDialect) LogFrom(alias string) string {
	return strings.TrimSuffix("outbox "+alias, " ")
}
func (sqliteDialect) LogOrder(col string) string     { return col }
func (sqliteDialect) LogWaitingSQL() string          { return "" }
func (sqliteDialect) LastSeqSQL() string             { return `SELECT coalesce(max(seq), 0) FROM outbox` }
func (sqliteDialect) LockRowsSQL(string, int) string { return "" }
func (sqliteDialect) LockKeysSQL(int) string         { return "" }
func (sqliteDialect) ColumnsSQL() string {
	return `SELECT name FROM pragma_table_info(?) ORDER BY cid`
}
func (sqliteDialect) IsUniqueViolation(err error) bool {
	var se sqlite3.Error
	return errors.As(err, &se) && se.ExtendedCode == sqlite3.ErrConstraintUnique
}
func (sqliteDialect) IsForeignKeyViolation(err error) bool {
	var se sqlite3.Error
	return errors.As(err, &se) && se.ExtendedCode == sqlite3.ErrConstraintForeignKey
}
func (sqliteDialect) IsRetryable(error) bool { return false }

// D is the dialect of what q runs on: a unit of work, the reader pool or
// one of its snapshots. Anything else (a test's own handle) is SQLite.
func D(q any) Dialect {
	switch q := q.(type) {
	case *Tx:
		return q.DB.dialect()
	case *readPool:
		return q.dialectOr()
	case *snapshot:
		return q.pool.dialectOr()
	case *DB:
		return q.dialect()
	}
	return SQLite
}

func (db *DB) dialect() Dialect {
	if db.Dialect == nil {
		return SQLite
	}
	return db.Dialect
}

func (r *readPool) dialectOr() Dialect {
	if r.dialect == nil {
		return SQLite
	}
	return r.dialect
}

// Backend is a store backend other than SQLite, picked by the scheme of
// the store's name (postgres://…). It lives outside the engine (an edge
// never links it) and registers itself (RegisterBackend) from the hub's
// binary.
type Backend interface {
	Dialect
	// OpenDB opens the database at dsn as database/sql pools for the
	// writer and the readers (the same database), with the dialect's
	// statement rewrite in their driver.
	OpenDB(ctx context.Context, dsn string) (writer, reader *sql.DB, err error)
	// Migrate applies the backend's and the nouns' migrations.
	Migrate(ctx context.Context, dsn string) error
}

var (
	backendsMu sync.Mutex
	backends   = map[string]Backend{}
)

// RegisterBackend makes Open accept store names beginning scheme+"://".
func RegisterBackend(scheme string, b Backend) {
	backendsMu.Lock()
	defer backendsMu.Unlock()
	backends[scheme] = b
}

// backendOf is the registered backend of a store name, or nil for a
// SQLite file; an unregistered scheme is an error.
func backendOf(path string) (Backend, error) {
	scheme, _, ok := strings.Cut(path, "://")
	if !ok || strings.ContainsAny(scheme, "/.") {
		return nil, nil
	}
	backendsMu.Lock()
	defer backendsMu.Unlock()
	if b := backends[scheme]; b != nil {
		return b, nil
	}
	return nil, fmt.Errorf("sqlite: no store backend for %s:// in this binary (only the hub links PostgreSQL)", scheme)
}

// anyDialect reports whether is holds for err in SQLite's dialect or a
// registered backend's: the package-level classifiers serve callers that
// do not hold the store.
func anyDialect(err error, is func(Dialect, error) bool) bool {
	if err == nil {
		return false
	}
	if is(SQLite, err) {
		return true
	}
	backendsMu.Lock()
	defer backendsMu.Unlock()
	for _, b := range backends {
		if is(b, err) {
			return true
		}
	}
	return false
}

// openBackend opens a store on a registered backend: its migrations, a
// writer pool whose connections each serve a write loop (Options.Writers;
// each keeps its group commit, as savepoints) and a reader pool, both
// through the backend's driver.
func openBackend(ctx context.Context, b Backend, dsn string, o Options) (*DB, error) {
	if err := b.Migrate(ctx, dsn); err != nil {
		return nil, err
	}
	write, read, err := b.OpenDB(ctx, dsn)
	if err != nil {
		return nil, err
	}
	// A connection a write loop, and one for what runs beside them (the
	// log's positioning after a commit, node_meta).
	write.SetMaxOpenConns(o.Writers + 1)
	write.SetMaxIdleConns(o.Writers + 1)
	db := &DB{path: dsn, Writer: write, Now: o.Now, Bus: o.Bus, Live: o.Live, Log: o.Log, Dialect: b,
		Clock: hlc.NewClock(o.Now, o.MaxSkew), NewID: newUUIDv7, MaxSkew: o.MaxSkew, Hub: o.Hub}
	db.Reader = &readPool{DB: read, dialect: b}
	if err := db.preparePools(ctx, o); err != nil {
		write.Close()
		read.Close()
		return nil, err
	}
	o.WriterPriority = -1 // the writer's work runs in the database's processes
	return db.start(ctx, o)
}
