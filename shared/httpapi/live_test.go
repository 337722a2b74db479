package httpapi_test

import (
	"encoding/json"
	"errors"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/gorilla/websocket"

	"kassa.dev/shared/kassa"
	"kassa.dev/shared/node"
	"kassa.dev/sync/wait"
)

// GET /api/v1/ws: terminals' live updates, over real loopback WebSockets.

// liveMsg is a message of the feed.
type liveMsg struct {
	Type       string          `json:"type"`
	Position   string          `json:"position"`
	Topic      string          `json:"topic"`
	Entity     string          `json:"entity"`
	ID         string          `json:"id"`
	Op         string          `json:"op"`
	LocationID string          `json:"location_id"`
	Data       json.RawMessage `json:"data"`
	Status     int             `json:"status"`
	Message    string          `json:"message"`
}

func (m liveMsg) data(t testing.TB) map[string]any {
	t.Helper()
	var d map[string]any
	if err := json.Unmarshal(m.Data, &d); err != nil {
		t.Fatalf("data of %s: %v", m.Type, err)
	}
	return d
}

// terminal is one WebSocket client.
type terminal struct {
	t testing.TB
	c *websocket.Conn
}

// MustTerminal opens /api/v1/ws with a bearer header.
func (tn *testNode) MustTerminal(token string) *terminal {
	tn.t.Helper()
	c, r, err := websocket.DefaultDialer.Dial("ws"+strings.TrimPrefix(tn.URL, "http")+"/api/v1/ws",
		http.Header{"Authorization": {"Bearer " + token}})
	if err != nil {
		status := 0
		if r != nil {
			status = r.StatusCode
		}
		tn.t.Fatalf("dial: %v (%d)", err, status)
	}
	tn.t.Cleanup(func() { c.Close() })
	return &terminal{t: tn.t, c: c}
}

func (tm *terminal) send(v any) {
	tm.t.Helper()
	if err := tm.c.WriteJSON(v); err != nil {
		tm.t.Fatal(err)
	}
}

// next reads the next message, failing after d.
func (tm *terminal) next(d time.Duration) liveMsg {
	tm.t.Helper()
	tm.c.SetReadDeadline(time.Now().Add(d))
	var m liveMsg
	if err := tm.c.ReadJSON(&m); err != nil {
		tm.t.Fatalf("read: %v", err)
	}
	return m
}

// subscribe sends a subscribe message and returns the answer.
func (tm *terminal) subscribe(loc, after string, topics ...string) liveMsg {
	tm.t.Helper()
	tm.send(map[string]any{"type": "subscribe", "topics": topics, "location_id": loc, "after": after})
	return tm.next(5 * time.Second)
}

// until reads messages until one satisfies ok, returning all read.
func (tm *terminal) until(ok func(liveMsg) bool) []liveMsg {
	tm.t.Helper()
	var got []liveMsg
	for {
		m := tm.next(10 * time.Second)
		got = append(got, m)
		if ok(m) {
			return got
		}
	}
}

// silent reports that no message arrives while the server handles a
// probe: a message sent after the others (an echo of a bad subscribe)
// must be the next one.
func (tm *terminal) mustBeQuiet() {
	tm.t.Helper()
	tm.send(map[string]any{"type": "probe"})
	if m := tm.next(5 * time.Second); m.Type != "error" || m.Status != 400 {
		tm.t.Fatalf("a message arrived before the probe's answer: %+v", m)
	}
}

func TestLiveTwoTerminalsSeeOrdersAndStock(t *testing.T) {
	f := mustKDS(t, kassa.NodeEdge, nil)
	cashier := f.tn.MustUser(f.org, "till@kitchen.test", kassa.RoleCashier)
	a := f.tn.MustTerminal(cashier)
	b := f.tn.MustTerminal(cashier)
	for _, tm := range []*terminal{a, b} {
		if m := tm.subscribe(f.loc, "", "orders", "stock"); m.Type != "subscribed" || m.Position == "" {
			t.Fatalf("subscribe: %+v", m)
		}
	}
	// Till A takes an order over REST; till B sees it.
	id, number := f.order("table 4", f.toast)
	got := b.until(func(m liveMsg) bool { return m.Type == "change" && m.Topic == "orders" })
	m := got[len(got)-1]
	if m.Entity != "order" || m.ID != id || m.LocationID != f.loc || m.data(t)["number"] != number || m.data(t)["notes"] != "table 4" {
		t.Fatalf("order change %+v", m)
	}
	// A stock adjustment reaches both, as the level's new on_hand.
	r := f.tn.Do("POST", "/api/v1/inventory/stock/adjust", f.org.Owner, map[string]any{"location_id": f.loc, "product_id": f.toast,
		"reason": "received", "quantity": 12})
	if r.Status != 200 && r.Status != 201 {
		t.Fatalf("adjust: %d %s", r.Status, r.Body)
	}
	for _, tm := range []*terminal{a, b} {
		got := tm.until(func(m liveMsg) bool {
			return m.Topic == "stock" && m.data(t)["product_id"] == f.toast && m.data(t)["on_hand"] == float64(12)
		})
		if m := got[len(got)-1]; m.Entity != "stock_level" || m.LocationID != f.loc {
			t.Fatalf("stock change %+v", m)
		}
	}
	// The order's completion: its status reaches the other till.
	r = f.tn.Do("POST", "/api/v1/payments/initiate", f.org.Owner, map[string]any{"order_id": id, "amount": 900, "method": "cash"})
	if r.Status != 201 {
		t.Fatalf("pay: %d %s", r.Status, r.Body)
	}
	if r := f.tn.Do("POST", "/api/v1/orders/"+id+"/complete", f.org.Owner, nil); r.Status != 200 {
		t.Fatalf("complete: %d %s", r.Status, r.Body)
	}
	b.until(func(m liveMsg) bool { return m.Topic == "orders" && m.ID == id && m.data(t)["status"] == "completed" })
}

func TestLiveTopicsScopesAndOrgs(t *testing.T) {
	f := mustKDS(t, kassa.NodeEdge, nil)
	other := f.tn.MustOrg("Other Cafe")
	otherLoc := f.tn.Do("POST", "/api/v1/locations", other.Owner, map[string]any{"name": "Elsewhere", "timezone": "UTC"}).Data()["id"].(string)
	// A kitchen token reads the catalog only: the orders topic is refused.
	kitchen := f.tn.MustTerminal(f.kitchen)
	if m := kitchen.subscribe(f.loc, "", "catalog", "orders"); m.Type != "error" || m.Status != 403 {
		t.Fatalf("kitchen token, orders: %+v", m)
	}
	if m := kitchen.subscribe(f.loc, "", "catalog"); m.Type != "subscribed" {
		t.Fatalf("kitchen token, catalog: %+v", m)
	}
	cashier := f.tn.MustUser(f.org, "till@kitchen.test", kassa.RoleCashier)
	tm := f.tn.MustTerminal(cashier)
	// Bad subscriptions answer an error and change nothing.
	for _, tc := range []struct {
		sub    map[string]any
		status int
	}{
		{map[string]any{"type": "subscribe", "topics": []string{"gossip"}}, 400},
		{map[string]any{"type": "subscribe", "topics": []string{}}, 400},
		{map[string]any{"type": "subscribe", "topics": []string{"orders"}, "location_id": otherLoc}, 404},
		{map[string]any{"type": "subscribe", "topics": []string{"orders"}, "after": "yesterday"}, 400},
	} {
		tm.send(tc.sub)
		if m := tm.next(5 * time.Second); m.Type != "error" || m.Status != tc.status {
			t.Fatalf("%v: %+v", tc.sub, m)
		}
	}
	// Each topic needs its scope: a kitchen-less cashier reads customers,
	// but another org's owner sees nothing of this org.
	if m := tm.subscribe("", "", "orders", "catalog", "customers"); m.Type != "subscribed" {
		t.Fatalf("subscribe: %+v", m)
	}
	stranger := f.tn.MustTerminal(other.Owner)
	if m := stranger.subscribe("", "", "orders", "stock", "catalog", "customers"); m.Type != "subscribed" {
		t.Fatalf("subscribe: %+v", m)
	}
	f.order("", f.latte)
	c := f.tn.Do("POST", "/api/v1/customers", f.org.Owner, map[string]any{"first_name": "Ada", "last_name": "L", "email": "ada@x.test"})
	if c.Status != 201 {
		t.Fatalf("customer: %d %s", c.Status, c.Body)
	}
	p := f.tn.Do("PATCH", "/api/v1/catalog/products/"+f.latte, f.org.Owner, map[string]any{"base_price": 480})
	if p.Status != 200 {
		t.Fatalf("product: %d %s", p.Status, p.Body)
	}
	got := tm.until(func(m liveMsg) bool { return m.Topic == "catalog" && m.ID == f.latte })
	topics := map[string]bool{}
	for _, m := range got {
		topics[m.Topic] = true
	}
	if !topics["orders"] || !topics["customers"] || got[len(got)-1].data(t)["base_price"] != float64(480) {
		t.Fatalf("topics seen %v, last %+v", topics, got[len(got)-1])
	}
	stranger.mustBeQuiet()
}

// A terminal cut off mid-burst resumes from the last position it saw and
// gets every change after it once, in order, then the live ones.
func TestLiveResumeAfterCutNoGapNoDuplicate(t *testing.T) {
	f := mustKDS(t, kassa.NodeEdge, nil)
	cashier := f.tn.MustUser(f.org, "till@kitchen.test", kassa.RoleCashier)
	tm := f.tn.MustTerminal(cashier)
	tm.subscribe(f.loc, "", "orders")
	const n = 30
	var want []string
	done := make(chan struct{})
	ids := make(chan string, n)
	go func() {
		defer close(done)
		for i := 0; i < n; i++ {
			id, _ := f.order("", f.toast)
			ids <- id
		}
	}()
	// Read a few, then cut the connection while orders keep coming.
	var last string
	var seen []string
	for len(seen) < 5 {
		m := tm.next(10 * time.Second)
		if m.Type == "change" && m.Op == "insert" {
			seen = append(seen, m.ID)
		}
		last = m.Position
	}
	tm.c.Close()
	<-done
	close(ids)
	for id := range ids {
		want = append(want, id)
	}
	after := f.tn.MustTerminal(cashier)
	if m := after.subscribe(f.loc, last, "orders"); m.Type != "subscribed" || m.Position != last {
		t.Fatalf("resubscribe: %+v", m)
	}
	extra, _ := f.order("", f.latte)
	want = append(want, extra)
	got := after.until(func(m liveMsg) bool { return m.ID == extra })
	positions := map[string]bool{}
	var inserts []string
	for _, m := range got {
		if positions[m.Position] {
			t.Fatalf("position %s twice", m.Position)
		}
		positions[m.Position] = true
		if m.Op == "insert" {
			inserts = append(inserts, m.ID)
		}
	}
	all := append(seen, inserts...)
	if strings.Join(all, ",") != strings.Join(want, ",") {
		t.Fatalf("orders seen across the cut:\n%v\nwant\n%v", all, want)
	}
	// A position from the future (a replaced data directory) is a reset.
	fresh := f.tn.MustTerminal(cashier)
	fresh.send(map[string]any{"type": "subscribe", "topics": []string{"orders"}, "after": "999999.0"})
	if m := fresh.next(5 * time.Second); m.Type != "reset" {
		t.Fatalf("future position: %+v", m)
	}
}

// Browsers authenticate by their first message.
func TestLiveFirstMessageAuthFromAPage(t *testing.T) {
	tn := MustStartNode(t, kassa.NodeEdge, func(c *node.Config) { c.WSPing = time.Second })
	o := tn.MustOrg("Page Cafe")
	c, _, err := websocket.DefaultDialer.Dial("ws"+strings.TrimPrefix(tn.URL, "http")+"/api/v1/ws",
		http.Header{"Origin": {tn.URL}})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	tm := &terminal{t: t, c: c}
	tm.send(map[string]any{"type": "auth", "access_token": o.Owner})
	if m := tm.subscribe("", "", "catalog"); m.Type != "subscribed" {
		t.Fatalf("subscribe: %+v", m)
	}
	r := tn.Do("POST", "/api/v1/catalog/categories", o.Owner, map[string]any{"name": "Cakes"})
	if m := tm.next(10 * time.Second); m.Entity != "category" || m.ID != r.Data()["id"] {
		t.Fatalf("change %+v", m)
	}
	var ce *websocket.CloseError
	_, _, err = websocket.DefaultDialer.Dial("ws"+strings.TrimPrefix(tn.URL, "http")+"/api/v1/ws", http.Header{"Origin": {"http://evil.test"}})
	if err == nil || errors.As(err, &ce) {
		t.Fatalf("another site's page connected: %v", err)
	}
}

// wsWatch reads a WebSocket client's messages as they come, so that it
// answers the server's pings, and notes how the connection ended.
type wsWatch struct {
	msgs  chan []byte
	ended chan int // the close code (0: no close frame), once
}

func watchWS(c *websocket.Conn) *wsWatch {
	w := &wsWatch{msgs: make(chan []byte, 256), ended: make(chan int, 1)}
	c.SetReadDeadline(time.Time{})
	go func() {
		for {
			_, b, err := c.ReadMessage()
			if err != nil {
				code := 0
				var ce *websocket.CloseError
				if errors.As(err, &ce) {
					code = ce.Code
				}
				w.ended <- code
				return
			}
			select {
			case w.msgs <- b:
			default: // a test that does not look at them
			}
		}
	}()
	return w
}

// waitEnd waits until the connection ends and returns its close code.
func (w *wsWatch) waitEnd(t *testing.T, what string) int {
	t.Helper()
	code := -1
	wait.For(t, 10*time.Second, what, func() bool {
		select {
		case code = <-w.ended:
			return true
		default:
			return false
		}
	})
	return code
}

// waitChange waits for a live change of the order id.
func (w *wsWatch) waitChange(t *testing.T, id string) {
	t.Helper()
	wait.For(t, 10*time.Second, "the change of order "+id, func() bool {
		for {
			select {
			case b := <-w.msgs:
				var m liveMsg
				if json.Unmarshal(b, &m) == nil && m.Topic == "orders" && m.ID == id {
					return true
				}
			case code := <-w.ended:
				t.Fatalf("the connection ended (%d)", code)
			default:
				return false
			}
		}
	})
}

// TestLiveFeedEndsWhenItsUserLosesTheScope: at every ping the feed
// rereads its token with the user's current role, so a cashier demoted to
// a role without the live scopes (ops) is cut with 4403, a deactivated
// one with 4401, and one demoted to kitchen — which still reads the
// catalog, but not the orders it subscribed to — with 4403; another
// cashier's terminal stays and keeps getting orders. The ops feed of the
// hub (reports:read) shares the check.
func TestLiveFeedEndsWhenItsUserLosesTheScope(t *testing.T) {
	ping := func(c *node.Config) { c.WSPing = 200 * time.Millisecond }
	for _, c := range []struct {
		name   string
		change map[string]any
		code   int
	}{
		{"demoted to ops", map[string]any{"role": string(kassa.RoleOps)}, 4403},
		{"deactivated", map[string]any{"is_active": false}, 4401},
		{"demoted to kitchen", map[string]any{"role": string(kassa.RoleKitchen)}, 4403},
	} {
		t.Run(c.name, func(t *testing.T) {
			f := mustKDS(t, kassa.NodeEdge, ping)
			cashier := f.tn.MustUser(f.org, "till@kitchen.test", kassa.RoleCashier)
			other := f.tn.MustUser(f.org, "till2@kitchen.test", kassa.RoleCashier)
			tm, kept := f.tn.MustTerminal(cashier), f.tn.MustTerminal(other)
			for _, x := range []*terminal{tm, kept} {
				if m := x.subscribe(f.loc, "", "orders", "catalog"); m.Type != "subscribed" {
					t.Fatalf("subscribe: %+v", m)
				}
			}
			cut, stays := watchWS(tm.c), watchWS(kept.c)
			me := f.tn.Do("GET", "/api/v1/auth/me", cashier, nil)
			f.tn.applyUserChange(f.org.ID, me.Data()["id"].(string), c.change)
			if code := cut.waitEnd(t, "the feed of the cashier "+c.name+" to end"); code != c.code {
				t.Fatalf("closed with %d, want %d", code, c.code)
			}
			id, _ := f.order("", f.toast)
			stays.waitChange(t, id)
		})
	}
	t.Run("ops feed, demoted to cashier", func(t *testing.T) {
		hub := startOpsHub(t, ping)
		a := hub.MustOrg("Ops E")
		ops := hub.MustUser(a, "watch@e.test", kassa.RoleOps)
		conn, _, err := dialOps(t, hub, ops)
		if err != nil {
			t.Fatal(err)
		}
		if m := next(t, conn); m.Type != kassa.OpsSnapshot {
			t.Fatalf("first message: %+v", m)
		}
		w := watchWS(conn)
		me := hub.Do("GET", "/api/v1/auth/me", ops, nil)
		hub.applyUserChange(a.ID, me.Data()["id"].(string), map[string]any{"role": string(kassa.RoleCashier)})
		if code := w.waitEnd(t, "the ops feed of the demoted user to end"); code != 4403 {
			t.Fatalf("closed with %d, want 4403", code)
		}
	})
}
