package pg

import (
	"context"
	"time"

	"github.com/jackc/pgx/v5"
)

// Delivery is a webhook delivery a hub claimed, with what sending it
// needs (sqlite.WebhookDelivery's fields).
type Delivery struct {
	ID, EventID, Event string
	Body               []byte
	Attempts           int
	EndpointID, OrgID  string
	URL, Secret        string
	ClaimedUntil       time.Time
}

// Rows is what reads several rows: a pool, a connection or a transaction.
type Rows interface {
	Query(context.Context, string, ...any) (pgx.Rows, error)
}

// ClaimDeliveries claims, for the hub asking, up to limit deliveries of an
// active endpoint that are due at now (next_attempt_at, the hub's clock as
// SQLite's WebhookDue reads it), oldest first, and leases them to it for
// lease by the database's clock (claimed_until). A delivery locked by
// another hub's claim is skipped (FOR UPDATE SKIP LOCKED), one leased
// until later is not due: each due delivery is sent by one hub. A hub
// that dies leaves a lease that ends; the delivery is claimed again then.
// Recording the attempt (its status and next_attempt_at, as on SQLite)
// and ReleaseDeliveries end a claim.
func ClaimDeliveries(ctx context.Context, q Rows, endpointID string, now time.Time, lease time.Duration, limit int) ([]Delivery, error) {
	rows, err := q.Query(ctx, `WITH due AS (
			SELECT d.id FROM webhook_deliveries d JOIN webhook_endpoints e ON e.id = d.endpoint_id
			WHERE d.endpoint_id = $1 AND d.status IN ('pending', 'awaiting_retry') AND d.next_attempt_at <= $2 AND e.status = 'active'
				AND (d.claimed_until IS NULL OR d.claimed_until <= statement_timestamp())
			ORDER BY d.next_attempt_at, d.id LIMIT $3
			FOR UPDATE OF d SKIP LOCKED),
		claimed AS (
			UPDATE webhook_deliveries d SET claimed_until = statement_timestamp() + $4::interval FROM due WHERE d.id = due.id
			RETURNING d.id, coalesce(d.event_id, '') AS event_id, d.event_type, d.body, d.attempts, d.endpoint_id, d.next_attempt_at, d.claimed_until)
		SELECT c.id, c.event_id, c.event_type, c.body, c.attempts, e.id, e.org_id, e.url, e.secret, c.claimed_until
		FROM claimed c JOIN webhook_endpoints e ON e.id = c.endpoint_id ORDER BY c.next_attempt_at, c.id`,
		endpointID, now.UTC().Format(timeFormat), limit, lease)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []Delivery
	for rows.Next() {
		var d Delivery
		if err := rows.Scan(&d.ID, &d.EventID, &d.Event, &d.Body, &d.Attempts, &d.EndpointID, &d.OrgID, &d.URL, &d.Secret, &d.ClaimedUntil); err != nil {
			return nil, err
		}
		out = append(out, d)
	}
	return out, rows.Err()
}

// ReleaseDeliveries ends the claims on ids (after their attempts are
// recorded), so that a retry due before the lease would end is not held
// back by it.
func ReleaseDeliveries(ctx context.Context, q Querier, ids []string) error {
	_, err := q.Exec(ctx, `UPDATE webhook_deliveries SET claimed_until = NULL WHERE id = ANY($1)`, ids)
	return err
}

// timeFormat is the engine's TimeFormat: how the nouns store a time, as
// text whose order is time order.
const timeFormat = "2006-01-02T15:04:05.000Z"
