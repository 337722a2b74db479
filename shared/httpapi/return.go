package httpapi

import (
	"github.com/gofiber/fiber/v2"

	"kassa.dev/shared/kassa"
)

// Returns and exchanges (docs/returns.md): goods come back with their
// receipt (the order, found by its number) to the original tender or to
// store credit, or without it to store credit only (a manager's); an
// exchange is a return and a new sale in one call. Both need
// orders:write, as a refund does.

func (s *Server) routesReturns() {
	s.handle(&Route{Method: "POST", Path: "/returns", Tag: "returns", Scope: kassa.ScopeOrdersWrite,
		Errors: []int{fiber.StatusForbidden, fiber.StatusConflict, fiber.StatusServiceUnavailable}, Body: kassa.ReturnRequest{}, Resp: kassa.Return{},
		Summary: "Take goods back. With order_id (the receipt): line_items name the order's lines, each at most what was sold less what " +
			"came back before (422 naming line_items[i].quantity), restocked line by line; the money goes back through the order's payments " +
			"(refund_to original, the default) or onto the customer's store credit (refund_to store_credit; the order's customer, else " +
			"customer_id); the refund limit applies as to a refund (approval_token). Without order_id: a manager or owner, or a cashier with a " +
			"manager's approval_token (403 naming approval_token otherwise), takes products back at location_id onto customer_id's store credit, " +
			"each unit at the lower of its price now and the lowest it sold at there in the last 90 days. At the hub, a return at a store with its own " +
			"edge runs at the store (503 while it is not connected)",
		Handler: s.takeReturn})
	s.handle(&Route{Method: "POST", Path: "/exchanges", Tag: "returns", Scope: kassa.ScopeOrdersWrite,
		Errors: []int{fiber.StatusForbidden, fiber.StatusConflict, fiber.StatusServiceUnavailable}, Body: kassa.ExchangeRequest{}, Resp: kassa.Exchange{},
		Summary: "Exchange in one call: return_lines of the order come back (as POST /returns with its receipt) and line_items are sold on a new " +
			"order for the order's customer (or customer_id) at the order's store; the return's value pays the new order through the customer's " +
			"store credit; what the new order costs beyond it is due (pay it by any tender, then complete the order); what the return is worth " +
			"beyond the new order goes to difference_to (original tender by default, or store credit); an exchange needs a customer (the order's " +
			"or customer_id: 422 naming it). At the hub, an exchange at a store with its own edge runs at the store (503 while it is not connected)",
		Handler: s.takeExchange})
}

func (s *Server) takeReturn(c *fiber.Ctx) error {
	var in kassa.ReturnRequest
	if err := decode(c, &in); err != nil {
		return err
	}
	ctx, err := atRegister(c, optional(in.RegisterID))
	if err != nil {
		return err
	}
	if in.Approver, err = s.approver(ctx, in.ApprovalToken); err != nil {
		return err
	}
	r, err := s.svc.Returns.Return(ctx, &in)
	if err != nil {
		return err
	}
	return one(c, fiber.StatusOK, r)
}

func (s *Server) takeExchange(c *fiber.Ctx) error {
	var in kassa.ExchangeRequest
	if err := decode(c, &in); err != nil {
		return err
	}
	ctx, err := atRegister(c, optional(in.RegisterID))
	if err != nil {
		return err
	}
	if in.Approver, err = s.approver(ctx, in.ApprovalToken); err != nil {
		return err
	}
	x, err := s.svc.Returns.Exchange(ctx, &in)
	if err != nil {
		return err
	}
	return one(c, fiber.StatusOK, x)
}
