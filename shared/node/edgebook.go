package node

import (
	"context"
	"math"
	"slices"
	"sync"
	"time"

	"kassa.dev/shared/kassa"
	"kassa.dev/shared/sqlite"
	"kassa.dev/sync/link"
)

// The hub's book of its edges: the fast path of GET /sync/status, the ops
// monitor and /metrics. Each pull and push of an edge updates its entry
// in memory only; a job (EdgeReportJob) writes the entries that changed
// to the store's edge_reports table every EdgeReportEvery, in one unit of
// work, and the book is loaded from that table at start, so the status is
// right after a restart. Memory per edge is bounded: the lag window holds
// the last lagWindow samples.

// ConnectedWithin is how recently an edge must have spoken to the hub to
// count as connected.
const ConnectedWithin = 10 * time.Second

// EdgeReportEvery is how often the hub writes the edges' changed reports.
const EdgeReportEvery = 3 * time.Second

// lagWindow is how many recent lags the hub keeps per edge.
const lagWindow = 256

// edgeEntry is what the hub knows of one edge.
type edgeEntry struct {
	org, location string
	seen, since   time.Time // last seen; start of the current state (connected streak, or last seen)
	cursor        int64
	pendingUp     int
	verified      time.Time
	version       string
	verifyOK      *bool
	differ        []string
	reportedAt    time.Time
	lags          [lagWindow]float32 // a ring of seconds
	nLags         int                // samples in the ring (at most lagWindow)
	next          int                // where the next sample goes
	p50, p99      float64            // loaded from the store, until new samples arrive
	hub           string             // the hub its leaf link was last attached to (in memory only)
	dirty         bool
}

// EdgeBook remembers when each edge last spoke to the hub, how far it
// pulled, its recent lags and the figures it reported.
type EdgeBook struct {
	mu    sync.Mutex
	edges map[string]*edgeEntry
}

// NewEdgeBook returns an empty book.
func NewEdgeBook() *EdgeBook { return &EdgeBook{edges: map[string]*edgeEntry{}} }

func (b *EdgeBook) entry(node string) *edgeEntry {
	e := b.edges[node]
	if e == nil {
		e = &edgeEntry{cursor: -1}
		b.edges[node] = e
	}
	return e
}

// Forget drops a revoked edge from the book (its saved report is left
// out when the hub loads them).
func (b *EdgeBook) Forget(node string) {
	b.mu.Lock()
	defer b.mu.Unlock()
	delete(b.edges, node)
}

// Attach notes that an edge's leaf link is attached to hub (any hub of
// the cluster: every hub hears of every leaf session).
func (b *EdgeBook) Attach(node, hub string) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.entry(node).hub = hub
}

// Connected counts the edges that spoke in the last ConnectedWithin.
func (b *EdgeBook) Connected() int {
	b.mu.Lock()
	defer b.mu.Unlock()
	n, now := 0, time.Now()
	for _, e := range b.edges {
		if now.Sub(e.seen) < ConnectedWithin {
			n++
		}
	}
	return n
}

// saw notes that the edge spoke now; cursor, unless negative, is how far
// it has pulled.
func (b *EdgeBook) saw(id link.Identity, cursor int64) {
	now := ms(time.Now())
	b.mu.Lock()
	defer b.mu.Unlock()
	e := b.entry(id.Node)
	e.org, e.location = id.Org, id.Location
	if now.Sub(e.seen) >= ConnectedWithin {
		e.since = now // it (re)connected
	}
	e.seen = now
	if cursor >= 0 {
		e.cursor = cursor
	}
	e.dirty = true
}

// ms is t in UTC to the millisecond, as the store keeps times.
func ms(t time.Time) time.Time { return t.UTC().Truncate(time.Millisecond) }

// report keeps the figures an edge sent with a pull. An edge older than
// v0.6.0 sends no version, verification result or report time.
func (b *EdgeBook) report(node string, r *link.PullRequest) {
	b.mu.Lock()
	defer b.mu.Unlock()
	e := b.entry(node)
	e.pendingUp = r.PendingUp
	if !r.LastVerified.IsZero() {
		e.verified = ms(r.LastVerified)
	}
	e.version, e.reportedAt = r.Version, ms(r.ReportedAt)
	if r.VerifyOK != nil {
		ok := *r.VerifyOK
		e.verifyOK, e.differ = &ok, slices.Clone(r.VerifyDiffer)
	}
	e.dirty = true
}

// lagged adds the lags (seconds) of changes the edge pushed.
func (b *EdgeBook) lagged(node string, lags []float64) {
	if len(lags) == 0 {
		return
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	e := b.entry(node)
	for _, l := range lags {
		e.lags[e.next] = float32(l)
		e.next = (e.next + 1) % lagWindow
		e.nLags = min(e.nLags+1, lagWindow)
	}
	e.dirty = true
}

// quantiles returns the p50 and p99 of the edge's lag window (the saved
// ones while the window is empty).
func (e *edgeEntry) quantiles() (float64, float64) {
	if e.nLags == 0 {
		return e.p50, e.p99
	}
	var buf [lagWindow]float32
	s := buf[:e.nLags]
	copy(s, e.lags[:e.nLags])
	slices.Sort(s)
	return float64(quantile(s, 0.5)), float64(quantile(s, 0.99))
}

// quantile is the nearest-rank q-quantile of sorted samples.
func quantile(sorted []float32, q float64) float32 {
	i := int(math.Ceil(q*float64(len(sorted)))) - 1
	return sorted[max(min(i, len(sorted)-1), 0)]
}

func (b *EdgeBook) cursorOf(node string) int64 {
	b.mu.Lock()
	defer b.mu.Unlock()
	if e := b.edges[node]; e != nil && e.cursor >= 0 {
		return e.cursor
	}
	return 0
}

// status returns what the book knows of an edge, as of now.
func (b *EdgeBook) status(node string, now time.Time) kassa.EdgeStatus {
	b.mu.Lock()
	defer b.mu.Unlock()
	es := kassa.EdgeStatus{VerifyDiffer: []string{}}
	e := b.edges[node]
	if e != nil {
		es.Hub = e.hub
	}
	if e == nil || e.seen.IsZero() {
		return es
	}
	seen := e.seen
	es.LastSeen = &seen
	es.Connected = now.Sub(seen) < ConnectedWithin
	since := seen // disconnected: since it was last seen
	if es.Connected {
		since = e.since
	}
	es.ConnectedSince = &since
	es.PendingUp, es.Version = e.pendingUp, e.version
	if !e.verified.IsZero() {
		v := e.verified
		es.LastVerified = &v
	}
	if !e.reportedAt.IsZero() {
		r := e.reportedAt
		es.ReportedAt = &r
	}
	if e.verifyOK != nil {
		ok := *e.verifyOK
		es.VerifyOK = &ok
		es.VerifyDiffer = append(es.VerifyDiffer, e.differ...)
	}
	es.LagP50, es.LagP99 = e.quantiles()
	return es
}

// dirtyReports returns the reports of the entries changed since the last
// call, and marks them clean.
func (b *EdgeBook) dirtyReports() []sqlite.EdgeReport {
	b.mu.Lock()
	defer b.mu.Unlock()
	var out []sqlite.EdgeReport
	for node, e := range b.edges {
		if !e.dirty || e.seen.IsZero() {
			continue
		}
		e.dirty = false
		r := sqlite.EdgeReport{NodeID: node, LastSeen: e.seen, ConnectedSince: e.since, Cursor: max(e.cursor, 0),
			PendingUp: e.pendingUp, Version: e.version, ReportedAt: e.reportedAt, LastVerified: e.verified,
			VerifyOK: e.verifyOK, VerifyDiffer: e.differ}
		r.LagP50, r.LagP99 = e.quantiles()
		out = append(out, r)
	}
	return out
}

// heard takes in when another hub last heard each edge: a newer hearing
// moves the edge's last seen (and starts a connected streak), so the edge
// shows connected at every hub while any hears it. It does not make the
// entry dirty: this hub writes only what it heard itself.
func (b *EdgeBook) heard(seen map[string]time.Time) {
	b.mu.Lock()
	defer b.mu.Unlock()
	for node, at := range seen {
		e := b.entry(node)
		if !at.After(e.seen) {
			continue
		}
		if at.Sub(e.seen) >= ConnectedWithin {
			e.since = ms(at)
		}
		e.seen = ms(at)
	}
}

// load fills the book from saved reports (at start).
func (b *EdgeBook) load(rs []sqlite.EdgeReport) {
	b.mu.Lock()
	defer b.mu.Unlock()
	for _, r := range rs {
		e := b.entry(r.NodeID)
		e.org, e.location = r.OrgID, r.LocationID
		e.seen, e.since, e.cursor, e.pendingUp = r.LastSeen, r.ConnectedSince, r.Cursor, r.PendingUp
		e.version, e.reportedAt, e.verified = r.Version, r.ReportedAt, r.LastVerified
		e.verifyOK, e.differ, e.p50, e.p99 = r.VerifyOK, r.VerifyDiffer, r.LagP50, r.LagP99
	}
}

// EdgeReportJob loads the book from the store's saved reports now, and
// returns the job that saves the changed ones every EdgeReportEvery (and
// once more when it stops).
func (n *Node) EdgeReportJob(ctx context.Context, b *EdgeBook) (Job, error) {
	rs, err := n.db.EdgeReports(ctx)
	if err != nil {
		return Job{}, err
	}
	b.load(rs)
	return Job{Name: "edge-reports", Run: func(ctx context.Context) error {
		t := time.NewTicker(EdgeReportEvery)
		defer t.Stop()
		for {
			select {
			case <-ctx.Done():
				// The last word before the hub stops.
				stop, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
				defer cancel()
				return n.saveEdgeReports(stop, b.dirtyReports())
			case <-t.C:
				if err := n.saveEdgeReports(ctx, b.dirtyReports()); err != nil {
					return err
				}
				if err := n.readEdgesHeard(ctx, b); err != nil {
					return err
				}
			}
		}
	}}, nil
}

// readEdgesHeard takes in when the other hubs sharing the store last
// heard each edge (Config.EdgesHeard).
func (n *Node) readEdgesHeard(ctx context.Context, b *EdgeBook) error {
	if n.Config.EdgesHeard == nil {
		return nil
	}
	heard, err := n.Config.EdgesHeard(ctx)
	if err == nil {
		b.heard(heard)
	}
	return err
}

// saveEdgeReports writes rs through Config.SaveEdgeReports, or the store's.
func (n *Node) saveEdgeReports(ctx context.Context, rs []sqlite.EdgeReport) error {
	if n.Config.SaveEdgeReports != nil {
		return n.Config.SaveEdgeReports(ctx, rs)
	}
	return n.db.SaveEdgeReports(ctx, rs)
}
