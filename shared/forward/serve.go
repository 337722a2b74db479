package forward

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"log/slog"
	"sync"

	"github.com/nats-io/nats.go"

	"kassa.dev/shared/kassa"
	"kassa.dev/sync/link"
)

// Edge runs the hub's routed operations at an edge.
type Edge struct {
	ID          link.Identity
	Payments    kassa.PaymentService
	Orders      kassa.OrderService
	Returns     kassa.ReturnService // nil: returns are not routed here (return.go)
	Idempotency kassa.IdempotencyStore
	Log         *slog.Logger
	// CatchUp applies the hub's log until nothing is left; the edge runs
	// it before every command (see run). Nil: commands run on what the
	// edge holds.
	CatchUp func(ctx context.Context) error
	catchUp sync.Mutex
}

// Serve answers the hub's commands on nc (the edge's connection to its own
// NATS server) until the subscription is unsubscribed.
func (e *Edge) Serve(nc *nats.Conn) (*nats.Subscription, error) {
	return link.ServeCommands(nc, e.ID, e.Run)
}

// Run runs one command as its actor and answers with the result or the
// error. A command carrying an Idempotency-Key is run once: a repeat gets
// the first answer (an internal error is not kept, so a repeat runs again).
func (e *Edge) Run(ctx context.Context, cmd link.Command) link.CommandReply {
	var a actor
	if err := json.Unmarshal(cmd.Actor, &a); err != nil || a.OrgID != e.ID.Org {
		// Only the hub can send commands, and only for this edge's org.
		return e.answer(cmd.Op, nil, kassa.Errorf(kassa.EForbidden, "the command is not for this store's org"))
	}
	ctx = kassa.WithActor(ctx, &kassa.Actor{OrgID: a.OrgID, UserID: a.UserID, Role: a.Role, ClientID: a.ClientID, Scopes: a.Scopes})
	if cmd.IdempotencyKey == "" {
		result, err := e.run(ctx, cmd)
		return e.answer(cmd.Op, result, err)
	}
	scope := "hub:" + a.OrgID + "/" + a.UserID + a.ClientID
	sum := sha256.Sum256([]byte(cmd.Op + "\n" + string(cmd.Input)))
	ctx, replay, err := e.Idempotency.Begin(ctx, scope, cmd.IdempotencyKey, hex.EncodeToString(sum[:]))
	if err != nil {
		return e.answer(cmd.Op, nil, err)
	}
	if replay != nil {
		var rep link.CommandReply
		if json.Unmarshal(replay.Body, &rep) == nil {
			return rep
		}
	}
	result, err := e.run(ctx, cmd)
	rep := e.answer(cmd.Op, result, err)
	if err != nil && kassa.ErrorKind(err) == kassa.EInternal {
		e.Idempotency.Abandon(ctx, scope, cmd.IdempotencyKey)
		return rep
	}
	body, _ := json.Marshal(rep)
	if err := e.Idempotency.Complete(ctx, scope, cmd.IdempotencyKey, &kassa.IdempotentResponse{Status: 200,
		ContentType: "application/json", Body: body}); err != nil {
		e.Log.Error("keeping the answer of a routed money operation", "op", cmd.Op, "err", err)
	}
	return rep
}

// run runs the command once the store holds the hub's log as it stood
// when the hub sent it, so the store decides on everything the hub wrote
// before it routed the command: an order made there a moment ago, the
// customer attached to it, the loyalty account enrolled. Catch-ups run
// one at a time (concurrent commands would each pull the same entries);
// one that fails is logged and the command runs on what the store holds.
func (e *Edge) run(ctx context.Context, cmd link.Command) (any, error) {
	if e.CatchUp != nil {
		e.catchUp.Lock()
		err := e.CatchUp(ctx)
		e.catchUp.Unlock()
		if err != nil {
			e.Log.Warn("catching up with the hub for a routed operation", "op", cmd.Op, "err", err)
		}
	}
	return e.runOnce(ctx, cmd)
}

// runOnce decodes the command's input and calls the service.
func (e *Edge) runOnce(ctx context.Context, cmd link.Command) (any, error) {
	bad := func(err error) (any, error) {
		return nil, kassa.Errorf(kassa.EBadRequest, "malformed %s command: %v", cmd.Op, err)
	}
	switch cmd.Op {
	case opInitiate:
		var in kassa.PaymentInitiate
		if err := json.Unmarshal(cmd.Input, &in); err != nil {
			return bad(err)
		}
		return e.Payments.Initiate(ctx, &in)
	case opCapture, opVoid, opComplete:
		var in idInput
		if err := json.Unmarshal(cmd.Input, &in); err != nil {
			return bad(err)
		}
		switch cmd.Op {
		case opCapture:
			return e.Payments.Capture(ctx, in.ID)
		case opComplete:
			return e.Orders.CompleteOrder(ctx, in.ID)
		}
		return e.Payments.Void(ctx, in.ID)
	case opCancel:
		var in struct {
			ID     string          `json:"id"`
			Update json.RawMessage `json:"update"`
		}
		var up kassa.OrderUpdate
		if err := json.Unmarshal(cmd.Input, &in); err != nil {
			return bad(err)
		}
		if err := json.Unmarshal(in.Update, &up); err != nil {
			return bad(err)
		}
		return e.Orders.UpdateOrder(ctx, in.ID, &up)
	case opRefund:
		var in refundInput
		if err := json.Unmarshal(cmd.Input, &in); err != nil {
			return bad(err)
		}
		if in.Refund == nil {
			in.Refund = &kassa.RefundRequest{}
		}
		if r := in.Refund.RegisterID; r != "" && kassa.ValidRegisterID(r) {
			// The store numbers the refund's receipt at the till named.
			ctx = kassa.WithRegister(ctx, r)
		}
		return e.Orders.RefundOrder(ctx, in.ID, in.Refund)
	case opReturn, opExchange:
		return e.runReturn(ctx, cmd)
	}
	return nil, kassa.Errorf(kassa.EBadRequest, "%s", unknownOp(cmd.Op))
}

// answer encodes a result or an error; an internal error's text stays in
// the edge's log.
func (e *Edge) answer(op string, result any, err error) link.CommandReply {
	var rep link.CommandReply
	if err == nil {
		rep.Result, err = json.Marshal(result)
		if err == nil {
			return rep
		}
	}
	var ke *kassa.Error
	if !errors.As(err, &ke) {
		e.Log.Error("routed money operation failed", "op", op, "err", err)
		ke = &kassa.Error{Kind: kassa.EInternal, Message: "an unexpected error occurred at the store"}
	}
	rep.Error, _ = json.Marshal(wireError{Kind: ke.Kind, Message: ke.Message, Fields: ke.Fields, RetryAfter: ke.RetryAfter})
	return rep
}
