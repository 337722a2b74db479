package synctest

import (
	"fmt"
	"testing"
	"time"

	"kassa.dev/sync/wait"
)

// TestAnOfflineMarkedDownSaleIsAdmittedAsTheMarkdownStood (issue 26,
// docs/catalog.md): a markdown made at the hub reaches the edge by sync
// (the edge refuses to make its own); a cashier at the edge, cut off from
// the hub, sells the marked-down product; the hub withdraws the markdown
// meanwhile. After reconnect the hub admits the sale (no conflict: the
// markdown as it stood when the sale was made gave that price), holds the
// line's original price and markdown, and the edge verifies clean.
func TestAnOfflineMarkedDownSaleIsAdmittedAsTheMarkdownStood(t *testing.T) {
	e := MustStartPair(t)
	wait.For(t, 20*time.Second, "the demo catalog at the edge", func() bool { return len(e.products(t, e.edge, e.edgeTok)) == 15 })
	product := e.products(t, e.edge, e.edgeTok)[0]
	id, price := product["id"].(string), product["base_price"].(float64)
	now := time.Now().UTC()
	var md oneResp
	if st := e.hub.Call(t, "POST", "/api/v1/catalog/markdowns", e.hubTok, map[string]any{"name": "Half price", "type": "percent", "value": 5000,
		"product_ids": []string{id}, "starts_at": now.Add(-time.Hour), "ends_at": now.Add(time.Hour)}, &md); st != 201 {
		t.Fatalf("a markdown at the hub: %d %v", st, md.Data)
	}
	markdown := md.Data["id"].(string)
	wait.For(t, 20*time.Second, "the markdown at the edge", func() bool {
		return e.edge.Call(t, "GET", "/api/v1/catalog/markdowns/"+markdown, e.edgeMgr, nil, nil) == 200
	})
	if st := e.edge.Call(t, "POST", "/api/v1/catalog/markdowns", e.edgeMgr, map[string]any{"name": "Mine", "type": "percent", "value": 100,
		"product_ids": []string{id}, "starts_at": now, "ends_at": now.Add(time.Hour)}, nil); st != 409 {
		t.Fatalf("a markdown made at an enrolled edge: %d, want 409 (made at the hub)", st)
	}
	var me oneResp
	e.edge.Call(t, "GET", "/api/v1/sync/status", e.edgeMgr, nil, &me)
	node := me.Data["node_id"].(string)

	e.proxy.cut()
	wait.For(t, 10*time.Second, "the edge to see the link down", func() bool { return e.status(t, e.edge, e.edgeMgr)["connected"] == false })
	var o oneResp
	if st := e.edge.Call(t, "POST", "/api/v1/orders", e.edgeTok, map[string]any{"location_id": e.location,
		"line_items": []any{map[string]any{"product_id": id, "quantity": 2}}}, &o); st != 201 {
		t.Fatalf("the cashier's order at the offline edge: %d %v", st, o.Data)
	}
	line := o.Data["line_items"].([]any)[0].(map[string]any)
	half := float64(int64(price) - (int64(price)+1)/2) // 50 % off, rounded half up
	if line["original_price"] != price || line["unit_price"] != half || line["markdown_id"] != markdown {
		t.Fatalf("the offline line: %v, want %v marked down to %v", line, price, half)
	}
	if st := e.hub.Call(t, "PATCH", "/api/v1/catalog/markdowns/"+markdown, e.hubTok, map[string]any{"is_active": false}, nil); st != 200 {
		t.Fatalf("withdraw the markdown at the hub: %d", st)
	}
	back := time.Now()
	e.proxy.restore()

	var edge, hub map[string]any
	var conflicts listResp
	after := func(st map[string]any) bool {
		at, _ := time.Parse(time.RFC3339Nano, fmt.Sprint(st["last_verified"]))
		return at.After(back)
	}
	wait.For(t, 30*time.Second, "the edge's first verification since the reconnect", func() bool {
		edge, hub = e.status(t, e.edge, e.edgeMgr), e.edgeStatus(t, e.hub, e.hubTok, node)
		differ, _ := hub["verify_differ"].([]any)
		e.hub.Call(t, "GET", "/api/v1/sync/conflicts", e.hubTok, nil, &conflicts)
		return after(edge) && hub["verify_ok"] == true && after(hub) || len(differ) > 0 || len(conflicts.Data) > 0
	})
	if len(conflicts.Data) != 0 {
		t.Fatalf("the hub refused part of the marked-down sale: %v", conflicts.Data)
	}
	if !after(edge) || hub["verify_ok"] != true || !after(hub) {
		t.Fatalf("the verification after the reconnect: at the edge %v, at the hub %v", edge, hub)
	}
	var h oneResp
	if st := e.hub.Call(t, "GET", "/api/v1/orders/"+o.Data["id"].(string), e.hubTok, nil, &h); st != 200 || h.Data["total"] != o.Data["total"] {
		t.Fatalf("the order at the hub: %d %v, want the edge's total %v", st, h.Data, o.Data["total"])
	}
	if hl := h.Data["line_items"].([]any)[0].(map[string]any); hl["original_price"] != price || hl["markdown_id"] != markdown {
		t.Fatalf("the line at the hub: %v", hl)
	}
}
