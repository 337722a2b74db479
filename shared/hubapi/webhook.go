package hubapi

// Webhook endpoints (spec 4.4 and part 6), hub only, scope webhooks:write.
// The secret is in the answers of registration and rotation only, which
// are therefore never stored for an Idempotency-Key replay (SecretOnce): a
// retry with the key of a registration that succeeded creates no second
// endpoint and is 409 naming the first (docs/webhooks.md).
// The test route sends synchronously and answers the spec's camelCase
// result; a retry only queues the failed delivery again (202), the sender
// sends it.

import (
	"github.com/gofiber/fiber/v2"

	"kassa.dev/shared/httpapi"
	"kassa.dev/shared/kassa"
)

func (s *api) routesWebhooks() {
	svc := s.svc.Webhooks
	const tag, scope = "webhooks", kassa.ScopeWebhooksWrite
	s.Handle(&httpapi.Route{Method: "GET", Path: "/webhooks", Tag: tag, Scope: scope, List: true, Resp: kassa.WebhookEndpoint{}, Query: httpapi.PageParams,
		Summary: "List the org's webhook endpoints", Handler: s.listWebhooks})
	s.Handle(&httpapi.Route{Method: "POST", Path: "/webhooks", Tag: tag, Scope: scope, Status: 201, SecretOnce: true,
		Body: kassa.WebhookCreate{}, Resp: kassa.WebhookEndpointSecret{},
		Summary: "Register an endpoint; its signing secret is in this answer only",
		Handler: httpapi.CreateWith("/webhooks", func(w *kassa.WebhookEndpointSecret) string { return w.ID }, svc.CreateWebhook)})
	s.Handle(&httpapi.Route{Method: "GET", Path: "/webhooks/:id", Tag: tag, Scope: scope, Resp: kassa.WebhookEndpoint{},
		Summary: "Retrieve an endpoint", Handler: httpapi.GetBy("webhook endpoint", svc.FindWebhookByID)})
	s.Handle(&httpapi.Route{Method: "PATCH", Path: "/webhooks/:id", Tag: tag, Scope: scope, Body: kassa.WebhookUpdate{}, Resp: kassa.WebhookEndpoint{},
		Summary: "Change an endpoint's url, events, description or status (inactive pauses it)", Handler: httpapi.UpdateWith("webhook endpoint", svc.UpdateWebhook)})
	s.Handle(&httpapi.Route{Method: "DELETE", Path: "/webhooks/:id", Tag: tag, Scope: scope, Status: fiber.StatusNoContent,
		Summary: "Remove an endpoint with its pending deliveries and log", Handler: httpapi.DeleteWith("webhook endpoint", svc.DeleteWebhook)})
	s.Handle(&httpapi.Route{Method: "POST", Path: "/webhooks/:id/test", Tag: tag, Scope: scope, Resp: kassa.WebhookTestResult{},
		Summary: "Send a signed test.ping at once and report the endpoint's answer", Handler: s.testWebhook})
	s.Handle(&httpapi.Route{Method: "GET", Path: "/webhooks/:id/deliveries", Tag: tag, Scope: scope, List: true, Resp: kassa.WebhookAttempt{},
		Summary: "The endpoint's last 50 delivery attempts, newest first", Handler: s.webhookDeliveries})
	s.Handle(&httpapi.Route{Method: "POST", Path: "/webhooks/:id/logs/:logId/retry", Tag: tag, Scope: scope, Status: fiber.StatusAccepted,
		Resp: kassa.WebhookAttempt{}, Errors: []int{fiber.StatusConflict},
		Summary: "Replay a failed delivery (logId: an attempt's id or the delivery id) with the same delivery id; 409 if it has not failed",
		Handler: s.retryWebhook})
	s.Handle(&httpapi.Route{Method: "POST", Path: "/webhooks/:id/rotate-secret", Tag: tag, Scope: scope, SecretOnce: true, Resp: kassa.WebhookEndpointSecret{},
		Summary: "Give an endpoint a new signing secret, used from the next attempt on; the old one is not used again", Handler: s.rotateWebhookSecret})
}

func (s *api) listWebhooks(c *fiber.Ctx) error {
	p, err := httpapi.Page(c)
	if err != nil {
		return err
	}
	l, err := s.svc.Webhooks.FindWebhooks(c.UserContext(), p)
	return httpapi.List(c, l, err)
}

func (s *api) testWebhook(c *fiber.Ctx) error {
	id, err := httpapi.PathID(c, "webhook endpoint")
	if err != nil {
		return err
	}
	r, err := s.svc.Webhooks.TestWebhook(c.UserContext(), id)
	if err != nil {
		return err
	}
	return httpapi.One(c, fiber.StatusOK, r)
}

func (s *api) webhookDeliveries(c *fiber.Ctx) error {
	id, err := httpapi.PathID(c, "webhook endpoint")
	if err != nil {
		return err
	}
	l, err := s.svc.Webhooks.WebhookDeliveries(c.UserContext(), id)
	return httpapi.List(c, kassa.List[kassa.WebhookAttempt]{Items: l}, err)
}

func (s *api) retryWebhook(c *fiber.Ctx) error {
	id, err := httpapi.PathID(c, "webhook endpoint")
	if err != nil {
		return err
	}
	logID, err := httpapi.ParamID(c, "logId", "delivery log")
	if err != nil {
		return err
	}
	a, err := s.svc.Webhooks.RetryWebhookDelivery(c.UserContext(), id, logID)
	if err != nil {
		return err
	}
	return httpapi.One(c, fiber.StatusAccepted, a)
}

func (s *api) rotateWebhookSecret(c *fiber.Ctx) error {
	id, err := httpapi.PathID(c, "webhook endpoint")
	if err != nil {
		return err
	}
	w, err := s.svc.Webhooks.RotateWebhookSecret(c.UserContext(), id)
	if err != nil {
		return err
	}
	return httpapi.One(c, fiber.StatusOK, w)
}
