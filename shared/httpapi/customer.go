package httpapi

import (
	"strings"

	"github.com/gofiber/fiber/v2"

	"kassa.dev/shared/kassa"
)

func (s *Server) routesCustomers() {
	svc := s.svc.Customers
	s.handle(&Route{Method: "GET", Path: "/customers", Tag: "customers", Scope: kassa.ScopeCustomersRead, List: true, Resp: kassa.Customer{},
		Query: append([]Param{
			{"q", "string", "case-insensitive substring of first name, last name, full name, e-mail or phone (a phone also matches on its digits alone); at most 200 characters"},
			{"email", "string", "exact e-mail (compared trimmed and lower-cased); one that is no e-mail address is 400"},
		}, pageParams...),
		Summary: "Search and list customers (deleted customers are never listed)", Handler: s.listCustomers})
	s.handle(&Route{Method: "POST", Path: "/customers", Tag: "customers", Scope: kassa.ScopeCustomersWrite, Status: 201,
		Body: kassa.CustomerCreate{}, Resp: kassa.Customer{},
		Summary: "Create a customer: a name, an e-mail or a phone is required; the e-mail is stored trimmed and lower-cased " +
			"and is unique per org (409); birthday YYYY-MM-DD not in the future; phone 3-32 of digits, spaces, + - ( ); " +
			"preferences an object of at most 8 KiB; emits customer.created",
		Handler: createWith("/customers", func(c *kassa.Customer) string { return c.ID }, svc.CreateCustomer)})
	s.handle(&Route{Method: "GET", Path: "/customers/:id", Tag: "customers", Scope: kassa.ScopeCustomersRead, Resp: kassa.Customer{},
		Summary: "Retrieve a customer profile (a deleted customer is 404)", Handler: getBy("customer", svc.FindCustomerByID)})
	s.handle(&Route{Method: "PATCH", Path: "/customers/:id", Tag: "customers", Scope: kassa.ScopeCustomersWrite, Errors: []int{fiber.StatusConflict},
		Body: kassa.CustomerUpdate{}, Resp: kassa.Customer{},
		Summary: "Update customer fields and preferences: null clears email, phone, birthday and loyalty_member_id and " +
			`empties preferences and tags; first_name, last_name and notes are cleared with "" (null is 422); ` +
			"preferences are replaced as a whole; emits customer.updated when a field changed",
		Handler: updateWith("customer", svc.UpdateCustomer)})
	s.handle(&Route{Method: "DELETE", Path: "/customers/:id", Tag: "customers", Scope: kassa.ScopeCustomersWrite, Status: 204,
		Summary: "Delete a customer: answers 204; personal fields are erased and a tombstone stays (it replicates); " +
			"the e-mail is free for a new customer; emits customer.updated with the erased customer and \"deleted\": true",
		Handler: s.deleteCustomer})
	if s.svc.Loyalty != nil {
		s.handle(&Route{Method: "GET", Path: "/customers/:id/rewards", Tag: "customers", Scope: kassa.ScopeLoyaltyRead, Resp: kassa.LoyaltyAccount{},
			Summary: "Deprecated: the customer's loyalty account, as GET /loyalty/accounts/customer/{customerId} (its successor, " +
				`named by the Link header with rel="successor-version"; Deprecation: true); needs loyalty:read`,
			Handler: s.customerRewards})
	}
}

func (s *Server) listCustomers(c *fiber.Ctx) error {
	p, err := page(c)
	if err != nil {
		return err
	}
	f := kassa.CustomerFilter{Page: p, Q: c.Query("q"), Email: c.Query("email")}
	if !kassa.ValidText(f.Q, 200) || strings.ContainsAny(f.Q, "\n\t") {
		return kassa.Errorf(kassa.EBadRequest, "q must be at most 200 characters of text")
	}
	if f.Email != "" && !kassa.ValidEmail(kassa.NormalizeEmail(f.Email)) {
		return kassa.Errorf(kassa.EBadRequest, "email must be an e-mail address")
	}
	l, err := s.svc.Customers.FindCustomers(c.UserContext(), f)
	return list(c, l, err)
}

func (s *Server) deleteCustomer(c *fiber.Ctx) error {
	id, err := pathID(c, "customer")
	if err != nil {
		return err
	}
	if err := s.svc.Customers.DeleteCustomer(c.UserContext(), id); err != nil {
		return err
	}
	return c.SendStatus(fiber.StatusNoContent)
}

// customerRewards is the deprecated GET /customers/:id/rewards: the loyalty
// lookup by customer, with headers naming its successor (on errors too).
func (s *Server) customerRewards(c *fiber.Ctx) error {
	id := c.Params("id")
	c.Set("Deprecation", "true")
	if kassa.ValidID(id) {
		c.Set(fiber.HeaderLink, `</api/v1/loyalty/accounts/customer/`+id+`>; rel="successor-version"`)
	}
	return s.accountByCustomer(c, id)
}
