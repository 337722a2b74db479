package engine

import (
	"context"
	"encoding/json"
	"fmt"

	"kassa.dev/sync/change"
	"kassa.dev/sync/hlc"
)

// Changes returns the change records of one row in write order. An empty
// entityID returns every record of the entity.
func (db *DB) Changes(ctx context.Context, entity, entityID string) ([]change.Change, error) {
	q := `SELECT id, org_id, coalesce(location_id, ''), entity, entity_id, op, ` + outboxFields(db.dialect()) + `, hlc, origin, coalesce(actor, '') FROM outbox WHERE entity = ?`
	args := []any{entity}
	if entityID != "" {
		q += ` AND entity_id = ?`
		args = append(args, entityID)
	}
	rows, err := db.Reader.QueryContext(ctx, q+` ORDER BY seq`, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []change.Change
	for rows.Next() {
		var c change.Change
		var fields, stamp string
		if err := rows.Scan(&c.ID, &c.OrgID, &c.LocationID, &c.Entity, &c.EntityID, &c.Op, &fields, &stamp, &c.Origin, &c.Actor); err != nil {
			return nil, err
		}
		if c.HLC, err = hlc.Parse(stamp); err != nil {
			return nil, fmt.Errorf("sqlite: outbox %s: %w", c.ID, err)
		}
		if err := DecodeJSON(fields, &c.Fields); err != nil {
			return nil, err
		}
		out = append(out, c)
	}
	return out, rows.Err()
}

// outboxFields reads a record's fields: an edge's own event records keep
// none, their events rows hold them (Tx.logEdgeEvent); decoded, they are
// the fields a row write of the event records.
func outboxFields(d Dialect) string {
	return `CASE WHEN fields != '' THEN fields ELSE (SELECT CAST(` + d.JSONObject(`'created_at', e.created_at, 'data', e.data`,
		`'id', e.id, 'location_id', e.location_id, 'occurred_at', e.occurred_at, 'org_id', e.org_id, 'type', e.type`,
		`'updated_at', e.updated_at`) + ` AS TEXT) FROM events e WHERE e.id = outbox.entity_id) END`
}

// OutboxLen counts change records: all of them, or with LogFilter.Unsent
// only those not yet sent (its other fields are not for counting).
func (db *DB) OutboxLen(ctx context.Context, f LogFilter) (int, error) {
	q := `SELECT count(*) FROM outbox`
	if f.Unsent {
		q += ` WHERE sent_at IS NULL`
	}
	var n int
	err := db.Reader.QueryRowContext(ctx, q).Scan(&n)
	return n, err
}

// LogEntry is a change record with its position in this node's outbox.
type LogEntry struct {
	Seq int64
	change.Change
}

// Scope selects the changes an edge receives: its org's org-wide changes
// and those of its location. An empty LocationID selects the whole org.
type Scope struct {
	OrgID, LocationID string
}

// LogFilter picks outbox records; the zero value picks every one.
type LogFilter struct {
	// Unsent: only records not yet acknowledged upstream (an edge's relay).
	Unsent bool
	// Scope: only records in it (the hub's fan-out).
	Scope *Scope
	// ExcludeOrigin: leave out those that came from it (the asking edge's own).
	ExcludeOrigin string
	// Raw: leave each record's fields as stored, in RawFields, for a
	// reader that only forwards them (an edge's push): decoding and
	// encoding them again was most of an edge's CPU in a catch-up.
	Raw bool
}

// ChangesAfter returns up to limit outbox records after seq that f picks,
// oldest first.
func (db *DB) ChangesAfter(ctx context.Context, seq int64, limit int, f LogFilter) ([]LogEntry, error) {
	return db.ChangesBetween(ctx, seq, 0, limit, f)
}

// ChangesBetween is ChangesAfter for positions up to until (0: no bound).
func (db *DB) ChangesBetween(ctx context.Context, seq, until int64, limit int, f LogFilter) ([]LogEntry, error) {
	unsentOnly, scope, excludeOrigin := f.Unsent, f.Scope, f.ExcludeOrigin
	q := `SELECT seq, id, org_id, coalesce(location_id, ''), entity, entity_id, op, ` + outboxFields(db.dialect()) + `, hlc, origin, coalesce(actor, '') FROM ` + db.dialect().LogFrom("") + ` WHERE ` + db.dialect().LogAfter("seq", "?1")
	args := []any{seq}
	if until > 0 {
		q += ` AND seq <= ?`
		args = append(args, until)
	}
	if unsentOnly {
		q += ` AND sent_at IS NULL`
	}
	if scope != nil {
		q += ` AND org_id = ?`
		args = append(args, scope.OrgID)
		if scope.LocationID != "" {
			q += ` AND (location_id IS NULL OR location_id = ?)`
			args = append(args, scope.LocationID)
		}
	}
	if excludeOrigin != "" {
		q += ` AND origin != ?`
		args = append(args, excludeOrigin)
	}
	rows, err := db.Reader.QueryContext(ctx, q+` ORDER BY `+db.dialect().LogOrder("seq")+` LIMIT ?`, append(args, limit)...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []LogEntry
	for rows.Next() {
		var e LogEntry
		var fields, stamp string
		if err := rows.Scan(&e.Seq, &e.ID, &e.OrgID, &e.LocationID, &e.Entity, &e.EntityID, &e.Op, &fields, &stamp, &e.Origin, &e.Actor); err != nil {
			return nil, err
		}
		if e.HLC, err = hlc.Parse(stamp); err != nil {
			return nil, fmt.Errorf("sqlite: outbox %s: %w", e.ID, err)
		}
		if f.Raw {
			e.RawFields = json.RawMessage(fields)
		} else if err := DecodeJSON(fields, &e.Fields); err != nil {
			return nil, err
		}
		out = append(out, e)
	}
	return out, rows.Err()
}

// MarkSent records that the hub acknowledged the outbox records up to seq.
func (db *DB) MarkSent(ctx context.Context, seq int64) error {
	return db.Exec(ctx, `UPDATE outbox SET sent_at = ? WHERE seq <= ? AND sent_at IS NULL`, FmtTime(db.Now()), seq)
}

// LogWaiting reports whether committed records of origin still wait for
// their log positions (on PostgreSQL, commits held back by an older
// transaction): a read of the log does not see them yet.
func (db *DB) LogWaiting(ctx context.Context, origin string) (bool, error) {
	q := db.dialect().LogWaitingSQL()
	if q == "" {
		return false, nil
	}
	var waiting bool
	err := db.Reader.QueryRowContext(ctx, q, origin).Scan(&waiting)
	return waiting, err
}

// LastSeq is the newest outbox position (0 when empty).
func (db *DB) LastSeq(ctx context.Context) (int64, error) {
	var n int64
	err := db.Reader.QueryRowContext(ctx, db.dialect().LastSeqSQL()).Scan(&n)
	return n, err
}

// LogHead is where a log entry belongs, without its fields.
type LogHead struct {
	Seq               int64
	OrgID, LocationID string
}

// LogHeadsAfter returns the positions, orgs and locations of up to limit
// log entries after seq: what the hub needs to wake the right edges.
func (db *DB) LogHeadsAfter(ctx context.Context, seq int64, limit int) ([]LogHead, error) {
	d := db.dialect()
	rows, err := db.Reader.QueryContext(ctx, `SELECT seq, org_id, coalesce(location_id, '') FROM `+d.LogFrom("")+` WHERE `+d.LogAfter("seq", "?1")+
		` ORDER BY `+d.LogOrder("seq")+` LIMIT ?`, seq, limit)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []LogHead
	for rows.Next() {
		var h LogHead
		if err := rows.Scan(&h.Seq, &h.OrgID, &h.LocationID); err != nil {
			return nil, err
		}
		out = append(out, h)
	}
	return out, rows.Err()
}
