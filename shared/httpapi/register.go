package httpapi

import (
	"github.com/gofiber/fiber/v2"

	"kassa.dev/shared/kassa"
)

// Registers (tills) of a location (docs/drawers.md): managers and owners
// create and change them, at the hub or at the location's edge; anyone
// with payments:read lists them (the till page picks its register).

func (s *Server) routesRegisters() {
	svc := s.svc.Registers
	s.handle(&Route{Method: "GET", Path: "/registers", Tag: "drawers", Scope: kassa.ScopePaymentsRead, List: true, Resp: kassa.Register{},
		Query:   append([]Param{{"location_id", "string", "only the registers of this location"}}, pageParams...),
		Summary: "List the org's registers (tills)", Handler: s.listRegisters})
	s.handle(&Route{Method: "POST", Path: "/registers", Tag: "drawers", Scope: kassa.ScopePaymentsWrite, Status: 201,
		Body: kassa.RegisterCreate{}, Resp: kassa.Register{}, Summary: "Create a register at a location (managers and owners; a cashier is 403)",
		Handler: createWith("/registers", func(r *kassa.Register) string { return r.ID }, svc.CreateRegister)})
	s.handle(&Route{Method: "GET", Path: "/registers/:id", Tag: "drawers", Scope: kassa.ScopePaymentsRead, Resp: kassa.Register{},
		Summary: "Retrieve a register", Handler: getBy("register", svc.FindRegisterByID)})
	s.handle(&Route{Method: "PATCH", Path: "/registers/:id", Tag: "drawers", Scope: kassa.ScopePaymentsWrite, Body: kassa.RegisterUpdate{},
		Resp: kassa.Register{}, Summary: "Rename a register or take it out of use (managers and owners); 409 while its drawer is open",
		Handler: updateWith("register", svc.UpdateRegister)})
}

func (s *Server) listRegisters(c *fiber.Ctx) error {
	p, err := page(c)
	if err != nil {
		return err
	}
	f := kassa.RegisterFilter{Page: p}
	if f.LocationID, err = queryID(c, "location_id"); err != nil {
		return err
	}
	l, err := s.svc.Registers.FindRegisters(c.UserContext(), f)
	return list(c, l, err)
}
