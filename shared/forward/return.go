package forward

import (
	"context"
	"encoding/json"

	"kassa.dev/shared/kassa"
	"kassa.dev/sync/link"
)

// Returns and exchanges of a store's orders, and goods taken back without
// receipt at a store, run at the store (docs/returns.md), as its refunds
// do: the goods, the drawer and the order's money are the store's.
const (
	opReturn   = "order.return"
	opExchange = "order.exchange"
)

// Returns is the hub's return service: a return or exchange at a store
// with an edge runs at the store.
type Returns struct {
	kassa.ReturnService
	r *Router
}

// WrapReturns returns the hub's return service routed by r; r finds
// orders with the service Wrap was given.
func (r *Router) WrapReturns(returns kassa.ReturnService) *Returns {
	return &Returns{ReturnService: returns, r: r}
}

// Return takes goods back at the store of the order (or of location_id,
// without receipt), if it has an edge.
func (x *Returns) Return(ctx context.Context, in *kassa.ReturnRequest) (*kassa.Return, error) {
	if e := x.storeOf(ctx, in.OrderID, in.LocationID); e != nil {
		out, err := call[kassa.Return](ctx, x.r, e, opReturn, in)
		if err == nil && out.Order != nil {
			x.r.settle(ctx, func() bool {
				got, err := x.r.orders.FindOrderByID(ctx, out.Order.ID)
				return err == nil && got.RefundedTotal >= out.Order.RefundedTotal
			})
		}
		return out, err
	}
	return x.ReturnService.Return(ctx, in)
}

// Exchange exchanges at the order's store, if it has an edge.
func (x *Returns) Exchange(ctx context.Context, in *kassa.ExchangeRequest) (*kassa.Exchange, error) {
	if e := x.storeOf(ctx, in.OrderID, ""); e != nil {
		out, err := call[kassa.Exchange](ctx, x.r, e, opExchange, in)
		if err == nil && out.Order != nil {
			x.r.settle(ctx, func() bool {
				got, err := x.r.orders.FindOrderByID(ctx, out.Order.ID)
				return err == nil && got.PaidTotal >= out.Order.PaidTotal && got.Status == out.Order.Status
			})
		}
		return out, err
	}
	return x.ReturnService.Exchange(ctx, in)
}

// storeOf is the edge of the order's store, or of the location a return
// without receipt names; nil: hub-local or unknown (the local call
// answers).
func (x *Returns) storeOf(ctx context.Context, orderID, locationID string) *link.Identity {
	if orderID != "" {
		return x.r.orderEdge(ctx, orderID)
	}
	a := kassa.ActorFrom(ctx)
	if a == nil || !kassa.ValidID(locationID) {
		return nil
	}
	id, err := x.r.edgeOf(ctx, a.OrgID, locationID)
	if err != nil {
		x.r.Log.Error("finding the store of a return", "location", locationID, "err", err)
		return nil
	}
	return id
}

// runReturn runs a routed return or exchange at the store, at the till
// it names. An edge built without the return service does not know them.
func (e *Edge) runReturn(ctx context.Context, cmd link.Command) (any, error) {
	if e.Returns == nil {
		return nil, kassa.Errorf(kassa.EBadRequest, "%s", unknownOp(cmd.Op))
	}
	if cmd.Op == opExchange {
		var in kassa.ExchangeRequest
		if err := json.Unmarshal(cmd.Input, &in); err != nil {
			return nil, kassa.Errorf(kassa.EBadRequest, "malformed %s command: %v", cmd.Op, err)
		}
		return e.Returns.Exchange(atTill(ctx, in.RegisterID), &in)
	}
	var in kassa.ReturnRequest
	if err := json.Unmarshal(cmd.Input, &in); err != nil {
		return nil, kassa.Errorf(kassa.EBadRequest, "malformed %s command: %v", cmd.Op, err)
	}
	return e.Returns.Return(atTill(ctx, in.RegisterID), &in)
}

// atTill names the till a routed operation runs at (its receipt's
// sequence), when the command names a valid one.
func atTill(ctx context.Context, register string) context.Context {
	if register != "" && kassa.ValidRegisterID(register) {
		return kassa.WithRegister(ctx, register)
	}
	return ctx
}
