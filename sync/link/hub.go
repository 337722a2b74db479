package link

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	jsonv2 "github.com/go-json-experiment/json"
	"github.com/nats-io/nats.go"

	"kassa.dev/sync/change"
)

// Hub serves edges' pushes, pulls and digests on the hub's NATS server and
// wakes edges when its log grows.
type Hub struct {
	nc    *nats.Conn
	store HubStore
	log   *slog.Logger
	subs  []*nats.Subscription
	// leafURLs are the cluster's leaf URLs given with every pull.
	leafURLs atomic.Pointer[[]string]
	// busy bounds the requests handled at once; stopped closes at Stop.
	busy     chan struct{}
	stopped  chan struct{}
	stopOnce sync.Once
	turns    turns
}

// MaxConcurrentRequests is how many edges' pushes, pulls and digests a hub
// handles at once. NATS calls a subscription's handler for one message at
// a time; handled in turn, every edge's push would wait for the commit of
// the one before it, so the writer's group commit could never gather the
// pushes of many edges into one transaction. An edge's own pushes apply
// one after another, in the order it sent them (turns).
const MaxConcurrentRequests = 64

// SetLeafURLs sets the leaf URLs of every hub of the cluster, given to
// edges with every pull so that they learn when the set changes.
func (h *Hub) SetLeafURLs(urls []string) { h.leafURLs.Store(&urls) }

// StartHub subscribes the hub's handlers on nc.
func StartHub(nc *nats.Conn, store HubStore, log *slog.Logger) (*Hub, error) {
	h := &Hub{nc: nc, store: store, log: log, busy: make(chan struct{}, MaxConcurrentRequests), stopped: make(chan struct{})}
	for subj, fn := range map[string]nats.MsgHandler{"kassa.up.>": h.inTurn, "kassa.pull.>": h.concurrently(h.pull), "kassa.digest.>": h.concurrently(h.digest)} {
		s, err := nc.QueueSubscribe(subj, "hub", fn)
		if err != nil {
			h.Stop()
			return nil, err
		}
		h.subs = append(h.subs, s)
	}
	return h, nc.Flush()
}

// Stop unsubscribes and waits for the requests in hand (at most a few
// seconds: a request still waiting for a slot is dropped, and its edge
// asks again).
func (h *Hub) Stop() {
	for _, s := range h.subs {
		s.Unsubscribe()
	}
	h.stopOnce.Do(func() { close(h.stopped) })
	deadline := time.After(5 * time.Second)
	for range cap(h.busy) {
		select {
		case h.busy <- struct{}{}:
		case <-deadline:
			return
		}
	}
}

// concurrently handles each message on its own goroutine, at most
// MaxConcurrentRequests at once; when all are busy the subscription waits.
func (h *Hub) concurrently(fn nats.MsgHandler) nats.MsgHandler {
	return func(m *nats.Msg) { h.spawn(func() { fn(m) }) }
}

// spawn runs fn on its own goroutine once a slot is free, and reports
// false when the hub stopped first.
func (h *Hub) spawn(fn func()) bool {
	select {
	case h.busy <- struct{}{}:
	case <-h.stopped:
		return false
	}
	go func() {
		defer func() { <-h.busy }()
		fn()
	}()
	return true
}

// inTurn handles a push concurrently with other edges' and in its turn
// among its own edge's: the turn is taken here, as NATS hands the
// subscription its messages one at a time in the order the edge sent
// them.
func (h *Hub) inTurn(m *nats.Msg) {
	t := h.turns.take(m.Subject)
	if !h.spawn(func() { h.up(m, t) }) {
		h.turns.end(t, 0)
	}
}

// turns orders each edge's pushes at this hub. An edge sends its next
// batch before the hub answered the one before (PushRequest.After); the
// hub decodes it meanwhile and applies it only after that one committed
// here.
type turns struct {
	mu   sync.Mutex
	last map[string]int64 // an edge's up subject → the Last of its newest push committed here
	tail map[string]*turn // an edge's up subject → its newest push taken in
}

// turn is one push's place in its edge's order.
type turn struct {
	key        string
	prev, done chan struct{} // the push before it ends (nil: none); it ends
}

// take gives the edge's next push its turn.
func (ts *turns) take(key string) *turn {
	ts.mu.Lock()
	defer ts.mu.Unlock()
	if ts.tail == nil {
		ts.tail, ts.last = map[string]*turn{}, map[string]int64{}
	}
	t := &turn{key: key, done: make(chan struct{})}
	if prev := ts.tail[key]; prev != nil {
		t.prev = prev.done
	}
	ts.tail[key] = t
	return t
}

// wait waits until the push before t ended (or ctx ends).
func (ts *turns) wait(ctx context.Context, t *turn) {
	if t.prev == nil {
		return
	}
	select {
	case <-t.prev:
	case <-ctx.Done():
	}
}

// follows reports whether after is the Last of the edge's newest push
// committed here.
func (ts *turns) follows(t *turn, after int64) bool {
	ts.mu.Lock()
	defer ts.mu.Unlock()
	return ts.last[t.key] == after
}

// end ends push t; last (0: none) is the position it committed.
func (ts *turns) end(t *turn, last int64) {
	ts.mu.Lock()
	if last > 0 {
		ts.last[t.key] = last
	}
	if ts.tail[t.key] == t {
		delete(ts.tail, t.key)
	}
	ts.mu.Unlock()
	close(t.done)
}

func reply(m *nats.Msg, v any) {
	b, _ := json.Marshal(v)
	m.Respond(b)
}

func (h *Hub) identify(m *nats.Msg) (Identity, context.Context, context.CancelFunc, error) {
	id, ctx, cancel, err := h.named(m)
	if err == nil && !h.store.Known(ctx, id) {
		err = errors.New("link: unknown or revoked edge")
	}
	return id, ctx, cancel, err
}

// named is the edge a message's subject names, unchecked: a push's
// Ingest checks it in its own unit (Store.Ingest), a round trip fewer.
func (h *Hub) named(m *nats.Msg) (Identity, context.Context, context.CancelFunc, error) {
	id, err := parseSubject(m.Subject)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	return id, ctx, cancel, err
}

// up applies a push in its turn t. It is read while the edge's push
// before it may still be applying, and applied once that one ended —
// not at all when it names a batch it follows that did not commit here.
func (h *Hub) up(m *nats.Msg, t *turn) {
	var committed int64
	defer func() { h.turns.end(t, committed) }()
	id, ctx, cancel, err := h.named(m) // Ingest refuses an unknown or revoked edge
	defer cancel()
	var req PushRequest
	if err == nil {
		err = decodePush(m.Data, &req)
	}
	if err == nil {
		_, err = change.Negotiate(req.Format) // an older edge's records apply as they are
	}
	if err == nil {
		err = CheckScope(id, req.Changes)
	}
	if p, ok := h.store.(Preparer); ok && err == nil {
		p.Prepare(req.Changes)
	}
	h.turns.wait(ctx, t)
	rep := PushReply{Chains: true}
	if err == nil && req.After > 0 && !h.turns.follows(t, req.After) {
		rep.Ahead = true
		reply(m, rep)
		return
	}
	if err == nil {
		rep.Applied, rep.Duplicate, rep.Refused, err = h.store.Ingest(ctx, id, req.Changes)
	}
	if err != nil {
		h.log.Warn("push refused", "node", id.Node, "err", err)
		rep.Error = err.Error()
	} else {
		committed = req.Last
	}
	reply(m, rep)
}

// decodePush decodes a push with the JSON v2 decoder (go-json-experiment,
// the Go team's encoding/json/v2 ahead of the standard library): a batch
// of 500 records decodes in about a third of encoding/json's time and
// allocations, and the hub decodes every record an edge sends. It is
// stricter than encoding/json — duplicate member names, invalid UTF-8 and
// names in another case are not taken — which an edge's encoder never
// writes (change.AppendJSON; the wire was always case-exact UTF-8).
func decodePush(b []byte, req *PushRequest) error {
	return jsonv2.Unmarshal(b, req)
}

func (h *Hub) pull(m *nats.Msg) {
	id, ctx, cancel, err := h.identify(m)
	defer cancel()
	var req PullRequest
	if err == nil {
		err = json.Unmarshal(m.Data, &req)
	}
	if err == nil {
		req.Format, err = change.Negotiate(req.Format)
	}
	var rep PullReply
	if err == nil {
		req.Limit = min(max(req.Limit, 1), 1000)
		rep.Entries, rep.UpTo, rep.Last, err = h.store.Log(ctx, id, req)
	}
	if err == nil {
		rep.Epoch, err = h.store.Epoch(ctx)
	}
	if err == nil && req.Own {
		rep.Waiting, err = h.store.LogWaiting(ctx, id)
	}
	if urls := h.leafURLs.Load(); err == nil && urls != nil {
		rep.LeafURLs = *urls
	}
	if err == nil {
		var rs []Refusal
		rs, rep.RefusedCount, err = h.store.Refusals(ctx, id)
		rep.Refused = &rs
	}
	if err != nil {
		rep.Error = err.Error()
	}
	reply(m, rep)
}

func (h *Hub) digest(m *nats.Msg) {
	id, ctx, cancel, err := h.identify(m)
	defer cancel()
	var req DigestRequest
	if err == nil {
		err = json.Unmarshal(m.Data, &req)
	}
	if err == nil {
		req.Format, err = change.Negotiate(req.Format)
	}
	var rep DigestReply
	if err == nil {
		var mine map[string]string
		if mine, err = h.store.Digests(ctx, id, req.Format); err == nil {
			for table, d := range mine {
				if req.Tables[table] != d {
					rep.Differ = append(rep.Differ, table)
				}
			}
		}
	}
	if err != nil {
		rep.Error = err.Error()
	}
	reply(m, rep)
}

// Notify wakes the edges a new log entry concerns.
func (h *Hub) Notify(org, location string) {
	if location == "" {
		h.nc.Publish(NotifyOrg(org), nil)
	} else {
		h.nc.Publish(NotifyLocation(org, location), nil)
	}
}

// Head is where a log entry belongs.
type Head struct {
	Seq           int64
	Org, Location string
}

// Watch calls Notify for every log entry written after the hub started,
// waking on committed; newEntries returns up to batch entries of the log
// after a position, fewer only at its end (then the watch waits for the
// next commit: a read more would find nothing but what a commit since
// announces anyway — a round trip a wake-up at the ingest, session 20).
// It returns when ctx is done.
func (h *Hub) Watch(ctx context.Context, committed <-chan struct{}, start int64, batch int, newEntries func(ctx context.Context, after int64) ([]Head, error)) {
	last := start
	for {
		select {
		case <-ctx.Done():
			return
		case <-committed:
		case <-time.After(time.Second):
		}
		for more := true; more; {
			es, err := newEntries(ctx, last)
			if err != nil || len(es) == 0 {
				break
			}
			more = len(es) >= batch
			seen := map[[2]string]bool{}
			for _, e := range es {
				k := [2]string{e.Org, e.Location}
				if !seen[k] {
					seen[k] = true
					h.Notify(k[0], k[1])
				}
				last = e.Seq
			}
		}
	}
}
