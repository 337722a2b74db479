package kassa

import (
	"slices"
	"testing"
	"time"
)

func opsEdge(id string, seen time.Time) EdgeStatus {
	return EdgeStatus{NodeID: id, LocationID: "loc-" + id, Connected: true, LastSeen: &seen, ReportedAt: &seen, EnrolledAt: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)}
}

func edgeIDs(es []EdgeStatus) []string {
	var out []string
	for _, e := range es {
		out = append(out, e.NodeID)
	}
	return out
}

func TestOpsStateSendsOnlyWhatChanged(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)
	var s OpsState
	first := s.Update(t0, []EdgeStatus{opsEdge("a", t0), opsEdge("b", t0)}, []Conflict{{ID: "c1"}})
	if first.Type != OpsDiff || !slices.Equal(edgeIDs(first.Edges), []string{"a", "b"}) || len(first.Conflicts) != 1 {
		t.Fatalf("first poll: %+v", first)
	}
	if snap := s.Snapshot(t0); snap.Type != OpsSnapshot || !slices.Equal(edgeIDs(snap.Edges), []string{"a", "b"}) || len(snap.Conflicts) != 1 {
		t.Fatalf("snapshot: %+v", snap)
	}

	// A second later both edges pulled again: nothing worth sending.
	t1 := t0.Add(time.Second)
	if m := s.Update(t1, []EdgeStatus{opsEdge("a", t1), opsEdge("b", t1)}, []Conflict{{ID: "c1"}}); m.Type != OpsHeartbeat || !m.AsOf.Equal(t1) {
		t.Fatalf("unchanged poll: %+v", m)
	}

	// b's backlog grows, a conflict is resolved and another opened.
	b := opsEdge("b", t1)
	b.PendingUp = 7
	m := s.Update(t1, []EdgeStatus{opsEdge("a", t1), b}, []Conflict{{ID: "c2"}})
	if !slices.Equal(edgeIDs(m.Edges), []string{"b"}) || m.Edges[0].PendingUp != 7 ||
		len(m.Conflicts) != 1 || m.Conflicts[0].ID != "c2" || !slices.Equal(m.Resolved, []string{"c1"}) {
		t.Fatalf("diff: %+v", m)
	}

	// Small moves of last_seen add up against what was sent: after
	// OpsTimeStep the row goes out again, with the new time.
	var got []EdgeStatus
	for i := 2; i <= 11; i++ {
		ti := t0.Add(time.Duration(i) * time.Second)
		b := opsEdge("b", ti)
		b.PendingUp = 7
		got = append(got, s.Update(ti, []EdgeStatus{opsEdge("a", t1), b}, []Conflict{{ID: "c2"}}).Edges...)
	}
	if !slices.Equal(edgeIDs(got), []string{"b"}) || !got[0].LastSeen.Equal(t1.Add(OpsTimeStep)) {
		t.Fatalf("after %s of pulls: %+v", OpsTimeStep, got)
	}

	// a drops its link: sent at once. c is enrolled, b is gone.
	a := opsEdge("a", t1)
	a.Connected = false
	m = s.Update(t1, []EdgeStatus{a, opsEdge("c", t1)}, []Conflict{{ID: "c2"}})
	if !slices.Equal(edgeIDs(m.Edges), []string{"a", "c"}) || m.Edges[0].Connected || !slices.Equal(m.RemovedEdges, []string{"b"}) {
		t.Fatalf("disconnect: %+v", m)
	}
}

func TestEdgeMoved(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)
	base := opsEdge("a", t0)
	ok, no := true, false
	for name, tc := range map[string]struct {
		change func(*EdgeStatus)
		moved  bool
	}{
		"same":                 {func(e *EdgeStatus) {}, false},
		"seen 9 s later":       {func(e *EdgeStatus) { t := t0.Add(9 * time.Second); e.LastSeen = &t }, false},
		"reported 10 s later":  {func(e *EdgeStatus) { t := t0.Add(OpsTimeStep); e.ReportedAt = &t }, true},
		"lag by 5 ms":          {func(e *EdgeStatus) { e.LagP99 = 0.005 }, false},
		"lag by 20 ms":         {func(e *EdgeStatus) { e.LagP50 = 0.02 }, true},
		"version":              {func(e *EdgeStatus) { e.Version = "v0.6.0" }, true},
		"pending down":         {func(e *EdgeStatus) { e.PendingDown = 1 }, true},
		"verified":             {func(e *EdgeStatus) { e.VerifyOK = &ok }, true},
		"verify differs":       {func(e *EdgeStatus) { e.VerifyOK = &no; e.VerifyDiffer = []string{"orders"} }, true},
		"connected since":      {func(e *EdgeStatus) { t := t0; e.ConnectedSince = &t }, true},
		"same time other zone": {func(e *EdgeStatus) { t := t0.In(time.FixedZone("x", 3600)); e.LastSeen = &t }, false},
		"quarantined":          {func(e *EdgeStatus) { e.Quarantined = 1 }, true},
		"disconnected":         {func(e *EdgeStatus) { e.Connected = false }, true},
	} {
		e := base
		tc.change(&e)
		if got := EdgeMoved(base, e); got != tc.moved {
			t.Errorf("%s: moved = %v, want %v", name, got, tc.moved)
		}
	}
}
