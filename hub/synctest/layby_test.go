package synctest

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"kassa.dev/edge/edgenode"
	"kassa.dev/shared/demo"
	"kassa.dev/shared/node/nodetest"
	"kassa.dev/sync/wait"
)

// TestALaybysWholeLifeAtTwoOfflineStores (docs/laybys.md): a lay-by opened
// at store A reaches store B; both are cut off from the hub and each takes
// an instalment; once back, all three nodes hold both instalments and the
// same paid total, and B takes the last one, which completes it — A's
// goods leave its stock. Another lay-by, cancelled by its customer at A
// while offline (B may not: A holds the goods), comes back cancelled with
// its refund less the org's termination charge, its goods back on sale.
func TestALaybysWholeLifeAtTwoOfflineStores(t *testing.T) {
	e := MustStartPair(t)
	b, bProxy, bTok, _ := e.addStore(t)
	a, aTok := e.edge, e.edgeMgr
	product := ""
	wait.For(t, 20*time.Second, "the demo catalog at store A", func() bool {
		ps := e.products(t, a, aTok)
		if len(ps) > 13 {
			product = ps[13]["id"].(string) // Ham & Cheese Toastie, 12.50
		}
		return product != ""
	})
	var cust oneResp
	if st := e.hub.Call(t, "POST", "/api/v1/customers", e.hubTok, map[string]any{"first_name": "Lee", "email": "lee@layby.test"}, &cust); st != 201 {
		t.Fatalf("customer: %d", st)
	}
	customer := cust.Data["id"].(string)
	e.hub.Call(t, "PATCH", "/api/v1/settings", e.hubTok, map[string]any{"layby_termination_charge": 100}, nil)
	e.hub.Call(t, "POST", "/api/v1/inventory/stock/adjust", e.hubTok, map[string]any{"location_id": e.location, "product_id": product,
		"reason": "count", "quantity": 10}, nil)
	stockAtA := func(p *nodetest.Proc, tok string) string {
		var l listResp
		p.Call(t, "GET", fmt.Sprintf("/api/v1/inventory/stock?location_id=%s&product_id=%s", e.location, product), tok, nil, &l)
		if len(l.Data) != 1 {
			return ""
		}
		return fmt.Sprintf("%v/%v", l.Data[0]["on_hand"], l.Data[0]["reserved"])
	}
	wait.For(t, 20*time.Second, "the customer, the charge and the stock at both stores", func() bool {
		var s oneResp
		return a.Call(t, "GET", "/api/v1/customers/"+customer, aTok, nil, nil) == 200 && b.Call(t, "GET", "/api/v1/customers/"+customer, bTok, nil, nil) == 200 &&
			b.Call(t, "GET", "/api/v1/settings", bTok, nil, &s) == 200 && s.Data["layby_termination_charge"] == 100.0 && stockAtA(a, aTok) == "10/0"
	})
	open := func() map[string]any {
		var l oneResp
		if st := a.Call(t, "POST", "/api/v1/laybys", aTok, map[string]any{"location_id": e.location, "customer_id": customer,
			"line_items": []any{map[string]any{"product_id": product, "quantity": 2}}, "deposit": map[string]any{"method": "cash", "amount": 500}}, &l); st != 201 {
			t.Fatalf("open at A: %d %v", st, l.Data)
		}
		return l.Data
	}
	laybyAt := func(p *nodetest.Proc, tok, id string) map[string]any {
		var l oneResp
		if p.Call(t, "GET", "/api/v1/laybys/"+id, tok, nil, &l) != 200 {
			return map[string]any{}
		}
		return l.Data
	}
	nodes := []struct {
		name string
		p    *nodetest.Proc
		tok  string
	}{{"hub", e.hub, e.hubTok}, {"A", a, aTok}, {"B", b, bTok}}
	everywhere := func(what, id string, ok func(l map[string]any) bool) {
		t.Helper()
		for _, n := range nodes {
			wait.For(t, 30*time.Second, what+" at "+n.name, func() bool { return ok(laybyAt(n.p, n.tok, id)) })
		}
	}
	cut := func() {
		e.proxy.cut()
		bProxy.cut()
		wait.For(t, 10*time.Second, "both stores to see the link down", func() bool {
			return e.status(t, a, aTok)["connected"] == false && e.status(t, b, bTok)["connected"] == false
		})
	}
	restore := func() { e.proxy.restore(); bProxy.restore() }

	l := open()
	id, total := l["id"].(string), l["total"].(float64)
	everywhere("the lay-by", id, func(l map[string]any) bool { return l["paid"] == 500.0 })
	cut()
	for _, n := range []struct {
		p   *nodetest.Proc
		tok string
	}{{a, aTok}, {b, bTok}} {
		if st := n.p.Call(t, "POST", "/api/v1/laybys/"+id+"/payments", n.tok, map[string]any{"method": "cash", "amount": 300}, nil); st != 200 {
			t.Fatalf("an instalment offline: %d", st)
		}
	}
	restore()
	everywhere("both instalments", id, func(l map[string]any) bool {
		return l["paid"] == 1100.0 && len(l["payments"].([]any)) == 3 && l["status"] == "open"
	})
	var done struct {
		oneResp
		Detail string `json:"detail"`
		Errors any    `json:"errors"`
	}
	if st := b.Call(t, "POST", "/api/v1/laybys/"+id+"/payments", bTok, map[string]any{"method": "cash", "amount": total - 1100}, &done); st != 200 ||
		done.Data["status"] != "completed" {
		t.Fatalf("the last instalment at B: %d %v %s %v", st, done.Data, done.Detail, done.Errors)
	}
	everywhere("the completion", id, func(l map[string]any) bool { return l["status"] == "completed" && l["balance"] == 0.0 })
	wait.For(t, 20*time.Second, "A's goods gone, at A and the hub", func() bool {
		return stockAtA(a, aTok) == "8/0" && stockAtA(e.hub, e.hubTok) == "8/0"
	})

	id = open()["id"].(string)
	everywhere("the second lay-by", id, func(l map[string]any) bool { return l["status"] == "open" })
	cut()
	if st := b.Call(t, "POST", "/api/v1/laybys/"+id+"/cancel", bTok, map[string]any{"by": "customer"}, nil); st != 409 {
		t.Fatalf("a cancel at the store without the goods: %d, want 409", st)
	}
	var c oneResp
	if st := a.Call(t, "POST", "/api/v1/laybys/"+id+"/cancel", aTok, map[string]any{"by": "customer"}, &c); st != 200 || c.Data["refunded"] != 400.0 {
		t.Fatalf("the customer cancels at A offline: %d %v", st, c.Data)
	}
	if got := stockAtA(a, aTok); got != "8/0" {
		t.Fatalf("A's stock after the cancel: %s, want 8/0", got)
	}
	restore()
	everywhere("the cancellation", id, func(l map[string]any) bool {
		return l["status"] == "cancelled" && l["termination_charge"] == 100.0 && l["refunded"] == 400.0
	})
	wait.For(t, 20*time.Second, "A's goods back on sale at the hub", func() bool { return stockAtA(e.hub, e.hubTok) == "8/0" })
}

// addStore opens a second store at the hub and enrols an edge there
// through its own proxy; it returns the edge, its proxy, its manager's
// token and the store's id.
func (e *env) addStore(t *testing.T) (*nodetest.Proc, *proxy, string, string) {
	t.Helper()
	var loc, en oneResp
	if st := e.hub.Call(t, "POST", "/api/v1/locations", e.hubTok, map[string]any{"name": "Second Store", "timezone": "Australia/Sydney"}, &loc); st != 201 {
		t.Fatalf("location: %d", st)
	}
	id := loc.Data["id"].(string)
	if st := e.hub.Call(t, "POST", "/api/v1/locations/"+id+"/enrolment", e.hubTok, nil, &en); st != 201 {
		t.Fatalf("enrolment: %d %v", st, en)
	}
	leaf := strings.TrimPrefix(field(e.hub.Output(), "leaf "), "nats-leaf://")
	px := startProxy(t, leaf)
	p := nodetest.Start(t, edgenode.Run, nil, "--http-addr", "127.0.0.1:0", "--data-dir", t.TempDir(),
		"--hub-url", e.hub.URL, "--enrol-token", en.Data["token"].(string), "--hub-leaf-url", "nats-leaf://"+px.addr)
	p.WaitLogin(t, 20*time.Second, "manager@demo.test", demo.Password)
	return p, px, p.Login(t, "manager@demo.test", demo.Password), id
}
