package node

import (
	"context"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"kassa.dev/shared/sqlite"
)

// The hub's sync alarms' metrics (docs/ops.md, "Metrics for the alarms"):
// per edge from the in-memory book, plus one query for what edges have
// yet to pull and one for the open conflicts, per scrape.

var (
	edgeLabels         = []string{"org", "location", "node"}
	descEdgeConnected  = prometheus.NewDesc("kassa_sync_edge_connected", "1 when the edge spoke to the hub in the last 10 s.", edgeLabels, nil)
	descEdgeLastSeen   = prometheus.NewDesc("kassa_sync_edge_last_seen_timestamp_seconds", "Unix time the hub last heard from the edge.", edgeLabels, nil)
	descEdgePendingUp  = prometheus.NewDesc("kassa_sync_edge_pending_up", "Changes waiting at the edge, as it last reported.", edgeLabels, nil)
	descEdgePendingDn  = prometheus.NewDesc("kassa_sync_edge_pending_down", "Hub log entries the edge has not pulled.", edgeLabels, nil)
	descEdgeLag        = prometheus.NewDesc("kassa_sync_edge_lag_seconds", "Seconds from a change made at the edge to its commit at the hub, over its recent pushes.", append(edgeLabels[:3:3], "quantile"), nil)
	descEdgeVerifyOK   = prometheus.NewDesc("kassa_sync_edge_verify_ok", "1 when the edge's last verification agreed with the hub, 0 when it differed (absent before the first).", edgeLabels, nil)
	descConflictsOpen  = prometheus.NewDesc("kassa_sync_conflicts_open", "Open sync conflicts per org and kind (kind=\"quarantined\": quarantined records).", []string{"org", "kind"}, nil)
	edgeMetricsTimeout = 5 * time.Second
)

// edgeCollector is the prometheus.Collector of the sync alarms.
type edgeCollector struct {
	db    *sqlite.DB
	edges *EdgeBook
}

// EdgeCollector returns the /metrics collector of every edge's sync
// figures and of the open conflicts per org.
func (n *Node) EdgeCollector(b *EdgeBook) prometheus.Collector {
	return &edgeCollector{db: n.db, edges: b}
}

func (c *edgeCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{descEdgeConnected, descEdgeLastSeen, descEdgePendingUp, descEdgePendingDn, descEdgeLag, descEdgeVerifyOK, descConflictsOpen} {
		ch <- d
	}
}

// edgeSample is one edge's figures, copied out of the book.
type edgeSample struct {
	node, org, location string
	seen                time.Time
	cursor              int64
	pendingUp           int
	verifyOK            *bool
	p50, p99            float64
}

func (b *EdgeBook) samples() []edgeSample {
	b.mu.Lock()
	defer b.mu.Unlock()
	out := make([]edgeSample, 0, len(b.edges))
	for node, e := range b.edges {
		if e.org == "" || e.seen.IsZero() {
			continue
		}
		s := edgeSample{node: node, org: e.org, location: e.location, seen: e.seen, cursor: max(e.cursor, 0), pendingUp: e.pendingUp, verifyOK: e.verifyOK}
		s.p50, s.p99 = e.quantiles()
		out = append(out, s)
	}
	return out
}

func (c *edgeCollector) Collect(ch chan<- prometheus.Metric) {
	ctx, cancel := context.WithTimeout(context.Background(), edgeMetricsTimeout)
	defer cancel()
	now := time.Now()
	ss := c.edges.samples()
	cursors := make([]sqlite.EdgeCursor, len(ss))
	for i, s := range ss {
		cursors[i] = sqlite.EdgeCursor{NodeID: s.node, OrgID: s.org, LocationID: s.location, Cursor: s.cursor}
	}
	down, _ := c.db.PendingDown(ctx, cursors)
	gauge := func(d *prometheus.Desc, v float64, labels ...string) {
		ch <- prometheus.MustNewConstMetric(d, prometheus.GaugeValue, v, labels...)
	}
	for _, s := range ss {
		connected := 0.0
		if now.Sub(s.seen) < ConnectedWithin {
			connected = 1
		}
		gauge(descEdgeConnected, connected, s.org, s.location, s.node)
		gauge(descEdgeLastSeen, float64(s.seen.UnixMilli())/1000, s.org, s.location, s.node)
		gauge(descEdgePendingUp, float64(s.pendingUp), s.org, s.location, s.node)
		if down != nil {
			gauge(descEdgePendingDn, float64(down[s.node]), s.org, s.location, s.node)
		}
		gauge(descEdgeLag, s.p50, s.org, s.location, s.node, "0.5")
		gauge(descEdgeLag, s.p99, s.org, s.location, s.node, "0.99")
		if s.verifyOK != nil {
			ok := 0.0
			if *s.verifyOK {
				ok = 1
			}
			gauge(descEdgeVerifyOK, ok, s.org, s.location, s.node)
		}
	}
	kinds, err := c.db.OpenConflictKinds(ctx)
	if err != nil {
		return
	}
	for org, byKind := range kinds {
		for kind, n := range byKind {
			gauge(descConflictsOpen, float64(n), org, kind)
		}
	}
}
