package node

import (
	"context"
	"encoding/json"
	"errors"
	"time"

	"github.com/nats-io/nats.go"

	"kassa.dev/shared/kassa"
	"kassa.dev/shared/sqlite"
	"kassa.dev/sync/link"
)

// Gift card authorization over the leaf link (docs/giftcards.md,
// "Authorization"): an enrolled edge asks its hub to hold a gift card
// payment's amount before it redeems; the hub holds it against the card's
// balance less the holds outstanding, in one unit of its single writer.

// GiftCardTimeout is how long an edge waits for its hub's authorization
// before it counts itself offline and the org's offline allowance applies.
const GiftCardTimeout = 2 * time.Second

// Gift card request operations.
const (
	giftCardHold    = "hold"
	giftCardRelease = "release"
)

// giftCardError is a kassa.Error on the wire.
type giftCardError struct {
	Kind    kassa.Kind         `json:"kind"`
	Message string             `json:"message"`
	Fields  []kassa.FieldError `json:"fields,omitempty"`
}

// ServeGiftCards answers edges' gift card requests on nc, the hub's
// connection, for the enrolled edges known accepts. The org and location
// are the edge's identity, never the request's.
func (n *Node) ServeGiftCards(nc *nats.Conn, known func(context.Context, link.Identity) bool) (*nats.Subscription, error) {
	return link.ServeGiftCards(nc, known, func(ctx context.Context, id link.Identity, req link.GiftCardRequest) link.GiftCardReply {
		return giftCardReply(n.hubGiftCard(ctx, id, req), n.log)
	}, func(msg string) link.GiftCardReply {
		return giftCardReply(kassa.Errorf(kassa.EForbidden, "%s", msg), n.log)
	}, n.log)
}

// hubGiftCard runs one edge request at the hub.
func (n *Node) hubGiftCard(ctx context.Context, id link.Identity, req link.GiftCardRequest) error {
	from := sqlite.EdgeScope{OrgID: id.Org, LocationID: id.Location, NodeID: id.Node}
	switch req.Op {
	case giftCardHold:
		var h kassa.GiftCardHold
		if err := json.Unmarshal(req.Body, &h); err != nil {
			return kassa.Errorf(kassa.EBadRequest, "malformed hold")
		}
		return n.db.HoldGiftCard(ctx, from, &h)
	case giftCardRelease:
		var paymentID string
		if err := json.Unmarshal(req.Body, &paymentID); err != nil || !kassa.ValidID(paymentID) {
			return kassa.Errorf(kassa.EBadRequest, "malformed release")
		}
		return n.db.ReleaseGiftCardHold(ctx, from, paymentID)
	}
	return kassa.Errorf(kassa.EBadRequest, "unknown gift card request")
}

// giftCardReply encodes err; an internal error's text stays in the log.
func giftCardReply(err error, log interface{ Error(string, ...any) }) link.GiftCardReply {
	if err == nil {
		return link.GiftCardReply{}
	}
	var ke *kassa.Error
	if !errors.As(err, &ke) {
		log.Error("gift card request failed", "err", err)
		ke = &kassa.Error{Kind: kassa.EInternal, Message: "the hub could not authorize the gift card"}
	}
	b, _ := json.Marshal(giftCardError{Kind: ke.Kind, Message: ke.Message, Fields: ke.Fields})
	return link.GiftCardReply{Error: b}
}

// AuthorizeGiftCardsAtHub makes the edge's gift card payments ask the hub
// of id over nc (the edge's connection) first; connected reports the
// link's state (down: the edge does not wait for an answer). Call it
// before the node serves.
func (n *Node) AuthorizeGiftCardsAtHub(id link.Identity, nc *nats.Conn, connected func() bool) {
	n.payments.GiftCards = &hubGiftCards{id: id, nc: nc, connected: connected, log: n.log}
}

// hubGiftCards is an edge's kassa.GiftCardAuthorizer.
type hubGiftCards struct {
	id        link.Identity
	nc        *nats.Conn
	connected func() bool
	log       interface{ Warn(string, ...any) }
}

func (h *hubGiftCards) Authorize(ctx context.Context, hold *kassa.GiftCardHold) (bool, error) {
	if !h.connected() {
		return false, nil
	}
	body, _ := json.Marshal(hold)
	rep, err := link.RequestGiftCard(ctx, h.nc, h.id, link.GiftCardRequest{Op: giftCardHold, Body: body}, GiftCardTimeout)
	if err != nil {
		h.log.Warn("the hub did not authorize a gift card payment in time: offline allowance applies", "payment", hold.PaymentID, "err", err)
		return false, nil
	}
	if len(rep.Error) == 0 {
		return true, nil
	}
	var we giftCardError
	if json.Unmarshal(rep.Error, &we) != nil || we.Kind != kassa.EInvalid {
		// The hub failed, or refused this store: nothing the cashier can fix
		// by another card; not the offline case either (the hub answered).
		return true, &kassa.Error{Kind: kassa.EUnavailable, RetryAfter: 5,
			Message: "the hub could not authorize the gift card right now: retry, or take another tender"}
	}
	return true, &kassa.Error{Kind: we.Kind, Message: we.Message, Fields: we.Fields}
}

func (h *hubGiftCards) Release(ctx context.Context, paymentID string) {
	body, _ := json.Marshal(paymentID)
	if _, err := link.RequestGiftCard(ctx, h.nc, h.id, link.GiftCardRequest{Op: giftCardRelease, Body: body}, GiftCardTimeout); err != nil {
		h.log.Warn("releasing a gift card hold at the hub; it expires on its own", "payment", paymentID, "err", err)
	}
}
