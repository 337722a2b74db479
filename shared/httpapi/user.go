package httpapi

import (
	"github.com/gofiber/fiber/v2"

	"kassa.dev/shared/kassa"
)

// Staff accounts (docs/staff.md). An owner manages everyone but their own
// role and status; a manager manages cashiers of the manager's locations;
// at an enrolled store a manager of the store manages its cashiers alone,
// and other changes are 409 (made at the hub).
func (s *Server) routesUsers() {
	svc := s.svc.Users
	const rules = "; an owner manages every account (not their own role or status), a manager only cashiers of locations the manager works at " +
		"(403 otherwise); at an enrolled store a manager of the store manages cashiers of that store alone, other staff changes are 409 (made at the hub)"
	s.handle(&Route{Method: "GET", Path: "/users", Tag: "auth", List: true, Resp: kassa.User{},
		Query: append([]Param{
			{"role", "string", "only this role: owner, manager, cashier, kitchen or ops"},
			{"location_id", "string", "only staff who work at this location (staff of every location included)"},
			{"status", "string", "active or inactive"},
		}, pageParams...),
		Summary: "List the org's staff (owners and managers)", Handler: s.listUsers})
	s.handle(&Route{Method: "POST", Path: "/users", Tag: "auth", Body: kassa.UserCreate{}, Resp: kassa.User{}, Status: 201, Errors: []int{fiber.StatusConflict},
		Summary: "Add a staff account; an e-mail already in use, in this org or another, is 422 on email, the same answer either way" + rules,
		Handler: createWith("/users", func(u *kassa.User) string { return u.ID }, svc.CreateUser)})
	s.handle(&Route{Method: "GET", Path: "/users/:id", Tag: "auth", Resp: kassa.User{},
		Summary: "Retrieve a staff account (owners and managers, or the user themselves)", Handler: getBy("user", svc.FindUserByID)})
	s.handle(&Route{Method: "PATCH", Path: "/users/:id", Tag: "auth", Body: kassa.UserUpdate{}, Resp: kassa.User{}, Errors: []int{fiber.StatusConflict},
		Summary: "Change a staff account's name, role or locations (the e-mail is the sign-in name and stays)" + rules,
		Handler: updateWith("user", svc.UpdateUser)})
	s.handle(&Route{Method: "POST", Path: "/users/:id/deactivate", Tag: "auth", Resp: kassa.User{}, Errors: []int{fiber.StatusConflict},
		Summary: "Deactivate a staff account: it cannot sign in, its sessions end here now and at the other node when the change arrives" + rules,
		Handler: actionBy("user", svc.DeactivateUser)})
	s.handle(&Route{Method: "POST", Path: "/users/:id/reactivate", Tag: "auth", Resp: kassa.User{}, Errors: []int{fiber.StatusConflict},
		Summary: "Reactivate a staff account: it signs in again (earlier sessions stay ended)" + rules,
		Handler: actionBy("user", svc.ReactivateUser)})
	s.handle(&Route{Method: "POST", Path: "/users/:id/password", Tag: "auth", Body: kassa.PasswordReset{}, Resp: kassa.User{}, Errors: []int{fiber.StatusConflict},
		Summary: "Reset a staff account's password; its sessions at this node end" + rules,
		Handler: updateWith("user", svc.ResetPassword)})
	s.handle(&Route{Method: "PUT", Path: "/users/:id/pin", Tag: "auth", Body: kassa.PINSet{}, Resp: kassa.User{}, Errors: []int{fiber.StatusConflict},
		Summary: "Set the PIN for quick sign-in at a till (POST /auth/pin), stored as a hash; everyone sets their own, and a new PIN ends a PIN lockout" + rules,
		Handler: updateWith("user", svc.SetPIN)})
	s.handle(&Route{Method: "DELETE", Path: "/users/:id/pin", Tag: "auth", Resp: kassa.User{}, Errors: []int{fiber.StatusConflict},
		Summary: "Remove the PIN: the account signs in with its password only" + rules,
		Handler: actionBy("user", svc.ClearPIN)})
}

func (s *Server) listUsers(c *fiber.Ctx) error {
	p, err := page(c)
	if err != nil {
		return err
	}
	f := kassa.UserFilter{Page: p, Role: kassa.Role(c.Query("role")), LocationID: c.Query("location_id"), Status: c.Query("status")}
	switch {
	case f.Role != "" && !f.Role.Valid():
		return kassa.Errorf(kassa.EBadRequest, "role must be one of owner, manager, cashier, kitchen, ops")
	case f.LocationID != "" && !kassa.ValidID(f.LocationID):
		return kassa.Errorf(kassa.EBadRequest, "location_id must be a location id")
	case f.Status != "" && f.Status != "active" && f.Status != "inactive":
		return kassa.Errorf(kassa.EBadRequest, "status must be active or inactive")
	}
	l, err := s.svc.Users.FindUsers(c.UserContext(), f)
	return list(c, l, err)
}
