package link

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats.go"

	"kassa.dev/sync/change"
	"kassa.dev/sync/wait"
)

// outboxStore is an edge's store with an outbox of n records and nothing
// to pull.
type outboxStore struct {
	offlineStore
	mu   sync.Mutex
	es   []Entry
	sent int64
}

func newOutboxStore(me Identity, n int) *outboxStore {
	s := &outboxStore{offlineStore: offlineStore{committed: make(chan struct{}, 1)}}
	for i := 1; i <= n; i++ {
		s.es = append(s.es, Entry{Seq: int64(i), Change: change.Change{ID: fmt.Sprintf("c%d", i), Entity: "order",
			EntityID: fmt.Sprintf("o%d", i), Op: change.OpInsert, OrgID: me.Org, LocationID: me.Location, Origin: me.Node}})
	}
	return s
}

func (s *outboxStore) Unsent(_ context.Context, after int64, limit int) ([]Entry, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []Entry
	for _, e := range s.es {
		if e.Seq > max(after, s.sent) && len(out) < limit {
			out = append(out, e)
		}
	}
	return out, nil
}

func (s *outboxStore) MarkSent(_ context.Context, seq int64) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.sent = max(s.sent, seq)
	return nil
}

func (s *outboxStore) Sent() int64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.sent
}

// gatedHub is a hub's store whose second Ingest waits for open and then
// fails when fail is set; it records the first change of every batch it
// applied, in order.
type gatedHub struct {
	open  chan struct{}
	fail  bool
	mu    sync.Mutex
	calls int
	heads []string
}

func (h *gatedHub) Ingest(_ context.Context, _ Identity, cs []change.Change) (int, int, []Refusal, error) {
	h.mu.Lock()
	h.calls++
	gated := h.calls == 2
	h.mu.Unlock()
	if gated {
		<-h.open
		if h.fail {
			return 0, 0, nil, errors.New("sqlite: database is locked")
		}
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	h.heads = append(h.heads, cs[0].ID)
	return len(cs), 0, nil, nil
}

func (h *gatedHub) applied() []string {
	h.mu.Lock()
	defer h.mu.Unlock()
	return append([]string(nil), h.heads...)
}

func (h *gatedHub) Refusals(context.Context, Identity) ([]Refusal, int, error) { return nil, 0, nil }
func (h *gatedHub) Log(context.Context, Identity, PullRequest) ([]Entry, int64, int64, error) {
	return nil, 0, 0, nil
}
func (h *gatedHub) Digests(context.Context, Identity, int) (map[string]string, error) {
	return nil, nil
}
func (h *gatedHub) Epoch(context.Context) (string, error)              { return "e1", nil }
func (h *gatedHub) LogWaiting(context.Context, Identity) (bool, error) { return false, nil }
func (h *gatedHub) Known(context.Context, Identity) bool               { return true }

// runPushes starts a hub on store over a leaf link and an edge with
// three batches in its outbox, and returns the edge's store and a count
// of the pushes that reached the hub's server.
func runPushes(t *testing.T, store HubStore) (*outboxStore, func() int) {
	t.Helper()
	me := Identity{Org: "orgA", Location: "loc1", Node: "node1"}
	hubNS, edgeNS := mustLeafPair(t, me)
	hc, err := hubNS.Connect("hub", "")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(hc.Close)
	var mu sync.Mutex
	seen := 0
	if _, err := hc.Subscribe(me.UpSubject(), func(*nats.Msg) { mu.Lock(); seen++; mu.Unlock() }); err != nil {
		t.Fatal(err)
	}
	h, err := StartHub(hc, store, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(h.Stop)
	nc, err := edgeNS.Connect("edge", "", nats.CustomInboxPrefix(me.InboxPrefix()))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(nc.Close)
	out := newOutboxStore(me, 3*pushBatch)
	e := NewEdge(me, nc, out, slog.New(slog.DiscardHandler), nil)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); e.Run(ctx) }()
	t.Cleanup(func() { cancel(); <-done })
	return out, func() int { mu.Lock(); defer mu.Unlock(); return seen }
}

// TestAnEdgeSendsItsNextBatchWhileTheHubAppliesOne: a backlog moves as
// fast as the hub applies it — once the hub said it chains pushes, the
// next batch is on its way, and decoded at the hub, while the one before
// applies — and the hub still applies the batches in order, each once.
func TestAnEdgeSendsItsNextBatchWhileTheHubAppliesOne(t *testing.T) {
	hub := &gatedHub{open: make(chan struct{})}
	out, seen := runPushes(t, hub)
	// The first batch applied and answered; the second is held in its
	// apply, and the third reaches the hub all the same.
	wait.For(t, 10*time.Second, "the third batch at the hub while the second applies", func() bool { return seen() == 3 })
	if got := hub.applied(); len(got) != 1 {
		t.Fatalf("the hub applied %v before the second batch's apply ended", got)
	}
	close(hub.open)
	wait.For(t, 10*time.Second, "the whole outbox marked sent", func() bool { return out.Sent() == 3*pushBatch })
	want := []string{"c1", fmt.Sprintf("c%d", pushBatch+1), fmt.Sprintf("c%d", 2*pushBatch+1)}
	if got := hub.applied(); fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("the hub applied batches starting %v, want %v", got, want)
	}
}

// TestABatchSentAheadOfOneThatFailedIsNotApplied: when the batch before
// it fails at the hub, a batch the edge sent ahead is not applied (it
// would bring changes of rows the hub never got); the edge sends both
// again, in order.
func TestABatchSentAheadOfOneThatFailedIsNotApplied(t *testing.T) {
	hub := &gatedHub{open: make(chan struct{}), fail: true}
	out, seen := runPushes(t, hub)
	wait.For(t, 10*time.Second, "the third batch at the hub while the second applies", func() bool { return seen() == 3 })
	close(hub.open)
	wait.For(t, 10*time.Second, "the whole outbox marked sent", func() bool { return out.Sent() == 3*pushBatch })
	want := []string{"c1", fmt.Sprintf("c%d", pushBatch+1), fmt.Sprintf("c%d", 2*pushBatch+1)}
	if got := hub.applied(); fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("the hub applied batches starting %v, want %v (the third never before the second)", got, want)
	}
}
