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
// the first request is still running.
type IdempotencyStore interface {
	Begin(ctx context.Context, scope, key, fingerprint string) (*IdempotentResponse, error)
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
