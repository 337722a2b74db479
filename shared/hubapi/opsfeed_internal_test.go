package hubapi

import (
	"context"
	"encoding/json"
	"log/slog"
	"sync"
	"testing"
	"time"

	"kassa.dev/shared/kassa"
	"kassa.dev/sync/wait"
)

// opsSync is a kassa.SyncService whose edges the test sets per org; it
// counts the polls.
type opsSync struct {
	mu    sync.Mutex
	edges map[string][]kassa.EdgeStatus
	polls map[string]int
}

func (s *opsSync) Status(ctx context.Context) (*kassa.SyncStatus, error) {
	a, err := kassa.MustActor(ctx)
	if err != nil {
		return nil, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.polls[a.OrgID]++
	return &kassa.SyncStatus{Node: kassa.NodeHub, Edges: append([]kassa.EdgeStatus(nil), s.edges[a.OrgID]...)}, nil
}

func (s *opsSync) Conflicts(ctx context.Context, f kassa.ConflictFilter) (kassa.List[kassa.Conflict], error) {
	return kassa.List[kassa.Conflict]{}, nil
}

func (s *opsSync) set(org string, es ...kassa.EdgeStatus) {
	s.mu.Lock()
	s.edges[org] = es
	s.mu.Unlock()
}

func (s *opsSync) pollsOf(org string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.polls[org]
}

// opsRecorder is a subscriber that keeps what it was sent.
type opsRecorder struct {
	mu   sync.Mutex
	msgs []kassa.OpsMessage
}

func (r *opsRecorder) Send(v any) error {
	r.mu.Lock()
	var m kassa.OpsMessage
	if err := json.Unmarshal(v.(json.RawMessage), &m); err != nil {
		return err
	}
	r.msgs = append(r.msgs, m)
	r.mu.Unlock()
	return nil
}

func (r *opsRecorder) all() []kassa.OpsMessage {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]kassa.OpsMessage(nil), r.msgs...)
}

func (r *opsRecorder) has(typ, node string) bool {
	for _, m := range r.all() {
		for _, e := range m.Edges {
			if m.Type == typ && e.NodeID == node {
				return true
			}
		}
	}
	return false
}

func TestOpsFeedOnePollerPerOrgSharedAndStoppedByTheLast(t *testing.T) {
	svc := &opsSync{edges: map[string][]kassa.EdgeStatus{}, polls: map[string]int{}}
	svc.set("A", kassa.EdgeStatus{NodeID: "a1"})
	svc.set("B", kassa.EdgeStatus{NodeID: "b1"})
	fs := newOpsFeeds(svc, slog.New(slog.DiscardHandler), time.Now)
	fs.poll = 5 * time.Millisecond

	var a1, a2, b1 opsRecorder
	stopA1 := fs.subscribe("A", &a1)
	wait.For(t, 5*time.Second, "A's first subscriber's snapshot", func() bool { return a1.has(kassa.OpsSnapshot, "a1") })
	stopA2 := fs.subscribe("A", &a2)
	stopB1 := fs.subscribe("B", &b1)
	wait.For(t, 5*time.Second, "the snapshots", func() bool { return a2.has(kassa.OpsSnapshot, "a1") && b1.has(kassa.OpsSnapshot, "b1") })
	if fs.running() != 2 {
		t.Fatalf("%d pollers for 2 orgs", fs.running())
	}

	// A change at A reaches both of A's subscribers as a diff of that row
	// only; B's subscriber never hears of A's edges.
	svc.set("A", kassa.EdgeStatus{NodeID: "a1"}, kassa.EdgeStatus{NodeID: "a2"})
	wait.For(t, 5*time.Second, "the diff at both A pages", func() bool { return a1.has(kassa.OpsDiff, "a2") && a2.has(kassa.OpsDiff, "a2") })
	for _, m := range a1.all() {
		if m.Type == kassa.OpsDiff && len(m.Edges) != 1 {
			t.Fatalf("diff resends unchanged rows: %+v", m)
		}
	}
	polled := svc.pollsOf("A")
	wait.For(t, 5*time.Second, "more of B's heartbeats", func() bool { return len(b1.all()) > 3 })
	for _, m := range b1.all() {
		for _, e := range m.Edges {
			if e.NodeID != "b1" {
				t.Fatalf("B was sent A's edge: %+v", m)
			}
		}
	}
	// Two pages of A, one poll a tick: never a poll per page.
	if got, sent := svc.pollsOf("A"), len(a1.all()); got > sent+2 {
		t.Fatalf("%d polls of A for %d messages to each page: a poller per page?", got, sent)
	}
	if polled == 0 {
		t.Fatal("A never polled")
	}

	stopA1()
	if fs.running() != 2 {
		t.Fatal("A's poller stopped while a page still watches")
	}
	fs.mu.Lock()
	feedA := fs.orgs["A"]
	fs.mu.Unlock()
	stopA2()
	stopB1()
	if fs.running() != 0 {
		t.Fatalf("%d pollers run with no page", fs.running())
	}
	select {
	case <-feedA.done:
	case <-time.After(5 * time.Second):
		t.Fatal("A's poller goroutine did not end")
	}
	before := svc.pollsOf("A")
	n := len(a2.all())
	// Nobody is sent anything after leaving, and nothing polls.
	stopC := fs.subscribe("C", &opsRecorder{}) // a poller that runs, so time passes in ticks
	defer stopC()
	wait.For(t, 5*time.Second, "C's poller", func() bool { return svc.pollsOf("C") > 3 })
	if svc.pollsOf("A") != before || len(a2.all()) != n {
		t.Fatal("A is still polled or sent to after its last page left")
	}
}
