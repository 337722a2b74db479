package httpapi

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gorilla/websocket"

	"kassa.dev/shared/kassa"
	"kassa.dev/sync/wait"
)

// The WebSocket plumbing (ws.go), over real loopback connections with
// gorilla's client, on a server whose only WebSocket route is a test one:
// it greets with the caller's org, echoes what it receives and, on "burst",
// sends a burst of messages to every connection of the test.

// wsTestAuth accepts a few fixed tokens.
type wsTestAuth struct{ kassa.AuthService }

var wsTestTokens = map[string]*kassa.Actor{
	"tok-orders":  {OrgID: "org-a", UserID: "u1", Scopes: []kassa.Scope{kassa.ScopeOrdersRead}},
	"tok-orders2": {OrgID: "org-a", UserID: "u2", Scopes: []kassa.Scope{kassa.ScopeOrdersRead}},
	"tok-catalog": {OrgID: "org-a", UserID: "u3", Scopes: []kassa.Scope{kassa.ScopeCatalogRead}},
	"tok-b":       {OrgID: "org-b", UserID: "u4", Scopes: []kassa.Scope{kassa.ScopeOrdersRead}},
}

func (wsTestAuth) Authenticate(_ context.Context, tok string) (*kassa.Actor, error) {
	if a, ok := wsTestTokens[tok]; ok {
		return a, nil
	}
	return nil, kassa.Errorf(kassa.EUnauthorized, "invalid token")
}

type wsTestServer struct {
	s      *Server
	url    string
	served atomic.Int32 // connections serve ran for
	conns  chan *wsConn
}

func startWSTest(t *testing.T, cfg Config) *wsTestServer {
	t.Helper()
	cfg.Node = kassa.NodeEdge
	s := New(cfg, Services{Auth: wsTestAuth{}}, slog.New(slog.DiscardHandler))
	ts := &wsTestServer{s: s, conns: make(chan *wsConn, 16)}
	s.websocket(&Route{Path: "/test/ws", Scope: kassa.ScopeOrdersRead, Summary: "test"}, func(ctx context.Context, c *wsConn) error {
		ts.served.Add(1)
		ts.conns <- c
		c.Send(map[string]string{"type": "hello", "org": kassa.ActorFrom(ctx).OrgID})
		for {
			b, err := c.Receive(ctx)
			if err != nil {
				return nil
			}
			if err := c.Send(json.RawMessage(b)); err != nil {
				return nil
			}
		}
	})
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go s.Serve(ln)
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		s.Shutdown(ctx)
	})
	ts.url = "ws://" + ln.Addr().String() + "/api/v1/test/ws"
	return ts
}

func (ts *wsTestServer) dial(t *testing.T, token string, h http.Header) (*websocket.Conn, *http.Response, error) {
	t.Helper()
	if h == nil {
		h = http.Header{}
	}
	if token != "" {
		h.Set("Authorization", "Bearer "+token)
	}
	c, r, err := websocket.DefaultDialer.Dial(ts.url, h)
	if c != nil {
		t.Cleanup(func() { c.Close() })
	}
	return c, r, err
}

func wsRead(t *testing.T, c *websocket.Conn) map[string]any {
	t.Helper()
	c.SetReadDeadline(time.Now().Add(10 * time.Second))
	var m map[string]any
	if err := c.ReadJSON(&m); err != nil {
		t.Fatalf("read: %v", err)
	}
	return m
}

// wsCloseCode reads until the connection ends and returns the close code
// (0: it ended without a close frame).
func wsCloseCode(t *testing.T, c *websocket.Conn) int {
	t.Helper()
	c.SetReadDeadline(time.Now().Add(10 * time.Second))
	for {
		if _, _, err := c.ReadMessage(); err != nil {
			var ce *websocket.CloseError
			if errors.As(err, &ce) {
				return ce.Code
			}
			var ne net.Error
			if errors.As(err, &ne) && ne.Timeout() {
				t.Fatal("the connection stayed open")
			}
			return 0
		}
	}
}

func TestWSHeaderAuth(t *testing.T) {
	ts := startWSTest(t, Config{})
	c, _, err := ts.dial(t, "tok-orders", nil)
	if err != nil {
		t.Fatal(err)
	}
	if m := wsRead(t, c); m["type"] != "hello" || m["org"] != "org-a" {
		t.Fatalf("greeting %v", m)
	}
	c.WriteMessage(websocket.TextMessage, []byte(`{"n":1}`))
	if m := wsRead(t, c); m["n"] != float64(1) {
		t.Fatalf("echo %v", m)
	}
}

func TestWSFirstMessageAuth(t *testing.T) {
	ts := startWSTest(t, Config{})
	// A browser's page of the same host: Origin matches, no header.
	c, _, err := ts.dial(t, "", http.Header{"Origin": {"http://" + strings.TrimPrefix(strings.Split(ts.url, "/api")[0], "ws://")}})
	if err != nil {
		t.Fatal(err)
	}
	c.WriteJSON(map[string]string{"type": "auth", "access_token": "tok-orders"})
	if m := wsRead(t, c); m["type"] != "hello" || m["org"] != "org-a" {
		t.Fatalf("greeting %v", m)
	}
}

func TestWSRefused(t *testing.T) {
	ts := startWSTest(t, Config{})
	ts.s.ws.authTimeout = 200 * time.Millisecond
	for _, tc := range []struct {
		name, token string
		status      int
	}{{"bad header token", "nope", 401}, {"wrong scope", "tok-catalog", 403}} {
		_, r, err := ts.dial(t, tc.token, nil)
		if err == nil || r == nil || r.StatusCode != tc.status || r.Header.Get("Content-Type") != "application/problem+json" {
			t.Fatalf("%s: err %v, response %v", tc.name, err, r)
		}
	}
	_, r, err := ts.dial(t, "tok-orders", http.Header{"Origin": {"https://evil.example"}})
	if err == nil || r.StatusCode != 403 {
		t.Fatalf("another site's page: err %v, response %v", err, r)
	}
	// First-message auth: a bad token, the wrong scope, another first
	// message, or none in time are closed without serving anything.
	for _, tc := range []struct {
		name  string
		first any
		code  int
	}{
		{"bad token", map[string]string{"type": "auth", "access_token": "nope"}, wsCloseUnauthorized},
		{"wrong scope", map[string]string{"type": "auth", "access_token": "tok-catalog"}, wsCloseForbidden},
		{"not auth", map[string]string{"type": "subscribe"}, wsCloseUnauthorized},
		{"silent", nil, wsCloseUnauthorized},
	} {
		c, _, err := ts.dial(t, "", nil)
		if err != nil {
			t.Fatal(err)
		}
		if tc.first != nil {
			c.WriteJSON(tc.first)
		}
		if code := wsCloseCode(t, c); code != tc.code {
			t.Fatalf("%s: close code %d, want %d", tc.name, code, tc.code)
		}
	}
	if n := ts.served.Load(); n != 0 {
		t.Fatalf("%d refused connections were served", n)
	}
	// A plain GET is not an upgrade.
	res, err := http.Get("http" + strings.TrimPrefix(ts.url, "ws"))
	if err != nil || res.StatusCode != 400 {
		t.Fatalf("plain GET: %v %v", err, res)
	}
	res.Body.Close()
}

func TestWSConnectionCaps(t *testing.T) {
	ts := startWSTest(t, Config{WSMaxOrgConns: 1})
	c, _, err := ts.dial(t, "tok-orders", nil)
	if err != nil {
		t.Fatal(err)
	}
	wsRead(t, c)
	if _, r, err := ts.dial(t, "tok-orders2", nil); err == nil || r.StatusCode != 503 || r.Header.Get("Retry-After") == "" {
		t.Fatalf("second connection of the org: err %v, response %v", err, r)
	}
	// By first message, the org's cap closes with 1013.
	c2, _, err := ts.dial(t, "", nil)
	if err != nil {
		t.Fatal(err)
	}
	c2.WriteJSON(map[string]string{"type": "auth", "access_token": "tok-orders2"})
	if code := wsCloseCode(t, c2); code != websocket.CloseTryAgainLater {
		t.Fatalf("close code %d", code)
	}
	// Another org is not held back.
	c3, _, err := ts.dial(t, "tok-b", nil)
	if err != nil {
		t.Fatal(err)
	}
	if m := wsRead(t, c3); m["org"] != "org-b" {
		t.Fatalf("greeting %v", m)
	}
	// A closed connection frees its place.
	c.Close()
	wait.For(t, 10*time.Second, "the org's place is freed", func() bool {
		c4, _, err := ts.dial(t, "tok-orders2", nil)
		if err != nil {
			return false
		}
		c4.Close()
		return true
	})
}

// A peer that stops answering pings is cut off; one that answers stays.
func TestWSPingCutsDeadPeer(t *testing.T) {
	ts := startWSTest(t, Config{WSPing: 50 * time.Millisecond})
	alive, _, err := ts.dial(t, "tok-orders", nil)
	if err != nil {
		t.Fatal(err)
	}
	var pings atomic.Int32
	alive.SetPingHandler(func(d string) error {
		pings.Add(1)
		return alive.WriteControl(websocket.PongMessage, []byte(d), time.Now().Add(time.Second))
	})
	dead, _, err := ts.dial(t, "tok-orders2", nil)
	if err != nil {
		t.Fatal(err)
	}
	dead.SetPingHandler(func(string) error { return nil }) // reads, never answers
	aliveDone := make(chan error, 1)
	go func() {
		for {
			if _, _, err := alive.ReadMessage(); err != nil {
				aliveDone <- err
				return
			}
		}
	}()
	start := time.Now()
	if code := wsCloseCode(t, dead); code != 0 && code != websocket.CloseAbnormalClosure {
		t.Fatalf("dead peer closed with %d", code)
	}
	t.Logf("dead peer cut after %v", time.Since(start))
	// The live one keeps answering through more pings than the dead one
	// was given.
	wait.For(t, 10*time.Second, "pings reach the live client", func() bool { return pings.Load() >= 6 })
	select {
	case err := <-aliveDone:
		t.Fatalf("the answering client was cut: %v", err)
	default:
	}
}

// A client that stops reading is cut off with 1008 once its queue is
// full; the producer never waits for it and a fast client gets everything.
func TestWSSlowReaderCut(t *testing.T) {
	ts := startWSTest(t, Config{})
	slow, _, err := ts.dial(t, "tok-orders", nil)
	if err != nil {
		t.Fatal(err)
	}
	defer slow.Close()
	wsRead(t, slow)
	slowConn := <-ts.conns
	fast, _, err := ts.dial(t, "tok-orders2", nil)
	if err != nil {
		t.Fatal(err)
	}
	wsRead(t, fast)
	fastConn := <-ts.conns
	// 40 MB: more than the kernel's socket buffers hold for the slow one.
	const n = 10000
	msg := []byte(`{"type":"burst","pad":"` + strings.Repeat("x", 4000) + `"}`)
	got := make(chan int, 1)
	go func() {
		k := 0
		fast.SetReadDeadline(time.Now().Add(30 * time.Second))
		for k < n {
			if _, _, err := fast.ReadMessage(); err != nil {
				break
			}
			k++
		}
		got <- k
	}()
	cut := 0
	for i := 0; i < n; i++ {
		if slowConn.Send(msg) == errWSTooSlow {
			cut++
		}
		if err := fastConn.Send(msg); err != nil {
			t.Fatalf("fast client, message %d: %v", i, err)
		}
		if len(fastConn.out) > wsSendQueue/2 {
			// Keep to the pace of a producer between commits, which the
			// fast client's writer keeps up with; the slow one reads nothing.
			wait.For(t, 10*time.Second, "the fast client's queue drains", func() bool { return len(fastConn.out) < wsSendQueue/4 })
		}
	}
	if cut != 1 {
		t.Fatalf("%d sends reported a cut, want exactly 1 (the slow client)", cut)
	}
	if k := <-got; k != n {
		t.Fatalf("the fast client got %d of %d", k, n)
	}
	// The slow client now reads: some messages, then the close 1008.
	code := wsCloseCode(t, slow)
	if code != websocket.ClosePolicyViolation {
		t.Fatalf("slow client's close code %d", code)
	}
}

func isDone(c *wsConn) bool {
	select {
	case <-c.done:
		return true
	default:
		return false
	}
}

func TestWSShutdownClosesGoingAway(t *testing.T) {
	ts := startWSTest(t, Config{})
	c, _, err := ts.dial(t, "tok-orders", nil)
	if err != nil {
		t.Fatal(err)
	}
	wsRead(t, c)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	go ts.s.Shutdown(ctx)
	if code := wsCloseCode(t, c); code != websocket.CloseGoingAway {
		t.Fatalf("close code %d", code)
	}
}
