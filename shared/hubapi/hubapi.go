// Package hubapi holds the routes only the hub serves: the OAuth 2.0
// authorization server (oauth.go, its token endpoint's throttle in
// oauthlimit.go) and its consent page (consent.go), webhook endpoints
// (webhook.go), automation rules (automation.go), and the ops monitor's
// page and feed (opsfeed.go). The hub registers them on its
// httpapi.Server as a Group (package node/hubonly does); the edge binary
// never imports this package, so none of it ships there. A layout test
// (edge/layout_test.go) holds that.
package hubapi

import (
	"embed"
	"log/slog"

	"kassa.dev/shared/httpapi"
	"kassa.dev/shared/kassa"
)

// The package's Go files, its tests left out (embed has no exclusion:
// these patterns match every name that does not end in _test.go and has a
// file today; TestTheEmbeddedSourceIsEveryNonTestFile fails when a new
// file needs another pattern, e.g. *[^t]est.go for a request.go).
//
//go:embed *[^t].go *[^s]t.go
var source embed.FS

// Group is the hub's own routes, registered after the shared ones. Each
// exists when its service does, as in httpapi.New.
func Group() httpapi.Group {
	return httpapi.Group{Source: source, Routes: func(srv *httpapi.Server) {
		s := &api{Server: srv, svc: srv.Services(), cfg: srv.Config(), log: srv.Log()}
		s.routes()
	}}
}

// api is the hub's routes over the shared server.
type api struct {
	*httpapi.Server
	svc     *httpapi.Services
	cfg     httpapi.Config
	log     *slog.Logger
	token   *tokenLimits
	consent *consent
	ops     *opsFeeds
}

func (s *api) routes() {
	svc := s.svc
	if s.cfg.ReportsPage != nil {
		s.ServePage("/reports", s.cfg.ReportsPage)
	}
	if s.cfg.OpsPage != nil {
		s.ServePage("/ops", s.cfg.OpsPage)
	}
	if s.cfg.ConsentPage != nil && svc.OAuth != nil && svc.Auth != nil {
		s.routesConsent(s.cfg.ConsentPage)
	}
	if svc.Sync != nil && s.cfg.Node == kassa.NodeHub {
		s.routesOpsFeed()
	}
	if svc.Webhooks != nil {
		s.routesWebhooks()
	}
	if svc.Automations != nil {
		s.routesAutomations()
	}
	if svc.OAuth != nil && s.cfg.Node == kassa.NodeHub {
		s.token = newTokenLimits(s.cfg.TokenRate, s.cfg.Now)
		s.routesOAuth()
	}
}
