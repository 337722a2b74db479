package httpapi

import (
	"github.com/gofiber/fiber/v2"

	"kassa.dev/shared/kassa"
)

// paymentMethods is the org's list of payment methods, each enabled or not.
type paymentMethods struct {
	Methods []kassa.PaymentMethodConfig `json:"methods"` // Each payment method and whether the org accepts it.
}

func (s *Server) routesPayments() {
	svc := s.svc.Payments
	s.handle(&Route{Method: "GET", Path: "/payments", Tag: "payments", Scope: kassa.ScopePaymentsRead, List: true, Resp: kassa.Payment{},
		Query: append([]Param{
			{"order_id", "string", "only payments of this order"},
			{"location_id", "string", "only payments taken at this location"},
			{"status", "PaymentStatus", "only payments in this state"},
			{"method", "PaymentMethod", "only payments of this method"},
		}, pageParams...), Summary: "List payments", Handler: s.listPayments})
	s.handle(&Route{Method: "POST", Path: "/payments/initiate", Tag: "payments", Scope: kassa.ScopePaymentsWrite, Errors: []int{fiber.StatusServiceUnavailable}, Status: 201,
		Body: kassa.PaymentInitiate{}, Resp: kassa.Payment{},
		Summary: "Take a payment for an open order (capture false only authorizes a card). A declined card answers 201 with " +
			"status failed and failure_reason. Simulator cards: 4242424242424242 approves, 4000000000000002 declines, " +
			"4000000000009995 insufficient funds, 4000000000000119 processing error",
		Handler: createWith("/payments", func(p *kassa.Payment) string { return p.ID }, svc.Initiate)})
	s.handle(&Route{Method: "POST", Path: "/payments/:id/capture", Tag: "payments", Scope: kassa.ScopePaymentsWrite, Errors: []int{fiber.StatusServiceUnavailable}, Resp: kassa.Payment{},
		Summary: "Capture an authorized payment (409 otherwise)", Handler: getBy("payment", svc.Capture)})
	s.handle(&Route{Method: "POST", Path: "/payments/:id/void", Tag: "payments", Scope: kassa.ScopePaymentsWrite, Errors: []int{fiber.StatusServiceUnavailable}, Resp: kassa.Payment{},
		Summary: "Void a pending or authorized payment, or a captured one while its order is open (409 otherwise: refund the order)",
		Handler: getBy("payment", svc.Void)})
	s.handle(&Route{Method: "GET", Path: "/payments/settlements", Tag: "payments", Scope: kassa.ScopePaymentsRead, List: true, Resp: kassa.Settlement{},
		Query: append([]Param{
			{"date_from", "string", "first local date (YYYY-MM-DD), default 6 days before date_to"},
			{"date_to", "string", "last local date (YYYY-MM-DD), default each location's today in its own time zone"},
			{"location_id", "string", "only this location"},
		}, pageParams...), Summary: "Per local day, location and method: count and gross of captured payments, refunds, net; " +
			"ordered by date, location id and method, paged (limit, cursor) like every list", Handler: s.settlements})
	if s.svc.Settings != nil {
		s.handle(&Route{Method: "GET", Path: "/payments/methods", Tag: "payments", Scope: kassa.ScopePaymentsRead, Resp: paymentMethods{},
			Summary: "The payment methods the org accepts", Handler: s.getPaymentMethods})
		s.handle(&Route{Method: "PUT", Path: "/payments/methods", Tag: "payments", Scope: kassa.ScopePaymentsWrite, Body: paymentMethods{}, Resp: paymentMethods{},
			Summary: "Enable or disable payment methods (owners only)", Handler: s.putPaymentMethods})
	}
	// After the fixed paths, which it would otherwise shadow.
	s.handle(&Route{Method: "GET", Path: "/payments/:id", Tag: "payments", Scope: kassa.ScopePaymentsRead, Resp: kassa.Payment{},
		Summary: "Retrieve a payment", Handler: getBy("payment", svc.FindPaymentByID)})
}

func (s *Server) listPayments(c *fiber.Ctx) error {
	p, err := page(c)
	if err != nil {
		return err
	}
	f := kassa.PaymentFilter{Page: p, Status: c.Query("status"), Method: kassa.PaymentMethod(c.Query("method"))}
	if f.Method != "" && !f.Method.Valid() {
		return kassa.Errorf(kassa.EBadRequest, "method must be one of cash, card, gift_card, external")
	}
	switch f.Status {
	case "", kassa.PaymentPending, kassa.PaymentAuthorized, kassa.PaymentCaptured, kassa.PaymentVoided, kassa.PaymentFailed,
		kassa.PaymentRefunded, kassa.PaymentPartiallyRefunded:
	default:
		return kassa.Errorf(kassa.EBadRequest, "status is not a payment status")
	}
	if f.OrderID, err = queryID(c, "order_id"); err != nil {
		return err
	}
	if f.LocationID, err = queryID(c, "location_id"); err != nil {
		return err
	}
	l, err := s.svc.Payments.FindPayments(c.UserContext(), f)
	return list(c, l, err)
}

func (s *Server) settlements(c *fiber.Ctx) error {
	// Empty dates stay empty: the service resolves them per location, in
	// its time zone.
	p, err := page(c)
	if err != nil {
		return err
	}
	f := kassa.SettlementFilter{From: c.Query("date_from"), To: c.Query("date_to"), Page: p}
	if f.LocationID, err = queryID(c, "location_id"); err != nil {
		return err
	}
	l, err := s.svc.Payments.Settlements(c.UserContext(), f)
	return list(c, l, err)
}

func (s *Server) getPaymentMethods(c *fiber.Ctx) error {
	st, err := s.svc.Settings.Settings(c.UserContext())
	if err != nil {
		return err
	}
	return one(c, fiber.StatusOK, paymentMethods{Methods: st.PaymentMethods})
}

func (s *Server) putPaymentMethods(c *fiber.Ctx) error {
	var in paymentMethods
	if err := decode(c, &in); err != nil {
		return err
	}
	ms, err := s.svc.Settings.SetPaymentMethods(c.UserContext(), in.Methods)
	if err != nil {
		return err
	}
	return one(c, fiber.StatusOK, paymentMethods{Methods: ms})
}
