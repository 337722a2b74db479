package kassa

import (
	"math"
	"reflect"
	"slices"
	"time"
)

// The ops monitor's feed (GET /api/v1/sync/ws at the hub) sends a snapshot
// of the org's edges and open conflicts, then only what changed. OpsState
// is the feed's memory of what it last sent; Update turns a fresh poll into
// the next message. With 1,000 edges a poll every second must not resend
// every row: a connected edge's last_seen and reported_at move on every
// pull, so those two alone count as a change only once they have moved by
// OpsTimeStep (the heartbeat's as_of says the rest is current), and lags
// only when they move by 10 ms or more. Any other field that differs sends
// the row at once; so does connected turning false.

// Ops feed message types.
const (
	OpsSnapshot  = "snapshot"  // every edge and every open conflict
	OpsDiff      = "diff"      // changed edge rows, opened and resolved conflicts
	OpsHeartbeat = "heartbeat" // nothing changed as of as_of
)

// OpsTimeStep is how far an edge's last_seen or reported_at must move,
// with nothing else changed, before its row is sent again.
const OpsTimeStep = 10 * time.Second

// OpsMessage is one message of the ops feed. Snapshot: Edges holds every
// edge, Conflicts every open conflict. Diff: Edges the rows that changed
// (whole rows, replacing the client's), RemovedEdges the edges no longer
// enrolled, Conflicts the newly opened, Resolved the ids no longer open.
type OpsMessage struct {
	Type         string       `json:"type"`
	AsOf         time.Time    `json:"as_of"`
	Edges        []EdgeStatus `json:"edges,omitempty"`
	RemovedEdges []string     `json:"removed_edges,omitempty"`
	Conflicts    []Conflict   `json:"conflicts,omitempty"`
	Resolved     []string     `json:"resolved,omitempty"`
}

// OpsState is what an ops feed last sent: edges by node id in the order
// the status listed them, and open conflicts by id. The zero value is
// empty and ready to use.
type OpsState struct {
	edges     map[string]EdgeStatus
	order     []string
	conflicts map[string]Conflict
	corder    []string
}

// Snapshot is the message a new subscriber gets: the state as last sent.
func (s *OpsState) Snapshot(asOf time.Time) OpsMessage {
	m := OpsMessage{Type: OpsSnapshot, AsOf: asOf, Edges: make([]EdgeStatus, 0, len(s.order)), Conflicts: make([]Conflict, 0, len(s.corder))}
	for _, id := range s.order {
		m.Edges = append(m.Edges, s.edges[id])
	}
	for _, id := range s.corder {
		m.Conflicts = append(m.Conflicts, s.conflicts[id])
	}
	return m
}

// Update takes a fresh poll (every edge, the open conflicts), records
// what it sends and returns the message for current subscribers: a diff
// of what changed, or a heartbeat when nothing did.
func (s *OpsState) Update(asOf time.Time, edges []EdgeStatus, open []Conflict) OpsMessage {
	m := OpsMessage{Type: OpsDiff, AsOf: asOf}
	next := make(map[string]EdgeStatus, len(edges))
	order := make([]string, 0, len(edges))
	for _, e := range edges {
		old, had := s.edges[e.NodeID]
		if had && !EdgeMoved(old, e) {
			e = old // keep what subscribers hold, so small moves add up
		} else {
			m.Edges = append(m.Edges, e)
		}
		next[e.NodeID] = e
		order = append(order, e.NodeID)
	}
	for _, id := range s.order {
		if _, ok := next[id]; !ok {
			m.RemovedEdges = append(m.RemovedEdges, id)
		}
	}
	s.edges, s.order = next, order

	cnext := make(map[string]Conflict, len(open))
	corder := make([]string, 0, len(open))
	for _, c := range open {
		if _, had := s.conflicts[c.ID]; !had {
			m.Conflicts = append(m.Conflicts, c)
		}
		cnext[c.ID] = c
		corder = append(corder, c.ID)
	}
	for _, id := range s.corder {
		if _, ok := cnext[id]; !ok {
			m.Resolved = append(m.Resolved, id)
		}
	}
	s.conflicts, s.corder = cnext, corder
	if len(m.Edges)+len(m.RemovedEdges)+len(m.Conflicts)+len(m.Resolved) == 0 {
		m.Type = OpsHeartbeat
	}
	return m
}

// EdgeMoved reports whether now differs from sent enough to send the row
// again (see OpsTimeStep).
func EdgeMoved(sent, now EdgeStatus) bool {
	if sent.Connected && !now.Connected {
		return true
	}
	if timeMoved(sent.LastSeen, now.LastSeen) || timeMoved(sent.ReportedAt, now.ReportedAt) ||
		lagMoved(sent.LagP50, now.LagP50) || lagMoved(sent.LagP99, now.LagP99) {
		return true
	}
	if !timeEq(sent.LastVerified, now.LastVerified) || !timeEq(sent.ConnectedSince, now.ConnectedSince) ||
		!sent.EnrolledAt.Equal(now.EnrolledAt) || !slices.Equal(sent.VerifyDiffer, now.VerifyDiffer) {
		return true
	}
	// The rest by value; the fields compared above are cleared first, so
	// a field added to EdgeStatus later counts without being named here.
	clear := func(e EdgeStatus) EdgeStatus {
		e.LastSeen, e.ReportedAt, e.LastVerified, e.ConnectedSince = nil, nil, nil, nil
		e.LagP50, e.LagP99, e.EnrolledAt, e.VerifyDiffer = 0, 0, time.Time{}, nil
		return e
	}
	return !reflect.DeepEqual(clear(sent), clear(now))
}

func timeEq(a, b *time.Time) bool {
	if a == nil || b == nil {
		return a == b
	}
	return a.Equal(*b)
}

func timeMoved(a, b *time.Time) bool {
	if a == nil || b == nil {
		return (a == nil) != (b == nil)
	}
	d := b.Sub(*a)
	return d >= OpsTimeStep || d <= -OpsTimeStep
}

func lagMoved(a, b float64) bool { return math.Abs(a-b) >= 0.01 }
