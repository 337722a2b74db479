package kassa

import (
	"context"
	"time"
)

// IdempotencyWindow is how long a key's first response is replayed.
const IdempotencyWindow = 24 * time.Hour

// IdempotentResponse is a stored response replayed for a repeated key.
type IdempotentResponse struct {
	Status      int
	ContentType string
	Location    string
	Body        []byte
}

// IdempotencyStore remembers POST responses by key (CONTRACT.md).
//
// Begin claims key for the caller's scope with the request's fingerprint. It
// returns the stored response when the key completed before with the same
// fingerprint; EInvalid when it was used with another body; EConflict when
// the first request is still running. A claimed key comes back with a
// context to run the request in (its writes record the key in their own
// unit of work) and to pass to Complete or Abandon.
type IdempotencyStore interface {
	Begin(ctx context.Context, scope, key, fingerprint string) (context.Context, *IdempotentResponse, error)
	Complete(ctx context.Context, scope, key string, r *IdempotentResponse) error
	Abandon(ctx context.Context, scope, key string) error
}

type idempotencyKey struct{}

// WithIdempotencyKey returns a context carrying the request's
// Idempotency-Key, for a service that passes the request on to another
// node (the hub routing a store's money operations to the store).
func WithIdempotencyKey(ctx context.Context, key string) context.Context {
	return context.WithValue(ctx, idempotencyKey{}, key)
}

// IdempotencyKeyFrom returns the request's Idempotency-Key, or "".
func IdempotencyKeyFrom(ctx context.Context) string {
	k, _ := ctx.Value(idempotencyKey{}).(string)
	return k
}

// IdempotencyRecord is what a store holds for a key: the fingerprint of
// the request that claimed it, whether that request still runs, and when
// it claimed the key.
type IdempotencyRecord struct {
	Fingerprint string
	Running     bool
	ClaimedAt   time.Time
}

// IdempotencyReplay decides what a request that carries a key does, given
// the record held for the key (nil: none) and the request's fingerprint:
// true replays the stored response; false claims the key (new, or older
// than IdempotencyWindow). Errors: EInvalid when the key was used with
// another request, EConflict while that request still runs.
func IdempotencyReplay(held *IdempotencyRecord, fingerprint string, now time.Time) (bool, error) {
	switch {
	case held == nil || now.Sub(held.ClaimedAt) > IdempotencyWindow:
		return false, nil
	case held.Fingerprint != fingerprint:
		return false, Errorf(EInvalid, "Idempotency-Key was already used with a different request")
	case held.Running:
		return false, Errorf(EConflict, "a request with this Idempotency-Key is still being processed")
	default:
		return true, nil
	}
}
