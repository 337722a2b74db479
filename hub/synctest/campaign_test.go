package synctest

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"kassa.dev/shared/demo"
	"kassa.dev/shared/node/nodetest"
	"kassa.dev/sync/change"
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
	c := redeemAtTwoOfflineEdges(t, "usage_limit", false)
	if c["local"].(map[string]any)["usage_limit"] != float64(1) || c["remote"].(map[string]any)["redemptions"] != float64(2) {
		t.Fatalf("conflict %v", c)
	}
}

// TestOneCustomerUsesAVoucherAtTwoOfflineEdgesOneConflict: a voucher with
// per_customer_limit 1 is used by the same customer at two edges cut off
// from the hub; after reconnect the hub lists one voucher_overused
// conflict naming the per-customer limit and the customer, and all three
// nodes count both redemptions.
func TestOneCustomerUsesAVoucherAtTwoOfflineEdgesOneConflict(t *testing.T) {
	c := redeemAtTwoOfflineEdges(t, "per_customer_limit", true)
	local, remote := c["local"].(map[string]any), c["remote"].(map[string]any)
	if local["per_customer_limit"] != float64(1) || local["usage_limit"] != nil || remote["redemptions"] != float64(2) ||
		local["customer_id"] == nil || remote["customer_id"] != local["customer_id"] {
		t.Fatalf("conflict %v", c)
	}
}

// redeemAtTwoOfflineEdges launches a voucher whose limit (usage_limit or
// per_customer_limit) is 1, cuts two edges off, uses it once at each (for
// one customer when withCustomer), reconnects, waits until all three
// nodes count both redemptions, and returns the hub's one
// voucher_overused conflict.
func redeemAtTwoOfflineEdges(t *testing.T, limit string, withCustomer bool) map[string]any {
	e := MustStartPair(t)
	b, bProxy, bTok := e.addEdge(t)
	wait.For(t, 20*time.Second, "the demo catalog at edge A", func() bool { return len(e.products(t, e.edge, e.edgeTok)) == 15 })
	product := e.products(t, e.edge, e.edgeTok)[2]["id"].(string)
	var customer any
	if withCustomer {
		var cu oneResp
		if st := e.hub.Call(t, "POST", "/api/v1/customers", e.hubTok, map[string]any{"first_name": "Ann", "email": "ann.twice@demo.test"}, &cu); st != 201 {
			t.Fatalf("customer: %d %v", st, cu)
		}
		customer = cu.Data["id"]
	}
	var c oneResp
	if st := e.hub.Call(t, "POST", "/api/v1/campaigns", e.hubTok, map[string]any{"name": "Last one", "type": "offer",
		"voucher_code": "LAST1", limit: 1,
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
	hasCustomer := func(p *nodetest.Proc, tok string) bool {
		return customer == nil || p.Call(t, "GET", "/api/v1/customers/"+customer.(string), tok, nil, nil) == 200
	}
	// Launched at both edges: the campaign row can arrive before its launch.
	active := func(p *nodetest.Proc, tok string) bool {
		var c oneResp
		return p.Call(t, "GET", "/api/v1/campaigns/"+id, tok, nil, &c) == 200 && c.Data["status"] == "active"
	}
	wait.For(t, 20*time.Second, "the launched campaign (and customer) at both edges", func() bool {
		return redemptions(e.edge, e.edgeMgr) == 0 && redemptions(b, bTok) == 0 && hasCustomer(e.edge, e.edgeMgr) && hasCustomer(b, bTok) &&
			active(e.edge, e.edgeMgr) && active(b, bTok)
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
		if st := p.Call(t, "POST", "/api/v1/orders", tok, map[string]any{"location_id": e.location, "voucher_code": "LAST1", "customer_id": customer,
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
	var found []map[string]any
	for _, c := range cs.Data {
		if c["kind"] == "voucher_overused" && c["entity_id"] == id {
			found = append(found, c)
		}
	}
	if len(found) != 1 {
		t.Fatalf("hub conflicts %v, want one voucher_overused", cs.Data)
	}
	return found[0]
}

// TestTheHubRecomputesAForgedRedemptionAmount plays a stolen store machine
// that pushes an honest campaign sale whose campaigns claim more: a forged
// amount for the campaign that applied, and a paused campaign that gave
// nothing; and, as an edge of change-record format 1 would, redemption
// records with their own amounts. The hub keeps the sale, drops the
// redemption records (a retired entity since format 2) and derives the
// order's redemptions itself, with the amounts its own campaigns give the
// order's lines: its analytics count no claimed discount. A sale whose
// campaigns are not a list of applied campaigns is refused.
func TestTheHubRecomputesAForgedRedemptionAmount(t *testing.T) {
	e := MustStartPair(t)
	hub := hubState{e: e, tok: e.hubTok}
	cashierID := hubState{e: e, tok: e.hub.Login(t, "cashier@demo.test", demo.Password)}.get(t, "/api/v1/auth/me")["id"].(string)
	products := e.products(t, e.hub, e.hubTok)
	product := products[0]["id"].(string)
	price := int64(products[0]["base_price"].(float64))
	campaign := func(name string, status string) string {
		var c oneResp
		if st := e.hub.Call(t, "POST", "/api/v1/campaigns", e.hubTok, map[string]any{"name": name, "type": "discount",
			"rules": []any{map[string]any{"type": "product_discount", "discount_type": "percent", "value": 1000, "product_ids": []string{product}}}}, &c); st != 201 {
			t.Fatalf("create: %d %v", st, c)
		}
		id := c.Data["id"].(string)
		if st := e.hub.Call(t, "POST", "/api/v1/campaigns/"+id+"/launch", e.hubTok, nil, nil); st != 200 {
			t.Fatalf("launch: %d", st)
		}
		if status != "active" {
			if st := e.hub.Call(t, "PATCH", "/api/v1/campaigns/"+id, e.hubTok, map[string]any{"status": status}, nil); st != 200 {
				t.Fatalf("%s: %d", status, st)
			}
		}
		return id
	}
	applies, paused := campaign("10 % off", "active"), campaign("Paused", "paused")

	f := e.mustForge(t, e.location)
	orderID := newID()
	now := time.Now().UTC().Format(time.RFC3339Nano)
	discount := (price*1000 + 5000) / 10000 // 10 %, half up
	total := price - discount
	redemption := func(campaignID string, amount int64) change.Change {
		return f.change("campaign_redemption", newID(), change.OpInsert, e.location, cashierID, map[string]any{"location_id": e.location,
			"campaign_id": campaignID, "order_id": orderID, "customer_id": nil, "amount": amount, "order_total": 999999,
			"created_at": now, "updated_at": now})
	}
	sale := func(id, number string, campaigns any) []change.Change {
		return []change.Change{
			f.change("order", id, change.OpInsert, e.location, cashierID, map[string]any{"location_id": e.location, "number": number,
				"status": "open", "channel": "pos", "customer_id": nil, "currency": "AUD", "subtotal": price, "discount_total": discount,
				"tax_total": 0, "total": total, "paid_total": 0, "refunded_total": 0, "loyalty_points_earned": 0, "kitchen_status": "new",
				"notes": "", "tax_inclusive": true, "tax_rate_bps": 0, "created_by": cashierID, "occurred_at": now, "created_at": now, "updated_at": now,
				"campaigns": campaigns}),
			f.change("order_line", newID(), change.OpInsert, e.location, cashierID, map[string]any{"order_id": id, "position": 0,
				"product_id": product, "name": "x", "sku": "x", "quantity": 1, "unit_price": price, "modifiers": []any{}, "discount": discount,
				"tax": 0, "total": total, "created_at": now, "updated_at": now}),
		}
	}
	claims := []any{map[string]any{"campaign_id": applies, "name": "10 % off", "amount": 999999, "points_multiplier": 0},
		map[string]any{"campaign_id": paused, "name": "Paused", "amount": 5000, "points_multiplier": 0}}
	rep := f.push(t, append(sale(orderID, "FORGE-00002", claims), redemption(applies, 999999), redemption(paused, 5000))...)
	if rep.Error != "" {
		t.Fatalf("push: %s", rep.Error)
	}
	if cs := hub.list(t, "/api/v1/sync/conflicts?limit=200"); len(cs) != 0 {
		t.Fatalf("the honest sale was refused: %v", cs)
	}
	for _, c := range []struct {
		id       string
		discount int64
		name     string
	}{{applies, discount, "the campaign that applied"}, {paused, 0, "the paused campaign"}} {
		st := hub.get(t, "/api/v1/campaigns/"+c.id+"/analytics")
		if st["redemptions"] != float64(1) || int64(st["discount_given"].(float64)) != c.discount || int64(st["revenue"].(float64)) != total {
			t.Errorf("%s: analytics %v, want 1 redemption, %d given, revenue %d", c.name, st, c.discount, total)
		}
	}

	// Campaigns that are no list of applied campaigns: the sale is
	// quarantined, and no analytics move.
	for i, bad := range []any{"not json", map[string]any{"campaign_id": applies}, []any{map[string]any{"name": "no id"}},
		[]any{map[string]any{"campaign_id": applies, "amount": -5}}, []any{claims[0], claims[0]}} {
		id := newID()
		if rep := f.push(t, sale(id, fmt.Sprintf("FORGE-1%04d", i), bad)...); rep.Error != "" {
			t.Fatalf("push %v: %s", bad, rep.Error)
		}
		if st := e.hub.Call(t, "GET", "/api/v1/orders/"+id, e.hubTok, nil, nil); st != 404 {
			t.Errorf("campaigns %v: the sale is at the hub (%d)", bad, st)
		}
		named := 0
		for _, c := range hub.list(t, "/api/v1/sync/conflicts?limit=200") {
			if strings.Contains(fmt.Sprint(c), "campaigns") {
				named++
			}
		}
		if named != i+1 {
			t.Fatalf("campaigns %v: %d conflicts name campaigns, want %d", bad, named, i+1)
		}
	}
	if st := hub.get(t, "/api/v1/campaigns/"+applies+"/analytics"); st["redemptions"] != float64(1) {
		t.Errorf("a refused sale counts in the analytics: %v", st)
	}
}

// TestAnOfflineSaleWithASincePausedCampaignStillVerifies: a cashier at an
// edge cut off from the hub sells with a campaign the hub then pauses, or
// (second case) pauses, lowers to 5 % and resumes. After reconnect the hub
// prices the sale with the campaign as it stood when the sale was made
// (campaign_versions): no conflict (the campaign's part is not the
// cashier's manual discount), the hub's order has the edge's totals, and
// both nodes' analytics count what the campaign gave then; both hold the
// same replicated rows: the edge's verification comes clean, at the edge
// and in the hub's status of it.
func TestAnOfflineSaleWithASincePausedCampaignStillVerifies(t *testing.T) {
	for _, tc := range []struct {
		name    string
		changes []map[string]any // PATCHes at the hub while the edge is offline, after the sale
	}{
		{"paused", []map[string]any{{"status": "paused"}}},
		{"lowered", []map[string]any{{"status": "paused", "rules": []any{map[string]any{"type": "product_discount", "discount_type": "percent",
			"value": 500, "product_ids": []string{"PRODUCT"}}}}, {"status": "active"}}},
	} {
		t.Run(tc.name, func(t *testing.T) { offlineSaleThenCampaignChanges(t, tc.changes) })
	}
}

func offlineSaleThenCampaignChanges(t *testing.T, changes []map[string]any) {
	e := MustStartPair(t)
	wait.For(t, 20*time.Second, "the demo catalog at the edge", func() bool { return len(e.products(t, e.edge, e.edgeTok)) == 15 })
	product := e.products(t, e.edge, e.edgeTok)[0]["id"].(string)
	var c oneResp
	if st := e.hub.Call(t, "POST", "/api/v1/campaigns", e.hubTok, map[string]any{"name": "10 % off", "type": "discount",
		"rules": []any{map[string]any{"type": "product_discount", "discount_type": "percent", "value": 1000, "product_ids": []string{product}}}}, &c); st != 201 {
		t.Fatalf("create a campaign at the hub: %d %v", st, c)
	}
	campaign := c.Data["id"].(string)
	if st := e.hub.Call(t, "POST", "/api/v1/campaigns/"+campaign+"/launch", e.hubTok, nil, nil); st != 200 {
		t.Fatalf("launch: %d", st)
	}
	wait.For(t, 20*time.Second, "the campaign active at the edge", func() bool {
		var c oneResp
		return e.edge.Call(t, "GET", "/api/v1/campaigns/"+campaign, e.edgeMgr, nil, &c) == 200 && c.Data["status"] == "active"
	})
	var me oneResp
	e.edge.Call(t, "GET", "/api/v1/sync/status", e.edgeMgr, nil, &me)
	node := me.Data["node_id"].(string)

	e.proxy.cut()
	wait.For(t, 10*time.Second, "the edge to see the link down", func() bool { return e.status(t, e.edge, e.edgeMgr)["connected"] == false })
	var o oneResp
	if st := e.edge.Call(t, "POST", "/api/v1/orders", e.edgeTok, map[string]any{"location_id": e.location,
		"line_items": []any{map[string]any{"product_id": product, "quantity": 1}}}, &o); st != 201 {
		t.Fatalf("the cashier's order at the offline edge: %d %v", st, o.Data)
	}
	given := o.Data["discount_total"].(float64)
	if given == 0 || len(o.Data["campaigns"].([]any)) != 1 {
		t.Fatalf("the offline edge did not apply the campaign: %v", o.Data)
	}
	for _, ch := range changes {
		if rules, ok := ch["rules"].([]any); ok {
			rules[0].(map[string]any)["product_ids"] = []string{product}
		}
		if st := e.hub.Call(t, "PATCH", "/api/v1/campaigns/"+campaign, e.hubTok, ch, nil); st != 200 {
			t.Fatalf("%v at the hub: %d", ch, st)
		}
	}
	back := time.Now()
	e.proxy.restore()

	after := func(st map[string]any) bool {
		at, _ := time.Parse(time.RFC3339Nano, fmt.Sprint(st["last_verified"]))
		return at.After(back)
	}
	analytics := func(p *nodetest.Proc, tok string) map[string]any {
		var st oneResp
		p.Call(t, "GET", "/api/v1/campaigns/"+campaign+"/analytics", tok, nil, &st)
		return st.Data
	}
	// The edge's status sets last_verified only when the digests agreed;
	// the hub's status of the edge says when they differed. A difference
	// or a conflict (the sale quarantined) ends the wait at once.
	var edge, hub map[string]any
	var conflicts listResp
	wait.For(t, 30*time.Second, "the edge's first verification since the reconnect", func() bool {
		edge, hub = e.status(t, e.edge, e.edgeMgr), e.edgeStatus(t, e.hub, e.hubTok, node)
		differ, _ := hub["verify_differ"].([]any)
		e.hub.Call(t, "GET", "/api/v1/sync/conflicts", e.hubTok, nil, &conflicts)
		return after(edge) && hub["verify_ok"] == true && after(hub) || len(differ) > 0 || len(conflicts.Data) > 0
	})
	if len(conflicts.Data) != 0 {
		t.Fatalf("the hub refused part of the cashier's sale: %v", conflicts.Data)
	}
	if !after(edge) || hub["verify_ok"] != true || !after(hub) {
		t.Fatalf("the verification after the reconnect: at the edge %v, at the hub %v", edge, hub)
	}
	var h oneResp
	if st := e.hub.Call(t, "GET", "/api/v1/orders/"+o.Data["id"].(string), e.hubTok, nil, &h); st != 200 ||
		h.Data["discount_total"] != given || h.Data["total"] != o.Data["total"] || h.Data["subtotal"] != o.Data["subtotal"] {
		t.Fatalf("the order at the hub: %d %v, want the edge's totals %v", st, h.Data, o.Data)
	}
	if a := analytics(e.hub, e.hubTok); a["redemptions"] != float64(1) || a["discount_given"] != given || a["revenue"] != o.Data["total"] {
		t.Errorf("the hub's analytics %v, want 1 redemption giving %v (the campaign when the sale was made), revenue %v", a, given, o.Data["total"])
	}
	if m := analytics(e.edge, e.edgeMgr); m["redemptions"] != float64(1) || m["discount_given"] != given {
		t.Errorf("the edge's analytics %v, want 1 redemption giving %v", m, given)
	}
}
