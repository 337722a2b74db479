// Package edgenode runs a Kassa edge: the shared node (store, services,
// API) plus its embedded NATS server and, once enrolled at a hub, the sync
// link that pushes the store's changes up and pulls its scope down over a
// NATS leaf-node connection. Offline, everything keeps working: changes
// wait in the outbox and card payments are taken store-and-forward.
package edgenode

import (
	"context"
	"crypto/tls"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"path/filepath"
	"strings"
	"sync"

	"github.com/nats-io/nats.go"
	"github.com/prometheus/client_golang/prometheus"

	"kassa.dev/shared/demo"
	"kassa.dev/shared/envflag"
	"kassa.dev/shared/forward"
	"kassa.dev/shared/kassa"
	"kassa.dev/shared/node"
	"kassa.dev/sync/link"
	"kassa.dev/sync/natsnode"
	"kassa.dev/web"
)

// Version is the build's release: kassa.Version, which the linker sets
// (-X kassa.dev/shared/kassa.Version=…, as the container images do).
var Version = kassa.Version

// Run runs an edge until ctx is done.
func Run(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	var f node.Flags
	fs := flag.NewFlagSet("edge", flag.ContinueOnError)
	fs.SetOutput(stderr)
	f.Bind(fs, node.Defaults{HTTPAddr: DefaultHTTPAddr, DataDir: DefaultDataDir, RatePerMinute: 6000, RateBurst: 9000,
		WriterPriority: node.DefaultWriterPriority})
	hubURL := fs.String("hub-url", "", "HTTP address of the hub, to enrol at (with --enrol-token)")
	enrolToken := fs.String("enrol-token", "", "single-use enrolment token from the hub (POST /locations/:id/enrolment); needed once")
	leafOverride := fs.String("hub-leaf-url", "", "the hubs' leaf URLs, comma-separated, when they differ from what the hubs advertise (then the hubs' list is not followed)")
	if err := envflag.Parse(fs, args, "KASSA_", getenv); err != nil {
		return err
	}
	f.Kind, f.Version = kassa.NodeEdge, Version
	clientTLS, err := f.TLS.Client()
	if err != nil {
		return err
	}
	f.KDSPage = web.KDS
	f.ConsolePage = web.Console
	f.TerminalPage = web.Terminal
	f.TillPage = web.Till
	log := slog.New(slog.NewJSONHandler(stderr, &slog.HandlerOptions{Level: f.LogLevel}))
	var ns *natsnode.Server
	var edge *link.Edge
	var edgeMu sync.Mutex
	current := func() *link.Edge { edgeMu.Lock(); defer edgeMu.Unlock(); return edge }
	f.Ready = func(context.Context) error {
		if ns == nil || !ns.Ready() {
			return fmt.Errorf("nats server not ready")
		}
		return nil
	}
	f.Offline = func() bool { e := current(); return e == nil || !e.Status().Connected }
	f.Enrol = &node.Enrolment{HubURL: *hubURL, Token: *enrolToken, TLS: clientTLS}
	f.Extend = func(n *node.Node) error {
		n.Services.Sync = n.EdgeSync(current)
		return nil
	}
	return node.Run(ctx, &f, log, stdout, func(ctx context.Context, n *node.Node) error {
		id, creds, err := n.EdgeIdentity(ctx, *leafOverride)
		if err != nil {
			return err
		}
		cfg := natsnode.Config{Name: "edge-" + n.NodeID(), Host: f.NATSHost, Port: f.NATSPort, ListenToken: f.NATSToken,
			StoreDir: filepath.Join(f.DataDir, "nats"), JetStream: true, Domain: "edge-" + n.NodeID()}
		if id != nil {
			cfg.LeafRemotes = creds
			cfg.LeafTLS = clientTLS
			if cfg.LeafTLS == nil && strings.HasPrefix(creds[0], "tls://") {
				cfg.LeafTLS = &tls.Config{MinVersion: tls.VersionTLS12}
			}
		}
		ns, err = natsnode.Start(cfg, log)
		if err != nil {
			return err
		}
		n.Jobs.OnStop("nats-server", ns.Shutdown)
		if id == nil {
			if f.Demo {
				if _, err := demo.Seed(ctx, n); err != nil {
					return err
				}
				demo.PrintLogins(stdout)
			}
			log.Info("edge not enrolled: running standalone; start it with --hub-url and --enrol-token to sync")
			return nil
		}
		if f.Demo {
			log.Info("edge enrolled: the demo data comes from the hub, --demo is ignored")
		}
		n.SetUnderHub()
		nc, err := ns.Connect("edge-sync", "", nats.CustomInboxPrefix(id.InboxPrefix()))
		if err != nil {
			return err
		}
		n.Jobs.OnStop("nats-connection", nc.Close)
		lag := prometheus.NewHistogram(prometheus.HistogramOpts{Name: "kassa_sync_pull_lag_seconds",
			Help:    "Time from a change made elsewhere (its HLC) to its apply at this edge.",
			Buckets: []float64{.005, .01, .025, .05, .1, .25, .5, 1, 5, 30, 60, 300, 3600}})
		e := link.NewEdge(*id, nc, n.EdgeLinkStore(*id, lag), log, nil)
		e.Version = kassa.Version
		e.LeafUp = ns.LeafConnected
		if *leafOverride == "" {
			e.LeafURLs = followLeafURLs(n, ns, cfg.LeafTLS, log)
		}
		registerEdgeMetrics(n, e, lag)
		// Gift card payments are authorized at the hub while connected.
		n.AuthorizeGiftCardsAtHub(*id, nc, func() bool { return e.Status().Connected })
		// The hub routes money operations on this store's orders here.
		cmds, err := (&forward.Edge{ID: *id, Payments: n.Services.Payments, Orders: n.Services.Orders, Returns: n.Services.Returns,
			Idempotency: n.Services.Idempotency, Log: log, CatchUp: func(ctx context.Context) error {
				for range 100 { // a batch at a time, until nothing is left
					if k, err := e.PullOnce(ctx); err != nil || k == 0 {
						return err
					}
				}
				return nil
			}}).Serve(nc)
		if err != nil {
			return err
		}
		edgeMu.Lock()
		edge = e
		edgeMu.Unlock()
		// Stopped in reverse: the forwarder, the link, then the commands.
		n.Jobs.OnStop("money-commands", func() { cmds.Unsubscribe() })
		n.Jobs.Start(node.Job{Name: "sync-link", Run: e.Run})
		n.Jobs.Start(n.ForwardOfflineJob(func() bool { return e.Status().Connected }))
		fmt.Fprintf(stdout, "kassa edge enrolled: org %s location %s\n", id.Org, id.Location)
		return nil
	})
}

// registerEdgeMetrics adds the sync link's figures to /metrics.
func registerEdgeMetrics(n *node.Node, e *link.Edge, lag prometheus.Collector) {
	gauge := func(name, help string, f func(link.Status) float64) prometheus.Collector {
		return prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: name, Help: help}, func() float64 { return f(e.Status()) })
	}
	n.HTTP.Registry().MustRegister(lag,
		gauge("kassa_sync_connected", "1 while the link to the hub works.", func(s link.Status) float64 {
			if s.Connected {
				return 1
			}
			return 0
		}),
		gauge("kassa_sync_pending_down", "Hub changes this edge has not pulled yet.", func(s link.Status) float64 { return float64(s.PendingDown) }),
		gauge("kassa_sync_refused_changes", "Changes of this edge the hub refused and holds in quarantine, as it last said.",
			func(s link.Status) float64 { return float64(s.Refused) }),
		gauge("kassa_sync_last_verified_timestamp_seconds", "When digests last matched the hub's.", func(s link.Status) float64 {
			if s.LastVerified.IsZero() {
				return 0
			}
			return float64(s.LastVerified.Unix())
		}),
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "kassa_sync_pending_up", Help: "Local changes not yet acknowledged by the hub."},
			func() float64 { k, _ := n.PendingUp(context.Background()); return float64(k) }))
}

// followLeafURLs is the edge's hook for the cluster's leaf URLs a pull
// brings: a new set is kept and the leaf remote replaced at once; the
// positions (outbox, cursor) are in the store and stay where they are.
func followLeafURLs(n *node.Node, ns *natsnode.Server, leafTLS *tls.Config, log *slog.Logger) func(context.Context, []string) {
	return func(ctx context.Context, urls []string) {
		creds, err := n.NewLeafURLs(ctx, urls)
		if err == nil && creds != nil {
			err = ns.SetLeafRemotes(creds, leafTLS)
			log.Info("the hubs' leaf URLs changed", "hubs", len(urls))
		}
		if err != nil {
			log.Warn("new leaf URLs not taken", "err", err)
		}
	}
}
