package sqlite

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"

	"kassa.dev/shared/kassa"
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

const conflictCols = `id, org_id, location_id, kind, entity, entity_id, local, remote, detected_at, status, resolved_at, resolved_by, resolution`

func scanConflict(s scanner) (*kassa.Conflict, error) {
	var c kassa.Conflict
	var local, remote, at string
	var resolvedAt sql.NullString
	if err := s.Scan(&c.ID, &c.OrgID, &c.LocationID, &c.Kind, &c.Entity, &c.EntityID, &local, &remote, &at,
		&c.Status, &resolvedAt, &c.ResolvedBy, &c.Resolution); err != nil {
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
	return findPage(ctx, db.reader, `SELECT `+conflictCols+` FROM sync_conflicts`, where, f.Page, scanConflict,
		func(c *kassa.Conflict) string { return c.ID })
}

func findConflict(ctx context.Context, q querier, orgID, id string) (*kassa.Conflict, error) {
	c, err := scanConflict(q.QueryRowContext(ctx, `SELECT `+conflictCols+` FROM sync_conflicts WHERE id = ? AND org_id = ?`, id, orgID))
	if errors.Is(err, sql.ErrNoRows) {
		return nil, kassa.NotFound("conflict", id)
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
func markResolved(ctx context.Context, tx *Tx, a *kassa.Actor, c *kassa.Conflict, resolution string) (*kassa.Conflict, error) {
	if _, err := tx.ExecContext(ctx, `UPDATE sync_conflicts SET status = ?, resolved_at = ?, resolved_by = ?, resolution = ? WHERE id = ?`,
		kassa.ConflictResolved, fmtTime(tx.now), resolvedBy(a), resolution, c.ID); err != nil {
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
// with a note. Errors: ENotFound, EInvalid (the note), EConflict (already
// resolved).
func (s *ConflictService) Resolve(ctx context.Context, id string, in *kassa.ConflictResolve) (*kassa.Conflict, error) {
	db := s.db
	a, err := kassa.MustActor(ctx)
	if err != nil {
		return nil, err
	}
	if err := in.Validate(); err != nil {
		return nil, err
	}
	var out *kassa.Conflict
	err = db.write(ctx, func(tx *Tx) error {
		c, err := findConflict(ctx, tx, a.OrgID, id)
		if err != nil {
			return err
		}
		if err := kassa.CanResolve(c); err != nil {
			return err
		}
		out, err = markResolved(ctx, tx, a, c, in.Note)
		return err
	})
	return out, err
}

// Reapply applies an open quarantined record of the caller's org
// again, admitted as a push of the edge that sent it (which must still be
// enrolled), and resolves it as "reapplied". Errors: ENotFound, EConflict
// (resolved, or not a quarantined record), EInvalid (the record still
// fails, with the reason; it stays quarantined and open).
func (s *ConflictService) Reapply(ctx context.Context, id string) (*kassa.Conflict, error) {
	db := s.db
	a, err := kassa.MustActor(ctx)
	if err != nil {
		return nil, err
	}
	var out *kassa.Conflict
	var touched map[string]string
	err = db.write(ctx, func(tx *Tx) error {
		touched = nil
		c, err := findConflict(ctx, tx, a.OrgID, id)
		if err != nil {
			return err
		}
		if err := kassa.CanReapply(c); err != nil {
			return err
		}
		var ch change.Change
		if err := json.Unmarshal(c.Remote, &ch); err != nil || ch.ID == "" {
			return kassa.Errorf(kassa.EConflict, "conflict %s does not hold the quarantined record", c.ID)
		}
		// The quarantine keeps the record as it arrived: apply that, not
		// the copy in the conflict.
		var body string
		err = tx.QueryRowContext(ctx, `SELECT change FROM sync_quarantine WHERE id = ? AND org_id = ?`, ch.ID, c.OrgID).Scan(&body)
		if errors.Is(err, sql.ErrNoRows) {
			return kassa.Errorf(kassa.EConflict, "the record of conflict %s is no longer quarantined", c.ID)
		}
		if err != nil {
			return err
		}
		ch = change.Change{}
		if err := json.Unmarshal([]byte(body), &ch); err != nil {
			return err
		}
		from, err := edgeScopeOf(ctx, tx, c.OrgID, ch.Origin)
		if err != nil {
			return err
		}
		for _, q := range []string{`DELETE FROM sync_quarantine WHERE id = ?`, `DELETE FROM applied_changes WHERE id = ?`} {
			if _, err := tx.ExecContext(ctx, q, ch.ID); err != nil {
				return err
			}
		}
		res, err := db.applyTx(ctx, tx, []change.Change{ch}, applyOpts{log: true, from: from})
		if err != nil {
			return stillFails(err)
		}
		touched = res.orders
		out, err = markResolved(ctx, tx, a, c, kassa.ResolutionReapplied)
		return err
	})
	if err != nil {
		return nil, err
	}
	for id, org := range touched {
		db.queueTicket(org, id)
	}
	return out, nil
}

// edgeScopeOf is the scope of the enrolled, unrevoked edge node of org:
// who a re-applied record is admitted as. Errors: EInvalid when there is
// none (a revoked edge's records are not taken any more).
func edgeScopeOf(ctx context.Context, tx *Tx, orgID, node string) (*EdgeScope, error) {
	var loc string
	err := tx.QueryRowContext(ctx, `SELECT location_id FROM sync_nodes WHERE node_id = ? AND org_id = ? AND revoked_at IS NULL`,
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
		return kassa.Errorf(kassa.EInvalid, "the record is still refused: %s", ref.Error())
	case errors.Is(err, ErrOutOfOrder) || isForeignKeyViolation(err):
		return kassa.Errorf(kassa.EInvalid, "the record still names a row the hub does not have")
	case errors.As(err, &ke):
		return kassa.Errorf(kassa.EInvalid, "the record still fails: %s", ke.Message)
	}
	return kassa.Errorf(kassa.EInvalid, "the record still fails (%s)", quarantineReason(err))
}
