package sqlite

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"time"

	"kassa.dev/shared/kassa"
)

// Webhook endpoints and the durable delivery queue (migration 0010): hub
// only, node-local (no change records; no edge can push them). The
// deliveries of an event are inserted by fanOutWebhooks in the unit that
// appends the event to the log; the node's sender takes due deliveries
// (WebhookDue) and records every attempt (RecordWebhookAttempts).

// WebhookStore keeps an org's webhook endpoints and their deliveries.
type WebhookStore struct{ db *DB }

// NewWebhookStore returns the webhook store of db.
func NewWebhookStore(db *DB) *WebhookStore { return &WebhookStore{db: db} }

// NewID returns a fresh id (UUIDv7), for a delivery made outside the queue.
func (s *WebhookStore) NewID() string { return s.db.NewID() }

const webhookCols = `SELECT id, org_id, url, events, description, status, created_at, updated_at FROM webhook_endpoints`

func scanWebhook(s scanner) (*kassa.WebhookEndpoint, error) {
	var w kassa.WebhookEndpoint
	var events, created, updated string
	if err := s.Scan(&w.ID, &w.OrgID, &w.URL, &events, &w.Description, &w.Status, &created, &updated); err != nil {
		return nil, err
	}
	if err := json.Unmarshal([]byte(events), &w.Events); err != nil {
		return nil, err
	}
	w.CreatedAt, w.UpdatedAt = parseTime(created), parseTime(updated)
	return &w, nil
}

func webhookID(w *kassa.WebhookEndpoint) string { return w.ID }

func findWebhook(ctx context.Context, q querier, orgID, id string) (*kassa.WebhookEndpoint, error) {
	return findByID(ctx, q, webhookCols, "webhook endpoint", orgID, id, scanWebhook)
}

// FindWebhooks lists the actor's org's endpoints.
func (s *WebhookStore) FindWebhooks(ctx context.Context, p kassa.Page) (kassa.List[kassa.WebhookEndpoint], error) {
	a, err := kassa.MustActor(ctx)
	if err != nil {
		return kassa.List[kassa.WebhookEndpoint]{}, err
	}
	return findPage(ctx, s.db.Reader, webhookCols, orgFilter(a.OrgID), p, scanWebhook, webhookID)
}

// FindWebhookByID returns one endpoint of the actor's org, or ENotFound.
func (s *WebhookStore) FindWebhookByID(ctx context.Context, id string) (*kassa.WebhookEndpoint, error) {
	return readOwn(ctx, s.db, findWebhook, id)
}

// CreateWebhook registers a validated endpoint with secret, active.
func (s *WebhookStore) CreateWebhook(ctx context.Context, in *kassa.WebhookCreate, secret string) (*kassa.WebhookEndpointSecret, error) {
	a, err := kassa.MustActor(ctx)
	if err != nil {
		return nil, err
	}
	events, err := json.Marshal(in.Events)
	if err != nil {
		return nil, err
	}
	id := s.db.NewID()
	w, err := writeRead(ctx, s.db, findWebhook, a.OrgID, id, func(tx *Tx) error {
		_, err := tx.ExecContext(ctx, `INSERT INTO webhook_endpoints (id, org_id, url, events, description, status, secret, created_at, updated_at)
			VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`, id, a.OrgID, in.URL, string(events), in.Description, kassa.WebhookActive, secret,
			fmtTime(tx.Now), fmtTime(tx.Now))
		return err
	})
	if err != nil {
		return nil, err
	}
	return &kassa.WebhookEndpointSecret{WebhookEndpoint: *w, Secret: secret}, nil
}

// UpdateWebhook applies a validated partial update. Errors: ENotFound.
func (s *WebhookStore) UpdateWebhook(ctx context.Context, id string, in *kassa.WebhookUpdate) (*kassa.WebhookEndpoint, error) {
	a, err := kassa.MustActor(ctx)
	if err != nil {
		return nil, err
	}
	return writeRead(ctx, s.db, findWebhook, a.OrgID, id, func(tx *Tx) error {
		w, err := findWebhook(ctx, tx, a.OrgID, id)
		if err != nil {
			return err
		}
		in.URL.To(&w.URL)
		in.Events.To(&w.Events)
		in.Description.To(&w.Description)
		in.Status.To(&w.Status)
		events, err := json.Marshal(w.Events)
		if err != nil {
			return err
		}
		_, err = tx.ExecContext(ctx, `UPDATE webhook_endpoints SET url = ?, events = ?, description = ?, status = ?, updated_at = ?
			WHERE org_id = ? AND id = ?`, w.URL, string(events), w.Description, w.Status, fmtTime(tx.Now), a.OrgID, id)
		return err
	})
}

// DeleteWebhook removes an endpoint with its deliveries and their log.
// Errors: ENotFound.
func (s *WebhookStore) DeleteWebhook(ctx context.Context, id string) error {
	a, err := kassa.MustActor(ctx)
	if err != nil {
		return err
	}
	return s.db.Write(ctx, func(tx *Tx) error {
		res, err := tx.ExecContext(ctx, `DELETE FROM webhook_endpoints WHERE org_id = ? AND id = ?`, a.OrgID, id)
		if err != nil {
			return err
		}
		if n, _ := res.RowsAffected(); n == 0 {
			return kassa.NotFound("webhook endpoint", id)
		}
		for _, q := range []string{`DELETE FROM webhook_deliveries WHERE endpoint_id = ?`, `DELETE FROM webhook_attempts WHERE endpoint_id = ?`} {
			if _, err := tx.ExecContext(ctx, q, id); err != nil {
				return err
			}
		}
		return nil
	})
}

// RotateWebhookSecret replaces an endpoint's secret: every attempt from
// the commit on is signed with the new one. Errors: ENotFound.
func (s *WebhookStore) RotateWebhookSecret(ctx context.Context, id, secret string) (*kassa.WebhookEndpointSecret, error) {
	a, err := kassa.MustActor(ctx)
	if err != nil {
		return nil, err
	}
	w, err := writeRead(ctx, s.db, findWebhook, a.OrgID, id, func(tx *Tx) error {
		res, err := tx.ExecContext(ctx, `UPDATE webhook_endpoints SET secret = ?, updated_at = ? WHERE org_id = ? AND id = ?`,
			secret, fmtTime(tx.Now), a.OrgID, id)
		if err != nil {
			return err
		}
		if n, _ := res.RowsAffected(); n == 0 {
			return kassa.NotFound("webhook endpoint", id)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return &kassa.WebhookEndpointSecret{WebhookEndpoint: *w, Secret: secret}, nil
}

const attemptCols = `SELECT a.id, a.delivery_id, coalesce(d.event_id, ''), d.event_type, a.attempt, d.status, d.attempts,
	a.response_code, a.response_body, a.duration_ms, a.error, a.at, coalesce(d.next_attempt_at, '')
	FROM webhook_attempts a JOIN webhook_deliveries d ON d.id = a.delivery_id`

func scanAttempt(s scanner) (*kassa.WebhookAttempt, error) {
	var w kassa.WebhookAttempt
	var attempts int
	var at, next string
	if err := s.Scan(&w.ID, &w.DeliveryID, &w.EventID, &w.Event, &w.Attempt, &w.Status, &attempts,
		&w.ResponseCode, &w.ResponseBody, &w.DurationMS, &w.Error, &at, &next); err != nil {
		return nil, err
	}
	w.At = parseTime(at)
	w.Success = w.Error == "" && kassa.WebhookSuccess(w.ResponseCode)
	if next != "" && w.Attempt == attempts { // the delivery's latest attempt says what comes next
		t := parseTime(next)
		w.NextAttemptAt = &t
	}
	return &w, nil
}

// WebhookDeliveries lists the endpoint's last attempts, newest first.
// Errors: ENotFound (also another org's endpoint).
func (s *WebhookStore) WebhookDeliveries(ctx context.Context, id string) ([]kassa.WebhookAttempt, error) {
	if _, err := s.FindWebhookByID(ctx, id); err != nil {
		return nil, err
	}
	rows, err := s.db.Reader.QueryContext(ctx, attemptCols+` WHERE a.endpoint_id = ? ORDER BY a.at DESC, a.id DESC LIMIT ?`,
		id, kassa.WebhookDeliveriesShown)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := []kassa.WebhookAttempt{}
	for rows.Next() {
		w, err := scanAttempt(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, *w)
	}
	return out, rows.Err()
}

// RetryWebhookDelivery makes a failed delivery of the endpoint due again
// at once, with its id unchanged; logID names one of its attempts or the
// delivery. It answers the delivery's latest attempt as it stands now.
// Errors: ENotFound, EConflict when the delivery has not failed.
func (s *WebhookStore) RetryWebhookDelivery(ctx context.Context, id, logID string) (*kassa.WebhookAttempt, error) {
	a, err := kassa.MustActor(ctx)
	if err != nil {
		return nil, err
	}
	var delivery string
	err = s.db.Write(ctx, func(tx *Tx) error {
		var status string
		err := tx.QueryRowContext(ctx, `SELECT d.id, d.status FROM webhook_deliveries d
			WHERE d.org_id = ? AND d.endpoint_id = ? AND (d.id = ? OR d.id = (SELECT delivery_id FROM webhook_attempts WHERE id = ?))`,
			a.OrgID, id, logID, logID).Scan(&delivery, &status)
		if errors.Is(err, sql.ErrNoRows) {
			return kassa.NotFound("delivery log", logID)
		}
		if err != nil {
			return err
		}
		if status != kassa.DeliveryFailed {
			return kassa.Errorf(kassa.EConflict, "delivery %s is %s: only a failed delivery can be retried", delivery, status)
		}
		_, err = tx.ExecContext(ctx, `UPDATE webhook_deliveries SET status = ?, next_attempt_at = ?, updated_at = ? WHERE id = ?`,
			kassa.DeliveryPending, fmtTime(tx.Now), fmtTime(tx.Now), delivery)
		return err
	})
	if err != nil {
		return nil, err
	}
	return scanAttempt(s.db.Reader.QueryRowContext(ctx, attemptCols+` WHERE a.delivery_id = ? ORDER BY a.attempt DESC LIMIT 1`, delivery))
}

// WebhookTarget is where and how a delivery is sent.
type WebhookTarget struct {
	EndpointID, OrgID, URL, Secret string
}

// WebhookTarget returns the endpoint id of the actor's org with its
// URL and current secret. Errors: ENotFound.
func (s *WebhookStore) WebhookTarget(ctx context.Context, id string) (*WebhookTarget, error) {
	a, err := kassa.MustActor(ctx)
	if err != nil {
		return nil, err
	}
	t := WebhookTarget{EndpointID: id, OrgID: a.OrgID}
	err = s.db.Reader.QueryRowContext(ctx, `SELECT url, secret FROM webhook_endpoints WHERE org_id = ? AND id = ?`, a.OrgID, id).Scan(&t.URL, &t.Secret)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, kassa.NotFound("webhook endpoint", id)
	}
	return &t, err
}

// WebhookDelivery is a due delivery as the sender takes it: what to send,
// where, signed with which secret (read with it, so a rotation counts
// from the next attempt on).
type WebhookDelivery struct {
	ID, EventID, Event string
	Body               []byte
	Attempts           int // made so far
	WebhookTarget
}

// WebhookOutcome is one attempt's result as the sender recorded it.
type WebhookOutcome struct {
	Code     int
	Body     string
	Duration time.Duration
	Err      string
	At       time.Time
	// Status is the delivery's status after it; Next the time of the next
	// attempt (zero: none).
	Status string
	Next   time.Time
}

// WebhookDue returns up to limit deliveries of an active endpoint that
// are due at now, oldest first.
func (s *WebhookStore) WebhookDue(ctx context.Context, endpointID string, now time.Time, limit int) ([]WebhookDelivery, error) {
	rows, err := s.db.Reader.QueryContext(ctx, `SELECT d.id, coalesce(d.event_id, ''), d.event_type, d.body, d.attempts, e.id, e.org_id, e.url, e.secret
		FROM webhook_deliveries d JOIN webhook_endpoints e ON e.id = d.endpoint_id
		WHERE d.endpoint_id = ? AND d.status IN ('pending', 'awaiting_retry') AND d.next_attempt_at <= ? AND e.status = 'active'
		ORDER BY d.next_attempt_at, d.id LIMIT ?`, endpointID, fmtTime(now), limit)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []WebhookDelivery
	for rows.Next() {
		var d WebhookDelivery
		if err := rows.Scan(&d.ID, &d.EventID, &d.Event, &d.Body, &d.Attempts, &d.EndpointID, &d.OrgID, &d.URL, &d.Secret); err != nil {
			return nil, err
		}
		out = append(out, d)
	}
	return out, rows.Err()
}

// WebhookQueueLen counts the deliveries waiting to be sent, pending or
// awaiting a retry, of every org.
func (s *WebhookStore) WebhookQueueLen(ctx context.Context) (int, error) {
	var n int
	err := s.db.Reader.QueryRowContext(ctx, `SELECT count(*) FROM webhook_deliveries WHERE status IN ('pending', 'awaiting_retry')`).Scan(&n)
	return n, err
}

// WebhookOldestWaiting returns when the oldest delivery still waiting to
// be sent (pending or awaiting a retry) was made (zero: none waits).
func (s *WebhookStore) WebhookOldestWaiting(ctx context.Context) (time.Time, error) {
	var at sql.NullString
	err := s.db.Reader.QueryRowContext(ctx, `SELECT min(created_at) FROM webhook_deliveries WHERE status IN ('pending', 'awaiting_retry')`).Scan(&at)
	if err != nil || !at.Valid {
		return time.Time{}, err
	}
	return time.Parse(TimeFormat, at.String)
}

// WebhookEndpointsDue returns the active endpoints with deliveries due at
// now, and the earliest time a later delivery becomes due (zero: none).
func (s *WebhookStore) WebhookEndpointsDue(ctx context.Context, now time.Time) ([]string, time.Time, error) {
	rows, err := s.db.Reader.QueryContext(ctx, `SELECT d.endpoint_id, min(d.next_attempt_at)
		FROM webhook_deliveries d JOIN webhook_endpoints e ON e.id = d.endpoint_id
		WHERE d.status IN ('pending', 'awaiting_retry') AND e.status = 'active' GROUP BY d.endpoint_id`)
	if err != nil {
		return nil, time.Time{}, err
	}
	defer rows.Close()
	var due []string
	var later time.Time
	for rows.Next() {
		var id, at string
		if err := rows.Scan(&id, &at); err != nil {
			return nil, time.Time{}, err
		}
		if t := parseTime(at); !t.After(now) {
			due = append(due, id)
		} else if later.IsZero() || t.Before(later) {
			later = t
		}
	}
	return due, later, rows.Err()
}

// ActiveWebhookEndpoints returns the ids of an org's active endpoints.
func (s *WebhookStore) ActiveWebhookEndpoints(ctx context.Context, orgID string) ([]string, error) {
	rows, err := s.db.Reader.QueryContext(ctx, `SELECT id FROM webhook_endpoints WHERE org_id = ? AND status = 'active'`, orgID)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var id string
		if err := rows.Scan(&id); err != nil {
			return nil, err
		}
		out = append(out, id)
	}
	return out, rows.Err()
}

// RecordWebhookAttempts logs, for each ds[i], attempt number
// ds[i].Attempts+1 with its outcome outs[i] and moves the delivery to
// outs[i].Status, all in one unit. An attempt already recorded (the
// delivery moved on meanwhile) is not recorded again.
func (s *WebhookStore) RecordWebhookAttempts(ctx context.Context, ds []WebhookDelivery, outs []WebhookOutcome) error {
	return s.db.Write(ctx, func(tx *Tx) error {
		for i := range ds {
			d, o := &ds[i], outs[i]
			var next any
			if !o.Next.IsZero() {
				next = fmtTime(o.Next)
			}
			res, err := tx.ExecContext(ctx, `UPDATE webhook_deliveries SET status = ?, attempts = attempts + 1, next_attempt_at = ?, updated_at = ?
			WHERE id = ? AND attempts = ?`, o.Status, next, fmtTime(tx.Now), d.ID, d.Attempts)
			if err != nil {
				return err
			}
			if n, _ := res.RowsAffected(); n == 0 {
				continue
			}
			if err := insertAttempt(ctx, tx, d, o); err != nil {
				return err
			}
		}
		return nil
	})
}

func insertAttempt(ctx context.Context, tx *Tx, d *WebhookDelivery, o WebhookOutcome) error {
	_, err := tx.ExecContext(ctx, `INSERT INTO webhook_attempts (id, org_id, endpoint_id, delivery_id, attempt, response_code, response_body, duration_ms, error, at)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`, tx.DB.NewID(), d.OrgID, d.EndpointID, d.ID, d.Attempts+1, o.Code, o.Body,
		o.Duration.Milliseconds(), o.Err, fmtTime(o.At))
	return err
}

// RecordWebhookTest records a test delivery that was sent at once (not
// queued): the delivery, already in its final status, and its attempt.
func (s *WebhookStore) RecordWebhookTest(ctx context.Context, d *WebhookDelivery, o WebhookOutcome) error {
	return s.db.Write(ctx, func(tx *Tx) error {
		_, err := tx.ExecContext(ctx, `INSERT INTO webhook_deliveries (id, org_id, endpoint_id, event_id, event_type, body, status, attempts, created_at, updated_at)
			VALUES (?, ?, ?, NULL, ?, ?, ?, 1, ?, ?)`, d.ID, d.OrgID, d.EndpointID, d.Event, d.Body, o.Status, fmtTime(tx.Now), fmtTime(tx.Now))
		if err != nil {
			return err
		}
		return insertAttempt(ctx, tx, d, o)
	})
}

// Every event this node logs is offered to the org's webhooks.
func init() {
	onEventLogged(func(ctx context.Context, tx *Tx, id, orgID, typ string, data []byte) error {
		return fanOutWebhooks(ctx, tx, id, orgID, typ, data)
	})
}

// activeEndpoint is an active endpoint of an org and the events it
// subscribes to.
type activeEndpoint struct {
	id     string
	events []string
}

// activeEndpointsOf is the Tx.Memo key of an org's active endpoints: an
// edge's push holds an event a sale, and an apply never writes endpoints.
type activeEndpointsOf string

// activeEndpoints reads an org's active endpoints in the unit.
func activeEndpoints(ctx context.Context, tx *Tx, orgID string) ([]activeEndpoint, error) {
	rows, err := tx.QueryContext(ctx, `SELECT id, events FROM webhook_endpoints WHERE org_id = ? AND status = 'active'`, orgID)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []activeEndpoint
	for rows.Next() {
		var ep activeEndpoint
		var events string
		if err := rows.Scan(&ep.id, &events); err != nil {
			return nil, err
		}
		if json.Unmarshal([]byte(events), &ep.events) == nil {
			out = append(out, ep)
		}
	}
	return out, rows.Err()
}

// fanOutWebhooks queues one delivery of an event just appended to the
// log for each active endpoint of its org that subscribes to its type,
// in the same unit: no event without its deliveries. Only the hub sends
// webhooks; at an edge this does nothing.
func fanOutWebhooks(ctx context.Context, tx *Tx, id, orgID, typ string, data []byte) error {
	if !tx.DB.Hub {
		return nil
	}
	v, err := tx.Memo(activeEndpointsOf(orgID), func() (any, error) { return activeEndpoints(ctx, tx, orgID) })
	if err != nil {
		return err
	}
	var targets []string
	for _, ep := range v.([]activeEndpoint) {
		if kassa.WebhookSubscribes(ep.events, typ) {
			targets = append(targets, ep.id)
		}
	}
	if len(targets) == 0 {
		return nil
	}
	body := kassa.WebhookBody(typ, data)
	for _, ep := range targets {
		if _, err := tx.ExecContext(ctx, `INSERT INTO webhook_deliveries (id, org_id, endpoint_id, event_id, event_type, body, status, attempts, next_attempt_at, created_at, updated_at)
			VALUES (?, ?, ?, ?, ?, ?, ?, 0, ?, ?, ?) ON CONFLICT (endpoint_id, event_id) DO NOTHING`,
			tx.DB.NewID(), orgID, ep, id, typ, body, kassa.DeliveryPending, fmtTime(tx.Now), fmtTime(tx.Now), fmtTime(tx.Now)); err != nil {
			return err
		}
	}
	return nil
}
