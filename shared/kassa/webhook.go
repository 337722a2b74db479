package kassa

import (
	"context"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"
)

// Webhooks (spec part 6): the hub POSTs every event of the log to each
// active endpoint of the event's org that subscribes to its type. The
// rules of that — what a valid endpoint is, which endpoint gets which
// event, the body, the signatures and the retry schedule — are here; the
// store keeps endpoints and the durable delivery queue, the node sends.

// Webhook endpoint statuses.
const (
	WebhookActive   = "active"
	WebhookInactive = "inactive"
)

// Delivery statuses: pending (not tried yet, or replayed), awaiting_retry
// (an attempt failed, another is due at next_attempt_at), delivered (an
// attempt got a 2xx), failed (the last attempt of the schedule failed).
const (
	DeliveryPending       = "pending"
	DeliveryAwaitingRetry = "awaiting_retry"
	DeliveryDelivered     = "delivered"
	DeliveryFailed        = "failed"
)

// EventTestPing (event.go) is the event of POST /webhooks/:id/test. It is
// not in the event log and cannot be subscribed to: every endpoint
// receives it when tested.

// WebhookAllEvents subscribes an endpoint to every event of the catalog,
// present and future (as Stripe's "*").
const WebhookAllEvents = "*"

// Webhook limits.
const (
	MaxWebhookEvents       = 50
	MaxWebhookURL          = 2048
	MaxWebhookDescription  = 500
	WebhookResponseLimit   = 4 << 10 // bytes of a receiver's answer kept in the log
	WebhookDeliveriesShown = 50      // attempts GET /webhooks/:id/deliveries lists
)

// Webhook header names. X-Kassa-* are the spec's (6.1); webhook-* are
// Standard Webhooks' (standardwebhooks.com), so receivers can use an
// off-the-shelf verifier.
const (
	HeaderWebhookEvent     = "X-Kassa-Event"
	HeaderWebhookSignature = "X-Kassa-Signature"
	HeaderWebhookDelivery  = "X-Kassa-Delivery"
	HeaderStdID            = "webhook-id"
	HeaderStdTimestamp     = "webhook-timestamp"
	HeaderStdSignature     = "webhook-signature"
)

// WebhookEndpoint is a registered receiver of an org's events.
type WebhookEndpoint struct {
	// ID is the endpoint's id.
	ID string `json:"id"`
	// OrgID is the org whose events it receives.
	OrgID string `json:"org_id"`
	// URL receives the POSTs (http or https; no internal hosts).
	URL string `json:"url"`
	// Events are the subscribed event types, or ["*"] for all.
	Events []string `json:"events"`
	// Description is free text for the owner.
	Description string `json:"description"`
	// Status: active endpoints receive events, inactive ones nothing.
	Status string `json:"status" openapi:"enum=WebhookStatus"`
	// CreatedAt is when it was registered.
	CreatedAt time.Time `json:"created_at"`
	// UpdatedAt is when it last changed.
	UpdatedAt time.Time `json:"updated_at"`
}

// WebhookEndpointSecret is an endpoint with its signing secret: the answer
// of registration and rotation, the only times the secret is shown.
type WebhookEndpointSecret struct {
	WebhookEndpoint
	// Secret signs every delivery (whsec_ followed by base64 of 32 random
	// bytes): X-Kassa-Signature is keyed with this whole string,
	// webhook-signature (Standard Webhooks) with the base64-decoded bytes.
	Secret string `json:"secret"`
}

// WebhookCreate registers an endpoint.
type WebhookCreate struct {
	// URL receives the POSTs.
	URL string `json:"url"`
	// Events to subscribe to: 1-50 types of the catalog, or ["*"].
	Events []string `json:"events"`
	// Description is free text, at most 500 characters.
	Description string `json:"description"`
}

// WebhookUpdate changes an endpoint; absent fields keep their value.
type WebhookUpdate struct {
	// URL receives the POSTs.
	URL Opt[string] `json:"url"`
	// Events to subscribe to: 1-50 types of the catalog, or ["*"].
	Events Opt[[]string] `json:"events"`
	// Description is free text, at most 500 characters.
	Description Opt[string] `json:"description"`
	// Status: inactive pauses the endpoint, active resumes it.
	Status Opt[string] `json:"status" openapi:"enum=WebhookStatus"`
}

// WebhookAttempt is one attempt to deliver an event to an endpoint, as
// GET /webhooks/:id/deliveries lists it; its id is the logId of
// POST /webhooks/:id/logs/:logId/retry.
type WebhookAttempt struct {
	// ID is the attempt's log id.
	ID string `json:"id"`
	// DeliveryID is the delivery's id, sent as X-Kassa-Delivery and
	// webhook-id: the same across its attempts and replays.
	DeliveryID string `json:"delivery_id"`
	// EventID is the event's id in the log (empty for test.ping).
	EventID string `json:"event_id"`
	// Event is the event type.
	Event string `json:"event"`
	// Attempt is the attempt's number for this delivery, from 1.
	Attempt int `json:"attempt"`
	// Status is the delivery's status now.
	Status string `json:"status" openapi:"enum=DeliveryStatus"`
	// Success: the receiver answered 2xx in time.
	Success bool `json:"success"`
	// ResponseCode is the receiver's HTTP status, 0 when it gave none.
	ResponseCode int `json:"response_code"`
	// ResponseBody is the start (4 KiB at most) of the receiver's answer.
	ResponseBody string `json:"response_body"`
	// DurationMS is how long the attempt took, in milliseconds.
	DurationMS int64 `json:"duration_ms"`
	// Error says why an attempt without an answer failed (timeout, refused).
	Error string `json:"error"`
	// At is when the attempt was made.
	At time.Time `json:"at"`
	// NextAttemptAt is when the delivery is tried again, if it will be.
	NextAttemptAt *time.Time `json:"next_attempt_at"`
}

// WebhookTestResult is the answer of POST /webhooks/:id/test (spec 4.4:
// camelCase, fixed by the spec).
type WebhookTestResult struct {
	// DeliveryID is the test delivery's id.
	DeliveryID string `json:"deliveryId"`
	// Success: the endpoint answered 2xx in time.
	Success bool `json:"success"`
	// ResponseCode is the endpoint's HTTP status, 0 when it gave none.
	ResponseCode int `json:"responseCode"`
	// ResponseBody is the start (4 KiB at most) of the endpoint's answer.
	ResponseBody string `json:"responseBody"`
}

// WebhookService manages an org's webhook endpoints (hub). Errors:
// EInvalid (bad body, refused URL), ENotFound (also another org's id),
// EConflict (retry of a delivery that has not failed).
type WebhookService interface {
	FindWebhooks(ctx context.Context, p Page) (List[WebhookEndpoint], error)
	FindWebhookByID(ctx context.Context, id string) (*WebhookEndpoint, error)
	CreateWebhook(ctx context.Context, in *WebhookCreate) (*WebhookEndpointSecret, error)
	UpdateWebhook(ctx context.Context, id string, in *WebhookUpdate) (*WebhookEndpoint, error)
	DeleteWebhook(ctx context.Context, id string) error
	RotateWebhookSecret(ctx context.Context, id string) (*WebhookEndpointSecret, error)
	// TestWebhook sends a signed test.ping at once and reports the answer.
	TestWebhook(ctx context.Context, id string) (*WebhookTestResult, error)
	// WebhookDeliveries lists the endpoint's last attempts, newest first.
	WebhookDeliveries(ctx context.Context, id string) ([]WebhookAttempt, error)
	// RetryWebhookDelivery queues a failed delivery again (same delivery
	// id); logID names one of its attempts or the delivery itself.
	RetryWebhookDelivery(ctx context.Context, id, logID string) (*WebhookAttempt, error)
}

// Validate checks a registration. The URL's host is checked against
// internal addresses apart (the node's egress check).
func (in *WebhookCreate) Validate() error {
	var v Validation
	validWebhookURL(&v, in.URL)
	validWebhookEvents(&v, in.Events)
	v.Check(ValidText(in.Description, MaxWebhookDescription), "description", "must be text of at most 500 characters")
	return v.Err()
}

// Validate checks an update: at least one field, each valid.
func (in *WebhookUpdate) Validate() error {
	var v Validation
	if !in.URL.Set && !in.Events.Set && !in.Description.Set && !in.Status.Set {
		v.Add("", "give at least one of url, events, description, status")
	}
	if in.URL.Set {
		validWebhookURL(&v, in.URL.Value)
	}
	if in.Events.Set {
		validWebhookEvents(&v, in.Events.Value)
	}
	if in.Description.Set {
		v.Check(!in.Description.Null && ValidText(in.Description.Value, MaxWebhookDescription), "description", "must be text of at most 500 characters")
	}
	if in.Status.Set {
		v.Check(in.Status.Value == WebhookActive || in.Status.Value == WebhookInactive, "status", "must be active or inactive")
	}
	return v.Err()
}

// validWebhookURL: an absolute http(s) URL with a host, no credentials
// and no fragment. Spec 4.4: HTTPS is expected, plain HTTP accepted.
func validWebhookURL(v *Validation, raw string) {
	u, err := url.Parse(raw)
	switch {
	case raw == "" || err != nil || len(raw) > MaxWebhookURL:
		v.Add("url", "must be an absolute http or https URL of at most %d characters", MaxWebhookURL)
	case u.Scheme != "https" && u.Scheme != "http":
		v.Add("url", "must use https (or http)")
	case u.Hostname() == "":
		v.Add("url", "must name a host")
	case u.User != nil:
		v.Add("url", "must not hold credentials")
	case u.Fragment != "" || strings.Contains(raw, "#"):
		v.Add("url", "must not have a fragment")
	}
}

// validWebhookEvents: 1-50 distinct types of the catalog, or ["*"].
func validWebhookEvents(v *Validation, events []string) {
	if len(events) == 0 || len(events) > MaxWebhookEvents {
		v.Add("events", "must list 1 to %d event types", MaxWebhookEvents)
		return
	}
	if slices.Contains(events, WebhookAllEvents) && len(events) > 1 {
		v.Add("events", `"*" subscribes to every event and stands alone`)
		return
	}
	for i, e := range events {
		switch {
		case e == WebhookAllEvents:
		case !IsEventType(e):
			v.Add("events", "%q is not an event type of the catalog", e)
			return
		case slices.Contains(events[:i], e):
			v.Add("events", "%q is listed twice", e)
			return
		}
	}
}

// WebhookSubscribes reports whether an endpoint subscribed to events
// receives an event of type typ.
func WebhookSubscribes(events []string, typ string) bool {
	return slices.Contains(events, typ) || slices.Contains(events, WebhookAllEvents)
}

// WebhookBody is a delivery's body, exactly {"event": typ, "data": data}
// (spec 6.1: no id field). data is the event's data as JSON.
func WebhookBody(typ string, data json.RawMessage) []byte {
	t, _ := json.Marshal(typ) // a string always encodes
	b := make([]byte, 0, len(data)+len(t)+20)
	b = append(b, `{"event":`...)
	b = append(b, t...)
	b = append(b, `,"data":`...)
	b = append(b, data...)
	return append(b, '}')
}

// NewWebhookSecret returns a fresh signing secret: "whsec_" and the base64
// of 32 random bytes, the form Standard Webhooks verifiers take.
func NewWebhookSecret() string {
	b := make([]byte, 32)
	rand.Read(b) // never fails (crypto/rand)
	return "whsec_" + base64.StdEncoding.EncodeToString(b)
}

// WebhookSignature is X-Kassa-Signature: "sha256=" and the lower-case hex
// HMAC-SHA256 of the raw body, keyed with the whole secret string (as
// GitHub's X-Hub-Signature-256).
func WebhookSignature(secret string, body []byte) string {
	m := hmac.New(sha256.New, []byte(secret))
	m.Write(body)
	return "sha256=" + hex.EncodeToString(m.Sum(nil))
}

// WebhookStdSignature is Standard Webhooks' webhook-signature: "v1," and
// the base64 HMAC-SHA256 of "id.timestamp.body", keyed with the secret's
// base64-decoded bytes after "whsec_".
func WebhookStdSignature(secret, id string, at time.Time, body []byte) string {
	key, err := base64.StdEncoding.DecodeString(strings.TrimPrefix(secret, "whsec_"))
	if err != nil {
		key = []byte(secret)
	}
	m := hmac.New(sha256.New, key)
	m.Write([]byte(id + "." + strconv.FormatInt(at.Unix(), 10) + "."))
	m.Write(body)
	return "v1," + base64.StdEncoding.EncodeToString(m.Sum(nil))
}

// WebhookHeaders are a delivery attempt's headers besides Content-Type:
// the spec's three and Standard Webhooks' three, signed with secret.
func WebhookHeaders(secret, deliveryID, event string, at time.Time, body []byte) map[string]string {
	return map[string]string{
		HeaderWebhookEvent:     event,
		HeaderWebhookDelivery:  deliveryID,
		HeaderWebhookSignature: WebhookSignature(secret, body),
		HeaderStdID:            deliveryID,
		HeaderStdTimestamp:     strconv.FormatInt(at.Unix(), 10),
		HeaderStdSignature:     WebhookStdSignature(secret, deliveryID, at, body),
	}
}

// DefaultWebhookRetryDelays are the pauses before the second and third
// attempts (spec 6.3): 1 minute, then 5.
var DefaultWebhookRetryDelays = []time.Duration{time.Minute, 5 * time.Minute}

// DefaultWebhookTimeout bounds one attempt (spec 6.3).
const DefaultWebhookTimeout = 10 * time.Second

// MaxWebhookRetries bounds the retry schedule's length.
const MaxWebhookRetries = 10

// ParseWebhookRetryDelays reads a retry schedule written as comma-separated
// durations ("1m,5m"); "" or "none" is no retry. Each must be positive.
func ParseWebhookRetryDelays(s string) ([]time.Duration, error) {
	out := []time.Duration{}
	if s == "" || s == "none" {
		return out, nil
	}
	for _, part := range strings.Split(s, ",") {
		d, err := time.ParseDuration(strings.TrimSpace(part))
		if err != nil || d <= 0 {
			return nil, fmt.Errorf("%q is not a positive duration", part)
		}
		out = append(out, d)
	}
	if len(out) > MaxWebhookRetries {
		return nil, fmt.Errorf("at most %d retries", MaxWebhookRetries)
	}
	return out, nil
}

// WebhookNextAttempt says what follows a failed attempt number attempt
// (from 1) made at at, under the schedule delays: the time of the next
// attempt, or ok false when the delivery has failed for good. A replayed
// delivery (attempt beyond the schedule) gets its one attempt.
func WebhookNextAttempt(delays []time.Duration, attempt int, at time.Time) (next time.Time, ok bool) {
	if attempt < 1 || attempt > len(delays) {
		return time.Time{}, false
	}
	return at.Add(delays[attempt-1]), true
}

// WebhookSuccess reports whether a receiver's HTTP status is a success.
func WebhookSuccess(code int) bool { return code >= 200 && code <= 299 }
