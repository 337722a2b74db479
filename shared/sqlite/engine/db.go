// Package engine is the store's engine: the writer and its group commit,
// the unit of work (Tx), change capture into the outbox, the event log,
// apply and merge of other nodes' changes, admission of an edge's changes,
// digests, change-record formats, and the registry of replicated nouns
// (Noun, Register). It names no noun: each noun registers itself from its
// own file in shared/sqlite (docs/store.md; TestTheEngineNamesNoNoun).
//
// A DB on SQLite has one writer connection (every write is one IMMEDIATE
// transaction) and a pool of read-only connections, in WAL mode with
// synchronous=FULL so that a committed write survives a power cut; on
// PostgreSQL, several write loops each with a connection of their own
// (Options.Writers). Migrations (Migrations) are
// applied at Open. Every write of a replicated row goes through Tx.Insert
// or Tx.Update, which also write the row's change record to the outbox in
// the same transaction.
package engine

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"net/url"
	"os"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/google/uuid"
	sqlite3 "github.com/mattn/go-sqlite3"

	"kassa.dev/shared/kassa"
	"kassa.dev/sync/hlc"
)

// Migrations are the store's migrations (migrations/*.sql), set by the
// package that holds them (shared/sqlite) before the first Open.
var Migrations fs.FS

// driverName is go-sqlite3 with Kassa's SQL functions: fold(s) lower-cases
// any script (SQLite's own lower() only knows ASCII), for search.
const DriverName = "sqlite3_kassa"

func init() {
	sql.Register(DriverName, &sqlite3.SQLiteDriver{ConnectHook: func(c *sqlite3.SQLiteConn) error {
		if _, err := c.Exec(fmt.Sprintf("PRAGMA wal_autocheckpoint = %d", walCapPages), nil); err != nil {
			return err
		}
		if err := boundHeap(c); err != nil {
			return err
		}
		return c.RegisterFunc("fold", strings.ToLower, true)
	}})
}

// TimeFormat is how timestamps are stored: fixed width, so text order is time order.
const TimeFormat = "2006-01-02T15:04:05.000Z"

// DB is an open Kassa store.
type DB struct {
	path   string
	Writer *sql.DB
	Reader *readPool
	NodeID string // origin of the changes this node makes

	Clock *hlc.Clock
	Now   func() time.Time // wall clock, UTC
	NewID func() string    // UUIDv7 by default
	Bus   kassa.Publisher  // may be nil
	// Live hears kassa.EventLiveChange after every commit that stored a
	// change a live topic carries (may be nil): a wake-up of the live
	// feeds, kept off Bus, whose readers are the log's.
	Live kassa.Publisher
	Log  *slog.Logger
	// Dialect is the backend's (dialect.go); nil is SQLite. Read it with
	// D(q) where a statement differs between the backends.
	Dialect Dialect

	MaxSkew time.Duration // remote stamps beyond now+maxSkew are clamped

	savepoints map[string]*sql.Stmt // SAVEPOINT, RELEASE, ROLLBACK TO, prepared once
	rowQueries queryCache           // writeRow's and apply's statements by row shape
	writes     chan *writeReq       // units of work for the write loops
	committed  chan struct{}
	stats      writerStats
	refused    refusedCounts // pushed changes the trust boundary refused
	// tableColumns holds each table's columns once read (table → []string):
	// the schema changes only in migrations, which run at Open.
	tableColumns sync.Map
	UnderHub     atomic.Bool  // an enrolled edge: hub-only data is not written here
	Hub          bool         // the hub: its events get no change records (Options.Hub)
	WriterTID    atomic.Int64 // the write loop's OS thread, once raised
	// states are what nouns keep in memory beside their rows
	// (noun.newState), made at Open: read only after it.
	States map[*Noun]any
	// loops are the write loops running (writeLoop): one on SQLite,
	// Options.Writers on a backend with several writer connections.
	loops    sync.WaitGroup
	nLoops   int // how many (WriterStats.Loops)
	loopDone chan struct{}
	closeMu  sync.RWMutex
	closed   bool
}

// Options configure Open. Zero values take defaults.
type Options struct {
	Now     func() time.Time
	MaxSkew time.Duration // HLC clamp for remote stamps; default 1 minute
	Bus     kassa.Publisher
	Live    kassa.Publisher // see DB.Live
	Log     *slog.Logger
	Readers int // read pool size; default max(4, GOMAXPROCS)
	// migrateTo stops the migrations after this number (tests: a store of
	// an older release); 0 applies them all.
	MigrateTo int
	// WriterPriority is how many nice levels the write loop's OS thread is
	// raised above the rest of the process (Linux; needs CAP_SYS_NICE or
	// RLIMIT_NICE). Every write waits on that one thread, so it should not
	// queue for a CPU behind request handlers. 0: DefaultWriterPriority;
	// negative: leave the thread's priority alone.
	WriterPriority int
	// Hub opens the hub's store: the top of replication. Its event log is
	// not replicated (edges do not receive events), so its events are
	// written without change records.
	Hub bool
	// Writers is how many write loops, each with its own connection and
	// group commit, run the units on a backend whose units may commit
	// concurrently (PostgreSQL); 0: one per CPU the process may use, at
	// least two. SQLite has one writer whatever this says.
	Writers int
}

// Open opens (creating if needed) the store at path, applies migrations and
// loads or creates the node id.
func Open(ctx context.Context, path string, o Options) (*DB, error) {
	o = o.withDefaults()
	if b, err := backendOf(path); b != nil || err != nil {
		if err != nil {
			return nil, err
		}
		return openBackend(ctx, b, path, o)
	}
	if err := OwnerOnly(path); err != nil {
		return nil, err
	}
	write, err := openWriter(path)
	if err != nil {
		return nil, err
	}
	db := &DB{path: path, Writer: write, Now: o.Now, Bus: o.Bus, Live: o.Live, Log: o.Log,
		Clock: hlc.NewClock(o.Now, o.MaxSkew), NewID: newUUIDv7, MaxSkew: o.MaxSkew, Hub: o.Hub}
	if err := db.prepare(ctx, o); err != nil {
		write.Close()
		return nil, err
	}
	return db.start(ctx, o)
}

// start makes the nouns' states, starts the write loop and loads the
// node's id: the part of Open every backend shares.
func (db *DB) start(ctx context.Context, o Options) (*DB, error) {
	db.writes, db.loopDone, db.committed = make(chan *writeReq, 1024), make(chan struct{}), make(chan struct{}, 1)
	db.States = map[*Noun]any{}
	for _, n := range Registered() {
		if n.NewState != nil {
			db.States[n] = n.NewState(db)
		}
	}
	n := 1
	if db.Dialect != nil {
		n = o.Writers
	}
	db.loops.Add(n)
	db.nLoops = n
	for i := range n {
		go db.newWriter().writeLoop(o.WriterPriority, i == 0)
	}
	go func() { db.loops.Wait(); close(db.loopDone) }()
	if err := db.loadNode(ctx); err != nil {
		db.Close()
		return nil, err
	}
	return db, nil
}

// withDefaults is o with its zero values replaced by their defaults.
func (o Options) withDefaults() Options {
	if o.Now == nil {
		o.Now = func() time.Time { return time.Now().UTC() }
	}
	if o.MaxSkew == 0 {
		o.MaxSkew = time.Minute
	}
	if o.Log == nil {
		o.Log = slog.New(slog.DiscardHandler)
	}
	if o.WriterPriority == 0 {
		o.WriterPriority = DefaultWriterPriority
	}
	if o.Readers == 0 {
		o.Readers = max(4, runtime.GOMAXPROCS(0))
	}
	if o.Writers <= 0 {
		// Measured on two cores (docs/performance.md, session
		// pgingest2): one writer's round trips left a core idle; two and
		// four did alike for one hub, two better for three hubs. With
		// joined pushes (session 22) one a hub does better for three hubs
		// on that PostgreSQL: the hub's --writers says so.
		o.Writers = max(2, runtime.GOMAXPROCS(0))
	}
	return o
}

// openWriter opens the store's one writer connection.
func openWriter(path string) (*sql.DB, error) {
	q := url.Values{}
	q.Set("_busy_timeout", "10000")
	q.Set("_journal_mode", "WAL")
	q.Set("_synchronous", "FULL")
	q.Set("_foreign_keys", "1")
	q.Set("_txlock", "immediate")
	q.Set("_stmt_cache_size", strconv.Itoa(writerStmtCache))
	write, err := sql.Open(DriverName, "file:"+path+"?"+q.Encode())
	if err != nil {
		return nil, fmt.Errorf("sqlite: open %s: %w", path, err)
	}
	write.SetMaxOpenConns(1)
	write.SetMaxIdleConns(1)
	write.SetConnMaxLifetime(0)
	return write, nil
}

// writerStmtCache is how many statements run by text (not prepared
// through the engine's caches: a push's first read, whose text is built
// from the push's shape; the applied changes' rows) the writer's
// connection keeps prepared, least recently used out first (the
// driver's _stmt_cache_size). Preparing them again at every push was a
// tenth of a SQLite hub's CPU under the ingest (docs/performance.md,
// session 19); a statement kept holds a few KiB of SQLite's memory.
const writerStmtCache = 32

// prepare migrates the store, makes the node's indexes, opens the reader
// pool and prepares the writer's savepoints.
func (db *DB) prepare(ctx context.Context, o Options) error {
	if err := db.migrate(ctx, o.MigrateTo); err != nil {
		return err
	}
	indexes := edgeIndexes
	if o.Hub {
		indexes = hubIndexes
	}
	if _, err := db.Writer.ExecContext(ctx, indexes); err != nil {
		return fmt.Errorf("sqlite: node indexes: %w", err)
	}
	rdb, err := openReaders(db.path)
	if err != nil {
		return err
	}
	db.Reader = &readPool{DB: rdb}
	return db.preparePools(ctx, o)
}

// openReaders opens the store's pool of read-only connections.
func openReaders(path string) (*sql.DB, error) {
	rq := url.Values{}
	rq.Set("_busy_timeout", "10000")
	rq.Set("_query_only", "1")
	rq.Set("_foreign_keys", "1")
	rq.Set("_cache_size", readerCacheKiB) // a reader's cache serves one read (readerCacheKiB)
	rdb, err := sql.Open(DriverName, "file:"+path+"?"+rq.Encode())
	if err != nil {
		return nil, fmt.Errorf("sqlite: open readers %s: %w", path, err)
	}
	return rdb, nil
}

// preparePools sizes the reader pool and prepares the writer's
// savepoints.
func (db *DB) preparePools(ctx context.Context, o Options) error {
	db.Reader.SetMaxOpenConns(o.Readers)
	db.Reader.SetMaxIdleConns(o.Readers)
	db.savepoints = map[string]*sql.Stmt{}
	for _, q := range []string{"SAVEPOINT unit", "RELEASE unit", "ROLLBACK TO unit"} {
		st, err := db.Writer.PrepareContext(ctx, q)
		if err != nil {
			return fmt.Errorf("sqlite: prepare %s: %w", q, err)
		}
		db.savepoints[q] = st
	}
	return nil
}

// DefaultWriterPriority is Options.WriterPriority's default: the writer's
// thread runs 19 nice levels above the others (the most an unprivileged
// process at nice 0 can be allowed), so that handlers, the GC and other
// load do not take its CPU at a rush. The measurements behind it are in
// docs/decisions.md, "Order-flow performance".
const DefaultWriterPriority = 19

func newUUIDv7() string { return uuid.Must(uuid.NewV7()).String() }

// maxCachedStmts bounds the prepared statements kept per pool: queries
// built from filters vary, and past this they simply run unprepared.
const maxCachedStmts = 512

// readPool is the read-only connection pool with prepared statements kept
// by query text: preparing a statement cost more than running it.
type readPool struct {
	*sql.DB
	stmts   sync.Map
	n       atomic.Int32
	dialect Dialect // nil: SQLite
}

func (r *readPool) stmt(ctx context.Context, q string) *sql.Stmt {
	if st, ok := r.stmts.Load(q); ok {
		return st.(*sql.Stmt)
	}
	if r.n.Load() >= maxCachedStmts {
		return nil
	}
	st, err := r.DB.PrepareContext(ctx, q)
	if err != nil {
		return nil // let the plain call report the error
	}
	if old, loaded := r.stmts.LoadOrStore(q, st); loaded {
		st.Close()
		return old.(*sql.Stmt)
	}
	r.n.Add(1)
	return st
}

// QueryContext runs q as a prepared statement.
func (r *readPool) QueryContext(ctx context.Context, q string, args ...any) (*sql.Rows, error) {
	if st := r.stmt(ctx, q); st != nil {
		return st.QueryContext(ctx, args...)
	}
	return r.DB.QueryContext(ctx, q, args...)
}

// QueryRowContext runs q as a prepared statement.
func (r *readPool) QueryRowContext(ctx context.Context, q string, args ...any) *sql.Row {
	if st := r.stmt(ctx, q); st != nil {
		return st.QueryRowContext(ctx, args...)
	}
	return r.DB.QueryRowContext(ctx, q, args...)
}

// snapshot is one read transaction on a reader connection. The queries a
// request runs in it see one state of the store and share the
// connection's page cache: run one by one, each query is a read
// transaction of its own, and SQLite drops a connection's cache at the
// start of every read transaction that follows a commit (under trade,
// every one), so each query read its pages anew.
type snapshot struct {
	tx   *sql.Tx
	pool *readPool
}

// snapshot begins a read transaction; close it (done) before waiting on
// the writer, so that a request never holds a reader while it queues.
func (r *readPool) Snapshot(ctx context.Context) (*snapshot, error) {
	tx, err := r.DB.BeginTx(ctx, &sql.TxOptions{ReadOnly: true})
	if err != nil {
		return nil, fmt.Errorf("sqlite: begin read: %w", err)
	}
	return &snapshot{tx: tx, pool: r}, nil
}

// inSnapshot returns q as is when it already is one transaction (a
// snapshot, a unit of work), or a new snapshot of the pool q is, which
// the caller ends with the returned func.
func InSnapshot(ctx context.Context, q Querier) (Querier, func(), error) {
	r, ok := q.(*readPool)
	if !ok {
		return q, func() {}, nil
	}
	s, err := r.Snapshot(ctx)
	if err != nil {
		return nil, nil, err
	}
	return s, s.Done, nil
}

// done ends the read transaction.
func (s *snapshot) Done() { s.tx.Rollback() }

// QueryContext runs q in the snapshot, prepared once per connection.
func (s *snapshot) QueryContext(ctx context.Context, q string, args ...any) (*sql.Rows, error) {
	if st := s.cached(q); st != nil {
		return s.tx.StmtContext(ctx, st).QueryContext(ctx, args...)
	}
	return s.tx.QueryContext(ctx, q, args...)
}

// QueryRowContext runs q in the snapshot, prepared once per connection.
func (s *snapshot) QueryRowContext(ctx context.Context, q string, args ...any) *sql.Row {
	if st := s.cached(q); st != nil {
		return s.tx.StmtContext(ctx, st).QueryRowContext(ctx, args...)
	}
	return s.tx.QueryRowContext(ctx, q, args...)
}

// cached returns the pool's prepared statement of q, or nil: then q runs
// unprepared this once while it is prepared in the background. Preparing
// here would wait for a second connection while holding one — with every
// reader held by a snapshot, forever.
func (s *snapshot) cached(q string) *sql.Stmt {
	if st, ok := s.pool.stmts.Load(q); ok {
		return st.(*sql.Stmt)
	}
	go s.pool.stmt(context.Background(), q)
	return nil
}

// Close waits for queued writes to finish, then closes both pools.
func (db *DB) Close() error {
	db.closeMu.Lock()
	if db.closed {
		db.closeMu.Unlock()
		return nil
	}
	db.closed = true
	close(db.writes)
	db.closeMu.Unlock()
	<-db.loopDone
	return errors.Join(db.Reader.Close(), db.Writer.Close())
}

// Ping checks that the store answers reads; /readyz uses it.
func (db *DB) Ping(ctx context.Context) error {
	var one int
	return db.Reader.QueryRowContext(ctx, "SELECT 1").Scan(&one)
}

// hubIndexes are indexes only the hub's queries use, made at every hub
// start (an edge's writes would pay for them for nothing): outbox_scope
// counts what an edge has yet to pull from the index alone — its
// location's entries and the org-wide ones after its cursor, not its own
// (edge_report.go).
const hubIndexes = `CREATE INDEX IF NOT EXISTS outbox_scope ON outbox(org_id, location_id, seq, origin)`

// edgeIndexes drops at every edge start the hub's indexes an edge may hold:
// v0.6.0's migration 0015 made outbox_scope at every node (0015 was
// changed afterwards), so an upgraded edge paid an index write per outbox
// row for nothing. Dropped here, not by a migration, so that a hub, which
// keeps the index, never rebuilds it over its whole outbox.
const edgeIndexes = `DROP INDEX IF EXISTS outbox_scope`

// migrate applies the migrations not applied yet; up to number last, if
// not 0 (tests open a store of an older release with it).
func (db *DB) migrate(ctx context.Context, last int) error {
	if _, err := db.Writer.ExecContext(ctx, `CREATE TABLE IF NOT EXISTS schema_migrations (name TEXT PRIMARY KEY, applied_at TEXT NOT NULL) STRICT`); err != nil {
		return fmt.Errorf("sqlite: migrations table: %w", err)
	}
	names, err := fs.Glob(Migrations, "migrations/*.sql")
	if err != nil {
		return err
	}
	sort.Strings(names)
	for _, name := range names {
		if last > 0 && MigrationNumber(name) > last {
			break
		}
		var n int
		if err := db.Writer.QueryRowContext(ctx, `SELECT count(*) FROM schema_migrations WHERE name = ?`, name).Scan(&n); err != nil {
			return err
		}
		if n > 0 {
			continue
		}
		body, err := fs.ReadFile(Migrations, name)
		if err != nil {
			return err
		}
		tx, err := db.Writer.BeginTx(ctx, nil)
		if err != nil {
			return err
		}
		if _, err := tx.ExecContext(ctx, string(body)); err != nil {
			tx.Rollback()
			return fmt.Errorf("sqlite: migration %s: %w", name, err)
		}
		if _, err := tx.ExecContext(ctx, `INSERT INTO schema_migrations (name, applied_at) VALUES (?, ?)`, name, db.Now().Format(TimeFormat)); err != nil {
			tx.Rollback()
			return err
		}
		if err := tx.Commit(); err != nil {
			return fmt.Errorf("sqlite: migration %s: %w", name, err)
		}
	}
	return nil
}

// loadNode reads this node's id (creating it on first start) and moves the
// clock past the newest stamp this node wrote, so stamps never go back
// across a restart with a wall clock that did.
func (db *DB) loadNode(ctx context.Context) error {
	id, err := db.Meta(ctx, "node_id")
	if err != nil {
		return err
	}
	if id == "" {
		id = db.NewID()
		if err := db.SetMeta(ctx, "node_id", id); err != nil {
			return err
		}
	}
	db.NodeID = id
	var last sql.NullString
	if err := db.Reader.QueryRowContext(ctx, `SELECT max(hlc) FROM outbox`).Scan(&last); err != nil {
		return err
	}
	if last.Valid {
		if ts, err := hlc.Parse(last.String); err == nil {
			db.Clock.Observe(ts)
		}
	}
	return nil
}

// AdoptNodeID makes id this node's id from now on: an edge takes the id its
// hub minted at enrolment. Only a store that has made no change of its own
// can: every change record and row stamp names its origin, and rewriting
// them would make the hub see another node's history. Errors: EConflict
// when the store has changes in its outbox.
func (db *DB) AdoptNodeID(ctx context.Context, id string) error {
	if !kassa.ValidID(id) {
		return kassa.Errorf(kassa.EInvalid, "node id %q is not an id", id)
	}
	var n int64
	if err := db.Writer.QueryRowContext(ctx, `SELECT count(*) FROM outbox`).Scan(&n); err != nil {
		return err
	}
	if n > 0 {
		return kassa.Errorf(kassa.EConflict, "this store already has %d changes of its own (it ran standalone); enrol a store with an empty data directory", n)
	}
	if err := db.SetMeta(ctx, "node_id", id); err != nil {
		return err
	}
	db.NodeID = id
	return nil
}

// Meta returns a node_meta value, or "" when unset.
func (db *DB) Meta(ctx context.Context, key string) (string, error) {
	var v string
	err := db.Writer.QueryRowContext(ctx, `SELECT value FROM node_meta WHERE key = ?`, key).Scan(&v)
	if errors.Is(err, sql.ErrNoRows) {
		return "", nil
	}
	return v, err
}

// SetMeta stores a node_meta value.
func (db *DB) SetMeta(ctx context.Context, key, value string) error {
	_, err := db.Writer.ExecContext(ctx, `INSERT INTO node_meta (key, value) VALUES (?, ?) ON CONFLICT(key) DO UPDATE SET value = excluded.value`, key, value)
	return err
}

// storeFileMode is the mode of a store file: it holds password hashes,
// customers and sales, so only the node's own account reads it. SQLite
// gives the WAL and shared-memory files the mode of the store file.
const storeFileMode = 0o600

// ownerOnly creates the store file at path with storeFileMode before
// SQLite does (SQLite's own is 0644 less the umask), and takes the group's
// and others' access away from an existing one and its WAL and shared
// memory (a store made by an older release).
func OwnerOnly(path string) error {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE|os.O_EXCL, storeFileMode)
	if err == nil {
		return f.Close()
	}
	if !errors.Is(err, os.ErrExist) {
		return fmt.Errorf("sqlite: create %s: %w", path, err)
	}
	for _, p := range []string{path, path + "-wal", path + "-shm"} {
		info, err := os.Stat(p)
		if errors.Is(err, os.ErrNotExist) {
			continue
		}
		if err != nil {
			return err
		}
		if info.Mode().Perm()&0o077 != 0 {
			if err := os.Chmod(p, info.Mode().Perm()&0o700); err != nil {
				return fmt.Errorf("sqlite: %s: %w", p, err)
			}
		}
	}
	return nil
}

// IsUniqueViolation reports whether err is a UNIQUE constraint failure,
// on any backend this binary links (SQLite's, or a registered one's).
func IsUniqueViolation(err error) bool {
	return anyDialect(err, Dialect.IsUniqueViolation)
}

// IsForeignKeyViolation reports whether err is a FOREIGN KEY constraint
// failure, on any backend this binary links.
func IsForeignKeyViolation(err error) bool {
	return anyDialect(err, Dialect.IsForeignKeyViolation)
}

// fmtTime formats t for storage.
func FmtTime(t time.Time) string { return t.UTC().Format(TimeFormat) }

// parseTime reads a stored timestamp.
func ParseTime(s string) time.Time {
	t, _ := time.Parse(TimeFormat, s)
	return t
}

// placeholders returns "?, ?, ?" for n.
func Placeholders(n int) string {
	return strings.TrimSuffix(strings.Repeat("?, ", n), ", ")
}

// querier is what a query runs on: a unit of work (*Tx) or the reader.
type Querier interface {
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
}
