package link

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"time"

	"github.com/nats-io/nats.go"
)

// Gift card authorization: while connected, an edge asks its hub, where a
// card's balance is authoritative, to hold the amount of a gift card
// payment before it redeems (docs/giftcards.md, "Authorization"), and to
// release the hold of a payment it did not take. Request and reply bodies
// are the caller's to define; the hub takes the edge's org and location
// from the subject, which the leaf permissions bind to the edge.

// GiftCardSubject is where an edge sends the hub its gift card requests.
func (id Identity) GiftCardSubject() string { return "kassa.gift." + id.suffix() }

// GiftCardRequest asks the hub to "hold" or "release"; Body is the
// caller's.
type GiftCardRequest struct {
	Op   string          `json:"op"`
	Body json.RawMessage `json:"body"`
}

// GiftCardReply is the hub's answer: no Error means done.
type GiftCardReply struct {
	Error json.RawMessage `json:"error,omitempty"`
}

// Limits of the hub's gift card service: the largest request it reads, and
// how many it works on at once (more wait in NATS's pending queue).
const (
	MaxGiftCardRequest = 1024
	giftCardWorkers    = 32
)

// ErrHubUnreachable: the request could not be answered by the hub in time
// (no hub listens, or no answer came); a hold may or may not have been
// made, and expires on its own if so.
var ErrHubUnreachable = errors.New("link: the hub did not answer")

// RequestGiftCard sends req to the hub over nc (the edge's connection,
// with the edge's inbox prefix) and waits for the answer up to timeout.
func RequestGiftCard(ctx context.Context, nc *nats.Conn, id Identity, req GiftCardRequest, timeout time.Duration) (*GiftCardReply, error) {
	b, err := json.Marshal(req)
	if err != nil {
		return nil, err
	}
	rctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	m, err := nc.RequestWithContext(rctx, id.GiftCardSubject(), b)
	if err != nil {
		return nil, errors.Join(ErrHubUnreachable, err)
	}
	var rep GiftCardReply
	if err := json.Unmarshal(m.Data, &rep); err != nil {
		return nil, errors.Join(ErrHubUnreachable, err)
	}
	return &rep, nil
}

// ServeGiftCards answers edges' gift card requests on nc (the hub's
// connection) with run, for enrolled edges that known accepts, at most
// giftCardWorkers at a time, until the subscription is unsubscribed. A
// request larger than MaxGiftCardRequest, malformed or from an unknown
// edge gets an error made by refuse.
func ServeGiftCards(nc *nats.Conn, known func(context.Context, Identity) bool, run func(context.Context, Identity, GiftCardRequest) GiftCardReply,
	refuse func(msg string) GiftCardReply, log *slog.Logger) (*nats.Subscription, error) {
	slots := make(chan struct{}, giftCardWorkers)
	sub, err := nc.QueueSubscribe("kassa.gift.>", "hub", func(m *nats.Msg) {
		slots <- struct{}{}
		go func() {
			defer func() { <-slots }()
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			rep := serveGiftCard(ctx, m, known, run, refuse)
			b, _ := json.Marshal(rep)
			if err := m.Respond(b); err != nil {
				log.Warn("answering a gift card request", "subject", m.Subject, "err", err)
			}
		}()
	})
	if err != nil {
		return nil, err
	}
	return sub, nc.Flush()
}

func serveGiftCard(ctx context.Context, m *nats.Msg, known func(context.Context, Identity) bool,
	run func(context.Context, Identity, GiftCardRequest) GiftCardReply, refuse func(msg string) GiftCardReply) GiftCardReply {
	id, err := parseSubject(m.Subject)
	if err != nil || !known(ctx, id) {
		return refuse("unknown or revoked edge")
	}
	if len(m.Data) > MaxGiftCardRequest {
		return refuse("the request is too large")
	}
	var req GiftCardRequest
	if err := json.Unmarshal(m.Data, &req); err != nil {
		return refuse("malformed request")
	}
	return run(ctx, id, req)
}
