package sqlite

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"slices"
	"strings"

	"kassa.dev/shared/kassa"
	"kassa.dev/shared/sqlite/engine"
	"kassa.dev/sync/change"
)

// Conflicts are node-local records of what the merge found (apply.go,
// conflict) and of the changes the hub quarantined (quarantine). Ops
// resolve them at the hub (docs/ops.md): a note marks one resolved; a
// quarantined record can be re-applied, in one unit of work that takes it
// out of quarantine and runs it through applyTx with the admission of its
// edge, exactly as a push would. A record that still fails rolls the unit
// back: it stays quarantined and the conflict open. Resolving writes no
// change record; a re-applied record is logged like any accepted change,
// so it replicates to the other edges.

const conflictCols = `id, org_id, location_id, kind, entity, entity_id, local, remote, detected_at, status, resolved_at, resolved_by, resolution, taken`

func scanConflict(s scanner) (*kassa.Conflict, error) {
	var c kassa.Conflict
	var local, remote, at string
	var resolvedAt sql.NullString
	if err := s.Scan(&c.ID, &c.OrgID, &c.LocationID, &c.Kind, &c.Entity, &c.EntityID, &local, &remote, &at,
		&c.Status, &resolvedAt, &c.ResolvedBy, &c.Resolution, &c.Taken); err != nil {
		return nil, err
	}
	c.Local, c.Remote, c.DetectedAt = json.RawMessage(local), json.RawMessage(remote), parseTime(at)
	if resolvedAt.Valid {
		t := parseTime(resolvedAt.String)
		c.ResolvedAt = &t
	}
	return &c, nil
}

// Conflicts lists the org's recorded merge conflicts, oldest first,
// optionally only the open or the resolved ones.
func (db *DB) Conflicts(ctx context.Context, f kassa.ConflictFilter) (kassa.List[kassa.Conflict], error) {
	a, err := kassa.MustActor(ctx)
	if err != nil {
		return kassa.List[kassa.Conflict]{}, err
	}
	where := orgFilter(a.OrgID)
	where.eqText("status", f.Status)
	l, err := findPage(ctx, db.Reader, `SELECT `+conflictCols+` FROM sync_conflicts`, where, f.Page, scanConflict,
		func(c *kassa.Conflict) string { return c.ID })
	for i := range l.Items {
		describeConflict(ctx, db.Reader, &l.Items[i])
	}
	return l, err
}

func findConflict(ctx context.Context, q querier, orgID, id string) (*kassa.Conflict, error) {
	c, err := scanConflict(q.QueryRowContext(ctx, `SELECT `+conflictCols+` FROM sync_conflicts WHERE id = ? AND org_id = ?`, id, orgID))
	if errors.Is(err, sql.ErrNoRows) {
		return nil, kassa.NotFound("conflict", id)
	}
	if err == nil {
		describeConflict(ctx, q, c)
	}
	return c, err
}

// resolvedBy names who resolves: the user, or the OAuth client.
func resolvedBy(a *kassa.Actor) string {
	if a.UserID != "" {
		return a.UserID
	}
	return a.ClientID
}

// markResolved resolves conflict c in tx and returns it as stored.
func markResolved(ctx context.Context, tx *Tx, a *kassa.Actor, c *kassa.Conflict, resolution, taken string) (*kassa.Conflict, error) {
	if _, err := tx.ExecContext(ctx, `UPDATE sync_conflicts SET status = ?, resolved_at = ?, resolved_by = ?, resolution = ?, taken = ? WHERE id = ?`,
		kassa.ConflictResolved, fmtTime(tx.Now), resolvedBy(a), resolution, nullString(taken), c.ID); err != nil {
		return nil, err
	}
	return findConflict(ctx, tx, c.OrgID, c.ID)
}

// ConflictService implements kassa.ConflictService at the hub.
type ConflictService struct{ db *DB }

// NewConflictService returns the hub's conflict service.
func NewConflictService(db *DB) *ConflictService { return &ConflictService{db: db} }

var _ kassa.ConflictService = (*ConflictService)(nil)

// Resolve marks an open conflict of the caller's org resolved
// with a note; for a quarantined record it can also take a version
// (ConflictResolve.Take): the edge's applies the record and the others of
// its group as the edge made them (applyGroup), the hub's sends the hub's
// rows to the edge (takeHub). Errors: ENotFound, EInvalid (the note; a
// record that cannot be taken), EConflict (already resolved; a version
// of a conflict that is not a quarantined record; the hub has no row).
func (s *ConflictService) Resolve(ctx context.Context, id string, in *kassa.ConflictResolve) (*kassa.Conflict, error) {
	db := s.db
	a, err := kassa.MustActor(ctx)
	if err != nil {
		return nil, err
	}
	if err := in.Validate(); err != nil {
		return nil, err
	}
	switch in.Take {
	case kassa.TakeEdge:
		return s.applyGroup(ctx, id, in.Note, kassa.TakeEdge)
	case kassa.TakeHub:
		return s.takeHub(ctx, a, id, in.Note)
	}
	var out *kassa.Conflict
	err = db.Write(ctx, func(tx *Tx) error {
		c, err := findConflict(ctx, tx, a.OrgID, id)
		if err != nil {
			return err
		}
		if err := kassa.CanResolve(c); err != nil {
			return err
		}
		out, err = markResolved(ctx, tx, a, c, in.Note, "")
		return err
	})
	return out, err
}

// Reapply applies an open quarantined record of the caller's org
// again, admitted as a push of the edge that sent it (which must still be
// enrolled) under the rules of this release, and resolves it as
// "reapplied". The edge's other open quarantined records of the same
// order (or row) are retried with it, in the order the edge made them,
// each in its own unit: a completion refused for want of its payment
// passes once the payment does. Errors: ENotFound, EConflict (resolved, or
// not a quarantined record), EInvalid (the record still fails, with the
// reason; it stays quarantined and open).
func (s *ConflictService) Reapply(ctx context.Context, id string) (*kassa.Conflict, error) {
	return s.applyGroup(ctx, id, kassa.ResolutionReapplied, "")
}

// applyGroup applies the quarantined record of conflict id and the others
// of its group (quarantineGroup) in order; taken "" admits each as a push
// would, TakeEdge applies it as the edge made it. It returns conflict id
// as resolved, or why its record still fails.
func (s *ConflictService) applyGroup(ctx context.Context, id, resolution, taken string) (*kassa.Conflict, error) {
	a, err := kassa.MustActor(ctx)
	if err != nil {
		return nil, err
	}
	group, err := s.quarantineGroup(ctx, a.OrgID, id)
	if err != nil {
		return nil, err
	}
	var out *kassa.Conflict
	var mine error
	for _, g := range group {
		c, err := s.applyOne(ctx, a, g, resolution, taken)
		if g == id {
			out, mine = c, err
		}
	}
	return out, mine
}

// applyOne applies the quarantined record of open conflict id in one unit
// of work that takes it out of quarantine; a failure rolls it back.
func (s *ConflictService) applyOne(ctx context.Context, a *kassa.Actor, id, resolution, taken string) (*kassa.Conflict, error) {
	db := s.db
	var out *kassa.Conflict
	var touched map[*noun]map[string]string
	err := db.Write(ctx, func(tx *Tx) error {
		touched = nil
		c, ch, from, err := quarantinedRecord(ctx, tx, a.OrgID, id)
		if err != nil {
			return err
		}
		for _, q := range []string{`DELETE FROM sync_quarantine WHERE id = ?`, `DELETE FROM applied_changes WHERE id = ?`} {
			if _, err := tx.ExecContext(ctx, q, ch.ID); err != nil {
				return err
			}
		}
		opts := applyOpts{Log: true, From: from}
		if taken == kassa.TakeEdge {
			if err := withinEdge(ch, from); err != nil {
				return err
			}
			opts.From = nil // ops vouch for it: no admission, the merge rules still hold
		}
		res, err := db.ApplyTx(ctx, tx, []change.Change{*ch}, opts)
		if err != nil {
			return stillFails(err)
		}
		touched = res.Touched
		out, err = markResolved(ctx, tx, a, c, resolution, taken)
		return err
	})
	if err != nil {
		return nil, err
	}
	db.Merged(touched)
	return out, nil
}

// quarantinedRecord reads open quarantined conflict id of org, its record
// as the edge pushed it and the edge's scope. Errors: ENotFound,
// EConflict, EInvalid (a revoked edge).
func quarantinedRecord(ctx context.Context, q querier, orgID, id string) (*kassa.Conflict, *change.Change, *EdgeScope, error) {
	c, err := findConflict(ctx, q, orgID, id)
	if err != nil {
		return nil, nil, nil, err
	}
	if err := kassa.CanReapply(c); err != nil {
		return nil, nil, nil, err
	}
	var ch change.Change
	if err := json.Unmarshal(c.Remote, &ch); err != nil || ch.ID == "" {
		return nil, nil, nil, kassa.Errorf(kassa.EConflict, "conflict %s does not hold the quarantined record", c.ID)
	}
	// The quarantine keeps the record as it arrived: apply that, not
	// the copy in the conflict.
	var body string
	err = q.QueryRowContext(ctx, `SELECT change FROM sync_quarantine WHERE id = ? AND org_id = ?`, ch.ID, c.OrgID).Scan(&body)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, nil, nil, kassa.Errorf(kassa.EConflict, "the record of conflict %s is no longer quarantined", c.ID)
	}
	if err != nil {
		return nil, nil, nil, err
	}
	ch = change.Change{}
	if err := json.Unmarshal([]byte(body), &ch); err != nil {
		return nil, nil, nil, err
	}
	from, err := edgeScopeOf(ctx, q, c.OrgID, ch.Origin)
	return c, &ch, from, err
}

// withinEdge is what still holds when ops take a store's record as it
// was: it is of the edge's org and, when it names one, of its location
// (the schema refuses references to another org's rows by itself).
func withinEdge(ch *change.Change, from *EdgeScope) error {
	loc, _ := ch.Fields["location_id"].(string)
	org, _ := ch.Fields["org_id"].(string)
	if ch.OrgID != from.OrgID || (org != "" && org != from.OrgID) || (ch.LocationID != "" && ch.LocationID != from.LocationID) ||
		(loc != "" && loc != from.LocationID) {
		return kassa.Errorf(kassa.EInvalid, "the record names another org or store than its edge's: it cannot be taken")
	}
	return nil
}

// edgeScopeOf is the scope of the enrolled, unrevoked edge node of org:
// who a re-applied record is admitted as. Errors: EInvalid when there is
// none (a revoked edge's records are not taken any more).
func edgeScopeOf(ctx context.Context, q querier, orgID, node string) (*EdgeScope, error) {
	var loc string
	err := q.QueryRowContext(ctx, `SELECT location_id FROM sync_nodes WHERE node_id = ? AND org_id = ? AND revoked_at IS NULL`,
		node, orgID).Scan(&loc)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, kassa.Errorf(kassa.EInvalid, "the edge that pushed the record (%s) is revoked or unknown; its records are not applied", node)
	}
	if err != nil {
		return nil, err
	}
	return &EdgeScope{OrgID: orgID, LocationID: loc, NodeID: node}, nil
}

// stillFails words why a re-applied record failed again, for the client:
// the quarantine reason and, for a refusal, what was refused.
func stillFails(err error) error {
	var ref *Refusal
	var ke *kassa.Error
	switch {
	case errors.As(err, &ref):
		return kassa.Errorf(kassa.EInvalid, "the record is still refused: %s", kassaKind.ReplaceAllString(ref.Error(), ""))
	case errors.Is(err, ErrOutOfOrder) || isForeignKeyViolation(err):
		return kassa.Errorf(kassa.EInvalid, "the record still names a row the hub does not have")
	case errors.As(err, &ke):
		return kassa.Errorf(kassa.EInvalid, "the record still fails: %s", ke.Message)
	}
	return kassa.Errorf(kassa.EInvalid, "the record still fails (%s)", quarantineReason(err))
}

// quarantineRow is an open quarantined record: its conflict and change.
type quarantineRow struct {
	conflict string
	ch       change.Change
}

// quarantineGroup returns the ids of open conflict id (a quarantined
// record) and of the other open quarantined records its edge pushed of
// the same order — or, for a record of no order, of the same row — in
// the order the edge made them. A record belongs to the group when its
// row is the order or a row of the group, or when it names the order.
func (s *ConflictService) quarantineGroup(ctx context.Context, orgID, id string) ([]string, error) {
	q := s.db.Reader
	c, err := findConflict(ctx, q, orgID, id)
	if err != nil {
		return nil, err
	}
	if err := kassa.CanReapply(c); err != nil {
		return nil, err
	}
	rows, err := q.QueryContext(ctx, `SELECT c.id, q.change FROM sync_conflicts c JOIN sync_quarantine q ON q.id = `+engine.D(q).JSONText("c.remote", "id")+`
		WHERE c.org_id = ? AND c.status = 'open' AND c.kind = 'quarantined' AND c.location_id IS NOT DISTINCT FROM ?`, orgID, c.LocationID)
	if err != nil {
		return nil, err
	}
	var all []quarantineRow
	var self *change.Change
	for rows.Next() {
		var r quarantineRow
		var body string
		if err := rows.Scan(&r.conflict, &body); err != nil {
			rows.Close()
			return nil, err
		}
		if json.Unmarshal([]byte(body), &r.ch) == nil {
			all = append(all, r)
		}
	}
	rows.Close()
	for i := range all {
		if all[i].conflict == id {
			self = &all[i].ch
		}
	}
	if self == nil {
		return []string{id}, nil // quarantinedRecord says why
	}
	return groupOf(all, self, orderOf(ctx, q, self)), rows.Err()
}

// groupOf picks from all the records of self's edge that belong with
// self (of order, when not ""), sorted by their stamps.
func groupOf(all []quarantineRow, self *change.Change, order string) []string {
	rowsIn := map[string]bool{self.EntityID: true}
	if order != "" {
		rowsIn[order] = true
	}
	in := map[string]bool{}
	for grew := true; grew; {
		grew = false
		for _, r := range all {
			if in[r.conflict] || r.ch.Origin != self.Origin || !(rowsIn[r.ch.EntityID] || order != "" && names(&r.ch, order)) {
				continue
			}
			in[r.conflict], rowsIn[r.ch.EntityID], grew = true, true, true
		}
	}
	var group []quarantineRow
	for _, r := range all {
		if in[r.conflict] {
			group = append(group, r)
		}
	}
	slices.SortStableFunc(group, func(a, b quarantineRow) int { return a.ch.HLC.Compare(b.ch.HLC) })
	ids := make([]string, len(group))
	for i, r := range group {
		ids[i] = r.conflict
	}
	return ids
}

// orderOf is the order a record is of: its own row for an order, the
// order it names, or the order of its row at this node; "" for none.
func orderOf(ctx context.Context, q querier, ch *change.Change) string {
	if ch.Entity == entOrder.Name {
		return ch.EntityID
	}
	if id, _ := ch.Fields["order_id"].(string); id != "" {
		return id
	}
	table := map[string]string{"payment": "payments", "refund": "refunds", "order_line": "order_lines", "order_history": "order_history"}[ch.Entity]
	var order string
	if table != "" {
		q.QueryRowContext(ctx, "SELECT order_id FROM "+table+" WHERE id = ?", ch.EntityID).Scan(&order)
	}
	return order
}

// names reports whether a record names row id in a field (an event's
// data included).
func names(ch *change.Change, id string) bool {
	for _, v := range ch.Fields {
		if s, ok := v.(string); ok && strings.Contains(s, id) {
			return true
		}
	}
	return false
}

// takeHub resolves the quarantined record of conflict id and the others
// of its group by the hub's version: they stay out (and in quarantine),
// and every row of theirs the hub has is written to the hub's log as it
// stands, stamped now, so the edge's merge takes the hub's values
// (status lattices still only move forward there). Errors: EConflict
// when the hub has no row of the record (a refused insert): there is no
// hub version to take.
func (s *ConflictService) takeHub(ctx context.Context, a *kassa.Actor, id, note string) (*kassa.Conflict, error) {
	group, err := s.quarantineGroup(ctx, a.OrgID, id)
	if err != nil {
		return nil, err
	}
	var out *kassa.Conflict
	err = s.db.Write(ctx, func(tx *Tx) error {
		sent := map[string]bool{}
		for _, g := range group {
			c, ch, _, err := quarantinedRecord(ctx, tx, a.OrgID, g)
			if err != nil {
				return err
			}
			has, err := resendRow(ctx, tx, ch, sent)
			if err != nil {
				return err
			}
			if !has && g == id {
				return kassa.Errorf(kassa.EConflict, "the hub has no %s: there is no hub version to take; re-apply the record or take the store's",
					strings.ReplaceAll(ch.Entity, "_", " "))
			}
			r, err := markResolved(ctx, tx, a, c, note, kassa.TakeHub)
			if g == id {
				out = r
			}
			if err != nil {
				return err
			}
		}
		return nil
	})
	return out, err
}

// resendRow writes the hub's row of ch's entity to the log as it stands,
// once per row (sent), with a fresh stamp; it reports whether the hub has
// the row. Rows never changed once written (lines, refunds, events) are
// the same at both ends and are not sent.
func resendRow(ctx context.Context, tx *Tx, ch *change.Change, sent map[string]bool) (bool, error) {
	r, ok := nounOf(ch.Entity)
	if !ok {
		return false, nil
	}
	rows, err := tx.QueryContext(ctx, "SELECT * FROM "+r.Table+" WHERE id = ? AND "+r.OrgCol+" = ?", ch.EntityID, ch.OrgID)
	if err != nil {
		return false, err
	}
	cols, vals, err := oneRow(rows)
	if err != nil || cols == nil {
		return false, err
	}
	if !r.LWW() || sent[ch.EntityID] {
		return true, nil
	}
	sent[ch.EntityID] = true
	skip := append([]string{"id", r.OrgCol, "hlc", "origin", "field_hlc", "created_at", "updated_at"}, r.Derived...)
	set, loc := map[string]any{}, ""
	for i, col := range cols {
		v := vals[i]
		if b, ok := v.([]byte); ok {
			v = string(b)
		}
		if col == "location_id" {
			loc, _ = v.(string)
		}
		if !slices.Contains(skip, col) {
			set[col] = v
		}
	}
	return true, tx.UpdateAt(ctx, r, ch.OrgID, loc, ch.EntityID, set)
}

// oneRow reads the first row of rows with its column names (nil: none).
func oneRow(rows *sql.Rows) ([]string, []any, error) {
	defer rows.Close()
	cols, err := rows.Columns()
	if err != nil || !rows.Next() {
		return nil, nil, errors.Join(err, rows.Err())
	}
	vals := make([]any, len(cols))
	ptrs := make([]any, len(cols))
	for i := range vals {
		ptrs[i] = &vals[i]
	}
	return cols, vals, rows.Scan(ptrs...)
}
