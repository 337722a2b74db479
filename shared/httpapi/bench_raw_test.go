package httpapi_test

import (
	"context"
	"database/sql"
	"fmt"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/uuid"

	"kassa.dev/shared/node"
)

// The two baselines BenchmarkOrderFlow measures Kassa against write the
// rows Kassa writes for a cash sale of three lines, request by request,
// straight into a store made by node.CreateStore (the same schema,
// indexes and triggers), with WAL and synchronous=FULL, and no
// application logic: no reads, no pricing, no checks.
//
//   - The store's group-commit limit: one writer goroutine takes the 16
//     clients' requests as they queue, runs up to 64 of them in one
//     transaction with prepared statements, commits once and answers them
//     all, as Kassa's writer does. Nothing can write these rows faster
//     with this durability.
//   - A naive writer: each request is one transaction of its own on a
//     database/sql pool of one connection, its statements unprepared, as
//     a plain database/sql program writes.
//
// The rows per sale, as measured on Kassa's edge on 2026-11-28 (a test
// store after ten bench sales; payload sizes are their average lengths
// then, kept fixed so that the yardstick does not move with Kassa):
//
//	POST /orders            idempotency key (its 1,704-byte answer), order counter,
//	                        order, 3 lines, kitchen ticket counter and number,
//	                        kitchen event (811 bytes), order.created event (1,695),
//	                        outbox: order (645), 3 lines (461), event (2,203)
//	POST /payments/initiate idempotency key (543), payment, order paid_total,
//	                        payment.captured event (534),
//	                        outbox: payment (494), order (94), event (891)
//	POST /orders/:id/complete idempotency key (2,370), 3 movements and their
//	                        stock levels, order status, history, receipt sequence,
//	                        receipt, order.completed event (2,361),
//	                        outbox: 3 movements (427), order (94), history (323),
//	                        receipt (359), event (2,939)
//
// Kassa writes each key's record twice (running in the request's unit,
// its answer in a shared one); the baselines write it once, answer and all.
const (
	rawCreateAnswer, rawPayAnswer, rawCompleteAnswer   = 1704, 543, 2370
	rawTicketData                                      = 811
	rawCreatedData, rawCapturedData, rawDoneData       = 1695, 534, 2361
	rawCreatedFields, rawCapturedFields, rawDoneFields = 2203, 891, 2939
	rawOrderFields, rawLineFields, rawPaymentFields    = 645, 461, 494
	rawUpdateFields, rawMoveFields, rawHistoryFields   = 94, 427, 323
	rawReceiptFields                                   = 359
)

// rawStmts are the statements a sale's requests run, by index.
var rawStmts = []string{
	rawKey: `INSERT INTO idempotency_keys (scope, key, fingerprint, status, resp_status, content_type, location, body, created_at)
		VALUES (?, ?, ?, 'done', 201, 'application/json', ?, ?, ?)`,
	rawCounter: `INSERT INTO order_counters (location_id, next) VALUES (?, 2) ON CONFLICT(location_id) DO UPDATE SET next = next + 1 RETURNING next - 1`,
	rawOrder: `INSERT INTO orders (id, org_id, location_id, number, status, channel, customer_id, currency, subtotal, discount_total, tax_total, total,
		paid_total, refunded_total, loyalty_points_earned, kitchen_status, notes, tax_inclusive, tax_rate_bps, created_by, occurred_at,
		created_at, updated_at, hlc, origin, field_hlc, voucher_code, campaigns)
		VALUES (?, ?, ?, ?, 'open', 'pos', NULL, 'AUD', 1970, 0, 180, 1970, 0, 0, 0, 'new', '', 1, 1000, ?, ?, ?, ?, ?, ?, ?, NULL, '[]')`,
	rawLine: `INSERT INTO order_lines (id, org_id, order_id, position, product_id, name, sku, quantity, unit_price, modifiers, discount, tax, total,
		created_at, updated_at, hlc, origin, campaign_discounts) VALUES (?, ?, ?, ?, ?, 'P0', 'B-0', 1, 450, ?, 0, 43, 470, ?, ?, ?, ?, '[]')`,
	rawTicketCounter: `INSERT INTO kds_ticket_counters (location_id, day, next) VALUES (?, ?, 2)
		ON CONFLICT(location_id, day) DO UPDATE SET next = next + 1 RETURNING next - 1`,
	rawTicketNumber: `INSERT INTO kds_ticket_numbers (order_id, day, number) VALUES (?, ?, ?)`,
	rawKitchen: `INSERT INTO kds_events (org_id, location_id, order_id, type, stations, data, created_at)
		VALUES (?, ?, ?, 'ticket.created', '["kitchen"]', ?, ?)`,
	rawEvent: `INSERT INTO events (id, org_id, location_id, type, data, occurred_at, created_at, updated_at, hlc, origin)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
	rawOutbox: `INSERT INTO outbox (id, org_id, location_id, entity, entity_id, op, fields, hlc, origin, actor, created_at)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
	rawPayment: `INSERT INTO payments (id, org_id, location_id, order_id, amount, method, status, offline, processor_ref, tendered, change_due,
		refunded_amount, captured_at, created_at, updated_at, hlc, origin, field_hlc)
		VALUES (?, ?, ?, ?, 1970, 'cash', 'captured', 0, ?, 1970, 0, 0, ?, ?, ?, ?, ?, ?)`,
	rawPaid: `UPDATE orders SET paid_total = 1970, updated_at = ?, hlc = ?, origin = ?, field_hlc = json_patch(field_hlc, ?) WHERE id = ? AND org_id = ?`,
	rawMovement: `INSERT INTO stock_movements (id, org_id, location_id, product_id, delta, reason, ref_type, ref_id, actor, note, origin, created_at, updated_at, hlc)
		VALUES (?, ?, ?, ?, -1, 'sale', 'order', ?, ?, '', ?, ?, ?, ?)`,
	rawLevel: `UPDATE stock_levels SET on_hand = on_hand - 1 WHERE org_id = ? AND location_id = ? AND product_id = ?`,
	rawDone: `UPDATE orders SET status = 'completed', completed_at = ?, loyalty_points_earned = 0, updated_at = ?, hlc = ?, origin = ?,
		field_hlc = json_patch(field_hlc, ?) WHERE id = ? AND org_id = ?`,
	rawHistory: `INSERT INTO order_history (id, org_id, order_id, status, at, actor, created_at, updated_at, hlc, origin)
		VALUES (?, ?, ?, 'completed', ?, ?, ?, ?, ?, ?)`,
	rawReceiptSeq: `INSERT INTO receipt_sequences (org_id, location_id, register_id, code, next) VALUES (?, ?, '', 'RAW-0', 2)
		ON CONFLICT(org_id, location_id, register_id) DO UPDATE SET next = next + 1 RETURNING next - 1`,
	rawReceipt: `INSERT INTO receipts (id, org_id, location_id, register_id, number, seq, kind, order_id, created_at, updated_at, hlc, origin)
		VALUES (?, ?, ?, '', ?, ?, 'sale', ?, ?, ?, ?, ?)`,
}

const (
	rawKey = iota
	rawCounter
	rawOrder
	rawLine
	rawTicketCounter
	rawTicketNumber
	rawKitchen
	rawEvent
	rawOutbox
	rawPayment
	rawPaid
	rawMovement
	rawLevel
	rawDone
	rawHistory
	rawReceiptSeq
	rawReceipt
)

// rawStmt is one statement of a request. A counter's statement returns
// the number taken (returns); a statement after it with seqAt > 0 takes
// that number as its argument seqAt (1-based).
type rawStmt struct {
	q       int
	args    []any
	returns bool
	seqAt   int
}

// rawStore is a store the baselines write a sale's rows into.
type rawStore struct {
	b                *testing.B
	db               *sql.DB
	org, loc, user   string
	node             string
	products, levels []string
	pad              string // payload text, cut to each payload's size
	hlc              atomic.Int64
	numbers          atomic.Int64
	prepared         []*sql.Stmt
	writes           chan *rawRequest
	stats            rawStats
	groupCommit      bool
	stopped          chan struct{}
	started          time.Time
}

type rawStats struct {
	batches, units, busy, commit atomic.Int64
}

type rawRequest struct {
	stmts []rawStmt
	done  chan error
}

// startRaw opens a baseline store; groupCommit picks the limit's writer,
// otherwise the naive one.
func startRaw(b *testing.B, groupCommit bool) *benchNode {
	path := filepath.Join(b.TempDir(), "raw.db")
	if err := node.CreateStore(context.Background(), path); err != nil {
		b.Fatal(err)
	}
	w, err := sql.Open("sqlite3", "file:"+path+"?_busy_timeout=10000&_journal_mode=WAL&_synchronous=FULL&_txlock=immediate&_foreign_keys=1")
	if err != nil {
		b.Fatal(err)
	}
	w.SetMaxOpenConns(1)
	s := &rawStore{b: b, db: w, org: rawID(), loc: rawID(), user: rawID(), node: rawID(), groupCommit: groupCommit,
		pad: strings.Repeat(`{"id":"01a2218b-a79b-7785-bac4-f584d0d6baf5","name":"P0","quantity":2,"unit_price":450},`, 40)}
	s.setup()
	if groupCommit {
		for _, q := range rawStmts {
			st, err := w.Prepare(q)
			if err != nil {
				b.Fatal(err)
			}
			s.prepared = append(s.prepared, st)
		}
		s.writes, s.stopped = make(chan *rawRequest, 1024), make(chan struct{})
		go s.writeLoop()
	}
	return &benchNode{sale: s.sale, stats: s.writerStats, stop: s.stop}
}

func rawID() string { return uuid.Must(uuid.NewV7()).String() }

func rawNow() string { return time.Now().UTC().Format(node.TimeFormat) }

// setup writes the org, location, user, products and stock levels.
func (s *rawStore) setup() {
	now := rawNow()
	for _, q := range []struct {
		q    string
		args []any
	}{
		{`INSERT INTO orgs (id, name, currency, created_at, updated_at, hlc, origin) VALUES (?, 'raw', 'AUD', ?, ?, 'h', 'n')`, []any{s.org, now, now}},
		{`INSERT INTO locations (id, org_id, name, timezone, currency, created_at, updated_at, hlc, origin) VALUES (?, ?, 'l', 'UTC', 'AUD', ?, ?, 'h', 'n')`, []any{s.loc, s.org, now, now}},
	} {
		if _, err := s.db.Exec(q.q, q.args...); err != nil {
			s.b.Fatal(err)
		}
	}
	for i := range 3 {
		p, l := rawID(), rawID()
		s.products, s.levels = append(s.products, p), append(s.levels, l)
		if _, err := s.db.Exec(`INSERT INTO products (id, org_id, name, sku, base_price, created_at, updated_at, hlc, origin) VALUES (?, ?, 'p', ?, 450, ?, ?, 'h', 'n')`,
			p, s.org, fmt.Sprint("R", i), now, now); err != nil {
			s.b.Fatal(err)
		}
		if _, err := s.db.Exec(`INSERT INTO stock_levels (id, org_id, location_id, product_id, on_hand, created_at, updated_at, hlc, origin) VALUES (?, ?, ?, ?, 1000000, ?, ?, 'h', 'n')`,
			l, s.org, s.loc, p, now, now); err != nil {
			s.b.Fatal(err)
		}
	}
}

// payload is n bytes of JSON-like text (n < 3,600).
func (s *rawStore) payload(n int) string { return s.pad[:n] }

// stamp is a fresh HLC text, as Kassa's clock writes it.
func (s *rawStore) stamp() string {
	return fmt.Sprintf("%015d.%010d", time.Now().UnixMilli(), s.hlc.Add(1))
}

// outbox is the change record of a row write.
func (s *rawStore) outbox(entity, id, op string, fields int, hlc, now string) rawStmt {
	return rawStmt{q: rawOutbox, args: []any{rawID(), s.org, s.loc, entity, id, op, s.payload(fields), hlc, s.node, s.user, now}}
}

// event is an event row and its change record.
func (s *rawStore) event(typ string, data, fields int, now string) []rawStmt {
	id, hlc := rawID(), s.stamp()
	return []rawStmt{{q: rawEvent, args: []any{id, s.org, s.loc, typ, s.payload(data), now, now, now, hlc, s.node}},
		s.outbox("event", id, "insert", fields, hlc, now)}
}

// key is the request's idempotency record, with its answer.
func (s *rawStore) key(answer int, location, now string) rawStmt {
	return rawStmt{q: rawKey, args: []any{s.org + "/" + s.user, uuid.NewString(), strings.Repeat("f", 64), location, []byte(s.payload(answer)), now}}
}

// create is POST /orders' statements.
func (s *rawStore) create(oid string) []rawStmt {
	now, hlc := rawNow(), s.stamp()
	stamps := `{"*":"` + hlc + "@" + s.node + `"}`
	out := []rawStmt{s.key(rawCreateAnswer, "/api/v1/orders/"+oid, now), {q: rawCounter, args: []any{s.loc}, returns: true},
		{q: rawOrder, args: []any{oid, s.org, s.loc, fmt.Sprintf("RAW-%08d", s.numbers.Add(1)), s.user, now, now, now, hlc, s.node, stamps}},
		s.outbox("order", oid, "insert", rawOrderFields, hlc, now)}
	for i, p := range s.products {
		lid, lhlc := rawID(), s.stamp()
		out = append(out, rawStmt{q: rawLine, args: []any{lid, s.org, oid, i, p, s.payload(150), now, now, lhlc, s.node}},
			s.outbox("order_line", lid, "insert", rawLineFields, lhlc, now))
	}
	day := now[:10]
	out = append(out, rawStmt{q: rawTicketCounter, args: []any{s.loc, day}, returns: true},
		rawStmt{q: rawTicketNumber, args: []any{oid, day, nil}, seqAt: 3},
		rawStmt{q: rawKitchen, args: []any{s.org, s.loc, oid, s.payload(rawTicketData), now}})
	return append(out, s.event("order.created", rawCreatedData, rawCreatedFields, now)...)
}

// pay is POST /payments/initiate's statements (cash).
func (s *rawStore) pay(oid string) []rawStmt {
	now, hlc, pid := rawNow(), s.stamp(), rawID()
	out := []rawStmt{s.key(rawPayAnswer, "/api/v1/payments/"+pid, now),
		{q: rawPayment, args: []any{pid, s.org, s.loc, oid, "cash_" + pid, now, now, now, hlc, s.node, `{"*":"` + hlc + "@" + s.node + `"}`}},
		s.outbox("payment", pid, "insert", rawPaymentFields, hlc, now)}
	uhlc := s.stamp()
	st := uhlc + "@" + s.node
	out = append(out, rawStmt{q: rawPaid, args: []any{now, uhlc, s.node, `{"paid_total":"` + st + `","updated_at":"` + st + `"}`, oid, s.org}},
		s.outbox("order", oid, "update", rawUpdateFields, uhlc, now))
	return append(out, s.event("payment.captured", rawCapturedData, rawCapturedFields, now)...)
}

// complete is POST /orders/:id/complete's statements.
func (s *rawStore) complete(oid string) []rawStmt {
	now := rawNow()
	out := []rawStmt{s.key(rawCompleteAnswer, "", now)}
	for _, p := range s.products {
		mid, hlc := rawID(), s.stamp()
		out = append(out, rawStmt{q: rawMovement, args: []any{mid, s.org, s.loc, p, oid, s.user, s.node, now, now, hlc}},
			s.outbox("stock_movement", mid, "insert", rawMoveFields, hlc, now),
			rawStmt{q: rawLevel, args: []any{s.org, s.loc, p}})
	}
	uhlc := s.stamp()
	st := uhlc + "@" + s.node
	out = append(out, rawStmt{q: rawDone, args: []any{now, now, uhlc, s.node,
		`{"completed_at":"` + st + `","loyalty_points_earned":"` + st + `","status":"` + st + `","updated_at":"` + st + `"}`, oid, s.org}},
		s.outbox("order", oid, "update", rawUpdateFields, uhlc, now))
	hid, hhlc := rawID(), s.stamp()
	out = append(out, rawStmt{q: rawHistory, args: []any{hid, s.org, oid, now, s.user, now, now, hhlc, s.node}},
		s.outbox("order_history", hid, "insert", rawHistoryFields, hhlc, now))
	rid, rhlc := rawID(), s.stamp()
	out = append(out, rawStmt{q: rawReceiptSeq, args: []any{s.org, s.loc}, returns: true},
		rawStmt{q: rawReceipt, args: []any{rid, s.org, s.loc, fmt.Sprintf("RAW-0-%08d", s.numbers.Add(1)), nil, oid, now, now, rhlc, s.node}, seqAt: 5},
		s.outbox("receipt", rid, "insert", rawReceiptFields, rhlc, now))
	return append(out, s.event("order.completed", rawDoneData, rawDoneFields, now)...)
}

// sale rings up one sale: three requests, each timed from the moment
// its statements are ready to the moment its commit returned.
func (s *rawStore) sale(c, k int, pace time.Duration, lat []time.Duration) []time.Duration {
	oid := rawID()
	for _, stmts := range [][]rawStmt{s.create(oid), s.pay(oid), s.complete(oid)} {
		t := time.Now()
		if err := s.request(stmts); err != nil {
			panic(err) // b.Fatal ends only this client's goroutine
		}
		lat = append(lat, time.Since(t))
	}
	return lat
}

// request writes one request's statements: queued for the group-commit
// writer, or in a transaction of its own.
func (s *rawStore) request(stmts []rawStmt) error {
	if s.groupCommit {
		r := &rawRequest{stmts: stmts, done: make(chan error, 1)}
		s.writes <- r
		return <-r.done
	}
	ctx := context.Background()
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	began := time.Now() // holding the store's one connection: its writer's time

	if err := s.run(ctx, tx, stmts); err != nil {
		tx.Rollback()
		return err
	}
	c := time.Now()
	err = tx.Commit()
	s.stats.commit.Add(int64(time.Since(c)))
	s.stats.busy.Add(int64(time.Since(began)))
	s.stats.batches.Add(1)
	s.stats.units.Add(1)
	return err
}

// run runs a request's statements in tx.
func (s *rawStore) run(ctx context.Context, tx *sql.Tx, stmts []rawStmt) error {
	var seq int64
	for _, st := range stmts {
		args := st.args
		if st.seqAt > 0 {
			args[st.seqAt-1] = seq
		}
		var err error
		switch {
		case st.returns && s.prepared != nil:
			err = tx.StmtContext(ctx, s.prepared[st.q]).QueryRowContext(ctx, args...).Scan(&seq)
		case st.returns:
			err = tx.QueryRowContext(ctx, rawStmts[st.q], args...).Scan(&seq)
		case s.prepared != nil:
			_, err = tx.StmtContext(ctx, s.prepared[st.q]).ExecContext(ctx, args...)
		default:
			_, err = tx.ExecContext(ctx, rawStmts[st.q], args...)
		}
		if err != nil {
			return fmt.Errorf("%s: %w", rawStmts[st.q][:40], err)
		}
	}
	return nil
}

// writeLoop is the limit's writer: it runs the queued requests, up to 64
// at a time, in one transaction and answers them after the commit.
func (s *rawStore) writeLoop() {
	defer close(s.stopped)
	ctx := context.Background()
	for r := range s.writes {
		batch := []*rawRequest{r}
	drain:
		for len(batch) < 64 {
			select {
			case r, ok := <-s.writes:
				if !ok {
					break drain
				}
				batch = append(batch, r)
			default:
				break drain
			}
		}
		began := time.Now()
		tx, err := s.db.BeginTx(ctx, nil)
		for _, r := range batch {
			if err == nil {
				err = s.run(ctx, tx, r.stmts)
			}
		}
		if err == nil {
			c := time.Now()
			err = tx.Commit()
			s.stats.commit.Add(int64(time.Since(c)))
		} else if tx != nil {
			tx.Rollback()
		}
		s.stats.busy.Add(int64(time.Since(began)))
		s.stats.batches.Add(1)
		s.stats.units.Add(int64(len(batch)))
		for _, r := range batch {
			r.done <- err
		}
	}
}

func (s *rawStore) writerStats() node.WriterStats {
	return node.WriterStats{Batches: s.stats.batches.Load(), Units: s.stats.units.Load(),
		Busy: time.Duration(s.stats.busy.Load()), Commit: time.Duration(s.stats.commit.Load())}
}

func (s *rawStore) stop() {
	if s.writes != nil {
		close(s.writes)
		<-s.stopped
	}
	s.db.Close()
}
