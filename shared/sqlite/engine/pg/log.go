package pg

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/jackc/pgx/v5"

	"kassa.dev/sync/change"
	"kassa.dev/sync/hlc"
)

// Append writes change records to the log in tx, the unit that made them.
// They have no position until tx has committed and every transaction that
// began writing the log before it has ended (Position).
func Append(ctx context.Context, tx pgx.Tx, cs []change.Change) error {
	if len(cs) == 0 {
		return nil
	}
	var n int
	err := tx.QueryRow(ctx, `INSERT INTO outbox_commits (n) VALUES ($1)
		ON CONFLICT (xid) DO UPDATE SET n = outbox_commits.n + EXCLUDED.n, cseq = EXCLUDED.cseq RETURNING n`, len(cs)).Scan(&n)
	if err != nil {
		return err
	}
	b := &pgx.Batch{}
	for i, c := range cs {
		fields, err := json.Marshal(c.Fields)
		if err != nil {
			return err
		}
		b.Queue(`INSERT INTO outbox_log (ord, change_id, org_id, location_id, entity, entity_id, op, fields, hlc, origin, actor)
			VALUES ($1, $2, $3, nullif($4, ''), $5, $6, $7, $8, $9, $10, nullif($11, ''))`,
			n-len(cs)+i, c.ID, c.OrgID, c.LocationID, c.Entity, c.EntityID, c.Op, fields, c.HLC.String(), c.Origin, c.Actor)
	}
	return tx.SendBatch(ctx, b).Close()
}

// Position gives the log's next positions to the transactions that wrote
// it, in the order of their last write to it (cseq, engine migration
// 0011), and only up to a settled mark of that order: every transaction
// that took a number at or below it has ended, so a transaction still
// running will be given positions above every position given now and a
// reader's cursor never passes a row that commits later. A record written
// after reading another hub's commit comes after that commit's records
// (transaction ids, taken when a transaction begins, did not give that).
// One hub at a time gives positions (an advisory lock); a hub that finds it
// taken leaves it to the other. It returns how many committed transactions
// still wait for a position (-1: another hub held the lock).
func Position(ctx context.Context, q Querier) (int64, error) {
	var waiting int64
	err := q.QueryRow(ctx, `SELECT kassa_position($1)`, lockLogPos).Scan(&waiting)
	return waiting, err
}

// Unpositioned counts the transactions that wrote the log and have no
// positions yet: those still running, and those waiting for an older one
// to end (or for Position to run). The log's lag shows here first.
func Unpositioned(ctx context.Context, q Querier) (int, error) {
	var n int
	err := q.QueryRow(ctx, `SELECT count(*) FROM outbox_commits WHERE last_pos IS NULL`).Scan(&n)
	return n, err
}

// Entry is a change record with its position in the hub's log.
type Entry struct {
	Pos int64
	change.Change
}

// After returns up to limit positioned records after pos, oldest first;
// orgID, when not empty, keeps that org's only. Positions are given in
// order and only below what may still commit, so a cursor of the last
// position read never skips a record.
func After(ctx context.Context, q interface {
	Query(context.Context, string, ...any) (pgx.Rows, error)
}, pos int64, orgID string, limit int) ([]Entry, error) {
	// The commits in position order, and each one's rows by its key (a
	// lateral join): a read costs what it returns, whatever plan the
	// database caches while the log is young and its statistics empty.
	org, args := "", []any{pos, limit}
	if orgID != "" {
		org, args = " AND o.org_id = $3", append(args, orgID)
	}
	rows, err := q.Query(ctx, `SELECT c.first_pos + o.ord, o.change_id, o.org_id, coalesce(o.location_id, ''), o.entity, o.entity_id, o.op, o.fields, o.hlc, o.origin, coalesce(o.actor, '')
		FROM outbox_commits c CROSS JOIN LATERAL (SELECT * FROM outbox_log o WHERE o.xid = c.xid AND c.first_pos + o.ord > $1`+org+` ORDER BY o.ord) o
		WHERE c.last_pos > $1
		ORDER BY c.last_pos, o.ord LIMIT $2`, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []Entry
	for rows.Next() {
		var e Entry
		var fields []byte
		var stamp string
		if err := rows.Scan(&e.Pos, &e.ID, &e.OrgID, &e.LocationID, &e.Entity, &e.EntityID, &e.Op, &fields, &stamp, &e.Origin, &e.Actor); err != nil {
			return nil, err
		}
		if e.HLC, err = hlc.Parse(stamp); err != nil {
			return nil, fmt.Errorf("pg: outbox %s: %w", e.ID, err)
		}
		if err := json.Unmarshal(fields, &e.Fields); err != nil {
			return nil, err
		}
		out = append(out, e)
	}
	return out, rows.Err()
}
