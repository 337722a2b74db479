package link

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/nats-io/nats.go"

	"kassa.dev/sync/change"
	"kassa.dev/sync/natsnode"
	"kassa.dev/sync/wait"
)

// offlineStore is an edge's store with one unsent record that counts how
// often the push reads its backlog.
type offlineStore struct {
	reads     atomic.Int64
	committed chan struct{}
}

func (s *offlineStore) Unsent(context.Context, int64, int) ([]Entry, error) {
	s.reads.Add(1)
	return []Entry{{Seq: 1, Change: change.Change{ID: "c1", Entity: "orders", EntityID: "o1"}}}, nil
}
func (s *offlineStore) MarkSent(context.Context, int64) error                    { return nil }
func (s *offlineStore) ApplyRemote(context.Context, []change.Change) error       { return nil }
func (s *offlineStore) Cursor(context.Context) (int64, error)                    { return 0, nil }
func (s *offlineStore) SetCursor(context.Context, int64) error                   { return nil }
func (s *offlineStore) Resyncing(context.Context) (bool, error)                  { return false, nil }
func (s *offlineStore) EndResync(context.Context) error                          { return nil }
func (s *offlineStore) HubEpoch(context.Context) (string, error)                 { return "", nil }
func (s *offlineStore) SetHubEpoch(context.Context, string, bool) error          { return nil }
func (s *offlineStore) Digests(context.Context) (map[string]string, error)       { return nil, nil }
func (s *offlineStore) Committed() <-chan struct{}                               { return s.committed }
func (s *offlineStore) KeepRefusals(context.Context, []Refusal, int, bool) error { return nil }

// startEdgeNATS starts an edge's NATS server (no leaf remote: the hub is
// out of reach unless the test answers for it) and the edge's client.
func startEdgeNATS(t *testing.T, me Identity) (*natsnode.Server, *nats.Conn) {
	t.Helper()
	ns, err := natsnode.Start(natsnode.Config{Name: "edge", StoreDir: t.TempDir()}, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(ns.Shutdown)
	nc, err := ns.Connect("edge", "", nats.CustomInboxPrefix(me.InboxPrefix()))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(nc.Close)
	return ns, nc
}

// TestAnOfflineEdgeDoesNotReadItsBacklogAfterEverySale: while the hub is
// out of reach, the store's sales do not each make the push read and
// encode a batch of the backlog; it tries again on its retry tick (and at
// once when the link comes back).
func TestAnOfflineEdgeDoesNotReadItsBacklogAfterEverySale(t *testing.T) {
	me := Identity{Org: "orgA", Location: "loc1", Node: "node1"}
	_, nc := startEdgeNATS(t, me)
	store := &offlineStore{committed: make(chan struct{}, 1)}
	e := NewEdge(me, nc, store, slog.New(slog.DiscardHandler), nil)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); e.Run(ctx) }()
	defer func() { cancel(); <-done }()
	wait.For(t, 5*time.Second, "the first push to fail", func() bool {
		return store.reads.Load() > 0 && e.Status().LastError != ""
	})
	// Two hundred sales a millisecond or more apart, as a busy till's.
	start, before := time.Now(), store.reads.Load()
	for range 200 {
		select {
		case store.committed <- struct{}{}:
		default:
		}
		time.Sleep(time.Millisecond)
	}
	reads := store.reads.Load() - before
	if ticks := int64(time.Since(start)/retryEvery) + 2; reads > ticks {
		t.Errorf("the offline edge read its backlog %d times during 200 sales in %v (its retry tick allows %d)", reads, time.Since(start), ticks)
	}
}

// brokenStore is an edge's store that cannot apply the hub's log.
type brokenStore struct{ offlineStore }

func (s *brokenStore) Unsent(context.Context, int64, int) ([]Entry, error) { return nil, nil }
func (s *brokenStore) ApplyRemote(context.Context, []change.Change) error {
	return errors.New("sqlite: change of a row that has not arrived: order o1")
}

// TestAnEdgeThatCannotApplyTheHubsLogSaysSo: an edge whose apply of a
// pulled batch fails is not in sync, and its status says what waits and
// why — not the figures of the last pull that went through (the failover
// test's edge showed in_sync with nothing pending while it was stuck).
func TestAnEdgeThatCannotApplyTheHubsLogSaysSo(t *testing.T) {
	me := Identity{Org: "orgA", Location: "loc1", Node: "node1"}
	ns, nc := startEdgeNATS(t, me)
	// The hub's side: every pull gets one record of a log five long.
	hub, err := ns.Connect("hub", "")
	if err != nil {
		t.Fatal(err)
	}
	defer hub.Close()
	rep, _ := json.Marshal(PullReply{Entries: []Entry{{Seq: 1, Change: change.Change{ID: "c1", Entity: "order", EntityID: "o1"}}}, UpTo: 1, Last: 5})
	if _, err := hub.Subscribe(me.PullSubject(), func(m *nats.Msg) { m.Respond(rep) }); err != nil {
		t.Fatal(err)
	}
	hub.Flush()
	e := NewEdge(me, nc, &brokenStore{}, slog.New(slog.DiscardHandler), nil)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); e.Run(ctx) }()
	defer func() { cancel(); <-done }()
	wait.For(t, 5*time.Second, "the status to name the failed apply", func() bool {
		return strings.Contains(e.Status().LastError, "applying the hub's log")
	})
	if st := e.Status(); st.PendingDown != 5 || !strings.Contains(st.LastError, "has not arrived") {
		t.Fatalf("status %+v: want 5 records waiting and the apply's error", st)
	}
}

// probingStore is an offline store that counts the pull loop's probes
// (each reads the cursor first).
type probingStore struct {
	offlineStore
	probes atomic.Int64
}

func (s *probingStore) Cursor(context.Context) (int64, error) { s.probes.Add(1); return 0, nil }

// TestAnEdgeProbesTheHubAsSoonAsItsLeafLinkIsBack: while the link is down
// the pull loop probes every probeEvery; with LeafUp it also looks at the
// leaf link, and when that comes back it probes at once — the backlog's
// push waits for that probe's answer — not at its next tick. The tick is
// set longer than the test runs, so only the leaf link's return can
// bring the answered pull.
func TestAnEdgeProbesTheHubAsSoonAsItsLeafLinkIsBack(t *testing.T) {
	me := Identity{Org: "orgA", Location: "loc1", Node: "node1"}
	ns, nc := startEdgeNATS(t, me)
	store := &probingStore{offlineStore: offlineStore{committed: make(chan struct{}, 1)}}
	var leaf atomic.Bool
	e := NewEdge(me, nc, store, slog.New(slog.DiscardHandler), nil)
	e.LeafUp, e.probe = leaf.Load, time.Hour
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); e.Run(ctx) }()
	defer func() { cancel(); <-done }()
	wait.For(t, 5*time.Second, "a probe to fail", func() bool { return store.probes.Load() > 0 && e.Status().LastError != "" })
	hub, err := ns.Connect("hub", "")
	if err != nil {
		t.Fatal(err)
	}
	defer hub.Close()
	rep, _ := json.Marshal(PullReply{})
	if _, err := hub.Subscribe(me.PullSubject(), func(m *nats.Msg) { m.Respond(rep) }); err != nil {
		t.Fatal(err)
	}
	hub.Flush()
	leaf.Store(true)
	wait.For(t, 10*time.Second, "a pull answered once the leaf link is back (the next tick is an hour away)", func() bool {
		return !e.Status().LastPull.IsZero()
	})
}
