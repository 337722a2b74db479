package httpapi

// Partner routes (hub only, issue 12): resellers create tenants, the
// operator sets an org's own rate limit.
//
// Who may call: a bearer token with the partners:write scope (an OAuth
// app's; no role grants it), or the hub operator's token (--operator-token)
// presented as "Authorization: Bearer <token>" on these routes only. The
// operator token is compared in constant time (as SHA-256 digests, so its
// length does not leak either) and never logged; without the flag the
// operator path is off and such a token is just an invalid bearer token
// (401). The operator has no org: its calls spend no org's bucket and
// carry no X-RateLimit headers.
//
// Traps: a partner sees only the tenants its app created (another's is
// 404, as a cross-org id); the rate limit lives in the store (survives a
// restart) and in the limiter (Take reads no store): a change goes to both.

import (
	"crypto/sha256"
	"crypto/subtle"
	"strings"

	"github.com/gofiber/fiber/v2"

	"kassa.dev/shared/kassa"
)

func (s *Server) routesPartners() {
	svc := s.svc.Tenants
	s.handle(&Route{Method: "POST", Path: "/partners/tenants", Tag: "partners", Scope: kassa.ScopePartnersWrite, Operator: true,
		Status: 201, Body: kassa.TenantCreate{}, Resp: kassa.Tenant{},
		Summary: "Create a tenant: an org with its owner and first location (partner apps with partners:write, or the operator)",
		Handler: createWith("/partners/tenants", func(t *kassa.Tenant) string { return t.ID }, svc.CreateTenant)})
	s.handle(&Route{Method: "GET", Path: "/partners/tenants", Tag: "partners", Scope: kassa.ScopePartnersWrite, Operator: true,
		List: true, Resp: kassa.Tenant{}, Query: pageParams,
		Summary: "List the tenants the calling app created (the operator: every org)", Handler: s.listTenants})
	s.handle(&Route{Method: "GET", Path: "/partners/tenants/:id", Tag: "partners", Scope: kassa.ScopePartnersWrite, Operator: true,
		Resp: kassa.Tenant{}, Summary: "Retrieve a tenant the calling app created", Handler: getBy("tenant", svc.FindTenantByID)})
	s.handle(&Route{Method: "PUT", Path: "/partners/tenants/:id/rate-limit", Tag: "partners", Operator: true,
		Body: kassa.RateLimit{}, Resp: kassa.Tenant{},
		Summary: "Give an org its own API rate limit (the operator only)", Handler: s.putRateLimit})
	s.handle(&Route{Method: "DELETE", Path: "/partners/tenants/:id/rate-limit", Tag: "partners", Operator: true, Status: 204,
		Summary: "Return an org to the node's default rate limit (the operator only)", Handler: s.deleteRateLimit})
}

// authenticator returns the authentication step of a route that needs one.
func (s *Server) authenticator(r *Route) fiber.Handler {
	bearer := s.authenticate(r.Scope, r.AnyScope...)
	if !r.Operator {
		return bearer
	}
	return func(c *fiber.Ctx) error {
		if !s.isOperator(c) {
			return bearer(c)
		}
		// The actor names the operator for Idempotency-Key; it has no org,
		// so no business service accepts it.
		ctx := kassa.WithActor(kassa.WithOperator(c.UserContext()), &kassa.Actor{ClientID: kassa.Operator})
		c.SetUserContext(ctx)
		return c.Next()
	}
}

// isOperator reports whether the request's bearer token is the operator's.
func (s *Server) isOperator(c *fiber.Ctx) bool {
	if s.cfg.OperatorToken == "" {
		return false
	}
	raw, ok := strings.CutPrefix(c.Get(fiber.HeaderAuthorization), "Bearer ")
	if !ok {
		return false
	}
	sum := sha256.Sum256([]byte(strings.TrimSpace(raw)))
	return subtle.ConstantTimeCompare(sum[:], s.operator[:]) == 1
}

func (s *Server) listTenants(c *fiber.Ctx) error {
	p, err := page(c)
	if err != nil {
		return err
	}
	l, err := s.svc.Tenants.FindTenants(c.UserContext(), p)
	return list(c, l, err)
}

func (s *Server) putRateLimit(c *fiber.Ctx) error {
	id, err := pathID(c, "tenant")
	if err != nil {
		return err
	}
	var in kassa.RateLimit
	if err := decode(c, &in); err != nil {
		return err
	}
	t, err := s.svc.Tenants.SetRateLimit(c.UserContext(), id, &in)
	if err != nil {
		return err
	}
	if s.orgLimit != nil {
		s.orgLimit.SetLimit(id, in.PerMinute, in.Burst)
	}
	return one(c, fiber.StatusOK, t)
}

func (s *Server) deleteRateLimit(c *fiber.Ctx) error {
	id, err := pathID(c, "tenant")
	if err != nil {
		return err
	}
	if _, err := s.svc.Tenants.SetRateLimit(c.UserContext(), id, nil); err != nil {
		return err
	}
	if s.orgLimit != nil {
		s.orgLimit.SetLimit(id, 0, 0)
	}
	return c.SendStatus(fiber.StatusNoContent)
}
