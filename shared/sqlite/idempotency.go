package sqlite

import (
	"context"
	"database/sql"
	"errors"

	"kassa.dev/shared/kassa"
)

// IdempotencyStore implements kassa.IdempotencyStore in the
// idempotency_keys table. Keys older than kassa.IdempotencyWindow are
// treated as unused and overwritten.
type IdempotencyStore struct{ db *DB }

// NewIdempotencyStore returns the idempotency store of db.
func NewIdempotencyStore(db *DB) *IdempotencyStore { return &IdempotencyStore{db: db} }

var _ kassa.IdempotencyStore = (*IdempotencyStore)(nil)

// Begin claims key or returns the response stored for it.
func (s *IdempotencyStore) Begin(ctx context.Context, scope, key, fingerprint string) (*kassa.IdempotentResponse, error) {
	var replay *kassa.IdempotentResponse
	now := s.db.Now()
	err := s.db.write(ctx, func(tx *Tx) error {
		var fp, status, created string
		var r kassa.IdempotentResponse
		var rs sql.NullInt64
		var ct, loc sql.NullString
		err := tx.QueryRowContext(ctx, `SELECT fingerprint, status, resp_status, content_type, location, body, created_at
			FROM idempotency_keys WHERE scope = ? AND key = ?`, scope, key).Scan(&fp, &status, &rs, &ct, &loc, &r.Body, &created)
		var held *kassa.IdempotencyRecord
		switch {
		case errors.Is(err, sql.ErrNoRows):
		case err != nil:
			return err
		default:
			held = &kassa.IdempotencyRecord{Fingerprint: fp, Running: status == "running", ClaimedAt: parseTime(created)}
		}
		again, err := kassa.IdempotencyReplay(held, fingerprint, now)
		if err != nil {
			return err
		}
		if again {
			r.Status, r.ContentType, r.Location = int(rs.Int64), ct.String, loc.String
			replay = &r
			return nil
		}
		_, err = tx.ExecContext(ctx, `INSERT INTO idempotency_keys (scope, key, fingerprint, status, created_at) VALUES (?, ?, ?, 'running', ?)
			ON CONFLICT(scope, key) DO UPDATE SET fingerprint = excluded.fingerprint, status = 'running', resp_status = NULL,
			content_type = NULL, location = NULL, body = NULL, created_at = excluded.created_at`, scope, key, fingerprint, fmtTime(now))
		return err
	})
	return replay, err
}

// Complete stores the response of a claimed key.
func (s *IdempotencyStore) Complete(ctx context.Context, scope, key string, r *kassa.IdempotentResponse) error {
	return s.db.exec(ctx, `UPDATE idempotency_keys SET status = 'done', resp_status = ?, content_type = ?, location = ?, body = ?
		WHERE scope = ? AND key = ?`, r.Status, r.ContentType, r.Location, r.Body, scope, key)
}

// Abandon releases a claimed key without a response (the request failed
// with a server error), so a retry runs again.
func (s *IdempotencyStore) Abandon(ctx context.Context, scope, key string) error {
	return s.db.exec(ctx, `DELETE FROM idempotency_keys WHERE scope = ? AND key = ? AND status = 'running'`, scope, key)
}
