package pg

import (
	"context"
	"database/sql"
	"fmt"
	"io/fs"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"kassa.dev/shared/sqlite/engine"
)

// Dialect is PostgreSQL's engine.Dialect: the expressions that differ
// from SQLite's and the error classifier. The parameters are not here:
// the driver (DriverName) rewrites each statement's final text.
type Dialect struct{}

var _ engine.Dialect = Dialect{}

func (Dialect) Name() string { return "postgres" }

// JSONValues: jsonb_array_elements_text gives the elements as text, as
// SQLite's json_each gives a string element's value.
func (Dialect) JSONValues(expr, alias string) string {
	return "jsonb_array_elements_text((" + expr + ")::jsonb) AS " + alias + "(value)"
}

func (Dialect) JSONElements(expr, alias string) string {
	return "jsonb_array_elements((" + expr + ")::jsonb) AS " + alias + "(value)"
}

// JSONText reads a path with -> and a last ->>, so that an expression
// index on a column (sync_quarantine_order) serves it; the cast to jsonb
// is none on a jsonb column and reads a parameter's text.
func (Dialect) JSONText(expr, path string) string {
	keys := strings.Split(path, ".")
	var b strings.Builder
	b.WriteString("((" + expr + ")::jsonb")
	for i, k := range keys {
		if i == len(keys)-1 {
			b.WriteString("->>'" + k + "')")
		} else {
			b.WriteString("->'" + k + "'")
		}
	}
	return b.String()
}

func (d Dialect) JSONInt(expr, path string) string { return "(" + d.JSONText(expr, path) + ")::bigint" }

func (Dialect) JSONArrayLength(expr string) string {
	return "jsonb_array_length((" + expr + ")::jsonb)"
}

func (Dialect) JSONObject(pairs ...string) string {
	return "jsonb_build_object(" + strings.Join(pairs, ", ") + ")"
}

func (Dialect) JSON(expr string) string { return "(" + expr + ")::jsonb" }

func (Dialect) JSONMerge(col, patch string) string { return col + " || (" + patch + ")::jsonb" }

// Fold is lower under the C.utf8 collation: the database's own is C
// (text sorts byte by byte), under which lower knows ASCII only; C.utf8
// (glibc's, imported by initdb) lower-cases every script as Go's
// strings.ToLower, SQLite's fold, does.
func (Dialect) Fold(expr string) string     { return "lower(" + expr + ` COLLATE "C.utf8")` }
func (Dialect) Greatest(a, b string) string { return "greatest(" + a + ", " + b + ")" }

// PerRow is a LATERAL join: sub runs once for each row before it.
func (Dialect) PerRow(sub, alias string) (string, bool) {
	return " CROSS JOIN LATERAL (" + sub + ") " + alias, true
}

// LogInsertSQL writes n change records to the log in their safe order
// (log.go, Append) at their ordinals in the transaction, from the first
// parameter on: the engine's writer counts them across the batch's units
// (a unit rolled back to its savepoint gives its ordinals back with its
// rows); LogCommitSQL then writes the transaction's row of outbox_commits
// once, just before the COMMIT: how many records it wrote, and its place
// in the log's order (cseq, migration 0011) taken after its last write.
// Until 2026-11-29 each log statement upserted that row (docs/performance.md).
func (Dialect) LogInsertSQL(n int) string {
	var rows strings.Builder
	for i := range n {
		if i > 0 {
			rows.WriteString(", ")
		}
		fmt.Fprintf(&rows, "(%d, ?, ?, ?, ?, ?, ?, (?)::jsonb, ?, ?, ?, (?)::timestamptz)", i)
	}
	return `INSERT INTO outbox_log (ord, change_id, org_id, location_id, entity, entity_id, op, fields, hlc, origin, actor, created_at)
	SELECT b.base_ord + v.i, v.change_id, v.org_id, v.location_id, v.entity, v.entity_id, v.op, v.fields, v.hlc, v.origin, v.actor, v.created_at
	FROM (SELECT (?)::integer AS base_ord) b, (VALUES ` + rows.String() + `) AS v(i, change_id, org_id, location_id, entity, entity_id, op, fields, hlc, origin, actor, created_at)`
}

// LogCommitSQL writes the transaction's row of outbox_commits (LogInsertSQL)
// and returns its cseq.
func (Dialect) LogCommitSQL() string {
	return `INSERT INTO outbox_commits (n) VALUES (?) RETURNING cseq`
}

// AfterCommitSQL is kassa_after_commit (seq_mark.go), sent with the
// writer's COMMIT.
func (Dialect) AfterCommitSQL(ctx context.Context, writer *sql.DB) (string, []any, error) {
	return afterCommitSQL(ctx, writer)
}

// AfterCommit positions the log's rows the commit wrote (Position), so
// that the engine's readers of the outbox view see them, and marks how
// far each followed seq has settled (seq_mark.go), unless the statement
// sent with the COMMIT did; it returns once the commit of cseq (0: none)
// is positioned, or after waitPositioned.
func (Dialect) AfterCommit(ctx context.Context, writer *sql.DB, cseq int64, sent engine.AfterCommitAnswer) error {
	return afterCommit(ctx, writer, cseq, sent)
}

// BeginSQL gives the writer's transaction its id first: a transaction
// holding a seq always has an id that a mark's xid_bound counts (seq_mark.go).
func (Dialect) BeginSQL() string { return `SELECT pg_current_xact_id()` }

// Settled reads no further than the highest settled mark of table.
func (Dialect) Settled(col, table string) string {
	return " AND " + col + " <= (SELECT coalesce(max(upto), 0) FROM seq_marks WHERE tbl = '" + table +
		"' AND xid_bound <= pg_snapshot_xmin(pg_current_snapshot()))"
}

// LogAfter bounds the commit's last position too (migration 0013's
// last_pos): every record of a commit lies at or below its last
// position, so the bound keeps every record above bound and lets the
// outbox_commits.last_pos index pick the commits, where seq alone
// (first_pos + ord) made each read a scan of the whole log.
func (Dialect) LogAfter(col, bound string) string {
	return col + " > " + bound + " AND " + strings.TrimSuffix(col, "seq") + "last_pos > " + bound
}

// LogFrom is the outbox view's rows (engine migration 0013) with each
// commit's rows read by its key (a lateral subquery kept whole by its
// ORDER BY), and LogOrder orders them by their commit's last position
// first (the same order: a commit's positions are first_pos..last_pos,
// given in order): the commits after the cursor come from the last_pos
// index in order and the LIMIT stops the read. Through the view the
// planner joined by hash and read the whole log at every call where it
// guessed a third of the commits follow the cursor (its generic plan,
// the one it keeps), ~170 µs a call at 4,000 records and growing with
// the log (docs/performance.md, session 20).
func (Dialect) LogFrom(alias string) string {
	if alias == "" {
		alias = "outbox"
	}
	return `(SELECT c.first_pos + o.ord AS seq, o.change_id AS id, o.org_id, o.location_id, o.entity, o.entity_id, o.op,
		o.fields::text AS fields, o.hlc, o.origin, NULL::text AS sent_at, o.actor, c.last_pos
		FROM outbox_commits c CROSS JOIN LATERAL (SELECT * FROM outbox_log o WHERE o.xid = c.xid ORDER BY o.ord) o
		WHERE c.last_pos IS NOT NULL) ` + alias
}

func (Dialect) LogOrder(col string) string {
	return strings.TrimSuffix(col, "seq") + "last_pos, " + col
}

// LockRowsSQL takes the rows' locks, in id order (two units locking
// the same rows do not deadlock on each other), until the transaction ends: a unit on
// another hub (or another writer) that locks it waits for this one's
// commit and then reads what it wrote.
func (Dialect) LockRowsSQL(table string, n int) string {
	return `SELECT 1 FROM ` + table + ` WHERE id IN (` + strings.TrimSuffix(strings.Repeat("?, ", n), ", ") + `) ORDER BY id FOR UPDATE`
}

// LogWaitingSQL: a commit without positions waits for them (seq_mark.go);
// the few that wait (outbox_commits_unpositioned) are looked into for the
// origin's records.
func (Dialect) LogWaitingSQL() string {
	return `SELECT EXISTS (SELECT 1 FROM outbox_commits c JOIN outbox_log o ON o.xid = c.xid
		WHERE c.last_pos IS NULL AND o.origin = ?)`
}

// LastSeqSQL reads the last position given to a commit: the outbox
// view's newest seq (first_pos + ord of its last record is last_pos),
// which the view could only find by reading every record (its seq is
// computed); the unique index on last_pos answers at once.
func (Dialect) LastSeqSQL() string { return `SELECT coalesce(max(last_pos), 0) FROM outbox_commits` }

// LockKeysSQL takes transaction-scoped advisory locks on the keys, in the
// order of the array (a function scan of unnest returns its elements in
// order): memory only, no row written, nothing else waits on them.
func (Dialect) LockKeysSQL(n int) string {
	return `SELECT count(pg_advisory_xact_lock(k)) FROM unnest(ARRAY[` + strings.TrimSuffix(strings.Repeat("?::bigint, ", n), ", ") + `]) AS k`
}

func (Dialect) ColumnsSQL() string {
	return `SELECT column_name::text FROM information_schema.columns
		WHERE table_schema = current_schema() AND table_name = ? ORDER BY ordinal_position`
}

func (Dialect) IsUniqueViolation(err error) bool     { return IsUniqueViolation(err) }
func (Dialect) IsForeignKeyViolation(err error) bool { return IsForeignKeyViolation(err) }
func (Dialect) IsRetryable(err error) bool           { return IsRetryable(err) }

// Backend is the engine's PostgreSQL backend: engine.Open on a
// postgres:// name opens the store through it once it is registered
// (Register). Migrations are the nouns' PostgreSQL migrations
// (sqlite.PostgresMigrations), applied after the backend's own.
type Backend struct {
	Dialect
	Migrations []fs.FS
}

// Register makes engine.Open accept postgres:// and postgresql:// store
// names, migrating with the nouns' migrations given. Only the hub's
// binary calls it: an edge never links this package.
func Register(nouns ...fs.FS) {
	b := Backend{Migrations: nouns}
	engine.RegisterBackend("postgres", b)
	engine.RegisterBackend("postgresql", b)
}

// WriterLockTimeout bounds how long a write loop's statement waits for a
// lock (PostgreSQL's lock_timeout on the writer pool's connections). A
// write loop's statements see no cancellable context (engine/direct.go):
// without it a row lock held by a transaction that never ends (a session
// left open by hand, another hub's hung unit) would hold the loop, and
// every unit queued behind it, for as long; with it the waiting unit
// fails alone, as its push's 30-second deadline failed it before, and its
// edge pushes it again.
var WriterLockTimeout = 30 * time.Second

// writerPlans are the planner's settings on the writer pool's connections
// (docs/postgres.md, "Plans made on young tables"). A write loop's
// statements find rows by key, and PostgreSQL keeps a prepared
// statement's generic plan until an ANALYZE of its tables: a plan made
// while a table held a few pages (a new hub, an org's first catch-up)
// scanned it whole at every call as it grew, long before autovacuum
// looked at it. With seq scans disabled the planner scans a table whole
// only where no index serves; JIT, which the disabled path's cost would
// start for one-row statements, is off.
var writerPlans = map[string]string{"enable_seqscan": "off", "jit": "off"}

// OpenDB opens two database/sql pools on dsn through DriverName: the
// engine's writer (its connections wait at most WriterLockTimeout for a
// lock) and its readers.
func (Backend) OpenDB(_ context.Context, dsn string) (writer, reader *sql.DB, err error) {
	if _, err := pgx.ParseConfig(dsn); err != nil {
		return nil, nil, err
	}
	if writer, err = sql.Open(DriverName, writerDSN(dsn)); err != nil {
		return nil, nil, err
	}
	if reader, err = sql.Open(DriverName, dsn); err != nil {
		writer.Close()
		return nil, nil, err
	}
	return writer, reader, nil
}

// writerDSN is dsn (a postgres:// URL: Register's schemes) with the writer
// pool's settings as parameters, which pgx passes to the server as run-time
// parameters. (Until session 21 a pgx config registered with the stdlib
// driver carried them: one registration a store opened, never dropped.)
func writerDSN(dsn string) string {
	u, err := url.Parse(dsn)
	if err != nil {
		return dsn
	}
	q := u.Query()
	q.Set("lock_timeout", strconv.FormatInt(WriterLockTimeout.Milliseconds(), 10))
	for k, v := range writerPlans {
		q.Set(k, v)
	}
	u.RawQuery = q.Encode()
	return u.String()
}

// Migrate applies the backend's migrations and the nouns'.
func (b Backend) Migrate(ctx context.Context, dsn string) error {
	pool, err := pgxpool.New(ctx, dsn)
	if err != nil {
		return err
	}
	defer pool.Close()
	return Migrate(ctx, pool, b.Migrations...)
}
