package httpapi

import (
	"bytes"
	"context"
	"strings"
	"time"

	"github.com/gofiber/fiber/v2"

	"kassa.dev/shared/kassa"
)

func (s *Server) routesOrders() {
	svc := s.svc.Orders
	filters := append([]Param{
		{"status", "OrderStatus", "only orders in this state"},
		{"number", "string", "only the order with this number (as on its receipt), exact"},
		{"location_id", "string", "only orders of this location"},
		{"customer_id", "string", "only orders of this customer"},
		{"created_after", "string", "RFC 3339 time, inclusive"},
		{"created_before", "string", "RFC 3339 time, exclusive"},
	}, pageParams...)
	s.handle(&Route{Method: "GET", Path: "/orders", Tag: "orders", Scope: kassa.ScopeOrdersRead, List: true, Resp: kassa.Order{},
		Query: filters, Summary: "List orders with their lines, payments, refunds and history", Handler: s.listOrders})
	s.handle(&Route{Method: "POST", Path: "/orders", Tag: "orders", Scope: kassa.ScopeOrdersWrite, Status: 201,
		Body: kassa.OrderCreate{}, Resp: kassa.Order{},
		Summary: "Create an open order; the server prices it from the catalog, the location's newest active price list, " +
			"modifiers, discounts (percent in basis points or amount) and the org's tax setting (half-up per line); " +
			"quantities 1-10000, at most 100 lines, a line and the order total at most 10^12 minor units (422 beyond); " +
			"manual discounts above the role's discount_limits (basis points of the subtotal) are 403, unless approval_token is the sign-in of " +
			"a manager or owner of the org whose limit allows them: the order stays the caller's and records them as approved_by (422 for a token that is not a valid sign-in)",
		Handler: createWith("/orders", func(o *kassa.Order) string { return o.ID }, s.approvedOrder(svc.CreateOrder))})
	s.handle(&Route{Method: "POST", Path: "/orders/quote", Tag: "orders", Scope: kassa.ScopeOrdersWrite,
		Body: kassa.OrderCreate{}, Resp: kassa.Order{},
		Summary: "Price an order exactly as POST /orders would and store nothing (the till's running total): " +
			"id and number are empty, no kitchen ticket, no campaign use; the same 422 and 403 as POST /orders",
		Handler: s.quoteOrder})
	s.handle(&Route{Method: "GET", Path: "/orders/:id", Tag: "orders", Scope: kassa.ScopeOrdersRead, Resp: kassa.Order{},
		Summary: "Retrieve an order with line items, payments, refunds and history", Handler: getBy("order", svc.FindOrderByID)})
	s.handle(&Route{Method: "PATCH", Path: "/orders/:id", Tag: "orders", Scope: kassa.ScopeOrdersWrite, Errors: []int{fiber.StatusConflict, fiber.StatusServiceUnavailable}, Body: kassa.OrderUpdate{}, Resp: kassa.Order{},
		Summary: "Update notes or customer, or cancel an open order (status cancelled; captured payments must be voided first: 409)",
		Handler: updateWith("order", svc.UpdateOrder)})
	s.handle(&Route{Method: "POST", Path: "/orders/:id/complete", Tag: "orders", Scope: kassa.ScopeOrdersWrite, Errors: []int{fiber.StatusServiceUnavailable},
		Body: kassa.OrderComplete{}, Resp: kassa.Order{},
		Summary: "Complete a fully paid open order: moves stock, earns loyalty points, numbers its receipt at register_id's till " +
			"(a register of the order's location, 422 otherwise; or the location's default sequence: the body is optional) and queues its print " +
			"(409 when not open or not fully paid)",
		Handler: s.completeOrder})
	s.handle(&Route{Method: "POST", Path: "/orders/:id/refund", Tag: "orders", Scope: kassa.ScopeOrdersWrite, Errors: []int{fiber.StatusServiceUnavailable}, Body: kassa.RefundRequest{}, Resp: kassa.Order{},
		Summary: "Refund a completed order in full (empty body), by amount, or by line quantities; restock returns the units; " +
			"a cashier may refund at most the org's refund_limit on one order, all refunds together (403 beyond, unless approval_token is the sign-in of " +
			"a manager or owner of the org: the refund stays the caller's and records them as approved_by; 422 for a token that is not a valid sign-in)",
		Handler: s.refundOrder})
	s.handle(&Route{Method: "GET", Path: "/customers/:id/orders", Tag: "customers", Scope: kassa.ScopeOrdersRead, List: true, Resp: kassa.Order{},
		Query: pageParams, Summary: "A customer's order history", Handler: s.customerOrders})
}

func (s *Server) listOrders(c *fiber.Ctx) error {
	p, err := page(c)
	if err != nil {
		return err
	}
	f := kassa.OrderFilter{Page: p, Status: c.Query("status"), Number: strings.Clone(c.Query("number"))}
	if f.Status != "" && !kassa.ValidOrderStatus(f.Status) {
		return kassa.Errorf(kassa.EBadRequest, "status must be one of open, completed, partially_refunded, refunded, cancelled")
	}
	if f.LocationID, err = queryID(c, "location_id"); err != nil {
		return err
	}
	if f.CustomerID, err = queryID(c, "customer_id"); err != nil {
		return err
	}
	if f.CreatedAfter, err = queryTime(c, "created_after"); err != nil {
		return err
	}
	if f.CreatedBefore, err = queryTime(c, "created_before"); err != nil {
		return err
	}
	l, err := s.svc.Orders.FindOrders(c.UserContext(), f)
	return list(c, l, err)
}

// approvedOrder reads in's approval_token into its approver before run.
func (s *Server) approvedOrder(run func(context.Context, *kassa.OrderCreate) (*kassa.Order, error)) func(context.Context, *kassa.OrderCreate) (*kassa.Order, error) {
	return func(ctx context.Context, in *kassa.OrderCreate) (*kassa.Order, error) {
		var err error
		if in.Approver, err = s.approver(ctx, in.ApprovalToken); err != nil {
			return nil, err
		}
		return run(ctx, in)
	}
}

func (s *Server) quoteOrder(c *fiber.Ctx) error {
	var in kassa.OrderCreate
	if err := decode(c, &in); err != nil {
		return err
	}
	o, err := s.approvedOrder(s.svc.Orders.QuoteOrder)(c.UserContext(), &in)
	if err != nil {
		return err
	}
	return one(c, fiber.StatusOK, o)
}

func (s *Server) customerOrders(c *fiber.Ctx) error {
	p, err := page(c)
	if err != nil {
		return err
	}
	id, err := pathID(c, "customer")
	if err != nil {
		return err
	}
	l, err := s.svc.Orders.FindOrders(c.UserContext(), kassa.OrderFilter{Page: p, CustomerID: &id})
	return list(c, l, err)
}

// queryTime reads an optional RFC 3339 time query parameter.
func queryTime(c *fiber.Ctx, name string) (*time.Time, error) {
	v := c.Query(name)
	if v == "" {
		return nil, nil
	}
	t, err := time.Parse(time.RFC3339, v)
	if err != nil {
		return nil, kassa.Errorf(kassa.EBadRequest, "%s must be an RFC 3339 time", name)
	}
	t = t.UTC()
	return &t, nil
}

// refundOrder accepts an empty body as a full refund.
func (s *Server) refundOrder(c *fiber.Ctx) error {
	id, err := pathID(c, "order")
	if err != nil {
		return err
	}
	var in kassa.RefundRequest
	if len(bytes.TrimSpace(c.Body())) > 0 {
		if err := decode(c, &in); err != nil {
			return err
		}
	}
	ctx, err := atRegister(c, optional(in.RegisterID))
	if err != nil {
		return err
	}
	if in.Approver, err = s.approver(ctx, in.ApprovalToken); err != nil {
		return err
	}
	o, err := s.svc.Orders.RefundOrder(ctx, id, &in)
	if err != nil {
		return err
	}
	return one(c, fiber.StatusOK, o)
}

// approver is who an approval_token signs in: a 422 naming the field for a
// token that is not a valid sign-in of the caller's org (the token itself
// is never echoed); nil for none.
func (s *Server) approver(ctx context.Context, token string) (*kassa.Actor, error) {
	if token == "" {
		return nil, nil
	}
	bad := kassa.InvalidField("approval_token", "must be the access token of a signed-in manager or owner of this org")
	if len(token) > 4096 {
		return nil, bad
	}
	a, err := s.bearer(ctx, strings.TrimSpace(token))
	caller := kassa.ActorFrom(ctx)
	if err != nil || caller == nil || a.OrgID != caller.OrgID || a.UserID == "" {
		return nil, bad
	}
	return a, nil
}

// completeOrder accepts an empty body, or null (what a client that sends
// no input marshals): no till named.
func (s *Server) completeOrder(c *fiber.Ctx) error {
	id, err := pathID(c, "order")
	if err != nil {
		return err
	}
	var in kassa.OrderComplete
	if b := bytes.TrimSpace(c.Body()); len(b) > 0 && !bytes.Equal(b, []byte("null")) {
		if err := decode(c, &in); err != nil {
			return err
		}
	}
	ctx, err := atRegister(c, in.RegisterID)
	if err != nil {
		return err
	}
	o, err := s.svc.Orders.CompleteOrder(ctx, id)
	if err != nil {
		return err
	}
	return one(c, fiber.StatusOK, o)
}

// atRegister is the request's context naming the till whose receipt
// sequence numbers the sale or refund (docs/receipts.md).
// optional is nil for "" (a register_id left out), else a pointer to s.
func optional(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}

func atRegister(c *fiber.Ctx, registerID *string) (context.Context, error) {
	if registerID == nil {
		return c.UserContext(), nil
	}
	if !kassa.ValidRegisterID(*registerID) {
		return nil, kassa.InvalidField("register_id", "must be 1-64 letters, digits, _ or -")
	}
	return kassa.WithRegister(c.UserContext(), *registerID), nil
}
