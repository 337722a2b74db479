// Package node assembles the part of a Kassa node that edge and hub share:
// the SQLite store, the event bus, the services, the HTTP API and the
// background jobs (job.go), which start and stop in one order. The edge
// and hub mains add their own parts (the embedded NATS server, the sync
// link, their jobs) around it.
package node

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"kassa.dev/shared/eventbus"
	"kassa.dev/shared/httpapi"
	"kassa.dev/shared/kassa"
	"kassa.dev/shared/processor"
	"kassa.dev/shared/sqlite"
	"kassa.dev/shared/token"
)

// Config is what a node needs; mains fill it from flags and environment.
// Its HTTP settings are httpapi's own (embedded); Open fills in their
// Node (from Kind), NodeID, OrgRates and Groups (from Parts).
type Config struct {
	httpapi.Config
	Kind    string // kassa.NodeEdge or kassa.NodeHub
	DataDir string // holds kassa.db
	// Store is the store's name when it is not DataDir's kassa.db: a
	// postgres:// URL on a hub (--store), opened through the backend the
	// hub's binary registered (engine/pg). "": the SQLite file.
	Store string
	// Once runs one tick of a periodic job (a sweep, a retention) for the
	// hubs sharing a database: on the hub that takes it first, the others
	// skipping it (hubonly sets pg.Once's on PostgreSQL). It returns the
	// job's count and whether it ran here. nil: every tick runs here.
	Once func(ctx context.Context, job string, tick time.Time, run func(context.Context) (int64, error)) (int64, bool, error)
	// SaveEdgeReports writes the edge book's changed entries (nil: the
	// store's edge_reports, this hub's word only). Hubs sharing a
	// PostgreSQL write theirs with their name and when they heard the edge
	// (hubonly.Hub.EdgeBookSaver), a newer word never replaced.
	SaveEdgeReports func(ctx context.Context, rs []sqlite.EdgeReport) error
	// EdgesHeard reads, by node id, when any hub sharing the store last
	// heard each edge (nil: this hub's own book is the whole word). The
	// edge book takes a newer hearing in, so every hub of a cluster shows
	// an edge connected while any of them hears it.
	EdgesHeard func(ctx context.Context) (map[string]time.Time, error)
	// LoginPerMinute and LoginBurst throttle logins at the node, all
	// addresses together; LoginIPPerMinute and LoginIPBurst per client
	// address (0: the defaults).
	LoginPerMinute   int
	LoginBurst       int
	LoginIPPerMinute int
	LoginIPBurst     int
	// Ready adds checks to /readyz (the NATS server, the leaf link).
	Ready func(ctx context.Context) error
	// Enrol, on an edge not enrolled yet, enrols the freshly opened store
	// at its hub before anything reads its node id: the edge adopts the id
	// its hub minted.
	Enrol *Enrolment
	// Extend lets the binary add services that need the store (sync,
	// enrolment) before the API is built.
	Extend func(n *Node) error
	// Parts are pieces only this binary links (part.go): the hub's.
	Parts []Part
	// Offline reports that the node has no uplink, so card payments are
	// taken store-and-forward. Nil: always online.
	Offline func() bool
	// ReceiptPoll is how often the receipt job looks for prints and
	// e-mails due for a retry (a new one wakes it at once); 0: 1 s.
	// ReceiptRetry is the first pause before a failed one is retried,
	// doubling per attempt up to 5 min; 0: 5 s (node clock).
	ReceiptPoll, ReceiptRetry time.Duration
	// WriterPriority raises the store's writer thread (sqlite.Options);
	// 0: the default, negative: not raised.
	WriterPriority int
	// Writers is how many write loops a hub on PostgreSQL runs
	// (sqlite.Options.Writers; --writers); 0: the default.
	Writers int
	// CampaignVersionRetention is how long the hub keeps campaigns' past
	// versions (0: DefaultCampaignVersionRetention).
	CampaignVersionRetention time.Duration
}

// Node is an open node.
type Node struct {
	Config   Config
	Bus      *eventbus.Bus
	Services httpapi.Services
	Orgs     *sqlite.OrgService
	HTTP     *httpapi.Server
	// Jobs runs the node's background work: Open starts the kitchen
	// ticket job; the binaries add theirs (and the resources those use,
	// with OnStop). Shutdown stops them in reverse order.
	Jobs *Jobs
	log  *slog.Logger
	// db is the store. Nothing outside this package reaches it: the
	// binaries, the demo seed and tests use the services above and the
	// node's narrow methods (store.go, edge.go, hub.go).
	db *sqlite.DB
	// payments is Services.Payments as the store's type: the offline card
	// forwarding job needs its ForwardOffline step.
	payments *sqlite.PaymentService
	// laybys is Services.Laybys as the store's type: its expiry job.
	laybys *sqlite.LaybyService
	// ticks counts the periodic jobs' ticks, run here or by another hub
	// (kassa_job_ticks_total{job, ran}).
	ticks *prometheus.CounterVec
}

// storeName is what the store is opened from: Store, or else the SQLite
// file in DataDir.
func (cfg Config) storeName() string {
	if cfg.Store != "" {
		return cfg.Store
	}
	return filepath.Join(cfg.DataDir, "kassa.db")
}

// Open opens the store in cfg.DataDir (creating it) and builds the API.
func Open(ctx context.Context, cfg Config, log *slog.Logger) (*Node, error) {
	if cfg.Now == nil {
		cfg.Now = func() time.Time { return time.Now().UTC() }
	}
	if cfg.LoginPerMinute == 0 {
		cfg.LoginPerMinute, cfg.LoginBurst = DefaultLoginPerMinute, DefaultLoginBurst
	}
	if cfg.LoginIPPerMinute == 0 {
		cfg.LoginIPPerMinute, cfg.LoginIPBurst = DefaultLoginIPPerMinute, DefaultLoginIPBurst
	}
	if err := os.MkdirAll(cfg.DataDir, 0o700); err != nil {
		return nil, fmt.Errorf("node: data dir: %w", err)
	}
	bus := eventbus.New()
	live := eventbus.New() // wake-ups of the live feeds (GET /api/v1/ws)
	db, err := sqlite.Open(ctx, cfg.storeName(), sqlite.Options{Now: cfg.Now, Bus: bus, Live: live, Log: log, WriterPriority: cfg.WriterPriority,
		Writers: cfg.Writers, Hub: cfg.Kind == kassa.NodeHub})
	if err != nil {
		return nil, err
	}
	if err := enrolIfAsked(ctx, db, cfg.Enrol); err != nil {
		db.Close()
		return nil, err
	}
	key, err := signingKey(ctx, db)
	if err != nil {
		db.Close()
		return nil, err
	}
	signer, err := token.NewSigner(key, cfg.Kind+":"+db.NodeID, cfg.Now)
	if err != nil {
		db.Close()
		return nil, err
	}
	n := &Node{Config: cfg, db: db, Bus: bus, Orgs: sqlite.NewOrgService(db), Jobs: NewJobs(log), log: log, ticks: newTickCounter()}
	auth := sqlite.NewAuthService(db, signer, sqlite.LoginLimits{PerMinute: cfg.LoginPerMinute, Burst: cfg.LoginBurst,
		IPPerMinute: cfg.LoginIPPerMinute, IPBurst: cfg.LoginIPBurst})
	auth.Rehash = cfg.Kind == kassa.NodeHub // users are written at the hub; an edge's are replicas
	n.Services = httpapi.Services{
		Auth:           auth,
		Users:          sqlite.NewUserService(db),
		Locations:      sqlite.NewLocationService(db),
		Products:       sqlite.NewProductService(db),
		Variants:       sqlite.NewProductService(db),
		Bundles:        sqlite.NewProductService(db),
		Markdowns:      sqlite.NewMarkdownService(db),
		Categories:     sqlite.NewCategoryService(db),
		ModifierGroups: sqlite.NewModifierGroupService(db),
		PriceLists:     sqlite.NewPriceListService(db),
		Campaigns:      sqlite.NewCampaignService(db),
		Inventory:      sqlite.NewInventoryService(db),
		Customers:      sqlite.NewCustomerService(db),
		Loyalty:        sqlite.NewLoyaltyService(db),
		GiftCards:      sqlite.NewGiftCardService(db),
		Registers:      sqlite.NewRegisterService(db),
		Drawers:        sqlite.NewDrawerService(db),
		Tips:           sqlite.NewTipService(db),
		Reports:        sqlite.NewReportService(db),
		Idempotency:    sqlite.NewIdempotencyStore(db),
		Orgs:           n.Orgs,
		Settings:       sqlite.NewSettingsService(db),
		KDS:            sqlite.NewKDSService(db),
		Live:           sqlite.NewLiveService(db),
		Events:         bus,
		LiveEvents:     live,
		Ready: func(ctx context.Context) error {
			if err := db.Ping(ctx); err != nil {
				return err
			}
			if cfg.Ready != nil {
				return cfg.Ready(ctx)
			}
			return nil
		},
	}
	var orgRates map[string]kassa.RateLimit
	if cfg.Kind == kassa.NodeHub {
		tenants := sqlite.NewTenantService(db)
		n.Services.Tenants = tenants
		n.Services.Conflicts = sqlite.NewConflictService(db)
		// Read once: the limiter holds them, so a request reads no store.
		if orgRates, err = tenants.RateLimits(ctx); err != nil {
			db.Close()
			return nil, err
		}
	}
	card := processor.NewCardSimulator()
	payments := sqlite.NewPaymentService(db, map[kassa.PaymentMethod]kassa.Processor{
		kassa.PaymentCash: processor.Cash{}, kassa.PaymentCard: card, kassa.PaymentExternal: processor.External{},
		kassa.PaymentGiftCard: processor.GiftCard{}, kassa.PaymentLoyaltyPoints: processor.LoyaltyPoints{},
		kassa.PaymentStoreCredit: processor.StoreCredit{},
	})
	payments.Offline = cfg.Offline
	n.Services.Payments = payments
	n.payments = payments
	n.laybys = sqlite.NewLaybyService(db, card)
	n.laybys.Offline = cfg.Offline
	n.Services.Laybys = n.laybys
	orders := sqlite.NewOrderService(db, payments)
	n.Services.Orders = orders
	n.Services.Returns = sqlite.NewReturnService(db, orders, payments)
	n.Services.StoreCredit = sqlite.NewStoreCreditService(db)
	n.Services.Receipts = sqlite.NewReceiptService(db)
	// Partners sign in at the hub (the OAuth routes are the hub's); an edge
	// checks the hub's access tokens of its org from their replicated copies.
	n.Services.OAuth = sqlite.NewOAuthService(db)
	if cfg.Extend != nil {
		if err := cfg.Extend(n); err != nil {
			db.Close()
			return nil, err
		}
	}
	n.Config.Node, n.Config.NodeID, n.Config.OrgRates = cfg.Kind, db.NodeID, orgRates
	if err := n.openParts(ctx, db); err != nil {
		db.Close()
		return nil, err
	}
	n.HTTP = httpapi.New(n.Config.Config, n.Services, log)
	n.HTTP.Registry().MustRegister(writerCollectors(db)...)
	n.HTTP.Registry().MustRegister(n.ticks)
	n.Jobs.Start(n.TicketJob())
	n.Jobs.Start(n.ReceiptJob())
	n.Jobs.Start(n.LaybyExpiryJob())
	if cfg.Kind == kassa.NodeHub {
		n.Jobs.Start(n.CampaignVersionRetentionJob())
	}
	for _, p := range cfg.Parts {
		p.Start(n)
	}
	return n, nil
}

// writerCollectors expose the store's write loop in /metrics: whether the
// single writer is the bottleneck (busy seconds close to wall seconds, a
// queue that does not drain) and how group commit packs units per batch.
func writerCollectors(db *sqlite.DB) []prometheus.Collector {
	counter := func(name, help string, f func(sqlite.WriterStats) float64) prometheus.Collector {
		return prometheus.NewCounterFunc(prometheus.CounterOpts{Name: name, Help: help}, func() float64 { return f(db.WriterStats()) })
	}
	return []prometheus.Collector{
		counter("kassa_store_write_batches_total", "Write transactions run (group commits).", func(s sqlite.WriterStats) float64 { return float64(s.Batches) }),
		counter("kassa_store_write_units_total", "Units of work run by the writer.", func(s sqlite.WriterStats) float64 { return float64(s.Units) }),
		counter("kassa_store_write_units_failed_total", "Units of work that failed and rolled back alone.", func(s sqlite.WriterStats) float64 { return float64(s.Failed) }),
		counter("kassa_store_write_units_joined_total", "Units of work run joined with others of their kind (a hub's pushes of several edges as one unit).", func(s sqlite.WriterStats) float64 { return float64(s.Joined) }),
		counter("kassa_store_writer_busy_seconds_total", "Time the writer spent running batches, commits included.", func(s sqlite.WriterStats) float64 { return s.Busy.Seconds() }),
		counter("kassa_store_commit_seconds_total", "Time the writer spent committing (WAL write and fsync).", func(s sqlite.WriterStats) float64 { return s.Commit.Seconds() }),
		counter("kassa_store_checkpoints_total", "WAL checkpoints run in the writer's lulls.", func(s sqlite.WriterStats) float64 { return float64(s.Checkpoints) }),
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "kassa_store_write_queue", Help: "Units of work waiting for the writer."},
			func() float64 { return float64(db.WriterStats().Queued) }),
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "kassa_store_write_loops", Help: "Write loops: one on SQLite, --writers on a hub's PostgreSQL."},
			func() float64 { return float64(db.WriterStats().Loops) }),
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "kassa_store_writer_priority_raised", Help: "1 when the writer's thread runs at a raised priority (--writer-priority)."},
			func() float64 {
				if db.WriterStats().Raised {
					return 1
				}
				return 0
			}),
	}
}

// signingKey loads the node's JWT key, creating it on first start. It stays
// in the store so that tokens survive restarts.
func signingKey(ctx context.Context, db *sqlite.DB) ([]byte, error) {
	k, err := db.Meta(ctx, "jwt_key")
	if err != nil {
		return nil, err
	}
	if k == "" {
		b := make([]byte, 32)
		if _, err := rand.Read(b); err != nil {
			return nil, err
		}
		k = hex.EncodeToString(b)
		if err := db.SetMeta(ctx, "jwt_key", k); err != nil {
			return nil, err
		}
	}
	return hex.DecodeString(k)
}

// Serve serves the API on ln until Shutdown.
func (n *Node) Serve(ln net.Listener) error { return n.HTTP.Serve(ln) }

// Shutdown finishes in-flight requests (up to ctx's deadline), stops the
// jobs (newest first, each waited for), then closes the store.
func (n *Node) Shutdown(ctx context.Context) error {
	err := n.HTTP.Shutdown(ctx)
	return errors.Join(err, n.close())
}

// close stops the jobs, waits for the idempotent answers still being
// kept (sqlite.IdempotencyStore.Complete does not), then closes the
// store: for a node that never served.
func (n *Node) close() error {
	n.Jobs.Stop()
	if f, ok := n.Services.Idempotency.(interface{ Flush() }); ok {
		f.Flush()
	}
	return n.db.Close()
}

// Actor returns a context acting as the given user of an org, for internal
// callers such as the demo seed.
func Actor(ctx context.Context, u *kassa.User) context.Context {
	return kassa.WithActor(ctx, &kassa.Actor{OrgID: u.OrgID, UserID: u.ID, Role: u.Role, Scopes: kassa.RoleScopes(u.Role)})
}
