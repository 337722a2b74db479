package httpapi

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"slices"
	"sort"
	"sync"
	"time"

	"kassa.dev/shared/eventbus"
	"kassa.dev/shared/kassa"
)

// Live updates for terminals: GET /api/v1/ws (docs/live.md).
//
// A terminal subscribes to topics and receives every change of its org
// in them as a "change" message carrying the resource as its REST GET
// answers, at a position of the node's log of changes (kassa.LiveService:
// the outbox and, at an edge, the changes applied from the hub). The
// shape is the KDS feed's (kds.go): one feed per org with open
// connections keeps the newest messages in memory, woken by
// kassa.EventLiveChange on Services.LiveEvents after a commit (and polling every
// livePoll in case a wake-up was dropped); it reads each new change and
// its resource once and encodes the message once for every connection,
// which filters by topic and location. A connection that resumes from
// further back than the feed holds reads the log itself, page by page.

const (
	livePoll      = time.Second
	liveRingSize  = 2048
	livePageSize  = 500
	liveBusBuffer = 1024
)

// liveSubscribe is a client's subscribe message.
type liveSubscribe struct {
	Type       string   `json:"type"`
	Topics     []string `json:"topics"`
	LocationID string   `json:"location_id"`
	After      string   `json:"after"`
}

// liveError answers a message the server cannot take; the connection
// stays open.
type liveError struct {
	Type    string `json:"type"` // error
	Status  int    `json:"status"`
	Message string `json:"message"`
}

func liveErr(err error) liveError {
	var ke *kassa.Error
	if p, ok := problemOf[kassa.ErrorKind(err)]; ok && errors.As(err, &ke) && ke.Kind != kassa.EInternal {
		return liveError{"error", p.status, ke.Message}
	}
	return liveError{"error", 500, "internal error"}
}

func (s *Server) routesLive() {
	s.live = newLiveFeeds(s, s.svc.LiveEvents)
	s.websocket(&Route{Path: "/ws", Tag: "live", AnyScope: kassa.LiveScopes,
		Summary: "Live updates for terminals (WebSocket; docs/live.md). Authenticate with an Authorization: Bearer header, " +
			`or (browsers) with the first message {"type":"auth","access_token":"…"} within 5 s. Then send ` +
			`{"type":"subscribe","topics":["orders","stock","catalog","customers"],"location_id":"…","after":"<position>"} ` +
			"(each topic needs its read scope: orders:read, inventory:read, catalog:read, customers:read; location_id selects the " +
			"orders and stock of one location and is required for them on the hub; after resumes after a position seen before). " +
			`The answer is {"type":"subscribed","position":…}, then {"type":"change","position","topic","entity","id","op",` +
			`"location_id","data"} for every change, data being the resource as its GET answers (null once deleted). ` +
			`A position the node cannot resume from gets {"type":"reset","position":…}: reload by REST. Errors are ` +
			`{"type":"error","status","message"}. Close codes: 1001 server shutdown, 1008 too slow, 4401 bad or expired token, ` +
			"4403 scope, 1013 too many connections. Positions are per node",
	}, s.serveLive)
}

// liveFeeds holds the per-org feeds of a server.
type liveFeeds struct {
	s *Server

	mu     sync.Mutex
	orgs   map[string]*liveFeed
	done   chan struct{}
	closed sync.Once
	sub    *eventbus.Subscription
}

func newLiveFeeds(s *Server, bus *eventbus.Bus) *liveFeeds {
	l := &liveFeeds{s: s, orgs: map[string]*liveFeed{}, done: make(chan struct{})}
	if bus != nil {
		l.sub = bus.Subscribe(liveBusBuffer, func(e kassa.Event) bool { return e.Type == kassa.EventLiveChange })
		go l.dispatch()
	}
	return l
}

func (l *liveFeeds) dispatch() {
	for {
		select {
		case <-l.done:
			return
		case e, ok := <-l.sub.C:
			if !ok {
				return
			}
			l.mu.Lock()
			f := l.orgs[e.OrgID]
			l.mu.Unlock()
			if f != nil {
				f.wake()
			}
		}
	}
}

func (l *liveFeeds) close() {
	l.closed.Do(func() {
		close(l.done)
		if l.sub != nil {
			l.sub.Close()
		}
	})
}

// orgCtx acts as the org with every read scope of the topics.
func orgCtx(orgID string) context.Context {
	return kassa.WithActor(context.Background(), &kassa.Actor{OrgID: orgID, Scopes: kassa.LiveScopes})
}

func (l *liveFeeds) acquire(orgID string) (*liveFeed, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if f := l.orgs[orgID]; f != nil {
		f.refs++
		return f, nil
	}
	ctx := orgCtx(orgID)
	head, err := l.s.svc.Live.LiveHead(ctx)
	if err != nil {
		return nil, err
	}
	f := &liveFeed{l: l, org: orgID, ctx: ctx, refs: 1, base: head, head: head, poke: make(chan struct{}, 1),
		changed: make(chan struct{}), stop: make(chan struct{})}
	l.orgs[orgID] = f
	go f.run()
	return f, nil
}

func (l *liveFeeds) release(f *liveFeed) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if f.refs--; f.refs == 0 {
		delete(l.orgs, f.org)
		close(f.stop)
	}
}

// liveMsg is a change message, encoded once for every connection.
type liveMsg struct {
	pos      kassa.LivePosition // the log position reached with it
	applied  bool               // the change is one applied from the hub (pos.Applied is its own)
	topic    string
	location string
	b        []byte
}

// newer reports whether m is after cursor: its own part is past it.
func (m *liveMsg) newer(cursor kassa.LivePosition) bool {
	if m.applied {
		return m.pos.Applied > cursor.Applied
	}
	return m.pos.Own > cursor.Own
}

// liveFeed keeps an org's newest change messages in memory.
type liveFeed struct {
	l    *liveFeeds
	org  string
	ctx  context.Context
	refs int // guarded by l.mu
	poke chan struct{}
	stop chan struct{}

	mu      sync.Mutex
	base    kassa.LivePosition // the ring holds every change after base up to head
	head    kassa.LivePosition
	ring    []liveMsg
	changed chan struct{}
}

func (f *liveFeed) wake() {
	select {
	case f.poke <- struct{}{}:
	default:
	}
}

func (f *liveFeed) run() {
	t := time.NewTicker(livePoll)
	defer t.Stop()
	for {
		select {
		case <-f.stop:
			return
		case <-f.l.done:
			return
		case <-f.poke:
		case <-t.C:
		}
		f.fetch()
	}
}

func (f *liveFeed) fetch() {
	for {
		f.mu.Lock()
		head := f.head
		f.mu.Unlock()
		msgs, n, err := f.l.s.liveRead(f.ctx, head, livePageSize)
		if err != nil {
			f.l.s.log.Error("live feed", slog.Any("err", err))
			return
		}
		if n == 0 {
			return
		}
		f.mu.Lock()
		f.ring = append(f.ring, msgs...)
		if k := len(f.ring) - liveRingSize; k > 0 {
			f.base = f.ring[k-1].pos
			f.ring = append([]liveMsg(nil), f.ring[k:]...)
		}
		if len(msgs) > 0 {
			f.head = msgs[len(msgs)-1].pos
		}
		close(f.changed)
		f.changed = make(chan struct{})
		f.mu.Unlock()
		if n < livePageSize {
			return
		}
	}
}

// since returns the ring's messages after cursor and the head they reach;
// ok is false when the ring does not reach back to cursor.
func (f *liveFeed) since(cursor kassa.LivePosition) (msgs []liveMsg, head kassa.LivePosition, ok bool, changed <-chan struct{}) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.base.After(cursor) {
		return nil, head, false, f.changed
	}
	// Positions grow along the ring: skip those at or before cursor.
	i := sort.Search(len(f.ring), func(i int) bool { return f.ring[i].pos.After(cursor) })
	return f.ring[i:len(f.ring):len(f.ring)], f.head, true, f.changed
}

// liveRead reads up to limit changes after pos with their resources and
// encodes their messages; n is how many changes were read (a change whose
// resource is gone is sent with data null).
func (s *Server) liveRead(ctx context.Context, after kassa.LivePosition, limit int) ([]liveMsg, int, error) {
	cs, err := s.svc.Live.LiveChanges(ctx, after, limit)
	if err != nil {
		return nil, 0, err
	}
	out := make([]liveMsg, 0, len(cs))
	prev := after
	for i := range cs {
		c := &cs[i]
		topic, shown, _ := kassa.LiveTopic(c.Entity)
		id, op := c.EntityID, c.Op
		data, err := s.liveData(ctx, c)
		switch {
		case kassa.ErrorKind(err) == kassa.ENotFound:
			data, op = nil, "delete"
		case err != nil:
			return nil, 0, err
		}
		if shown == "stock_level" {
			if l, ok := data.(*kassa.StockLevel); ok {
				id = l.ID
			}
			op = "update"
		}
		b, err := json.Marshal(liveChange{Type: "change", Position: c.Position.String(), Topic: topic, Entity: shown, ID: id,
			Op: op, LocationID: c.LocationID, Data: data})
		if err != nil {
			return nil, 0, err
		}
		out = append(out, liveMsg{pos: c.Position, applied: c.Position.Applied > prev.Applied, topic: topic,
			location: c.LocationID, b: b})
		prev = c.Position
	}
	return out, len(cs), nil
}

// liveChange is a change message.
type liveChange struct {
	Type       string `json:"type"` // change
	Position   string `json:"position"`
	Topic      string `json:"topic"`
	Entity     string `json:"entity"`
	ID         string `json:"id"`
	Op         string `json:"op"`
	LocationID string `json:"location_id,omitempty"`
	Data       any    `json:"data"`
}

// liveData reads a change's resource as its REST GET answers.
func (s *Server) liveData(ctx context.Context, c *kassa.LiveChange) (any, error) {
	switch c.Entity {
	case "order":
		return s.svc.Orders.FindOrderByID(ctx, c.EntityID)
	case "stock_level", "stock_movement":
		if c.ProductID == "" {
			return nil, kassa.Errorf(kassa.ENotFound, "gone")
		}
		return s.svc.Live.FindStockLevel(ctx, c.LocationID, c.ProductID)
	case "product":
		return s.svc.Products.FindProductByID(ctx, c.EntityID)
	case "category":
		return s.svc.Categories.FindCategoryByID(ctx, c.EntityID)
	case "modifier_group":
		return s.svc.ModifierGroups.FindModifierGroupByID(ctx, c.EntityID)
	case "price_list":
		return s.svc.PriceLists.FindPriceListByID(ctx, c.EntityID)
	case "customer":
		return s.svc.Customers.FindCustomerByID(ctx, c.EntityID)
	}
	return nil, kassa.Errorf(kassa.ENotFound, "not shown")
}

// liveClient is one connection's subscription.
type liveClient struct {
	topics   []string
	location string // "": every location
	cursor   kassa.LivePosition
}

// scopes are the read scopes of the client's topics.
func (lc *liveClient) scopes() []kassa.Scope {
	out := make([]kassa.Scope, 0, len(lc.topics))
	for _, t := range lc.topics {
		sc, _ := kassa.TopicScope(t)
		out = append(out, sc)
	}
	return out
}

func (lc *liveClient) wants(m *liveMsg) bool {
	if !slices.Contains(lc.topics, m.topic) {
		return false
	}
	return lc.location == "" || m.location == "" || m.location == lc.location
}

// subscribe checks a subscribe message and returns the subscription.
func (s *Server) subscribe(ctx context.Context, b []byte) (*liveClient, error) {
	var m liveSubscribe
	if err := json.Unmarshal(b, &m); err != nil {
		return nil, kassa.Errorf(kassa.EBadRequest, "a message must be a JSON object")
	}
	if m.Type != "subscribe" {
		return nil, kassa.Errorf(kassa.EBadRequest, `the message type must be "subscribe"`)
	}
	a := kassa.ActorFrom(ctx)
	if len(m.Topics) == 0 {
		return nil, kassa.Errorf(kassa.EBadRequest, "topics must list orders, stock, catalog or customers")
	}
	located := false
	for _, t := range m.Topics {
		sc, ok := kassa.TopicScope(t)
		if !ok {
			return nil, kassa.Errorf(kassa.EBadRequest, "topics must list orders, stock, catalog or customers; %q is none of them", t)
		}
		if !a.Has(sc) {
			return nil, kassa.Errorf(kassa.EForbidden, "the topic %s needs the %s scope", t, sc)
		}
		located = located || t == kassa.TopicOrders || t == kassa.TopicStock
	}
	if m.LocationID != "" {
		if _, err := s.svc.Locations.FindLocationByID(ctx, m.LocationID); err != nil {
			return nil, err
		}
	} else if located && s.cfg.Node == kassa.NodeHub {
		return nil, kassa.Errorf(kassa.EBadRequest, "location_id is required on the hub for the orders and stock topics")
	}
	lc := &liveClient{topics: slices.Clone(m.Topics), location: m.LocationID}
	head, err := s.svc.Live.LiveHead(ctx)
	if err != nil {
		return nil, err
	}
	lc.cursor = head
	if m.After != "" {
		after, err := kassa.ParseLivePosition(m.After)
		if err != nil {
			return nil, err
		}
		if !after.After(head) {
			lc.cursor = after
		} else {
			// A position from the future: a replaced data directory or
			// another node's. The client must reload.
			lc.cursor = head
			return lc, errLiveReset
		}
	}
	return lc, nil
}

var errLiveReset = errors.New("live: reset")

func (s *Server) serveLive(ctx context.Context, c *wsConn) error {
	msgs := make(chan []byte)
	go func() {
		defer close(msgs)
		for {
			b, err := c.Receive(ctx)
			if err != nil {
				return
			}
			select {
			case msgs <- b:
			case <-ctx.Done():
				return
			}
		}
	}()
	var feed *liveFeed
	defer func() {
		if feed != nil {
			s.live.release(feed)
		}
	}()
	var lc *liveClient
	for {
		var changed <-chan struct{}
		if lc != nil {
			var err error
			if changed, err = s.deliver(ctx, c, feed, lc); err != nil {
				if errors.Is(err, errWSClosed) || ctx.Err() != nil {
					return nil
				}
				return err
			}
		}
		select {
		case <-ctx.Done():
			return nil
		case <-changed:
		case b, ok := <-msgs:
			if !ok {
				return nil
			}
			next, err := s.subscribe(ctx, b)
			switch {
			case errors.Is(err, errLiveReset):
				c.Send(map[string]string{"type": "reset", "position": next.cursor.String()})
			case err != nil:
				c.Send(liveErr(err))
				continue
			}
			if feed == nil {
				if feed, err = s.live.acquire(kassa.ActorFrom(ctx).OrgID); err != nil {
					return err
				}
			}
			lc = next
			// Each topic's scope is rechecked with the token at every
			// ping: a user who loses one loses the feed.
			c.require(lc.scopes()...)
			c.Send(map[string]any{"type": "subscribed", "topics": lc.topics, "location_id": lc.location, "position": lc.cursor.String()})
		}
	}
}

// deliver sends the client's messages after its cursor: from the feed's
// ring, or from the log when the ring does not reach back that far.
func (s *Server) deliver(ctx context.Context, c *wsConn, feed *liveFeed, lc *liveClient) (<-chan struct{}, error) {
	for {
		msgs, head, ok, changed := feed.since(lc.cursor)
		if ok {
			for i := range msgs {
				m := &msgs[i]
				if m.newer(lc.cursor) && lc.wants(m) {
					if err := c.SendWait(ctx, m.b); err != nil {
						return nil, err
					}
				}
			}
			lc.cursor = lc.cursor.Max(head)
			return changed, nil
		}
		feed.mu.Lock()
		base := feed.base // before the read: the ring may move on meanwhile
		feed.mu.Unlock()
		page, n, err := s.liveRead(orgCtx(kassa.ActorFrom(ctx).OrgID), lc.cursor, livePageSize)
		if err != nil {
			return nil, err
		}
		for i := range page {
			m := &page[i]
			if lc.wants(m) {
				if err := c.SendWait(ctx, m.b); err != nil {
					return nil, err
				}
			}
			lc.cursor = lc.cursor.Max(m.pos)
		}
		if n < livePageSize {
			// Caught up with the log as of this read, which is past the
			// ring's base.
			lc.cursor = lc.cursor.Max(base)
		}
	}
}
