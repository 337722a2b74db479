package hubapi

import (
	"context"
	"encoding/json"
	"log/slog"
	"strings"
	"sync"
	"time"

	"kassa.dev/shared/httpapi"
	"kassa.dev/shared/kassa"
)

// The ops monitor's feed: GET /api/v1/sync/ws at the hub streams the
// org's edges and open conflicts to the /ops page (kassa.OpsMessage).
//
// One poller per org with subscribers, shared by all of them: every
// opsPoll it reads the status (one kassa.SyncService.Status) and the open
// conflicts once, turns them into a diff against what it last sent
// (kassa.OpsState) and hands the same message to every subscriber. A new
// subscriber gets the state as last sent as its snapshot, then the diffs.
// The poller stops when the last subscriber leaves. Subscribers' Send
// never blocks (wsConn queues, and cuts a client whose queue is full), so
// the poller may call it under its lock: a slow page never slows the
// others or the poll.

const (
	opsPoll         = time.Second // the feed's pace: at most one message a second
	opsConflictsMax = 1000        // open conflicts a feed holds (oldest first)
	opsConflictPage = 200
)

// opsSink is where a feed sends: a wsConn, or a test's recorder.
type opsSink interface{ Send(v any) error }

type opsFeeds struct {
	sync kassa.SyncService
	log  *slog.Logger
	now  func() time.Time
	poll time.Duration
	mu   sync.Mutex
	orgs map[string]*opsFeed
}

type opsFeed struct {
	org    string
	cancel context.CancelFunc
	done   chan struct{}
	mu     sync.Mutex
	subs   map[opsSink]struct{}
	ready  bool // the first poll is done: state holds the org
	state  kassa.OpsState
	asOf   time.Time
}

func newOpsFeeds(svc kassa.SyncService, log *slog.Logger, now func() time.Time) *opsFeeds {
	return &opsFeeds{sync: svc, log: log, now: now, poll: opsPoll, orgs: map[string]*opsFeed{}}
}

// subscribe adds sink to org's feed, starting the feed if it is the first,
// and sends it the snapshot as soon as there is one. The returned func
// removes it (and stops the feed with the last subscriber).
func (fs *opsFeeds) subscribe(org string, sink opsSink) (unsubscribe func()) {
	fs.mu.Lock()
	f := fs.orgs[org]
	if f == nil {
		ctx, cancel := context.WithCancel(context.Background())
		f = &opsFeed{org: org, cancel: cancel, done: make(chan struct{}), subs: map[opsSink]struct{}{}}
		fs.orgs[org] = f
		go fs.run(ctx, f)
	}
	f.mu.Lock()
	f.subs[sink] = struct{}{}
	if f.ready {
		if b, err := json.Marshal(f.state.Snapshot(f.asOf)); err == nil {
			sink.Send(json.RawMessage(b))
		}
	}
	f.mu.Unlock()
	fs.mu.Unlock()
	return func() {
		fs.mu.Lock()
		defer fs.mu.Unlock()
		f.mu.Lock()
		delete(f.subs, sink)
		last := len(f.subs) == 0
		f.mu.Unlock()
		if last && fs.orgs[org] == f {
			delete(fs.orgs, org)
			f.cancel()
		}
	}
}

// running counts the orgs whose poller runs (tests).
func (fs *opsFeeds) running() int {
	fs.mu.Lock()
	defer fs.mu.Unlock()
	return len(fs.orgs)
}

func (fs *opsFeeds) run(ctx context.Context, f *opsFeed) {
	defer close(f.done)
	actx := kassa.WithActor(ctx, &kassa.Actor{OrgID: f.org, Scopes: []kassa.Scope{kassa.ScopeReportsRead}})
	t := time.NewTicker(fs.poll)
	defer t.Stop()
	for {
		fs.tick(actx, f)
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// tick polls once and sends the result: the snapshot to everyone after the
// first poll, a diff or heartbeat after the others.
func (fs *opsFeeds) tick(ctx context.Context, f *opsFeed) {
	st, err := fs.sync.Status(ctx)
	if err != nil {
		if ctx.Err() == nil {
			fs.log.Error("ops feed: status", "org", f.org, "err", err)
		}
		return
	}
	open, err := fs.openConflicts(ctx)
	if err != nil {
		if ctx.Err() == nil {
			fs.log.Error("ops feed: conflicts", "org", f.org, "err", err)
		}
		return
	}
	asOf := fs.now().UTC()
	f.mu.Lock()
	defer f.mu.Unlock()
	m := f.state.Update(asOf, st.Edges, open)
	f.asOf = asOf
	if !f.ready {
		f.ready = true
		m = f.state.Snapshot(asOf)
	}
	f.send(m)
}

// send marshals m once for every subscriber (the caller holds f.mu).
func (f *opsFeed) send(m kassa.OpsMessage) {
	b, err := json.Marshal(m)
	if err != nil {
		return
	}
	for sink := range f.subs {
		sink.Send(json.RawMessage(b))
	}
}

// openConflicts reads the org's open conflicts, up to opsConflictsMax.
func (fs *opsFeeds) openConflicts(ctx context.Context) ([]kassa.Conflict, error) {
	var out []kassa.Conflict
	f := kassa.ConflictFilter{Status: kassa.ConflictOpen, Page: kassa.Page{Limit: opsConflictPage}}
	for len(out) < opsConflictsMax {
		l, err := fs.sync.Conflicts(ctx, f)
		if err != nil {
			return nil, err
		}
		out = append(out, l.Items[:min(len(l.Items), opsConflictsMax-len(out))]...)
		if !l.HasMore {
			break
		}
		f.Cursor = l.NextCursor
	}
	return out, nil
}

// routesOpsFeed registers the ops monitor's feed (the hub only).
func (s *api) routesOpsFeed() {
	s.ops = newOpsFeeds(s.svc.Sync, s.log, s.cfg.Now)
	s.WebSocket(&httpapi.Route{Method: "GET", Path: "/sync/ws", Tag: "sync", Scope: kassa.ScopeReportsRead,
		Summary: "The ops monitor's live feed (WebSocket, hub): on connect a snapshot {type: snapshot, as_of, edges, conflicts} " +
			"of every edge of the org (as in GET /sync/status) and the open conflicts, then at most once a second either " +
			"{type: diff, as_of, edges, removed_edges, conflicts, resolved} with only the edge rows that changed (whole rows), " +
			"conflicts opened and the ids of those resolved, or {type: heartbeat, as_of}. A connected edge's last_seen and " +
			"reported_at alone count as a change once they moved by 10 s"},
		func(ctx context.Context, c httpapi.WSConn) error {
			a, err := kassa.MustActor(ctx)
			if err != nil {
				return err
			}
			defer s.ops.subscribe(strings.Clone(a.OrgID), c)()
			for { // nothing to read from the page: wait for it to go
				if _, err := c.Receive(ctx); err != nil {
					return nil
				}
			}
		})
}
