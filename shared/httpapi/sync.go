package httpapi

import (
	"slices"
	"strings"

	"github.com/gofiber/fiber/v2"

	"kassa.dev/shared/kassa"
)

func (s *Server) routesSync() {
	status := &Route{Method: "GET", Path: "/sync/status", Tag: "sync", Scope: kassa.ScopeReportsRead, Resp: kassa.SyncStatus{},
		Summary: "Replication state: on an edge its link to the hub (connected, since, changes waiting each way, last verified and its result, " +
			"the store's changes the hub refused as sentences, and in_sync: true only when nothing waits, the digests agreed and nothing is refused); " +
			"on the hub every enrolled edge of the org"}
	if s.cfg.Node == kassa.NodeEdge {
		// A till shows whether its edge reaches the hub: at an edge the
		// status is that one link, so a cashier (orders:write) reads it too.
		status.Scope, status.AnyScope = "", []kassa.Scope{kassa.ScopeReportsRead, kassa.ScopeOrdersWrite}
		status.Summary += "; at an edge reports:read or orders:write (a till)"
	}
	status.Handler = func(c *fiber.Ctx) error {
		st, err := s.svc.Sync.Status(c.UserContext())
		if err != nil {
			return err
		}
		return one(c, fiber.StatusOK, st)
	}
	s.handle(status)
	s.handle(&Route{Method: "GET", Path: "/sync/conflicts", Tag: "sync", Scope: kassa.ScopeReportsRead, List: true, Resp: kassa.Conflict{},
		Query:   append([]Param{{"status", "ConflictStatus", "only open or only resolved conflicts"}}, pageParams...),
		Summary: "Merge conflicts sync recorded (oversold, overdrawn, overpaid, overrefunded, cancel_lost, clock_clamped, duplicate_key, voucher_overused, gift_card_overdrawn, quarantined) with both sides' values",
		Handler: func(c *fiber.Ctx) error {
			p, err := page(c)
			if err != nil {
				return err
			}
			f := kassa.ConflictFilter{Page: p, Status: strings.Clone(c.Query("status"))}
			if f.Status != "" && !slices.Contains(kassa.Enums["ConflictStatus"], f.Status) {
				return kassa.Errorf(kassa.EBadRequest, "status must be open or resolved")
			}
			l, err := s.svc.Sync.Conflicts(c.UserContext(), f)
			return list(c, l, err)
		}})
}

// routesConflicts are the hub's actions on sync conflicts (ops and owners).
func (s *Server) routesConflicts() {
	svc := s.svc.Conflicts
	s.handle(&Route{Method: "POST", Path: "/sync/conflicts/:id/resolve", Tag: "sync", Scope: kassa.ScopeSyncWrite,
		Body: kassa.ConflictResolve{}, Resp: kassa.Conflict{}, Errors: []int{409},
		Summary: "Resolve an open sync conflict with a note saying what was done (409 when already resolved). For a quarantined record, " +
			"take \"edge\" applies the store's records of that row and order as they were (no admission; 422 when one names another org or store), " +
			"take \"hub\" writes the hub's rows anew to its log so the store's merge takes them (409 when the hub has no such row); " +
			"the store then no longer lists the record as refused",
		Handler: func(c *fiber.Ctx) error {
			id, err := pathID(c, "conflict")
			if err != nil {
				return err
			}
			var in kassa.ConflictResolve
			if err := decode(c, &in); err != nil {
				return err
			}
			r, err := svc.Resolve(c.UserContext(), id, &in)
			if err != nil {
				return err
			}
			return one(c, fiber.StatusOK, r)
		}})
	s.handle(&Route{Method: "POST", Path: "/sync/conflicts/:id/reapply", Tag: "sync", Scope: kassa.ScopeSyncWrite,
		Resp: kassa.Conflict{}, Errors: []int{409},
		Summary: "Apply a quarantined record again through the admission checks of this release, as its edge's push: resolved as reapplied " +
			"and replicated when it passes, 422 naming the reason (still open) when it does not, 409 for another kind. The edge's other open " +
			"quarantined records of the same order (or row) are retried with it, in the order the edge made them",
		Handler: func(c *fiber.Ctx) error {
			id, err := pathID(c, "conflict")
			if err != nil {
				return err
			}
			r, err := svc.Reapply(c.UserContext(), id)
			if err != nil {
				return err
			}
			return one(c, fiber.StatusOK, r)
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
