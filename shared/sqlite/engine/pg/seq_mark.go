package pg

import (
	"context"
	"database/sql"
	"fmt"
	"slices"
	"strings"
	"sync"
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
//     (upto), then, in a later statement, the next transaction id not yet
//     given (xid_bound), and writes (upto, xid_bound) to seq_marks. Any row at or
//     below upto was written by a transaction whose id is below xid_bound;
//   - a reader's statement takes the highest upto whose xid_bound is at or
//     below its snapshot's oldest running transaction: every transaction
//     below xid_bound has ended, so every row at or below upto that will ever
//     commit is visible to that statement.
//
// Nothing waits on anything: the price is one read and one insert per
// commit, and a row is followed once the transactions older than its
// commit's mark have ended.

// markers are the followed tables' marking statements, per writer pool.
var markers sync.Map // *sql.DB -> *marker

type marker struct {
	mu     sync.Mutex
	tables []string
	read   string // the sequences' last values, in tables' order
	insert string // one mark per table
	last   []int64
	marks  int
}

// markSettled writes the followed tables' marks after a commit, when a
// sequence moved since this writer's last mark; now and then it drops the
// marks a settled higher one makes useless.
func markSettled(ctx context.Context, db *sql.DB) error {
	m, err := markerOf(ctx, db)
	if err != nil || len(m.tables) == 0 {
		return err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	upto := make([]int64, len(m.tables))
	dest := make([]any, len(upto))
	for i := range upto {
		dest[i] = &upto[i]
	}
	if err := db.QueryRowContext(ctx, m.read).Scan(dest...); err != nil {
		return fmt.Errorf("pg: read sequences: %w", err)
	}
	if slices.Equal(upto, m.last) {
		return nil
	}
	args := make([]any, 0, 2*len(upto))
	for i, t := range m.tables {
		args = append(args, t, upto[i])
	}
	// A statement of its own: its snapshot is taken after the read.
	if _, err := db.ExecContext(ctx, m.insert, args...); err != nil {
		return fmt.Errorf("pg: mark settled: %w", err)
	}
	m.last = upto
	if m.marks++; m.marks%64 == 0 {
		_, err = db.ExecContext(ctx, pruneMarksSQL)
	}
	return err
}

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
	m := &marker{}
	var reads, values []string
	for rows.Next() {
		var table, seq string
		if err := rows.Scan(&table, &seq); err != nil {
			return nil, err
		}
		m.tables = append(m.tables, table)
		reads = append(reads, "coalesce(pg_sequence_last_value('"+strings.ReplaceAll(seq, "'", "''")+"'::regclass), 0)")
		values = append(values, "(?, ?::bigint, pg_snapshot_xmax(pg_current_snapshot()))")
	}
	if err := rows.Err(); err != nil {
		return nil, err
	}
	m.read = "SELECT " + strings.Join(reads, ", ")
	m.insert = "INSERT INTO seq_marks (tbl, upto, xid_bound) VALUES " + strings.Join(values, ", ")
	actual, _ := markers.LoadOrStore(db, m)
	return actual.(*marker), nil
}
