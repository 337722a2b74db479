package sqlite

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"kassa.dev/shared/kassa"
)

// The kitchen tickets of a batch of due orders (RecordDueTickets, and
// syncTicket for one), planned and written set by set rather than order by
// order: a sync catch-up makes thousands of orders due at once, and on
// PostgreSQL every statement is a round trip (docs/write-path.md). The plan
// reads the batch's orders, their lines, their newest ticket events and
// their products' stations in a few queries per maxInList orders; the write
// checks the plans, numbers the new tickets per location and business day
// and appends the events with a few statements per batch.

// eachChunk calls fn with the IN list "(…)" and the arguments of each
// chunk of ids (inList: maxInList at most, padded so that the writer keeps
// each statement's few texts prepared), in order.
func eachChunk(ids []string, fn func(in string, args []any) error) error {
	for c := range slices.Chunk(ids, maxInList) {
		in, args := inList(0, anys(c))
		if err := fn("("+in+")", args); err != nil {
			return err
		}
	}
	return nil
}

// anys is ids as query arguments.
func anys(ids []string) []any {
	out := make([]any, len(ids))
	for i, id := range ids {
		out[i] = id
	}
	return out
}

// planDue compares the due orders (order id → org id) with their newest
// ticket events on q (a snapshot before the unit, or the unit) and plans
// the ticket event each needs. An order not there yet, or without its
// lines, gets a plan with no stamp: the unit looks at it again.
func planDue(ctx context.Context, q querier, batch map[string]string) ([]*ticketPlan, error) {
	ids := slices.Sorted(maps.Keys(batch))
	plans := make([]*ticketPlan, 0, len(ids))
	for c := range slices.Chunk(ids, maxInList) {
		d := &dueOrders{org: batch}
		if err := d.load(ctx, q, c); err != nil {
			return nil, err
		}
		for _, id := range c {
			p, err := d.plan(id)
			if err != nil {
				return nil, err
			}
			plans = append(plans, p)
		}
	}
	return plans, nil
}

// dueOrders is one chunk of due orders as read for their plans: the
// orders with their lines and stamps, their newest ticket events and the
// stations of their products.
type dueOrders struct {
	org      map[string]string // order id → org id, as queued
	orders   map[string]*kassa.Order
	hlc      map[string]string
	last     map[string]lastTicket
	stations map[string]string // org id + "/" + product id → station
}

// lastTicket is an order's newest ticket event.
type lastTicket struct {
	seq  int64
	data string
}

// load reads the chunk ids' orders, lines, newest ticket events and
// stations on q.
func (d *dueOrders) load(ctx context.Context, q querier, ids []string) error {
	q, done, err := inSnapshot(ctx, q) // the orders and their tickets as of one moment
	if err != nil {
		return err
	}
	defer done()
	in, args := inList(0, anys(ids))
	in = "(" + in + ")"
	if err := d.loadOrders(ctx, q, in, args); err != nil {
		return err
	}
	if err := loadLines(ctx, q, in, args, d.orders); err != nil {
		return err
	}
	if err := d.loadLast(ctx, q, in, args); err != nil {
		return err
	}
	d.stations, err = productStations(ctx, q, slices.Collect(maps.Values(d.orders)))
	return err
}

// loadOrders reads the orders of the chunk that belong to the org they
// were queued for, with their stamps.
func (d *dueOrders) loadOrders(ctx context.Context, q querier, in string, args []any) error {
	d.orders, d.hlc = map[string]*kassa.Order{}, map[string]string{}
	rows, err := q.QueryContext(ctx, strings.Replace(orderCols, " FROM orders", ", hlc FROM orders", 1)+` WHERE id IN `+in, args...)
	if err != nil {
		return err
	}
	defer rows.Close()
	for rows.Next() {
		var hlc string
		o, err := scanOrder(withHLC{rows, &hlc})
		if err != nil {
			return err
		}
		if o.OrgID == d.org[o.ID] {
			d.orders[o.ID], d.hlc[o.ID] = o, hlc
		}
	}
	return rows.Err()
}

// withHLC scans a row of orderCols followed by the order's hlc.
type withHLC struct {
	s   scanner
	hlc *string
}

func (w withHLC) Scan(dest ...any) error { return w.s.Scan(append(dest, w.hlc)...) }

// loadLast reads the newest ticket event of each order of the chunk.
func (d *dueOrders) loadLast(ctx context.Context, q querier, in string, args []any) error {
	d.last = map[string]lastTicket{}
	rows, err := q.QueryContext(ctx, `SELECT order_id, seq, data FROM kds_events
		WHERE seq IN (SELECT max(seq) FROM kds_events WHERE order_id IN `+in+` GROUP BY order_id)`, args...)
	if err != nil {
		return err
	}
	defer rows.Close()
	for rows.Next() {
		var id string
		var l lastTicket
		if err := rows.Scan(&id, &l.seq, &l.data); err != nil {
			return err
		}
		d.last[id] = l
	}
	return rows.Err()
}

// plan is the ticket plan of order id: the event its order needs after its
// newest one, and the ticket to write.
func (d *dueOrders) plan(id string) (*ticketPlan, error) {
	p := &ticketPlan{org: d.org[id], order: id}
	o := d.orders[id]
	if o == nil || len(o.LineItems) == 0 {
		return p, nil // its order row or its lines come in a later batch
	}
	p.hlc, p.lines = d.hlc[id], int64(len(o.LineItems))
	if last, ok := d.last[id]; !ok {
		p.typ = kassa.TicketCreated
	} else {
		p.seq = last.seq
		typ, err := ticketChange(last.data, o)
		if err != nil || typ == "" {
			return p, err
		}
		p.typ = typ
	}
	p.ticket = ticketOf(o, d.stations)
	return p, nil
}

// productStations reads the station of every product of the orders'
// lines, keyed org id + "/" + product id: the product's, else its
// category's ("" for neither).
func productStations(ctx context.Context, q querier, orders []*kassa.Order) (map[string]string, error) {
	var ids []string
	for _, o := range orders {
		for _, l := range o.LineItems {
			ids = append(ids, l.ProductID)
		}
	}
	slices.Sort(ids)
	out := map[string]string{}
	return out, eachChunk(slices.Compact(ids), func(in string, args []any) error {
		rows, err := q.QueryContext(ctx, `SELECT p.org_id, p.id, coalesce(p.station, c.station, '')
			FROM products p LEFT JOIN categories c ON c.id = p.category_id AND c.org_id = p.org_id
			WHERE p.id IN `+in, args...)
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			var org, id, st string
			if err := rows.Scan(&org, &id, &st); err != nil {
				return err
			}
			out[org+"/"+id] = st
		}
		return rows.Err()
	})
}

// stillAsPlanned splits the plans into those whose orders and tickets are,
// in the unit, as the plan found them (written as planned) and the orders
// of the others (order id → org id), to plan again in the unit.
func stillAsPlanned(ctx context.Context, tx *Tx, plans []*ticketPlan) ([]*ticketPlan, map[string]string, error) {
	planned := map[string]*ticketPlan{} // left: those not as planned
	for _, p := range plans {
		if p.hlc != "" {
			planned[p.order] = p
		}
	}
	err := eachChunk(slices.Sorted(maps.Keys(planned)), func(in string, args []any) error {
		// GROUP BY: without it PostgreSQL may read max(seq) as the
		// first row of a backward scan of the whole table's seq, which
		// its estimates favour while the table is young.
		rows, err := tx.QueryContext(ctx, `SELECT id, hlc, (SELECT count(*) FROM order_lines WHERE order_id = orders.id),
			coalesce((SELECT max(seq) FROM kds_events WHERE order_id = orders.id GROUP BY order_id), 0) FROM orders WHERE id IN `+in, args...)
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			var id, hlc string
			var lines, seq int64
			if err := rows.Scan(&id, &hlc, &lines, &seq); err != nil {
				return err
			}
			if p := planned[id]; hlc == p.hlc && lines == p.lines && seq == p.seq {
				delete(planned, id)
			}
		}
		return rows.Err()
	})
	fresh, stale := make([]*ticketPlan, 0, len(plans)), map[string]string{}
	for _, p := range plans {
		if p.hlc == "" || planned[p.order] != nil {
			stale[p.order] = p.org
		} else {
			fresh = append(fresh, p)
		}
	}
	return fresh, stale, err
}

// writeDue writes the planned ticket events in the unit: those still as
// planned as they are, the others planned again in the unit.
func writeDue(ctx context.Context, tx *Tx, plans []*ticketPlan) error {
	if err := lockTicketOrders(ctx, tx, plans); err != nil {
		return err
	}
	fresh, stale, err := stillAsPlanned(ctx, tx, plans)
	if err != nil {
		return err
	}
	again, err := planDue(ctx, tx, stale)
	if err != nil {
		return err
	}
	return writeTickets(ctx, tx, append(fresh, again...))
}

// lockTicketOrders takes the ticket locks of the plans' orders
// (Tx.LockKeys, ticketLock): where writers commit side by side
// (PostgreSQL's write loops, several hubs), two units that found the same
// order's ticket behind would both append its event; the second now
// waits, then finds it written. Keys, not the orders' rows: an apply
// completing one of those orders does not wait for the kitchen.
func lockTicketOrders(ctx context.Context, tx *Tx, plans []*ticketPlan) error {
	ids := make([]string, len(plans))
	for i, p := range plans {
		ids[i] = p.order
	}
	return tx.LockKeys(ctx, ticketLock, ids)
}

// ticketLock is the scope of an order's ticket lock (Tx.LockKeys).
const ticketLock = "kds ticket"

// writeTickets appends the plans' ticket events (those that need one) to
// kds_events, oldest order first: a ticket keeps its number, and an
// order's first ticket takes the next of its location's business day.
func writeTickets(ctx context.Context, tx *Tx, plans []*ticketPlan) error {
	plans = slices.DeleteFunc(slices.Clone(plans), func(p *ticketPlan) bool { return p.typ == "" })
	if len(plans) == 0 {
		return nil
	}
	slices.SortFunc(plans, func(x, y *ticketPlan) int {
		return cmp.Or(x.ticket.OrderedAt.Compare(y.ticket.OrderedAt), strings.Compare(x.order, y.order))
	})
	if err := numberTickets(ctx, tx, plans); err != nil {
		return err
	}
	return appendTickets(ctx, tx, plans)
}

// numberTickets gives each plan's ticket its number: the one its order
// has, or the next ones of its location's business day, taken with one
// counter statement per location.
func numberTickets(ctx context.Context, tx *Tx, plans []*ticketPlan) error {
	have, err := ticketNumbers(ctx, tx, plans)
	if err != nil {
		return err
	}
	var locs []string
	newOf := map[string][]*kassa.Ticket{} // location → its tickets without a number
	for _, p := range plans {
		if n, ok := have[p.order]; ok {
			p.ticket.TicketNumber = n
			continue
		}
		if newOf[p.ticket.LocationID] == nil {
			locs = append(locs, p.ticket.LocationID)
		}
		newOf[p.ticket.LocationID] = append(newOf[p.ticket.LocationID], p.ticket)
	}
	if len(locs) == 0 {
		return nil
	}
	slices.Sort(locs) // counters taken in one order: concurrent units on PostgreSQL never wait on each other in a circle
	days, err := businessDays(ctx, tx, locs)
	if err != nil {
		return err
	}
	var rows []any
	for _, loc := range locs {
		if rows, err = takeTicketNumbers(ctx, tx, loc, days[loc], newOf[loc], rows); err != nil {
			return err
		}
	}
	insertTicketNumbers(tx, rows)
	return nil
}

// ticketNumbers reads the numbers the plans' orders already have.
func ticketNumbers(ctx context.Context, tx *Tx, plans []*ticketPlan) (map[string]int64, error) {
	ids := make([]string, len(plans))
	for i, p := range plans {
		ids[i] = p.order
	}
	out := map[string]int64{}
	return out, eachChunk(ids, func(in string, args []any) error {
		rows, err := tx.QueryContext(ctx, `SELECT order_id, number FROM kds_ticket_numbers WHERE order_id IN `+in, args...)
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			var id string
			var n int64
			if err := rows.Scan(&id, &n); err != nil {
				return err
			}
			out[id] = n
		}
		return rows.Err()
	})
}

// businessDays is each location's calendar date now (tx's clock), in its
// time zone; a location not found counts in UTC.
func businessDays(ctx context.Context, tx *Tx, locs []string) (map[string]string, error) {
	out := map[string]string{}
	for _, loc := range locs {
		out[loc] = tx.Now.In(zone("")).Format(time.DateOnly)
	}
	return out, eachChunk(locs, func(in string, args []any) error {
		rows, err := tx.QueryContext(ctx, `SELECT id, timezone FROM locations WHERE id IN `+in, args...)
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			var id, tz string
			if err := rows.Scan(&id, &tz); err != nil {
				return err
			}
			out[id] = tx.Now.In(zone(tz)).Format(time.DateOnly)
		}
		return rows.Err()
	})
}

// takeTicketNumbers takes the next len(ts) numbers of the location's
// business day, in one statement, gives them to ts in order and returns
// rows with their kds_ticket_numbers rows (order_id, day, number) added.
func takeTicketNumbers(ctx context.Context, tx *Tx, loc, day string, ts []*kassa.Ticket, rows []any) ([]any, error) {
	k := int64(len(ts))
	var next int64
	err := tx.QueryRowContext(ctx, `INSERT INTO kds_ticket_counters (location_id, day, next) VALUES (?, ?, ?)
		ON CONFLICT(location_id, day) DO UPDATE SET next = kds_ticket_counters.next + ? RETURNING next`, loc, day, k+1, k).Scan(&next)
	if err != nil {
		return nil, fmt.Errorf("sqlite: kds ticket counter: %w", err)
	}
	for i, t := range ts {
		t.TicketNumber = next - k + int64(i)
		rows = append(rows, t.ID, day, t.TicketNumber)
	}
	return rows, nil
}

// insertTicketNumbers writes kds_ticket_numbers rows (order_id, day,
// number) with the unit's next statement (Tx.InsertLater: a few statement
// texts, in chunks of a power of two rows, and no round trip of their own
// on PostgreSQL).
func insertTicketNumbers(tx *Tx, rows []any) {
	for r := range slices.Chunk(rows, 3) {
		tx.InsertLater("kds_ticket_numbers", `INSERT INTO kds_ticket_numbers (order_id, day, number) VALUES (?, ?, ?)`, r...)
	}
}

// appendTickets writes the plans' numbered tickets to kds_events with the
// unit's next statement (Tx.InsertLater), which reads the seq each order's
// new event took, and queues one wake-up per org and location with its
// highest. The inserts returned their seqs before: a statement text for
// every count of tickets, which the writer prepared anew at almost every
// run of the kitchen job (two round trips more on PostgreSQL, and its
// kept statements filled with texts never met again).
func appendTickets(ctx context.Context, tx *Tx, plans []*ticketPlan) error {
	ids := make([]string, len(plans))
	for i, p := range plans {
		row, err := ticketRow(tx, p.org, p.typ, p.ticket)
		if err != nil {
			return err
		}
		tx.InsertLater("kds_events", `INSERT INTO kds_events (org_id, location_id, order_id, type, stations, data, created_at) VALUES (?, ?, ?, ?, ?, ?, ?)`, row...)
		ids[i] = p.order
	}
	high := map[[2]string]int64{} // org, location → highest seq
	err := eachChunk(ids, func(in string, args []any) error {
		return highestTickets(ctx, tx, in, args, high)
	})
	if err != nil {
		return fmt.Errorf("sqlite: kds events: %w", err)
	}
	for _, k := range slices.SortedFunc(maps.Keys(high), func(x, y [2]string) int {
		return cmp.Or(strings.Compare(x[0], y[0]), strings.Compare(x[1], y[1]))
	}) {
		tx.Wake(k[0], k[1], kassa.EventKDSTicket, high[k])
	}
	return nil
}

// highestTickets notes the highest seq of the ticket events of the orders
// in (a chunk) by org and location: each order's newest event is the one
// the unit wrote (the orders' ticket locks are the unit's).
func highestTickets(ctx context.Context, tx *Tx, in string, args []any, high map[[2]string]int64) error {
	rows, err := tx.QueryContext(ctx, `SELECT org_id, location_id, max(seq) FROM kds_events WHERE order_id IN `+in+`
		GROUP BY org_id, location_id`, args...)
	if err != nil {
		return err
	}
	defer rows.Close()
	for rows.Next() {
		var k [2]string
		var seq int64
		if err := rows.Scan(&k[0], &k[1], &seq); err != nil {
			return err
		}
		high[k] = max(high[k], seq)
	}
	return rows.Err()
}

// ticketRow is the kds_events row of a numbered ticket: org_id,
// location_id, order_id, type, stations, data, created_at. An update that
// voids the ticket is ticket.voided.
func ticketRow(tx *Tx, orgID, typ string, t *kassa.Ticket) ([]any, error) {
	if t.Void && typ == kassa.TicketUpdated {
		typ = kassa.TicketVoided
	}
	data, err := json.Marshal(t)
	if err != nil {
		return nil, err
	}
	stations, _ := json.Marshal(t.Stations)
	return []any{orgID, t.LocationID, t.ID, typ, string(stations), string(data), fmtTime(tx.Now)}, nil
}
