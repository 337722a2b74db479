// Package hubnode runs the Kassa hub: the shared node (store, services,
// API) plus its embedded NATS server with JetStream and the leaf-node
// listener that edges connect to, the sync link that ingests edges'
// changes and serves their pulls, and edge enrolment.
package hubnode

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/prometheus/client_golang/prometheus"

	"kassa.dev/shared/demo"
	"kassa.dev/shared/egress"
	"kassa.dev/shared/envflag"
	"kassa.dev/shared/forward"
	"kassa.dev/shared/httpapi"
	"kassa.dev/shared/kassa"
	"kassa.dev/shared/node"
	"kassa.dev/shared/node/hubonly"
	"kassa.dev/sync/link"
	"kassa.dev/sync/natsnode"
	"kassa.dev/web/hubpages"
)

// Version is the build's release: kassa.Version, which the linker sets
// (-X kassa.dev/shared/kassa.Version=…, as the container images do).
var Version = kassa.Version

// DemoTokenFile is where a --demo hub writes an enrolment token for the
// demo location, for `make run` to hand to the demo edge.
const DemoTokenFile = "demo-edge.token"

// MinOperatorToken is the shortest --operator-token accepted: the token
// opens every org's tenant record and rate limit.
const MinOperatorToken = 32

// Run runs a hub until ctx is done.
func Run(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	var f node.Flags
	var err error
	hub := hubonly.New() // the hub's own part: webhooks, automations, OAuth server, ops feed
	f.Parts = []node.Part{hub}
	fs := flag.NewFlagSet("hub", flag.ContinueOnError)
	fs.SetOutput(stderr)
	f.Bind(fs, node.Defaults{HTTPAddr: DefaultHTTPAddr, DataDir: DefaultDataDir, RatePerMinute: 600, RateBurst: 900,
		WriterPriority: -1})
	fs.StringVar(&f.Store, "store", "", "the hub's store: a postgres:// URL (the database must sort text as C: createdb --locale=C --template=template0); default: the SQLite file kassa.db in --data-dir")
	fs.IntVar(&f.Writers, "writers", 0, "write loops on a PostgreSQL store, each with its own connection (0: one per CPU, at least two); several hubs on one PostgreSQL: about its cores divided by the hubs, at least one (docs/postgres.md)")
	leafHost := fs.String("leaf-host", "127.0.0.1", "listen host of the NATS leaf-node port that edges connect to")
	leafPort := fs.Int("leaf-port", 7422, "NATS leaf-node port (-1: any free port)")
	leafCompression := fs.String("leaf-compression", "off", "compression of the edges' leaf links: off, s2_auto, s2_uncompressed, s2_fast, s2_better or s2_best; each compressed link holds about 2 MiB more (raise --memory-limit with the edges)")
	leafAdvertise := fs.String("leaf-advertise", "", "leaf URL given to enrolling edges (default: nats-leaf://<leaf-host>:<leaf-port>)")
	clusterFlags := bindCluster(fs)
	fs.StringVar(&f.OperatorToken, "operator-token", "", "the operator's credential on the partner routes, as a bearer token (at least 32 characters; empty: off)")
	publicURL := fs.String("public-url", "", "the URL partners reach the hub at (https://pos.example.com), named by the OAuth metadata; default: the listen address")
	fs.IntVar(&f.TokenRate.ClientPerMinute, "token-per-minute", httpapi.DefaultTokenPerMinute, "OAuth token endpoint: calls per minute of one authenticated client")
	fs.IntVar(&f.TokenRate.ClientBurst, "token-burst", httpapi.DefaultTokenBurst, "OAuth token endpoint: calls at once of one authenticated client")
	fs.IntVar(&f.TokenRate.AddrPerMinute, "token-ip-per-minute", httpapi.DefaultTokenPerMinute, "OAuth token endpoint: calls per minute from one client address")
	fs.IntVar(&f.TokenRate.AddrBurst, "token-ip-burst", httpapi.DefaultTokenBurst, "OAuth token endpoint: calls at once from one client address")
	retryDelays := fs.String("webhook-retry-delays", "1m,5m", "pauses before the second, third… webhook attempt, comma-separated; after the last the delivery has failed")
	fs.DurationVar(&hub.Webhooks.Timeout, "webhook-timeout", kassa.DefaultWebhookTimeout, "how long one webhook attempt may take; no 2xx by then is a failed attempt")
	fs.BoolVar(&hub.Webhooks.AllowLoopback, "webhook-allow-loopback", false, "allow webhook endpoints on loopback addresses (development and tests only)")
	fs.DurationVar(&hub.AutomationRetention, "automation-retention", hubonly.DefaultAutomationRetention, "how long automation executions are kept; older ones are deleted hourly")
	fs.DurationVar(&f.CampaignVersionRetention, "campaign-version-retention", node.DefaultCampaignVersionRetention,
		"how long campaigns' past versions are kept for pricing edge orders made offline; older ones are deleted hourly but each campaign's state at that age")
	if err := envflag.Parse(fs, args, "KASSA_", getenv); err != nil {
		return err
	}
	if hub.Webhooks.RetryDelays, err = kassa.ParseWebhookRetryDelays(*retryDelays); err != nil {
		return fmt.Errorf("--webhook-retry-delays: %w", err)
	}
	if f.PublicURL, err = httpapi.ParsePublicURL(*publicURL); err != nil {
		return fmt.Errorf("--public-url: %w", err)
	}
	if f.OperatorToken != "" && len(f.OperatorToken) < MinOperatorToken {
		return fmt.Errorf("--operator-token must have at least %d characters", MinOperatorToken)
	}
	f.Kind, f.Version = kassa.NodeHub, Version
	f.ConsentPage = hubpages.OAuth
	f.OpsPage = hubpages.Ops
	f.ReportsPage = hubpages.Reports
	serverTLS, err := f.TLS.Server()
	if err != nil {
		return err
	}
	cluster, err := clusterFlags.config(getenv, f.TLS, serverTLS)
	if err != nil {
		return err
	}
	log := slog.New(slog.NewJSONHandler(stderr, &slog.HandlerOptions{Level: f.LogLevel}))
	if cluster != nil {
		log.Info("the hub joins a NATS cluster: its hubs must share one PostgreSQL store (docs/cluster.md)", "cluster", cluster.Name)
	}
	if hub.Webhooks.AllowLoopback {
		log.Warn("webhooks may target loopback (--webhook-allow-loopback): not for production")
	}
	// Webhook deliveries leave through egress: URLs checked at
	// registration, every address checked again at connect time, no
	// redirects followed.
	hub.Webhooks.Client, hub.Webhooks.CheckURL = hubonly.WebhookEgress(egress.Options{
		AllowLoopback: hub.Webhooks.AllowLoopback, Timeout: hub.Webhooks.Timeout})
	var ns *natsnode.Server
	var nd *node.Node
	router := &forward.Router{Log: log, Edge: func(ctx context.Context, org, location string) (string, error) {
		return nd.LocationEdge(ctx, org, location)
	}}
	edges := node.NewEdgeBook()
	// Every hub's leaf URL, this hub's first: given at enrolment and with
	// every pull (docs/cluster.md).
	leafURLs := func() []string {
		if *leafAdvertise != "" {
			return clusterFlags.urls(*leafAdvertise)
		}
		return clusterFlags.urls(ns.LeafURL())
	}
	f.Ready = func(context.Context) error {
		if ns == nil || !ns.Ready() {
			return fmt.Errorf("nats server not ready")
		}
		return nil
	}
	f.Extend = func(n *node.Node) error {
		nd = n
		n.Services.Enrolment = n.ClusterEnrolmentService(leafURLs, func(nodeID string) {
			edges.Forget(nodeID)
			if ns != nil {
				ns.DisconnectLeaf(nodeID)
			}
		})
		n.Services.Sync = n.HubSync(edges)
		// A store's money operations run at the store (package forward).
		n.Services.Payments, n.Services.Orders = router.Wrap(n.Services.Payments, n.Services.Orders)
		n.Services.Returns = router.WrapReturns(n.Services.Returns) // docs/returns.md
		return nil
	}
	return node.Run(ctx, &f, log, stdout, func(ctx context.Context, n *node.Node) error {
		token := "hub-" + randomToken()
		name, err := hubName(n.NodeID(), f.Store, f.DataDir)
		if err != nil {
			return err
		}
		// The book of edges starts from what the hub saved before it
		// stopped, and is saved until after the link stops; hubs on one
		// PostgreSQL each write theirs under their name.
		n.Config.SaveEdgeReports, n.Config.EdgesHeard = hub.EdgeBookSaver(name), hub.EdgesHeard()
		reports, err := n.EdgeReportJob(ctx, edges)
		if err != nil {
			return err
		}
		n.Jobs.Start(reports)
		ns, err = natsnode.Start(natsnode.Config{
			Name: name, Host: f.NATSHost, Port: f.NATSPort, ListenToken: f.NATSToken, TLS: serverTLS,
			StoreDir: filepath.Join(f.DataDir, "nats"), JetStream: true, Domain: "hub",
			LeafHost: *leafHost, LeafPort: *leafPort, LeafCompression: *leafCompression, ClientToken: token, Cluster: cluster, OnLeaf: edges.Attach,
			LeafAuth: func(user, password string) *server.Permissions {
				id := n.LeafIdentity(context.Background(), user, password)
				if id == nil {
					log.Warn("leaf connection refused", "user", user)
					return nil
				}
				return link.EdgePermissions(*id)
			},
		}, log)
		if err != nil {
			return err
		}
		n.Jobs.OnStop("nats-server", ns.Shutdown)
		nc, err := ns.Connect("hub-sync", token)
		if err != nil {
			return err
		}
		n.Jobs.OnStop("nats-connection", nc.Close)
		lag := prometheus.NewHistogram(prometheus.HistogramOpts{Name: "kassa_sync_apply_lag_seconds",
			Help:    "Time from a change made at an edge (its HLC) to its apply at the hub; alarm on the high buckets.",
			Buckets: []float64{.005, .01, .025, .05, .1, .25, .5, 1, 5, 30, 60, 300, 3600}})
		edgesUp := prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "kassa_sync_edges_connected",
			Help: "Edges that spoke to the hub in the last 10 seconds."}, func() float64 { return float64(edges.Connected()) })
		n.HTTP.Registry().MustRegister(lag, edgesUp, n.EdgeCollector(edges), router.Collector(),
			leafCollector(func() *natsnode.Server { return ns }, ns.Name()))
		n.HTTP.Registry().MustRegister(n.RefusedCounters()...)
		store := n.HubLinkStore(edges, lag)
		h, err := link.StartHub(nc, store, log)
		if err != nil {
			return err
		}
		n.Jobs.OnStop("sync-hub", h.Stop)
		h.SetLeafURLs(leafURLs())
		// Stores authorize gift card payments here (docs/giftcards.md).
		gifts, err := n.ServeGiftCards(nc, store.Known)
		if err != nil {
			return err
		}
		n.Jobs.OnStop("gift-card-holds", func() { gifts.Unsubscribe() })
		router.SetConn(nc)
		n.Jobs.OnStop("money-router", func() { router.SetConn(nil) })
		watch, err := n.EdgeWatchJob(ctx, h)
		if err != nil {
			return err
		}
		n.Jobs.Start(watch)
		fmt.Fprintf(stdout, "kassa hub leaf %s\n", ns.LeafURL())
		if f.Demo {
			return seedDemo(ctx, n, f.DataDir, stdout)
		}
		return nil
	})
}

// seedDemo seeds the demo org and writes an enrolment token for its
// location where `make run` picks it up.
func seedDemo(ctx context.Context, n *node.Node, dataDir string, out io.Writer) error {
	orgID, err := demo.Seed(ctx, n)
	if err != nil {
		return err
	}
	demo.PrintLogins(out)
	owner, loc, err := demo.OwnerAndLocation(ctx, n, orgID)
	if err != nil {
		return err
	}
	e, err := n.Services.Enrolment.CreateEnrolment(node.Actor(ctx, owner), loc)
	if err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(dataDir, DemoTokenFile), []byte(e.Token+"\n"), 0o600)
}

// hubInstanceFile holds, in a hub's data directory, what tells it from the
// other hubs sharing its PostgreSQL store.
const hubInstanceFile = "hub-instance"

// hubName is the hub's NATS server name, which /sync/status, the ops page
// and the edge book (edge_reports.hub_id) show: hub-<node id> on its own
// SQLite store; on PostgreSQL every hub shares the store's node id, so the
// name adds this data directory's instance id (made once, kept).
func hubName(nodeID, store, dataDir string) (string, error) {
	name := "hub-" + nodeID
	if !strings.HasPrefix(store, "postgres://") && !strings.HasPrefix(store, "postgresql://") {
		return name, nil
	}
	path := filepath.Join(dataDir, hubInstanceFile)
	b, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		b = []byte(randomToken()[:8])
		err = os.WriteFile(path, b, 0o600)
	}
	if err != nil {
		return "", fmt.Errorf("hub: instance id: %w", err)
	}
	return name + "-" + strings.TrimSpace(string(b)), nil
}

func randomToken() string {
	b := make([]byte, 24)
	if _, err := rand.Read(b); err != nil {
		panic(err)
	}
	return hex.EncodeToString(b)
}
