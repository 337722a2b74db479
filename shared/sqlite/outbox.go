package sqlite

import (
	"context"
	"fmt"

	"kassa.dev/sync/change"
	"kassa.dev/sync/hlc"
)

// Changes returns the change records of one row in write order. An empty
// entityID returns every record of the entity.
func (db *DB) Changes(ctx context.Context, entity, entityID string) ([]change.Change, error) {
	q := `SELECT id, org_id, coalesce(location_id, ''), entity, entity_id, op, fields, hlc, origin FROM outbox WHERE entity = ?`
	args := []any{entity}
	if entityID != "" {
		q += ` AND entity_id = ?`
		args = append(args, entityID)
	}
	rows, err := db.reader.QueryContext(ctx, q+` ORDER BY seq`, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []change.Change
	for rows.Next() {
		var c change.Change
		var fields, stamp string
		if err := rows.Scan(&c.ID, &c.OrgID, &c.LocationID, &c.Entity, &c.EntityID, &c.Op, &fields, &stamp, &c.Origin); err != nil {
			return nil, err
		}
		if c.HLC, err = hlc.Parse(stamp); err != nil {
			return nil, fmt.Errorf("sqlite: outbox %s: %w", c.ID, err)
		}
		if err := decodeJSON(fields, &c.Fields); err != nil {
			return nil, err
		}
		out = append(out, c)
	}
	return out, rows.Err()
}

// OutboxLen counts change records, all of them or only those not yet sent.
func (db *DB) OutboxLen(ctx context.Context, unsentOnly bool) (int, error) {
	q := `SELECT count(*) FROM outbox`
	if unsentOnly {
		q += ` WHERE sent_at IS NULL`
	}
	var n int
	err := db.reader.QueryRowContext(ctx, q).Scan(&n)
	return n, err
}
