package httpapi

// Automation rules (spec 4.4, issue 14), hub only: rules run at the hub,
// on its event log (an edge's events reach it once) and its clock.
// Reading needs automations:read, changing and firing automations:write.
// POST /automations/trigger fires an event by hand, for testing: the
// matching rules' actions really run, and the executions are recorded
// and answered; the event itself is not logged (no webhook gets it).

import (
	"github.com/gofiber/fiber/v2"

	"kassa.dev/shared/kassa"
)

func (s *Server) routesAutomations() {
	svc := s.svc.Automations
	const tag, read, write = "automations", kassa.ScopeAutomationsRead, kassa.ScopeAutomationsWrite
	s.handle(&Route{Method: "GET", Path: "/automations", Tag: tag, Scope: read, List: true, Resp: kassa.AutomationRule{}, Query: pageParams,
		Summary: "List the org's automation rules", Handler: s.listAutomations})
	s.handle(&Route{Method: "POST", Path: "/automations", Tag: tag, Scope: write, Status: 201,
		Body: kassa.AutomationCreate{}, Resp: kassa.AutomationRule{},
		Summary: "Create a rule: a trigger (event, schedule or manual), conditions on the event's data, actions of the closed set",
		Handler: createWith("/automations", func(r *kassa.AutomationRule) string { return r.ID }, svc.CreateAutomation)})
	// Registered before /automations/:id so that "trigger" is not an id.
	s.handle(&Route{Method: "POST", Path: "/automations/trigger", Tag: tag, Scope: write, Body: kassa.AutomationTrigger{},
		Resp: kassa.AutomationExecution{}, List: true,
		Summary: "Fire an event by hand (not logged): run the matching rules and answer their executions", Handler: s.triggerAutomations})
	s.handle(&Route{Method: "GET", Path: "/automations/:id", Tag: tag, Scope: read, Resp: kassa.AutomationRule{},
		Summary: "Retrieve a rule", Handler: getBy("automation", svc.FindAutomationByID)})
	s.handle(&Route{Method: "PATCH", Path: "/automations/:id", Tag: tag, Scope: write, Body: kassa.AutomationUpdate{}, Resp: kassa.AutomationRule{},
		Summary: "Change a rule (is_active false pauses it)", Handler: updateWith("automation", svc.UpdateAutomation)})
	s.handle(&Route{Method: "DELETE", Path: "/automations/:id", Tag: tag, Scope: write, Status: fiber.StatusNoContent,
		Summary: "Remove a rule with its execution history", Handler: deleteWith("automation", svc.DeleteAutomation)})
	s.handle(&Route{Method: "GET", Path: "/automations/:id/executions", Tag: tag, Scope: read, List: true, Resp: kassa.AutomationExecution{},
		Query: pageParams, Summary: "The rule's executions, newest first, paged (limit, cursor); kept for the hub's --automation-retention (30 days)",
		Handler: s.automationExecutions})
}

func (s *Server) listAutomations(c *fiber.Ctx) error {
	p, err := page(c)
	if err != nil {
		return err
	}
	l, err := s.svc.Automations.FindAutomations(c.UserContext(), p)
	return list(c, l, err)
}

func (s *Server) triggerAutomations(c *fiber.Ctx) error {
	var in kassa.AutomationTrigger
	if err := decode(c, &in); err != nil {
		return err
	}
	l, err := s.svc.Automations.TriggerAutomations(c.UserContext(), &in)
	return list(c, kassa.List[kassa.AutomationExecution]{Items: l}, err)
}

func (s *Server) automationExecutions(c *fiber.Ctx) error {
	id, err := pathID(c, "automation")
	if err != nil {
		return err
	}
	p, err := page(c)
	if err != nil {
		return err
	}
	l, err := s.svc.Automations.AutomationExecutions(c.UserContext(), id, p)
	return list(c, l, err)
}
