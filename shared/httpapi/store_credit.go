package httpapi

import (
	"github.com/gofiber/fiber/v2"

	"kassa.dev/shared/kassa"
)

// Store credit (docs/returns.md): a customer's balance, credited by
// returns and spent as the store_credit payment method. Read with
// customers:read, as the customer is.

func (s *Server) routesStoreCredit() {
	svc := s.svc.StoreCredit
	s.handle(&Route{Method: "GET", Path: "/customers/:id/store-credit", Tag: "returns", Scope: kassa.ScopeCustomersRead, Resp: kassa.StoreCredit{},
		Summary: "A customer's store credit and its balance (0 and no currency when never credited)", Handler: getBy("customer", svc.FindStoreCredit)})
	s.handle(&Route{Method: "GET", Path: "/customers/:id/store-credit/transactions", Tag: "returns", Scope: kassa.ScopeCustomersRead, List: true,
		Resp: kassa.StoreCreditTransaction{}, Query: pageParams,
		Summary: "List a customer's store credit entries (return, redeem, refund), oldest first", Handler: s.listStoreCreditTransactions})
}

func (s *Server) listStoreCreditTransactions(c *fiber.Ctx) error {
	id, err := pathID(c, "customer")
	if err != nil {
		return err
	}
	p, err := page(c)
	if err != nil {
		return err
	}
	l, err := s.svc.StoreCredit.FindStoreCreditTransactions(c.UserContext(), id, p)
	return list(c, l, err)
}
