// Package hubonly is the part of a node that only the hub binary links
// (node.Part): the webhook sender (webhook.go), the automation engine
// (automation.go), the OAuth server's sweep, and their routes with the
// consent page and the ops feed (package hubapi). The hub's main puts a
// Hub in node.Config.Parts; the edge's never imports this package, so the
// edge binary carries none of it (edge/layout_test.go holds that). The
// store's side of these nouns stays in package sqlite (README, "Where
// things are", says why).
package hubonly

import (
	"context"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"kassa.dev/shared/httpapi"
	"kassa.dev/shared/hubapi"
	"kassa.dev/shared/kassa"
	"kassa.dev/shared/node"
	"kassa.dev/shared/sqlite"
)

// Hub is the hub's own part of a node; its exported fields are its
// settings, set before node.Open.
type Hub struct {
	// Webhooks configures the webhook sender.
	Webhooks WebhookConfig
	// AutomationRetention is how long automation executions are kept
	// (0: DefaultAutomationRetention).
	AutomationRetention time.Duration

	n           *node.Node
	oauth       *sqlite.OAuthService
	webhooks    *webhookSender
	automations *automationEngine
	pool        *pgxpool.Pool // the hubs' shared PostgreSQL (nil on SQLite)
}

var _ node.Part = (*Hub)(nil)

// New returns the hub's part with its default settings.
func New() *Hub { return &Hub{} }

// Of returns the Hub among cfg's parts (nil: none, as at an edge).
func Of(cfg *node.Config) *Hub {
	for _, p := range cfg.Parts {
		if h, ok := p.(*Hub); ok {
			return h
		}
	}
	return nil
}

// Open builds the webhook and automation services on the store.
func (h *Hub) Open(ctx context.Context, n *node.Node, db *sqlite.DB) (*httpapi.Group, error) {
	h.n, h.oauth = n, sqlite.NewOAuthService(db)
	pool, err := sharePostgres(ctx, n)
	if err != nil {
		return nil, err
	}
	h.pool = pool
	now, log := n.Config.Now, n.Log()
	store := sqlite.NewWebhookStore(db)
	h.webhooks = newWebhookSender(store, h.Webhooks, now, log)
	if pool != nil {
		h.webhooks.claims = pgClaims{pool: pool, batch: pgWebhookClaim, lease: time.Duration(pgWebhookClaim+1) * h.webhooks.cfg.Timeout}
	}
	n.Services.Webhooks = &webhookService{WebhookStore: store, sender: h.webhooks}
	autos := sqlite.NewAutomationStore(db)
	h.automations = newAutomationEngine(autos, &n.Services, now, log)
	if pool != nil {
		h.automations.turn = pgTurn{pool}
	}
	n.Services.Automations = &automationService{AutomationStore: autos, engine: h.automations}
	h.automations.SetCampaignStatus = func(ctx context.Context, id, status string) error {
		_, err := n.Services.Campaigns.UpdateCampaign(ctx, id, &kassa.CampaignUpdate{Status: kassa.Some(status)})
		return err
	}
	g := hubapi.Group()
	return &g, nil
}

// Start registers the sender's metrics and starts the hub's jobs.
func (h *Hub) Start(n *node.Node) {
	n.HTTP.Registry().MustRegister(h.webhooks.collectors()...)
	n.Jobs.Start(n.SweepJob("oauth-sweep", oauthSweepEvery, "spent OAuth codes and tokens", h.oauth.Sweep))
	n.Jobs.Start(h.webhooks.job(n.Bus))
	n.Jobs.Start(h.automations.job(n.Bus))
	n.Jobs.Start(n.SweepJob("automation-retention", automationRetentionEvery, "old automation executions", h.ExpireAutomationExecutions))
	n.HTTP.Registry().MustRegister(h.logLagCollector())
	if h.pool != nil {
		n.Jobs.Start(n.SweepJob("login-lockout-sweep", lockoutSweepEvery, "forgotten login lockouts", h.sweepLockouts))
	}
}

// oauthSweepEvery is how often the hub deletes the authorization server's
// codes, tokens and families that can no longer be used (see
// sqlite.OAuthService.Sweep), so that tables written on every token grant
// stay bounded.
const oauthSweepEvery = time.Hour

// WakeAutomations makes the automation job look at the log and the
// schedules now (tests move the node's clock, then call it).
func (h *Hub) WakeAutomations() { h.automations.wake() }

// ExpireAutomationExecutions deletes the executions that started longer
// than the retention ago by the node's clock, and returns how many (the
// retention job's step, run at start and then hourly so the history the
// engine writes for every event and rule stays bounded; tests call it
// after moving the clock).
func (h *Hub) ExpireAutomationExecutions(ctx context.Context) (int64, error) {
	return h.automations.store.DeleteExecutionsBefore(ctx, h.n.RetainedSince(h.AutomationRetention, DefaultAutomationRetention))
}

// AutomationLags returns, for the org's executions set off by a logged
// event, the time from the event to its recorded execution (the
// automation benchmark's measure).
func (h *Hub) AutomationLags(ctx context.Context, orgID string) ([]time.Duration, error) {
	return h.automations.store.ExecutionLags(ctx, orgID)
}

// RewindAutomations leaves the store as a crash of the automation engine
// after its actions for the event eventID and before their record does:
// the engine reads that event (and those after it) again, and runs their
// rules' actions again (tests).
func (h *Hub) RewindAutomations(ctx context.Context, eventID string) error {
	return h.automations.store.Rewind(ctx, automationReader, eventID)
}

// AutomationBacklog is how many events of the log the automation engine
// has yet to read: a cheap wait for benchmarks before AutomationLags.
func (h *Hub) AutomationBacklog(ctx context.Context) (int64, error) {
	return h.automations.store.Backlog(ctx, automationReader)
}
