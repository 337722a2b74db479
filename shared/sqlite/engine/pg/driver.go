package pg

import (
	"bytes"
	"context"
	"database/sql"
	"database/sql/driver"
	"io"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/stdlib"

	"kassa.dev/shared/sqlite/engine"
)

// DriverName is pgx's database/sql driver (pgx/v5/stdlib) with the
// engine's statement text rewritten: every statement's final text goes
// through Rebind once (cached by text), and a Go bool is bound as 1/0,
// as SQLite's driver binds it (the flags are integer columns). The
// engine runs on database/sql (its writer, reader pool, prepared
// statements and group commit), so PostgreSQL takes the same road rather
// than a second engine on pgx's native interface.
const DriverName = "kassa_pgx"

func init() { sql.Register(DriverName, rebindDriver{}) }

var _ engine.DirectConn = (*conn)(nil)

// maxRebound bounds the cache of rewritten texts: queries built from
// filters vary; past the bound they are rewritten on every run.
const maxRebound = 4096

var (
	rebound  sync.Map
	nRebound atomic.Int32
)

// rebindCached is Rebind(q), cached by q.
func rebindCached(q string) string {
	if r, ok := rebound.Load(q); ok {
		return r.(string)
	}
	r := Rebind(q)
	if nRebound.Load() < maxRebound {
		if _, loaded := rebound.LoadOrStore(q, r); !loaded {
			nRebound.Add(1)
		}
	}
	return r
}

type rebindDriver struct{}

func (rebindDriver) Open(dsn string) (driver.Conn, error) {
	c, err := stdlib.GetDefaultDriver().Open(dsn)
	if err != nil {
		return nil, err
	}
	cn := &conn{Conn: c.(*stdlib.Conn)}
	cn.countTrip(nil, "open", "", 0)
	return cn, nil
}

// conn is a pgx connection whose statements are rebound, and which keeps
// statements for later (pipe.go). database/sql runs one call at a time
// on a connection: nothing here is shared.
type conn struct {
	*stdlib.Conn
	queue []queued // statements kept for later, in order
	// failed is a kept statement's error, the answer to every statement
	// until the transaction or its savepoint is rolled back (before).
	failed error
	// after is the statement to send after the transaction's COMMIT
	// (engine.PipeAfterCommit), answering to answer.
	after  *queued
	answer *engine.AfterCommitAnswer
	// last is the statement to send last before the COMMIT
	// (engine.PipeBeforeCommit), answering to placed.
	last   *queued
	placed *engine.BeforeCommitAnswer
	// descs are the statements this connection prepared for its own
	// pipeline (piped.go), by text.
	descs  map[string]*pgconn.StatementDescription
	params []byte // the parameters of the statement being sent, encoded
	// wbuf is the buffer its pipeline's messages are written into
	// (piped.go), kept from batch to batch.
	wbuf sendBuf
	// vals and formats are the statement being sent's parameters and
	// their formats (reused); results its columns' formats, by statement.
	// pipeTx is set in a default transaction (BeginTx), until its end.
	pipeTx  bool
	vals    [][]byte
	formats []int16
	results map[*pgconn.StatementDescription][]int16
}

func (c *conn) Prepare(q string) (driver.Stmt, error) {
	return c.PrepareContext(context.Background(), q)
}

func (c *conn) PrepareContext(ctx context.Context, q string) (driver.Stmt, error) {
	q = rebindCached(q)
	c.trip(ctx, "prepare-sql", q, 1)
	st, err := c.Conn.PrepareContext(ctx, q)
	if err != nil {
		return nil, err
	}
	return &stmt{Stmt: st.(*stdlib.Stmt), c: c, query: q}, nil
}

func (c *conn) ExecContext(ctx context.Context, q string, args []driver.NamedValue) (driver.Result, error) {
	return c.exec(ctx, rebindCached(q), args, c.single(q, args))
}

func (c *conn) QueryContext(ctx context.Context, q string, args []driver.NamedValue) (driver.Rows, error) {
	return c.query(ctx, rebindCached(q), args, c.single(q, args))
}

// single reports whether q is one statement: one with parameters, or in
// a default transaction (the writer's) one without a semicolon. Such a
// statement goes in the batch of what is kept (piping), prepared there:
// before the writer's statements ran by text (engine.DirectConn), its
// units' ones without parameters were prepared by database/sql.
func (c *conn) single(q string, args []driver.NamedValue) bool {
	return len(args) > 0 || c.pipeTx && !strings.Contains(q, ";")
}

// DirectWriter marks the connection as an engine.DirectConn: the write
// loops run their batches' statements on it without database/sql. Its
// statements answer a context's error without sending anything (exec):
// a write loop's context has no Done channel for pgx to watch.
func (c *conn) DirectWriter() {}

// exec runs q, keeps it for later, or only sends what is kept, as ctx
// asks (engine.Piped). One statement (single: a prepared one, or one
// with parameters) goes in the batch of what is kept; a text without
// parameters may be several (a migration): what is kept goes first.
func (c *conn) exec(ctx context.Context, q string, args []driver.NamedValue, single bool) (driver.Result, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	switch engine.Piped(ctx) {
	case engine.PipeLater:
		if c.failed != nil {
			return nil, c.failed
		}
		c.keep(q, args)
		return laterResult{}, nil
	case engine.PipeFlush:
		if c.failed != nil {
			return nil, c.failed
		}
		return driver.RowsAffected(0), c.flush(ctx)
	case engine.PipeFailed:
		return driver.RowsAffected(0), c.failed
	case engine.PipeAfterCommit:
		if c.failed != nil {
			return nil, c.failed
		}
		c.after, c.answer = &queued{query: q, args: values(args)}, engine.AfterCommitOf(ctx)
		return laterResult{}, nil
	case engine.PipeBeforeCommit:
		return c.keepBeforeCommit(ctx, q, args)
	case engine.PipeLaterIfIdle:
		if len(c.queue) == 0 && c.failed == nil && c.Conn.Conn().PgConn().TxStatus() == 'T' {
			c.keep(q, args)
			return laterResult{}, nil
		}
	}
	if err := c.ready(ctx, q, single); err != nil {
		return nil, err
	}
	if !c.piping(single) {
		c.trip(ctx, "lone", q, 1)
		return c.Conn.ExecContext(ctx, q, args)
	}
	tag, _, err := c.send(ctx, &queued{query: q, args: values(args)}, resultTag)
	if err != nil {
		return nil, err
	}
	return driver.RowsAffected(tag.RowsAffected()), nil
}

// query runs q, in one round trip with what is kept for later (exec).
func (c *conn) query(ctx context.Context, q string, args []driver.NamedValue, single bool) (driver.Rows, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if err := c.ready(ctx, q, single); err != nil {
		return nil, err
	}
	if !c.piping(single) {
		c.trip(ctx, "lone", q, 1)
		return buffered(c.Conn.QueryContext(ctx, q, args))
	}
	_, rows, err := c.send(ctx, &queued{query: q, args: values(args)}, resultRows)
	return rows, err
}

// piping reports whether a statement run now goes through the
// connection's pipeline (piped.go): with what is kept, or alone when it is
// one statement of a default transaction (the writer's). pgx's own path
// (stdlib) encodes each statement's parameters into a buffer it shrinks
// back to 256 bytes, and its frontend's write buffer to 1 KiB, at every
// statement: the kitchen's ticket inserts (a query run alone: RETURNING)
// allocated a tenth of a PostgreSQL hub's bytes there under the ingest.
// Other connections (the readers, read-only transactions) keep pgx's
// path and its statement cache.
func (c *conn) piping(single bool) bool {
	return len(c.queue) > 0 || single && c.pipeTx
}

// stmt is a prepared statement whose results are buffered (buffered), run
// with what its connection kept for later (conn.exec).
type stmt struct {
	*stdlib.Stmt
	c     *conn
	query string // its text, rebound: pgx's name of the statement
}

func (s *stmt) ExecContext(ctx context.Context, args []driver.NamedValue) (driver.Result, error) {
	return s.c.exec(ctx, s.query, args, true)
}

func (s *stmt) QueryContext(ctx context.Context, args []driver.NamedValue) (driver.Rows, error) {
	return s.c.query(ctx, s.query, args, true)
}

// buffered reads a result whole before the caller sees it. The engine's
// units read rows and write between two rows on the same transaction, as
// SQLite lets them; a PostgreSQL connection runs one statement at a time
// ("conn busy"), so the result is read to its end first. The engine's
// queries are paged (LIMIT), so a result is held in memory whole only
// as large as one page.
func buffered(r driver.Rows, err error) (driver.Rows, error) {
	if err != nil {
		return nil, err
	}
	defer r.Close()
	b := &rowsBuf{cols: r.Columns()}
	for {
		row := make([]driver.Value, len(b.cols))
		if err := r.Next(row); err == io.EOF {
			return b, nil
		} else if err != nil {
			return nil, err
		}
		for i, v := range row {
			if bs, ok := v.([]byte); ok {
				row[i] = bytes.Clone(bs)
			}
		}
		b.rows = append(b.rows, row)
	}
}

// rowsBuf is a result read whole.
type rowsBuf struct {
	cols []string
	rows [][]driver.Value
}

func (b *rowsBuf) Columns() []string { return b.cols }
func (b *rowsBuf) Close() error      { b.rows = nil; return nil }
func (b *rowsBuf) Next(dest []driver.Value) error {
	if len(b.rows) == 0 {
		return io.EOF
	}
	copy(dest, b.rows[0])
	b.rows = b.rows[1:]
	return nil
}

// CheckNamedValue binds a bool as 1 or 0 and anything else as pgx does.
func (c *conn) CheckNamedValue(nv *driver.NamedValue) error {
	switch v := nv.Value.(type) {
	case bool:
		nv.Value = int64(0)
		if v {
			nv.Value = int64(1)
		}
		return nil
	case *bool:
		if v != nil {
			nv.Value = int64(0)
			if *v {
				nv.Value = int64(1)
			}
		}
		return nil
	}
	return c.Conn.CheckNamedValue(nv)
}
