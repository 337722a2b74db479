package httpapi

import (
	"github.com/gofiber/fiber/v2"

	"kassa.dev/shared/kassa"
)

func (s *Server) routesLocations() {
	svc := s.svc.Locations
	s.handle(&Route{Method: "GET", Path: "/locations", Tag: "locations", List: true, Resp: kassa.Location{}, Query: pageParams,
		Summary: "List the org's locations", Handler: s.listLocations})
	s.handle(&Route{Method: "POST", Path: "/locations", Tag: "locations", Scope: kassa.ScopeLocationsWrite, Status: 201,
		Body: kassa.LocationCreate{}, Resp: kassa.Location{}, Summary: "Create a location (owners only)",
		Handler: createWith("/locations", func(l *kassa.Location) string { return l.ID }, svc.CreateLocation)})
	s.handle(&Route{Method: "GET", Path: "/locations/:id", Tag: "locations", Resp: kassa.Location{},
		Summary: "Retrieve a location", Handler: getBy("location", svc.FindLocationByID)})
	s.handle(&Route{Method: "PATCH", Path: "/locations/:id", Tag: "locations", Scope: kassa.ScopeLocationsWrite, Body: kassa.LocationUpdate{},
		Resp: kassa.Location{}, Summary: "Change a location's name, time zone or business day cutoff hour (owners only; docs/drawers.md)",
		Handler: updateWith("location", svc.UpdateLocation)})
}

func (s *Server) listLocations(c *fiber.Ctx) error {
	p, err := page(c)
	if err != nil {
		return err
	}
	l, err := s.svc.Locations.FindLocations(c.UserContext(), p)
	return list(c, l, err)
}
