package pg

import (
	"bytes"
	"context"
	"database/sql/driver"
	"encoding/binary"
	"errors"
	"strings"
	"sync/atomic"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgtype"

	"kassa.dev/shared/sqlite/engine"
)

// The driver's queue of statements kept for later (engine.Later): a
// statement whose result nobody reads is kept on its connection and sent
// with the connection's next statement of another kind, in one round
// trip (one pipeline, one Sync: piped.go). The first error among the
// kept statements is the error of the statement that sent them, as
// PostgreSQL gave it (*pgconn.PgError: the engine's kinds and its reruns
// read it), and of every statement after it until the transaction or its
// savepoint is rolled back (the transaction is aborted: PostgreSQL would
// answer "current transaction is aborted" and lose the cause).
//
// What sends the queue: any statement run now (Exec, Query, a prepared
// statement's), a flush (engine.PipeFlush), COMMIT. A statement kept to
// run after the COMMIT (engine.PipeAfterCommit: one a transaction, the
// writer's kassa_after_commit) goes last in the COMMIT's batch, outside
// the transaction, and runs only when the COMMIT succeeded. What drops it:
// ROLLBACK drops it all, ROLLBACK TO name what was kept after the kept
// SAVEPOINT name (all, when that SAVEPOINT was sent): a unit rolled back
// never sends its kept writes. BEGIN of a default transaction is kept
// too: it goes with the transaction's first statement, and a transaction
// rolled back before any is never begun on the server.

// queued is a statement kept for later.
type queued struct {
	query string
	args  []any
	// savepoint is the name a SAVEPOINT statement sets ("" otherwise).
	savepoint string
}

// beginQuery opens a kept transaction.
const beginQuery = "begin"

// roundTrips counts the requests the driver's connections sent and
// waited for (a statement, a batch, a commit): tests read it.
var roundTrips atomic.Int64

// laterResult is the result of a statement kept for later: its rows
// affected are not known.
type laterResult struct{}

var errKept = errors.New("pg: the statement was kept for later: its result is not known")

func (laterResult) LastInsertId() (int64, error) { return 0, errKept }
func (laterResult) RowsAffected() (int64, error) { return 0, errKept }

// keep queues q with args.
func (c *conn) keep(q string, args []driver.NamedValue) {
	c.queue = append(c.queue, queued{query: q, args: values(args), savepoint: savepointName(q, "SAVEPOINT")})
}

// values are args as pgx takes them; bytes are copied (the caller may
// reuse its buffer once the statement "ran").
func values(args []driver.NamedValue) []any {
	vs := make([]any, len(args))
	for i, a := range args {
		if b, ok := a.Value.([]byte); ok {
			vs[i] = bytes.Clone(b)
		} else {
			vs[i] = a.Value
		}
	}
	return vs
}

// savepointName is the savepoint a statement beginning with verb names
// ("SAVEPOINT x", "ROLLBACK TO [SAVEPOINT] x"), or "".
func savepointName(q, verb string) string {
	if len(q) <= len(verb) || !strings.EqualFold(q[:len(verb)], verb) || q[len(verb)] != ' ' {
		return ""
	}
	f := strings.Fields(q[len(verb):])
	if len(f) == 2 && strings.EqualFold(f[0], "SAVEPOINT") {
		return f[1]
	}
	if len(f) == 1 {
		return f[0]
	}
	return ""
}

// before readies the queue for q, a statement run now: a ROLLBACK TO
// drops what its savepoint undoes, a ROLLBACK all, and either clears the
// failure; any other statement meets the kept statements' failure.
func (c *conn) before(q string) error {
	if name := savepointName(q, "ROLLBACK TO"); name != "" {
		c.queue = c.queue[:keptTo(c.queue, name)]
		c.failed = nil
		return nil
	}
	if strings.EqualFold(strings.TrimSpace(q), "ROLLBACK") {
		c.forget()
		return nil
	}
	return c.failed
}

// ready readies the queue for q, run now (before); a q that may be
// several statements (not single) cannot join a batch: the queue is sent
// ahead of it alone. So it is ahead of a statement the connection has yet
// to prepare: one that fails to (its text is wrong) fails alone, after
// the kept statements ran (a unit's SAVEPOINT among them).
func (c *conn) ready(ctx context.Context, q string, single bool) error {
	if err := c.before(q); err != nil {
		return err
	}
	if single && c.descs[q] != nil {
		return nil
	}
	return c.flush(ctx)
}

// keptTo is the length of queue that ROLLBACK TO name keeps: up to and
// with the kept SAVEPOINT name, or nothing.
func keptTo(queue []queued, name string) int {
	for i := len(queue) - 1; i >= 0; i-- {
		if queue[i].savepoint == name {
			return i + 1
		}
	}
	return 0
}

// flush sends the queue alone.
func (c *conn) flush(ctx context.Context) error {
	if len(c.queue) == 0 {
		return nil
	}
	_, _, err := c.send(ctx, nil, resultNone)
	return err
}

// resultOf is what send reads of its last statement.
type resultOf int

const (
	resultNone resultOf = iota // no last statement
	resultTag                  // its command tag (Exec)
	resultRows                 // its rows (Query)
)

// keepBeforeCommit keeps q to send last before the transaction's COMMIT
// (engine.PipeBeforeCommit): the writer's row of outbox_commits, whose
// cseq it reads with the COMMIT's answer instead of in a round trip of
// its own.
func (c *conn) keepBeforeCommit(ctx context.Context, q string, args []driver.NamedValue) (driver.Result, error) {
	if c.failed != nil {
		return nil, c.failed
	}
	c.last, c.placed = &queued{query: q, args: values(args)}, engine.BeforeCommitOf(ctx)
	if c.placed != nil {
		c.placed.Kept = true
	}
	return laterResult{}, nil
}

// sendCommit sends the queue, the statement kept to run last before the
// COMMIT (c.last), the COMMIT and the statement kept to run after it
// (c.after) in one pipeline. c.last runs in the transaction: its error
// is the COMMIT's (PostgreSQL skips the rest of the pipeline to its Sync),
// its answer goes to c.placed once the COMMIT succeeded. PostgreSQL runs
// c.after only when the COMMIT succeeded, outside the transaction, in an
// implicit one of its own; its answer, or its error, goes to c.answer,
// never to the COMMIT's result.
func (c *conn) sendCommit(ctx context.Context) (pgconn.CommandTag, error) {
	before, placed, after, answer := c.last, c.placed, c.after, c.answer
	c.last, c.placed, c.after, c.answer = nil, nil, nil, nil
	commit := &queued{query: "commit"}
	if before == nil && after == nil {
		tag, _, err := c.send(ctx, commit, resultTag)
		return tag, err
	}
	p, m, kept, err := c.start(ctx, commitTail(before, commit, after)...)
	if err != nil {
		return pgconn.CommandTag{}, err
	}
	defer p.Close()
	place, tag, err := c.readCommit(m, p, kept, before)
	if err != nil {
		return tag, err
	}
	if placed != nil {
		placed.Value = place
	}
	if after == nil {
		_, err = p.GetResults() // the Sync
		return tag, err
	}
	v, aerr := readInt(m, p)
	if aerr == nil {
		_, aerr = p.GetResults() // the Sync
	}
	if answer != nil {
		*answer = engine.AfterCommitAnswer{Sent: true, Value: v, Err: aerr}
	}
	return tag, nil
}

// commitTail is what a COMMIT's pipeline sends after the queue.
func commitTail(before, commit, after *queued) []*queued {
	tail := make([]*queued, 0, 3)
	if before != nil {
		tail = append(tail, before)
	}
	tail = append(tail, commit)
	if after != nil {
		tail = append(tail, after)
	}
	return tail
}

// readCommit reads a COMMIT's pipeline up to the COMMIT's answer: the
// kept statements', the one kept before the COMMIT (before, when there
// is one: its one integer, place), the COMMIT's tag.
func (c *conn) readCommit(m *pgtype.Map, p *pgconn.Pipeline, kept int, before *queued) (place int64, tag pgconn.CommandTag, err error) {
	if before == nil {
		tag, _, err = c.readPiped(m, p, kept, resultTag)
		return 0, tag, err
	}
	if _, _, err = c.readPiped(m, p, kept, resultNone); err != nil {
		return 0, tag, err
	}
	if place, err = readInt(m, p); err != nil {
		return 0, tag, err
	}
	rr, err := nextResult(p)
	if err == nil {
		tag, err = rr.Close()
	}
	return place, tag, err
}

// valueOf is a column's value as stdlib.Rows gives it (initValueFuncs):
// integers as int64, floats as float64, times as time.Time, json and
// bytes as []byte (copied: src is pgx's buffer), anything else as text.
func valueOf(m *pgtype.Map, fd pgconn.FieldDescription, src []byte) (driver.Value, error) {
	if v, ok := plainValue(fd, src); ok {
		return v, nil
	}
	oid, f := fd.DataTypeOID, fd.Format
	switch oid {
	case pgtype.BoolOID:
		var d bool
		err := m.Scan(oid, f, src, &d)
		return d, err
	case pgtype.ByteaOID, pgtype.JSONOID, pgtype.JSONBOID, pgtype.XMLOID:
		var d []byte
		err := m.Scan(oid, f, src, &d)
		return bytes.Clone(d), err
	case pgtype.CIDOID, pgtype.OIDOID, pgtype.XIDOID:
		return valued[pgtype.Uint32](m, fd, src)
	case pgtype.DateOID:
		return valued[pgtype.Date](m, fd, src)
	case pgtype.TimestampOID:
		return valued[pgtype.Timestamp](m, fd, src)
	case pgtype.TimestamptzOID:
		return valued[pgtype.Timestamptz](m, fd, src)
	case pgtype.Float4OID, pgtype.Float8OID:
		var d float64
		err := m.Scan(oid, f, src, &d)
		return d, err
	case pgtype.Int2OID, pgtype.Int4OID, pgtype.Int8OID:
		var d int64
		err := m.Scan(oid, f, src, &d)
		return d, err
	}
	var d string
	err := m.Scan(oid, f, src, &d)
	return d, err
}

// plainValue is valueOf's answer, without pgx's scan plan, for the
// values a writer's reads are made of: integers in binary, text (its
// bytes in either format) and booleans in binary, decoded as pgx's
// default codecs decode them (TestPlainValuesAreAsPgxScansThem). Looking
// up the plan for each value (pgtype.Map.Scan) was two thirds of the
// reads' decoding, ~2-3 % of a PostgreSQL hub's CPU at the ingest
// (docs/performance.md, "The hub's CPU a record (session 21, helper
// hubgo2)"). ok is false for anything else, or a length pgx would refuse.
func plainValue(fd pgconn.FieldDescription, src []byte) (v driver.Value, ok bool) {
	bin := fd.Format == pgtype.BinaryFormatCode
	switch fd.DataTypeOID {
	case pgtype.TextOID, pgtype.VarcharOID, pgtype.NameOID, pgtype.BPCharOID:
		return string(src), true
	case pgtype.Int8OID:
		if bin && len(src) == 8 {
			return int64(be.Uint64(src)), true
		}
	case pgtype.Int4OID:
		if bin && len(src) == 4 {
			return int64(int32(be.Uint32(src))), true
		}
	case pgtype.Int2OID:
		if bin && len(src) == 2 {
			return int64(int16(be.Uint16(src))), true
		}
	case pgtype.BoolOID:
		if bin && len(src) == 1 {
			return src[0] == 1, true
		}
	}
	return nil, false
}

// be is PostgreSQL's binary byte order.
var be = binary.BigEndian

// valued scans src into a T and gives its driver.Value.
func valued[T any, P interface {
	*T
	driver.Valuer
}](m *pgtype.Map, fd pgconn.FieldDescription, src []byte) (driver.Value, error) {
	var d T
	if err := m.Scan(fd.DataTypeOID, fd.Format, src, P(&d)); err != nil {
		return nil, err
	}
	return P(&d).Value()
}

// BeginTx keeps the BEGIN of a default transaction for later (the
// transaction's first statement sends it); other options begin now.
func (c *conn) BeginTx(ctx context.Context, opts driver.TxOptions) (driver.Tx, error) {
	if c.Conn.Conn().IsClosed() {
		return nil, driver.ErrBadConn
	}
	c.failed = nil
	if opts != (driver.TxOptions{}) {
		if err := c.flush(ctx); err != nil {
			return nil, err
		}
		c.trip(ctx, "begin", "begin", 1)
		inner, err := c.Conn.BeginTx(ctx, opts)
		if err != nil {
			return nil, err
		}
		return &pipeTx{ctx: ctx, c: c, inner: inner}, nil
	}
	c.queue = append(c.queue, queued{query: beginQuery})
	c.pipeTx = true
	return &pipeTx{ctx: ctx, c: c}, nil
}

// pipeTx is a transaction of a conn: its commit sends what is kept with
// the COMMIT, its rollback drops what is kept.
type pipeTx struct {
	ctx   context.Context
	c     *conn
	inner driver.Tx // a transaction begun now (options), or nil
}

func (t *pipeTx) Commit() error {
	c := t.c
	defer c.forget()
	if c.failed != nil {
		t.rollback()
		return c.failed
	}
	if t.inner != nil {
		if err := c.flush(t.ctx); err != nil {
			t.rollback()
			return err
		}
		c.trip(t.ctx, "commit", "commit", 1)
		return t.inner.Commit()
	}
	if len(c.queue) == 1 && c.queue[0].query == beginQuery && c.last == nil {
		return nil // begun on no server: nothing ran
	}
	tag, err := c.sendCommit(t.ctx)
	if err != nil {
		if c.Conn.Conn().PgConn().TxStatus() != 'I' {
			t.rollback() // a kept statement failed: the COMMIT never ran
		}
		return err
	}
	if tag.String() == "ROLLBACK" {
		return pgx.ErrTxCommitRollback
	}
	return nil
}

func (t *pipeTx) Rollback() error {
	c := t.c
	unsent := t.inner == nil && len(c.queue) > 0 && c.queue[0].query == beginQuery
	c.forget()
	if unsent {
		return nil // never begun on the server
	}
	return t.rollback()
}

// rollback ends the transaction on the server.
func (t *pipeTx) rollback() error {
	t.c.queue = nil
	t.c.trip(t.ctx, "rollback", "rollback", 1)
	if t.inner != nil {
		return t.inner.Rollback()
	}
	_, err := t.c.Conn.Conn().Exec(t.ctx, "rollback")
	return err
}

// ResetSession forgets what a connection kept, before database/sql
// lends it again (a transaction's end has dropped or sent it already).
func (c *conn) ResetSession(ctx context.Context) error {
	c.forget()
	return c.Conn.ResetSession(ctx)
}

// forget drops what the connection kept, and the statement to send
// after a COMMIT (which is then not sent: its answer says so).
func (c *conn) forget() {
	c.queue, c.failed, c.after, c.answer = nil, nil, nil, nil
	c.last, c.placed = nil, nil
	c.pipeTx = false
}
