// Package forward keeps an order's money and its state on one node: at
// the hub, every operation that moves an order of a store with an
// enrolled edge through its states or moves its money runs at that edge,
// which serializes it with the store's own under its per-order lock:
//
//   - payment initiate, capture and void;
//   - order complete (it moves no money, but the store's rules for money
//     depend on it: a completed order's payment is refunded, never
//     voided; only a completed order is refunded);
//   - order refund;
//   - an order update that sets the status (a cancel, which voids the
//     order's authorizations).
//
// Two nodes deciding for one order at once could otherwise each be right
// on their own copy and together wrong: the hub completing while the
// store, not having pulled the completion yet, voids the sale's payment
// or refuses its refund; or each taking money within the order's total
// and together passing it. With every such decision at the store, the
// hub's copy only follows, so no sequence of hub calls can void a
// completed sale's money or refuse a refund of a completed order.
//
// And the store decides on what the hub wrote before: before it runs a
// command the edge applies the hub's log until nothing is left (Edge.run),
// so an order, a customer attached to it or a loyalty account enrolled
// at the hub a moment before the call is there when the store pays,
// completes (crediting that customer) or refunds.
//
// What stays hub-local: creating an order (no one else has it yet), an
// update of the notes or the customer (no money moves; the store sees it
// before its next routed operation, and a till's own complete at the same
// moment is a race of two people, as it is at one till), kitchen bumps
// and recalls (no money). Lines never change after an order is created,
// so there is no "add items" to order.
//
// The hub wraps its payment and order services (Payments, Orders); a
// routed operation goes to the edge as a link.Command carrying the
// operation, its input, the authenticated actor and the client's
// Idempotency-Key, and the edge (Serve) runs the same service method as
// that actor. Its answer — the result, or the error's kind, message and
// field errors — is returned to the client unchanged, so the status and
// body are what the store itself would have answered.
//
// The rules a client sees:
//   - The store is not connected (no edge listens on its command subject):
//     503, kind unavailable, Retry-After; nothing was done anywhere.
//   - The command went out but no answer came within Router.Timeout: 503
//     as well, but the operation may have run at the store. A retry with
//     the same Idempotency-Key gets the store's first answer: the edge
//     keeps it under the key (scope "hub:<org>/<user or client>"), and the
//     hub's own idempotency layer does not keep 5xx answers, so the retry
//     reaches the edge again.
//   - Orders of a location with no enrolled edge stay hub-local.
//   - An edge of an earlier release that does not know an operation
//     (order.complete, at v0.7.0 and earlier) answers "unknown command";
//     the hub then runs it locally, as that release's hub did, with that
//     release's race, until the store upgrades.
//
// The traps: the order must be known at the hub to be routed (an order the
// hub has not received yet is 404 there, as before); the hub's copy of the
// order follows the store's answer within the sync lag (the hub waits up
// to Router.Settle for it before answering); with several edges enrolled
// at one location the newest one takes the operations.
package forward

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/prometheus/client_golang/prometheus"

	"kassa.dev/shared/kassa"
	"kassa.dev/sync/link"
)

// The routed operations.
const (
	opInitiate = "payment.initiate"
	opCapture  = "payment.capture"
	opVoid     = "payment.void"
	opRefund   = "order.refund"
	opComplete = "order.complete"
	opCancel   = "order.update" // an update that cancels: it voids the order's authorizations
)

// ops are the routed operations, as labelled in
// kassa_money_operations_total.
var ops = []string{opInitiate, opCapture, opVoid, opRefund, opComplete, opCancel, opReturn, opExchange}

// errUnknownOp: the store runs an earlier release that does not know the
// operation; nothing ran there.
var errUnknownOp = errors.New("forward: the store does not know the operation")

// The outcomes of a routed operation, as counted in
// kassa_money_operations_total.
const (
	outcomeRouted     = "routed"     // the store ran it and answered (its result or its problem)
	outcomeRefused    = "refused"    // the store is not connected: 503, nothing done anywhere
	outcomeUnanswered = "unanswered" // sent, no answer in time: 503, it may have run at the store
)

// RetryAfter is the Retry-After (seconds) of a refusal while a store is
// not connected.
const RetryAfter = 5

// DefaultTimeout is how long the hub waits for a store's answer.
const DefaultTimeout = 10 * time.Second

// Router sends the hub's money operations to the edge of the order's
// location.
type Router struct {
	// Edge returns the node id of the edge enrolled at a location of an
	// org (the newest, if several), or "" when none is.
	Edge    func(ctx context.Context, org, location string) (string, error)
	Timeout time.Duration // 0: DefaultTimeout
	Log     *slog.Logger
	// Settle bounds how long the hub waits, after the store answered, for
	// the store's change to reach its own copy (0: DefaultSettle), so that
	// a client's next call at the hub (complete after pay) sees it.
	Settle   time.Duration
	conn     atomic.Pointer[nats.Conn]
	ops      *prometheus.CounterVec // kassa_money_operations_total; see Collector
	opsOnce  sync.Once
	orders   kassa.OrderService   // the hub's own, to find an order's location
	payments kassa.PaymentService // the hub's own, to see the store's change arrive
}

// DefaultSettle is how long the hub waits for a store's change to arrive.
const DefaultSettle = 3 * time.Second

// SetConn gives the router the hub's NATS connection once it is up;
// until then every store counts as not connected.
func (r *Router) SetConn(nc *nats.Conn) { r.conn.Store(nc) }

// Collector returns the counter of the money operations the hub routed to
// a store or answered for it, by operation and outcome; every series
// exists from the start at 0. Operations of hub-local orders are not
// counted.
func (r *Router) Collector() prometheus.Collector { return r.counter() }

func (r *Router) counter() *prometheus.CounterVec {
	r.opsOnce.Do(func() {
		r.ops = prometheus.NewCounterVec(prometheus.CounterOpts{Name: "kassa_money_operations_total",
			Help: "Money operations on a store's orders at the hub, by operation and outcome: routed (run at the store, " +
				"which answered), refused (the store not connected: 503, nothing done), unanswered (no answer in time: 503, " +
				"may have run at the store)."}, []string{"operation", "outcome"})
		for _, op := range ops {
			for _, out := range []string{outcomeRouted, outcomeRefused, outcomeUnanswered} {
				r.ops.WithLabelValues(op, out)
			}
		}
	})
	return r.ops
}

func (r *Router) count(op, outcome string) { r.counter().WithLabelValues(op, outcome).Inc() }

// edgeOf returns the edge that owns a location's money, or nil.
func (r *Router) edgeOf(ctx context.Context, org, location string) (*link.Identity, error) {
	node, err := r.Edge(ctx, org, location)
	if err != nil || node == "" {
		return nil, err
	}
	return &link.Identity{Org: org, Location: location, Node: node}, nil
}

// actor is kassa.Actor on the wire.
type actor struct {
	OrgID    string        `json:"org_id"`
	UserID   string        `json:"user_id,omitempty"`
	Role     kassa.Role    `json:"role,omitempty"`
	ClientID string        `json:"client_id,omitempty"`
	Scopes   []kassa.Scope `json:"scopes"`
}

// wireError is a kassa.Error on the wire.
type wireError struct {
	Kind       kassa.Kind         `json:"kind"`
	Message    string             `json:"message"`
	Fields     []kassa.FieldError `json:"fields,omitempty"`
	RetryAfter int                `json:"retry_after,omitempty"`
}

// send runs op at the edge id as the context's actor and decodes its
// result into out, or returns its error as the edge answered it.
func (r *Router) send(ctx context.Context, id *link.Identity, op string, in, out any) error {
	a, err := kassa.MustActor(ctx)
	if err != nil {
		return err
	}
	nc := r.conn.Load()
	if nc == nil {
		r.count(op, outcomeRefused)
		return offline()
	}
	cmd := link.Command{Op: op, IdempotencyKey: kassa.IdempotencyKeyFrom(ctx)}
	cmd.Actor, _ = json.Marshal(actor{OrgID: a.OrgID, UserID: a.UserID, Role: a.Role, ClientID: a.ClientID, Scopes: a.Scopes})
	if cmd.Input, err = json.Marshal(in); err != nil {
		return err
	}
	timeout := r.Timeout
	if timeout <= 0 {
		timeout = DefaultTimeout
	}
	sctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	rep, err := link.SendCommand(sctx, nc, *id, cmd)
	switch {
	case errors.Is(err, link.ErrEdgeOffline):
		r.count(op, outcomeRefused)
		return offline()
	case errors.Is(err, link.ErrNoAnswer):
		r.count(op, outcomeUnanswered)
		r.Log.Warn("store did not answer a routed money operation", "op", op, "node", id.Node)
		return &kassa.Error{Kind: kassa.EUnavailable, RetryAfter: RetryAfter,
			Message: "the store that owns this order did not answer in time; the operation may have taken effect there: " +
				"retry with the same Idempotency-Key to get its outcome"}
	case err != nil:
		r.count(op, outcomeUnanswered)
		return err
	}
	if len(rep.Error) == 0 {
		r.count(op, outcomeRouted)
		return json.Unmarshal(rep.Result, out)
	}
	var we wireError
	if err := json.Unmarshal(rep.Error, &we); err != nil || we.Kind == "" {
		r.count(op, outcomeRouted)
		return fmt.Errorf("forward: %s: bad error from %s: %s", op, id.Node, rep.Error)
	}
	if we.Kind == kassa.EBadRequest && we.Message == unknownOp(op) {
		return errUnknownOp // not counted: it runs here, as a hub-local operation
	}
	r.count(op, outcomeRouted)
	return &kassa.Error{Kind: we.Kind, Message: we.Message, Fields: we.Fields, RetryAfter: we.RetryAfter}
}

// unknownOp is the message of an edge's answer to an operation it does
// not know (every release's edge words it so).
func unknownOp(op string) string { return fmt.Sprintf("unknown command %q", op) }

func offline() error {
	return &kassa.Error{Kind: kassa.EUnavailable, RetryAfter: RetryAfter,
		Message: "the store that owns this order is not connected to the hub; its payments and refunds are taken at the store, " +
			"or here once it is back"}
}

// Payments is the hub's payment service: Initiate, Capture and Void of a
// store's order run at the store.
type Payments struct {
	kassa.PaymentService
	r *Router
}

// Orders is the hub's order service: CompleteOrder, RefundOrder and an
// UpdateOrder that cancels a store's order run at the store.
type Orders struct {
	kassa.OrderService
	r *Router
}

// Wrap returns the hub's payment and order services routed by r.
func (r *Router) Wrap(payments kassa.PaymentService, orders kassa.OrderService) (*Payments, *Orders) {
	r.orders, r.payments = orders, payments
	return &Payments{PaymentService: payments, r: r}, &Orders{OrderService: orders, r: r}
}

// idInput is the input of operations on one payment.
type idInput struct {
	ID string `json:"id"`
}

// updateInput is the input of an order update: the body's present
// fields, as the client sent them (Opt has no encoder of its own).
type updateInput struct {
	ID     string         `json:"id"`
	Update map[string]any `json:"update"`
}

func putOpt[T any](m map[string]any, name string, o kassa.Opt[T]) {
	switch {
	case !o.Set:
	case o.Null:
		m[name] = nil
	default:
		m[name] = o.Value
	}
}

// refundInput is the input of a refund.
type refundInput struct {
	ID     string               `json:"id"`
	Refund *kassa.RefundRequest `json:"refund"`
}

// orderEdge returns the edge of an order's location, or nil: the order
// is hub-local, or unknown here (the local call then answers 404).
func (r *Router) orderEdge(ctx context.Context, orderID string) *link.Identity {
	if !kassa.ValidID(orderID) {
		return nil
	}
	o, err := r.orders.FindOrderByID(ctx, orderID)
	if err != nil {
		return nil
	}
	id, err := r.edgeOf(ctx, o.OrgID, o.LocationID)
	if err != nil {
		r.Log.Error("finding the store of an order", "order", orderID, "err", err)
		return nil
	}
	return id
}

func (p *Payments) paymentEdge(ctx context.Context, paymentID string) *link.Identity {
	pm, err := p.PaymentService.FindPaymentByID(ctx, paymentID)
	if err != nil {
		return nil
	}
	id, err := p.r.edgeOf(ctx, pm.OrgID, pm.LocationID)
	if err != nil {
		p.r.Log.Error("finding the store of a payment", "payment", paymentID, "err", err)
		return nil
	}
	return id
}

// call runs op at the edge id and returns its result.
func call[T any](ctx context.Context, r *Router, id *link.Identity, op string, in any) (*T, error) {
	var out T
	if err := r.send(ctx, id, op, in, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// settle waits, up to r.Settle, until arrived reports that the store's
// change reached the hub's copy. The store pushes its changes as it
// commits them, so this is the sync lag, usually milliseconds; past the
// bound the answer goes out anyway (it is the store's, and final).
func (r *Router) settle(ctx context.Context, arrived func() bool) {
	bound := r.Settle
	if bound <= 0 {
		bound = DefaultSettle
	}
	deadline := time.Now().Add(bound)
	for !arrived() && time.Now().Before(deadline) {
		select {
		case <-ctx.Done():
			return
		case <-time.After(10 * time.Millisecond):
		}
	}
}

// paymentArrived reports that the hub's copy of p is as the store answered.
func (r *Router) paymentArrived(ctx context.Context, p *kassa.Payment) func() bool {
	return func() bool {
		got, err := r.payments.FindPaymentByID(ctx, p.ID)
		return err == nil && got.Status == p.Status && got.RefundedAmount == p.RefundedAmount
	}
}

// Initiate takes the payment at the order's store, if it has an edge.
func (p *Payments) Initiate(ctx context.Context, in *kassa.PaymentInitiate) (*kassa.Payment, error) {
	if e := p.r.orderEdge(ctx, in.OrderID); e != nil {
		out, err := call[kassa.Payment](ctx, p.r, e, opInitiate, in)
		if err == nil {
			p.r.settle(ctx, p.r.paymentArrived(ctx, out))
		}
		return out, err
	}
	return p.PaymentService.Initiate(ctx, in)
}

// Capture captures at the payment's store, if it has an edge.
func (p *Payments) Capture(ctx context.Context, id string) (*kassa.Payment, error) {
	if e := p.paymentEdge(ctx, id); e != nil {
		out, err := call[kassa.Payment](ctx, p.r, e, opCapture, idInput{ID: id})
		if err == nil {
			p.r.settle(ctx, p.r.paymentArrived(ctx, out))
		}
		return out, err
	}
	return p.PaymentService.Capture(ctx, id)
}

// Void voids at the payment's store, if it has an edge.
func (p *Payments) Void(ctx context.Context, id string) (*kassa.Payment, error) {
	if e := p.paymentEdge(ctx, id); e != nil {
		out, err := call[kassa.Payment](ctx, p.r, e, opVoid, idInput{ID: id})
		if err == nil {
			p.r.settle(ctx, p.r.paymentArrived(ctx, out))
		}
		return out, err
	}
	return p.PaymentService.Void(ctx, id)
}

// RefundOrder refunds at the order's store, if it has an edge.
func (o *Orders) RefundOrder(ctx context.Context, id string, in *kassa.RefundRequest) (*kassa.Order, error) {
	if e := o.r.orderEdge(ctx, id); e != nil {
		out, err := call[kassa.Order](ctx, o.r, e, opRefund, refundInput{ID: id, Refund: in})
		if err == nil {
			o.r.settle(ctx, func() bool {
				got, err := o.OrderService.FindOrderByID(ctx, id)
				return err == nil && got.RefundedTotal >= out.RefundedTotal && got.Status == out.Status
			})
		}
		return out, err
	}
	return o.OrderService.RefundOrder(ctx, id, in)
}

// CompleteOrder completes at the order's store, if it has an edge; at an
// edge of a release that cannot, here.
func (o *Orders) CompleteOrder(ctx context.Context, id string) (*kassa.Order, error) {
	if e := o.r.orderEdge(ctx, id); e != nil {
		out, err := call[kassa.Order](ctx, o.r, e, opComplete, idInput{ID: id})
		if !errors.Is(err, errUnknownOp) {
			if err == nil {
				o.r.settle(ctx, o.statusArrived(ctx, id, out.Status))
			}
			return out, err
		}
	}
	return o.OrderService.CompleteOrder(ctx, id)
}

// statusArrived reports that the hub's copy of an order has the status
// the store answered.
func (o *Orders) statusArrived(ctx context.Context, id, status string) func() bool {
	return func() bool {
		got, err := o.OrderService.FindOrderByID(ctx, id)
		return err == nil && got.Status == status
	}
}

// UpdateOrder runs an update that sets the status (a cancel, which voids
// the order's authorizations) at the order's store, if it has an edge;
// notes and customer alone stay hub-local.
func (o *Orders) UpdateOrder(ctx context.Context, id string, in *kassa.OrderUpdate) (*kassa.Order, error) {
	if in.Status.Set {
		if e := o.r.orderEdge(ctx, id); e != nil {
			body := map[string]any{}
			putOpt(body, "notes", in.Notes)
			putOpt(body, "customer_id", in.CustomerID)
			putOpt(body, "status", in.Status)
			out, err := call[kassa.Order](ctx, o.r, e, opCancel, updateInput{ID: id, Update: body})
			if err == nil {
				o.r.settle(ctx, func() bool {
					got, err := o.OrderService.FindOrderByID(ctx, id)
					return err == nil && got.Status == out.Status
				})
			}
			return out, err
		}
	}
	return o.OrderService.UpdateOrder(ctx, id, in)
}
