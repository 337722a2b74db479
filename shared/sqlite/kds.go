package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"

	"kassa.dev/shared/kassa"
	"kassa.dev/shared/sqlite/engine"
)

// The kitchen display's durable feed. Every unit of work that changes what
// the kitchen sees of an order calls recordTicket, which appends one row to
// kds_events in that same unit: the row commits with the order change or
// not at all, so the feed never misses an order nor shows one that did not
// happen, and its seq (the SSE id) only grows, also across restarts. After
// commit the unit publishes kassa.EventKDSTicket on the bus, which wakes
// the streams; they read the table, never the bus, so a dropped bus event
// delays nothing beyond the streams' poll.
//
// Sync's apply (in this package) must call syncTicket in its unit of work
// for every order whose row or lines a batch touched, so that orders taken
// elsewhere (at the hub for pickup, or at another node) reach this node's
// screens, and bumps made elsewhere move them: it compares the order with
// its newest ticket event and records what changed, so a replay records
// nothing. DB.SyncTicket and DB.RecordTicket do the same as units of their
// own. Apply does not build tickets in its own unit (that would hold up
// the sync): it marks the orders due (queueTicket), and the node's ticket
// job records them with RecordDueTickets.

// ticketWindow is how far back the board looks for open tickets.
const ticketWindow = 24 * time.Hour

// KDSService implements kassa.KDSService.
type KDSService struct{ db *DB }

// NewKDSService returns the kitchen display service of db.
func NewKDSService(db *DB) *KDSService { return &KDSService{db: db} }

var _ kassa.KDSService = (*KDSService)(nil)

// RecordTicket appends a ticket event of type typ for an order, as a unit
// of work of its own. ticket.created is skipped when the order has one.
func (db *DB) RecordTicket(ctx context.Context, orgID, orderID, typ string) error {
	return db.Write(ctx, func(tx *Tx) error { return recordTicket(ctx, tx, orgID, orderID, typ) })
}

// recordTicket appends a ticket event for an order inside tx. A second
// ticket.created for an order is skipped.
func recordTicket(ctx context.Context, tx *Tx, orgID, orderID, typ string) error {
	if typ == kassa.TicketCreated {
		if err := tx.LockKeys(ctx, ticketLock, []string{orderID}); err != nil { // as writeDue
			return err
		}
		var n int
		if err := tx.QueryRowContext(ctx, `SELECT count(*) FROM kds_events WHERE order_id = ? AND type = ?`, orderID, typ).Scan(&n); err != nil {
			return err
		}
		if n > 0 {
			return nil
		}
	}
	_, err := writeTicket(ctx, tx, orgID, orderID, typ)
	return err
}

// recordTicketUpdate records ticket.updated when an order update changed
// what the kitchen sees (notes, status); cols are the changed columns.
func recordTicketUpdate(ctx context.Context, tx *Tx, orgID, orderID string, cols map[string]any) error {
	_, notes := cols["notes"]
	_, status := cols["status"]
	if !notes && !status {
		return nil
	}
	return recordTicket(ctx, tx, orgID, orderID, kassa.TicketUpdated)
}

// writeTicket builds the order's ticket as it stands in tx, appends it to
// kds_events and queues the wake-up event.
func writeTicket(ctx context.Context, tx *Tx, orgID, orderID, typ string) (*kassa.Ticket, error) {
	o, err := loadOrder(ctx, tx, orgID, orderID, partLines)
	if err != nil {
		return nil, err
	}
	t, err := buildTicket(ctx, tx, o)
	if err != nil {
		return nil, err
	}
	return t, writeTicketRow(ctx, tx, orgID, typ, t)
}

// writeTicketRow appends a built ticket to kds_events and queues the
// wake-up. It gives the ticket its number (numberTickets), and an update
// that voids it is ticket.voided.
func writeTicketRow(ctx context.Context, tx *Tx, orgID, typ string, t *kassa.Ticket) error {
	return writeTickets(ctx, tx, []*ticketPlan{{org: orgID, order: t.ID, typ: typ, ticket: t}})
}

// writeNewTicket is writeTicketRow for the first ticket of an order the
// unit creates: it has no number yet, and the caller knows its
// location's time zone, so the unit reads neither.
func writeNewTicket(ctx context.Context, tx *Tx, orgID string, t *kassa.Ticket, timezone string) error {
	day := tx.Now.In(zone(timezone)).Format(time.DateOnly)
	rows, err := takeTicketNumbers(ctx, tx, t.LocationID, day, []*kassa.Ticket{t}, nil)
	if err != nil {
		return err
	}
	insertTicketNumbers(tx, rows)
	return appendTickets(ctx, tx, []*ticketPlan{{org: orgID, order: t.ID, typ: kassa.TicketCreated, ticket: t}})
}

// buildTicket turns an order with its lines into a ticket. A line's station
// is its product's, else its category's, else kassa.StationDefault.
func buildTicket(ctx context.Context, q querier, o *kassa.Order) (*kassa.Ticket, error) {
	stations, err := productStations(ctx, q, []*kassa.Order{o})
	if err != nil {
		return nil, err
	}
	return ticketOf(o, stations), nil
}

// ticketOf turns an order with its lines into a ticket, its lines'
// stations looked up in stations (productStations).
func ticketOf(o *kassa.Order, stations map[string]string) *kassa.Ticket {
	t := &kassa.Ticket{ID: o.ID, LocationID: o.LocationID, Number: o.Number, Channel: o.Channel, Status: o.Status,
		KitchenStatus: o.KitchenStatus, Void: kassa.VoidTicket(o.Status, o.KitchenStatus), Notes: o.Notes, OrderedAt: o.OccurredAt, UpdatedAt: o.UpdatedAt,
		Lines: make([]kassa.TicketLine, 0, len(o.LineItems)), Stations: []string{}}
	for _, l := range o.LineItems {
		st := stations[o.OrgID+"/"+l.ProductID]
		if st == "" {
			st = kassa.StationDefault
		}
		mods := make([]string, 0, len(l.Modifiers))
		for _, m := range l.Modifiers {
			mods = append(mods, m.Name)
		}
		t.Lines = append(t.Lines, kassa.TicketLine{ID: l.ID, ProductID: l.ProductID, Name: l.Name, Quantity: l.Quantity,
			Modifiers: mods, Station: st})
		if !slices.Contains(t.Stations, st) {
			t.Stations = append(t.Stations, st)
		}
	}
	slices.Sort(t.Stations)
	return t
}

// TicketEvents returns the org's ticket events after f.After, oldest first,
// trimmed to f.Station's lines when a station is given.
func (s *KDSService) TicketEvents(ctx context.Context, f kassa.TicketEventFilter) ([]kassa.TicketEvent, error) {
	a, err := kassa.MustActor(ctx)
	if err != nil {
		return nil, err
	}
	if f.Limit <= 0 || f.Limit > 1000 {
		f.Limit = 500
	}
	q := `SELECT seq, type, location_id, data, created_at FROM kds_events WHERE org_id = ? AND seq > ?` +
		engine.D(s.db.Reader).Settled("seq", "kds_events")
	args := []any{a.OrgID, f.After}
	if f.LocationID != nil {
		q += ` AND location_id = ?`
		args = append(args, *f.LocationID)
	}
	if f.Station != "" {
		q += ` AND EXISTS (SELECT 1 FROM ` + engine.D(s.db.Reader).JSONValues("kds_events.stations", "j") + ` WHERE j.value = ?)`
		args = append(args, f.Station)
	}
	rows, err := s.db.Reader.QueryContext(ctx, q+` ORDER BY seq LIMIT ?`, append(args, f.Limit)...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := []kassa.TicketEvent{}
	for rows.Next() {
		e := kassa.TicketEvent{OrgID: a.OrgID}
		var data, created string
		if err := rows.Scan(&e.Seq, &e.Type, &e.LocationID, &data, &created); err != nil {
			return nil, err
		}
		if err := decodeJSON(data, &e.Ticket); err != nil {
			return nil, fmt.Errorf("sqlite: kds event %d: %w", e.Seq, err)
		}
		e.CreatedAt = parseTime(created)
		e.Ticket = e.Ticket.ForStation(f.Station)
		out = append(out, e)
	}
	return out, rows.Err()
}

// LastTicketSeq returns the org's newest ticket event seq at this node.
func (s *KDSService) LastTicketSeq(ctx context.Context) (int64, error) {
	a, err := kassa.MustActor(ctx)
	if err != nil {
		return 0, err
	}
	var seq int64
	err = s.db.Reader.QueryRowContext(ctx, `SELECT coalesce(max(seq), 0) FROM kds_events WHERE org_id = ?`+
		engine.D(s.db.Reader).Settled("seq", "kds_events"), a.OrgID).Scan(&seq)
	return seq, err
}

// TicketBoard returns the tickets of the last 24 hours that are still open
// in the kitchen (by default new, in progress or ready; never cancelled),
// oldest first, with the seq they are current at — read in one snapshot,
// so a stream resuming from that seq misses nothing and repeats nothing.
func (s *KDSService) TicketBoard(ctx context.Context, f kassa.TicketBoardFilter) (*kassa.TicketBoard, error) {
	a, err := kassa.MustActor(ctx)
	if err != nil {
		return nil, err
	}
	show := f.KitchenStatuses
	if len(show) == 0 {
		show = []string{kassa.KitchenNew, kassa.KitchenInProgress, kassa.KitchenReady}
	}
	now := s.db.Now().UTC()
	tx, err := s.db.Reader.BeginTx(ctx, nil)
	if err != nil {
		return nil, err
	}
	defer tx.Rollback()
	b := &kassa.TicketBoard{Tickets: []kassa.Ticket{}, Now: now.Truncate(time.Millisecond)}
	last := `SELECT coalesce(max(seq), 0) FROM kds_events WHERE org_id = ?` + engine.D(s.db.Reader).Settled("seq", "kds_events")
	if err := tx.QueryRowContext(ctx, last, a.OrgID).Scan(&b.LastEventID); err != nil {
		return nil, err
	}
	inner := `SELECT max(seq) FROM kds_events WHERE org_id = ? AND created_at >= ?`
	args := []any{a.OrgID, fmtTime(now.Add(-ticketWindow))}
	if f.LocationID != nil {
		inner += ` AND location_id = ?`
		args = append(args, *f.LocationID)
	}
	rows, err := tx.QueryContext(ctx, `SELECT data FROM kds_events WHERE seq IN (`+inner+` GROUP BY order_id) AND seq <= ? ORDER BY seq`,
		append(args, b.LastEventID)...)
	if err != nil {
		return nil, err
	}
	for rows.Next() {
		var data string
		var t kassa.Ticket
		if err := rows.Scan(&data); err != nil {
			rows.Close()
			return nil, err
		}
		if err := decodeJSON(data, &t); err != nil {
			rows.Close()
			return nil, err
		}
		if t.Status == kassa.OrderCancelled || t.Void || !slices.Contains(show, t.KitchenStatus) || !t.HasStation(f.Station) {
			continue
		}
		b.Tickets = append(b.Tickets, t.ForStation(f.Station))
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, err
	}
	slices.SortStableFunc(b.Tickets, func(x, y kassa.Ticket) int { return x.OrderedAt.Compare(y.OrderedAt) })
	if b.Stations, err = stationsInUse(ctx, tx, a.OrgID); err != nil {
		return nil, err
	}
	return b, nil
}

// stationsInUse lists the stations the org's active products send lines to.
func stationsInUse(ctx context.Context, q querier, orgID string) ([]string, error) {
	rows, err := q.QueryContext(ctx, `SELECT DISTINCT coalesce(p.station, c.station, ?)
		FROM products p LEFT JOIN categories c ON c.id = p.category_id AND c.org_id = p.org_id
		WHERE p.org_id = ? AND p.is_active = 1`, kassa.StationDefault, orgID)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := []string{}
	for rows.Next() {
		var st string
		if err := rows.Scan(&st); err != nil {
			return nil, err
		}
		out = append(out, st)
	}
	if len(out) == 0 {
		out = append(out, kassa.StationDefault)
	}
	slices.Sort(out)
	return out, rows.Err()
}

// BumpTicket moves an order's kitchen status forward: one step, or to
// in.KitchenStatus. Errors: ENotFound, EInvalid, EConflict.
func (s *KDSService) BumpTicket(ctx context.Context, orderID string, in *kassa.TicketMove) (*kassa.Ticket, error) {
	return s.move(ctx, orderID, in, true)
}

// RecallTicket moves an order's kitchen status back: one step, or to
// in.KitchenStatus. Errors: ENotFound, EInvalid, EConflict.
func (s *KDSService) RecallTicket(ctx context.Context, orderID string, in *kassa.TicketMove) (*kassa.Ticket, error) {
	return s.move(ctx, orderID, in, false)
}

func (s *KDSService) move(ctx context.Context, orderID string, in *kassa.TicketMove, forward bool) (*kassa.Ticket, error) {
	a, err := kassa.MustActor(ctx)
	if err != nil {
		return nil, err
	}
	if in == nil {
		in = &kassa.TicketMove{}
	}
	if err := in.Validate(); err != nil {
		return nil, err
	}
	m := &ticketMove{orgID: a.OrgID, orderID: orderID, in: in, forward: forward}
	if err := s.db.Write(ctx, func(tx *Tx) error { return m.write(ctx, tx) }); err != nil {
		return nil, err
	}
	return m.t, nil
}

// ticketMove is a bump (forward) or recall of an order's ticket; t is the
// ticket once moved.
type ticketMove struct {
	orgID, orderID string
	in             *kassa.TicketMove
	forward        bool
	t              *kassa.Ticket
}

// write moves the order's kitchen status in the unit and records the
// ticket.
func (m *ticketMove) write(ctx context.Context, tx *Tx) error {
	var status, kitchen, number, loc string
	err := tx.QueryRowContext(ctx, `SELECT status, kitchen_status, number, location_id FROM orders WHERE org_id = ? AND id = ?`,
		m.orgID, m.orderID).Scan(&status, &kitchen, &number, &loc)
	if errors.Is(err, sql.ErrNoRows) {
		return kassa.NotFound("ticket", m.orderID)
	}
	if err != nil {
		return err
	}
	if status == kassa.OrderCancelled || kassa.VoidTicket(status, kitchen) {
		return kassa.Errorf(kassa.EConflict, "order %s is %s: its ticket is void", number, status)
	}
	to, err := m.target(number, kitchen)
	if err != nil {
		return err
	}
	if err := tx.UpdateAt(ctx, entOrder, m.orgID, loc, m.orderID, map[string]any{"kitchen_status": kassa.KitchenStates[to]}); err != nil {
		return err
	}
	typ := kassa.TicketBumped
	if !m.forward {
		typ = kassa.TicketRecalled
	}
	m.t, err = writeTicket(ctx, tx, m.orgID, m.orderID, typ)
	return err
}

// target is the rank of the kitchen status the move takes order number
// to from kitchen, or a conflict when it cannot go there.
func (m *ticketMove) target(number, kitchen string) (int, error) {
	cur, to := kassa.KitchenRank(kitchen), 0
	switch {
	case m.in.KitchenStatus != "":
		to = kassa.KitchenRank(m.in.KitchenStatus)
	case m.forward:
		to = cur + 1
	default:
		to = cur - 1
	}
	switch {
	case m.forward && cur == len(kassa.KitchenStates)-1:
		return 0, kassa.Errorf(kassa.EConflict, "order %s is already served", number)
	case !m.forward && cur <= 0:
		return 0, kassa.Errorf(kassa.EConflict, "order %s is new; there is nothing to recall", number)
	case m.forward && to <= cur, !m.forward && to >= cur, to < 0, to >= len(kassa.KitchenStates):
		verb := "bump"
		if !m.forward {
			verb = "recall"
		}
		return 0, kassa.Errorf(kassa.EConflict, "order %s is %s; cannot %s it to %s", number, kitchen, verb, m.in.KitchenStatus)
	}
	return to, nil
}

// SyncTicket brings the order's ticket up to date after sync applied
// changes of it, as a unit of work of its own; see syncTicket.
func (db *DB) SyncTicket(ctx context.Context, orgID, orderID string) error {
	return db.Write(ctx, func(tx *Tx) error { return syncTicket(ctx, tx, orgID, orderID) })
}

// syncTicket is what sync's apply calls, in its unit of work, for every
// order whose row or lines a batch of remote changes touched: it compares
// the order with its newest ticket event at this node and records what
// changed — ticket.created for an order first seen (once it has lines),
// ticket.bumped or ticket.recalled when kitchen_status moved, and
// ticket.updated when notes, status or lines differ. A replay records
// nothing.
func syncTicket(ctx context.Context, tx *Tx, orgID, orderID string) error {
	if err := tx.LockKeys(ctx, ticketLock, []string{orderID}); err != nil { // as writeDue
		return err
	}
	plans, err := planDue(ctx, tx, map[string]string{orderID: orgID})
	if err != nil {
		return err
	}
	return writeTickets(ctx, tx, plans)
}

// ticketPlan is what planDue found an order's ticket needs, and the state
// it found it in: its order's stamp ("": the order or its lines not there
// yet), its line count and its newest ticket event (seq 0: none). typ ""
// needs no ticket event.
type ticketPlan struct {
	org, order string
	typ        string
	ticket     *kassa.Ticket
	hlc        string
	lines, seq int64
}

// ticketChange is the ticket event an order needs after its newest one
// (data), "" for none.
func ticketChange(data string, o *kassa.Order) (string, error) {
	var last kassa.Ticket
	if err := decodeJSON(data, &last); err != nil {
		return "", err
	}
	switch was, now := kassa.KitchenRank(last.KitchenStatus), kassa.KitchenRank(o.KitchenStatus); {
	case now > was:
		return kassa.TicketBumped, nil
	case now < was:
		return kassa.TicketRecalled, nil
	case last.Notes != o.Notes || last.Status != o.Status || len(last.Lines) != len(o.LineItems) ||
		last.Void != kassa.VoidTicket(o.Status, o.KitchenStatus):
		return kassa.TicketUpdated, nil
	}
	return "", nil
}

// maxDueTickets bounds the orders waiting for their kitchen tickets; past
// it an order waits for the start-up sweep (an order without a ticket) or
// its next change.
const maxDueTickets = 100_000

// ticketQueue holds the orders sync changed whose kitchen tickets are due.
// The store only keeps the set; the node's ticket job drains it
// (RecordDueTickets) when TicketsDue wakes it.
type ticketQueue struct {
	mu   sync.Mutex
	due  map[string]string // order id → org id
	wake chan struct{}     // one pending wake-up
}

// queueTicket marks an order's ticket due. It never blocks the caller.
func (db *DB) queueTicket(org, order string) {
	q := &ordersIn(db).tickets
	q.mu.Lock()
	if q.due == nil {
		q.due = map[string]string{}
	}
	_, had := q.due[order]
	full := !had && len(q.due) >= maxDueTickets
	if !full {
		q.due[order] = org
	}
	q.mu.Unlock()
	if full {
		db.Log.Warn("kitchen ticket queue full", "order", order)
		return
	}
	select {
	case q.wake <- struct{}{}:
	default:
	}
}

// queueTickets marks the tickets of orders sync changed due (the order
// noun's merged hook).
func queueTickets(e *engine.DB, orders map[string]string) {
	db := storeOf(e)
	for id, org := range orders {
		db.queueTicket(org, id)
	}
}

// TicketsDue signals (once per burst) that orders changed by sync wait for
// their kitchen tickets: call RecordDueTickets then.
func (db *DB) TicketsDue() <-chan struct{} { return ordersIn(db).tickets.wake }

// RecordDueTickets brings the tickets of up to limit due orders up to date
// (as syncTicket would): planned together on a snapshot (planDue), written
// together in one unit of work (writeDue). It returns how many it took off
// the queue; fewer than limit means the queue is empty. On an error those
// orders are dropped: a new one is found by the start-up sweep, a changed
// one by its next change.
func (db *DB) RecordDueTickets(ctx context.Context, limit int) (int, error) {
	q := &ordersIn(db).tickets
	batch := map[string]string{}
	q.mu.Lock()
	for id, org := range q.due {
		if len(batch) == limit {
			break
		}
		batch[id] = org
		delete(q.due, id)
	}
	q.mu.Unlock()
	if len(batch) == 0 {
		return 0, nil
	}
	plans, err := db.planTickets(ctx, batch)
	if err != nil {
		return len(batch), err
	}
	return len(batch), db.Write(ctx, func(tx *Tx) error { return writeDue(ctx, tx, plans) })
}

// planTickets plans the due orders' tickets on one snapshot, off the
// writer: the unit then only checks that nothing changed since and writes.
func (db *DB) planTickets(ctx context.Context, batch map[string]string) ([]*ticketPlan, error) {
	snap, err := db.Reader.Snapshot(ctx)
	if err != nil {
		return nil, err
	}
	defer snap.Done()
	return planDue(ctx, snap, batch)
}

// SweepTickets marks due the tickets of the orders of the last day that
// have none yet: those whose ticket work was lost in a crash. The ticket
// job runs it once at start.
func (db *DB) SweepTickets(ctx context.Context) error {
	rows, err := db.Reader.QueryContext(ctx, `SELECT id, org_id FROM orders WHERE created_at > ?
		AND NOT EXISTS (SELECT 1 FROM kds_events WHERE kds_events.order_id = orders.id)`, fmtTime(db.Now().Add(-24*time.Hour)))
	if err != nil {
		return err
	}
	defer rows.Close()
	for rows.Next() {
		var id, org string
		if err := rows.Scan(&id, &org); err != nil {
			return err
		}
		db.queueTicket(org, id)
	}
	return rows.Err()
}
