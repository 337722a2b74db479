package httpapi

import (
	"github.com/gofiber/fiber/v2"

	"kassa.dev/shared/kassa"
)

// Tips (docs/tips.md): a tip is taken with its payment (POST
// /payments/initiate's tip, or the card terminal's) and given back with
// the whole of it; these routes read them and report them per staff
// member.

func (s *Server) routesTips() {
	svc := s.svc.Tips
	s.handle(&Route{Method: "GET", Path: "/tips", Tag: "payments", Scope: kassa.ScopePaymentsRead, List: true, Resp: kassa.Tip{},
		Query: append([]Param{
			{"order_id", "string", "only tips on this order's payments"},
			{"payment_id", "string", "only the tip on this payment"},
			{"staff_id", "string", "only tips credited to this staff member"},
		}, pageParams...), Summary: "List tips (taken with their payments; one per payment)", Handler: s.listTips})
	s.handle(&Route{Method: "GET", Path: "/tips/:id", Tag: "payments", Scope: kassa.ScopePaymentsRead, Resp: kassa.Tip{},
		Summary: "Retrieve a tip", Handler: getBy("tip", svc.FindTipByID)})
	reportRoute(s, "/reports/tips", kassa.ReportTips, "Tips per staff member (or business day, location, till, tender): given, given back with their payment, net, cash and card; not in sales", svc.TipsReport)
}

func (s *Server) listTips(c *fiber.Ctx) error {
	p, err := page(c)
	if err != nil {
		return err
	}
	f := kassa.TipFilter{Page: p}
	for name, dst := range map[string]**string{"order_id": &f.OrderID, "payment_id": &f.PaymentID, "staff_id": &f.StaffID} {
		if *dst, err = queryID(c, name); err != nil {
			return err
		}
	}
	l, err := s.svc.Tips.FindTips(c.UserContext(), f)
	return list(c, l, err)
}
