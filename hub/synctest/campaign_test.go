package synctest

import (
	"testing"
	"time"

	"kassa.dev/shared/node/nodetest"
	"kassa.dev/sync/wait"
)

// TestAnOfflineEdgePricesWithTheHubsCampaigns: campaigns made at the hub
// reach the edge by sync, the edge refuses to make its own, and while cut
// off it prices a cashier's order with the automatic campaign and a
// voucher; after reconnect the hub admits the order (the campaign part is
// not the cashier's manual discount) and its analytics count the sale.
func TestAnOfflineEdgePricesWithTheHubsCampaigns(t *testing.T) {
	e := MustStartPair(t)
	wait.For(t, 20*time.Second, "the demo catalog at the edge", func() bool { return len(e.products(t, e.edge, e.edgeTok)) == 15 })
	products := e.products(t, e.edge, e.edgeTok)
	p0, p1 := products[0]["id"].(string), products[1]["id"].(string)
	launch := func(body map[string]any) string {
		t.Helper()
		var c oneResp
		if st := e.hub.Call(t, "POST", "/api/v1/campaigns", e.hubTok, body, &c); st != 201 {
			t.Fatalf("create a campaign at the hub: %d %v", st, c)
		}
		id := c.Data["id"].(string)
		if st := e.hub.Call(t, "POST", "/api/v1/campaigns/"+id+"/launch", e.hubTok, nil, nil); st != 200 {
			t.Fatalf("launch: %d", st)
		}
		return id
	}
	auto := launch(map[string]any{"name": "10 % off", "type": "discount",
		"rules": []any{map[string]any{"type": "product_discount", "discount_type": "percent", "value": 1000, "product_ids": []string{p0}}}})
	voucher := launch(map[string]any{"name": "Free one", "type": "offer", "voucher_code": "FREE1",
		"rules": []any{map[string]any{"type": "product_discount", "discount_type": "percent", "value": 10000, "product_ids": []string{p1}}}})
	for _, id := range []string{auto, voucher} {
		wait.For(t, 20*time.Second, "campaign "+id+" at the edge", func() bool {
			var c oneResp
			return e.edge.Call(t, "GET", "/api/v1/campaigns/"+id, e.edgeTok, nil, &c) == 200 && c.Data["status"] == "active"
		})
	}
	if st := e.edge.Call(t, "POST", "/api/v1/campaigns", e.edgeMgr, map[string]any{"name": "Rogue", "type": "discount",
		"rules": []any{map[string]any{"type": "order_discount", "discount_type": "percent", "value": 10000}}}, nil); st != 409 {
		t.Fatalf("an enrolled edge made a campaign: %d", st)
	}

	e.proxy.cut()
	wait.For(t, 10*time.Second, "the edge to see the link down", func() bool { return e.status(t, e.edge, e.edgeMgr)["connected"] == false })
	var o oneResp
	if st := e.edge.Call(t, "POST", "/api/v1/orders", e.edgeTok, map[string]any{"location_id": e.location, "voucher_code": "free1",
		"line_items": []any{map[string]any{"product_id": p0, "quantity": 1}, map[string]any{"product_id": p1, "quantity": 1}}}, &o); st != 201 {
		t.Fatalf("order at the offline edge: %d %v", st, o.Data)
	}
	lines := o.Data["line_items"].([]any)
	l0, l1 := lines[0].(map[string]any), lines[1].(map[string]any)
	want0 := (l0["unit_price"].(float64)*10 + 50) / 100 // 10 %, half up
	if l0["discount"] != float64(int64(want0)) || l1["discount"] != l1["unit_price"] || len(o.Data["campaigns"].([]any)) != 2 {
		t.Fatalf("offline pricing: %v", o.Data)
	}
	id := o.Data["id"].(string)
	if st := e.edge.Call(t, "POST", "/api/v1/payments/initiate", e.edgeTok, map[string]any{"order_id": id, "amount": o.Data["total"], "method": "cash"}, nil); st != 201 {
		t.Fatalf("pay: %d", st)
	}
	if st := e.edge.Call(t, "POST", "/api/v1/orders/"+id+"/complete", e.edgeTok, nil, nil); st != 200 {
		t.Fatalf("complete: %d", st)
	}
	e.proxy.restore()
	wait.For(t, 30*time.Second, "the order and its redemptions at the hub", func() bool {
		var h, st oneResp
		return e.hub.Call(t, "GET", "/api/v1/orders/"+id, e.hubTok, nil, &h) == 200 && h.Data["status"] == "completed" &&
			h.Data["discount_total"] == o.Data["discount_total"] &&
			e.hub.Call(t, "GET", "/api/v1/campaigns/"+voucher+"/stats", e.hubTok, nil, &st) == 200 &&
			st.Data["redemptions"] == float64(1) && st.Data["discount_given"] == l1["discount"] && st.Data["revenue"] == o.Data["total"]
	})
	var conflicts listResp
	e.hub.Call(t, "GET", "/api/v1/sync/conflicts", e.hubTok, nil, &conflicts)
	if len(conflicts.Data) != 0 {
		t.Fatalf("the hub refused part of the sale: %v", conflicts.Data)
	}
}

// TestTwoEdgesRedeemTheLastVoucherOfflineOneConflict: a voucher with one
// use left is redeemed at two edges cut off from the hub; after reconnect
// the hub lists one voucher_overused conflict and all three nodes count
// both redemptions.
func TestTwoEdgesRedeemTheLastVoucherOfflineOneConflict(t *testing.T) {
	e := MustStartPair(t)
	b, bProxy, bTok := e.addEdge(t)
	wait.For(t, 20*time.Second, "the demo catalog at edge A", func() bool { return len(e.products(t, e.edge, e.edgeTok)) == 15 })
	product := e.products(t, e.edge, e.edgeTok)[2]["id"].(string)
	var c oneResp
	if st := e.hub.Call(t, "POST", "/api/v1/campaigns", e.hubTok, map[string]any{"name": "Last one", "type": "offer",
		"voucher_code": "LAST1", "usage_limit": 1,
		"rules": []any{map[string]any{"type": "product_discount", "discount_type": "percent", "value": 5000, "product_ids": []string{product}}}}, &c); st != 201 {
		t.Fatalf("create: %d %v", st, c)
	}
	id := c.Data["id"].(string)
	if st := e.hub.Call(t, "POST", "/api/v1/campaigns/"+id+"/launch", e.hubTok, nil, nil); st != 200 {
		t.Fatalf("launch: %d", st)
	}
	redemptions := func(p *nodetest.Proc, tok string) float64 {
		var st oneResp
		if p.Call(t, "GET", "/api/v1/campaigns/"+id+"/stats", tok, nil, &st) != 200 {
			return -1
		}
		return st.Data["redemptions"].(float64)
	}
	active := func(p *nodetest.Proc, tok string) bool {
		var c oneResp
		return p.Call(t, "GET", "/api/v1/campaigns/"+id, tok, nil, &c) == 200 && c.Data["status"] == "active"
	}
	// Launched, not only created: the launch may come in a later pull.
	wait.For(t, 20*time.Second, "the campaign at both edges", func() bool {
		return redemptions(e.edge, e.edgeMgr) == 0 && redemptions(b, bTok) == 0 && active(e.edge, e.edgeMgr) && active(b, bTok)
	})
	e.proxy.cut()
	bProxy.cut()
	wait.For(t, 10*time.Second, "both edges to see the link down", func() bool {
		return e.status(t, e.edge, e.edgeMgr)["connected"] == false && e.status(t, b, bTok)["connected"] == false
	})
	for _, p := range []*nodetest.Proc{e.edge, b} {
		tok := e.edgeMgr
		if p == b {
			tok = bTok
		}
		var o oneResp
		if st := p.Call(t, "POST", "/api/v1/orders", tok, map[string]any{"location_id": e.location, "voucher_code": "LAST1",
			"line_items": []any{map[string]any{"product_id": product, "quantity": 1}}}, &o); st != 201 {
			t.Fatalf("redeem offline: %d %v", st, o.Data)
		}
	}
	e.proxy.restore()
	bProxy.restore()
	wait.For(t, 30*time.Second, "all three nodes to count both redemptions", func() bool {
		return redemptions(e.hub, e.hubTok) == 2 && redemptions(e.edge, e.edgeMgr) == 2 && redemptions(b, bTok) == 2
	})
	var cs listResp
	e.hub.Call(t, "GET", "/api/v1/sync/conflicts", e.hubTok, nil, &cs)
	n := 0
	for _, c := range cs.Data {
		if c["kind"] == "voucher_overused" && c["entity_id"] == id {
			n++
		}
	}
	if n != 1 {
		t.Fatalf("hub conflicts %v, want one voucher_overused", cs.Data)
	}
}
