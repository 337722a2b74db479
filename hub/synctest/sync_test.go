package synctest

import (
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"kassa.dev/edge/edgenode"
	"kassa.dev/hub/hubnode"
	"kassa.dev/shared/demo"
	"kassa.dev/shared/node/nodetest"
	"kassa.dev/shared/pgtest"
	"kassa.dev/sync/wait"
)

type env struct {
	hub, edge *nodetest.Proc
	hubDir    string
	hubStore  string   // the hub's store for reads beside it: hubDir, or the postgres:// DSN it runs on
	hubArgs   []string // the hub's store arguments, for its restart and hub verify (none on SQLite)
	edgeDir   string
	proxy     *proxy
	hubTok    string // owner at the hub
	edgeTok   string // cashier at the edge
	edgeMgr   string // manager at the edge (sync status needs reports:read)
	edgeArgs  []string
	location  string
}

// MustStartPair starts a demo hub and an edge enrolled at its demo
// location, the edge's leaf link running through a proxy the test can cut.
// With KASSA_TEST_STORE=postgres the hub's store is the test's own
// database on the package's one throwaway PostgreSQL (pgtest.HubArgs;
// the suite run on PostgreSQL: docs/postgres.md): a server per test cost
// an initdb and a start each.
func MustStartPair(t testing.TB) *env {
	t.Helper()
	return startPair(t, pgtest.HubArgs(t)...)
}

// skipOnPostgres skips a test, saying why, in the suite's run on
// PostgreSQL: for what a hub on PostgreSQL does not do yet (the list in
// docs/postgres.md, "The sync suite on PostgreSQL").
func skipOnPostgres(t testing.TB, why string) {
	t.Helper()
	if os.Getenv("KASSA_TEST_STORE") == "postgres" {
		t.Skip("not on PostgreSQL yet: " + why)
	}
}

// startPair is MustStartPair with more arguments for the hub (its store).
func startPair(t testing.TB, hubArgs ...string) *env {
	t.Helper()
	e := &env{hubDir: t.TempDir()}
	e.hubStore, e.hubArgs = e.hubDir, hubArgs
	if len(hubArgs) == 2 && hubArgs[0] == "--store" {
		e.hubStore = hubArgs[1]
	}
	// Webhook receivers in these tests listen on loopback, which egress
	// refuses unless told otherwise.
	e.hub = nodetest.Start(t, hubnode.Run, nil, append([]string{"--demo", "--http-addr", "127.0.0.1:0", "--data-dir", e.hubDir,
		"--leaf-port", "-1", "--webhook-allow-loopback"}, hubArgs...)...)
	logPGStateOnFailure(t, e.hubStore)
	leaf := strings.TrimPrefix(field(e.hub.Output(), "leaf "), "nats-leaf://")
	e.proxy = startProxy(t, leaf)
	token, err := os.ReadFile(filepath.Join(e.hubDir, hubnode.DemoTokenFile))
	if err != nil {
		t.Fatal(err)
	}
	e.edgeDir = t.TempDir()
	e.edgeArgs = []string{"--http-addr", "127.0.0.1:0", "--data-dir", e.edgeDir,
		"--hub-url", e.hub.URL, "--enrol-token", strings.TrimSpace(string(token)), "--hub-leaf-url", "nats-leaf://" + e.proxy.addr}
	e.edge = nodetest.Start(t, edgenode.Run, nil, e.edgeArgs...)
	e.hubTok = e.hub.Login(t, "owner@demo.test", demo.Password)
	// The staff users reach the edge through sync: wait until a login works there.
	e.edge.WaitLogin(t, 20*time.Second, "cashier@demo.test", demo.Password) // the demo users to reach the edge
	e.edgeTok = e.edge.Login(t, "cashier@demo.test", demo.Password)
	e.edgeMgr = e.edge.Login(t, "manager@demo.test", demo.Password)
	var locs struct{ Data []map[string]any }
	e.edge.Call(t, "GET", "/api/v1/locations", e.edgeTok, nil, &locs)
	e.location = locs.Data[0]["id"].(string)
	return e
}

func field(out, prefix string) string {
	for _, line := range strings.Split(out, "\n") {
		if i := strings.Index(line, prefix); i >= 0 {
			return strings.Fields(line[i+len(prefix):])[0]
		}
	}
	return ""
}

// proxy relays TCP to the hub's leaf port until cut.
type proxy struct {
	addr, target string
	ln           net.Listener
	mu           sync.Mutex
	conns        []net.Conn
	frozen       []net.Conn // connections freeze left open, closed by cut
	down         bool
	epoch        atomic.Int64 // freeze moves it: relays of an earlier epoch stop
}

func startProxy(t testing.TB, target string) *proxy {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &proxy{addr: ln.Addr().String(), target: target, ln: ln}
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			p.mu.Lock()
			if p.down {
				p.mu.Unlock()
				c.Close()
				continue
			}
			u, err := net.Dial("tcp", p.target) // p.mu held: retarget may move it
			if err != nil {
				p.mu.Unlock()
				c.Close()
				continue
			}
			p.conns = append(p.conns, c, u)
			epoch := p.epoch.Load()
			p.mu.Unlock()
			go p.relay(u, c, epoch)
			go p.relay(c, u, epoch)
		}
	}()
	t.Cleanup(func() { ln.Close(); p.cut() })
	return p
}

// relay copies src to dst and closes dst when src ends, until a freeze
// after which nothing more crosses, not even the end.
func (p *proxy) relay(dst, src net.Conn, epoch int64) {
	buf := make([]byte, 32<<10)
	for {
		n, err := src.Read(buf)
		if p.epoch.Load() != epoch {
			return
		}
		if n > 0 {
			if _, werr := dst.Write(buf[:n]); werr != nil {
				err = werr
			}
		}
		if err != nil {
			dst.Close()
			return
		}
	}
}

// cut drops every connection and refuses new ones until restore.
func (p *proxy) cut() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.down = true
	for _, c := range append(p.conns, p.frozen...) {
		c.Close()
	}
	p.conns, p.frozen = nil, nil
}

// freeze makes the current connections go silent, as a network that goes
// away without a FIN or RST: both ends keep their sockets, and nothing they
// send, nor a close, reaches the other. New connections are relayed.
func (p *proxy) freeze() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.epoch.Add(1)
	p.frozen = append(p.frozen, p.conns...)
	p.conns = nil
}

// retarget sends new connections to target (a hub restarted elsewhere)
// and drops the current ones.
func (p *proxy) retarget(target string) {
	p.mu.Lock()
	p.target = target
	p.mu.Unlock()
	p.cut()
	p.restore()
}

func (p *proxy) restore() {
	p.mu.Lock()
	p.down = false
	p.mu.Unlock()
}

type listResp struct {
	Data []map[string]any `json:"data"`
}

type oneResp struct {
	Data map[string]any `json:"data"`
}

func (e *env) status(t testing.TB, p *nodetest.Proc, tok string) map[string]any {
	var st oneResp
	p.Call(t, "GET", "/api/v1/sync/status", tok, nil, &st)
	return st.Data
}

// sale creates, pays and completes an order of one unit at the edge.
func (e *env) sale(t testing.TB, product string) string {
	t.Helper()
	var o oneResp
	if st := e.edge.Call(t, "POST", "/api/v1/orders", e.edgeTok, map[string]any{"location_id": e.location,
		"line_items": []any{map[string]any{"product_id": product, "quantity": 1}}}, &o); st != 201 {
		t.Fatalf("create order at the edge: %d %v", st, o)
	}
	id := o.Data["id"].(string)
	if st := e.edge.Call(t, "POST", "/api/v1/payments/initiate", e.edgeTok, map[string]any{"order_id": id, "amount": o.Data["total"], "method": "cash"}, nil); st != 201 {
		t.Fatalf("pay: %d", st)
	}
	if st := e.edge.Call(t, "POST", "/api/v1/orders/"+id+"/complete", e.edgeTok, nil, nil); st != 200 {
		t.Fatalf("complete: %d", st)
	}
	return id
}

func (e *env) products(t testing.TB, p *nodetest.Proc, tok string) []map[string]any {
	var l listResp
	p.Call(t, "GET", "/api/v1/catalog/products?limit=200", tok, nil, &l)
	return l.Data
}

// roundTrip sells at the edge and sees the sale at the hub, then makes a
// product at the hub, sees it at the edge, sells it there and sees that
// sale at the hub; it returns the hub's product.
func (e *env) roundTrip(t *testing.T) string {
	t.Helper()
	wait.For(t, 20*time.Second, "the demo catalog at the edge", func() bool { return len(e.products(t, e.edge, e.edgeTok)) == 15 })
	// An order made at the edge is readable at the hub, completed and paid.
	id := e.sale(t, e.products(t, e.edge, e.edgeTok)[0]["id"].(string))
	wait.For(t, 10*time.Second, "the edge's order at the hub", func() bool {
		var o oneResp
		return e.hub.Call(t, "GET", "/api/v1/orders/"+id, e.hubTok, nil, &o) == 200 && o.Data["status"] == "completed" &&
			o.Data["paid_total"] == o.Data["total"] && len(o.Data["line_items"].([]any)) == 1
	})
	// A product made at the hub is sold at the edge.
	var p oneResp
	if st := e.hub.Call(t, "POST", "/api/v1/catalog/products", e.hubTok, map[string]any{"name": "Hub Special", "sku": "HUB-1", "base_price": 990}, &p); st != 201 {
		t.Fatalf("create at hub: %d", st)
	}
	pid := p.Data["id"].(string)
	wait.For(t, 10*time.Second, "the hub's product at the edge", func() bool {
		var got oneResp
		return e.edge.Call(t, "GET", "/api/v1/catalog/products/"+pid, e.edgeTok, nil, &got) == 200
	})
	id2 := e.sale(t, pid)
	wait.For(t, 10*time.Second, "the second order at the hub", func() bool {
		var o oneResp
		return e.hub.Call(t, "GET", "/api/v1/orders/"+id2, e.hubTok, nil, &o) == 200 && o.Data["total"] == float64(990)
	})
	return pid
}

func TestRoundTripEdgeToHubAndBack(t *testing.T) {
	e := MustStartPair(t)
	pid := e.roundTrip(t)
	// An online order taken at the hub for pickup at the store reaches the
	// store's kitchen screens; a bump there reaches the hub.
	var online oneResp
	if st := e.hub.Call(t, "POST", "/api/v1/orders", e.hubTok, map[string]any{"location_id": e.location, "channel": "online",
		"line_items": []any{map[string]any{"product_id": pid, "quantity": 2}}}, &online); st != 201 {
		t.Fatalf("online order at hub: %d", st)
	}
	oid := online.Data["id"].(string)
	wait.For(t, 10*time.Second, "the online order on the edge's kitchen board", func() bool {
		var board oneResp
		e.edge.Call(t, "GET", "/api/v1/kds/tickets?location_id="+e.location, e.edgeTok, nil, &board)
		tickets, _ := board.Data["tickets"].([]any)
		for _, tk := range tickets {
			if tk.(map[string]any)["id"] == oid && tk.(map[string]any)["channel"] == "online" {
				return true
			}
		}
		return false
	})
	if st := e.edge.Call(t, "POST", "/api/v1/kds/tickets/"+oid+"/bump", e.edgeTok, nil, nil); st != 200 {
		t.Fatalf("bump at the edge: %d", st)
	}
	wait.For(t, 10*time.Second, "the bump at the hub", func() bool {
		var o oneResp
		e.hub.Call(t, "GET", "/api/v1/orders/"+oid, e.hubTok, nil, &o)
		return o.Data["kitchen_status"] != "new"
	})
	// Both sides report the link, and the edge verifies digests.
	wait.For(t, 10*time.Second, "the edge to verify", func() bool {
		st := e.status(t, e.edge, e.edgeMgr)
		return st["connected"] == true && st["last_verified"] != nil && st["pending_up"] == float64(0)
	})
	wait.For(t, 10*time.Second, "the hub's status to show the edge verified", func() bool {
		hubSt := e.status(t, e.hub, e.hubTok)
		edges, _ := hubSt["edges"].([]any)
		if len(edges) != 1 {
			return false
		}
		es := edges[0].(map[string]any)
		return es["connected"] == true && es["last_verified"] != nil && es["pending_up"] == float64(0)
	})
	// The link is visible in the metrics: lag histograms and link gauges.
	for _, c := range []struct {
		p    *nodetest.Proc
		want string
	}{{e.hub, "kassa_sync_apply_lag_seconds_count"}, {e.hub, "kassa_sync_edges_connected 1"},
		{e.edge, "kassa_sync_connected 1"}, {e.edge, "kassa_sync_pull_lag_seconds_count"}, {e.edge, "kassa_sync_pending_up 0"}} {
		res, err := http.Get(c.p.URL + "/metrics")
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(res.Body)
		res.Body.Close()
		if !strings.Contains(string(b), c.want) {
			t.Fatalf("metrics of %s lack %q", c.p.URL, c.want)
		}
	}
}

func TestPartitionKeepsSellingAndConverges(t *testing.T) {
	e := MustStartPair(t)
	wait.For(t, 20*time.Second, "the demo catalog at the edge", func() bool { return len(e.products(t, e.edge, e.edgeTok)) == 15 })
	products := e.products(t, e.edge, e.edgeTok)
	e.proxy.cut()
	wait.For(t, 10*time.Second, "the edge to see the link down", func() bool { return e.status(t, e.edge, e.edgeMgr)["connected"] == false })
	var orders []string
	for i := range 20 {
		orders = append(orders, e.sale(t, products[i%5]["id"].(string)))
	}
	// A card payment while cut off is taken store-and-forward.
	var cardOrder, cardPay oneResp
	e.edge.Call(t, "POST", "/api/v1/orders", e.edgeTok, map[string]any{"location_id": e.location,
		"line_items": []any{map[string]any{"product_id": products[1]["id"], "quantity": 1}}}, &cardOrder)
	if st := e.edge.Call(t, "POST", "/api/v1/payments/initiate", e.edgeTok, map[string]any{"order_id": cardOrder.Data["id"],
		"amount": cardOrder.Data["total"], "method": "card", "card_number": "4242424242424242"}, &cardPay); st != 201 ||
		cardPay.Data["offline"] != true || cardPay.Data["status"] != "captured" {
		t.Fatalf("offline card payment: %d %v", st, cardPay.Data)
	}
	// Meanwhile at the hub: a price change and a new product.
	pid := products[0]["id"].(string)
	if st := e.hub.Call(t, "PATCH", "/api/v1/catalog/products/"+pid, e.hubTok, map[string]any{"base_price": 555}, nil); st != 200 {
		t.Fatalf("patch at hub: %d", st)
	}
	if st := e.hub.Call(t, "POST", "/api/v1/catalog/products", e.hubTok, map[string]any{"name": "Offline Special", "sku": "OFF-1", "base_price": 100}, nil); st != 201 {
		t.Fatalf("create at hub: %d", st)
	}
	st := e.status(t, e.edge, e.edgeMgr)
	if st["pending_up"].(float64) == 0 {
		t.Fatalf("offline edge shows nothing waiting: %v", st)
	}
	e.proxy.restore()
	for _, id := range orders {
		wait.For(t, 20*time.Second, "order "+id+" at the hub", func() bool {
			var o oneResp
			return e.hub.Call(t, "GET", "/api/v1/orders/"+id, e.hubTok, nil, &o) == 200 && o.Data["status"] == "completed"
		})
	}
	wait.For(t, 20*time.Second, "the hub's changes at the edge", func() bool {
		var p oneResp
		e.edge.Call(t, "GET", "/api/v1/catalog/products/"+pid, e.edgeTok, nil, &p)
		return p.Data["base_price"] == float64(555) && len(e.products(t, e.edge, e.edgeTok)) == 16
	})
	// The card payment was forwarded to the network once the link was back.
	wait.For(t, 20*time.Second, "the offline card payment forwarded and synced", func() bool {
		var p oneResp
		e.hub.Call(t, "GET", "/api/v1/payments/"+cardPay.Data["id"].(string), e.hubTok, nil, &p)
		ref, _ := p.Data["processor_ref"].(string)
		return strings.HasPrefix(ref, "sim_fwd_") && p.Data["offline"] == true
	})
	orders = append(orders, cardOrder.Data["id"].(string))
	// Exactly once: the hub has every order once.
	var l listResp
	e.hub.Call(t, "GET", "/api/v1/orders?limit=200&location_id="+e.location, e.hubTok, nil, &l)
	if len(l.Data) != len(orders) {
		t.Fatalf("hub has %d orders, want %d", len(l.Data), len(orders))
	}
	wait.For(t, 20*time.Second, "the edge to verify after reconnect", func() bool {
		st := e.status(t, e.edge, e.edgeMgr)
		return st["connected"] == true && st["last_verified"] != nil && st["pending_up"] == float64(0)
	})
}

// TestASilentlyCutLeafLinkIsDroppedAndComesBack: the network between the
// store and the hub goes silent (no FIN, no RST: the proxy stops relaying
// and keeps both sockets open). The hub would refuse the edge's new leaf
// connection while the stale session is up, but it pings every session
// (natsnode.PingInterval, two unanswered pings) and drops the stale one
// within about 15 s; the edge reconnects by itself and a sale made during
// the cut reaches the hub, all within 30 s.
func TestASilentlyCutLeafLinkIsDroppedAndComesBack(t *testing.T) {
	e := MustStartPair(t)
	wait.For(t, 20*time.Second, "the demo catalog at the edge", func() bool { return len(e.products(t, e.edge, e.edgeTok)) == 15 })
	product := e.products(t, e.edge, e.edgeTok)[0]["id"].(string)
	e.proxy.freeze()
	cut := time.Now()
	id := e.sale(t, product)
	wait.For(t, 20*time.Second, "the edge to see the link down", func() bool { return e.status(t, e.edge, e.edgeMgr)["connected"] == false })
	wait.For(t, 30*time.Second-time.Since(cut), "the sale of the cut to reach the hub", func() bool {
		var o oneResp
		return e.hub.Call(t, "GET", "/api/v1/orders/"+id, e.hubTok, nil, &o) == 200 && o.Data["status"] == "completed"
	})
	t.Logf("the sale reached the hub %s after the link went silent", time.Since(cut).Round(100*time.Millisecond))
	wait.For(t, 10*time.Second, "the edge connected", func() bool { return e.status(t, e.edge, e.edgeMgr)["connected"] == true })
}

// addEdge enrols another edge at the demo location through its own proxy.
func (e *env) addEdge(t *testing.T) (*nodetest.Proc, *proxy, string) {
	t.Helper()
	var en oneResp
	if st := e.hub.Call(t, "POST", "/api/v1/locations/"+e.location+"/enrolment", e.hubTok, nil, &en); st != 201 {
		t.Fatalf("enrolment: %d %v", st, en)
	}
	leaf := strings.TrimPrefix(field(e.hub.Output(), "leaf "), "nats-leaf://")
	px := startProxy(t, leaf)
	p := nodetest.Start(t, edgenode.Run, nil, "--http-addr", "127.0.0.1:0", "--data-dir", t.TempDir(),
		"--hub-url", e.hub.URL, "--enrol-token", en.Data["token"].(string), "--hub-leaf-url", "nats-leaf://"+px.addr)
	p.WaitLogin(t, 20*time.Second, "manager@demo.test", demo.Password) // the second edge's users
	return p, px, p.Login(t, "manager@demo.test", demo.Password)
}

func TestTwoEdgesOversellAndOverdrawOfflineThenAgree(t *testing.T) {
	e := MustStartPair(t)
	b, bProxy, bTok := e.addEdge(t)
	product := ""
	wait.For(t, 20*time.Second, "the catalog at edge A", func() bool {
		ps := e.products(t, e.edge, e.edgeTok)
		if len(ps) == 15 {
			product = ps[3]["id"].(string)
		}
		return product != ""
	})
	// At the hub: 5 units on hand, a customer with 10 points.
	if st := e.hub.Call(t, "POST", "/api/v1/inventory/stock/adjust", e.hubTok, map[string]any{"location_id": e.location, "product_id": product, "reason": "count", "quantity": 5}, nil); st != 200 {
		t.Fatalf("count: %d", st)
	}
	var cust, acct oneResp
	e.hub.Call(t, "POST", "/api/v1/customers", e.hubTok, map[string]any{"first_name": "Kim", "email": "kim@x.test"}, &cust)
	e.hub.Call(t, "POST", "/api/v1/loyalty/programs", e.hubTok, map[string]any{"name": "Beans", "points_per_unit": 1, "redemption_value": 10}, nil)
	if st := e.hub.Call(t, "POST", "/api/v1/loyalty/accounts", e.hubTok, map[string]any{"customer_id": cust.Data["id"]}, &acct); st != 201 {
		t.Fatalf("enrol: %d %v", st, acct)
	}
	account := acct.Data["id"].(string)
	e.hub.Call(t, "POST", "/api/v1/loyalty/accounts/"+account+"/earn", e.hubTok, map[string]any{"points": 10}, nil)
	onHand := func(p *nodetest.Proc, tok string) float64 {
		var l listResp
		p.Call(t, "GET", "/api/v1/inventory/stock?product_id="+product+"&location_id="+e.location, tok, nil, &l)
		if len(l.Data) != 1 {
			return -999
		}
		return l.Data[0]["on_hand"].(float64)
	}
	balance := func(p *nodetest.Proc, tok string) float64 {
		var a oneResp
		if p.Call(t, "GET", "/api/v1/loyalty/accounts/"+account, tok, nil, &a) != 200 {
			return -999
		}
		return a.Data["points_balance"].(float64)
	}
	wait.For(t, 20*time.Second, "stock and points at both edges", func() bool {
		return onHand(e.edge, e.edgeMgr) == 5 && onHand(b, bTok) == 5 && balance(e.edge, e.edgeMgr) == 10 && balance(b, bTok) == 10
	})
	// Cut both; each sells 4 of the 5 units and redeems 8 of the 10 points.
	e.proxy.cut()
	bProxy.cut()
	wait.For(t, 10*time.Second, "both edges to see the link down", func() bool {
		return e.status(t, e.edge, e.edgeMgr)["connected"] == false && e.status(t, b, bTok)["connected"] == false
	})
	for _, n := range []struct {
		p   *nodetest.Proc
		tok string
	}{{e.edge, e.edgeMgr}, {b, bTok}} {
		var o oneResp
		if st := n.p.Call(t, "POST", "/api/v1/orders", n.tok, map[string]any{"location_id": e.location,
			"line_items": []any{map[string]any{"product_id": product, "quantity": 4}}}, &o); st != 201 {
			t.Fatalf("order: %d", st)
		}
		n.p.Call(t, "POST", "/api/v1/payments/initiate", n.tok, map[string]any{"order_id": o.Data["id"], "amount": o.Data["total"], "method": "cash"}, nil)
		if st := n.p.Call(t, "POST", "/api/v1/orders/"+o.Data["id"].(string)+"/complete", n.tok, nil, nil); st != 200 {
			t.Fatalf("complete: %d", st)
		}
		if st := n.p.Call(t, "POST", "/api/v1/loyalty/accounts/"+account+"/redeem", n.tok, map[string]any{"points": 8}, nil); st != 201 {
			t.Fatalf("redeem offline: %d", st)
		}
	}
	e.proxy.restore()
	bProxy.restore()
	wait.For(t, 30*time.Second, "all three nodes to agree", func() bool {
		return onHand(e.hub, e.hubTok) == -3 && onHand(e.edge, e.edgeMgr) == -3 && onHand(b, bTok) == -3 &&
			balance(e.hub, e.hubTok) == -6 && balance(e.edge, e.edgeMgr) == -6 && balance(b, bTok) == -6
	})
	var cs listResp
	e.hub.Call(t, "GET", "/api/v1/sync/conflicts", e.hubTok, nil, &cs)
	kinds := map[string]int{}
	for _, c := range cs.Data {
		kinds[c["kind"].(string)]++
		if c["local"] == nil || c["remote"] == nil {
			t.Fatalf("conflict without both sides: %v", c)
		}
	}
	if kinds["oversold"] != 1 || kinds["overdrawn"] != 1 {
		t.Fatalf("hub conflicts %v", cs.Data)
	}
}

func TestVerifyCommandComparesHubAndEdgeStores(t *testing.T) {
	e := MustStartPair(t)
	wait.For(t, 20*time.Second, "the edge to verify", func() bool {
		st := e.status(t, e.edge, e.edgeMgr)
		return st["last_verified"] != nil && st["pending_up"] == float64(0)
	})
	var out strings.Builder
	if err := hubnode.Verify(t.Context(), append([]string{"--data-dir", e.hubDir, "--edge-data-dir", e.edgeDir}, e.hubArgs...), &out); err != nil {
		t.Fatalf("verify: %v\n%s", err, out.String())
	}
	if !strings.Contains(out.String(), "identical: ") || verifyLine(out.String(), "products") != "products hub 15 rows edge 15 rows identical" {
		t.Fatalf("verify output:\n%s", out.String())
	}
	// A product the edge has not seen yet (cut off) makes them differ.
	e.proxy.cut()
	wait.For(t, 10*time.Second, "the link down", func() bool { return e.status(t, e.edge, e.edgeMgr)["connected"] == false })
	if st := e.hub.Call(t, "POST", "/api/v1/catalog/products", e.hubTok, map[string]any{"name": "Only at hub", "sku": "HUB-ONLY", "base_price": 1}, nil); st != 201 {
		t.Fatalf("create: %d", st)
	}
	out.Reset()
	if err := hubnode.Verify(t.Context(), append([]string{"--data-dir", e.hubDir, "--edge-data-dir", e.edgeDir}, e.hubArgs...), &out); err != hubnode.ErrDiffer ||
		verifyLine(out.String(), "products") != "products hub 16 rows edge 15 rows DIFFERENT" {
		t.Fatalf("verify after a hub-only change: %v\n%s", err, out.String())
	}
}

// verifyLine returns the verify output line of a table, spaces collapsed.
func verifyLine(out, table string) string {
	for _, l := range strings.Split(out, "\n") {
		if f := strings.Fields(l); len(f) > 0 && f[0] == table {
			return strings.Join(f, " ")
		}
	}
	return ""
}

// TestCustomerFromStoreAEarnsPointsAtStoreB: a customer enrolled at one
// store's edge earns points at another store's edge, and every node agrees
// on the balance.
func TestCustomerFromStoreAEarnsPointsAtStoreB(t *testing.T) {
	e := MustStartPair(t)
	// A second store with its own edge.
	var loc2, en oneResp
	if st := e.hub.Call(t, "POST", "/api/v1/locations", e.hubTok, map[string]any{"name": "Second Store", "timezone": "Australia/Sydney"}, &loc2); st != 201 {
		t.Fatalf("location: %d", st)
	}
	l2 := loc2.Data["id"].(string)
	e.hub.Call(t, "POST", "/api/v1/loyalty/programs", e.hubTok, map[string]any{"name": "Beans", "points_per_unit": 1, "redemption_value": 10}, nil)
	if st := e.hub.Call(t, "POST", "/api/v1/locations/"+l2+"/enrolment", e.hubTok, nil, &en); st != 201 {
		t.Fatalf("enrolment: %d", st)
	}
	b := nodetest.Start(t, edgenode.Run, nil, "--http-addr", "127.0.0.1:0", "--data-dir", t.TempDir(),
		"--hub-url", e.hub.URL, "--enrol-token", en.Data["token"].(string))
	b.WaitLogin(t, 20*time.Second, "cashier@demo.test", demo.Password) // store B's users
	bTok := b.Login(t, "cashier@demo.test", demo.Password)
	// At store A: a new customer joins the program.
	var cust, acct oneResp
	if st := e.edge.Call(t, "POST", "/api/v1/customers", e.edgeTok, map[string]any{"first_name": "Rae", "email": "rae@x.test"}, &cust); st != 201 {
		t.Fatalf("customer at A: %d", st)
	}
	cid := cust.Data["id"].(string)
	wait.For(t, 20*time.Second, "the program at store A", func() bool {
		return e.edge.Call(t, "POST", "/api/v1/loyalty/accounts", e.edgeTok, map[string]any{"customer_id": cid}, &acct) == 201
	})
	// At store B: she buys, paying 12.00 → 12 points.
	product := ""
	wait.For(t, 20*time.Second, "the customer and catalog at store B", func() bool {
		ps := e.products(t, b, bTok)
		var c oneResp
		if len(ps) > 0 && b.Call(t, "GET", "/api/v1/customers/"+cid, bTok, nil, &c) == 200 {
			product = ps[13]["id"].(string) // Ham & Cheese Toastie, 12.50
			return true
		}
		return false
	})
	var accB oneResp
	wait.For(t, 20*time.Second, "the account at store B", func() bool {
		return b.Call(t, "GET", "/api/v1/loyalty/accounts/customer/"+cid, bTok, nil, &accB) == 200
	})
	var o oneResp
	if st := b.Call(t, "POST", "/api/v1/orders", bTok, map[string]any{"location_id": l2, "customer_id": cid,
		"line_items": []any{map[string]any{"product_id": product, "quantity": 1}}}, &o); st != 201 {
		t.Fatalf("order at B: %d %v", st, o)
	}
	b.Call(t, "POST", "/api/v1/payments/initiate", bTok, map[string]any{"order_id": o.Data["id"], "amount": o.Data["total"], "method": "cash"}, nil)
	var done oneResp
	if st := b.Call(t, "POST", "/api/v1/orders/"+o.Data["id"].(string)+"/complete", bTok, nil, &done); st != 200 || done.Data["loyalty_points_earned"].(float64) <= 0 {
		t.Fatalf("complete at B: %d points %v", st, done.Data["loyalty_points_earned"])
	}
	earned := done.Data["loyalty_points_earned"].(float64)
	account := acct.Data["id"].(string)
	for _, n := range []struct {
		p   *nodetest.Proc
		tok string
	}{{e.hub, e.hubTok}, {e.edge, e.edgeTok}, {b, bTok}} {
		wait.For(t, 20*time.Second, "the balance everywhere", func() bool {
			var a oneResp
			return n.p.Call(t, "GET", "/api/v1/loyalty/accounts/"+account, n.tok, nil, &a) == 200 && a.Data["points_balance"] == earned
		})
	}
}
