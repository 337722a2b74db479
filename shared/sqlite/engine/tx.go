package engine

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"hash/fnv"
	"maps"
	"math"
	"math/rand/v2"
	"runtime/debug"
	"runtime/pprof"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"kassa.dev/shared/kassa"
	"kassa.dev/sync/change"
	"kassa.dev/sync/hlc"
)

// Tx is one write transaction. Row writes of replicated entities go through
// insert and update, which stamp the row and write its change record; events
// collected with emit are appended to the event log at the end of the unit
// (logEvents) and published on the bus once the transaction committed.
type Tx struct {
	// Tx runs the unit's statements: the batch's transaction (a *sql.Tx,
	// or on PostgreSQL a directTx).
	Tx     stmtRunner
	DB     *DB
	w      *writer // the write loop running the unit
	Now    time.Time
	events []kassa.Event // business events: logged, then published
	logged int           // how many of events are in the log already
	wakes  []kassa.Event // bus-only wake-ups (wake)
	// liveOrgs are the orgs whose live feeds the unit wakes (tx.live).
	liveOrgs []string
	// changed are the orgs whose rows of a watched noun the unit wrote
	// (changing), per noun: the noun's state hears of them (UnitWatcher).
	changed map[*Noun][]string
	// derived marks a unit whose events follow from merging other nodes'
	// changes (apply): every node derives them itself, so they are logged
	// here without a change record.
	derived bool
	// pendingLog are change records waiting to be written to the log
	// together (recordLater), logCols values each.
	pendingLog []any
	// later are row inserts waiting to be written together (InsertLater).
	later laterRows
	// pending: a statement of the unit may wait in the driver (ExecLater).
	pending bool
	// memo is what nouns' hooks read once for an apply's unit (Memo).
	memo map[any]any
}

// Memo returns what load returns for key, loaded once per unit when the
// unit applies other nodes' changes (ApplyTx): such a unit writes only
// replicated nouns, so a hook may keep for the unit what it read of a
// table no apply writes (an org's webhook endpoints, read for each event
// of a push). In any other unit load runs every time.
func (tx *Tx) Memo(key any, load func() (any, error)) (any, error) {
	if !tx.derived {
		return load()
	}
	if v, ok := tx.memo[key]; ok {
		return v, nil
	}
	v, err := load()
	if err != nil {
		return nil, err
	}
	if tx.memo == nil {
		tx.memo = map[any]any{}
	}
	tx.memo[key] = v
	return v, nil
}

// write runs fn as one atomic unit of work and returns once it is durable;
// the events fn emitted are in the event log in the same unit, and are
// published on the bus after the commit.
//
// Writes are group-committed: one goroutine owns the writer connection and
// runs queued units back to back inside one SQLite transaction, each under
// its own SAVEPOINT, then commits once. A unit that fails (or panics) is
// rolled back to its savepoint alone; the others commit. Under load this
// shares one fsync between many writes; alone, a unit is its own
// transaction, as before. No caller hears "done" before the COMMIT returned.
func (db *DB) Write(ctx context.Context, fn func(tx *Tx) error) error {
	return db.write(&writeReq{ctx: ctx, fn: fn, done: make(chan error, 1)})
}

// write queues req, waits for its commit and publishes what it emitted.
func (db *DB) write(req *writeReq) error {
	ctx := req.ctx
	db.closeMu.RLock()
	if db.closed {
		db.closeMu.RUnlock()
		return fmt.Errorf("sqlite: store is closed")
	}
	db.writes <- req
	db.closeMu.RUnlock()
	err := <-req.done
	if err == nil && db.Bus != nil {
		for _, e := range req.events {
			db.Bus.Publish(ctx, e)
		}
		for _, e := range req.wakes {
			db.Bus.Publish(ctx, e)
		}
	}
	if err == nil && db.Live != nil {
		for _, org := range req.liveOrgs {
			db.Live.Publish(ctx, kassa.Event{Type: kassa.EventLiveChange, OrgID: org})
		}
	}
	return err
}

// Committed is signalled (coalesced) after every commit that wrote
// something: the sync relay waits on it instead of polling. One reader.
func (db *DB) Committed() <-chan struct{} { return db.committed }

// exec runs one statement of a node-local table as a unit of work.
func (db *DB) Exec(ctx context.Context, query string, args ...any) error {
	return db.Write(ctx, func(tx *Tx) error {
		_, err := tx.ExecContext(ctx, query, args...)
		return err
	})
}

// writeReq is one queued unit of work.
type writeReq struct {
	ctx      context.Context
	fn       func(tx *Tx) error
	done     chan error
	err      error
	events   []kassa.Event
	wakes    []kassa.Event
	liveOrgs []string
	// changed is the unit's Tx.changed, set once it ran, whether it
	// failed or not.
	changed map[*Noun][]string
	// claim is the Idempotency-Key whose record the unit wrote, marked
	// recorded once the unit committed.
	claim *idemClaim
	// runs counts the unit's runs: a unit the backend ended to be run
	// again (Dialect.IsRetryable: a deadlock) runs up to maxRuns times.
	runs int
	// join, when set, lets the unit run joined with the units of its
	// kind queued beside it (join.go); cleared once it ran.
	join *joinReq
}

// maxRuns bounds the runs of a unit the backend keeps ending as retryable.
const maxRuns = 5

// maxBatch bounds how many units share one commit on SQLite, whose one
// writer's commit is an fsync that the units share. On a backend with
// several write loops it is maxBatchLoops: while one loop's transaction
// runs on, another commits, and a unit in a transaction of 64 waited for
// the 63 others (the hub's ingest on PostgreSQL, in turns: 4,300-5,000
// records/s at 64, 5,000-5,650 at 16, 4,100-4,750 at 8; docs/write-path.md
// "Joined pushes").
const (
	maxBatch      = 64
	maxBatchLoops = 16
)

// batchMax is the bound on a batch's units of db's loops.
func (db *DB) batchMax() int {
	if db.Dialect != nil {
		return maxBatchLoops
	}
	return maxBatch
}

// Checkpoints — folding the WAL back into the database file — cost the
// writer milliseconds during which every queued sale waits, so the write
// loop runs them in lulls: once nothing has been queued for
// checkpointLull after a commit. During a rush without lulls the WAL
// grows until walCapPages, where SQLite's own automatic checkpoint after
// a commit takes over (set in the connect hook). A store never gets
// there: a sale writes about 25 pages, and even at a rush a 25 ms gap
// comes within seconds; the cap bounds disk use and crash recovery (the
// WAL is read whole on open) should the writer never rest.
const (
	checkpointLull = 25 * time.Millisecond
	walCapPages    = 65536 // 256 MiB of 4 KiB pages
)

// WriterStats are the write loops' counters since Open: what ops watch to
// see whether the writer is the store's bottleneck (Busy close to the wall
// time, times the loops: one on SQLite, Options.Writers on PostgreSQL) and
// how well group commit packs units (Units / Batches).
type WriterStats struct {
	Batches     int64         // transactions run (each commits or rolls back once)
	Units       int64         // units of work run
	Failed      int64         // units that returned an error and rolled back alone
	Busy        time.Duration // time spent running batches, commits included
	Commit      time.Duration // time spent committing (the WAL write and fsync)
	Checkpoints int64         // checkpoints run in lulls
	Joined      int64         // units run joined with others of their kind (join.go)
	Queued      int           // units waiting for the writer now
	Loops       int           // write loops: one on SQLite, Options.Writers on PostgreSQL
	Raised      bool          // the writer's thread runs at a raised priority
}

// writerStats are WriterStats' counters, updated by the write loop only.
type writerStats struct {
	batches, units, failed, busy, commit, checkpoints, joined atomic.Int64
	raised                                                    atomic.Bool
}

// WriterStats returns the write loop's counters.
func (db *DB) WriterStats() WriterStats {
	s := &db.stats
	return WriterStats{
		Batches: s.batches.Load(), Units: s.units.Load(), Failed: s.failed.Load(),
		Busy: time.Duration(s.busy.Load()), Commit: time.Duration(s.commit.Load()),
		Checkpoints: s.checkpoints.Load(), Joined: s.joined.Load(), Queued: len(db.writes), Loops: db.nLoops, Raised: s.raised.Load(),
	}
}

// writer is what one write loop keeps to itself: on SQLite the one
// loop's, on PostgreSQL each of Options.Writers loops', which take units
// from the same queue and commit side by side (their row locks serialize
// what must be, Tx.LockRow).
type writer struct {
	db        *DB
	stmts     map[string]*sql.Stmt // prepared on the writer pool by this loop
	toPrepare map[string]bool      // met by this loop's units, prepared after the batch
	bound     boundStmts           // stmts bound to this loop's open transaction
	// logRows counts the change records the loop's open transaction
	// wrote to the log, where the engine numbers them (Dialect.LogCommitSQL).
	logRows int
	// notDirect: the backend's driver connection is not a DirectConn
	// (beginTx): the loop's transactions are database/sql's.
	notDirect bool
	direct    directTx // the loop's transaction on its driver connection, reused
}

func (db *DB) newWriter() *writer {
	return &writer{db: db, stmts: map[string]*sql.Stmt{}, toPrepare: map[string]bool{}}
}

// writeLoop runs units until db.writes is closed. Its goroutine is
// labelled kassa=writer for CPU profiles (go tool pprof -tagfocus
// kassa=writer shows the writers alone). With priority > 0, where the OS
// allows it, it runs on an OS thread of its own raised by that many nice
// levels: the SQLite work of every write runs there (first: the loop whose
// thread WriterTID names).
func (w *writer) writeLoop(priority int, first bool) {
	db := w.db
	defer db.loops.Done()
	pprof.SetGoroutineLabels(pprof.WithLabels(context.Background(), pprof.Labels("kassa", "writer")))
	if priority > 0 {
		tid, err := raiseThread(priority)
		if first {
			db.WriterTID.Store(int64(tid))
		}
		if err != nil {
			db.Log.Info("sqlite: the writer thread's priority is not raised; grant CAP_SYS_NICE or LimitNICE to raise it", "err", err)
		} else {
			db.stats.raised.Store(true)
		}
	}
	lull := time.NewTimer(checkpointLull)
	lull.Stop()
	uncheckpointed := false
	for {
		var req *writeReq
		ok := true
		if uncheckpointed {
			lull.Reset(checkpointLull)
			select {
			case req, ok = <-db.writes:
				lull.Stop()
			case <-lull.C:
				db.checkpoint()
				uncheckpointed = false
				continue
			}
		} else {
			req, ok = <-db.writes
		}
		if !ok {
			return
		}
		// Counted before they run, so a caller whose unit returned sees
		// it counted.
		db.stats.batches.Add(1)
		db.stats.units.Add(1)
		batch := db.drain([]*writeReq{req})
		began := time.Now()
		if w.runBatch(batch) {
			uncheckpointed = true
		}
		db.stats.busy.Add(int64(time.Since(began)))
		w.prepareSeen()
	}
}

// drain appends the units queued now to batch, up to batchMax, without
// waiting, and counts them.
func (db *DB) drain(batch []*writeReq) []*writeReq {
	had := len(batch)
	for more, most := true, db.batchMax(); more && len(batch) < most; {
		select {
		case r, ok := <-db.writes:
			if more = ok; ok {
				batch = append(batch, r)
			}
		default:
			more = false
		}
	}
	db.stats.units.Add(int64(len(batch) - had))
	return batch
}

// checkpoint copies what the WAL holds into the database file without
// waiting for readers (PASSIVE); the next write restarts the WAL when
// every frame was copied.
func (db *DB) checkpoint() {
	if db.Dialect != nil {
		return // a backend's own (PostgreSQL checkpoints by itself)
	}
	var busy, frames, copied int
	if err := db.Writer.QueryRow("PRAGMA wal_checkpoint(PASSIVE)").Scan(&busy, &frames, &copied); err != nil {
		db.Log.Warn("sqlite: checkpoint", "err", err)
		return
	}
	db.stats.checkpoints.Add(1)
}

// runBatch runs the batch, and the units queued while it runs (up to
// batchMax), in one transaction and reports whether it committed anything.
func (w *writer) runBatch(batch []*writeReq) bool {
	ctx, db := writerCtx, w.db
	var sqltx batchTx
	ok, inTx := 0, 0 // units that succeeded; units run in sqltx
	for i := 0; i < len(batch); i++ {
		r := batch[i]
		if sqltx == nil {
			var err error
			if sqltx, err = w.begin(ctx); err != nil {
				failUnits(batch[i:], fmt.Errorf("sqlite: begin: %w", err))
				break
			}
			w.logRows, inTx = 0, 0
		}
		n, err := w.runJoined(ctx, sqltx, batch[i:]) // n units ran joined (join.go)
		bare := n == 0 && inTx == 0 && db.Dialect != nil
		if err == nil && n == 0 {
			err = w.runInBatch(ctx, sqltx, r, bare)
		}
		if err != nil { // the transaction is unusable: fail the batch
			sqltx.Rollback()
			db.failBatch(batch, fmt.Errorf("sqlite: rollback to savepoint: %w", err))
			return false
		}
		switch inTx++; {
		case n > 0:
			ok, i = ok+n, i+n-1
		case r.err == nil:
			ok++
		case bare:
			sqltx.Rollback() // the unit alone: the next begins anew
			sqltx = nil
		}
		if i == len(batch)-1 {
			// Units queued while the batch ran share its commit: before,
			// they waited for it and then for a commit of their own.
			batch = db.drain(batch)
		}
	}
	commitErr := w.commitBatch(sqltx, ok)
	return w.settle(batch, ok, commitErr)
}

// settle answers the units of a batch once its transaction committed
// (commitErr nil) or not, and runs again those the backend ended as
// retryable; it reports whether anything committed.
func (w *writer) settle(batch []*writeReq, ok int, commitErr error) bool {
	db := w.db
	var again []*writeReq
	for _, r := range batch {
		db.settled(r.changed, r.err == nil && commitErr == nil)
		if r.runs++; r.err != nil && r.runs < maxRuns && db.dialect().IsRetryable(r.err) {
			again = append(again, r)
			continue
		}
		if r.claim != nil && r.err == nil && commitErr == nil {
			r.claim.recorded.Store(true)
		}
		if r.err == nil && commitErr != nil {
			r.err = fmt.Errorf("sqlite: commit: %w", commitErr)
		}
		r.done <- r.err
	}
	if len(again) > 0 {
		// After the commit: the batch's row locks are released, so the
		// unit does not meet the one it deadlocked with again.
		return w.rerun(again) || (ok > 0 && commitErr == nil)
	}
	return ok > 0 && commitErr == nil
}

// rerun runs again, in a batch of their own, units the backend ended as
// retryable (a deadlock between two hubs' units: each locked a row the
// other wanted).
func (w *writer) rerun(units []*writeReq) bool {
	runs := 0
	for _, r := range units {
		r.err, r.changed, r.claim = nil, nil, nil
		runs = max(runs, r.runs)
	}
	// A short pause, longer run after run and jittered, so that the unit
	// that won the deadlock takes the row the loser just let go before
	// the loser's rerun takes it back (and deadlocks with it again).
	time.Sleep(time.Duration(runs) * (2*time.Millisecond + rand.N(3*time.Millisecond)))
	return w.runBatch(units)
}

// LockRow locks the row id of table until the unit's transaction ends, on
// a backend with several writers (Dialect.LockRowsSQL): a unit that changes
// an order's money, a gift card's balance or a loyalty account's points
// calls it first, so that a unit on another hub changing the same row
// waits and then reads what this one wrote. SQLite's one writer already
// runs one unit at a time: nothing to do there. A deadlock between two
// units ends one of them, which the writer runs again (rerun).
func (tx *Tx) LockRow(ctx context.Context, table, id string) error {
	return tx.LockRows(ctx, table, []string{id})
}

// LockRows is LockRow for many rows, in id order, a statement for up to
// 512 (the list padded to a power of two with its last id, so that a few
// statement texts serve every count).
func (tx *Tx) LockRows(ctx context.Context, table string, ids []string) error {
	if len(ids) == 0 || tx.DB.dialect().LockRowsSQL(table, 1) == "" {
		return nil
	}
	ids = slices.Sorted(slices.Values(ids))
	for c := range slices.Chunk(ids, 512) {
		args := padded(c)
		if _, err := tx.ExecContext(ctx, tx.DB.dialect().LockRowsSQL(table, len(args)), args...); err != nil {
			return err
		}
	}
	return nil
}

// LockKeys serializes the units that lock the same keys (scope and id),
// until each unit's transaction ends, on a backend with several writers
// (Dialect.LockKeysSQL): unlike LockRows it locks no row, so a unit that
// writes those rows without asking (a sync apply completing an order)
// never waits for it. The kitchen's ticket units lock their orders so.
// Keys are taken in one order (a 64-bit hash of each, sorted), so two
// units locking overlapping keys do not deadlock on each other.
func (tx *Tx) LockKeys(ctx context.Context, scope string, ids []string) error {
	if len(ids) == 0 || tx.DB.dialect().LockKeysSQL(1) == "" {
		return nil
	}
	keys := make([]int64, len(ids))
	for i, id := range ids {
		h := fnv.New64a()
		h.Write([]byte(scope + "\x00" + id))
		keys[i] = int64(h.Sum64())
	}
	slices.Sort(keys)
	keys = slices.Compact(keys)
	for c := range slices.Chunk(keys, 512) {
		args := padded(c) // a key twice in a row: taken once more by its holder
		if _, err := tx.ExecContext(ctx, tx.DB.dialect().LockKeysSQL(len(args)), args...); err != nil {
			return err
		}
	}
	return nil
}

// padded is c as statement arguments, padded with its last element to
// the next power of two: a few statement texts serve every count.
func padded[T any](c []T) []any {
	n := 1
	for n < len(c) {
		n *= 2
	}
	args := make([]any, n)
	for i := range args {
		args[i] = c[min(i, len(c)-1)]
	}
	return args
}

// begin opens the loop's transaction and runs the dialect's BeginSQL
// in it.
func (w *writer) begin(ctx context.Context) (batchTx, error) {
	sqltx, err := w.beginTx(ctx)
	if err != nil {
		return nil, err
	}
	if q := w.db.dialect().BeginSQL(); q != "" {
		// Its result is not read: it goes with the first unit's first statement.
		if _, err := sqltx.ExecContext(Later(ctx), q); err != nil {
			sqltx.Rollback()
			return nil, err
		}
	}
	return sqltx, nil
}

// beginTx begins the transaction on the loop's driver connection itself
// where the backend's driver allows it (directTx), else through
// database/sql.
func (w *writer) beginTx(ctx context.Context) (batchTx, error) {
	if w.db.Dialect != nil && !w.notDirect {
		direct, err := w.beginDirect(ctx)
		if err != nil {
			return nil, err
		}
		if direct {
			return &w.direct, nil
		}
		w.notDirect = true
	}
	sqltx, err := w.db.Writer.BeginTx(ctx, nil)
	if err != nil {
		return nil, err
	}
	return sqltx, nil
}

// runInBatch runs unit r in the batch's transaction between a savepoint
// and its release; a unit that fails (r.err) is rolled back to its
// savepoint. It returns an error only when that rollback failed: the
// transaction is then unusable.
//
// A bare unit, the first of its transaction on PostgreSQL, runs without
// a savepoint: the caller rolls the transaction back when it fails (two
// round trips and a subtransaction fewer a transaction).
func (w *writer) runInBatch(ctx context.Context, sqltx batchTx, r *writeReq, bare bool) error {
	if r.err = r.ctx.Err(); r.err != nil {
		return nil
	}
	if bare {
		return w.runBare(sqltx, r)
	}
	if _, r.err = w.savepoint(Later(ctx), sqltx, "SAVEPOINT unit"); r.err != nil {
		return nil
	}
	logRows := w.logRows
	if r.err = w.runUnit(sqltx, r, endReleased); r.err == nil {
		// The release sends the unit's statements waiting (ExecLater):
		// their failure is the unit's, rolled back as its own. When none
		// waits it waits itself, for the next unit's first statement or
		// the commit (it cannot fail in a sound transaction).
		if _, r.err = w.savepoint(laterIfIdle(ctx), sqltx, "RELEASE unit"); r.err == nil {
			return nil
		}
		w.db.stats.failed.Add(1)
	}
	w.logRows = logRows // its records are undone with it
	_, err := w.savepoint(ctx, sqltx, "ROLLBACK TO unit")
	if err == nil {
		_, err = w.savepoint(ctx, sqltx, "RELEASE unit")
	}
	w.db.undone(r.changed) // its writes are undone
	return err
}

// runBare runs r as the first unit of sqltx, without a savepoint; when it
// fails its writes are undone with the transaction (runBatch).
func (w *writer) runBare(sqltx batchTx, r *writeReq) error {
	if r.err = w.runUnit(sqltx, r, endFlushed); r.err != nil {
		w.db.undone(r.changed)
	}
	return nil
}

// unitEnd is how a unit's statements waiting in the driver (ExecLater)
// are sent before it counts as succeeded.
type unitEnd int

const (
	endReleased unitEnd = iota // by its RELEASE (runInBatch)
	endFlushed                 // by FlushLater: a bare unit has no RELEASE
)

// runUnit runs r in sqltx and counts it when it failed.
func (w *writer) runUnit(sqltx batchTx, r *writeReq, end unitEnd) error {
	db := w.db
	tx := &Tx{Tx: sqltx, DB: db, w: w, Now: db.Now().UTC().Truncate(time.Millisecond)}
	err := runUnit(r, tx)
	switch {
	case err != nil:
		err = tx.keptFailure(r.ctx, err)
	case end == endFlushed:
		err = tx.FlushLater(r.ctx)
	}
	r.changed = tx.changed
	if err != nil {
		db.stats.failed.Add(1)
	} else {
		r.events, r.wakes, r.liveOrgs = tx.events, tx.wakes, tx.liveOrgs
	}
	return err
}

// failUnits fails units that did not run.
func failUnits(units []*writeReq, err error) {
	for _, r := range units {
		r.err = err
	}
}

// failBatch fails every unit of a batch whose transaction did not commit
// (their writes, if any, are undone).
func (db *DB) failBatch(batch []*writeReq, err error) {
	for _, r := range batch {
		db.undone(r.changed)
		r.done <- err
	}
}

// commitBatch commits the batch's transaction when ok units of it
// succeeded (and rolls it back when none did), and wakes the watchers of
// commits.
func (w *writer) commitBatch(sqltx batchTx, ok int) error {
	if ok == 0 {
		if sqltx != nil {
			sqltx.Rollback()
		}
		return nil
	}
	db, began := w.db, time.Now()
	var place BeforeCommitAnswer
	var after AfterCommitAnswer
	err := w.logCommit(sqltx, &place)
	if err == nil {
		err = w.keepAfterCommit(sqltx, &after)
	}
	if err != nil {
		sqltx.Rollback()
	} else {
		err = sqltx.Commit()
	}
	db.stats.commit.Add(int64(time.Since(began)))
	if err == nil && db.Dialect != nil {
		if perr := db.Dialect.AfterCommit(context.Background(), db.Writer, place.Value, after); perr != nil {
			db.Log.Warn("sqlite: after commit", "err", perr)
		}
	}
	if err == nil {
		select {
		case db.committed <- struct{}{}:
		default:
		}
	}
	return err
}

// keepAfterCommit has the driver send the dialect's AfterCommitSQL right
// after the COMMIT, in its round trip: on PostgreSQL that statement ran on
// another pooled connection once the COMMIT had answered, a round trip
// and a wake-up on both sides more a transaction. A statement the dialect
// cannot give now is not sent: AfterCommit then does its work itself.
func (w *writer) keepAfterCommit(sqltx batchTx, after *AfterCommitAnswer) error {
	db, ctx := w.db, context.Background()
	if db.Dialect == nil {
		return nil
	}
	q, args, err := db.Dialect.AfterCommitSQL(ctx, db.Writer)
	if err != nil || q == "" {
		return nil
	}
	_, err = sqltx.ExecContext(AfterCommit(ctx, after), q, args...)
	return err
}

// errPlaceUnread: the driver ran the commit's LogCommitSQL at once instead
// of keeping it for the COMMIT's round trip (PipeBeforeCommit).
var errPlaceUnread = errors.New("sqlite: the driver did not keep the commit's log statement: its place is unread")

// logCommit has the driver send the dialect's LogCommitSQL last before
// the COMMIT, in the COMMIT's round trip, when the transaction wrote the
// log: once a transaction, whatever its units wrote. Its answer, the
// commit's place in the log's order, comes with the COMMIT's (place).
// Until 2026-11-29 it was read before the COMMIT, a round trip of its own
// (docs/performance.md, "The commit's round trips").
func (w *writer) logCommit(sqltx batchTx, place *BeforeCommitAnswer) error {
	q := w.db.dialect().LogCommitSQL()
	if q == "" || w.logRows == 0 {
		return nil
	}
	if _, err := sqltx.ExecContext(BeforeCommit(writerCtx, place), q, w.logRows); err != nil {
		return err
	}
	if !place.Kept {
		return errPlaceUnread
	}
	return nil
}

// savepoint runs a savepoint statement, prepared once: run unprepared for
// every unit, parsing them cost a quarter of the writer's time. (A
// directTx runs it by its text: the driver prepares what it sends.)
func (w *writer) savepoint(ctx context.Context, tx batchTx, stmt string) (sql.Result, error) {
	if st := w.db.savepoints[stmt]; st != nil {
		if sqltx, ok := tx.(*sql.Tx); ok {
			return w.bound.get(sqltx, st).ExecContext(ctx)
		}
	}
	return tx.ExecContext(ctx, stmt)
}

// runUnit runs one unit, turning a panic into an error so that one bad
// unit cannot take the writer (and the other units) down.
func runUnit(r *writeReq, tx *Tx) (err error) {
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("sqlite: panic in write: %v\n%s", p, debug.Stack())
		}
	}()
	if r.claim, err = tx.recordClaim(r.ctx); err != nil {
		return err
	}
	if err := r.fn(tx); err != nil {
		return err
	}
	if err := tx.flushLater(r.ctx); err != nil {
		return err
	}
	if err := tx.flushLog(r.ctx); err != nil {
		return err
	}
	return tx.logEvents(r.ctx)
}

// ExecCached runs a statement prepared once on the writer connection: the
// row writes of the change capture repeat a few dozen statements, and
// preparing each anew cost more than running it. A statement seen for the
// first time runs unprepared and is prepared after its batch committed,
// when the writer connection is free. Only a write loop calls it. The
// unit's inserts waiting (InsertLater) are written first.
func (tx *Tx) ExecCached(ctx context.Context, query string, args ...any) (sql.Result, error) {
	if err := tx.flushLater(ctx); err != nil {
		return nil, err
	}
	return tx.execCached(ctx, query, args...)
}

// execCached is ExecCached without the inserts waiting (flushLater's own).
func (tx *Tx) execCached(ctx context.Context, query string, args ...any) (sql.Result, error) {
	if st := tx.cached(query); st != nil {
		return tx.bind(st).ExecContext(ctx, args...)
	}
	return tx.Tx.ExecContext(ctx, query, args...)
}

// cached returns the writer's prepared statement of query, or nil (and
// notes it for preparing after the batch).
func (tx *Tx) cached(query string) *sql.Stmt {
	w := tx.w
	if _, direct := tx.Tx.(*directTx); direct {
		return nil // the driver prepares what it sends itself
	}
	if st := w.stmts[query]; st != nil {
		return st
	}
	if len(w.stmts)+len(w.toPrepare) < maxCachedStmts {
		w.toPrepare[query] = true
	}
	return nil
}

// ExecContext runs a statement of the unit as a cached prepared statement.
func (tx *Tx) ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error) {
	return tx.ExecCached(ctx, query, args...)
}

// QueryContext runs a query of the unit as a cached prepared statement.
func (tx *Tx) QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error) {
	if err := tx.flushLater(ctx); err != nil {
		return nil, err
	}
	if st := tx.cached(query); st != nil {
		return tx.bind(st).QueryContext(ctx, args...)
	}
	return tx.Tx.QueryContext(ctx, query, args...)
}

// QueryRowContext runs a query of the unit as a cached prepared statement.
// A failed write of the unit's inserts waiting fails the unit at its end
// (and, on PostgreSQL, this query).
func (tx *Tx) QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row {
	tx.flushLater(ctx)
	if st := tx.cached(query); st != nil {
		return tx.bind(st).QueryRowContext(ctx, args...)
	}
	return tx.Tx.QueryRowContext(ctx, query, args...)
}

// boundStmts are the writer's prepared statements bound to one open
// transaction (sql.Tx.StmtContext), each bound once per transaction: a
// catch-up's apply unit runs the same few statements thousands of times,
// and binding allocated a statement each time. The transaction closes
// them when it ends.
type boundStmts struct {
	tx    *sql.Tx
	stmts map[*sql.Stmt]*sql.Stmt
}

// bind returns st bound to the unit's transaction.
func (tx *Tx) bind(st *sql.Stmt) *sql.Stmt { return tx.w.bound.get(tx.Tx.(*sql.Tx), st) }

// get returns st bound to tx, binding it at first use in tx. (Bound
// without the unit's context: a statement bound under a context already
// cancelled would fail every later unit of the transaction.)
func (b *boundStmts) get(tx *sql.Tx, st *sql.Stmt) *sql.Stmt {
	if b.tx != tx {
		b.tx, b.stmts = tx, map[*sql.Stmt]*sql.Stmt{}
	}
	if s := b.stmts[st]; s != nil {
		return s
	}
	s := tx.StmtContext(context.Background(), st)
	b.stmts[st] = s
	return s
}

// prepareSeen prepares the statements execCached met for the first time.
func (w *writer) prepareSeen() {
	for q := range w.toPrepare {
		if st, err := w.db.Writer.Prepare(q); err == nil {
			w.stmts[q] = st
		}
		delete(w.toPrepare, q)
	}
}

// emit records a business event of the unit: at the end of the unit
// (when fn returned nil) it is appended to the event log with the unit's
// other writes, and after the commit it is published on the bus. data is
// encoded then, so it may still be filled in after emit.
func (tx *Tx) Emit(orgID, locationID, typ string, data any) {
	tx.events = append(tx.events, kassa.Event{
		ID: tx.DB.NewID(), Type: typ, OrgID: orgID, LocationID: locationID,
		OccurredAt: tx.Now, Data: data,
	})
}

// live marks, once per unit and org, the org's live feeds for a wake-up
// after the commit (DB.Live) when the unit stored a change some topic
// carries.
func (tx *Tx) live(orgID, entity string) {
	if tx.DB.Live == nil || slices.Contains(tx.liveOrgs, orgID) {
		return
	}
	if _, _, ok := kassa.LiveTopic(entity); ok {
		tx.liveOrgs = append(tx.liveOrgs, orgID)
	}
}

// wake queues a bus-only notification for after the commit: not a business
// event and not logged (the kitchen screens' kassa.EventKDSTicket, whose
// durable record is kds_events).
func (tx *Tx) Wake(orgID, locationID, typ string, data any) {
	tx.wakes = append(tx.wakes, kassa.Event{
		ID: tx.DB.NewID(), Type: typ, OrgID: orgID, LocationID: locationID,
		OccurredAt: tx.Now, Data: data,
	})
}

// logEvents appends the unit's emitted events to the event log. An
// event is a replicated append-only row (entity "event") with its change
// record, so an edge's events travel to the hub with its other changes;
// events derived by a merge (tx.derived) and the hub's own (the top of
// replication: no node pulls events from it) are written without one.
func (tx *Tx) logEvents(ctx context.Context) error {
	for ; tx.logged < len(tx.events); tx.logged++ {
		e := &tx.events[tx.logged]
		if !kassa.IsEventType(e.Type) {
			return fmt.Errorf("sqlite: event type %q is not in the catalog", e.Type)
		}
		data, err := json.Marshal(e.Data)
		if err != nil {
			return fmt.Errorf("sqlite: encode event %s: %w", e.Type, err)
		}
		if tx.derived || tx.DB.Hub {
			err = tx.ExecLater(ctx, `INSERT INTO events (id, org_id, location_id, type, data, occurred_at, created_at, updated_at, hlc, origin)
				VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`, e.ID, e.OrgID, NullString(e.LocationID), e.Type, string(data),
				FmtTime(e.OccurredAt), FmtTime(tx.Now), FmtTime(tx.Now), tx.DB.Clock.Now().String(), tx.DB.NodeID)
		} else {
			err = tx.logEdgeEvent(ctx, e, data)
		}
		if err != nil {
			return fmt.Errorf("sqlite: log event %s: %w", e.Type, err)
		}
		if d := kassa.CauseDepth(ctx); d > 0 {
			if err := tx.ExecLater(ctx, `INSERT INTO event_causes (event_id, depth) VALUES (?, ?)`, e.ID, d); err != nil {
				return fmt.Errorf("sqlite: log event %s: %w", e.Type, err)
			}
		}
		if err := tx.eventLogged(ctx, e.ID, e.OrgID, e.Type, data); err != nil {
			return fmt.Errorf("sqlite: after logging event %s: %w", e.Type, err)
		}
	}
	return nil
}

// logEdgeEvent writes an event this edge made: its row, and its change
// record without fields, which the outbox's readers take from the row
// (outboxFields): the event's data, most of a sale's bytes, is stored
// once, not twice. The record is otherwise the one InsertAt would write.
func (tx *Tx) logEdgeEvent(ctx context.Context, e *kassa.Event, data []byte) error {
	stamp := tx.DB.Clock.Now()
	if err := tx.ExecLater(ctx, `INSERT INTO events (id, org_id, location_id, type, data, occurred_at, created_at, updated_at, hlc, origin)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`, e.ID, e.OrgID, NullString(e.LocationID), e.Type, string(data),
		FmtTime(e.OccurredAt), FmtTime(tx.Now), FmtTime(tx.Now), stamp.String(), tx.DB.NodeID); err != nil {
		return err
	}
	return tx.recordEncoded(ctx, change.Change{ID: tx.DB.NewID(), OrgID: e.OrgID, LocationID: e.LocationID, Entity: EntEvent.Name,
		EntityID: e.ID, Op: change.OpInsert, HLC: stamp, Origin: tx.DB.NodeID, Actor: ctxActorID(ctx)}, nil)
}

// eventHooks run in the unit that appends an event to this node's log:
// logEvents for the unit's own, apply for one an edge pushed that the
// hub's log did not hold (a replay runs none). The webhooks' deliveries
// are queued there (webhook.go).
var eventHooks []func(ctx context.Context, tx *Tx, id, orgID, typ string, data []byte) error

// onEventLogged adds an event hook; called from init functions only.
func OnEventLogged(fn func(ctx context.Context, tx *Tx, id, orgID, typ string, data []byte) error) {
	eventHooks = append(eventHooks, fn)
}

// eventLogged runs the event hooks for an event the unit logged.
func (tx *Tx) eventLogged(ctx context.Context, id, orgID, typ string, data []byte) error {
	for _, fn := range eventHooks {
		if err := fn(ctx, tx, id, orgID, typ, data); err != nil {
			return err
		}
	}
	return nil
}

// insert writes a new row of e with the given columns (id, org_id,
// created_at, updated_at, hlc and origin are added) and its change record.
func (tx *Tx) Insert(ctx context.Context, e Entity, orgID, id string, cols map[string]any) error {
	return tx.InsertAt(ctx, e, orgID, "", id, cols)
}

// insertAt is insert for a row scoped to a location (orders, payments,
// stock): the change record names the location, so that sync routes it to
// that location's edge only.
func (tx *Tx) InsertAt(ctx context.Context, e Entity, orgID, locationID, id string, cols map[string]any) error {
	cols = maps.Clone(cols)
	cols["id"] = id
	cols[e.OrgCol] = orgID
	cols["created_at"] = tx.Now
	cols["updated_at"] = tx.Now
	return tx.writeRow(ctx, e, change.OpInsert, orgID, locationID, id, cols)
}

// update writes changed columns of an existing row of e (updated_at is
// added) and its change record. Callers pass only the columns whose values
// changed; an empty map writes nothing.
func (tx *Tx) Update(ctx context.Context, e Entity, orgID, id string, cols map[string]any) error {
	return tx.UpdateAt(ctx, e, orgID, "", id, cols)
}

// updateAt is update for a row scoped to a location.
func (tx *Tx) UpdateAt(ctx context.Context, e Entity, orgID, locationID, id string, cols map[string]any) error {
	if len(cols) == 0 {
		return nil
	}
	cols = maps.Clone(cols)
	cols["updated_at"] = tx.Now
	return tx.writeRow(ctx, e, change.OpUpdate, orgID, locationID, id, cols)
}

// UnitWatcher is a noun's state (noun.newState) kept in step with the
// units that write the noun's rows: a cache of them (the campaigns').
type UnitWatcher interface {
	// Writing: a unit writes orgID's rows, now (in the writer).
	Writing(orgID string)
	// Undone: units that wrote the orgs' rows were rolled back.
	Undone(orgIDs []string)
	// Settled: the batch of a unit that wrote the orgs' rows ended,
	// committed or not.
	Settled(orgIDs []string, committed bool)
}

// changing notes that the unit writes orgID's rows of n: when n's state
// watches units, it hears of it now, and of the unit's end (runBatch).
func (tx *Tx) Changing(n *Noun, orgID string) {
	w, ok := tx.DB.States[n].(UnitWatcher)
	if !ok {
		return
	}
	if !slices.Contains(tx.changed[n], orgID) {
		if tx.changed == nil {
			tx.changed = map[*Noun][]string{}
		}
		tx.changed[n] = append(tx.changed[n], orgID)
	}
	w.Writing(orgID)
}

// undone tells the watching states that a unit's writes were rolled back.
func (db *DB) undone(changed map[*Noun][]string) {
	for n, orgs := range changed {
		db.States[n].(UnitWatcher).Undone(orgs)
	}
}

// settled tells the watching states that a unit's batch ended.
func (db *DB) settled(changed map[*Noun][]string, committed bool) {
	for n, orgs := range changed {
		db.States[n].(UnitWatcher).Settled(orgs, committed)
	}
}

func (tx *Tx) writeRow(ctx context.Context, e Entity, op change.Op, orgID, locationID, id string, cols map[string]any) error {
	if tx.DB.UnderHub.Load() {
		if e.Edge == nil {
			return kassa.Errorf(kassa.EConflict, "this store is enrolled at a hub: %ss are changed at the hub", strings.ReplaceAll(e.Name, "_", " "))
		}
	}
	tx.Changing(e, orgID)
	stamp := tx.DB.Clock.Now()
	names := slices.Sorted(maps.Keys(cols))
	args := make([]any, 0, len(names)+4)
	for _, n := range names {
		args = append(args, ColumnValue(cols[n]))
	}
	args = append(args, stamp.String(), tx.DB.NodeID)
	switch op {
	case change.OpInsert:
		if e.LWW() {
			args = append(args, rowStamps(fieldStamp(stamp, tx.DB.NodeID)))
		}
	default:
		if e.LWW() {
			args = append(args, FieldStamps(names, fieldStamp(stamp, tx.DB.NodeID)))
		}
		args = append(args, id, orgID)
	}
	res, err := tx.ExecCached(ctx, tx.DB.rowQuery(e, op, names), args...)
	if err != nil {
		return err
	}
	if n, _ := res.RowsAffected(); n != 1 {
		return fmt.Errorf("sqlite: %s %s %s affected %d rows", op, e.Name, id, n)
	}
	if e.Written != nil {
		if err := e.Written(ctx, tx, orgID, id); err != nil {
			return err
		}
	}
	fields, err := AppendFields(make([]byte, 0, 512), names, cols)
	if err != nil {
		return err
	}
	return tx.recordEncoded(ctx, change.Change{
		ID: tx.DB.NewID(), OrgID: orgID, LocationID: locationID, Entity: e.Name, EntityID: id,
		Op: op, HLC: stamp, Origin: tx.DB.NodeID, Actor: ctxActorID(ctx),
	}, fields)
}

// ctxActorID is the id of the user or OAuth client whose request ctx
// carries, for the change records it makes; empty for the node's own work.
func ctxActorID(ctx context.Context) string {
	if a := kassa.ActorFrom(ctx); a != nil {
		if p := ActorID(a); p != nil {
			return *p
		}
	}
	return ""
}

// record appends a change record to the outbox.
func (tx *Tx) record(ctx context.Context, c change.Change) error {
	fields, err := MarshalFields(c.Fields)
	if err != nil {
		return fmt.Errorf("sqlite: encode change fields: %w", err)
	}
	return tx.recordEncoded(ctx, c, fields)
}

// recordEncoded is record with the fields already in JSON. Records
// waiting to be written together (recordLater) are written first: the log
// keeps the unit's order.
func (tx *Tx) recordEncoded(ctx context.Context, c change.Change, fields []byte) error {
	tx.queueLog(c, fields)
	return tx.flushLog(ctx)
}

// recordLater appends c to the log with the unit's next write to it, or
// at the unit's end (flushLog), many records to a statement: an apply
// wrote one statement per record it logged (a round trip each on
// PostgreSQL, a third of a catch-up's statements).
func (tx *Tx) recordLater(c change.Change) error {
	fields, err := MarshalFields(c.Fields)
	if err != nil {
		return fmt.Errorf("sqlite: encode change fields: %w", err)
	}
	tx.queueLog(c, fields)
	return nil
}

// logCols are the values of a change record in the log's insert
// (Dialect.LogInsertSQL).
const logCols = 11

func (tx *Tx) queueLog(c change.Change, fields []byte) {
	tx.live(c.OrgID, c.Entity)
	tx.pendingLog = append(tx.pendingLog, c.ID, c.OrgID, NullString(c.LocationID), c.Entity, c.EntityID, string(c.Op), string(fields),
		c.HLC.String(), c.Origin, NullString(c.Actor), FmtTime(tx.Now))
}

// flushLog writes the records waiting for the log, up to a hundred to a
// statement (1,100 parameters, far below either backend's limit).
func (tx *Tx) flushLog(ctx context.Context) error {
	const perStmt = 100
	for rows := tx.pendingLog; len(rows) > 0; {
		chunk := rows[:min(len(rows), perStmt*logCols)]
		rows = rows[len(chunk):]
		if err := tx.logStatement(ctx, chunk); err != nil {
			return err
		}
	}
	tx.pendingLog = tx.pendingLog[:0]
	return nil
}

// logStatement writes the records of chunk with one statement, the
// first's ordinal in the transaction first where the writer numbers them
// (Dialect.LogCommitSQL).
func (tx *Tx) logStatement(ctx context.Context, chunk []any) error {
	d, n := tx.DB.dialect(), len(chunk)/logCols
	if d.LogCommitSQL() != "" {
		chunk = append([]any{tx.w.logRows}, chunk...)
	}
	if err := tx.ExecLater(ctx, tx.DB.logQuery(n), chunk...); err != nil {
		return err
	}
	tx.w.logRows += n
	return nil
}

// logQuery is the dialect's LogInsertSQL for n records, built once and
// kept with writeRow's statements: every sale's records pass here, and the
// text was a constant before records were written many to a statement.
func (db *DB) logQuery(n int) string {
	key := "log|" + strconv.Itoa(n)
	if q, ok := db.rowQueries.load(key); ok {
		return q
	}
	q := db.dialect().LogInsertSQL(n)
	db.rowQueries.store(key, q)
	return q
}

// queryCache holds statement texts built from a shape (a row's columns),
// by key, up to maxCachedStmts: every write loop reads it.
type queryCache struct {
	m sync.Map // key → text
	n atomic.Int32
}

func (c *queryCache) load(key string) (string, bool) {
	q, ok := c.m.Load(key)
	if !ok {
		return "", false
	}
	return q.(string), true
}

func (c *queryCache) store(key, q string) {
	if c.n.Load() >= maxCachedStmts {
		return
	}
	if _, loaded := c.m.LoadOrStore(key, q); !loaded {
		c.n.Add(1)
	}
}

// AppendFields renders a row write's columns (names sorted) as the
// change record carries them: the values the API shows (times in RFC
// 3339, lists as lists), as json.Marshal of the map would, without its
// reflection and key sorting: this runs for every row write.
func AppendFields(b []byte, names []string, cols map[string]any) ([]byte, error) {
	b = append(b, '{')
	for i, n := range names {
		if i > 0 {
			b = append(b, ',')
		}
		b = appendJSONString(b, n)
		b = append(b, ':')
		var err error
		if b, err = appendColumn(b, cols[n]); err != nil {
			return nil, fmt.Errorf("sqlite: encode change field %s: %w", n, err)
		}
	}
	return append(b, '}'), nil
}

// MarshalFields is json.Marshal of a change record's fields, byte for
// byte, without its reflection: names sorted, and the values a decoded
// record holds (strings, numbers as float64, booleans, nulls) written
// directly; any other value is json.Marshal's. Every record a hub logs
// passes here (its profile under the ingest: 4-5 % of its CPU was
// encoding/json's map encoder).
func MarshalFields(fields map[string]any) ([]byte, error) {
	if fields == nil {
		return []byte("null"), nil
	}
	var names [64]string
	keys := names[:0]
	for n := range fields {
		keys = append(keys, n)
	}
	slices.Sort(keys)
	b := make([]byte, 0, 64*len(keys))
	b = append(b, '{')
	for i, n := range keys {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(appendJSONString(b, n), ':')
		var err error
		if b, err = appendFieldValue(b, fields[n]); err != nil {
			return nil, fmt.Errorf("sqlite: encode change field %s: %w", n, err)
		}
	}
	return append(b, '}'), nil
}

// appendColumn appends a row write's column value: times in RFC 3339 as
// the API shows them (FmtTime), anything else as json.Marshal writes it.
func appendColumn(b []byte, v any) ([]byte, error) {
	switch x := v.(type) {
	case time.Time:
		return appendJSONString(b, FmtTime(x)), nil
	case *time.Time:
		if x == nil {
			return append(b, "null"...), nil
		}
		return appendJSONString(b, FmtTime(*x)), nil
	}
	return appendFieldValue(b, v)
}

// appendFieldValue appends v as json.Marshal writes it.
func appendFieldValue(b []byte, v any) ([]byte, error) {
	switch x := v.(type) {
	case nil:
		return append(b, "null"...), nil
	case string:
		return appendJSONString(b, x), nil
	case bool:
		return strconv.AppendBool(b, x), nil
	case float64:
		// encoding/json's own choice: 'f' between 1e-6 and 1e21.
		if a := math.Abs(x); a == 0 || a >= 1e-6 && a < 1e21 {
			return strconv.AppendFloat(b, x, 'f', -1, 64), nil
		}
	case int64:
		return strconv.AppendInt(b, x, 10), nil
	case int:
		return strconv.AppendInt(b, int64(x), 10), nil
	}
	j, err := json.Marshal(v)
	return append(b, j...), err
}

// appendJSONString appends s quoted as encoding/json quotes it; plain
// printable ASCII — ids, stamps, most names — is copied as is.
func appendJSONString(b []byte, s string) []byte {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c > 0x7e || c == '"' || c == '\\' || c == '<' || c == '>' || c == '&' {
			q, _ := json.Marshal(s)
			return append(b, q...)
		}
	}
	b = append(b, '"')
	b = append(b, s...)
	return append(b, '"')
}

// fieldStamp is how field_hlc records a write: "<hlc>@<origin>"; the HLC
// text is fixed-width, so comparing two stamps as strings orders them by
// clock, then by node.
func fieldStamp(t hlc.Timestamp, origin string) string { return t.String() + "@" + origin }

// rowStamps is field_hlc of a new row: every field carries the insert's
// stamp, written once under "*" (a field without its own key has the "*"
// stamp). Spelling out each column made an order row twice as large.
func rowStamps(stamp string) string { return `{"*":"` + stamp + `"}` }

// stampOf is the stamp of field name in a row's decoded field_hlc.
func stampOf(stamps map[string]string, name string) string {
	if s, ok := stamps[name]; ok {
		return s
	}
	return stamps["*"]
}

// fieldStamps renders {"name": stamp, ...} for the written columns (in
// the sorted order of names). Column names and stamps need no escaping, so
// it is written directly: this runs for every row write.
func FieldStamps(names []string, stamp string) string {
	var b strings.Builder
	b.Grow(len(names) * (len(stamp) + 16))
	b.WriteByte('{')
	first := true
	for _, n := range names {
		if n == "id" || n == "org_id" {
			continue
		}
		if !first {
			b.WriteByte(',')
		}
		first = false
		b.WriteByte('"')
		b.WriteString(n)
		b.WriteString(`":"`)
		b.WriteString(stamp)
		b.WriteByte('"')
	}
	b.WriteByte('}')
	return b.String()
}

// rowQuery returns the statement writeRow runs for a write of the named
// columns (sorted) of a row of e: built once per shape and kept, as
// building it for every row write cost more than a map lookup.
func (db *DB) rowQuery(e Entity, op change.Op, names []string) string {
	key := e.Table + "|" + string(op) + "|" + strings.Join(names, ",")
	if q, ok := db.rowQueries.load(key); ok {
		return q
	}
	var q string
	switch op {
	case change.OpInsert:
		if e.LWW() {
			q = fmt.Sprintf("INSERT INTO %s (%s, hlc, origin, field_hlc) VALUES (%s)", e.Table, joinCols(names, ""), Placeholders(len(names)+3))
		} else {
			q = fmt.Sprintf("INSERT INTO %s (%s, hlc, origin) VALUES (%s)", e.Table, joinCols(names, ""), Placeholders(len(names)+2))
		}
	default:
		set := joinCols(names, " = ?") + ", hlc = ?, origin = ?"
		if e.LWW() {
			set += ", field_hlc = " + db.dialect().JSONMerge("field_hlc", "?")
		}
		q = fmt.Sprintf("UPDATE %s SET %s WHERE id = ? AND %s = ?", e.Table, set, e.OrgCol)
	}
	db.rowQueries.store(key, q)
	return q
}

func joinCols(names []string, suffix string) string {
	n := 0
	for _, name := range names {
		n += len(name) + len(suffix) + 2
	}
	var b strings.Builder
	b.Grow(n)
	for i, name := range names {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(name)
		b.WriteString(suffix)
	}
	return b.String()
}

// actorID is the actor a record names (kassa.Actor.Ref), or NULL.
func ActorID(a *kassa.Actor) *string {
	if id := a.Ref(); id != "" {
		return &id
	}
	return nil
}
