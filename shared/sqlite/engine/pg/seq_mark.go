package pg

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"kassa.dev/shared/sqlite/engine"
)

// A table whose readers follow it by seq (an identity column: the event
// log, the kitchen's feed, the applied changes) takes its seq when a row
// is written, not when it commits: with concurrent writers a row with a
// lower seq can commit after one with a higher seq, and a reader whose
// cursor passed the higher one would never read it. The hub's log gets
// positions at commit instead (log.go); these tables keep their seq (a
// unit reads back what it wrote by it) and their readers read below a
// settled mark (Dialect.Settled):
//
//   - every writer transaction has its id before it takes a seq
//     (Dialect.BeginSQL);
//   - after a commit, the writer reads each followed sequence's last value
//     (upto), then takes a transaction id of its own (xid_bound: ids are
//     given in order, so every transaction that took a seq at or below
//     upto has a lower one), and writes (upto, xid_bound) to seq_marks
//     (kassa_after_commit_upto, one call with the log's positions;
//     migrations 0014, 0017: the marks' rows are made from an aggregate of
//     the reads, so every read precedes the id). Any row at or below upto
//     was written by a transaction whose id is below xid_bound. Until
//     2026-11-29 the bound was pg_snapshot_xmax, one past the latest
//     completed id: a transaction that began after it, still running with
//     a seq, was not below it, and a reader passed its row
//     (TestAFollowedSeqIsNeverPassedByALaterTransactionsRow);
//   - a reader's statement takes the highest upto whose xid_bound is at or
//     below its snapshot's oldest running transaction: every transaction
//     below xid_bound has ended, so every row at or below upto that will ever
//     commit is visible to that statement;
//   - a table whose sequence did not move past a mark already there gets no
//     new mark: that mark was committed before, so its bound is below the
//     new one's, and a reader that could take the new mark takes it, as high
//     or higher. (Most commits at a hub move one or two of the followed
//     tables: the others' marks were most of the rows written and pruned.)
//
// Nothing waits on anything: the price is a mark per commit and moved
// table (in the call that positions the log), and a row is followed once
// the transactions older than its commit's mark have ended.

// markers are the followed tables, per writer pool.
var markers sync.Map // *sql.DB -> *marker

type marker struct {
	tables, seqs string // comma-separated, in one order
	calls        atomic.Int64
	retrying     atomic.Bool // a retry of the log's positions is under way
	// upto is the highest commit seq the pool's calls found positioned
	// (migration 0016), and wake is closed when it grows (then replaced).
	mu   sync.Mutex
	upto int64
	wake chan struct{}
}

// saw records that the log is positioned up to upto (a call's answer),
// waking the write loops waiting for their commits' positions.
func (m *marker) saw(upto int64) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if upto > m.upto {
		m.upto = upto
		if m.wake != nil {
			close(m.wake)
			m.wake = nil
		}
	}
}

// reached reports whether the commit of cseq is positioned, by the
// answers seen so far, and, when it is not, a channel closed when one
// says more.
func (m *marker) reached(cseq int64) (bool, <-chan struct{}) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if cseq <= m.upto {
		return true, nil
	}
	if m.wake == nil {
		m.wake = make(chan struct{})
	}
	return false, m.wake
}

// afterCommitQuery marks the followed tables and gives the log its
// positions after a commit, in one call (migrations 0009, 0011, 0014,
// 0015), and answers the highest commit seq positioned (0016); since
// migration 0017 one plpgsql function of two statements whose plans are
// kept. Since
// 2026-11-29 the writer sends it with its COMMIT, on the transaction's
// connection and in the same round trip (afterCommitSQL): after the
// COMMIT, before the pipeline's Sync, it runs in an implicit transaction
// of its own, which is what it needs (it reads the sequences' last values
// after the commit, then takes an id of its own: the marks' bound). The
// COMMIT failing, PostgreSQL skips it to the Sync: it never runs after a
// commit that did not happen, and its error, if it fails, is never the
// COMMIT's (the driver's pipeTx.Commit).
const afterCommitQuery = `SELECT kassa_after_commit_upto(?, ?, ?)`

// afterCommitSQL is afterCommitQuery with the writer pool's followed tables.
func afterCommitSQL(ctx context.Context, db *sql.DB) (string, []any, error) {
	m, err := markerOf(ctx, db)
	if err != nil {
		return "", nil, err
	}
	return afterCommitQuery, []any{lockLogPos, m.tables, m.seqs}, nil
}

// afterCommit finishes a commit's after-commit call (afterCommitQuery),
// or runs it on the pool when it was not sent with the COMMIT or failed;
// now and then it drops the marks a settled higher one makes useless.
// When the commit's records (cseq; 0: it wrote none) are not positioned
// yet (a transaction of another write loop or hub was running as it
// marked, or another hub held the positions' lock), it waits for them a
// moment (positioned), then tries again in the background: no edge waits
// for the cluster's next commit to see them.
func afterCommit(ctx context.Context, db *sql.DB, cseq int64, sent engine.AfterCommitAnswer) error {
	m, err := markerOf(ctx, db)
	if err != nil {
		return err
	}
	upto := sent.Value
	if !sent.Sent || sent.Err != nil {
		if err := db.QueryRowContext(ctx, afterCommitQuery, lockLogPos, m.tables, m.seqs).Scan(&upto); err != nil {
			return fmt.Errorf("pg: after commit: %w", errors.Join(sent.Err, err))
		}
	}
	m.saw(upto)
	if cseq > 0 && !m.positioned(ctx, db, cseq) && m.retrying.CompareAndSwap(false, true) {
		go m.positionAgain(db)
	}
	if m.calls.Add(1)%64 == 0 {
		_, err = db.ExecContext(ctx, pruneMarksSQL)
	}
	return err
}

// waitPositioned bounds how long a commit waits for its records'
// positions (positioned): the transactions running as it committed, the
// other write loops' batches and other hubs', are milliseconds long; one
// that runs longer holds the log back (positionAgain, then the next
// commit, position it).
const waitPositioned = 128 * time.Millisecond

// firstPoll is how long a commit waiting for its positions waits for
// another call's answer (another write loop's after-commit call, whose
// commit ends the transaction it waits for) before it positions the log
// itself.
const firstPoll = time.Millisecond

// positioned waits until the commit of cseq has its positions, for up to
// waitPositioned, and reports whether it has: its caller, once answered,
// may have an edge catch up with the log (a payment the hub routes to the
// order's store) and must find the records there. Any call's answer tells
// (marker.saw: the loop's own after-commit call's, another loop's, a
// poll's); when none does for a while, it positions the log itself
// (kassa_position_upto, migration 0016), at growing intervals. Until
// 2026-11-29 it polled kassa_positioned from 250 µs on, 2.2-2.5 times a
// commit at the ingest. Since migration 0018 the poll names its commit and
// positions the log only when the commit is not positioned yet: with
// several hubs most polls found it positioned by another hub's call.
func (m *marker) positioned(ctx context.Context, db *sql.DB, cseq int64) bool {
	deadline, wait := time.Now().Add(waitPositioned), firstPoll
	for {
		done, wake := m.reached(cseq)
		if done || !time.Now().Before(deadline) {
			return done
		}
		if await(wake, wait) {
			continue // another call answered: what it found
		}
		var upto int64
		if err := db.QueryRowContext(ctx, `SELECT kassa_position_upto(?, ?)`, lockLogPos, cseq).Scan(&upto); err != nil {
			return false
		}
		m.saw(upto)
		wait *= 2
	}
}

// await waits for wake to close, for up to d, and reports whether it did.
func await(wake <-chan struct{}, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-wake:
		return true
	case <-t.C:
		return false
	}
}

// positionAgain positions the log at growing intervals, up to
// positionEvery, until nothing committed waits. A transaction running long
// (a migration, a stuck client, a writer descheduled on a loaded machine)
// holds the log back only while it runs: once it ends, the commits that
// waited behind it are positioned within positionEvery, with no later
// commit needed. Until session 19 it gave up after 1.3 s, and a hub with
// nothing more to commit left its last records unpullable (status.md,
// "Flakes seen"). It ends with an error: the pool closed.
func (m *marker) positionAgain(db *sql.DB) {
	defer m.retrying.Store(false)
	for wait := 5 * time.Millisecond; ; wait = min(2*wait, positionEvery) {
		time.Sleep(wait)
		var waiting int64
		err := db.QueryRowContext(context.Background(), `SELECT kassa_position(?)`, lockLogPos).Scan(&waiting)
		if err != nil || waiting == 0 {
			return
		}
	}
}

// positionEvery is how often a hub positions the log while a commit waits
// for a long transaction to end (positionAgain): a position call is a
// fraction of a millisecond.
const positionEvery = time.Second

// pruneMarksSQL drops the marks below a settled one of the same table: no
// statement from now on reads them, and one already running still sees
// them (its snapshot).
const pruneMarksSQL = `DELETE FROM seq_marks m USING seq_marks n
	WHERE n.tbl = m.tbl AND (n.upto > m.upto OR (n.upto = m.upto AND n.xid_bound < m.xid_bound))
	AND n.xid_bound <= pg_snapshot_xmin(pg_current_snapshot())`

// markerOf finds the followed tables (every identity column named seq)
// once per writer pool.
func markerOf(ctx context.Context, db *sql.DB) (*marker, error) {
	if m, ok := markers.Load(db); ok {
		return m.(*marker), nil
	}
	rows, err := db.QueryContext(ctx, `SELECT table_name::text, pg_get_serial_sequence(quote_ident(table_name::text), 'seq')
		FROM information_schema.columns WHERE table_schema = current_schema() AND column_name = 'seq' AND is_identity = 'YES'
		ORDER BY table_name`)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var tables, seqs []string
	for rows.Next() {
		var table, seq string
		if err := rows.Scan(&table, &seq); err != nil {
			return nil, err
		}
		tables, seqs = append(tables, table), append(seqs, seq)
	}
	if err := rows.Err(); err != nil {
		return nil, err
	}
	m := &marker{tables: strings.Join(tables, ","), seqs: strings.Join(seqs, ",")}
	actual, _ := markers.LoadOrStore(db, m)
	return actual.(*marker), nil
}
