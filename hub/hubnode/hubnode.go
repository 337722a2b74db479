// Package hubnode runs the Kassa hub: the shared node (store, services,
// API) plus its embedded NATS server with JetStream and the leaf-node
// listener that edges connect to, the sync link that ingests edges'
// changes and serves their pulls, and edge enrolment.
package hubnode

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/prometheus/client_golang/prometheus"

	"kassa.dev/shared/demo"
	"kassa.dev/shared/envflag"
	"kassa.dev/shared/forward"
	"kassa.dev/shared/kassa"
	"kassa.dev/shared/node"
	"kassa.dev/shared/sqlite"
	"kassa.dev/sync/change"
	"kassa.dev/sync/link"
	"kassa.dev/sync/natsnode"
)

// Version is stamped at build time.
var Version = "dev"

// DemoTokenFile is where a --demo hub writes an enrolment token for the
// demo location, for `make run` to hand to the demo edge.
const DemoTokenFile = "demo-edge.token"

// Run runs a hub until ctx is done.
func Run(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	var f node.Flags
	fs := flag.NewFlagSet("hub", flag.ContinueOnError)
	fs.SetOutput(stderr)
	f.Bind(fs, node.Defaults{HTTPAddr: "127.0.0.1:8080", DataDir: "data/hub", RatePerMinute: 600, RateBurst: 900,
		WriterPriority: -1})
	leafHost := fs.String("leaf-host", "127.0.0.1", "listen host of the NATS leaf-node port that edges connect to")
	leafPort := fs.Int("leaf-port", 7422, "NATS leaf-node port (-1: any free port)")
	leafAdvertise := fs.String("leaf-advertise", "", "leaf URL given to enrolling edges (default: nats-leaf://<leaf-host>:<leaf-port>)")
	if err := envflag.Parse(fs, args, "KASSA_", getenv); err != nil {
		return err
	}
	f.Kind, f.Version = kassa.NodeHub, Version
	serverTLS, err := f.TLS.Server()
	if err != nil {
		return err
	}
	log := slog.New(slog.NewJSONHandler(stderr, &slog.HandlerOptions{Level: f.LogLevel}))
	var ns *natsnode.Server
	var db *sqlite.DB
	router := &forward.Router{Log: log, Edge: func(ctx context.Context, org, location string) (string, error) {
		return locationEdge(ctx, db, org, location)
	}}
	edges := &edgeBook{seen: map[string]time.Time{}, cursor: map[string]int64{}, pending: map[string]int{}, verified: map[string]time.Time{}}
	f.Ready = func(context.Context) error {
		if ns == nil || !ns.Ready() {
			return fmt.Errorf("nats server not ready")
		}
		return nil
	}
	f.Extend = func(n *node.Node) error {
		db = n.DB
		enrolment := sqlite.NewEnrolmentService(n.DB, func() string {
			if *leafAdvertise != "" {
				return *leafAdvertise
			}
			return ns.LeafURL()
		})
		enrolment.OnRevoke(func(nodeID string) {
			if ns != nil {
				ns.DisconnectLeaf(nodeID)
			}
		})
		n.Services.Enrolment = enrolment
		n.Services.Sync = &hubSync{db: n.DB, edges: edges}
		// A store's money operations run at the store (package forward).
		n.Services.Payments, n.Services.Orders = router.Wrap(n.Services.Payments, n.Services.Orders)
		return nil
	}
	return node.Run(ctx, &f, log, stdout, func(ctx context.Context, n *node.Node) error {
		token := "hub-" + randomToken()
		var err error
		ns, err = natsnode.Start(natsnode.Config{
			Name: "hub-" + n.DB.NodeID, Host: f.NATSHost, Port: f.NATSPort, ListenToken: f.NATSToken, TLS: serverTLS,
			StoreDir: filepath.Join(f.DataDir, "nats"), JetStream: true, Domain: "hub",
			LeafHost: *leafHost, LeafPort: *leafPort, ClientToken: token,
			LeafAuth: func(user, password string) *server.Permissions {
				sn := db.FindSyncNode(context.Background(), user, password, true)
				if sn == nil {
					log.Warn("leaf connection refused", "user", user)
					return nil
				}
				return link.EdgePermissions(link.Identity{Org: sn.OrgID, Location: sn.LocationID, Node: sn.NodeID})
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
			Help: "Edges that spoke to the hub in the last 10 seconds."}, func() float64 { return float64(edges.connected()) })
		n.HTTP.Registry().MustRegister(lag, edgesUp)
		for _, code := range sqlite.RefusalCodes {
			n.HTTP.Registry().MustRegister(prometheus.NewCounterFunc(prometheus.CounterOpts{Name: "kassa_sync_refused_total",
				Help:        "Changes pushed by edges that the trust boundary refused and quarantined, by reason.",
				ConstLabels: prometheus.Labels{"reason": code}}, func() float64 { return float64(n.DB.RefusedCounts()[code]) }))
		}
		h, err := link.StartHub(nc, &hubStore{db: n.DB, edges: edges, lag: lag}, log)
		if err != nil {
			return err
		}
		n.Jobs.OnStop("sync-hub", h.Stop)
		router.SetConn(nc)
		n.Jobs.OnStop("money-router", func() { router.SetConn(nil) })
		start, err := n.DB.LastSeq(ctx)
		if err != nil {
			return err
		}
		// The edge watch tells edges when the hub's log has news for their scope.
		n.Jobs.Start(node.Job{Name: "edge-watch", Run: func(ctx context.Context) error {
			h.Watch(ctx, n.DB.Committed(), start, func(ctx context.Context, after int64) ([]link.Head, error) {
				hs, err := n.DB.LogHeadsAfter(ctx, after, 5000)
				out := make([]link.Head, len(hs))
				for i, h := range hs {
					out[i] = link.Head{Seq: h.Seq, Org: h.OrgID, Location: h.LocationID}
				}
				return out, err
			})
			return nil
		}})
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

func entries(log []sqlite.LogEntry, err error) ([]link.Entry, error) {
	out := make([]link.Entry, len(log))
	for i, e := range log {
		out[i] = link.Entry{Seq: e.Seq, Change: e.Change}
	}
	return out, err
}

// edgeBook remembers when each edge last spoke, how far it pulled, and
// the figures it reported.
type edgeBook struct {
	mu       sync.Mutex
	seen     map[string]time.Time
	cursor   map[string]int64
	pending  map[string]int
	verified map[string]time.Time
}

func (b *edgeBook) connected() int {
	b.mu.Lock()
	defer b.mu.Unlock()
	n := 0
	for _, t := range b.seen {
		if time.Since(t) < 10*time.Second {
			n++
		}
	}
	return n
}

func (b *edgeBook) report(node string, pending int, verified time.Time) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.pending[node] = pending
	if !verified.IsZero() {
		b.verified[node] = verified
	}
}

func (b *edgeBook) saw(node string, cursor int64) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.seen[node] = time.Now()
	if cursor >= 0 {
		b.cursor[node] = cursor
	}
}

// hubStore adapts the hub's store to the link.
type hubStore struct {
	db    *sqlite.DB
	edges *edgeBook
	lag   prometheus.Observer // change made at an edge → applied at the hub
}

func (s *hubStore) Ingest(ctx context.Context, from link.Identity, cs []change.Change) (int, int, error) {
	s.edges.saw(from.Node, -1)
	res, _, err := s.db.Ingest(ctx, sqlite.EdgeScope{OrgID: from.Org, LocationID: from.Location, NodeID: from.Node}, cs)
	if err == nil && s.lag != nil {
		now := time.Now()
		for _, c := range cs {
			s.lag.Observe(now.Sub(c.HLC.Time()).Seconds())
		}
	}
	return res.Applied, res.Duplicate, err
}

func (s *hubStore) Log(ctx context.Context, to link.Identity, req link.PullRequest) ([]link.Entry, int64, int64, error) {
	after, limit := req.After, req.Limit
	s.edges.saw(to.Node, after)
	s.edges.report(to.Node, req.PendingUp, req.LastVerified)
	// Bound the read by the newest position first: entries committed while
	// it runs must not be skipped when the cursor moves past what was read.
	last, err := s.db.LastSeq(ctx)
	if err != nil {
		return nil, 0, 0, err
	}
	es, err := entries(s.db.ChangesBetween(ctx, after, last, limit, false, &sqlite.Scope{OrgID: to.Org, LocationID: to.Location}, to.Node))
	if err != nil {
		return nil, 0, 0, err
	}
	upTo := last
	if len(es) == limit {
		upTo = es[len(es)-1].Seq
	}
	return es, upTo, last, nil
}

func (s *hubStore) Digests(ctx context.Context, of link.Identity) (map[string]string, error) {
	return s.db.Digests(ctx, of.Org, of.Location)
}

func (s *hubStore) Known(ctx context.Context, id link.Identity) bool {
	n := s.db.FindSyncNode(ctx, id.Node, "", false)
	return n != nil && n.OrgID == id.Org && n.LocationID == id.Location
}

// hubSync is the hub's kassa.SyncService: every enrolled edge of the org.
type hubSync struct {
	db    *sqlite.DB
	edges *edgeBook
}

func (s *hubSync) Status(ctx context.Context) (*kassa.SyncStatus, error) {
	a, err := kassa.MustActor(ctx)
	if err != nil {
		return nil, err
	}
	nodes, err := s.db.SyncNodes(ctx, a.OrgID)
	if err != nil {
		return nil, err
	}
	st := &kassa.SyncStatus{Node: kassa.NodeHub, NodeID: s.db.NodeID, Connected: true, Edges: []kassa.EdgeStatus{}}
	for _, n := range nodes {
		es := kassa.EdgeStatus{NodeID: n.NodeID, LocationID: n.LocationID, EnrolledAt: n.EnrolledAt}
		s.edges.mu.Lock()
		seen, ok := s.edges.seen[n.NodeID]
		cursor := s.edges.cursor[n.NodeID]
		es.PendingUp = s.edges.pending[n.NodeID]
		if v, ok := s.edges.verified[n.NodeID]; ok {
			es.LastVerified = &v
		}
		s.edges.mu.Unlock()
		if ok {
			es.LastSeen = &seen
			es.Connected = time.Since(seen) < 10*time.Second
		}
		es.PendingDown, _ = s.db.LogCount(ctx, cursor, sqlite.Scope{OrgID: n.OrgID, LocationID: n.LocationID}, n.NodeID)
		st.Edges = append(st.Edges, es)
	}
	return st, nil
}

func (s *hubSync) Conflicts(ctx context.Context, p kassa.Page) (kassa.List[kassa.Conflict], error) {
	return s.db.Conflicts(ctx, p)
}

// locationEdge returns the newest edge enrolled (and not revoked) at a
// location of org, or "" when it has none.
func locationEdge(ctx context.Context, db *sqlite.DB, org, location string) (string, error) {
	nodes, err := db.SyncNodes(ctx, org)
	if err != nil {
		return "", err
	}
	edge := ""
	for _, n := range nodes { // oldest first
		if n.LocationID == location {
			edge = n.NodeID
		}
	}
	return edge, nil
}

func randomToken() string {
	b := make([]byte, 24)
	if _, err := rand.Read(b); err != nil {
		panic(err)
	}
	return hex.EncodeToString(b)
}
