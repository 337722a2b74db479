package engine

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"fmt"
	"slices"
	"time"
)

// A write loop's statements without database/sql (PostgreSQL). Under a
// *sql.Tx every read of a unit started a goroutine (database/sql watches
// the transaction's context, which can always be cancelled, to close the
// rows: Rows.initContextClose) and every statement went through
// database/sql's locks and argument checks; the unit's request context
// also reached pgx, which armed a callback on it at every round trip. A
// directTx is the batch's transaction on the loop's driver connection
// itself: the connection is lent by the writer pool for the batch
// (sql.Conn), begun, committed and rolled back on the driver, its writes
// run on the driver, and its reads, which the nouns scan as *sql.Rows,
// through the sql.Conn, which watches no transaction. Every statement
// sees the unit's context unwatched: its values and its error (the
// driver answers a cancelled one's error without sending anything) but
// no Done channel. SQLite keeps database/sql's transaction (its driver
// is in-process: no round trips, no context watching).

// DirectConn is a backend's driver connection a write loop runs its
// batches on (directTx). The driver answers a statement whose context's
// Err is set with that error, sending nothing.
type DirectConn interface {
	driver.ConnBeginTx
	driver.ExecerContext
	driver.NamedValueChecker
	// DirectWriter marks a driver connection fit for a directTx.
	DirectWriter()
}

// batchTx is a write loop's transaction: a *sql.Tx or a directTx.
type batchTx interface {
	stmtRunner
	Commit() error
	Rollback() error
}

// stmtRunner is what a unit's statements run on (Tx.Tx).
type stmtRunner interface {
	ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error)
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
}

// directTx is a batch's transaction on a driver connection (DirectConn).
type directTx struct {
	conn *sql.Conn // the writer pool's connection, lent for the batch
	dc   DirectConn
	dtx  driver.Tx
	nv   []driver.NamedValue // a statement's arguments (reused)
	// rows and row are the batch's reads, closed at its end: the
	// sql.Conn goes back to the pool only once they all are (a unit that
	// left one open would otherwise hold the writer forever).
	rows []*sql.Rows
	row  []*sql.Row
}

// beginDirect begins the loop's transaction on its driver connection
// (w.direct); false when the driver is not a DirectConn.
func (w *writer) beginDirect(ctx context.Context) (bool, error) {
	conn, err := w.db.Writer.Conn(ctx)
	if err != nil {
		return false, err
	}
	t := &w.direct
	t.conn, t.dc, t.dtx = conn, nil, nil
	if err = conn.Raw(t.begin); err != nil || t.dtx == nil {
		t.end()
		return false, err
	}
	return true, nil
}

// begin begins the transaction on the lent driver connection c (through
// sql.Conn.Raw), when it is a DirectConn; the sql.Conn stays lent to the
// loop until end, so nothing else uses c meanwhile.
func (t *directTx) begin(c any) error {
	dc, ok := c.(DirectConn)
	if !ok {
		return nil
	}
	dtx, err := dc.BeginTx(context.Background(), driver.TxOptions{})
	t.dc, t.dtx = dc, dtx
	return err
}

func (t *directTx) Commit() error {
	err := t.dtx.Commit()
	t.end()
	return err
}

func (t *directTx) Rollback() error {
	err := t.dtx.Rollback()
	t.end()
	return err
}

// end closes the batch's reads and gives the connection back to the pool.
func (t *directTx) end() {
	for _, r := range t.rows {
		r.Close()
	}
	for _, r := range t.row {
		r.Scan() // closes its rows when no one scanned them
	}
	clear(t.rows)
	clear(t.row)
	clear(t.nv)
	t.rows, t.row = t.rows[:0], t.row[:0]
	t.conn.Close()
	t.conn, t.dc, t.dtx = nil, nil, nil
}

func (t *directTx) ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error) {
	nv, err := t.named(args)
	if err != nil {
		return nil, err
	}
	res, err := t.dc.ExecContext(unwatched{ctx}, query, nv)
	if err != nil {
		return nil, err
	}
	return res, nil
}

func (t *directTx) QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error) {
	rows, err := t.conn.QueryContext(unwatched{ctx}, query, args...)
	if err == nil {
		t.rows = append(t.rows, rows)
	}
	return rows, err
}

func (t *directTx) QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row {
	row := t.conn.QueryRowContext(unwatched{ctx}, query, args...)
	t.row = append(t.row, row)
	return row
}

// named is args as the driver takes them, checked as database/sql checks
// them (the driver's NamedValueChecker, else the default conversion). Each
// is checked in place in the reused slice: a local NamedValue handed to
// the checker (an interface) escaped, an allocation for every argument.
func (t *directTx) named(args []any) ([]driver.NamedValue, error) {
	nv := slices.Grow(t.nv[:0], len(args))[:len(args)]
	t.nv = nv
	for i, a := range args {
		v := &nv[i]
		*v = driver.NamedValue{Ordinal: i + 1, Value: a}
		err := t.dc.CheckNamedValue(v)
		if err == driver.ErrSkip {
			v.Value, err = driver.DefaultParameterConverter.ConvertValue(a)
		}
		if err != nil {
			return nil, fmt.Errorf("sql: converting argument $%d type: %w", i+1, err)
		}
	}
	return nv, nil
}

// unwatched is a statement's context as a directTx's driver sees it: its
// values and its Err, no Done channel nor deadline, so that neither
// database/sql nor pgx watches it.
type unwatched struct{ context.Context }

func (unwatched) Done() <-chan struct{}       { return nil }
func (unwatched) Deadline() (time.Time, bool) { return time.Time{}, false }
