package httpapi

import (
	"context"

	"github.com/gofiber/fiber/v2"

	"kassa.dev/shared/kassa"
)

// programFinder is implemented by loyalty services that can read one
// program; GET /loyalty/programs/:id exists when the service does.
type programFinder interface {
	FindProgramByID(ctx context.Context, id string) (*kassa.LoyaltyProgram, error)
}

func (s *Server) routesLoyalty() {
	svc := s.svc.Loyalty
	s.handle(&Route{Method: "GET", Path: "/loyalty/programs", Tag: "loyalty", Scope: kassa.ScopeLoyaltyRead, List: true,
		Resp: kassa.LoyaltyProgram{}, Query: pageParams, Summary: "List the org's loyalty programs", Handler: s.listPrograms})
	s.handle(&Route{Method: "POST", Path: "/loyalty/programs", Tag: "loyalty", Scope: kassa.ScopeLoyaltyWrite, Status: 201,
		Body: kassa.LoyaltyProgramCreate{}, Resp: kassa.LoyaltyProgram{},
		Summary: "Create a loyalty program: points_per_unit are earned per 100 minor units spent (rounded down), " +
			"redemption_value is minor units per point, tiers need distinct names and distinct min_lifetime_points " +
			"(stored lowest first); is_active defaults to true",
		Handler: createWith("/loyalty/programs", func(p *kassa.LoyaltyProgram) string { return p.ID }, svc.CreateProgram)})
	if pf, ok := svc.(programFinder); ok {
		s.handle(&Route{Method: "GET", Path: "/loyalty/programs/:id", Tag: "loyalty", Scope: kassa.ScopeLoyaltyRead,
			Resp: kassa.LoyaltyProgram{}, Summary: "Retrieve a loyalty program", Handler: getBy("loyalty program", pf.FindProgramByID)})
	}
	s.handle(&Route{Method: "POST", Path: "/loyalty/accounts", Tag: "loyalty", Scope: kassa.ScopeLoyaltyWrite, Status: 201,
		Body: kassa.EnrolRequest{}, Resp: kassa.LoyaltyAccount{},
		Summary: "Enrol a customer: program_id defaults to the org's only active program (422 when there is none or " +
			"more than one); an unknown customer is 422; a second account in the same program, or an inactive program, is 409",
		Handler: createWith("/loyalty/accounts", func(a *kassa.LoyaltyAccount) string { return a.ID }, svc.Enrol)})
	s.handle(&Route{Method: "GET", Path: "/loyalty/accounts/:id", Tag: "loyalty", Scope: kassa.ScopeLoyaltyRead,
		Resp: kassa.LoyaltyAccount{}, Summary: "Retrieve a loyalty account", Handler: getBy("loyalty account", svc.FindAccountByID)})
	s.handle(&Route{Method: "GET", Path: "/loyalty/accounts/customer/:customerId", Tag: "loyalty", Scope: kassa.ScopeLoyaltyRead,
		Resp: kassa.LoyaltyAccount{},
		Summary: "Look up a customer's loyalty account: the one in an active program (the newest if several), else the " +
			"newest; 404 when the customer has none or is deleted",
		Handler: func(c *fiber.Ctx) error { return s.accountByCustomer(c, c.Params("customerId")) }})
	s.handle(&Route{Method: "POST", Path: "/loyalty/accounts/:accountId/earn", Tag: "loyalty", Scope: kassa.ScopeLoyaltyWrite, Status: 201,
		Body: kassa.PointsRequest{}, Resp: kassa.PointsTransaction{},
		Summary: "Earn points: points > 0, or amount > 0 in minor units converted at the program's rate " +
			"(amount × points_per_unit / 100, rounded down; an amount worth no points is 422); answers 201 with the " +
			"transaction; an inactive program is 409; emits loyalty.points_earned and, when the tier moves, loyalty.tier_changed",
		Handler: s.movePoints(svc.Earn)})
	s.handle(&Route{Method: "POST", Path: "/loyalty/accounts/:accountId/redeem", Tag: "loyalty", Scope: kassa.ScopeLoyaltyWrite, Status: 201,
		Body: kassa.PointsRequest{}, Resp: kassa.PointsTransaction{},
		Summary: "Redeem points: points > 0 (amount is not accepted); more than the balance is 409 and changes nothing " +
			"(the balance never goes below zero at this node); also allowed in an inactive program; answers 201 with the " +
			"transaction, whose points are negative",
		Handler: s.movePoints(svc.Redeem)})
	s.handle(&Route{Method: "GET", Path: "/loyalty/accounts/:accountId/transactions", Tag: "loyalty", Scope: kassa.ScopeLoyaltyRead,
		List: true, Resp: kassa.PointsTransaction{}, Query: pageParams,
		Summary: "List an account's points transactions, oldest first, each with balance_after", Handler: s.listPointsTransactions})
}

func (s *Server) listPrograms(c *fiber.Ctx) error {
	p, err := page(c)
	if err != nil {
		return err
	}
	l, err := s.svc.Loyalty.FindPrograms(c.UserContext(), p)
	return list(c, l, err)
}

// accountByCustomer answers the loyalty lookup for customer id.
func (s *Server) accountByCustomer(c *fiber.Ctx, id string) error {
	if !kassa.ValidID(id) {
		return kassa.NotFound("customer", id)
	}
	a, err := s.svc.Loyalty.FindAccountByCustomer(c.UserContext(), id)
	if err != nil {
		return err
	}
	return one(c, fiber.StatusOK, a)
}

// movePoints returns the handler of earn or redeem: 201 with the transaction.
func (s *Server) movePoints(move func(context.Context, string, *kassa.PointsRequest) (*kassa.PointsTransaction, error)) fiber.Handler {
	return func(c *fiber.Ctx) error {
		id, err := paramID(c, "accountId", "loyalty account")
		if err != nil {
			return err
		}
		var in kassa.PointsRequest
		if err := decode(c, &in); err != nil {
			return err
		}
		t, err := move(c.UserContext(), id, &in)
		if err != nil {
			return err
		}
		return one(c, fiber.StatusCreated, t)
	}
}

func (s *Server) listPointsTransactions(c *fiber.Ctx) error {
	id, err := paramID(c, "accountId", "loyalty account")
	if err != nil {
		return err
	}
	p, err := page(c)
	if err != nil {
		return err
	}
	l, err := s.svc.Loyalty.FindTransactions(c.UserContext(), id, p)
	return list(c, l, err)
}
