package httpapi

import (
	"net/netip"

	"github.com/gofiber/fiber/v2"

	"kassa.dev/shared/kassa"
)

// loginRequest is a staff member's sign-in.
type loginRequest struct {
	Email    string `json:"email" openapi:"required"`    // The staff account's e-mail address.
	Password string `json:"password" openapi:"required"` // The account's password.
}

// refreshRequest exchanges a refresh token for a new pair.
type refreshRequest struct {
	RefreshToken string `json:"refreshToken" openapi:"required"` // The refresh token of the last login or refresh; it stops working.
}

// loginUser is the signed-in user of spec 2.2's login result.
type loginUser struct {
	ID    string `json:"id"`    // The user's id.
	Email string `json:"email"` // The user's e-mail address.
	OrgID string `json:"orgId"` // The org the user belongs to; every call acts in it.
}

// loginResult is the login and refresh result of spec 2.2, to the letter
// (camelCase).
type loginResult struct {
	AccessToken  string    `json:"accessToken"`  // A JWT to send as Authorization: Bearer; lives expiresIn seconds.
	RefreshToken string    `json:"refreshToken"` // Exchanged at POST /auth/refresh for a new pair; rotates on each use.
	ExpiresIn    int       `json:"expiresIn"`    // Seconds the access token lives (900).
	User         loginUser `json:"user"`         // Who signed in.
}

func (s *Server) routesAuth() {
	s.handle(&Route{Method: "POST", Path: "/auth/login", Tag: "auth", Public: true, Body: loginRequest{}, Resp: loginResult{},
		Errors:  []int{fiber.StatusUnauthorized, fiber.StatusTooManyRequests},
		Summary: "Log in with e-mail and password; throttled per client address and per node, locked by account and address after failures", Handler: s.login})
	s.handle(&Route{Method: "POST", Path: "/auth/refresh", Tag: "auth", Public: true, Body: refreshRequest{}, Resp: loginResult{}, Errors: []int{fiber.StatusUnauthorized},
		Summary: "Exchange a refresh token for a new pair; the old refresh token stops working", Handler: s.refresh})
	s.handle(&Route{Method: "POST", Path: "/auth/logout", Tag: "auth", Status: fiber.StatusNoContent,
		Summary: "Revoke the session of the presented access token and its refresh token", Handler: s.logout})
	s.handle(&Route{Method: "GET", Path: "/auth/me", Tag: "auth", Resp: kassa.User{},
		Summary: "The authenticated user", Handler: s.me})
	s.handle(&Route{Method: "POST", Path: "/auth/pin", Tag: "auth", Public: true, Body: pinRequest{}, Resp: loginResult{},
		Errors: []int{fiber.StatusUnauthorized, fiber.StatusTooManyRequests},
		Summary: "Quick sign-in at a till with a user's id and PIN (docs/staff.md): the login result of /auth/login; throttled like it, " +
			"locked by user and address after failures, and after 10 wrong PINs in a row the PIN stops working at this node until a new one is set " +
			"or the password signs in; at a store only its own staff sign in by PIN",
		Handler: s.pinLogin})
	s.routesUsers()
}

// pinRequest is a quick sign-in at a till.
type pinRequest struct {
	UserID string `json:"user_id" openapi:"required"` // The staff member's id (the till keeps it from their last sign-in).
	PIN    string `json:"pin" openapi:"required"`     // Their PIN, 4-8 digits.
}

func (s *Server) pinLogin(c *fiber.Ctx) error {
	var in pinRequest
	if err := decode(c, &in); err != nil {
		return err
	}
	var v kassa.Validation
	v.Check(kassa.ValidID(in.UserID), "user_id", "must be a user id")
	v.Check(kassa.ValidPIN(in.PIN), "pin", "must be 4-8 digits")
	if err := v.Err(); err != nil {
		return err
	}
	t, err := s.svc.Auth.PINLogin(c.UserContext(), in.UserID, in.PIN, clientAddr(s.clientIP(c)))
	if err != nil {
		return err
	}
	return one(c, fiber.StatusOK, tokensResult(t))
}

func tokensResult(t *kassa.Tokens) loginResult {
	return loginResult{AccessToken: t.AccessToken, RefreshToken: t.RefreshToken, ExpiresIn: t.ExpiresIn,
		User: loginUser{ID: t.User.ID, Email: t.User.Email, OrgID: t.User.OrgID}}
}

func (s *Server) login(c *fiber.Ctx) error {
	var in loginRequest
	if err := decode(c, &in); err != nil {
		return err
	}
	var v kassa.Validation
	v.Check(in.Email != "", "email", "is required")
	v.Check(in.Password != "", "password", "is required")
	v.Check(len(in.Email) <= 254 && len(in.Password) <= 1024, "password", "is too long")
	if err := v.Err(); err != nil {
		return err
	}
	t, err := s.svc.Auth.Login(c.UserContext(), in.Email, in.Password, clientAddr(s.clientIP(c)))
	if err != nil {
		return err
	}
	return one(c, fiber.StatusOK, tokensResult(t))
}

// clientAddr is the address logins are throttled and locked by: the
// client's (clientIP), an IPv6 one cut to its /64 (one host usually holds
// a whole /64, so its addresses are free to rotate through). The string
// is a new one, never Fiber's buffer: the limiters keep it in a key.
func clientAddr(a netip.Addr) string {
	a = a.Unmap()
	if a.Is6() {
		p, _ := a.Prefix(64)
		return p.String()
	}
	return a.String()
}

func (s *Server) refresh(c *fiber.Ctx) error {
	var in refreshRequest
	if err := decode(c, &in); err != nil {
		return err
	}
	if in.RefreshToken == "" {
		return kassa.InvalidField("refreshToken", "is required")
	}
	t, err := s.svc.Auth.Refresh(c.UserContext(), in.RefreshToken)
	if err != nil {
		return err
	}
	return one(c, fiber.StatusOK, tokensResult(t))
}

func (s *Server) logout(c *fiber.Ctx) error {
	if err := s.svc.Auth.Logout(c.UserContext()); err != nil {
		return err
	}
	return c.SendStatus(fiber.StatusNoContent)
}

func (s *Server) me(c *fiber.Ctx) error {
	u, err := s.svc.Auth.Me(c.UserContext())
	if err != nil {
		return err
	}
	return one(c, fiber.StatusOK, u)
}
