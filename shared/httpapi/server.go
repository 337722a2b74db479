// Package httpapi serves Kassa's REST API (/api/v1) over Fiber for both
// node kinds, with the cross-cutting parts every resource shares: request
// ids, access log, panic recovery, RFC 9457 problems, body size limit,
// paging, Idempotency-Key, per-org rate limiting, /healthz, /readyz,
// /metrics and the OpenAPI document of every route.
//
// Handlers are thin: they parse, call a kassa service and encode.
package httpapi

import (
	"context"
	"crypto/sha256"
	"fmt"
	"io/fs"
	"log/slog"
	"net"
	"net/netip"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/gofiber/fiber/v2"

	"kassa.dev/shared/eventbus"
	"kassa.dev/shared/kassa"
	"kassa.dev/shared/ratelimit"
)

// Config holds the HTTP settings of a node.
type Config struct {
	Node       string // kassa.NodeEdge or kassa.NodeHub
	NodeID     string
	Version    string
	ErrorsBase string // prefix of problem type URIs
	BodyLimit  int    // bytes
	// BodyBudget is how many bytes of request bodies larger than 8 KiB
	// may be read or handled at once (body.go); 0: DefaultBodyBudget, or
	// twice BodyLimit when that is more.
	BodyBudget int
	// MaxConns caps the open HTTP connections (body.go); 0:
	// DefaultMaxConns. One more is answered 503 and closed.
	MaxConns int
	// RatePerMinute and RateBurst size the per-org token bucket; 0 disables it.
	RatePerMinute int
	RateBurst     int
	// TokenRate throttles the hub's OAuth token endpoint per client and
	// per client address (package hubapi); zero values: its defaults.
	TokenRate TokenRate
	// OrgRates are the orgs' own rate limits, replacing RatePerMinute and
	// RateBurst for those orgs (the hub loads them from its store).
	OrgRates map[string]kassa.RateLimit
	// OrgLimiter, when set, counts the orgs' requests instead of the
	// in-memory buckets RatePerMinute builds: a hub on PostgreSQL hands the
	// database's (hubonly), so an org's limit counts once across the hubs.
	OrgLimiter OrgLimiter
	// TrustedProxies are the reverse proxies whose X-Forwarded-For names
	// the client (clientip.go); none: the header is ignored.
	TrustedProxies []netip.Prefix
	// OperatorToken, when set, is the hub operator's credential, accepted
	// as a bearer token on the partner routes only (partner.go).
	OperatorToken string
	// MetricsToken, when set, is required as a bearer token on /metrics
	// (--metrics-token), on the API listener and on MetricsHandler's.
	MetricsToken string
	// MetricsApart serves /metrics only through MetricsHandler, on a
	// listener of its own (--metrics-addr): the API listener has none.
	MetricsApart bool
	// PublicURL is the URL partners reach this node at (ParsePublicURL),
	// the OAuth metadata's issuer and endpoints (--public-url). Empty: the
	// URL of the listener (SetListenURL, else Serve's), never a request's
	// Host header.
	PublicURL string
	// Now is the clock; tests set it.
	Now func() time.Time
	// KDSHeartbeat is how often a KDS stream writes a heartbeat comment
	// (default 15 s); KDSWriteTimeout cuts off a client that stopped reading
	// (default twice the heartbeat, at least 5 s).
	KDSHeartbeat    time.Duration
	KDSWriteTimeout time.Duration
	// WSPing is how often a WebSocket connection is pinged (default 20 s);
	// a peer that does not answer within the next ping is cut off.
	WSPing time.Duration
	// WSMaxConns and WSMaxOrgConns cap the open WebSocket connections in
	// total and per org (defaults 5000 and 1000).
	WSMaxConns    int
	WSMaxOrgConns int
	// KDSPage, when set, is the kitchen display page, served at /kds (the edge).
	KDSPage fs.FS
	// ConsolePage, when set, is the store console, served at /console (the edge).
	ConsolePage fs.FS
	// TerminalPage, when set, is the terminal page, served at /terminal (the edge).
	TerminalPage fs.FS
	// TillPage, when set, is the point of sale, served at /till (the edge).
	TillPage fs.FS
	// OpsPage, when set, is the ops monitor, served at /ops by the hub's
	// routes (package hubapi).
	OpsPage fs.FS
	// ReportsPage, when set, is the head office's reports page, served at
	// /reports by the hub (web/hubpages).
	ReportsPage fs.FS
	// ConsentPage, when set with Services.OAuth, is the OAuth consent
	// page (hubpages.OAuth), served at /oauth/authorize by the hub's routes.
	ConsentPage fs.FS
	// Groups are routes from other packages (group.go): the hub's.
	Groups []Group
}

// TokenRate sizes the OAuth token endpoint's buckets (per minute, burst).
type TokenRate struct {
	ClientPerMinute, ClientBurst int
	AddrPerMinute, AddrBurst     int
}

// The token endpoint's default rates: a partner's server refreshing for
// 9,000 merchants every 15 minutes stays within 600 a minute; a burst of
// 120 absorbs a restart.
const (
	DefaultTokenPerMinute = 600
	DefaultTokenBurst     = 120
)

// DefaultMaxConns is Config.MaxConns's default: an open connection costs
// a goroutine and its buffers (about 30 KiB while it sends a request: 8
// KiB of body prefetch, 4 KiB each to read and write, the request and the
// stack), so 512 of them stay under 16 MiB. WebSocket connections are
// handed off and counted apart (WSMaxConns).
const DefaultMaxConns = 512

// Services are the domain services the API serves.
type Services struct {
	Auth           kassa.AuthService
	Users          kassa.UserService
	Locations      kassa.LocationService
	Products       kassa.ProductService
	Categories     kassa.CategoryService
	ModifierGroups kassa.ModifierGroupService
	PriceLists     kassa.PriceListService
	Campaigns      kassa.CampaignService
	Variants       kassa.VariantService  // docs/catalog.md
	Bundles        kassa.BundleService   // docs/catalog.md
	Markdowns      kassa.MarkdownService // docs/catalog.md
	Customers      kassa.CustomerService
	Loyalty        kassa.LoyaltyService
	GiftCards      kassa.GiftCardService
	Laybys         kassa.LaybyService
	Returns        kassa.ReturnService
	StoreCredit    kassa.StoreCreditService
	Registers      kassa.RegisterService
	Drawers        kassa.DrawerService
	Tips           kassa.TipService
	Reports        kassa.ReportService
	Inventory      kassa.InventoryService
	Orders         kassa.OrderService
	Receipts       kassa.ReceiptService
	Payments       kassa.PaymentService
	Settings       kassa.SettingsService
	Sync           kassa.SyncService
	Enrolment      kassa.EnrolmentService  // hub only
	Conflicts      kassa.ConflictService   // hub only
	Tenants        kassa.TenantService     // hub only
	Webhooks       kassa.WebhookService    // hub only (package hubapi's routes)
	Automations    kassa.AutomationService // hub only (package hubapi's routes)
	// OAuth is the authorization server: with it, bearer tokens of its
	// shape are accepted; on the hub its routes exist too (package
	// hubapi; an edge only checks the hub's tokens).
	OAuth kassa.OAuthService
	// Orgs names the merchant's org on the consent page; nil: unnamed.
	Orgs kassa.OrgService
	KDS  kassa.KDSService
	// LiveEvents wakes the live feeds after a commit; nil: they poll.
	LiveEvents *eventbus.Bus
	// Live reads the node's log of changes for GET /ws (terminals).
	Live        kassa.LiveService
	Idempotency kassa.IdempotencyStore
	// Events wakes the KDS streams after a commit; nil: they poll.
	Events *eventbus.Bus
	// Ready checks the node's dependencies for /readyz; nil error is ready.
	Ready func(ctx context.Context) error
}

// Server is the HTTP API of one node.
type Server struct {
	cfg      Config
	svc      Services
	log      *slog.Logger
	app      *fiber.App
	api      fiber.Router
	routes   []*Route
	metrics  *metrics
	orgLimit OrgLimiter
	operator [sha256.Size]byte // hash of Config.OperatorToken
	scraper  [sha256.Size]byte // hash of Config.MetricsToken
	docOnce  sync.Once
	doc      map[string]any
	kds      *kdsFeeds
	ws       *wsConns
	live     *liveFeeds
	bodies   *budget
	silent   silentConns
	// publicURL is Config.PublicURL, or the listener's URL.
	publicURL atomic.Pointer[string]
}

// New builds the Fiber app with every route of the API.
func New(cfg Config, svc Services, log *slog.Logger) *Server {
	if cfg.ErrorsBase == "" {
		cfg.ErrorsBase = "https://kassa.dev/problems"
	}
	if cfg.BodyLimit == 0 {
		cfg.BodyLimit = 1 << 20
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.Version == "" {
		cfg.Version = "dev"
	}
	if cfg.BodyBudget == 0 {
		cfg.BodyBudget = max(DefaultBodyBudget, 2*cfg.BodyLimit)
	}
	if cfg.MaxConns == 0 {
		cfg.MaxConns = DefaultMaxConns
	}
	s := &Server{cfg: cfg, svc: svc, log: log, metrics: newMetrics(), bodies: newBudget(cfg.BodyBudget / bodyUnit)}
	if cfg.PublicURL != "" {
		s.publicURL.Store(&cfg.PublicURL)
	}
	if cfg.OrgLimiter != nil {
		s.orgLimit = cfg.OrgLimiter
	} else if cfg.RatePerMinute > 0 {
		s.orgLimit = ratelimit.New(cfg.RatePerMinute, max(cfg.RateBurst, 1), cfg.Now)
		for org, r := range cfg.OrgRates {
			s.orgLimit.SetLimit(org, r.PerMinute, r.Burst)
		}
	}
	if cfg.MetricsToken != "" {
		s.scraper = sha256.Sum256([]byte(cfg.MetricsToken))
	}
	if cfg.OperatorToken != "" {
		s.operator = sha256.Sum256([]byte(cfg.OperatorToken))
	}
	s.app = fiber.New(fiber.Config{
		AppName:               "kassa-" + cfg.Node,
		BodyLimit:             cfg.BodyLimit,
		ErrorHandler:          s.errorHandler,
		DisableStartupMessage: true,
		ReadTimeout:           30 * time.Second,
		IdleTimeout:           120 * time.Second,
		StrictRouting:         false,
		// Memory (body.go): bodies are read by readBody within the body
		// budget, and connections are capped. Not ReduceMemoryUsage:
		// with streamed bodies fasthttp 1.51 gives the connection's reader
		// back while the body stream still reads from it (a nil pointer
		// panic under load).
		StreamRequestBody: true,
		Concurrency:       cfg.MaxConns,
	})
	s.app.Use(closeUnread, s.recoverer, s.requestIDs, s.accessLog, s.secure, s.readBody)
	s.app.Get("/healthz", s.healthz)
	s.app.Get("/readyz", s.readyz)
	if !cfg.MetricsApart {
		s.app.Get("/metrics", s.metricsGuard, s.metrics.handler())
	}
	if cfg.ConsolePage != nil {
		s.page("/console", cfg.ConsolePage)
	}
	if cfg.TerminalPage != nil {
		s.page("/terminal", cfg.TerminalPage)
	}
	if cfg.TillPage != nil {
		s.page("/till", cfg.TillPage)
	}
	s.api = s.app.Group("/api/v1")
	s.ws = newWSConns(cfg)
	s.metrics.Registry.MustRegister(s.ws.gauge)
	// A resource's routes exist when its service does, so a node (or a
	// test) without one serves and documents none of them.
	for _, g := range []struct {
		present bool
		routes  func()
	}{
		{svc.Auth != nil && svc.Users != nil, s.routesAuth},
		{svc.Locations != nil, s.routesLocations},
		{svc.Products != nil, s.routesProducts},
		{svc.Categories != nil, s.routesCategories},
		{svc.ModifierGroups != nil, s.routesModifierGroups},
		{svc.Products != nil && svc.Categories != nil && svc.ModifierGroups != nil && svc.Orgs != nil, s.routesGraphQL},
		{svc.PriceLists != nil, s.routesPriceLists},
		{svc.Campaigns != nil, s.routesCampaigns},
		{svc.Variants != nil && svc.Bundles != nil, s.routesVariants},
		{svc.Markdowns != nil, s.routesMarkdowns},
		{svc.Customers != nil, s.routesCustomers},
		{svc.Loyalty != nil, s.routesLoyalty},
		{svc.GiftCards != nil, s.routesGiftCards},
		{svc.Laybys != nil, s.routesLaybys},
		{svc.Returns != nil, s.routesReturns},
		{svc.StoreCredit != nil, s.routesStoreCredit},
		{svc.Registers != nil, s.routesRegisters},
		{svc.Drawers != nil, s.routesDrawers},
		{svc.Reports != nil, s.routesReports},
		{svc.Tips != nil, s.routesTips},
		{svc.Inventory != nil, s.routesInventory},
		{svc.Orders != nil, s.routesOrders},
		{svc.Receipts != nil && svc.Orders != nil, s.routesReceipts},
		{svc.Payments != nil, s.routesPayments},
		{svc.Settings != nil, s.routesSettings},
		{svc.Sync != nil, s.routesSync},
		{svc.Enrolment != nil, s.routesEnrolment},
		{svc.Conflicts != nil, s.routesConflicts},
		{svc.Tenants != nil, s.routesPartners},
		{svc.KDS != nil && svc.Auth != nil, s.routesKDS},
		{svc.Live != nil && svc.Auth != nil, s.routesLive},
	} {
		if g.present {
			g.routes()
		}
	}
	for _, g := range cfg.Groups {
		g.Routes(s)
	}
	s.handle(&Route{Method: fiber.MethodGet, Path: "/openapi.json", Summary: "This OpenAPI document", Tag: "openapi", Public: true, Produces: "application/json",
		Handler: s.openapi})
	return s
}

// App returns the Fiber app, for listening and for tests.
func (s *Server) App() *fiber.App { return s.app }

// Serve serves on ln until Shutdown. Without a public URL (Config.PublicURL,
// SetListenURL), the OAuth metadata names http:// and ln's address.
func (s *Server) Serve(ln net.Listener) error {
	s.SetListenURL("http://" + ln.Addr().String())
	return s.app.Listener(s.silent.listener(ln))
}

// SetListenURL sets the URL the node is reached at when no public URL is
// configured (the node sets its listener's, https under TLS); a first
// call wins. An unspecified host (0.0.0.0, ::) becomes 127.0.0.1: the
// metadata then names a URL that works on this machine only, and the
// node warns that --public-url is needed.
func (s *Server) SetListenURL(u string) {
	if p, err := url.Parse(u); err == nil {
		if a, err := netip.ParseAddr(p.Hostname()); err == nil && a.IsUnspecified() {
			p.Host = net.JoinHostPort("127.0.0.1", p.Port())
			u = p.String()
		}
	}
	s.publicURL.CompareAndSwap(nil, &u)
}

// PublicURL is the URL the OAuth metadata names ("" before any listener).
func (s *Server) PublicURL() string {
	if p := s.publicURL.Load(); p != nil {
		return *p
	}
	return ""
}

// ParsePublicURL reads --public-url: an absolute http or https URL
// without user info, query or fragment; a path is kept (a proxy that
// serves the node under a prefix), without its trailing slash.
func ParsePublicURL(s string) (string, error) {
	if s == "" {
		return "", nil
	}
	u, err := url.Parse(s)
	switch {
	case err != nil, u.Scheme != "http" && u.Scheme != "https", u.Host == "", u.Opaque != "":
		return "", fmt.Errorf("public URL %q is not an absolute http or https URL", s)
	case u.User != nil, u.RawQuery != "", u.Fragment != "", strings.HasSuffix(s, "?"), strings.Contains(s, "#"):
		return "", fmt.Errorf("public URL %q must have no user info, query or fragment", s)
	}
	return strings.TrimRight(s, "/"), nil
}

// Listen serves on addr until Shutdown.
func (s *Server) Listen(addr string) error {
	return s.app.Listen(addr)
}

// Shutdown stops accepting connections and waits for in-flight requests,
// up to the context's deadline.
func (s *Server) Shutdown(ctx context.Context) error {
	if s.kds != nil {
		s.kds.close() // open event streams would keep their connections busy
	}
	if s.live != nil {
		s.live.close()
	}
	// WebSocket peers get half the budget (at most wsCloseWait) to answer
	// the close; the rest are cut, so the HTTP server's own shutdown still
	// has time (a slow peer must not turn a clean stop into a timeout).
	wait := wsCloseWait
	if d, ok := ctx.Deadline(); ok {
		wait = min(wait, time.Until(d)/2)
	}
	wctx, cancel := context.WithTimeout(ctx, wait)
	s.ws.shutdown(wctx)
	cancel()
	return s.shutdownHTTP(ctx)
}

// shutdownHTTP stops the HTTP server, waiting for the requests in
// flight, and meanwhile closes the connections that never sent one
// (silentConns) — also those accepted just before the listener closed.
func (s *Server) shutdownHTTP(ctx context.Context) error {
	done := make(chan error, 1)
	go func() { done <- s.app.ShutdownWithContext(ctx) }()
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	for {
		s.silent.closeAll()
		select {
		case err := <-done:
			return err
		case <-tick.C:
		}
	}
}

func (s *Server) healthz(c *fiber.Ctx) error {
	// No ids here: a node id is what an edge's leaf user is, and this
	// answer is public.
	return c.JSON(fiber.Map{"status": "ok", "node": s.cfg.Node, "version": s.cfg.Version})
}

func (s *Server) readyz(c *fiber.Ctx) error {
	if s.svc.Ready != nil {
		ctx, cancel := context.WithTimeout(c.UserContext(), 2*time.Second)
		defer cancel()
		if err := s.svc.Ready(ctx); err != nil {
			s.log.Warn("not ready", slog.Any("err", err))
			return c.Status(fiber.StatusServiceUnavailable).JSON(fiber.Map{"status": "unavailable"})
		}
	}
	return c.JSON(fiber.Map{"status": "ready"})
}
