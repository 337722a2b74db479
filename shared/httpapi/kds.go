package httpapi

import (
	"bufio"
	"context"
	"encoding/json"
	"log/slog"
	"net"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/gofiber/fiber/v2"
	"github.com/prometheus/client_golang/prometheus"

	"kassa.dev/shared/eventbus"
	"kassa.dev/shared/kassa"
)

// The kitchen display feed: GET /kds/stream serves the node's durable
// ticket events (kds_events, written in the same unit of work as the order
// change) as Server-Sent Events, with the event's seq as SSE id.
//
// One feed per org with open streams keeps the newest events in memory: it
// is woken by kassa.EventKDSTicket on the bus after a commit (and polls
// every kdsPoll in case the bus dropped one), reads the new rows once, and
// wakes its streams, which filter by location and station. A stream that
// resumes from further back than the feed holds reads the table itself,
// page by page, until it has caught up. Nothing is ever read from the bus
// itself, so a lost bus event cannot lose a ticket.
//
// Fiber (fasthttp) does not tell a handler that its client went away; only
// a failed write or flush does. Each stream therefore writes a heartbeat
// comment every KDSHeartbeat, sets a write deadline on the connection
// before every flush (a client that stopped reading is cut off after
// KDSWriteTimeout instead of pinning a goroutine forever) and, on Linux,
// TCP_USER_TIMEOUT, so a client that vanished without a FIN is found out
// too. At every heartbeat a stream also re-reads its token's actor, so a
// logout, a deactivation or a role without the kds scope ends it within
// one heartbeat. A stream never holds a lock while it writes, so a slow
// or dead screen cannot slow order taking. Server.Shutdown ends every
// stream before it waits for connections to go idle.

const (
	kdsPoll      = time.Second // safety poll of a feed, in case a wake-up was dropped
	kdsRingSize  = 2048        // events a feed keeps in memory
	kdsPageSize  = 500         // rows per read of the table
	kdsRetryMS   = 2000        // the client's reconnect delay, sent as retry:
	kdsBusBuffer = 1024
)

func (s *Server) routesKDS() {
	s.kds = newKDSFeeds(s.svc.KDS, s.svc.Events, s.log, s.cfg.KDSHeartbeat, s.cfg.KDSWriteTimeout)
	s.metrics.Registry.MustRegister(s.kds.gauge)
	if s.cfg.KDSPage != nil {
		s.page("/kds", s.cfg.KDSPage)
	}
	loc := Param{"location_id", "string", "only this location's tickets (required on the hub)"}
	station := Param{"station", "string", "only tickets with lines of this station (e.g. kitchen, bar), trimmed to those lines"}
	stream := &Route{Method: "GET", Path: "/kds/stream", Tag: "kds", Scope: kassa.ScopeKDS, Status: fiber.StatusOK, Produces: "text/event-stream",
		Query: []Param{loc, station,
			{"last_event_id", "integer", "resume after this event id on the first connect (the Last-Event-ID header wins over it); " +
				"without either the stream starts with the next event"},
			{"access_token", "string", "the bearer token, for browsers' EventSource, which cannot send headers (never logged)"},
		},
		Summary: "Kitchen display feed (text/event-stream). Events ticket.created, ticket.updated (notes or status), " +
			"ticket.bumped, ticket.recalled and ticket.voided (the order was cancelled or refunded in full before it was served: " +
			"the ticket has void true and leaves the board); data is {seq, type, location_id, ticket, created_at}. A ticket's " +
			"ticket_number (#1, #2…) is given by this node per location and local business day. " +
			"The id is a per-node sequence that survives restarts: reconnecting with Last-Event-ID (or last_event_id) sends exactly " +
			"the events missed, then live ones. A ': ping' comment comes every 15 s; retry is 2 s. Ids of the edge and the hub " +
			"are separate sequences. Tokens: bearer header, or access_token query"}
	stream.Handler = func(c *fiber.Ctx) error { return s.kdsStream(c, stream) }
	s.routes = append(s.routes, stream)
	// GET only: a HEAD would open a stream that sends nothing.
	s.api.Add(fiber.MethodGet, stream.Path, queryToken, s.authenticate(stream.Scope), stream.Handler)
	s.handle(&Route{Method: "GET", Path: "/kds/tickets", Tag: "kds", Scope: kassa.ScopeKDS, Resp: kassa.TicketBoard{},
		Query: []Param{loc, station, {"kitchen_status", "string", "comma-separated states to show; default new,in_progress,ready"}},
		Summary: "The kitchen board: tickets of the last 24 hours still open in the kitchen (not void), oldest first, " +
			"with the last_event_id to open the stream from, the stations in use, and the server's clock",
		Handler: s.ticketBoard})
	s.handle(&Route{Method: "POST", Path: "/kds/tickets/:id/bump", Tag: "kds", Scope: kassa.ScopeKDS, Body: kassa.TicketMove{}, Resp: kassa.Ticket{},
		Summary: "Bump a ticket (id: the order's id): kitchen_status moves one step (new → in_progress → ready → served), " +
			"or forward to the kitchen_status given; the body is optional. Order-wide, seen by every screen; 409 for a " +
			"served or cancelled order",
		Handler: s.moveTicket(true)})
	s.handle(&Route{Method: "POST", Path: "/kds/tickets/:id/recall", Tag: "kds", Scope: kassa.ScopeKDS, Body: kassa.TicketMove{}, Resp: kassa.Ticket{},
		Summary: "Recall a bumped ticket: kitchen_status moves one step back, or back to the kitchen_status given; 409 for a new or cancelled order",
		Handler: s.moveTicket(false)})
}

// queryToken lets the KDS stream take its bearer token from the
// access_token query parameter (CONTRACT.md: EventSource cannot send
// headers). The access log never logs the query.
func queryToken(c *fiber.Ctx) error {
	if c.Get(fiber.HeaderAuthorization) == "" {
		if tok := c.Query("access_token"); tok != "" {
			c.Request().Header.Set(fiber.HeaderAuthorization, "Bearer "+tok)
		}
	}
	return c.Next()
}

// kdsFilter reads location_id and station; the hub needs a location.
func (s *Server) kdsFilter(c *fiber.Ctx) (*string, string, error) {
	loc, err := queryID(c, "location_id")
	if err != nil {
		return nil, "", err
	}
	if loc == nil && s.cfg.Node == kassa.NodeHub {
		return nil, "", kassa.Errorf(kassa.EBadRequest, "location_id is required on the hub")
	}
	if loc != nil && s.svc.Locations != nil {
		if _, err := s.svc.Locations.FindLocationByID(c.UserContext(), *loc); err != nil {
			return nil, "", err
		}
	}
	station := c.Query("station")
	if station != "" && !kassa.ValidStation(station) {
		return nil, "", kassa.Errorf(kassa.EBadRequest, "station must be 1-32 lower-case letters, digits, - or _")
	}
	return loc, station, nil
}

func (s *Server) ticketBoard(c *fiber.Ctx) error {
	loc, station, err := s.kdsFilter(c)
	if err != nil {
		return err
	}
	f := kassa.TicketBoardFilter{LocationID: loc, Station: station}
	if v := c.Query("kitchen_status"); v != "" {
		for _, st := range strings.Split(v, ",") {
			if kassa.KitchenRank(st) < 0 {
				return kassa.Errorf(kassa.EBadRequest, "kitchen_status must list new, in_progress, ready or served")
			}
			f.KitchenStatuses = append(f.KitchenStatuses, st)
		}
	}
	b, err := s.svc.KDS.TicketBoard(c.UserContext(), f)
	if err != nil {
		return err
	}
	return one(c, fiber.StatusOK, b)
}

func (s *Server) moveTicket(forward bool) fiber.Handler {
	return func(c *fiber.Ctx) error {
		id, err := pathID(c, "ticket")
		if err != nil {
			return err
		}
		var in kassa.TicketMove
		if len(strings.TrimSpace(string(c.Body()))) > 0 {
			if err := decode(c, &in); err != nil {
				return err
			}
		}
		move := s.svc.KDS.RecallTicket
		if forward {
			move = s.svc.KDS.BumpTicket
		}
		t, err := move(c.UserContext(), id, &in)
		if err != nil {
			return err
		}
		return one(c, fiber.StatusOK, t)
	}
}

// lastEventID reads Last-Event-ID, else last_event_id; ok is false when
// neither was sent.
func lastEventID(c *fiber.Ctx) (int64, bool, error) {
	v := c.Get("Last-Event-ID")
	if v == "" {
		v = c.Query("last_event_id")
	}
	if v == "" {
		return 0, false, nil
	}
	n, err := strconv.ParseInt(v, 10, 64)
	if err != nil || n < 0 {
		return 0, false, kassa.Errorf(kassa.EBadRequest, "Last-Event-ID must be an event id: a non-negative integer")
	}
	return n, true, nil
}

// kdsStream serves route (GET /kds/stream).
func (s *Server) kdsStream(c *fiber.Ctx, route *Route) error {
	ctx := c.UserContext()
	a := kassa.ActorFrom(ctx)
	loc, station, err := s.kdsFilter(c)
	if err != nil {
		return err
	}
	after, resume, err := lastEventID(c)
	if err != nil {
		return err
	}
	// The table, not the feed, says what exists: the feed may not have
	// read the newest rows yet, which a board read just now includes.
	last, err := s.svc.KDS.LastTicketSeq(ctx)
	if err != nil {
		return err
	}
	if !resume || after > last {
		// A fresh screen starts with the next event (it read the board
		// first); an id from the future (a replaced data directory) too.
		after = last
	}
	feed, err := s.kds.acquire(a.OrgID)
	if err != nil {
		return err
	}
	token, _ := strings.CutPrefix(c.Get(fiber.HeaderAuthorization), "Bearer ")
	// Fiber's strings point into the request's buffers: the stream, which
	// outlives the handler, keeps copies.
	if loc != nil {
		l := strings.Clone(*loc)
		loc = &l
	}
	st := &kdsStream{feeds: s.kds, feed: feed, ctx: ctx, after: after, location: loc, station: strings.Clone(station),
		route: route, held: heldToken{auth: s.bearer, token: strings.Clone(strings.TrimSpace(token)), org: a.OrgID},
		conn: c.Context().Conn()}
	c.Set(fiber.HeaderContentType, "text/event-stream")
	c.Set(fiber.HeaderCacheControl, "no-cache")
	c.Set("X-Accel-Buffering", "no")
	s.kds.gauge.Inc()
	// fasthttp runs the writer in a goroutine of its own once the handler
	// returned; c must not be touched in there (Fiber reuses it).
	c.Context().SetBodyStreamWriter(st.run)
	return nil
}

// kdsFeeds holds the per-org feeds of a server.
type kdsFeeds struct {
	svc          kassa.KDSService
	log          *slog.Logger
	heartbeat    time.Duration
	writeTimeout time.Duration
	gauge        prometheus.Gauge

	mu     sync.Mutex
	orgs   map[string]*orgFeed
	done   chan struct{}
	closed sync.Once
	sub    *eventbus.Subscription
}

func newKDSFeeds(svc kassa.KDSService, bus *eventbus.Bus, log *slog.Logger, heartbeat, writeTimeout time.Duration) *kdsFeeds {
	if heartbeat <= 0 {
		heartbeat = 15 * time.Second
	}
	if writeTimeout <= 0 {
		// The deadline is absolute: a loaded machine must not cut off a
		// client that reads, so never less than 5 s.
		writeTimeout = max(2*heartbeat, 5*time.Second)
	}
	k := &kdsFeeds{svc: svc, log: log, heartbeat: heartbeat, writeTimeout: writeTimeout, orgs: map[string]*orgFeed{},
		done: make(chan struct{}),
		gauge: prometheus.NewGauge(prometheus.GaugeOpts{Name: "kassa_kds_streams",
			Help: "Open kitchen display streams (GET /api/v1/kds/stream)."})}
	if bus != nil {
		k.sub = bus.Subscribe(kdsBusBuffer, func(e kassa.Event) bool { return e.Type == kassa.EventKDSTicket })
		go k.dispatch()
	}
	return k
}

// dispatch wakes the feed of the org of every ticket wake-up.
func (k *kdsFeeds) dispatch() {
	for {
		select {
		case <-k.done:
			return
		case e, ok := <-k.sub.C:
			if !ok {
				return
			}
			k.mu.Lock()
			f := k.orgs[e.OrgID]
			k.mu.Unlock()
			if f != nil {
				f.wake()
			}
		}
	}
}

// close ends every stream and feed; Server.Shutdown calls it first.
func (k *kdsFeeds) close() {
	k.closed.Do(func() {
		close(k.done)
		if k.sub != nil {
			k.sub.Close()
		}
	})
}

// acquire returns the org's feed, starting it on first use.
func (k *kdsFeeds) acquire(orgID string) (*orgFeed, error) {
	k.mu.Lock()
	defer k.mu.Unlock()
	if f := k.orgs[orgID]; f != nil {
		f.refs++
		return f, nil
	}
	ctx := kassa.WithActor(context.Background(), &kassa.Actor{OrgID: orgID, Scopes: []kassa.Scope{kassa.ScopeKDS}})
	head, err := k.svc.LastTicketSeq(ctx)
	if err != nil {
		return nil, err
	}
	f := &orgFeed{k: k, ctx: ctx, refs: 1, base: head, head: head, poke: make(chan struct{}, 1),
		changed: make(chan struct{}), stop: make(chan struct{})}
	k.orgs[orgID] = f
	go f.run()
	return f, nil
}

// release drops a stream's hold on its feed; the last one stops it.
func (k *kdsFeeds) release(f *orgFeed) {
	k.mu.Lock()
	defer k.mu.Unlock()
	if f.refs--; f.refs == 0 {
		delete(k.orgs, kassa.ActorFrom(f.ctx).OrgID)
		close(f.stop)
	}
}

// orgFeed keeps an org's newest ticket events in memory for its streams.
type orgFeed struct {
	k    *kdsFeeds
	ctx  context.Context // acts as the org, for the reads
	refs int             // guarded by k.mu
	poke chan struct{}
	stop chan struct{}

	mu      sync.Mutex
	base    int64 // the ring holds every event of the org in (base, head]
	head    int64
	ring    []feedEvent
	changed chan struct{} // closed (and replaced) when head moves
}

// feedEvent is an event of the ring with its SSE form encoded once for
// every screen: whole, and trimmed to each of its stations.
type feedEvent struct {
	kassa.TicketEvent
	sse       []byte
	byStation map[string][]byte
}

func newFeedEvent(e kassa.TicketEvent) feedEvent {
	fe := feedEvent{TicketEvent: e, sse: appendSSE(nil, &e)}
	if len(e.Ticket.Stations) > 1 {
		fe.byStation = make(map[string][]byte, len(e.Ticket.Stations))
		for _, st := range e.Ticket.Stations {
			one := e
			one.Ticket = e.Ticket.ForStation(st)
			fe.byStation[st] = appendSSE(nil, &one)
		}
	}
	return fe
}

// forStation returns the event's SSE form for a station's screen ("": all).
func (fe *feedEvent) forStation(station string) []byte {
	if b, ok := fe.byStation[station]; ok {
		return b
	}
	return fe.sse
}

func (f *orgFeed) wake() {
	select {
	case f.poke <- struct{}{}:
	default:
	}
}

func (f *orgFeed) run() {
	t := time.NewTicker(kdsPoll)
	defer t.Stop()
	for {
		select {
		case <-f.stop:
			return
		case <-f.k.done:
			return
		case <-f.poke:
		case <-t.C:
		}
		f.fetch()
	}
}

// fetch reads the events after head into the ring and wakes the streams.
func (f *orgFeed) fetch() {
	for {
		f.mu.Lock()
		head := f.head
		f.mu.Unlock()
		evs, err := f.k.svc.TicketEvents(f.ctx, kassa.TicketEventFilter{After: head, Limit: kdsPageSize})
		if err != nil {
			f.k.log.Error("kds feed", slog.Any("err", err))
			return
		}
		if len(evs) == 0 {
			return
		}
		encoded := make([]feedEvent, len(evs))
		for i := range evs {
			encoded[i] = newFeedEvent(evs[i])
		}
		f.mu.Lock()
		f.ring = append(f.ring, encoded...)
		if n := len(f.ring) - kdsRingSize; n > 0 {
			f.base = f.ring[n-1].Seq
			f.ring = append([]feedEvent(nil), f.ring[n:]...)
		}
		f.head = evs[len(evs)-1].Seq
		close(f.changed)
		f.changed = make(chan struct{})
		f.mu.Unlock()
		if len(evs) < kdsPageSize {
			return
		}
	}
}

func (f *orgFeed) baseSeq() int64 {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.base
}

// since returns the ring's events after cursor and the head they reach,
// with ok false when the ring does not reach back to cursor; changed is
// closed once there is more.
func (f *orgFeed) since(cursor int64) (evs []feedEvent, head int64, ok bool, changed <-chan struct{}) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if cursor < f.base {
		return nil, 0, false, f.changed
	}
	i := sort.Search(len(f.ring), func(i int) bool { return f.ring[i].Seq > cursor })
	return f.ring[i:len(f.ring):len(f.ring)], f.head, true, f.changed
}

// kdsStream is one open stream.
type kdsStream struct {
	feeds    *kdsFeeds
	feed     *orgFeed
	ctx      context.Context
	after    int64
	location *string
	station  string
	route    *Route
	held     heldToken // rechecked at every heartbeat
	conn     net.Conn
}

// run writes the stream until the client goes away, its token stops
// granting the kds scope (heldToken.recheck), or the server shuts down.
func (st *kdsStream) run(w *bufio.Writer) {
	k := st.feeds
	defer func() {
		if st.conn != nil {
			st.conn.SetWriteDeadline(time.Time{})
		}
		k.release(st.feed)
		k.gauge.Dec()
	}()
	if st.conn != nil {
		setUserTimeout(st.conn, k.writeTimeout)
	}
	flush := func() error {
		if st.conn != nil {
			st.conn.SetWriteDeadline(time.Now().Add(k.writeTimeout))
		}
		return w.Flush()
	}
	w.WriteString("retry: " + strconv.Itoa(kdsRetryMS) + "\n: connected\n\n")
	if flush() != nil {
		return
	}
	hb := time.NewTicker(k.heartbeat)
	defer hb.Stop()
	cursor := st.after
	var buf []byte
	for {
		select {
		case <-k.done:
			return
		default:
		}
		evs, head, ok, changed := st.feed.since(cursor)
		if !ok {
			// Behind the ring: read the table, already filtered.
			base := st.feed.baseSeq()
			page, err := k.svc.TicketEvents(st.ctx, kassa.TicketEventFilter{After: cursor, LocationID: st.location,
				Station: st.station, Limit: kdsPageSize})
			if err != nil {
				k.log.Error("kds stream", slog.Any("err", err))
				return
			}
			for i := range page {
				buf = appendSSE(buf[:0], &page[i])
				w.Write(buf)
				cursor = page[i].Seq
			}
			if len(page) < kdsPageSize {
				cursor = max(cursor, base)
			}
			if flush() != nil {
				return
			}
			continue
		}
		wrote := false
		for i := range evs {
			e := &evs[i]
			if (st.location != nil && e.LocationID != *st.location) || !e.Ticket.HasStation(st.station) {
				continue
			}
			w.Write(e.forStation(st.station))
			wrote = true
		}
		cursor = max(cursor, head)
		if wrote && flush() != nil {
			return
		}
		select {
		case <-k.done:
			return
		case <-changed:
		case <-hb.C:
			if st.held.recheck(context.Background(), st.route) != nil {
				return // the client reconnects with a fresh token, or is refused
			}
			w.WriteString(": ping\n\n")
			if flush() != nil {
				return
			}
		}
	}
}

// appendSSE appends one event in text/event-stream form.
func appendSSE(b []byte, e *kassa.TicketEvent) []byte {
	data, _ := json.Marshal(e)
	b = append(b, "id: "...)
	b = strconv.AppendInt(b, e.Seq, 10)
	b = append(b, "\nevent: "...)
	b = append(b, e.Type...)
	b = append(b, "\ndata: "...)
	b = append(b, data...)
	return append(b, "\n\n"...)
}
