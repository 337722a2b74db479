package httpapi

import (
	"context"
	"strings"
	"time"

	"github.com/gofiber/fiber/v2"

	"kassa.dev/shared/kassa"
)

// Cash drawers (docs/drawers.md). A cashier (payments:write) opens a
// drawer with a counted float, records a no-sale and closes it with a
// blind count: the close answers with the Z report, expected against
// counted. The figures while a drawer is open (X report, entries) and the
// Z reports are for managers and head office (reports:read). Paid-in and
// paid-out need a manager or an owner.

func (s *Server) routesDrawers() {
	svc := s.svc.Drawers
	filters := append([]Param{
		{"location_id", "string", "only this location's"},
		{"register_id", "string", "only this register's"},
		{"business_day", "string", "only this business day's (YYYY-MM-DD)"},
	}, pageParams...)
	s.handle(&Route{Method: "POST", Path: "/drawers", Tag: "drawers", Scope: kassa.ScopePaymentsWrite, Status: 201,
		Body: kassa.DrawerOpenRequest{}, Resp: kassa.DrawerSession{},
		Summary: "Open a drawer at a register with a counted float (by denomination in the location's currency, or by amount); 409 when one is open there",
		Handler: createWith("/drawers", func(d *kassa.DrawerSession) string { return d.ID }, svc.OpenDrawer)})
	s.handle(&Route{Method: "GET", Path: "/drawers", Tag: "drawers", Scope: kassa.ScopePaymentsRead, List: true, Resp: kassa.DrawerSession{},
		Query:   append([]Param{{"status", "DrawerStatus", "only drawers in this state"}}, filters...),
		Summary: "List drawer sessions (no figures: those are the X and Z reports')", Handler: s.listDrawers})
	s.handle(&Route{Method: "GET", Path: "/drawers/:id", Tag: "drawers", Scope: kassa.ScopePaymentsRead, Resp: kassa.DrawerSession{},
		Summary: "Retrieve a drawer session", Handler: getBy("drawer session", svc.FindDrawerByID)})
	s.handle(&Route{Method: "GET", Path: "/drawers/:id/entries", Tag: "drawers", Scope: kassa.ScopeReportsRead, Resp: []kassa.DrawerEntry{},
		Summary: "List a drawer's entries, oldest first (float, sales, refunds, paid-in/out, no-sales)", Handler: s.drawerEntries})
	s.handle(&Route{Method: "GET", Path: "/drawers/:id/x-report", Tag: "drawers", Scope: kassa.ScopeReportsRead, Resp: kassa.XReport{},
		Summary: "The X report: a drawer's figures so far; closes nothing", Handler: getBy("drawer session", svc.XReport)})
	s.handle(&Route{Method: "POST", Path: "/drawers/:id/paid-in", Tag: "drawers", Scope: kassa.ScopePaymentsWrite, Status: 201,
		Body: kassa.DrawerCashRequest{}, Resp: kassa.DrawerEntry{},
		Summary: "Pay cash into an open drawer, with a reason (managers and owners)", Handler: recordWith[kassa.DrawerCashRequest, kassa.DrawerEntry](nil, svc.PayIn)})
	s.handle(&Route{Method: "POST", Path: "/drawers/:id/paid-out", Tag: "drawers", Scope: kassa.ScopePaymentsWrite, Status: 201,
		Body: kassa.DrawerCashRequest{}, Resp: kassa.DrawerEntry{},
		Summary: "Pay cash out of an open drawer, with a reason (managers and owners); 409 beyond the cash it holds", Handler: recordWith[kassa.DrawerCashRequest, kassa.DrawerEntry](nil, svc.PayOut)})
	s.handle(&Route{Method: "POST", Path: "/drawers/:id/no-sale", Tag: "drawers", Scope: kassa.ScopePaymentsWrite, Status: 201,
		Body: kassa.DrawerNoSaleRequest{}, Resp: kassa.DrawerEntry{},
		Summary: "Record that the drawer was opened without a sale", Handler: recordWith[kassa.DrawerNoSaleRequest, kassa.DrawerEntry](nil, svc.NoSale)})
	s.handle(&Route{Method: "POST", Path: "/drawers/:id/close", Tag: "drawers", Scope: kassa.ScopePaymentsWrite, Status: 201,
		Body: kassa.DrawerCloseRequest{}, Resp: kassa.ZReport{},
		Summary: "Close a drawer with a blind count; answers with its Z report (expected, counted, over/short); 409 when it is closed",
		Handler: recordWith(func(z *kassa.ZReport) string { return "/z-reports/" + z.ID }, svc.CloseDrawer)})
	s.handle(&Route{Method: "GET", Path: "/z-reports", Tag: "drawers", Scope: kassa.ScopeReportsRead, List: true, Resp: kassa.ZReport{},
		Query: filters, Summary: "List Z reports (numbered per register without gaps)", Handler: s.listZReports})
	s.handle(&Route{Method: "GET", Path: "/z-reports/:id", Tag: "drawers", Scope: kassa.ScopeReportsRead, Resp: kassa.ZReport{},
		Summary: "Retrieve a Z report", Handler: getBy("Z report", svc.FindZReportByID)})
}

// drawerFilter reads the list filters of drawers and Z reports.
func drawerFilter(c *fiber.Ctx) (kassa.DrawerFilter, error) {
	p, err := page(c)
	if err != nil {
		return kassa.DrawerFilter{}, err
	}
	f := kassa.DrawerFilter{Page: p, Status: strings.Clone(c.Query("status")), BusinessDay: strings.Clone(c.Query("business_day"))}
	if f.Status != "" && f.Status != kassa.DrawerOpen && f.Status != kassa.DrawerClosed {
		return f, kassa.Errorf(kassa.EBadRequest, "status must be open or closed")
	}
	if _, err := time.Parse(time.DateOnly, f.BusinessDay); f.BusinessDay != "" && err != nil {
		return f, kassa.Errorf(kassa.EBadRequest, "business_day must be a date (YYYY-MM-DD)")
	}
	if f.LocationID, err = queryID(c, "location_id"); err != nil {
		return f, err
	}
	f.RegisterID, err = queryID(c, "register_id")
	return f, err
}

func (s *Server) listDrawers(c *fiber.Ctx) error {
	f, err := drawerFilter(c)
	if err != nil {
		return err
	}
	l, err := s.svc.Drawers.FindDrawers(c.UserContext(), f)
	return list(c, l, err)
}

func (s *Server) listZReports(c *fiber.Ctx) error {
	f, err := drawerFilter(c)
	if err != nil {
		return err
	}
	l, err := s.svc.Drawers.FindZReports(c.UserContext(), f)
	return list(c, l, err)
}

func (s *Server) drawerEntries(c *fiber.Ctx) error {
	id, err := pathID(c, "drawer session")
	if err != nil {
		return err
	}
	es, err := s.svc.Drawers.DrawerEntries(c.UserContext(), id)
	if err != nil {
		return err
	}
	return one(c, fiber.StatusOK, es)
}

// recordWith returns the handler of POST /drawers/:id/<action>: the
// action's record comes back with 201 (a paid-in, paid-out or no-sale
// entry; the Z report of a close, at Location /z-reports/{id}).
func recordWith[In, T any](location func(*T) string, act func(context.Context, string, *In) (*T, error)) fiber.Handler {
	return func(c *fiber.Ctx) error {
		id, err := pathID(c, "drawer session")
		if err != nil {
			return err
		}
		var in In
		if err := decode(c, &in); err != nil {
			return err
		}
		v, err := act(c.UserContext(), id, &in)
		if err != nil {
			return err
		}
		if location == nil {
			return one(c, fiber.StatusCreated, v)
		}
		return created(c, location(v), v)
	}
}
