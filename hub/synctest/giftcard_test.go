package synctest

import (
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"kassa.dev/edge/edgenode"
	"kassa.dev/shared/demo"
	"kassa.dev/shared/node/nodetest"
	"kassa.dev/sync/wait"
)

// TestTwoEdgesRedeemTheLastGiftCardBalanceOfflineOneConflict: a card
// issued at the hub reaches two edges of one store, and the org allows
// each store one sale's worth of gift card payments offline; both are cut
// off from the hub and each pays an order with the card's whole balance, while
// edge B also sells a new card. After reconnect the hub lists one
// gift_card_overdrawn conflict for the card, all three nodes agree on its
// balance (minus one order's total) and its two redeems, both sales are
// at the hub, and so is the card sold offline, with its balance.
func TestTwoEdgesRedeemTheLastGiftCardBalanceOfflineOneConflict(t *testing.T) {
	e := MustStartPair(t)
	b, bProxy, bTok := e.addEdge(t)
	wait.For(t, 20*time.Second, "the demo catalog at edge A", func() bool { return len(e.products(t, e.edge, e.edgeTok)) == 15 })
	product := e.products(t, e.edge, e.edgeTok)[2]["id"].(string)
	if st := e.hub.Call(t, "PUT", "/api/v1/payments/methods", e.hubTok,
		map[string]any{"methods": []any{map[string]any{"method": "gift_card", "enabled": true}}}, nil); st != 200 {
		t.Fatalf("enable gift cards: %d", st)
	}
	order := func(p *nodetest.Proc, tok string) (string, float64) {
		var o oneResp
		if st := p.Call(t, "POST", "/api/v1/orders", tok, map[string]any{"location_id": e.location,
			"line_items": []any{map[string]any{"product_id": product, "quantity": 1}}}, &o); st != 201 {
			t.Fatalf("order: %d %v", st, o.Data)
		}
		return o.Data["id"].(string), o.Data["total"].(float64)
	}
	_, total := order(e.edge, e.edgeMgr) // the price, as the edge sells it
	var g oneResp
	if st := e.hub.Call(t, "POST", "/api/v1/gift-cards", e.hubTok, map[string]any{"initial_amount": total}, &g); st != 201 {
		t.Fatalf("issue: %d %v", st, g.Data)
	}
	card, code := g.Data["id"].(string), g.Data["code"].(string)
	balance := func(p *nodetest.Proc, tok, id string) float64 {
		var c oneResp
		if p.Call(t, "GET", "/api/v1/gift-cards/"+id, tok, nil, &c) != 200 {
			return -1e12
		}
		return c.Data["balance"].(float64)
	}
	accepts := func(p *nodetest.Proc, tok string) bool {
		var m oneResp
		if p.Call(t, "GET", "/api/v1/payments/methods", tok, nil, &m) != 200 {
			return false
		}
		for _, x := range m.Data["methods"].([]any) {
			if x := x.(map[string]any); x["method"] == "gift_card" {
				return x["enabled"] == true
			}
		}
		return false
	}
	// Each store may take up to one sale's total from gift cards while it
	// cannot reach the hub (the default is online only).
	if st := e.hub.Call(t, "PATCH", "/api/v1/settings", e.hubTok, map[string]any{"gift_card_offline_limit": total}, nil); st != 200 {
		t.Fatalf("offline allowance: %d", st)
	}
	allowance := func(p *nodetest.Proc, tok string) bool {
		var s oneResp
		return p.Call(t, "GET", "/api/v1/settings", tok, nil, &s) == 200 && s.Data["gift_card_offline_limit"] == total
	}
	wait.For(t, 20*time.Second, "the card, the gift_card method and the offline allowance at both edges", func() bool {
		return balance(e.edge, e.edgeMgr, card) == total && balance(b, bTok, card) == total && accepts(e.edge, e.edgeMgr) && accepts(b, bTok) &&
			allowance(e.edge, e.edgeMgr) && allowance(b, bTok)
	})
	e.proxy.cut()
	bProxy.cut()
	wait.For(t, 10*time.Second, "both edges to see the link down", func() bool {
		return e.status(t, e.edge, e.edgeMgr)["connected"] == false && e.status(t, b, bTok)["connected"] == false
	})
	var sales []string
	for _, n := range []struct {
		p   *nodetest.Proc
		tok string
	}{{e.edge, e.edgeMgr}, {b, bTok}} {
		id, _ := order(n.p, n.tok)
		var p oneResp
		if st := n.p.Call(t, "POST", "/api/v1/payments/initiate", n.tok, map[string]any{"order_id": id, "amount": total,
			"method": "gift_card", "gift_card_code": code}, &p); st != 201 || p.Data["status"] != "captured" {
			t.Fatalf("redeem offline: %d %v", st, p.Data)
		}
		if st := n.p.Call(t, "POST", "/api/v1/orders/"+id+"/complete", n.tok, nil, nil); st != 200 {
			t.Fatalf("complete: %d", st)
		}
		sales = append(sales, id)
	}
	var sold oneResp
	if st := b.Call(t, "POST", "/api/v1/gift-cards", bTok, map[string]any{"initial_amount": 2500}, &sold); st != 201 {
		t.Fatalf("sell a card offline: %d %v", st, sold.Data)
	}
	e.proxy.restore()
	bProxy.restore()
	want := 0 - total
	wait.For(t, 30*time.Second, "all three nodes to agree on the card", func() bool {
		return balance(e.hub, e.hubTok, card) == want && balance(e.edge, e.edgeMgr, card) == want && balance(b, bTok, card) == want
	})
	for _, n := range []struct {
		p   *nodetest.Proc
		tok string
	}{{e.hub, e.hubTok}, {e.edge, e.edgeMgr}, {b, bTok}} {
		var l listResp
		n.p.Call(t, "GET", "/api/v1/gift-cards/"+card+"/transactions", n.tok, nil, &l)
		redeems := 0
		for _, x := range l.Data {
			if x["type"] == "redeem" {
				redeems++
			}
		}
		if len(l.Data) != 3 || redeems != 2 {
			t.Fatalf("ledger %v: want the issue and two redeems", l.Data)
		}
	}
	wait.For(t, 30*time.Second, "both sales and the card sold offline at the hub", func() bool {
		for _, id := range sales {
			var o oneResp
			if e.hub.Call(t, "GET", "/api/v1/orders/"+id, e.hubTok, nil, &o) != 200 || o.Data["status"] != "completed" || o.Data["paid_total"] != total {
				return false
			}
		}
		return balance(e.hub, e.hubTok, sold.Data["id"].(string)) == 2500
	})
	var cs listResp
	e.hub.Call(t, "GET", "/api/v1/sync/conflicts", e.hubTok, nil, &cs)
	var found []map[string]any
	for _, c := range cs.Data {
		if c["kind"] == "gift_card_overdrawn" && c["entity_id"] == card {
			found = append(found, c)
		}
		if c["kind"] == "quarantined" {
			t.Errorf("a record was quarantined: %v", c)
		}
	}
	if len(found) != 1 || found[0]["remote"].(map[string]any)["balance"] != want {
		t.Fatalf("hub conflicts %v, want one gift_card_overdrawn of balance %v", cs.Data, want)
	}
}

// giftStores is a hub with two stores of one org, each with its own edge
// behind a proxy the test can cut: edge A at the demo location, edge B at
// a second location. Gift cards are enabled; a product of 28.80 sells at
// both.
type giftStores struct {
	*env
	b       *nodetest.Proc
	bProxy  *proxy
	bTok    string // manager at edge B
	bLoc    string
	product string
}

func startGiftStores(t *testing.T) *giftStores {
	t.Helper()
	s := &giftStores{env: MustStartPair(t)}
	var loc, en, p oneResp
	if st := s.hub.Call(t, "POST", "/api/v1/locations", s.hubTok, map[string]any{"name": "Second Store", "timezone": "Australia/Sydney"}, &loc); st != 201 {
		t.Fatalf("location: %d", st)
	}
	s.bLoc = loc.Data["id"].(string)
	if st := s.hub.Call(t, "POST", "/api/v1/locations/"+s.bLoc+"/enrolment", s.hubTok, nil, &en); st != 201 {
		t.Fatalf("enrolment: %d", st)
	}
	leaf := strings.TrimPrefix(field(s.hub.Output(), "leaf "), "nats-leaf://")
	s.bProxy = startProxy(t, leaf)
	s.b = nodetest.Start(t, edgenode.Run, nil, "--http-addr", "127.0.0.1:0", "--data-dir", t.TempDir(),
		"--hub-url", s.hub.URL, "--enrol-token", en.Data["token"].(string), "--hub-leaf-url", "nats-leaf://"+s.bProxy.addr)
	s.b.WaitLogin(t, 20*time.Second, "manager@demo.test", demo.Password)
	s.bTok = s.b.Login(t, "manager@demo.test", demo.Password)
	if st := s.hub.Call(t, "PUT", "/api/v1/payments/methods", s.hubTok,
		map[string]any{"methods": []any{map[string]any{"method": "gift_card", "enabled": true}}}, nil); st != 200 {
		t.Fatalf("enable gift cards: %d", st)
	}
	if st := s.hub.Call(t, "POST", "/api/v1/catalog/products", s.hubTok, map[string]any{"name": "Gift basket", "sku": "GIFT-2880", "base_price": 2880}, &p); st != 201 {
		t.Fatalf("product: %d", st)
	}
	s.product = p.Data["id"].(string)
	s.waitSettings(t, "gift cards and the product at both stores", func(st map[string]any) bool {
		return strings.Contains(fmt.Sprint(st["payment_methods"]), "map[enabled:true method:gift_card]")
	})
	return s
}

// stores are the two edges with their store's location and a token.
func (s *giftStores) stores() []giftStore {
	return []giftStore{{s.edge, s.edgeMgr, s.location, s.proxy}, {s.b, s.bTok, s.bLoc, s.bProxy}}
}

type giftStore struct {
	p     *nodetest.Proc
	tok   string
	loc   string
	proxy *proxy
}

// waitSettings waits until both edges have the product and org settings ok accepts.
func (s *giftStores) waitSettings(t *testing.T, what string, ok func(map[string]any) bool) {
	t.Helper()
	wait.For(t, 20*time.Second, what, func() bool {
		for _, st := range s.stores() {
			var set oneResp
			if st.p.Call(t, "GET", "/api/v1/settings", st.tok, nil, &set) != 200 || !ok(set.Data) ||
				st.p.Call(t, "GET", "/api/v1/catalog/products/"+s.product, st.tok, nil, nil) != 200 {
				return false
			}
		}
		return true
	})
}

// issue sells a card at the hub and waits until both edges hold it.
func (s *giftStores) issue(t *testing.T, amount float64) (id, code string) {
	t.Helper()
	var g oneResp
	if st := s.hub.Call(t, "POST", "/api/v1/gift-cards", s.hubTok, map[string]any{"initial_amount": amount}, &g); st != 201 {
		t.Fatalf("issue: %d %v", st, g.Data)
	}
	id, code = g.Data["id"].(string), g.Data["code"].(string)
	wait.For(t, 20*time.Second, "the card at both stores", func() bool {
		return s.balance(t, s.edge, s.edgeMgr, id) == amount && s.balance(t, s.b, s.bTok, id) == amount
	})
	return id, code
}

func (s *giftStores) balance(t *testing.T, p *nodetest.Proc, tok, id string) float64 {
	var c oneResp
	if p.Call(t, "GET", "/api/v1/gift-cards/"+id, tok, nil, &c) != 200 {
		return -1e12
	}
	return c.Data["balance"].(float64)
}

// order opens an order of one basket (28.80) at a location, made at p.
func (s *giftStores) order(t *testing.T, p *nodetest.Proc, tok, loc string) string {
	t.Helper()
	var o oneResp
	if st := p.Call(t, "POST", "/api/v1/orders", tok, map[string]any{"location_id": loc,
		"line_items": []any{map[string]any{"product_id": s.product, "quantity": 1}}}, &o); st != 201 {
		t.Fatalf("order: %d %v", st, o.Data)
	}
	return o.Data["id"].(string)
}

func giftPayment(orderID, code string, amount float64) map[string]any {
	return map[string]any{"order_id": orderID, "amount": amount, "method": "gift_card", "gift_card_code": code}
}

// together sends the two calls at the same moment and returns their answers.
func together(t *testing.T, a, b func() answer) (answer, answer) {
	var ra, rb answer
	var wg sync.WaitGroup
	start := make(chan struct{})
	wg.Add(2)
	go func() { defer wg.Done(); <-start; ra = a() }()
	go func() { defer wg.Done(); <-start; rb = b() }()
	close(start)
	wg.Wait()
	return ra, rb
}

// refusedCard checks a 422 naming gift_card_code.
func refusedCard(a answer) bool {
	errs, _ := a.body["errors"].([]any)
	return a.status == 422 && len(errs) == 1 && errs[0].(map[string]any)["field"] == "gift_card_code"
}

// oneRedeemed checks that of two payments of 28.80 on a card of 30.00
// exactly one was taken and the other refused naming gift_card_code, and
// that the hub and both edges come to a balance of 1.20 — never below
// zero while they do — with one redeem in the ledger and no
// gift_card_overdrawn conflict.
func (s *giftStores) oneRedeemed(t *testing.T, card string, x, y answer) {
	t.Helper()
	won, lost := x, y
	if y.status == 201 {
		won, lost = y, x
	}
	if won.status != 201 || won.body["data"].(map[string]any)["status"] != "captured" || !refusedCard(lost) {
		t.Fatalf("answers %d %v and %d %v: want one captured payment and one 422 naming gift_card_code", x.status, x.body, y.status, y.body)
	}
	nodes := []giftStore{{p: s.hub, tok: s.hubTok}, {p: s.edge, tok: s.edgeMgr}, {p: s.b, tok: s.bTok}}
	wait.For(t, 20*time.Second, "every node at a balance of 1.20", func() bool {
		done := true
		for _, n := range nodes {
			b := s.balance(t, n.p, n.tok, card)
			if b < 0 {
				t.Fatalf("the card's balance went below zero at %s: %v", n.p.URL, b)
			}
			done = done && b == 120
		}
		return done
	})
	for _, n := range nodes {
		var l listResp
		n.p.Call(t, "GET", "/api/v1/gift-cards/"+card+"/transactions", n.tok, nil, &l)
		if len(l.Data) != 2 {
			t.Fatalf("ledger at %s: %v; want the issue and one redeem", n.p.URL, l.Data)
		}
	}
	var cs listResp
	s.hub.Call(t, "GET", "/api/v1/sync/conflicts", s.hubTok, nil, &cs)
	for _, c := range cs.Data {
		if c["entity_id"] == card || c["kind"] == "quarantined" {
			t.Fatalf("conflict at the hub: %v", c)
		}
	}
}

// TestTwoStoresRaceForAGiftCardOnlineOneIsRefused: a card of 30.00; the
// cashiers of two stores, both connected, take 28.80 from it at the same
// moment, each at the store's own edge. The edges ask the hub, which
// holds the amount for the first and refuses the second: one payment is
// taken, the other is a 422 naming gift_card_code, and the card never
// goes below zero anywhere.
func TestTwoStoresRaceForAGiftCardOnlineOneIsRefused(t *testing.T) {
	s := startGiftStores(t)
	for round := range 3 {
		card, code := s.issue(t, 3000)
		a, b := s.order(t, s.edge, s.edgeMgr, s.location), s.order(t, s.b, s.bTok, s.bLoc)
		x, y := together(t,
			func() answer {
				return raw(t, s.edge, "POST", "/api/v1/payments/initiate", s.edgeMgr, giftPayment(a, code, 2880))
			},
			func() answer {
				return raw(t, s.b, "POST", "/api/v1/payments/initiate", s.bTok, giftPayment(b, code, 2880))
			})
		t.Logf("round %d: %d, %d", round, x.status, y.status)
		s.oneRedeemed(t, card, x, y)
	}
}

// TestTwoGiftCardPaymentsSentToTheHubOneIsRefused: the same race, both
// payments sent to the hub (a partner app paying orders of two stores):
// the hub routes each to its store, whose edge asks the hub to hold the
// amount; one is taken, the other refused.
func TestTwoGiftCardPaymentsSentToTheHubOneIsRefused(t *testing.T) {
	s := startGiftStores(t)
	for round := range 3 {
		card, code := s.issue(t, 3000)
		a, b := s.order(t, s.hub, s.hubTok, s.location), s.order(t, s.hub, s.hubTok, s.bLoc)
		x, y := together(t,
			func() answer {
				return raw(t, s.hub, "POST", "/api/v1/payments/initiate", s.hubTok, giftPayment(a, code, 2880))
			},
			func() answer {
				return raw(t, s.hub, "POST", "/api/v1/payments/initiate", s.hubTok, giftPayment(b, code, 2880))
			})
		t.Logf("round %d: %d, %d", round, x.status, y.status)
		s.oneRedeemed(t, card, x, y)
	}
}

// TestAGiftCardHoldOfAPaymentThatFailedIsReleased: store A's edge asks the
// hub to hold 28.80 of a card of 28.80, then its own check refuses the
// payment (the order owes less); the edge releases the hold, so store B
// takes the whole card at once, not minutes later.
func TestAGiftCardHoldOfAPaymentThatFailedIsReleased(t *testing.T) {
	s := startGiftStores(t)
	card, code := s.issue(t, 2880)
	a := s.order(t, s.edge, s.edgeMgr, s.location)
	if st := s.edge.Call(t, "POST", "/api/v1/payments/initiate", s.edgeMgr, map[string]any{"order_id": a, "amount": 1000, "method": "cash"}, nil); st != 201 {
		t.Fatalf("cash part: %d", st)
	}
	if r := raw(t, s.edge, "POST", "/api/v1/payments/initiate", s.edgeMgr, giftPayment(a, code, 2880)); r.status != 422 {
		t.Fatalf("a card payment beyond what the order owes: %d %v", r.status, r.body)
	}
	b := s.order(t, s.b, s.bTok, s.bLoc)
	if r := raw(t, s.b, "POST", "/api/v1/payments/initiate", s.bTok, giftPayment(b, code, 2880)); r.status != 201 {
		t.Fatalf("store B takes the whole card after store A's payment failed: %d %v", r.status, r.body)
	}
	wait.For(t, 20*time.Second, "the card spent at every node", func() bool {
		return s.balance(t, s.hub, s.hubTok, card) == 0 && s.balance(t, s.edge, s.edgeMgr, card) == 0 && s.balance(t, s.b, s.bTok, card) == 0
	})
}

// TestAGiftCardOfflineWithinTheOrgsAllowance: a store cut off from the
// hub takes no gift card while the org's gift_card_offline_limit is 0 (a
// 503 with Retry-After, nothing stored); with an allowance of 20.00 it
// takes 12.00 and 8.00 (marked offline) and refuses 0.01 more; back
// online, the hub has both payments and the card's balance.
func TestAGiftCardOfflineWithinTheOrgsAllowance(t *testing.T) {
	s := startGiftStores(t)
	card, code := s.issue(t, 5000)
	a := s.order(t, s.edge, s.edgeMgr, s.location)
	cut := func() {
		s.proxy.cut()
		wait.For(t, 10*time.Second, "edge A to see the link down", func() bool { return s.status(t, s.edge, s.edgeMgr)["connected"] == false })
	}
	cut()
	r := raw(t, s.edge, "POST", "/api/v1/payments/initiate", s.edgeMgr, giftPayment(a, code, 1200))
	if r.status != 503 || r.header.Get("Retry-After") == "" || r.body["type"] != "https://kassa.dev/problems/unavailable" {
		t.Fatalf("offline, online only: %d %v", r.status, r.body)
	}
	if o := order(t, s.edge, s.edgeMgr, a); o["paid_total"] != 0.0 || s.balance(t, s.edge, s.edgeMgr, card) != 5000 {
		t.Fatalf("a refused offline card payment changed the order (%v) or the card", o["paid_total"])
	}
	s.proxy.restore()
	wait.For(t, 20*time.Second, "edge A back", func() bool { return s.status(t, s.edge, s.edgeMgr)["connected"] == true })
	if st := s.hub.Call(t, "PATCH", "/api/v1/settings", s.hubTok, map[string]any{"gift_card_offline_limit": 2000}, nil); st != 200 {
		t.Fatalf("set the allowance: %d", st)
	}
	s.waitSettings(t, "the allowance at both stores", func(st map[string]any) bool { return st["gift_card_offline_limit"] == 2000.0 })
	cut()
	for _, p := range []struct {
		amount float64
		status int
	}{{1200, 201}, {801, 503}, {800, 201}, {1, 503}} {
		r := raw(t, s.edge, "POST", "/api/v1/payments/initiate", s.edgeMgr, giftPayment(a, code, p.amount))
		if r.status != p.status || (p.status == 201 && r.body["data"].(map[string]any)["offline"] != true) {
			t.Fatalf("offline, %v of an allowance of 20.00: %d %v; want %d", p.amount, r.status, r.body, p.status)
		}
	}
	s.proxy.restore()
	wait.For(t, 20*time.Second, "both payments and the card's balance at the hub", func() bool {
		return order(t, s.hub, s.hubTok, a)["paid_total"] == 2000.0 && s.balance(t, s.hub, s.hubTok, card) == 3000
	})
}
