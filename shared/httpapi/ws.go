package httpapi

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/gofiber/fiber/v2"
	"github.com/gorilla/websocket"
	"github.com/prometheus/client_golang/prometheus"

	"kassa.dev/shared/kassa"
)

// WebSocket endpoints (docs/ops.md, "WebSocket plumbing"; docs/live.md).
//
// Fiber runs on fasthttp, whose net/http adaptor cannot hijack, so a
// WebSocket route is a Fiber handler that checks the request (an upgrade,
// its Origin, its bearer token and scope when it sent one), copies the
// headers it keeps (Fiber reuses their buffers once the handler returns),
// and hijacks the connection; gorilla's Upgrader then finishes the
// handshake over the hijacked conn through wsResponse, a minimal
// http.ResponseWriter and http.Hijacker. A browser cannot send headers on
// a WebSocket: without an Authorization header the first message must be
// {"type":"auth","access_token":"…"} within wsAuthTimeout.
//
// Each connection has a bounded send queue drained by one writer
// goroutine (Send never blocks: a client whose queue is full is cut off
// with close 1008 "too slow") and one reader goroutine (read limit
// wsReadLimit). The writer pings every Config.WSPing and first rechecks
// the token as a request would (heldToken.recheck, as the KDS stream
// does): a logout, an expiry or a deactivated user closes with 4401; a
// role (or an app) without the route's scope, or without one that serve
// requires (require: the live feed's topics), closes with 4403. The
// reader's deadline is two pings ahead and moves with every pong or
// message, so a peer that does not answer within the next ping is cut.
// Connections are capped per org and in total; Server.Shutdown closes
// every one with 1001 "going away".

const (
	wsAuthTimeout  = 5 * time.Second
	wsReadLimit    = 64 << 10
	wsSendQueue    = 256 // messages queued for one client
	wsReceiveQueue = 16  // messages read ahead of serve
	wsWriteTimeout = 10 * time.Second
	wsCloseGrace   = time.Second      // how long a closing connection waits for the peer's close
	wsCloseWait    = 2 * wsCloseGrace // how long Shutdown waits for every peer before cutting the rest

	defaultWSPing        = 20 * time.Second
	defaultWSMaxConns    = 5000
	defaultWSMaxOrgConns = 1000
)

// Close codes beyond RFC 6455's: 4401 and 4403 mirror HTTP 401 and 403 for
// a browser, which authenticates after the upgrade.
const (
	wsCloseUnauthorized = 4401
	wsCloseForbidden    = 4403
)

var (
	errWSClosed  = errors.New("websocket: connection closed")
	errWSTooSlow = errors.New("websocket: client too slow, cut off")
)

// wsAuth is the first message of a connection opened without an
// Authorization header.
type wsAuth struct {
	Type        string `json:"type"`
	AccessToken string `json:"access_token"`
}

// wsConns holds a server's open WebSocket connections.
type wsConns struct {
	ping        time.Duration
	authTimeout time.Duration
	maxTotal    int
	maxOrg      int
	gauge       prometheus.Gauge

	mu     sync.Mutex
	total  int
	orgs   map[string]int
	conns  map[*wsConn]struct{}
	closed bool
	wg     sync.WaitGroup
}

func newWSConns(cfg Config) *wsConns {
	h := &wsConns{ping: cfg.WSPing, authTimeout: wsAuthTimeout, maxTotal: cfg.WSMaxConns, maxOrg: cfg.WSMaxOrgConns,
		orgs: map[string]int{}, conns: map[*wsConn]struct{}{},
		gauge: prometheus.NewGauge(prometheus.GaugeOpts{Name: "kassa_ws_connections",
			Help: "Open WebSocket connections (GET /api/v1/ws and the other WebSocket routes)."})}
	if h.ping <= 0 {
		h.ping = defaultWSPing
	}
	if h.maxTotal <= 0 {
		h.maxTotal = defaultWSMaxConns
	}
	if h.maxOrg <= 0 {
		h.maxOrg = defaultWSMaxOrgConns
	}
	return h
}

var errWSFull = &kassa.Error{Kind: kassa.EUnavailable, Message: "too many WebSocket connections; try again later", RetryAfter: 5}

// admit counts a connection in; org "" counts it only in the total (an
// unauthenticated browser connection, whose org comes with its first
// message: then admitOrg).
func (h *wsConns) admit(org string) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.closed {
		return &kassa.Error{Kind: kassa.EUnavailable, Message: "the server is shutting down", RetryAfter: 5}
	}
	if h.total >= h.maxTotal || (org != "" && h.orgs[org] >= h.maxOrg) {
		return errWSFull
	}
	h.total++
	if org != "" {
		h.orgs[org]++
	}
	return nil
}

func (h *wsConns) admitOrg(org string) bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.orgs[org] >= h.maxOrg {
		return false
	}
	h.orgs[org]++
	return true
}

// leave undoes admit (and admitOrg when org is not "").
func (h *wsConns) leave(org string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.total--
	if org != "" {
		if h.orgs[org]--; h.orgs[org] <= 0 {
			delete(h.orgs, org)
		}
	}
}

func (h *wsConns) add(c *wsConn) bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.closed {
		return false
	}
	h.conns[c] = struct{}{}
	return true
}

func (h *wsConns) remove(c *wsConn) {
	h.mu.Lock()
	delete(h.conns, c)
	h.mu.Unlock()
}

// shutdown closes every connection with 1001 and waits for them to end,
// up to ctx's deadline, after which it cuts the rest.
func (h *wsConns) shutdown(ctx context.Context) {
	h.mu.Lock()
	h.closed = true
	conns := make([]*wsConn, 0, len(h.conns))
	for c := range h.conns {
		conns = append(conns, c)
	}
	h.mu.Unlock()
	for _, c := range conns {
		c.closeWith(websocket.CloseGoingAway, "server shutting down")
	}
	done := make(chan struct{})
	go func() { h.wg.Wait(); close(done) }()
	select {
	case <-done:
	case <-ctx.Done():
		// Those still registered have not returned their conn to fasthttp.
		h.mu.Lock()
		for c := range h.conns {
			c.ws.Close()
		}
		h.mu.Unlock()
	}
}

// websocket registers r (Method GET) as a WebSocket endpoint; serve runs
// for each authenticated connection with the caller's actor in ctx and
// returns when the client goes away or ctx ends. r.Scope, or any one of
// r.AnyScope, is required.
func (s *Server) websocket(r *Route, serve func(ctx context.Context, c *wsConn) error) {
	r.Method = fiber.MethodGet
	if r.Status == 0 {
		r.Status = fiber.StatusSwitchingProtocols
	}
	r.Errors = append(r.Errors, fiber.StatusServiceUnavailable)
	r.Handler = s.wsUpgrade(r, serve)
	s.routes = append(s.routes, r)
	s.api.Add(fiber.MethodGet, r.Path, r.Handler)
}

func (s *Server) wsUpgrade(r *Route, serve func(ctx context.Context, c *wsConn) error) fiber.Handler {
	return func(c *fiber.Ctx) error {
		req, err := wsRequest(c)
		if err != nil {
			return err
		}
		var a *kassa.Actor
		if h := c.Get(fiber.HeaderAuthorization); h != "" {
			raw, ok := strings.CutPrefix(h, "Bearer ")
			if !ok || strings.TrimSpace(raw) == "" {
				return kassa.Errorf(kassa.EUnauthorized, "a bearer token is required")
			}
			if a, err = s.bearer(c.UserContext(), strings.TrimSpace(raw)); err != nil {
				return err
			}
			if err := s.takeOrgToken(c, a.OrgID); err != nil {
				return err
			}
			if !r.grants(a) {
				return kassa.Errorf(kassa.EForbidden, "this token lacks the scope: %s", r.scopeText())
			}
			// The token is kept to recheck it at every ping; a string
			// built from Fiber's buffer must be copied.
			req.Header.Set("Authorization", "Bearer "+strings.TrimSpace(raw))
		}
		org := ""
		if a != nil {
			org = a.OrgID
		}
		if err := s.ws.admit(org); err != nil {
			return err
		}
		s.ws.wg.Add(1)
		c.Status(fiber.StatusSwitchingProtocols)
		c.Context().HijackSetNoResponse(true)
		c.Context().Hijack(func(nc net.Conn) {
			defer s.ws.wg.Done()
			s.wsRun(nc, req, r, a, serve)
		})
		return nil
	}
}

// wsRequest checks the upgrade request and copies what gorilla's Upgrader
// reads into an http.Request of its own.
func wsRequest(c *fiber.Ctx) (*http.Request, error) {
	h := http.Header{}
	c.Request().Header.VisitAll(func(k, v []byte) { h.Add(string(k), string(v)) })
	req := &http.Request{Method: http.MethodGet, Header: h, Host: string(c.Request().Host()),
		URL: &url.URL{Path: string(c.Request().URI().Path())}, Proto: "HTTP/1.1", ProtoMajor: 1, ProtoMinor: 1,
		RemoteAddr: c.Context().RemoteAddr().String()}
	if !websocket.IsWebSocketUpgrade(req) {
		return nil, kassa.Errorf(kassa.EBadRequest, "this endpoint speaks WebSocket only: send an Upgrade: websocket request")
	}
	if h.Get("Sec-Websocket-Version") != "13" || h.Get("Sec-Websocket-Key") == "" {
		return nil, kassa.Errorf(kassa.EBadRequest, "a WebSocket upgrade needs Sec-WebSocket-Version: 13 and a Sec-WebSocket-Key")
	}
	if !sameOrigin(req) {
		return nil, kassa.Errorf(kassa.EForbidden, "a browser may open this WebSocket only from a page of this host")
	}
	return req, nil
}

// sameOrigin admits a request without Origin (a program) or from a page of
// the same host (gorilla's default rule).
func sameOrigin(r *http.Request) bool {
	origin := r.Header.Get("Origin")
	if origin == "" {
		return true
	}
	u, err := url.Parse(origin)
	return err == nil && strings.EqualFold(u.Host, r.Host)
}

var wsUpgrader = websocket.Upgrader{
	HandshakeTimeout: 10 * time.Second,
	// Origin was checked by wsRequest, over HTTP, with a problem answer.
	CheckOrigin: func(*http.Request) bool { return true },
	// Idle connections hold no write buffer.
	WriteBufferPool: &sync.Pool{},
}

// wsRun finishes the handshake and serves one connection; the connection
// is closed when it returns.
func (s *Server) wsRun(nc net.Conn, req *http.Request, r *Route, a *kassa.Actor, serve func(ctx context.Context, c *wsConn) error) {
	org := ""
	if a != nil {
		org = a.OrgID
	}
	defer func() { s.ws.leave(org) }()
	w := &wsResponse{conn: wsNetConn{nc}, header: http.Header{}}
	ws, err := wsUpgrader.Upgrade(w, req, nil)
	if err != nil {
		return // gorilla answered the client
	}
	ctx, cancel := context.WithCancel(context.Background())
	c := &wsConn{ws: ws, h: s.ws, out: make(chan []byte, wsSendQueue), in: make(chan []byte, wsReceiveQueue),
		done: make(chan struct{}), cancel: cancel, route: r, held: heldToken{auth: s.bearer, org: org,
			token: strings.TrimPrefix(req.Header.Get("Authorization"), "Bearer ")},
		stopped: make(chan struct{}), readDone: make(chan struct{})}
	if !s.ws.add(c) {
		ws.WriteControl(websocket.CloseMessage, websocket.FormatCloseMessage(websocket.CloseGoingAway, "server shutting down"),
			time.Now().Add(wsCloseGrace))
		ws.Close()
		cancel()
		return
	}
	s.ws.gauge.Inc()
	defer func() {
		s.ws.remove(c)
		s.ws.gauge.Dec()
	}()
	ws.SetReadLimit(wsReadLimit)
	go c.readLoop()
	go c.writeLoop()
	defer func() {
		<-c.stopped
		select {
		case <-c.readDone:
		case <-time.After(wsCloseGrace):
			c.ws.Close()
			<-c.readDone
		}
	}()
	if a == nil {
		if a = s.wsFirstMessage(c, r); a == nil {
			return
		}
		if !s.ws.admitOrg(a.OrgID) {
			c.closeWith(websocket.CloseTryAgainLater, "too many connections of this org")
			return
		}
		org = a.OrgID
	}
	err = serve(kassa.WithActor(ctx, a), c)
	if err != nil {
		var ke *kassa.Error
		if errors.As(err, &ke) && ke.Kind != kassa.EInternal {
			c.closeWith(websocket.ClosePolicyViolation, ke.Message)
		} else {
			s.log.Error("websocket", "path", r.Path, "err", err)
			c.closeWith(websocket.CloseInternalServerErr, "internal error")
		}
		return
	}
	c.closeWith(websocket.CloseNormalClosure, "")
}

// wsFirstMessage authenticates a browser's connection from its first
// message; nil when it did not (the connection is being closed).
func (s *Server) wsFirstMessage(c *wsConn, r *Route) *kassa.Actor {
	ctx, cancel := context.WithTimeout(context.Background(), s.ws.authTimeout)
	defer cancel()
	b, err := c.Receive(ctx)
	if err != nil {
		c.closeWith(wsCloseUnauthorized, "no auth message within "+s.ws.authTimeout.String())
		return nil
	}
	var m wsAuth
	if json.Unmarshal(b, &m) != nil || m.Type != "auth" || m.AccessToken == "" {
		c.closeWith(wsCloseUnauthorized, `the first message must be {"type":"auth","access_token":"…"}`)
		return nil
	}
	a, err := s.bearer(ctx, m.AccessToken)
	if err != nil {
		c.closeWith(wsCloseUnauthorized, "the access token is not valid")
		return nil
	}
	if !r.grants(a) {
		c.closeWith(wsCloseForbidden, "this token lacks the scope: "+r.scopeText())
		return nil
	}
	if s.orgLimit != nil && !s.orgLimit.Take(a.OrgID).Allowed {
		c.closeWith(websocket.CloseTryAgainLater, "the org's request rate limit is exhausted")
		return nil
	}
	c.setToken(m.AccessToken, a.OrgID)
	return a
}

// wsConn is one open WebSocket connection.
type wsConn struct {
	ws     *websocket.Conn
	h      *wsConns
	out    chan []byte
	in     chan []byte
	cancel context.CancelFunc
	route  *Route

	mu    sync.Mutex
	held  heldToken     // rechecked at every ping; no token before the auth message
	needs []kassa.Scope // what the connection serves needs beyond route's scope (require)

	once     sync.Once
	done     chan struct{} // closed when the connection ends
	code     int           // the close code sent, set before done is closed
	reason   string
	stopped  chan struct{} // closed when the writer has finished
	readDone chan struct{} // closed when the reader has finished
}

func (c *wsConn) setToken(token, org string) {
	c.mu.Lock()
	c.held.token, c.held.org = token, org
	c.mu.Unlock()
}

// require makes every one of scopes needed, besides the route's scope,
// from the next ping on (replacing what an earlier call required): serve
// calls it with the scopes of what it sends (the live feed's topics), so
// a token that loses one is cut with 4403.
func (c *wsConn) require(scopes ...kassa.Scope) {
	c.mu.Lock()
	c.needs = scopes
	c.mu.Unlock()
}

// recheck reads the connection's token again (heldToken.recheck): nil
// before a browser's auth message, which wsFirstMessage checks itself.
func (c *wsConn) recheck() *kassa.Error {
	c.mu.Lock()
	held, needs := c.held, c.needs
	c.mu.Unlock()
	if held.token == "" {
		return nil
	}
	return held.recheck(context.Background(), c.route, needs...)
}

// Send queues one JSON message (a []byte or json.RawMessage is sent as
// it is). It never blocks: a client whose queue is full is cut off with
// close code 1008 "too slow".
func (c *wsConn) Send(v any) error {
	var b []byte
	switch m := v.(type) {
	case []byte:
		b = m
	case json.RawMessage:
		b = m
	default:
		var err error
		if b, err = json.Marshal(v); err != nil {
			return err
		}
	}
	select {
	case <-c.done:
		return errWSClosed
	default:
	}
	select {
	case c.out <- b:
		return nil
	default:
		c.closeWith(websocket.ClosePolicyViolation, "too slow")
		return errWSTooSlow
	}
}

// SendWait queues one message, waiting while the queue is full: a backlog
// (a resume) goes at the client's own pace. It returns when the message is
// queued, the connection ends or ctx does.
func (c *wsConn) SendWait(ctx context.Context, b []byte) error {
	select {
	case c.out <- b:
		return nil
	case <-c.done:
		return errWSClosed
	case <-ctx.Done():
		return ctx.Err()
	}
}

// Receive returns the next message from the client.
func (c *wsConn) Receive(ctx context.Context) ([]byte, error) {
	select {
	case b := <-c.in:
		return b, nil
	case <-c.done:
		return nil, errWSClosed
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// Done is closed when the connection ends.
func (c *wsConn) Done() <-chan struct{} { return c.done }

// closeWith ends the connection: the writer sends the close frame (code,
// reason) once it is free, and the peer gets wsCloseGrace to answer it.
// It never blocks.
func (c *wsConn) closeWith(code int, reason string) {
	c.once.Do(func() {
		c.code, c.reason = code, reason
		close(c.done)
		c.cancel()
	})
}

func (c *wsConn) readLoop() {
	defer close(c.readDone)
	deadline := func() { c.ws.SetReadDeadline(time.Now().Add(2 * c.h.ping)) }
	deadline()
	c.ws.SetPongHandler(func(string) error { deadline(); return nil })
	for {
		_, b, err := c.ws.ReadMessage()
		if err != nil {
			// The peer went away, did not answer pings, sent too much, or
			// answered our close: nothing more can be said to it.
			c.closeWith(0, "")
			c.ws.Close()
			return
		}
		deadline()
		select {
		case c.in <- b:
		case <-c.done:
		}
	}
}

func (c *wsConn) writeLoop() {
	defer close(c.stopped)
	ping := time.NewTicker(c.h.ping)
	defer ping.Stop()
	for {
		// An end wins over queued messages (a cut client gets its close).
		select {
		case <-c.done:
			c.sendClose()
			return
		default:
		}
		select {
		case <-c.done:
			c.sendClose()
			return
		case b := <-c.out:
			c.ws.SetWriteDeadline(time.Now().Add(wsWriteTimeout))
			if err := c.ws.WriteMessage(websocket.TextMessage, b); err != nil {
				c.closeWith(0, "")
				c.ws.Close()
				return
			}
		case <-ping.C:
			if err := c.recheck(); err != nil {
				code := wsCloseUnauthorized
				if err.Kind == kassa.EForbidden {
					code = wsCloseForbidden
				}
				c.closeWith(code, err.Message)
				continue
			}
			if err := c.ws.WriteControl(websocket.PingMessage, nil, time.Now().Add(wsWriteTimeout)); err != nil {
				c.closeWith(0, "")
				c.ws.Close()
				return
			}
		}
	}
}

// sendClose sends the close frame; wsRun then waits up to wsCloseGrace
// for the peer's answer (the reader ends) before it closes the connection.
func (c *wsConn) sendClose() {
	if c.code == 0 {
		c.ws.Close()
		return
	}
	c.ws.WriteControl(websocket.CloseMessage, websocket.FormatCloseMessage(c.code, c.reason), time.Now().Add(wsCloseGrace))
}

// wsNetConn makes Close of a conn fasthttp hijacked take effect at once:
// fasthttp's Close does nothing (it closes the conn itself once the
// hijack handler returns), so a reader or writer blocked on it would stay
// blocked; a deadline in the past ends them, and wsRun returns.
type wsNetConn struct{ net.Conn }

func (c wsNetConn) Close() error {
	c.Conn.SetDeadline(time.Unix(1, 0))
	return c.Conn.Close()
}

// wsResponse is the http.ResponseWriter and http.Hijacker gorilla's
// Upgrader needs, over a connection fasthttp handed over.
type wsResponse struct {
	conn        net.Conn
	header      http.Header
	wroteHeader bool
}

func (w *wsResponse) Header() http.Header { return w.header }

// WriteHeader writes an error answer of the Upgrader (its successful
// answer goes through Hijack).
func (w *wsResponse) WriteHeader(status int) {
	if w.wroteHeader {
		return
	}
	w.wroteHeader = true
	bw := bufio.NewWriter(w.conn)
	fmt.Fprintf(bw, "HTTP/1.1 %d %s\r\n", status, http.StatusText(status))
	w.header.Set("Connection", "close")
	w.header.Write(bw)
	bw.WriteString("\r\n")
	bw.Flush()
}

func (w *wsResponse) Write(b []byte) (int, error) {
	w.WriteHeader(http.StatusOK)
	return w.conn.Write(b)
}

func (w *wsResponse) Hijack() (net.Conn, *bufio.ReadWriter, error) {
	return w.conn, bufio.NewReadWriter(bufio.NewReader(w.conn), bufio.NewWriter(w.conn)), nil
}
