package httpapi

import (
	"context"
	"slices"

	"github.com/gofiber/fiber/v2"

	"kassa.dev/shared/kassa"
)

// movementRefTypes are the values of the movements' ref_type filter.
var movementRefTypes = []string{"order", "refund", "transfer", "adjustment"}

func (s *Server) routesInventory() {
	svc := s.svc.Inventory
	stockQuery := append([]Param{
		{"location_id", "string", "only stock at this location"},
		{"product_id", "string", "only stock of this product"},
	}, pageParams...)
	// Fixed paths under /inventory/stock come first, so that no
	// parameterised route added later can shadow them.
	s.handle(&Route{Method: "GET", Path: "/inventory/stock/low-stock", Tag: "inventory", Scope: kassa.ScopeInventoryRead, List: true,
		Resp: kassa.StockLevel{}, Query: stockQuery,
		Summary: "List stock levels at or below their reorder point (levels with a reorder point of 0 are never low)",
		Handler: s.listStock(true)})
	s.handle(&Route{Method: "POST", Path: "/inventory/stock/adjust", Tag: "inventory", Scope: kassa.ScopeInventoryWrite,
		Body: kassa.StockAdjust{}, Resp: kassa.StockLevel{},
		Summary: "Adjust stock with a reason code; answers 200 with the stock level. reason: received and return take a " +
			"positive quantity; damaged, theft and wastage take the quantity lost and always reduce stock (5 and -5 both " +
			"take 5 off); correction takes a non-zero signed change; count takes the counted on-hand (0 or more) and " +
			"records the difference (nothing when it matches). reorder_point, when given, is set before the movement. " +
			"A location or product outside the org is 422; negative stock the org forbids is 409.",
		Handler: s.adjustStock})
	s.handle(&Route{Method: "GET", Path: "/inventory/stock", Tag: "inventory", Scope: kassa.ScopeInventoryRead, List: true,
		Resp: kassa.StockLevel{}, Query: stockQuery,
		Summary: "List stock levels (on_hand is the sum of the level's movements)", Handler: s.listStock(false)})
	s.handle(&Route{Method: "GET", Path: "/inventory/movements", Tag: "inventory", Scope: kassa.ScopeInventoryRead, List: true,
		Resp: kassa.Movement{}, Query: append([]Param{
			{"location_id", "string", "only movements at this location"},
			{"product_id", "string", "only movements of this product"},
			{"ref_type", "RefType", "only movements caused by this"},
		}, pageParams...),
		Summary: "List stock movements, the append-only audit trail (who: actor, why: reason, ref_type, ref_id, note), oldest first",
		Handler: s.listMovements})
	s.handle(&Route{Method: "GET", Path: "/inventory/transfers", Tag: "inventory", Scope: kassa.ScopeInventoryRead, List: true,
		Resp: kassa.Transfer{}, Query: pageParams, Summary: "List inter-location transfers", Handler: s.listTransfers})
	s.handle(&Route{Method: "POST", Path: "/inventory/transfers", Tag: "inventory", Scope: kassa.ScopeInventoryWrite, Status: 201,
		Body: kassa.TransferCreate{}, Resp: kassa.Transfer{},
		Summary: "Create a transfer between two locations of the org: it is in_transit and its lines leave the source's stock at once",
		Handler: createWith("/inventory/transfers", func(t *kassa.Transfer) string { return t.ID }, svc.CreateTransfer)})
	s.handle(&Route{Method: "GET", Path: "/inventory/transfers/:id", Tag: "inventory", Scope: kassa.ScopeInventoryRead,
		Resp: kassa.Transfer{}, Summary: "Retrieve a transfer with its lines", Handler: getBy("transfer", svc.FindTransferByID)})
	s.handle(&Route{Method: "POST", Path: "/inventory/transfers/:id/receive", Tag: "inventory", Scope: kassa.ScopeInventoryWrite,
		Resp: kassa.Transfer{},
		Summary: "Receive an in-transit transfer: its lines enter the destination's stock, inventory.transfer_completed " +
			"is emitted; any other status is 409. Takes no body (an empty JSON object is accepted).",
		Handler: transferAction(svc.ReceiveTransfer)})
	s.handle(&Route{Method: "POST", Path: "/inventory/transfers/:id/cancel", Tag: "inventory", Scope: kassa.ScopeInventoryWrite,
		Resp: kassa.Transfer{},
		Summary: "Cancel an in-transit transfer: its lines return to the source's stock (reason correction); any other " +
			"status is 409. Takes no body (an empty JSON object is accepted).",
		Handler: transferAction(svc.CancelTransfer)})
}

// listStock lists stock levels; low keeps those at or below their reorder point.
func (s *Server) listStock(low bool) fiber.Handler {
	return func(c *fiber.Ctx) error {
		p, err := page(c)
		if err != nil {
			return err
		}
		f := kassa.StockFilter{Page: p, LowOnly: low}
		if f.LocationID, err = queryID(c, "location_id"); err != nil {
			return err
		}
		if f.ProductID, err = queryID(c, "product_id"); err != nil {
			return err
		}
		l, err := s.svc.Inventory.FindStock(c.UserContext(), f)
		return list(c, l, err)
	}
}

func (s *Server) adjustStock(c *fiber.Ctx) error {
	var in kassa.StockAdjust
	if err := decode(c, &in); err != nil {
		return err
	}
	l, err := s.svc.Inventory.Adjust(c.UserContext(), &in)
	if err != nil {
		return err
	}
	return one(c, fiber.StatusOK, l)
}

func (s *Server) listMovements(c *fiber.Ctx) error {
	p, err := page(c)
	if err != nil {
		return err
	}
	f := kassa.MovementFilter{Page: p, RefType: c.Query("ref_type")}
	if f.LocationID, err = queryID(c, "location_id"); err != nil {
		return err
	}
	if f.ProductID, err = queryID(c, "product_id"); err != nil {
		return err
	}
	if f.RefType != "" && !slices.Contains(movementRefTypes, f.RefType) {
		return kassa.Errorf(kassa.EBadRequest, "ref_type must be one of order, refund, transfer, adjustment")
	}
	l, err := s.svc.Inventory.FindMovements(c.UserContext(), f)
	return list(c, l, err)
}

func (s *Server) listTransfers(c *fiber.Ctx) error {
	p, err := page(c)
	if err != nil {
		return err
	}
	l, err := s.svc.Inventory.FindTransfers(c.UserContext(), p)
	return list(c, l, err)
}

// transferAction returns the handler of POST /inventory/transfers/:id/<action>.
func transferAction(act func(context.Context, string) (*kassa.Transfer, error)) fiber.Handler {
	return actionBy("transfer", act)
}
