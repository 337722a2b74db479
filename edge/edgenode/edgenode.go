// Package edgenode runs a Kassa edge: the shared node (store, services,
// API) plus its embedded NATS server and, once enrolled at a hub, the sync
// link that pushes the store's changes up and pulls its scope down over a
// NATS leaf-node connection. Offline, everything keeps working: changes
// wait in the outbox and card payments are taken store-and-forward.
package edgenode

import (
	"bytes"
	"context"
	"crypto/tls"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/nats-io/nats.go"
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
	"kassa.dev/web"
)

// Version is stamped at build time.
var Version = "dev"

// Run runs an edge until ctx is done.
func Run(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	var f node.Flags
	fs := flag.NewFlagSet("edge", flag.ContinueOnError)
	fs.SetOutput(stderr)
	f.Bind(fs, node.Defaults{HTTPAddr: "127.0.0.1:8081", DataDir: "data/edge", RatePerMinute: 6000, RateBurst: 9000,
		WriterPriority: sqlite.DefaultWriterPriority})
	hubURL := fs.String("hub-url", "", "HTTP address of the hub, to enrol at (with --enrol-token)")
	enrolToken := fs.String("enrol-token", "", "single-use enrolment token from the hub (POST /locations/:id/enrolment); needed once")
	leafOverride := fs.String("hub-leaf-url", "", "the hub's leaf URL, when it differs from what the hub advertises")
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
	// Enrol before anything uses the store's node id: the edge adopts the
	// id its hub mints.
	f.Prepare = func(ctx context.Context, db *sqlite.DB) error {
		org, err := db.Meta(ctx, metaOrg)
		if err != nil || org != "" || *enrolToken == "" {
			return err
		}
		if *hubURL == "" {
			return fmt.Errorf("edge: --enrol-token needs --hub-url")
		}
		return enrol(ctx, db, *hubURL, *enrolToken, clientTLS)
	}
	f.Extend = func(n *node.Node) error {
		n.Services.Sync = &edgeSync{db: n.DB, link: current}
		return nil
	}
	return node.Run(ctx, &f, log, stdout, func(ctx context.Context, n *node.Node) error {
		id, creds, err := identity(ctx, n.DB, *leafOverride)
		if err != nil {
			return err
		}
		cfg := natsnode.Config{Name: "edge-" + n.DB.NodeID, Host: f.NATSHost, Port: f.NATSPort, ListenToken: f.NATSToken,
			StoreDir: filepath.Join(f.DataDir, "nats"), JetStream: true, Domain: "edge-" + n.DB.NodeID}
		if id != nil {
			cfg.LeafRemotes = []string{creds}
			cfg.LeafTLS = clientTLS
			if cfg.LeafTLS == nil && strings.HasPrefix(creds, "tls://") {
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
		n.DB.SetUnderHub()
		nc, err := ns.Connect("edge-sync", "", nats.CustomInboxPrefix(id.InboxPrefix()))
		if err != nil {
			return err
		}
		n.Jobs.OnStop("nats-connection", nc.Close)
		lag := prometheus.NewHistogram(prometheus.HistogramOpts{Name: "kassa_sync_pull_lag_seconds",
			Help:    "Time from a change made elsewhere (its HLC) to its apply at this edge.",
			Buckets: []float64{.005, .01, .025, .05, .1, .25, .5, 1, 5, 30, 60, 300, 3600}})
		e := link.NewEdge(*id, nc, &edgeStore{db: n.DB, id: *id, lag: lag}, log, nil)
		registerEdgeMetrics(n, e, lag)
		// The hub routes money operations on this store's orders here.
		cmds, err := (&forward.Edge{ID: *id, Payments: n.Services.Payments, Orders: n.Services.Orders,
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
		n.Jobs.Start(node.Job{Name: "sync-link", Run: func(ctx context.Context) error { e.Run(ctx); return nil }})
		n.Jobs.Start(node.ForwardOfflineJob(n.Payments, func() bool { return e.Status().Connected }, log))
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
		gauge("kassa_sync_last_verified_timestamp_seconds", "When digests last matched the hub's.", func(s link.Status) float64 {
			if s.LastVerified.IsZero() {
				return 0
			}
			return float64(s.LastVerified.Unix())
		}),
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "kassa_sync_pending_up", Help: "Local changes not yet acknowledged by the hub."},
			func() float64 { k, _ := n.DB.OutboxLen(context.Background(), true); return float64(k) }))
}

// Keys of the edge's identity in node_meta.
const (
	metaOrg      = "sync_org"
	metaLocation = "sync_location"
	metaLeafURL  = "sync_leaf_url"
	metaPassword = "sync_leaf_password"
	metaCursor   = "sync_pull_cursor"
)

// identity returns the edge's enrolled identity and leaf URL (with its
// credentials), or nil for an edge that is not enrolled.
func identity(ctx context.Context, db *sqlite.DB, leafOverride string) (*link.Identity, string, error) {
	org, err := db.Meta(ctx, metaOrg)
	if err != nil || org == "" {
		return nil, "", err
	}
	vals := map[string]string{}
	for _, k := range []string{metaOrg, metaLocation, metaLeafURL, metaPassword} {
		if vals[k], err = db.Meta(ctx, k); err != nil {
			return nil, "", err
		}
	}
	leaf := vals[metaLeafURL]
	if leafOverride != "" {
		leaf = leafOverride
	}
	u, err := url.Parse(leaf)
	if err != nil {
		return nil, "", fmt.Errorf("edge: leaf url %q: %w", leaf, err)
	}
	u.User = url.UserPassword(db.NodeID, vals[metaPassword])
	return &link.Identity{Org: vals[metaOrg], Location: vals[metaLocation], Node: db.NodeID}, u.String(), nil
}

// enrol claims the token at the hub and keeps what it returns, adopting
// the node id the hub minted. A store with changes of its own (it ran
// standalone) cannot enrol: its history carries its old id.
func enrol(ctx context.Context, db *sqlite.DB, hubURL, token string, clientTLS *tls.Config) error {
	if n, err := db.OutboxLen(ctx, false); err != nil || n > 0 {
		if err == nil {
			err = fmt.Errorf("edge: this store has %d changes of its own (it ran standalone); only an empty store can enrol: start with a new --data-dir", n)
		}
		return err
	}
	body, _ := json.Marshal(kassa.EnrolmentClaim{Token: token})
	req, err := http.NewRequestWithContext(ctx, "POST", strings.TrimSuffix(hubURL, "/")+"/api/v1/sync/enrol", bytes.NewReader(body))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	res, err := (&http.Client{Timeout: 30 * time.Second, Transport: &http.Transport{TLSClientConfig: clientTLS}}).Do(req)
	if err != nil {
		return fmt.Errorf("edge: enrol at %s: %w", hubURL, err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	if res.StatusCode != 200 {
		return fmt.Errorf("edge: enrol at %s: %d %s", hubURL, res.StatusCode, b)
	}
	var out struct {
		Data kassa.EnrolResult `json:"data"`
	}
	if err := json.Unmarshal(b, &out); err != nil {
		return err
	}
	if err := db.AdoptNodeID(ctx, out.Data.NodeID); err != nil {
		return fmt.Errorf("edge: enrol: %w", err)
	}
	// The org goes last: it marks the edge enrolled.
	for _, kv := range [][2]string{{metaLocation, out.Data.LocationID}, {metaLeafURL, out.Data.LeafURL},
		{metaPassword, out.Data.LeafPassword}, {metaCursor, "0"}, {metaOrg, out.Data.OrgID}} {
		if err := db.SetMeta(ctx, kv[0], kv[1]); err != nil {
			return err
		}
	}
	return nil
}

// edgeStore adapts the edge's store to the link.
type edgeStore struct {
	db  *sqlite.DB
	id  link.Identity
	lag prometheus.Observer
}

func (s *edgeStore) Unsent(ctx context.Context, after int64, limit int) ([]link.Entry, error) {
	log, err := s.db.ChangesAfter(ctx, after, limit, true, nil, "")
	out := make([]link.Entry, len(log))
	for i, e := range log {
		out[i] = link.Entry{Seq: e.Seq, Change: e.Change}
	}
	return out, err
}

func (s *edgeStore) MarkSent(ctx context.Context, seq int64) error { return s.db.MarkSent(ctx, seq) }

func (s *edgeStore) ApplyRemote(ctx context.Context, cs []change.Change) error {
	_, _, err := s.db.ApplyEach(ctx, cs, false)
	if err == nil && s.lag != nil {
		now := time.Now()
		for _, c := range cs {
			s.lag.Observe(now.Sub(c.HLC.Time()).Seconds())
		}
	}
	return err
}

func (s *edgeStore) Cursor(ctx context.Context) (int64, error) {
	v, err := s.db.Meta(ctx, metaCursor)
	if err != nil || v == "" {
		return 0, err
	}
	return strconv.ParseInt(v, 10, 64)
}

func (s *edgeStore) SetCursor(ctx context.Context, seq int64) error {
	return s.db.SetMeta(ctx, metaCursor, strconv.FormatInt(seq, 10))
}

func (s *edgeStore) Digests(ctx context.Context) (map[string]string, error) {
	return s.db.Digests(ctx, s.id.Org, s.id.Location)
}

func (s *edgeStore) Committed() <-chan struct{} { return s.db.Committed() }

// edgeSync is the edge's kassa.SyncService.
type edgeSync struct {
	db   *sqlite.DB
	link func() *link.Edge
}

func (s *edgeSync) Status(ctx context.Context) (*kassa.SyncStatus, error) {
	if _, err := kassa.MustActor(ctx); err != nil {
		return nil, err
	}
	st := &kassa.SyncStatus{Node: kassa.NodeEdge, NodeID: s.db.NodeID}
	pending, err := s.db.OutboxLen(ctx, true)
	if err != nil {
		return nil, err
	}
	st.PendingUp = pending
	if e := s.link(); e != nil {
		ls := e.Status()
		st.Connected, st.Since, st.PendingDown, st.LastError = ls.Connected, ls.Since, ls.PendingDown, ls.LastError
		if !ls.LastVerified.IsZero() {
			st.LastVerified = &ls.LastVerified
		}
	} else {
		st.LastError = "not enrolled at a hub"
	}
	return st, nil
}

func (s *edgeSync) Conflicts(ctx context.Context, p kassa.Page) (kassa.List[kassa.Conflict], error) {
	return s.db.Conflicts(ctx, p)
}
