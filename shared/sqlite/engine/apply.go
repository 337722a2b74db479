package engine

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"

	"kassa.dev/shared/kassa"
	"kassa.dev/sync/change"
	"kassa.dev/sync/hlc"
)

// The merge rules of DESIGN.md, per replicated noun (noun.merge, lattice, derived, tombstone, registry.go):
//
//   - Rows of LWW entities merge field by field: a field takes the remote
//     value when the change's stamp (<hlc>@<origin>) is later than the
//     field's stamp in field_hlc. A tombstone (customers' deleted_at) wins
//     over any concurrent update: once set, the erased fields stay erased.
//   - Status columns move only forward on their lattice, whatever the
//     stamps say: a completed order never returns to open; a cancel that
//     meets a complete loses, and is recorded as a conflict.
//   - Append-only entities (movements, points, lines, history, refunds) are
//     inserted once; a replay is a no-op.
//   - Derived columns never travel: paid and refunded totals, on-hand,
//     balances, lifetime points and tiers are recomputed from the entries
//     after every apply; an on-hand or balance below zero is recorded as an
//     oversold or overdrawn conflict, an order paid beyond its total or
//     refunded beyond what was paid as an overpaid or overrefunded one.
//
// Apply is idempotent (keyed by change id) and commutative for changes of
// different rows; changes of one row arrive in causal order because every
// change passes through the hub, whose log is the order edges apply in.

// ApplyResult says what an Apply did.
type ApplyResult struct {
	Applied   int // changes applied now
	Duplicate int // changes applied before (replays, duplicate deliveries)
	Conflicts int // conflicts recorded
	Dropped   int // records of a retired entity, accepted and not kept
	// Refused are the records quarantined (Ingest, ApplyEach), in order.
	Refused []Refused
}

// Apply applies change records made at other nodes, in one unit of work.
// With log set (the hub) each applied change is also appended to this
// node's outbox, which is the log other edges pull from. Errors: a change
// that is malformed or names an unknown entity fails the whole batch.
func (db *DB) Apply(ctx context.Context, changes []change.Change, log bool) (ApplyResult, error) {
	return db.apply(ctx, changes, ApplyOpts{Log: log})
}

// applyOpts: log appends applied changes to this node's outbox (the hub's
// log); from, when set, is the edge that pushed them, and every change is
// admitted first (trust.go).
type ApplyOpts struct {
	Log  bool
	From *EdgeScope
	own  *OwnResync
}

func (db *DB) apply(ctx context.Context, changes []change.Change, opts ApplyOpts) (ApplyResult, error) {
	p := &pushPart{ctx: ctx, db: db, changes: changes, opts: opts}
	var err error
	if opts.From != nil && opts.own == nil && len(changes) <= maxJoinedPush {
		p.index() // here, not on the write loop
		err = db.writeJoinable(ctx, p.alone, joinPushes, p)
	} else {
		err = db.Write(ctx, p.alone)
	}
	if err == nil {
		db.Merged(p.res.Touched)
	}
	return p.res.ApplyResult, err
}

// applied is what applyTx did: the result and the rows it touched.
type applied struct {
	ApplyResult
	Touched map[*Noun]map[string]string // see applier.touched
}

// merged runs, once an apply unit committed, each noun's merged hook with
// the rows the unit touched (in units of their own: the kitchen tickets of
// the orders sync changed are derived, and building them inside the apply
// would hold up the sync).
func (db *DB) Merged(touched map[*Noun]map[string]string) {
	for n, rows := range touched {
		if n.Merged != nil {
			n.Merged(db, rows)
		}
	}
}

// applyTx applies changes in tx: the unit of work of apply, which a
// re-applied quarantined record shares (ConflictService.Reapply).
func (db *DB) ApplyTx(ctx context.Context, tx *Tx, changes []change.Change, opts ApplyOpts) (applied, error) {
	var res applied
	tx.derived = true // events a merge raises are this node's own finding
	a := &Applier{Tx: tx, touched: map[*Noun]map[string]string{}, State: map[*Noun]any{}}
	var ads []*Admitter
	if opts.From != nil {
		a.Admitter = &Admitter{Tx: tx, From: *opts.From, State: a.State}
		ads = []*Admitter{a.Admitter}
	}
	if err := a.preload(ctx, changes, ads); err != nil {
		return res, err
	}
	if err := a.steps(ctx, changes, opts, &res.ApplyResult); err != nil {
		return res, err
	}
	return res, a.finish(ctx, changes, opts, &res)
}

// steps applies changes in turn (step).
func (a *Applier) steps(ctx context.Context, changes []change.Change, opts ApplyOpts, res *ApplyResult) error {
	for i := range changes {
		if err := a.step(ctx, &changes[i], opts, res); err != nil {
			return err
		}
	}
	return nil
}

// finish does what follows the batch's steps: its rows, applied changes
// and log records written, its touched rows recomputed, the held events it
// releases; res gets the rows it touched and the conflicts it recorded.
func (a *Applier) finish(ctx context.Context, changes []change.Change, opts ApplyOpts, res *applied) error {
	tx := a.Tx
	if err := tx.flushLater(ctx); err != nil {
		return err
	}
	if err := a.recordApplied(ctx); err != nil {
		return err
	}
	if err := tx.flushLog(ctx); err != nil {
		return err
	}
	if err := a.recompute(ctx); err != nil {
		return err
	}
	if opts.From != nil {
		if err := a.releaseEvents(ctx, changes); err != nil {
			return err
		}
	}
	res.Touched = a.touched
	res.Conflicts = a.conflicts
	return nil
}

// step applies one change of the batch, unless it was applied before or
// names a retired entity, and counts it in res.
func (a *Applier) step(ctx context.Context, c *change.Change, opts ApplyOpts, res *ApplyResult) error {
	if err := c.Validate(); err != nil {
		return kassa.Errorf(kassa.EInvalid, "%v", err)
	}
	if _, gone := retired[c.Entity]; gone {
		res.Dropped++
		return nil
	}
	if dup, err := a.seen(ctx, c, opts); err != nil || dup {
		if dup {
			res.Duplicate++
		}
		return err
	}
	fresh, err := a.newEvent(ctx, c)
	if err != nil {
		return err
	}
	if err := a.apply(ctx, c); err != nil {
		return fmt.Errorf("apply %s %s %s: %w", c.Entity, c.EntityID, c.ID, err)
	}
	if err := a.applied(ctx, c, fresh, opts); err != nil {
		return err
	}
	if a.Admitter != nil {
		a.Admitter.Made()
	}
	a.done[c.ID] = true
	if c.Entity == EntEvent.Name && !a.held[c.EntityID] {
		a.logged[c.EntityID] = true
	}
	res.Applied++
	return nil
}

// seen reports whether c was applied here before, or is this node's own
// change coming back (and not one a restore lost: see OwnResync).
func (a *Applier) seen(ctx context.Context, c *change.Change, opts ApplyOpts) (bool, error) {
	if c.Origin == a.Tx.DB.NodeID {
		lost, err := opts.own.lost(ctx, a.Tx, c)
		if err != nil || !lost {
			return err == nil, err
		}
	}
	return a.done[c.ID], nil
}

// preload reads, in one statement for the batch (fetchRows), which of its
// changes this node applied before (applied_changes) and, at the hub,
// which of its events the log holds already, with the admitter's
// prefetch: a catch-up's batch of 500 asked once per change, and a push
// paid a round trip for each of these on PostgreSQL. step keeps both sets
// current as the batch applies (a change or event twice in one batch).
func (a *Applier) preload(ctx context.Context, changes []change.Change, ads []*Admitter) error {
	a.done, a.logged, a.markers = make(map[string]bool, len(changes)), map[string]bool{}, map[string]bool{}
	done, logged := fetchPart{table: "applied_changes", cols: presence, kind: partDone}, fetchPart{table: "events", cols: presence, kind: partLogged}
	for i := range changes {
		done.ids = append(done.ids, changes[i].ID)
		if changes[i].Entity == EntEvent.Name && a.Tx.DB.Hub {
			logged.ids = append(logged.ids, changes[i].EntityID)
		}
	}
	parts := []fetchPart{done, logged}
	if len(ads) > 0 {
		parts = append(parts, a.Admitter.prefetch(changes)...)
		// An edge's push also asks whether any held event waits at all:
		// none, the common case, and releaseEvents looks up nothing.
		parts = append(parts, marker("waits", `EXISTS (SELECT 1 FROM held_event_waits)`))
	}
	// At the hub it also asks whether each sending edge is enrolled and
	// not revoked, in the push's own unit: a revocation committed before
	// it refuses it (ErrUnknownEdge), with no read of its own.
	for k, ad := range ads {
		if f := ad.From; f.Enrolment == EnrolmentChecked {
			parts = append(parts, marker("edge"+strconv.Itoa(k), `EXISTS (SELECT 1 FROM sync_nodes WHERE node_id = ? AND org_id = ? AND location_id = ? AND revoked_at IS NULL)`,
				f.NodeID, f.OrgID, f.LocationID))
		}
	}
	if err := a.fetchRows(ctx, parts); err != nil {
		return err
	}
	a.waits = a.markers["waits"]
	for k, ad := range ads {
		if ad.From.Enrolment == EnrolmentChecked && !a.markers["edge"+strconv.Itoa(k)] {
			return ErrUnknownEdge
		}
		ad.shareRows(a.Admitter)
	}
	return nil
}

// ErrUnknownEdge refuses a push of an edge that is not enrolled, or was
// revoked: nothing of it is applied or quarantined.
var ErrUnknownEdge = errors.New("link: unknown or revoked edge")

// appliedCols are the columns of an applied_changes row, as
// Applier.appliedRows holds them.
const appliedCols = 8

// recordApplied writes the batch's applied_changes rows (step noted them
// in appliedRows), many to a statement: one statement per change was a
// third of the statements a catch-up ran per record.
func (a *Applier) recordApplied(ctx context.Context) error {
	const perStmt = 100 // rows: 800 parameters, far below either backend's limit
	for rows := a.appliedRows; len(rows) > 0; {
		chunk := rows[:min(len(rows), perStmt*appliedCols)]
		rows = rows[len(chunk):]
		query := `INSERT INTO applied_changes (id, origin, applied_at, org_id, location_id, entity, entity_id, op) VALUES ` +
			strings.Repeat(", ("+Placeholders(appliedCols)+")", len(chunk)/appliedCols)[2:]
		exec := a.Tx.ExecLater // a full chunk's statement is one; a shorter one's varies with the batch: not cached
		if len(chunk) < perStmt*appliedCols {
			exec = a.Tx.execLaterOnce
		}
		if err := exec(ctx, query, chunk...); err != nil {
			return err
		}
	}
	a.appliedRows = nil
	return nil
}

// applied does what follows an applied change in its unit: the hooks of
// an event new to the log, the record of what it touched (noted for
// recordApplied, for the live feeds, migration 0016), its noun's ownBack hook, and its place in the
// hub's log (opts.log) or, for an event, a wake-up of the log's readers.
func (a *Applier) applied(ctx context.Context, c *change.Change, fresh bool, opts ApplyOpts) error {
	tx := a.Tx
	if fresh && !a.held[c.EntityID] {
		// Its hooks run with the event, in this unit: an event id
		// already in the log (a replay, re-pull or repair) runs none.
		typ, _ := c.Fields["type"].(string)
		data, _ := c.Fields["data"].(string)
		if err := tx.eventLogged(ctx, c.EntityID, c.OrgID, typ, []byte(data)); err != nil {
			return err
		}
	}
	a.appliedRows = append(a.appliedRows, c.ID, c.Origin, FmtTime(tx.Now), c.OrgID, NullString(c.LocationID), c.Entity, c.EntityID, string(c.Op))
	tx.live(c.OrgID, c.Entity)
	if r, ok := NounOf(c.Entity); ok && c.Origin == tx.DB.NodeID && r.OwnBack != nil {
		if err := r.OwnBack(ctx, tx, c); err != nil {
			return err
		}
	}
	if c.Entity == EntEvent.Name {
		// The hub's event log grew: wake its readers. Events are not in
		// the hub's log of changes: edges never pull them.
		if !a.held[c.EntityID] {
			tx.wakes = append(tx.wakes, loggedEvent(c))
		}
		return nil
	}
	if opts.Log {
		return tx.recordLater(*c) // written with the batch's others (flushLog)
	}
	return nil
}

// applier applies one batch and remembers what it must recompute.
type Applier struct {
	Tx       *Tx
	Admitter *Admitter // set for changes pushed by an edge
	// touched are the rows whose derived columns the batch affects, per
	// noun (key → org): the noun's track hook notes them (touch), its
	// recompute hook refreshes them once every change applied.
	touched map[*Noun]map[string]string
	// state is what a noun's hooks keep for the batch (batchState).
	State map[*Noun]any
	// held are the edge's events this batch held (holdEvent): neither
	// logged nor delivered.
	held      map[string]bool
	conflicts int
	// done are the batch's change ids applied here before or in the
	// batch; logged its event ids the hub's log holds (preload).
	done, logged map[string]bool
	// quarantine says whether the quarantine held anything when the batch
	// first asked (quarantineEmpty): 0 not asked, 1 empty, 2 not.
	quarantine int8
	// waits says whether any held event waited when the batch began
	// (preload): releaseEvents looks up nothing when none did.
	waits bool
	// markers are the conditions the first read found to hold (fetchPart).
	markers map[string]bool
	// appliedRows are the applied_changes rows of the changes applied so
	// far, appliedCols values each, written by recordApplied.
	appliedRows []any
	// owners, in a unit of joined pushes (ingest.go), are the push that
	// touched or shared each key (Shares); segment the push being applied
	// (-1 once all were); shared that two pushes met at one key.
	owners  map[string]int
	segment int
	shared  bool
}

// olderRules, set by tests only, refuses what an older release's
// admission refused on top of today's: a record it quarantines can then
// be re-applied under the running rules (conflict_test.go).
var OlderRules func(c *change.Change) error

func (a *Applier) apply(ctx context.Context, c *change.Change) error {
	r, ok := NounOf(c.Entity)
	if !ok {
		return Refuse(RefusedEntity, "unknown entity %q", c.Entity)
	}
	a.Tx.Changing(r, c.OrgID)
	fields := make(map[string]any, len(c.Fields))
	for k, v := range c.Fields {
		if !validColumn(k) {
			return Refuse(RefusedField, "bad field name %q", k)
		}
		fields[k] = ColumnValue(v)
	}
	if a.Admitter != nil {
		if OlderRules != nil {
			if err := OlderRules(c); err != nil {
				return err
			}
		}
		if err := a.Admitter.admit(ctx, c, r, fields); err != nil {
			return err
		}
		if held, err := a.holdEvent(ctx, c); held || err != nil {
			a.Admitter.pending.key = "" // held: its row is not written
			return err
		}
	}
	for _, k := range r.Derived {
		delete(fields, k)
	}
	stamp := c.HLC
	if clamped := a.clamp(stamp); clamped != stamp {
		if err := a.Conflict(ctx, c.OrgID, c.LocationID, "clock_clamped", c.Entity, c.EntityID,
			map[string]any{"now": a.Tx.Now}, map[string]any{"hlc": c.HLC.String(), "origin": c.Origin, "clamped_to": clamped.String()}); err != nil {
			return err
		}
		stamp = clamped
	}
	a.Tx.DB.Clock.Update(stamp)
	a.track(c, r, fields)
	if r.Merge == MergeAppend {
		fields["id"] = c.EntityID
		fields[r.OrgCol] = c.OrgID
		return a.insertRow(ctx, r, fields, stamp, c.Origin)
	}
	return a.merge(ctx, c, r, fields, stamp)
}

// newEvent reports whether c is an event that the hub's log does not
// hold yet: the only case in which its webhooks are queued.
func (a *Applier) newEvent(ctx context.Context, c *change.Change) (bool, error) {
	if c.Entity != EntEvent.Name || !a.Tx.DB.Hub {
		return false, nil
	}
	return !a.logged[c.EntityID], nil
}

// loggedEvent is the bus notification of an event that arrived by sync.
func loggedEvent(c *change.Change) kassa.Event {
	str := func(k string) string { s, _ := c.Fields[k].(string); return s }
	e := kassa.Event{ID: c.EntityID, Type: str("type"), OrgID: c.OrgID, LocationID: str("location_id"),
		OccurredAt: ParseTime(str("occurred_at"))}
	if d := str("data"); d != "" {
		e.Data = json.RawMessage(d)
	}
	return e
}

// clamp caps a remote stamp at the local wall clock plus the maximum skew.
func (a *Applier) clamp(t hlc.Timestamp) hlc.Timestamp {
	limit := a.Tx.DB.Now().Add(a.Tx.DB.MaxSkew).UnixMilli()
	if t.Wall > limit {
		return hlc.Timestamp{Wall: limit}
	}
	return t
}

// track notes the rows whose derived columns the change affects (the
// noun's track hook).
func (a *Applier) track(c *change.Change, r *Noun, fields map[string]any) {
	if r.Track != nil {
		r.Track(a, c, fields)
	}
}

// fieldText is a change's text field as its column stores it, or "".
func FieldText(fields map[string]any, k string) string {
	s, _ := fields[k].(string)
	return s
}

func (a *Applier) insertRow(ctx context.Context, r *Noun, fields map[string]any, stamp hlc.Timestamp, origin string) error {
	names := slices.Sorted(maps.Keys(fields))
	args := make([]any, 0, len(names)+3)
	for _, n := range names {
		args = append(args, fields[n])
	}
	args = append(args, stamp.String(), origin)
	if r.Merge == mergeLWW {
		args = append(args, rowStamps(fieldStamp(stamp, origin)))
	}
	query := a.Tx.DB.insertQuery(r, names)
	if a.Admitter != nil && r.Unique == nil {
		// An edge's push: written with the batch's other rows (a row
		// already here is left, as ON CONFLICT DO NOTHING leaves it).
		a.Tx.InsertLater(r.Table, query, args...)
		return nil
	}
	return a.uniquely(ctx, r, fields, func() error {
		for i, n := range names {
			args[i] = fields[n]
		}
		_, err := a.Tx.ExecCached(ctx, query, args...)
		return err
	})
}

// insertQuery returns the statement insertRow runs for a row of r with
// the named columns (sorted), built once per shape (rowQuery).
func (db *DB) insertQuery(r *Noun, names []string) string {
	key := "apply|" + r.Table + "|" + strings.Join(names, ",")
	if q, ok := db.rowQueries.load(key); ok {
		return q
	}
	cols := joinCols(names, "") + ", hlc, origin"
	ph := Placeholders(len(names) + 2)
	if r.Merge == mergeLWW {
		cols += ", field_hlc"
		ph += ", ?"
	}
	q := fmt.Sprintf("INSERT INTO %s (%s) VALUES (%s) ON CONFLICT(id) DO NOTHING", r.Table, cols, ph)
	db.rowQueries.store(key, q)
	return q
}

// uniqueKey is a column unique among an org's rows that two nodes can
// fill alike while apart (a sku, a customer's e-mail; noun.unique), and
// how the duplicate is settled on every node alike: the row with the
// greater id gives way (giveWay: the value it takes instead), and a
// duplicate_key conflict is recorded. extra narrows the rows that count.
type UniqueKey struct {
	Col, Extra string
	GiveWay    func(v any, id string) any
}

// uniquely runs write; when it breaks a unique key of the table, it
// settles the duplicate as the noun's unique key says and runs it again.
func (a *Applier) uniquely(ctx context.Context, r *Noun, fields map[string]any, write func() error) error {
	err := write()
	k := r.Unique
	if k == nil || !IsUniqueViolation(err) || fields[k.Col] == nil {
		return err
	}
	id, _ := fields["id"].(string)
	org, _ := fields[r.OrgCol].(string)
	var other string
	if qerr := a.Tx.QueryRowContext(ctx, "SELECT id FROM "+r.Table+" WHERE org_id = ? AND "+k.Col+" = ? AND id != ?"+k.Extra,
		org, fields[k.Col], id).Scan(&other); qerr != nil {
		return err
	}
	val := fields[k.Col]
	if other > id {
		if _, err := a.Tx.ExecContext(ctx, "UPDATE "+r.Table+" SET "+k.Col+" = ? WHERE id = ?", k.GiveWay(val, other), other); err != nil {
			return err
		}
	} else {
		fields[k.Col] = k.GiveWay(val, id)
	}
	if err := a.Conflict(ctx, org, "", "duplicate_key", r.Name, id,
		map[string]any{"id": other, k.Col: val}, map[string]any{"id": id, k.Col: val, "kept_by": min(id, other)}); err != nil {
		return err
	}
	return write()
}

// merge applies an insert or update of an LWW row field by field.
func (a *Applier) merge(ctx context.Context, c *change.Change, r *Noun, fields map[string]any, stamp hlc.Timestamp) error {
	var row *mergedRow
	if a.Admitter == nil || !a.Admitter.absent { // admission read the row: none here
		var err error
		if row, err = a.mergeRow(ctx, c, r); err != nil {
			return err
		}
	}
	if row == nil {
		if c.Op != change.OpInsert {
			return fmt.Errorf("%w: %s %s", ErrOutOfOrder, c.Entity, c.EntityID)
		}
		fields["id"] = c.EntityID
		fields[r.OrgCol] = c.OrgID
		return a.insertRow(ctx, r, fields, stamp, c.Origin)
	}
	if row.org != c.OrgID {
		// Ids are global: a change may only touch rows of its own org.
		return kassa.Errorf(kassa.EForbidden, "change %s names %s %s of another org", c.ID, c.Entity, c.EntityID)
	}
	var have map[string]string
	if err := DecodeJSON(row.stamps, &have); err != nil {
		return err
	}
	mine := fieldStamp(stamp, c.Origin)
	set := map[string]any{}
	for k, v := range fields {
		if k == "id" || k == r.OrgCol {
			continue
		}
		if rank, ok := r.Lattice[k]; ok {
			if err := a.mergeLattice(ctx, c, r, k, rank, row.lattice[k], v, set); err != nil {
				return err
			}
			continue
		}
		if mine > stampOf(have, k) {
			set[k] = v
		}
	}
	if r.Tombstone != "" {
		deleted := row.deleted
		if v, ok := fields[r.Tombstone]; ok && v != nil {
			deleted, set[r.Tombstone] = true, v
		}
		if deleted {
			for k, v := range r.Erase {
				set[k] = v
			}
		}
	}
	if len(set) == 0 {
		return nil
	}
	return a.updateRow(ctx, c, r, set, stamp)
}

// mergedRow is the row an LWW merge changes, as this node has it.
type mergedRow struct {
	org, stamps string
	lattice     map[string]string // the noun's lattice columns → their values
	deleted     bool              // its tombstone is set
}

// mergeRow reads the row c changes, or nil when this node has none.
func (a *Applier) mergeRow(ctx context.Context, c *change.Change, r *Noun) (*mergedRow, error) {
	latticeCols := slices.Sorted(maps.Keys(r.Lattice))
	sel := r.OrgCol + ", field_hlc"
	for _, col := range latticeCols {
		sel += ", " + col
	}
	if r.Tombstone != "" {
		sel += ", " + r.Tombstone
	}
	row := &mergedRow{lattice: make(map[string]string, len(latticeCols))}
	cur := make([]sql.NullString, len(latticeCols)+1)
	dest := []any{&row.org, &row.stamps}
	for i := range cur {
		dest = append(dest, &cur[i])
	}
	if r.Tombstone == "" {
		dest = dest[:len(dest)-1]
	}
	err := a.Tx.QueryRowContext(ctx, "SELECT "+sel+" FROM "+r.Table+" WHERE id = ?", c.EntityID).Scan(dest...)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	for i, col := range latticeCols {
		row.lattice[col] = cur[i].String
	}
	row.deleted = cur[len(latticeCols)].Valid
	return row, nil
}

// mergeLattice notes in set a lattice column's remote value v when it
// ranks above the row's value cur. A value of the noun's latticeLoss that
// loses, or is overtaken, is recorded as a conflict (an order's cancel
// that meets a completion: cancel_lost).
func (a *Applier) mergeLattice(ctx context.Context, c *change.Change, r *Noun, k string, rank func(string) int, cur string, v any, set map[string]any) error {
	now, _ := v.(string)
	up := rank(now) > rank(cur)
	if up {
		set[k] = v
	}
	l := r.LatticeLoss
	if l == nil || k != l.Col || !(up && cur == l.Value || !up && now == l.Value && cur != l.Value) {
		return nil
	}
	return a.Conflict(ctx, c.OrgID, c.LocationID, l.Kind, c.Entity, c.EntityID,
		map[string]any{k: cur}, map[string]any{k: now, "origin": c.Origin})
}

// updateRow writes a merge's newer fields (set) to the row, stamped.
func (a *Applier) updateRow(ctx context.Context, c *change.Change, r *Noun, set map[string]any, stamp hlc.Timestamp) error {
	mine := fieldStamp(stamp, c.Origin)
	names := slices.Sorted(maps.Keys(set))
	args := make([]any, 0, len(names)+4)
	for _, n := range names {
		args = append(args, set[n])
	}
	// SET expressions read the row as it was, so origin follows the newer stamp.
	args = append(args, FieldStamps(names, mine), stamp.String(), stamp.String(), c.Origin, c.EntityID)
	d := D(a.Tx)
	query := fmt.Sprintf(`UPDATE %s SET %s, field_hlc = %s,
		hlc = %s, origin = CASE WHEN hlc < ? THEN ? ELSE origin END WHERE id = ?`, r.Table, joinCols(names, " = ?"),
		d.JSONMerge("field_hlc", "?"), d.Greatest("hlc", "?"))
	set["id"], set[r.OrgCol] = c.EntityID, c.OrgID
	return a.uniquely(ctx, r, set, func() error {
		for i, n := range names {
			args[i] = set[n]
		}
		_, err := a.Tx.ExecCached(ctx, query, args...)
		return err
	})
}

// conflict records a merge conflict with both sides' values.
func (a *Applier) Conflict(ctx context.Context, orgID, locationID, kind, entity, entityID string, local, remote any) error {
	l, _ := json.Marshal(local)
	r, _ := json.Marshal(remote)
	_, err := a.Tx.ExecContext(ctx, `INSERT INTO sync_conflicts (id, org_id, location_id, kind, entity, entity_id, local, remote, detected_at)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`, a.Tx.DB.NewID(), orgID, NullString(locationID), kind, entity, entityID, string(l), string(r), FmtTime(a.Tx.Now))
	if err == nil {
		a.conflicts++
	}
	return err
}

// touch notes a row of n whose derived columns the batch affects.
func (a *Applier) Touch(n *Noun, key, orgID string) {
	if a.owners != nil { // a unit of joined pushes: no key built for every other apply
		a.Shares(n.Name + "\x00" + key)
	}
	rows := a.touched[n]
	if rows == nil {
		rows = map[string]string{}
		a.touched[n] = rows
	}
	rows[key] = orgID
}

// batchState is what noun n's hooks keep for one batch (applier.state),
// made at first use.
func BatchState[T any](state map[*Noun]any, n *Noun) *T {
	if v, ok := state[n].(*T); ok {
		return v
	}
	v := new(T)
	state[n] = v
	return v
}

// recompute refreshes the derived columns of the rows the batch touched:
// each noun's recompute hook, in the registry's order.
func (a *Applier) recompute(ctx context.Context) error {
	for n := a.nextToRecompute(""); n != nil; n = a.nextToRecompute(n.Name) {
		if err := n.Recompute(ctx, a, a.touched[n]); err != nil {
			return err
		}
	}
	return nil
}

// nextToRecompute is the noun after name, in name order (the
// registry's), with rows to recompute, or nil: a batch touches one or
// two nouns, and sorting the whole registry at every push was 1-2 % of a
// hub's CPU under the ingest. A noun a hook touches on the way is found
// as the registry's walk found it: if it comes later.
func (a *Applier) nextToRecompute(name string) *Noun {
	var next *Noun
	for n, rows := range a.touched {
		if n.Recompute != nil && len(rows) > 0 && n.Name > name && (next == nil || n.Name < next.Name) {
			next = n
		}
	}
	return next
}

// validColumn accepts the names change records may carry.
func validColumn(s string) bool {
	if s == "" || len(s) > 64 {
		return false
	}
	return strings.IndexFunc(s, func(r rune) bool { return !(r == '_' || r >= 'a' && r <= 'z' || r >= '0' && r <= '9') }) < 0
}

// ErrOutOfOrder is returned for a change to a row this node does not have:
// the change that made the row has not arrived. It is never quarantined.
var ErrOutOfOrder = errors.New("sqlite: change of a row that has not arrived")

// ApplyEach applies changes like Apply, but when the batch fails it
// applies them one at a time, in order, and quarantines each record that
// still fails: it is kept whole in sync_quarantine, marked applied (a
// replay skips it), and listed as a "quarantined" conflict, so one bad
// record cannot stall every later change of an edge. It returns how many
// were quarantined.
func (db *DB) ApplyEach(ctx context.Context, changes []change.Change, log bool) (ApplyResult, int, error) {
	return db.applyEach(ctx, changes, ApplyOpts{Log: log})
}

// ApplyResync is ApplyEach at an edge whose store was restored from a
// backup: besides other nodes' changes it applies the edge's own changes
// that the backup lacks (own says which, see OwnResync).
func (db *DB) ApplyResync(ctx context.Context, changes []change.Change, own *OwnResync) (ApplyResult, int, error) {
	return db.applyEach(ctx, changes, ApplyOpts{own: own})
}

// Ingest applies the changes an edge pushed, at the hub: like ApplyEach
// with the log, but each change is admitted first as untrusted input
// (trust.go). A refused change is quarantined with its reason and never
// applied; the rest of the batch applies.
func (db *DB) Ingest(ctx context.Context, from EdgeScope, changes []change.Change) (ApplyResult, int, error) {
	return db.applyEach(ctx, changes, ApplyOpts{Log: true, From: &from})
}

func (db *DB) applyEach(ctx context.Context, changes []change.Change, opts ApplyOpts) (ApplyResult, int, error) {
	res, err := db.apply(ctx, changes, opts)
	if err == nil || errors.Is(err, ErrUnknownEdge) {
		return res, 0, err
	}
	var total ApplyResult
	quarantined := 0
	for i := range changes {
		r, err := db.apply(ctx, changes[i:i+1], opts)
		if err == nil {
			total.Applied += r.Applied
			total.Duplicate += r.Duplicate
			total.Conflicts += r.Conflicts
			total.Dropped += r.Dropped
			continue
		}
		if errors.Is(err, ErrOutOfOrder) || IsForeignKeyViolation(err) {
			// Not this record's fault: what it builds on has not arrived.
			// Refuse the batch (the sender retries) rather than lose it.
			return total, quarantined, err
		}
		org, loc := changes[i].OrgID, changes[i].LocationID
		if opts.From != nil {
			// Listed for the org and location of the edge that sent it,
			// whatever it claims (the ops monitor counts them per edge).
			org, loc = opts.From.OrgID, opts.From.LocationID
		}
		if qerr := db.quarantine(ctx, org, loc, &changes[i], err); qerr != nil {
			return total, quarantined, qerr
		}
		total.Refused = append(total.Refused, RefusedOf(&changes[i], err, db.Now()))
		quarantined++
	}
	return total, quarantined, nil
}

// quarantineReason is the reason a record is quarantined for: its
// refusal code, or apply_failed.
func QuarantineReason(cause error) string {
	var ref *Refusal
	if errors.As(cause, &ref) {
		return ref.Code
	} else if strings.Contains(cause.Error(), "kassa: cross-org reference") {
		return RefusedReference // the schema's own check (migration 0006)
	}
	return "apply_failed"
}

func (db *DB) quarantine(ctx context.Context, orgID, locationID string, c *change.Change, cause error) error {
	reason := QuarantineReason(cause)
	if reason != "apply_failed" {
		db.refused.add(reason)
	}
	db.Log.Error("change quarantined", "change", c.ID, "entity", c.Entity, "entity_id", c.EntityID, "origin", c.Origin, "reason", reason, "err", cause)
	body, _ := json.Marshal(c)
	return db.Write(ctx, func(tx *Tx) error {
		if _, err := tx.ExecContext(ctx, `INSERT INTO sync_quarantine (id, org_id, change, error, reason, entity_id, created_at) VALUES (?, ?, ?, ?, ?, ?, ?)
			ON CONFLICT(id) DO NOTHING`, c.ID, orgID, string(body), cause.Error(), reason, c.EntityID, FmtTime(tx.Now)); err != nil {
			return err
		}
		if _, err := tx.ExecContext(ctx, `INSERT INTO applied_changes (id, origin, applied_at) VALUES (?, ?, ?) ON CONFLICT(id) DO NOTHING`,
			c.ID, c.Origin, FmtTime(tx.Now)); err != nil {
			return err
		}
		a := &Applier{Tx: tx}
		return a.Conflict(ctx, orgID, locationID, "quarantined", c.Entity, c.EntityID,
			map[string]any{"error": cause.Error(), "reason": reason}, redacted(c))
	})
}

// redacted is c as a conflict lists it (GET /sync/conflicts, reports:read):
// what its noun's redact hook masks (a gift card's code), in the record
// and in the data of an event about such a row, as every reader without
// the noun's write scope sees it. The quarantine keeps c whole, for a
// re-apply.
func redacted(c *change.Change) *change.Change {
	out := *c
	out.Fields = maps.Clone(c.Fields)
	if c.Entity == EntEvent.Name {
		typ, _ := c.Fields["type"].(string)
		sub, ok := eventSubjectOf(typ)
		var data map[string]any
		if s, isText := c.Fields["data"].(string); ok && sub.of.Redact != nil && isText && json.Unmarshal([]byte(s), &data) == nil && sub.of.Redact(data) {
			b, _ := json.Marshal(data)
			out.Fields["data"] = string(b)
		}
	} else if n, ok := NounOf(c.Entity); ok && n.Redact != nil {
		n.Redact(out.Fields)
	}
	return &out
}
