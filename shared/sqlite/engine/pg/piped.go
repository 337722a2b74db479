package pg

import (
	"context"
	"crypto/sha256"
	"database/sql/driver"
	"encoding/hex"
	"errors"
	"fmt"
	"slices"
	"sync/atomic"

	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgtype"
)

// A batch of kept statements (pipe.go) is sent through pgconn's pipeline,
// each statement prepared on the connection the first time (as a pgx
// batch does), its parameters encoded into a buffer the connection keeps
// (conn.params). A pgx batch encodes them into a buffer it shrinks back to
// 256 bytes at each statement, so a push's batch (about 0.8 MB of
// parameters) allocated its bytes about five times over
// (docs/write-path.md, "The catch-up on PostgreSQL (session 19, helper
// pgcatchup)"). The encoding is pgx's own (pgtype.Map.Encode, in the
// format pgx would choose); so are the values read (valueOf).

// pipedSends counts the batches sent through the pipeline: tests read it.
var pipedSends atomic.Int64

// preparedStmt is a statement of a batch with its description.
type preparedStmt struct {
	queued
	sd *pgconn.StatementDescription
}

// prepared is the queue and tail with their descriptions, each prepared
// on this connection the first time it is sent (pipeName), as a pgx batch
// prepares its new statements before it sends them. A statement that
// fails to prepare fails the batch with PostgreSQL's error, as in a pgx
// batch.
func (c *conn) prepared(ctx context.Context, tail ...*queued) ([]preparedStmt, error) {
	if len(c.descs)+len(c.queue)+len(tail) > maxPrepared {
		if err := c.forgetPrepared(ctx); err != nil {
			return nil, err
		}
	}
	out := make([]preparedStmt, 0, len(c.queue)+len(tail))
	add := func(q *queued) error {
		sd, ok := c.descs[q.query]
		if !ok {
			var err error
			c.countTrip(ctx, "prepare", q.query, 1)
			if sd, err = c.Conn.Conn().Prepare(ctx, pipeName(q.query), q.query); err != nil {
				return err
			}
			if c.descs == nil {
				c.descs = map[string]*pgconn.StatementDescription{}
			}
			c.descs[q.query] = sd
		}
		if len(sd.ParamOIDs) != len(q.args) {
			return fmt.Errorf("pg: %d arguments for the %d parameters of %q", len(q.args), len(sd.ParamOIDs), q.query)
		}
		out = append(out, preparedStmt{queued: *q, sd: sd})
		return nil
	}
	for i := range c.queue {
		if err := add(&c.queue[i]); err != nil {
			return nil, err
		}
	}
	for _, q := range tail {
		if err := add(q); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// pipeName is the name the pipeline prepares q under: a name of its own,
// not pgx's (its cache's, or a database/sql statement's, which their
// owners deallocate).
func pipeName(q string) string {
	h := sha256.Sum256([]byte(q))
	return "kassa_pipe_" + hex.EncodeToString(h[:20])
}

// maxPrepared bounds the statements a connection keeps prepared for its
// pipeline: texts built from filters vary, and each prepared one holds
// memory here and in its backend. Past it, they are all let go.
var maxPrepared = 1024

// forgetPrepared deallocates the statements the connection prepared for
// its pipeline (a Close message each, which a failed transaction takes).
func (c *conn) forgetPrepared(ctx context.Context) error {
	for q := range c.descs {
		if err := c.Conn.Conn().Deallocate(ctx, pipeName(q)); err != nil {
			return err
		}
		delete(c.results, c.descs[q])
		delete(c.descs, q)
	}
	return nil
}

// send sends the queue and last in one pipeline (one round trip, one
// Sync) and reads their results: last's (want), or the first kept
// statement's error, which is also the connection's failure (conn.failed).
// The queue is empty after it, whatever happened.
func (c *conn) send(ctx context.Context, last *queued, want resultOf) (pgconn.CommandTag, driver.Rows, error) {
	var tail []*queued
	if last != nil {
		tail = append(tail, last)
	}
	p, m, kept, err := c.start(ctx, tail...)
	if err != nil {
		return pgconn.CommandTag{}, nil, err
	}
	tag, rows, err := c.readPiped(m, p, kept, want)
	if err == nil {
		_, err = p.GetResults() // the Sync
	}
	if cerr := p.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return pgconn.CommandTag{}, nil, err
	}
	return tag, rows, nil
}

// start sends the queue, then tail, in one pipeline ended by a Sync, and
// gives the pipeline to read, the type map and how many kept statements
// lead it. The queue is empty after it, whatever happened; a kept
// statement that could not be sent is the connection's failure.
func (c *conn) start(ctx context.Context, tail ...*queued) (*pgconn.Pipeline, *pgtype.Map, int, error) {
	kept := len(c.queue)
	stmts, err := c.prepared(ctx, tail...)
	c.queue = nil
	if err != nil {
		if kept > 0 {
			c.failed = err
		}
		return nil, nil, 0, err
	}
	c.trip(ctx, pipeHow(stmts), lastQuery(stmts), len(stmts))
	pipedSends.Add(1)
	m := c.Conn.Conn().TypeMap()
	p := c.Conn.Conn().PgConn().StartPipeline(ctx)
	fe := c.Conn.Conn().PgConn().Frontend()
	fe.Send(&c.wbuf) // the frontend writes into the connection's buffer
	for i := range stmts {
		if err := c.sendOne(m, p, &stmts[i]); err != nil {
			c.wbuf.handedOver()
			p.Close()
			if i < kept {
				c.failed = err
			}
			return nil, nil, 0, err
		}
	}
	p.SendPipelineSync()
	fe.Send(c.wbuf.takeBack()) // and gives it back as it grew, before it drops it
	if err := p.Flush(); err != nil {
		p.Close()
		return nil, nil, 0, err
	}
	return p, m, kept, nil
}

// sendBuf is the buffer a connection's pipeline is written into. pgx's
// frontend (pgproto3.Frontend) writes its messages into a buffer it lets
// go after each write when it grew over 1 KiB, so each batch grew a new
// one from 1 KiB by doubling: 0.3 GB of a catch-up's 3.4 GB allocated, its
// bytes copied at each growth. sendBuf is a message the frontend is sent
// as any (Frontend.Send): encoded at a batch's start it makes the
// connection's buffer the frontend's (what the frontend held moved into
// it), and at the batch's end (takeBack) it takes back the frontend's
// buffer as it grew, which the frontend then writes and drops; nothing
// else holds it once the write returned. A buffer over maxSendBuf is
// not kept.
type sendBuf struct {
	b []byte
}

// maxSendBuf bounds the write buffer a connection keeps between batches
// (a catch-up's push of 500 records writes about 1 MB).
const maxSendBuf = 2 << 20

// Encode hands the connection's buffer to the frontend, with what the
// frontend had written (dst) moved into it.
func (s *sendBuf) Encode(dst []byte) ([]byte, error) {
	b := append(s.b[:0], dst...)
	s.b = nil // the frontend's now, until takeBack
	return b, nil
}

// handedOver forgets a buffer handed to the frontend and not taken back.
func (s *sendBuf) handedOver() { s.b = nil }

// takeBack is the message that takes back the frontend's buffer (dst).
func (s *sendBuf) takeBack() *bufTaker { return (*bufTaker)(s) }

func (s *sendBuf) Decode([]byte) error { return errors.New("pg: sendBuf is not decoded") }
func (s *sendBuf) Frontend()           {}

// bufTaker is a sendBuf taking back the frontend's buffer: it encodes
// nothing.
type bufTaker sendBuf

func (t *bufTaker) Encode(dst []byte) ([]byte, error) {
	if cap(dst) <= maxSendBuf {
		t.b = dst[:0]
	}
	return dst, nil
}

func (t *bufTaker) Decode([]byte) error { return errors.New("pg: bufTaker is not decoded") }
func (t *bufTaker) Frontend()           {}

// nextResult is the next statement's result of p.
func nextResult(p *pgconn.Pipeline) (*pgconn.ResultReader, error) {
	res, err := p.GetResults()
	if err == nil && res == nil {
		err = errors.New("pg: the pipeline ended early")
	}
	rr, ok := res.(*pgconn.ResultReader)
	if err == nil && !ok {
		err = fmt.Errorf("pg: expected a result, got %T", res)
	}
	return rr, err
}

// readInt reads the next result of p, a single integer.
func readInt(m *pgtype.Map, p *pgconn.Pipeline) (int64, error) {
	rr, err := nextResult(p)
	if err != nil {
		return 0, err
	}
	rows, err := readResult(m, rr)
	if err != nil {
		return 0, err
	}
	b := rows.(*rowsBuf)
	if len(b.rows) != 1 || len(b.rows[0]) != 1 {
		return 0, fmt.Errorf("pg: expected one value, got %d rows", len(b.rows))
	}
	v, ok := b.rows[0][0].(int64)
	if !ok {
		return 0, fmt.Errorf("pg: expected an integer, got %T", b.rows[0][0])
	}
	return v, nil
}

// sendOne queues s on p, its parameters encoded into c.params (reused:
// the Bind message copies them).
func (c *conn) sendOne(m *pgtype.Map, p *pgconn.Pipeline, s *preparedStmt) error {
	c.params = c.params[:0]
	// The Bind message copies vals and formats as it is sent: reused.
	vals := slices.Grow(c.vals[:0], len(s.args))[:len(s.args)]
	formats := slices.Grow(c.formats[:0], len(s.args))[:len(s.args)]
	c.vals, c.formats = vals, formats
	for i, arg := range s.args {
		vals[i], formats[i] = nil, 0
		if arg == nil {
			continue
		}
		oid := s.sd.ParamOIDs[i]
		format := m.FormatCodeForOID(oid)
		if _, ok := arg.(string); ok {
			format = pgtype.TextFormatCode
		}
		pos := len(c.params)
		buf, err := m.Encode(oid, format, arg, c.params)
		if err != nil {
			format = 1 - format // the other format, as pgx tries it
			if buf, err = m.Encode(oid, format, arg, c.params); err != nil {
				return fmt.Errorf("failed to encode args[%d]: %w", i, err)
			}
		}
		formats[i] = format
		if buf == nil {
			continue // encoded as NULL
		}
		c.params = buf
		vals[i] = buf[pos:len(buf):len(buf)]
	}
	p.SendQueryStatement(s.sd, vals, formats, c.resultFormats(m, s.sd))
	return nil
}

// resultFormats are the formats sd's columns are read in, the same at
// each run (the pipeline keeps them to read its result: never changed).
func (c *conn) resultFormats(m *pgtype.Map, sd *pgconn.StatementDescription) []int16 {
	if r, ok := c.results[sd]; ok {
		return r
	}
	r := make([]int16, len(sd.Fields))
	for i, f := range sd.Fields {
		r[i] = m.FormatCodeForOID(f.DataTypeOID)
	}
	if c.results == nil {
		c.results = map[*pgconn.StatementDescription][]int16{}
	}
	c.results[sd] = r
	return r
}

// readPiped reads the results of a pipeline of kept statements and, as
// want says, the one after them (not what follows it, nor the Sync); the
// first kept statement's error is the answer and the connection's failure
// (conn.failed).
func (c *conn) readPiped(m *pgtype.Map, p *pgconn.Pipeline, kept int, want resultOf) (pgconn.CommandTag, driver.Rows, error) {
	n := kept
	if want != resultNone {
		n++
	}
	var tag pgconn.CommandTag
	var rows driver.Rows
	for i := range n {
		rr, err := nextResult(p)
		if err == nil && i == kept && want == resultRows {
			rows, err = readResult(m, rr)
		} else if err == nil {
			tag, err = rr.Close()
		}
		if err != nil {
			if i < kept {
				c.failed = err
			}
			return pgconn.CommandTag{}, nil, err
		}
	}
	return tag, rows, nil
}

// readResult reads rr whole, each value as pgx's database/sql driver
// gives it (valueOf), into a rowsBuf.
func readResult(m *pgtype.Map, rr *pgconn.ResultReader) (driver.Rows, error) {
	fds := rr.FieldDescriptions()
	b := &rowsBuf{cols: make([]string, len(fds))}
	for i, fd := range fds {
		b.cols[i] = fd.Name
	}
	for rr.NextRow() {
		row := make([]driver.Value, len(fds))
		for i, src := range rr.Values() {
			if src == nil {
				continue
			}
			v, err := valueOf(m, fds[i], src)
			if err != nil {
				rr.Close()
				return nil, fmt.Errorf("convert field %d failed: %w", i, err)
			}
			row[i] = v
		}
		b.rows = append(b.rows, row)
	}
	if _, err := rr.Close(); err != nil {
		return nil, err
	}
	return b, nil
}
