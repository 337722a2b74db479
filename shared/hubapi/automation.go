package hubapi

// Automation rules (spec 4.4, issue 14), hub only: rules run at the hub,
// on its event log (an edge's events reach it once) and its clock.
// Reading needs automations:read, changing and firing automations:write.
// POST /automations/trigger fires an event by hand, for testing: the
// matching rules' actions really run, and the executions are recorded
// and answered; the event itself is not logged (no webhook gets it).

import (
	"github.com/gofiber/fiber/v2"

	"kassa.dev/shared/httpapi"
	"kassa.dev/shared/kassa"
)

func (s *api) routesAutomations() {
	svc := s.svc.Automations
	const tag, read, write = "automations", kassa.ScopeAutomationsRead, kassa.ScopeAutomationsWrite
	s.Handle(&httpapi.Route{Method: "GET", Path: "/automations", Tag: tag, Scope: read, List: true, Resp: kassa.AutomationRule{}, Query: httpapi.PageParams,
		Summary: "List the org's automation rules", Handler: s.listAutomations})
	s.Handle(&httpapi.Route{Method: "POST", Path: "/automations", Tag: tag, Scope: write, Status: 201,
		Body: kassa.AutomationCreate{}, Resp: kassa.AutomationRule{},
		Summary: "Create a rule: a trigger (event, schedule or manual), conditions on the event's data, actions of the closed set",
		Handler: httpapi.CreateWith("/automations", func(r *kassa.AutomationRule) string { return r.ID }, svc.CreateAutomation)})
	// Registered before /automations/:id so that "trigger" is not an id.
	s.Handle(&httpapi.Route{Method: "POST", Path: "/automations/trigger", Tag: tag, Scope: write, Body: kassa.AutomationTrigger{},
		Resp: kassa.AutomationExecution{}, List: true,
		Summary: "Fire an event by hand (not logged): run the matching rules and answer their executions", Handler: s.triggerAutomations})
	s.Handle(&httpapi.Route{Method: "GET", Path: "/automations/:id", Tag: tag, Scope: read, Resp: kassa.AutomationRule{},
		Summary: "Retrieve a rule", Handler: httpapi.GetBy("automation", svc.FindAutomationByID)})
	s.Handle(&httpapi.Route{Method: "PATCH", Path: "/automations/:id", Tag: tag, Scope: write, Body: kassa.AutomationUpdate{}, Resp: kassa.AutomationRule{},
		Summary: "Change a rule (is_active false pauses it)", Handler: httpapi.UpdateWith("automation", svc.UpdateAutomation)})
	s.Handle(&httpapi.Route{Method: "DELETE", Path: "/automations/:id", Tag: tag, Scope: write, Status: fiber.StatusNoContent,
		Summary: "Remove a rule with its execution history", Handler: httpapi.DeleteWith("automation", svc.DeleteAutomation)})
	s.Handle(&httpapi.Route{Method: "GET", Path: "/automations/:id/executions", Tag: tag, Scope: read, List: true, Resp: kassa.AutomationExecution{},
		Query: httpapi.PageParams, Summary: "The rule's executions, newest first, paged (limit, cursor); kept for the hub's --automation-retention (30 days)",
		Handler: s.automationExecutions})
}

func (s *api) listAutomations(c *fiber.Ctx) error {
	p, err := httpapi.Page(c)
	if err != nil {
		return err
	}
	l, err := s.svc.Automations.FindAutomations(c.UserContext(), p)
	return httpapi.List(c, l, err)
}

func (s *api) triggerAutomations(c *fiber.Ctx) error {
	var in kassa.AutomationTrigger
	if err := httpapi.Decode(c, &in); err != nil {
		return err
	}
	l, err := s.svc.Automations.TriggerAutomations(c.UserContext(), &in)
	return httpapi.List(c, kassa.List[kassa.AutomationExecution]{Items: l}, err)
}

func (s *api) automationExecutions(c *fiber.Ctx) error {
	id, err := httpapi.PathID(c, "automation")
	if err != nil {
		return err
	}
	p, err := httpapi.Page(c)
	if err != nil {
		return err
	}
	l, err := s.svc.Automations.AutomationExecutions(c.UserContext(), id, p)
	return httpapi.List(c, l, err)
}
