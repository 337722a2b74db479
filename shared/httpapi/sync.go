package httpapi

import (
	"github.com/gofiber/fiber/v2"

	"kassa.dev/shared/kassa"
)

func (s *Server) routesSync() {
	s.handle(&Route{Method: "GET", Path: "/sync/status", Tag: "sync", Scope: kassa.ScopeReportsRead, Resp: kassa.SyncStatus{},
		Summary: "Replication state: on an edge its link to the hub (connected, since, changes waiting each way, last verified); " +
			"on the hub every enrolled edge of the org",
		Handler: func(c *fiber.Ctx) error {
			st, err := s.svc.Sync.Status(c.UserContext())
			if err != nil {
				return err
			}
			return one(c, fiber.StatusOK, st)
		}})
	s.handle(&Route{Method: "GET", Path: "/sync/conflicts", Tag: "sync", Scope: kassa.ScopeReportsRead, List: true, Resp: kassa.Conflict{},
		Query: pageParams, Summary: "Merge conflicts sync recorded (oversold, overdrawn, overpaid, overrefunded, cancel_lost, clock_clamped, duplicate_key, quarantined) with both sides' values",
		Handler: func(c *fiber.Ctx) error {
			p, err := page(c)
			if err != nil {
				return err
			}
			l, err := s.svc.Sync.Conflicts(c.UserContext(), p)
			return list(c, l, err)
		}})
}

func (s *Server) routesEnrolment() {
	svc := s.svc.Enrolment
	s.handle(&Route{Method: "POST", Path: "/locations/:id/enrolment", Tag: "sync", Scope: kassa.ScopeLocationsWrite, Status: 201,
		Resp: kassa.Enrolment{}, Summary: "Issue a single-use enrolment token (valid 24 h) for an edge at this location (owners only)",
		Handler: func(c *fiber.Ctx) error {
			id, err := pathID(c, "location")
			if err != nil {
				return err
			}
			e, err := svc.CreateEnrolment(c.UserContext(), id)
			if err != nil {
				return err
			}
			return one(c, fiber.StatusCreated, e)
		}})
	s.handle(&Route{Method: "DELETE", Path: "/sync/nodes/:id", Tag: "sync", Scope: kassa.ScopeLocationsWrite, Status: 204,
		Summary: "Revoke an enrolled edge (owners): its link is cut at once and its credentials never work again",
		Handler: func(c *fiber.Ctx) error {
			id, err := pathID(c, "edge")
			if err != nil {
				return err
			}
			if err := svc.RevokeNode(c.UserContext(), id); err != nil {
				return err
			}
			return c.SendStatus(fiber.StatusNoContent)
		}})
	s.handle(&Route{Method: "POST", Path: "/sync/enrol", Tag: "sync", Public: true, Body: kassa.EnrolmentClaim{}, Resp: kassa.EnrolResult{},
		Summary: "An edge claims an enrolment token and receives its scope and leaf-link credentials (shown once)",
		Handler: func(c *fiber.Ctx) error {
			var in kassa.EnrolmentClaim
			if err := decode(c, &in); err != nil {
				return err
			}
			r, err := svc.Claim(c.UserContext(), &in)
			if err != nil {
				return err
			}
			return one(c, fiber.StatusOK, r)
		}})
}
