package node

import (
	"context"
	"errors"
	"fmt"
	"runtime/pprof"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"kassa.dev/shared/kassa"
	"kassa.dev/shared/sqlite"
	"kassa.dev/sync/change"
	"kassa.dev/sync/link"
)

// The hub's side of sync that touches the store: enrolment, leaf
// authentication, the link's store, the edge watch, the sync status and
// the routing of money operations to a location's edge. The hub binary
// wires these to its NATS server; it does not reach into the store.

// EnrolmentService returns the hub's enrolment service; leafURL gives the
// leaf URL handed to enrolling edges, onRevoke is told the node id of a
// revoked edge (to cut its leaf connection).
func (n *Node) EnrolmentService(leafURL func() string, onRevoke func(nodeID string)) kassa.EnrolmentService {
	s := sqlite.NewEnrolmentService(n.db, leafURL)
	s.OnRevoke(onRevoke)
	return s
}

// ClusterEnrolmentService is EnrolmentService for a hub of a cluster:
// leafURLs gives every hub's leaf URL, this hub's first.
func (n *Node) ClusterEnrolmentService(leafURLs func() []string, onRevoke func(nodeID string)) kassa.EnrolmentService {
	s := sqlite.NewEnrolmentService(n.db, func() string { return leafURLs()[0] })
	s.SetLeafURLs(leafURLs)
	s.OnRevoke(onRevoke)
	return s
}

// LeafIdentity returns the identity of the enrolled (not revoked) edge
// whose leaf credentials these are, or nil.
func (n *Node) LeafIdentity(ctx context.Context, user, password string) *link.Identity {
	sn := n.db.FindSyncNode(ctx, user, password, true)
	if sn == nil {
		return nil
	}
	return &link.Identity{Org: sn.OrgID, Location: sn.LocationID, Node: sn.NodeID}
}

// LocationEdge returns the newest edge enrolled (and not revoked) at a
// location of org, or "" when it has none.
func (n *Node) LocationEdge(ctx context.Context, org, location string) (string, error) {
	nodes, err := n.db.SyncNodes(ctx, org)
	if err != nil {
		return "", err
	}
	edge := ""
	for _, sn := range nodes { // oldest first
		if sn.LocationID == location {
			edge = sn.NodeID
		}
	}
	return edge, nil
}

// RefusedCounters are /metrics counters of the changes the trust boundary
// refused, one per reason.
func (n *Node) RefusedCounters() []prometheus.Collector {
	var out []prometheus.Collector
	for _, code := range sqlite.RefusalCodes {
		out = append(out, prometheus.NewCounterFunc(prometheus.CounterOpts{Name: "kassa_sync_refused_total",
			Help:        "Changes pushed by edges that the trust boundary refused and quarantined, by reason.",
			ConstLabels: prometheus.Labels{"reason": code}}, func() float64 { return float64(n.db.RefusedCounts()[code]) }))
	}
	return out
}

// EdgeWatchJob tells edges, through h, when the hub's log has news for
// their scope, from the log's current end on.
func (n *Node) EdgeWatchJob(ctx context.Context, h *link.Hub) (Job, error) {
	start, err := n.db.LastSeq(ctx)
	if err != nil {
		return Job{}, err
	}
	const batch = 5000
	heads := func(ctx context.Context, after int64) ([]link.Head, error) {
		hs, err := n.db.LogHeadsAfter(ctx, after, batch)
		out := make([]link.Head, len(hs))
		for i, h := range hs {
			out[i] = link.Head{Seq: h.Seq, Org: h.OrgID, Location: h.LocationID}
		}
		return out, err
	}
	return Job{Name: "edge-watch", Run: func(ctx context.Context) error {
		h.Watch(ctx, n.db.Committed(), start, batch, heads)
		return nil
	}}, nil
}

// HubLinkStore is the store as the hub's sync link sees it, noting in
// edges who spoke; lag, if not nil, observes the time from a change made
// at an edge to its apply here.
func (n *Node) HubLinkStore(edges *EdgeBook, lag prometheus.Observer) link.HubStore {
	return &hubStore{db: n.db, edges: edges, lag: lag}
}

func entries(log []sqlite.LogEntry, err error) ([]link.Entry, error) {
	out := make([]link.Entry, len(log))
	for i, e := range log {
		out[i] = link.Entry{Seq: e.Seq, Change: e.Change}
	}
	return out, err
}

// pushLabel and pullLabel label the contexts of an edge's push and pull
// (runtime/pprof), as the node's jobs are labelled (Jobs.Start).
var (
	pushLabel = pprof.Labels("kassa", "push")
	pullLabel = pprof.Labels("kassa", "pull")
)

// hubStore adapts the hub's store to the link.
type hubStore struct {
	db    *sqlite.DB
	edges *EdgeBook
	lag   prometheus.Observer // change made at an edge → applied at the hub

	epochMu sync.Mutex // the log's epoch, read once (a restore runs offline)
	epoch   string
}

// Prepare decodes what an edge's records carry before their push's turn.
func (s *hubStore) Prepare(cs []change.Change) { s.db.Prepare(cs) }

func (s *hubStore) Ingest(ctx context.Context, from link.Identity, cs []change.Change) (int, int, []link.Refusal, error) {
	ctx = pprof.WithLabels(ctx, pushLabel) // the statements' round trips are counted as the push's (pg.TripsEnv)
	res, _, err := s.db.Ingest(ctx, sqlite.EdgeScope{OrgID: from.Org, LocationID: from.Location, NodeID: from.Node,
		Enrolment: sqlite.EnrolmentChecked}, cs)
	if errors.Is(err, sqlite.ErrUnknownEdge) {
		return 0, 0, nil, err
	}
	s.edges.saw(from, -1)
	if err == nil {
		now := time.Now()
		lags := make([]float64, len(cs))
		for i, c := range cs {
			lags[i] = now.Sub(c.HLC.Time()).Seconds()
			if s.lag != nil {
				s.lag.Observe(lags[i])
			}
		}
		s.edges.lagged(from.Node, lags)
	}
	return res.Applied, res.Duplicate, linkRefusals(res.Refused), err
}

func (s *hubStore) Refusals(ctx context.Context, of link.Identity) ([]link.Refusal, int, error) {
	rs, n, err := s.db.EdgeRefusals(ctx, of.Org, of.Location, of.Node, link.MaxRefusals)
	return linkRefusals(rs), n, err
}

// linkRefusals are refusals as the link carries them.
func linkRefusals(rs []sqlite.Refused) []link.Refusal {
	out := make([]link.Refusal, len(rs))
	for i, r := range rs {
		out[i] = link.Refusal{ChangeID: r.ChangeID, Entity: r.Entity, EntityID: r.EntityID, Op: r.Op, Status: r.Status,
			Fields: r.Fields, Reason: r.Reason, Error: r.Error, At: r.At}
	}
	return out
}

func (s *hubStore) Log(ctx context.Context, to link.Identity, req link.PullRequest) ([]link.Entry, int64, int64, error) {
	ctx = pprof.WithLabels(ctx, pullLabel)
	after, limit := req.After, req.Limit
	s.edges.saw(to, after)
	s.edges.report(to.Node, &req)
	// Bound the read by the newest position first: entries committed while
	// it runs must not be skipped when the cursor moves past what was read.
	last, err := s.db.LastSeq(ctx)
	if err != nil {
		return nil, 0, 0, err
	}
	exclude := to.Node // the edge has its own records, unless restored from a backup
	if req.Own {
		exclude = ""
	}
	es, err := entries(s.db.ChangesBetween(ctx, after, last, limit, sqlite.LogFilter{Scope: &sqlite.Scope{OrgID: to.Org, LocationID: to.Location}, ExcludeOrigin: exclude}))
	if err != nil {
		return nil, 0, 0, err
	}
	upTo := last
	if len(es) == limit {
		upTo = es[len(es)-1].Seq
	}
	if es, err = downgrade(ctx, es, req.Format); err != nil {
		return nil, 0, 0, err
	}
	return es, upTo, last, nil
}

// downgrade serves an edge of an older change-record format: each entry
// without the fields its store lacks, and none it cannot hold (its cursor
// still moves past them: upTo is computed before).
func downgrade(ctx context.Context, es []link.Entry, format int) ([]link.Entry, error) {
	if format == change.Format {
		return es, nil
	}
	schema, err := sqlite.SchemaOf(ctx, format)
	if err != nil {
		return nil, err
	}
	out := es[:0]
	for _, e := range es {
		if c, ok := schema.Downgrade(e.Change); ok {
			out = append(out, link.Entry{Seq: e.Seq, Change: c})
		}
	}
	return out, nil
}

func (s *hubStore) Digests(ctx context.Context, of link.Identity, format int) (map[string]string, error) {
	var schema *sqlite.Schema
	if format != change.Format {
		var err error
		if schema, err = sqlite.SchemaOf(ctx, format); err != nil {
			return nil, err
		}
	}
	return s.db.DigestsAt(ctx, of.Org, of.Location, schema)
}

func (s *hubStore) LogWaiting(ctx context.Context, of link.Identity) (bool, error) {
	return s.db.LogWaiting(ctx, of.Node)
}

func (s *hubStore) Epoch(ctx context.Context) (string, error) {
	s.epochMu.Lock()
	defer s.epochMu.Unlock()
	if s.epoch == "" {
		e, err := s.db.LogEpoch(ctx)
		if err != nil {
			return "", err // not kept: the next pull reads again
		}
		s.epoch = e
	}
	return s.epoch, nil
}

func (s *hubStore) Known(ctx context.Context, id link.Identity) bool {
	n := s.db.FindSyncNode(ctx, id.Node, "", false)
	return n != nil && n.OrgID == id.Org && n.LocationID == id.Location
}

// HubSync returns the hub's kassa.SyncService: every enrolled edge of the
// org, with what edges records of them.
func (n *Node) HubSync(edges *EdgeBook) kassa.SyncService { return &hubSync{db: n.db, edges: edges} }

// hubSync is the hub's kassa.SyncService.
type hubSync struct {
	db    *sqlite.DB
	edges *EdgeBook
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
	counts, err := s.db.OpenConflicts(ctx, a.OrgID)
	if err != nil {
		return nil, err
	}
	open := make(map[string]sqlite.OpenConflictCount, len(counts))
	for _, c := range counts {
		open[c.LocationID] = c
	}
	st := &kassa.SyncStatus{Node: kassa.NodeHub, NodeID: s.db.NodeID, Connected: true, Edges: make([]kassa.EdgeStatus, 0, len(nodes))}
	cursors := make([]sqlite.EdgeCursor, len(nodes))
	now := time.Now()
	for i, n := range nodes {
		es := s.edges.status(n.NodeID, now)
		es.NodeID, es.LocationID, es.EnrolledAt = n.NodeID, n.LocationID, n.EnrolledAt
		es.OpenConflicts, es.Quarantined = open[n.LocationID].Open, open[n.LocationID].Quarantined
		st.Edges = append(st.Edges, es)
		cursors[i] = sqlite.EdgeCursor{NodeID: n.NodeID, OrgID: n.OrgID, LocationID: n.LocationID, Cursor: s.edges.cursorOf(n.NodeID)}
	}
	down, err := s.db.PendingDown(ctx, cursors)
	if err != nil {
		return nil, err
	}
	for i := range st.Edges {
		st.Edges[i].PendingDown = down[st.Edges[i].NodeID]
	}
	return st, nil
}

func (s *hubSync) Conflicts(ctx context.Context, f kassa.ConflictFilter) (kassa.List[kassa.Conflict], error) {
	return s.db.Conflicts(ctx, f)
}

// ScopeComparison is an edge's scope as held by the edge and by its hub:
// each replicated table's digest ("rows:hash") in both stores.
type ScopeComparison struct {
	HubID, EdgeID string
	Org, Location string
	Hub, Edge     map[string]string
}

// CompareScope opens the hub's and the edge's stores from their data
// directories (both may keep running: it starts no background work and
// only reads) and digests the edge's scope in each (hub verify).
func CompareScope(ctx context.Context, hubDir, edgeDir string) (*ScopeComparison, error) {
	hub, err := OpenStoreAt(ctx, hubDir)
	if err != nil {
		return nil, err
	}
	defer hub.Close()
	edge, err := OpenStoreAt(ctx, edgeDir)
	if err != nil {
		return nil, err
	}
	defer edge.Close()
	c := &ScopeComparison{HubID: hub.NodeID, EdgeID: edge.NodeID}
	c.Org, _ = edge.Meta(ctx, metaOrg)
	c.Location, _ = edge.Meta(ctx, metaLocation)
	if c.Org == "" {
		return nil, fmt.Errorf("the edge in %s is not enrolled", edgeDir)
	}
	if c.Hub, err = hub.Digests(ctx, c.Org, c.Location); err != nil {
		return nil, err
	}
	if c.Edge, err = edge.Digests(ctx, c.Org, c.Location); err != nil {
		return nil, err
	}
	return c, nil
}
