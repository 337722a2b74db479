package synctest

import (
	"testing"
	"time"

	"kassa.dev/shared/node/nodetest"
	"kassa.dev/sync/wait"
)

// TestTwoEdgesRedeemTheLastGiftCardBalanceOfflineOneConflict: a card
// issued at the hub reaches two edges of one store; both are cut off from
// the hub and each pays an order with the card's whole balance, while
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
	wait.For(t, 20*time.Second, "the card and the gift_card method at both edges", func() bool {
		return balance(e.edge, e.edgeMgr, card) == total && balance(b, bTok, card) == total && accepts(e.edge, e.edgeMgr) && accepts(b, bTok)
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
