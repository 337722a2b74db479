package link

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"time"

	"github.com/nats-io/nats.go"

	"kassa.dev/sync/change"
)

// Batch sizes and timing of an edge's link.
const (
	pushBatch      = 500
	pullBatch      = 1000
	requestTimeout = 5 * time.Second
	retryEvery     = 500 * time.Millisecond
	// probeEvery is how often the pull loop asks while the link is down:
	// the hub not answering fails at once on the edge's own NATS server
	// (no responders), and the push waits for the link (linkUp), so the
	// backlog starts moving within this of the leaf link's return.
	probeEvery = 100 * time.Millisecond
	// With LeafUp set, the pull loop also looks at the leaf link every
	// leafPoll while the link is down (a look at the edge's own server),
	// and probes every leafPoll for leafSettle once it came back.
	leafPoll   = 5 * time.Millisecond
	leafSettle = time.Second
)

// Status is an edge's view of its link.
type Status struct {
	Connected    bool      `json:"connected"`
	Since        time.Time `json:"since"` // when Connected last changed
	PendingUp    int       `json:"pending_up"`
	PendingDown  int64     `json:"pending_down"`
	LastPush     time.Time `json:"last_push"`
	LastPull     time.Time `json:"last_pull"`
	LastVerified time.Time `json:"last_verified"`
	LastError    string    `json:"last_error,omitempty"`
	// VerifyOK is the result of the last verification that compared
	// digests (nil before the first); VerifyDiffer the tables that
	// differed then.
	VerifyOK     *bool    `json:"verify_ok,omitempty"`
	VerifyDiffer []string `json:"verify_differ,omitempty"`
	// Refused is how many of the edge's records the hub last said it
	// holds refused (0 from a hub too old to say).
	Refused int `json:"refused"`
}

// Edge runs an edge's side of the link: push, pull, verify.
type Edge struct {
	// Version is the edge's release, reported to the hub with every pull;
	// set it before Run.
	Version string
	// LeafURLs, if set, is given the cluster's leaf URLs a pull's reply
	// carries (docs/cluster.md); set it before Run.
	LeafURLs func(ctx context.Context, urls []string)
	// LeafUp, if set, reports whether the edge's NATS server has its leaf
	// link to the hub (natsnode.Server.LeafConnected): while the link is
	// down the pull loop probes as soon as it comes back (awaitLeaf).
	// Set it before Run.
	LeafUp func() bool

	id    Identity
	nc    *nats.Conn
	store EdgeStore
	log   *slog.Logger
	now   func() time.Time

	mu     sync.Mutex
	status Status
	// pushing is held from reading unsent records to marking them sent,
	// so that a reset of the outbox (the hub was restored) cannot fall
	// between the two.
	pushing    sync.Mutex
	refused    int           // refusals the hub last listed (under mu)
	refusedKey string        // that list, as kept (under mu; "" before the first)
	leafSince  time.Time     // when LeafUp was first seen true while down (the pull loop's)
	probe      time.Duration // probeEvery (a test sets it longer than it runs)
	wake       chan struct{} // a notify arrived: pull now
	linkUp     chan struct{} // the link came back: push now
	verify     chan struct{} // the link came back: verify
}

// NewEdge returns the link of the edge id over nc, a connection to the
// edge's own NATS server (the leaf link carries the traffic to the hub).
// nc must have been made with nats.CustomInboxPrefix(id.InboxPrefix()).
func NewEdge(id Identity, nc *nats.Conn, store EdgeStore, log *slog.Logger, now func() time.Time) *Edge {
	if now == nil {
		now = time.Now
	}
	return &Edge{id: id, nc: nc, store: store, log: log, now: now, probe: probeEvery,
		wake: make(chan struct{}, 1), verify: make(chan struct{}, 1), linkUp: make(chan struct{}, 1), status: Status{Since: now()}}
}

// Status returns the current figures; pendingUp is filled by the caller's
// store count when it has one.
func (e *Edge) Status() Status {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.status
}

func (e *Edge) setConnected(ok bool, err error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if ok != e.status.Connected {
		e.status.Connected, e.status.Since = ok, e.now()
		if ok {
			signal(e.verify)
			signal(e.linkUp)
			e.log.Info("sync link up", "node", e.id.Node)
		} else {
			e.log.Warn("sync link down", "node", e.id.Node, "err", err)
		}
	}
	if err != nil {
		e.status.LastError = err.Error()
	} else if ok {
		e.status.LastError = ""
	}
}

func signal(c chan struct{}) {
	select {
	case c <- struct{}{}:
	default:
	}
}

// Run pushes, pulls and verifies until ctx is done.
func (e *Edge) Run(ctx context.Context) error {
	for _, subj := range []string{NotifyOrg(e.id.Org), NotifyLocation(e.id.Org, e.id.Location)} {
		s, err := e.nc.Subscribe(subj, func(*nats.Msg) { signal(e.wake) })
		if err != nil {
			return err
		}
		defer s.Unsubscribe()
	}
	var wg sync.WaitGroup
	wg.Add(3)
	go func() { defer wg.Done(); e.pushLoop(ctx) }()
	go func() { defer wg.Done(); e.pullLoop(ctx) }()
	go func() { defer wg.Done(); e.verifyLoop(ctx) }()
	wg.Wait()
	return nil
}

func (e *Edge) request(ctx context.Context, subject string, req, rep any) error {
	b, err := json.Marshal(req)
	if err != nil {
		return err
	}
	return e.send(ctx, subject, b, rep)
}

// send sends an encoded request and decodes the reply into rep.
func (e *Edge) send(ctx context.Context, subject string, b []byte, rep any) error {
	rctx, cancel := context.WithTimeout(ctx, requestTimeout)
	defer cancel()
	m, err := e.nc.RequestWithContext(rctx, subject, b)
	if err != nil {
		return err
	}
	return json.Unmarshal(m.Data, rep)
}

// pushLoop sends the outbox in order and marks a batch sent only when
// the hub replied that it committed it. While the hub applies one batch
// the next is on its way (pushRun): a hub that chains an edge's pushes
// applies it only after the one it follows committed there. (Two batches
// in flight without that let the second land when the first failed —
// right after a restart, before the leaf link was up — and the hub then
// saw updates of rows it never got.)
func (e *Edge) pushLoop(ctx context.Context) {
	for ctx.Err() == nil {
		full, err := e.pushRun(ctx)
		if err == nil && full {
			continue
		}
		// While the link is down a new sale does not wake the push: each
		// attempt reads and encodes a batch of the backlog for nothing.
		committed := e.store.Committed()
		if err != nil && !e.Status().Connected {
			committed = nil
		}
		select {
		case <-ctx.Done():
		case <-committed:
		case <-e.linkUp:
		case <-time.After(retryEvery):
		}
	}
}

// pushBatchOf is one batch of the outbox, read and encoded.
type pushBatchOf struct {
	es   []Entry
	body []byte
	err  error
}

// last is the outbox position of the batch's last record.
func (b *pushBatchOf) last() int64 { return b.es[len(b.es)-1].Seq }

// readPush reads the unsent records after seq, up to a batch, and
// encodes them.
func (e *Edge) readPush(ctx context.Context, after int64) pushBatchOf {
	es, err := e.store.Unsent(ctx, after, pushBatch)
	if err != nil || len(es) == 0 {
		return pushBatchOf{err: err}
	}
	body, err := encodePush(es)
	return pushBatchOf{es: es, body: body, err: err}
}

// flight is a pushed batch whose reply is awaited.
type flight struct {
	b     pushBatchOf
	reply chan flightReply
}

type flightReply struct {
	rep PushReply
	err error
}

// pushRun pushes the outbox's batches back to back while full ones
// follow, and reports whether to go on at once (the last one sent was
// full, or the hub asked for a batch again). The next batch is read and
// encoded while the hub admits one; once a reply said the hub chains this
// edge's pushes it is also sent at once, naming the batch it follows, so
// the hub decodes it while it applies the one before. Batches are marked
// sent in order, each once the hub committed it; a failure ends the run,
// and the next starts from the first batch not marked. It holds pushing
// throughout.
func (e *Edge) pushRun(ctx context.Context) (bool, error) {
	e.pushing.Lock()
	defer e.pushing.Unlock()
	marked := make(chan error, 1)
	marked <- nil
	defer func() { <-marked }() // the last mark is done before pushing is released
	var flying []*flight        // oldest first
	chains, full := false, false
	next := e.readPush(ctx, 0)
	for {
		for len(next.es) > 0 && (len(flying) == 0 || chains && len(flying) < 2) {
			var after int64
			if len(flying) > 0 {
				after = flying[len(flying)-1].b.last()
			}
			f := e.sendPush(ctx, next, after)
			flying, full = append(flying, f), len(next.es) == pushBatch
			e.setPending(len(next.es))
			if next = (pushBatchOf{}); full {
				next = e.readPush(ctx, f.b.last())
			}
		}
		if len(flying) == 0 {
			e.setPending(0)
			return false, next.err
		}
		f := flying[0]
		flying = flying[1:]
		r := <-f.reply
		if err := e.pushed(ctx, r); err != nil || r.rep.Ahead {
			return r.rep.Ahead, err
		}
		chains = r.rep.Chains
		if err := e.markSent(ctx, marked, f.b.last()); err != nil {
			return false, err
		}
	}
}

// setPending sets the status's count of records on their way up.
func (e *Edge) setPending(n int) {
	e.mu.Lock()
	e.status.PendingUp = n
	e.mu.Unlock()
}

// sendPush sends batch b — after the batch ending at after, when not 0 —
// and returns its flight. It publishes before it returns, so batches go
// out in the order they are sent; the reply is awaited in the background.
func (e *Edge) sendPush(ctx context.Context, b pushBatchOf, after int64) *flight {
	f := &flight{b: b, reply: make(chan flightReply, 1)}
	body := b.body
	if after > 0 {
		body = append(fmt.Appendf(nil, `{"after":%d,`, after), body[1:]...)
	}
	inbox := e.nc.NewInbox()
	sub, err := e.nc.SubscribeSync(inbox)
	if err == nil {
		err = e.nc.PublishRequest(e.id.UpSubject(), inbox, body)
	}
	if err != nil {
		if sub != nil {
			sub.Unsubscribe()
		}
		f.reply <- flightReply{err: err}
		return f
	}
	go func() {
		defer sub.Unsubscribe()
		rctx, cancel := context.WithTimeout(ctx, requestTimeout)
		defer cancel()
		var r flightReply
		m, err := sub.NextMsgWithContext(rctx)
		if err == nil && len(m.Data) == 0 && m.Header.Get("Status") == "503" {
			err = nats.ErrNoResponders
		}
		if r.err = err; err == nil {
			r.err = json.Unmarshal(m.Data, &r.rep)
		}
		f.reply <- r
	}()
	return f
}

// pushed takes in the hub's reply to a push: the link's state, and the
// records the hub refused.
func (e *Edge) pushed(ctx context.Context, r flightReply) error {
	if r.err != nil {
		e.setConnected(false, r.err)
		return r.err
	}
	rep := r.rep
	if rep.Error != "" {
		err := fmt.Errorf("link: hub refused push: %s", rep.Error)
		e.setConnected(true, err)
		return err
	}
	if len(rep.Refused) > 0 {
		e.log.Warn("the hub refused changes of this store", "node", e.id.Node, "refused", len(rep.Refused), "first", rep.Refused[0].Error)
		if err := e.store.KeepRefusals(ctx, rep.Refused, 0, false); err != nil {
			return err
		}
	}
	if !rep.Ahead {
		e.mu.Lock()
		e.status.LastPush = e.now()
		e.mu.Unlock()
	}
	e.setConnected(true, nil)
	return nil
}

// markSent marks the records up to last sent, in the background, once
// the previous mark is done (marked holds its result): it fails when that
// one failed (the records are then sent again; the hub skips them).
func (e *Edge) markSent(ctx context.Context, marked chan error, last int64) error {
	if err := <-marked; err != nil {
		marked <- nil
		return err
	}
	go func() { marked <- e.store.MarkSent(ctx, last) }()
	return nil
}

// encodePush encodes the PushRequest of es (change.AppendJSON), with the
// outbox position of its last record.
func encodePush(es []Entry) ([]byte, error) {
	b := make([]byte, 0, 512*len(es))
	b = append(b, `{"changes":[`...)
	for i := range es {
		if i > 0 {
			b = append(b, ',')
		}
		var err error
		if b, err = es[i].Change.AppendJSON(b); err != nil {
			return nil, err
		}
	}
	return fmt.Appendf(b, `],"format":%d,"last":%d}`, change.Format, es[len(es)-1].Seq), nil
}

func (e *Edge) pullLoop(ctx context.Context) {
	for ctx.Err() == nil {
		n, err := e.PullOnce(ctx)
		if err == nil && n == pullBatch {
			continue
		}
		if !e.Status().Connected && e.LeafUp != nil {
			e.awaitLeaf(ctx)
			continue
		}
		e.leafSince = time.Time{} // the next outage's return settles anew
		wait := retryEvery
		if !e.Status().Connected {
			wait = e.probe
		}
		select {
		case <-ctx.Done():
		case <-e.wake:
		case <-time.After(wait):
		}
	}
}

// awaitLeaf waits, while the link is down, for the pull loop's next
// probe: probeEvery, or at once when the leaf link comes back (LeafUp),
// and then every leafPoll for up to leafSettle, until the hub's
// subscriptions have reached this edge's server and a probe is answered.
// The backlog's push starts on that answer (linkUp), so a probe every
// probeEvery alone left it waiting up to that long after the link.
func (e *Edge) awaitLeaf(ctx context.Context) {
	up := e.LeafUp()
	if !up {
		e.leafSince = time.Time{}
	} else if e.leafSince.IsZero() {
		e.leafSince = e.now()
	}
	settling := up && e.now().Sub(e.leafSince) < leafSettle
	tick := time.NewTicker(leafPoll)
	defer tick.Stop()
	deadline := time.After(e.probe)
	for {
		select {
		case <-ctx.Done():
			return
		case <-e.wake:
			return
		case <-deadline:
			return
		case <-tick.C:
			if settling || !up && e.LeafUp() {
				return
			}
		}
	}
}

// PullOnce applies one batch of the hub's log and returns its size.
func (e *Edge) PullOnce(ctx context.Context) (int, error) {
	cursor, err := e.store.Cursor(ctx)
	if err != nil {
		return 0, err
	}
	own, err := e.store.Resyncing(ctx)
	if err != nil {
		return 0, err
	}
	var rep PullReply
	st := e.Status()
	req := PullRequest{After: cursor, Limit: pullBatch, Format: change.Format, PendingUp: st.PendingUp, LastVerified: st.LastVerified,
		Version: e.Version, VerifyOK: st.VerifyOK, VerifyDiffer: st.VerifyDiffer, ReportedAt: e.now(), Own: own}
	if err := e.request(ctx, e.id.PullSubject(), req, &rep); err != nil {
		e.setConnected(false, err)
		return 0, err
	}
	if rep.Error != "" {
		err := fmt.Errorf("link: hub refused pull: %s", rep.Error)
		e.setConnected(true, err)
		return 0, err
	}
	if restored, err := e.seeEpoch(ctx, rep.Epoch); err != nil || restored {
		return 0, err
	}
	if len(rep.LeafURLs) > 0 && e.LeafURLs != nil {
		e.LeafURLs(ctx, rep.LeafURLs)
	}
	if rep.Refused != nil {
		if err := e.keepRefusals(ctx, *rep.Refused, rep.RefusedCount); err != nil {
			return 0, err
		}
	}
	if len(rep.Entries) > 0 {
		cs := make([]change.Change, len(rep.Entries))
		for i, en := range rep.Entries {
			cs[i] = en.Change
		}
		if err := e.store.ApplyRemote(ctx, cs); err != nil {
			// The status says so: what waits at the hub and why, not the
			// figures of the last pull that went through.
			e.log.Error("applying the hub's log failed", "err", err)
			e.mu.Lock()
			e.status.PendingDown = max(rep.Last-cursor, 0)
			e.mu.Unlock()
			e.setConnected(true, fmt.Errorf("applying the hub's log: %w", err))
			return 0, err
		}
	}
	if rep.UpTo > cursor {
		cursor = rep.UpTo
		if err := e.store.SetCursor(ctx, cursor); err != nil {
			return 0, err
		}
	}
	if own && cursor >= rep.Last && !rep.Waiting {
		if err := e.store.EndResync(ctx); err != nil {
			return 0, err
		}
		e.log.Info("sync caught up after a restore: own records recovered from the hub", "node", e.id.Node)
	}
	e.mu.Lock()
	e.status.LastPull = e.now()
	e.status.PendingDown = max(rep.Last-cursor, 0)
	e.mu.Unlock()
	e.setConnected(true, nil)
	return len(rep.Entries), nil
}

// keepRefusals stores the hub's list of the edge's refused records when
// it differs from the one kept last (a pull's reply carries it every
// time; an unchanged list writes nothing). Fewer than before means ops
// re-applied or resolved some: the digests may agree now, so verify.
func (e *Edge) keepRefusals(ctx context.Context, rs []Refusal, total int) error {
	var b strings.Builder
	fmt.Fprint(&b, total)
	for _, r := range rs {
		b.WriteString(" " + r.ChangeID + ":" + r.Error)
	}
	e.mu.Lock()
	same, fewer := b.String() == e.refusedKey, total < e.refused
	e.mu.Unlock()
	if same {
		return nil
	}
	if err := e.store.KeepRefusals(ctx, rs, total, true); err != nil {
		return err
	}
	e.mu.Lock()
	e.refused, e.refusedKey, e.status.Refused = total, b.String(), total
	e.mu.Unlock()
	if fewer {
		signal(e.verify)
	}
	return nil
}

// seeEpoch compares the epoch of the hub's log with the one the edge saw
// last. A new one means the hub's store was restored from a backup: its
// log may lack what the edge pushed since and have positions the edge's
// cursor passed. The edge then pulls from the start and pushes its whole
// outbox again (apply is idempotent at both ends) and reports restored.
func (e *Edge) seeEpoch(ctx context.Context, epoch string) (restored bool, err error) {
	if epoch == "" {
		return false, nil // a hub older than epochs
	}
	saw, err := e.store.HubEpoch(ctx)
	if err != nil || saw == epoch {
		return false, err
	}
	restored = saw != ""
	if restored {
		e.pushing.Lock()
		defer e.pushing.Unlock()
		e.log.Warn("the hub's log changed epoch (its store was restored from a backup): pulling from the start and pushing every record again",
			"node", e.id.Node, "epoch", epoch)
		signal(e.wake)
	}
	return restored, e.store.SetHubEpoch(ctx, epoch, restored)
}

func (e *Edge) verifyLoop(ctx context.Context) {
	again := false // a verification right after a repair is under way
	for {
		select {
		case <-ctx.Done():
			return
		case <-e.verify:
		case <-time.After(time.Minute):
		}
		err := e.Verify(ctx)
		if err != nil && ctx.Err() == nil {
			e.log.Warn("sync verification", "err", err)
		}
		// After a repair, verify again as soon as the re-pull drained
		// (compare waits for it), once: a difference that a repair does
		// not mend is left to the minute's cadence, not re-pulled in a loop.
		if repaired := errors.Is(err, ErrDiffer); repaired && !again {
			again = true
			signal(e.verify)
		} else {
			again = false
		}
	}
}

// ErrBacklog is returned by Verify while records still wait to move.
var ErrBacklog = errors.New("link: backlog not drained yet")

// Verify waits until both directions are drained, then compares table digests with the hub.
// Equal digests record the verified time; a difference is repaired by
// pulling the hub's log from the start again (apply is idempotent) and is
// returned as an error naming the tables.
func (e *Edge) Verify(ctx context.Context) error {
	// A sale made at either node between the two digests differs too, so
	// a difference counts only when it stays over verifyTries comparisons,
	// each after the backlog drained again: a real one does, a write in
	// flight does not (and a repair re-pulls the whole log).
	var differ []string
	for try := 0; try < verifyTries; try++ {
		if try > 0 {
			select {
			case <-ctx.Done():
				return ctx.Err()
			case <-time.After(retryEvery):
			}
		}
		var err error
		if differ, err = e.compare(ctx); err != nil {
			return err
		}
		if len(differ) == 0 {
			break
		}
	}
	ok := len(differ) == 0
	e.mu.Lock()
	e.status.VerifyOK, e.status.VerifyDiffer = &ok, differ
	if ok {
		e.status.LastVerified = e.now()
	}
	e.mu.Unlock()
	if ok {
		return nil
	}
	e.log.Warn("sync digests differ; repairing from the hub's log", "tables", differ)
	if err := e.store.SetCursor(ctx, 0); err != nil {
		return err
	}
	signal(e.wake)
	return fmt.Errorf("%w: %v", ErrDiffer, differ)
}

// ErrDiffer is returned by Verify when tables differ from the hub's.
var ErrDiffer = errors.New("link: tables differ from the hub")

// verifyTries is how many comparisons a difference must last.
const verifyTries = 3

// compare waits until both directions are drained, catches up, and
// returns the tables whose digests differ from the hub's.
func (e *Edge) compare(ctx context.Context) ([]string, error) {
	// Wait for the push and pull loops to drain the backlog (pushing here
	// too would send the same records twice).
	for drained := false; !drained; {
		unsent, err := e.store.Unsent(ctx, 0, 1)
		if err != nil {
			return nil, err
		}
		st := e.Status()
		if !st.Connected {
			return nil, ErrBacklog
		}
		if drained = len(unsent) == 0 && st.PendingDown == 0; !drained {
			select {
			case <-ctx.Done():
				return nil, ctx.Err()
			case <-time.After(retryEvery):
			}
		}
	}
	if _, err := e.PullOnce(ctx); err != nil { // catch up to this moment
		return nil, err
	}
	mine, err := e.store.Digests(ctx)
	if err != nil {
		return nil, err
	}
	var rep DigestReply
	if err := e.request(ctx, e.id.DigestSubject(), DigestRequest{Tables: mine, Format: change.Format}, &rep); err != nil {
		return nil, err
	}
	if rep.Error != "" {
		return nil, errors.New(rep.Error)
	}
	return rep.Differ, nil
}
