package httpapi

import (
	"github.com/gofiber/fiber/v2"

	"kassa.dev/shared/kassa"
)

// Lay-bys (docs/laybys.md): goods set aside for a customer who pays in
// instalments, at the hub or at any store (offline too). Reading needs
// orders:read and writing orders:write, as for orders: a lay-by is a sale
// paid before its goods are collected.

func (s *Server) routesLaybys() {
	svc := s.svc.Laybys
	s.handle(&Route{Method: "GET", Path: "/laybys", Tag: "laybys", Scope: kassa.ScopeOrdersRead, List: true, Resp: kassa.Layby{},
		Query: append([]Param{
			{"status", "LaybyStatus", "only lay-bys in this state"},
			{"customer_id", "string", "only lay-bys of this customer"},
			{"location_id", "string", "only lay-bys whose goods this store holds"},
		}, pageParams...),
		Summary: "List the org's lay-bys with their payments", Handler: s.listLaybys})
	s.handle(&Route{Method: "POST", Path: "/laybys", Tag: "laybys", Scope: kassa.ScopeOrdersWrite, Status: 201,
		Body: kassa.LaybyCreate{}, Resp: kassa.Layby{},
		Summary: "Open a lay-by for a customer: the goods are priced as a sale at the store (price list, tax), reserved there " +
			"(off the sellable on_hand, shown as reserved) and the deposit taken as the first instalment: at least the org's " +
			"layby_min_deposit_bps of the total, less than the total (422 otherwise); it expires layby_term_days later unless paid in full; " +
			"emits layby.created",
		Handler: createWith("/laybys", func(l *kassa.Layby) string { return l.ID }, svc.CreateLayby)})
	s.handle(&Route{Method: "GET", Path: "/laybys/:id", Tag: "laybys", Scope: kassa.ScopeOrdersRead, Resp: kassa.Layby{},
		Summary: "Retrieve a lay-by with its payments", Handler: getBy("lay-by", svc.FindLaybyByID)})
	s.handle(&Route{Method: "POST", Path: "/laybys/:id/payments", Tag: "laybys", Scope: kassa.ScopeOrdersWrite, Errors: []int{fiber.StatusConflict},
		Body: kassa.LaybyTender{}, Resp: kassa.Layby{},
		Summary: "Take an instalment at the caller's store (any store of the org) by cash, card or gift card, at most the balance (422 beyond; " +
			"409 when the lay-by is not open); the instalment that pays the balance completes it (the goods are collected); " +
			"emits layby.payment_received, and layby.completed then",
		Handler: updateWith("lay-by", svc.PayLayby)})
	s.handle(&Route{Method: "POST", Path: "/laybys/:id/complete", Tag: "laybys", Scope: kassa.ScopeOrdersWrite, Errors: []int{fiber.StatusConflict},
		Resp: kassa.Layby{},
		Summary: "Mark a fully paid open lay-by collected (instalments taken at two stores while apart pay it in full without completing it; " +
			"409 while a balance is owed); emits layby.completed",
		Handler: getBy("lay-by", svc.CompleteLayby)})
	s.handle(&Route{Method: "POST", Path: "/laybys/:id/cancel", Tag: "laybys", Scope: kassa.ScopeOrdersWrite, Errors: []int{fiber.StatusConflict},
		Body: kassa.LaybyCancel{}, Resp: kassa.Layby{},
		Summary: "Cancel an open (or expired) lay-by at the store holding its goods or at the hub (409 at another store): everything paid is " +
			"refunded by refund_method, less the org's layby_termination_charge (at most what was paid) when the customer cancels or it expired; " +
			"the goods go back on sale; emits layby.cancelled",
		Handler: updateWith("lay-by", svc.CancelLayby)})
}

func (s *Server) listLaybys(c *fiber.Ctx) error {
	p, err := page(c)
	if err != nil {
		return err
	}
	f := kassa.LaybyFilter{Page: p, Status: c.Query("status")}
	switch f.Status {
	case "", kassa.LaybyOpen, kassa.LaybyCompleted, kassa.LaybyCancelled, kassa.LaybyExpired:
	default:
		return kassa.Errorf(kassa.EBadRequest, "status must be one of open, completed, cancelled, expired")
	}
	if f.CustomerID, err = queryID(c, "customer_id"); err != nil {
		return err
	}
	if f.LocationID, err = queryID(c, "location_id"); err != nil {
		return err
	}
	l, err := s.svc.Laybys.FindLaybys(c.UserContext(), f)
	return list(c, l, err)
}
