package synctest

import (
	"testing"
	"time"

	"kassa.dev/shared/kassa"
	"kassa.dev/sync/wait"
)

// TestAnEdgesEventSetsAHubRuleOffOnce: sales made at an edge, cut off and
// then connected, each set an order.created rule off once at the hub, once
// their events reach the hub's log, also after the link is cut and
// restored again (the edge re-sends, the hub re-pulls).
func TestAnEdgesEventSetsAHubRuleOffOnce(t *testing.T) {
	e := MustStartPair(t)
	var rule oneResp
	if st := e.hub.Call(t, "POST", "/api/v1/automations", e.hubTok, map[string]any{"name": "Every sale",
		"trigger":    map[string]any{"type": "event", "event": kassa.EventOrderCreated},
		"conditions": []any{map[string]any{"field": "location_id", "operator": "eq", "value": e.location}},
		"actions":    []any{map[string]any{"type": "emit_event", "params": map[string]any{"payload": map[string]any{"kind": "sale"}}}},
	}, &rule); st != 201 {
		t.Fatalf("create rule: %d %v", st, rule)
	}
	id := rule.Data["id"].(string)
	executions := func() []map[string]any {
		var l listResp
		if st := e.hub.Call(t, "GET", "/api/v1/automations/"+id+"/executions", e.hubTok, nil, &l); st != 200 {
			t.Fatalf("executions: %d", st)
		}
		return l.Data
	}
	wait.For(t, 20*time.Second, "the demo catalog at the edge", func() bool { return len(e.products(t, e.edge, e.edgeTok)) == 15 })
	products := e.products(t, e.edge, e.edgeTok)

	e.proxy.cut()
	wait.For(t, 10*time.Second, "the edge to see the link down", func() bool { return e.status(t, e.edge, e.edgeMgr)["connected"] == false })
	e.sale(t, products[0]["id"].(string))
	e.sale(t, products[1]["id"].(string))
	if n := len(executions()); n != 0 {
		t.Fatalf("%d executions while the edge was cut off", n)
	}
	e.proxy.restore()
	e.sale(t, products[2]["id"].(string))
	wait.For(t, 30*time.Second, "three executions at the hub", func() bool { return len(executions()) >= 3 })

	e.proxy.cut()
	wait.For(t, 10*time.Second, "the edge to see the link down", func() bool { return e.status(t, e.edge, e.edgeMgr)["connected"] == false })
	e.proxy.restore()
	e.sale(t, products[3]["id"].(string))
	wait.For(t, 30*time.Second, "four executions at the hub", func() bool { return len(executions()) >= 4 })
	wait.For(t, 20*time.Second, "the edge to verify after reconnect", func() bool {
		st := e.status(t, e.edge, e.edgeMgr)
		return st["connected"] == true && st["last_verified"] != nil && st["pending_up"] == float64(0)
	})
	xs := executions()
	events := map[string]bool{}
	for _, x := range xs {
		if x["status"] != kassa.ExecutionSucceeded || x["trigger"] != kassa.TriggerEvent {
			t.Fatalf("execution %v", x)
		}
		events[x["event_id"].(string)] = true
	}
	if len(xs) != 4 || len(events) != 4 {
		t.Fatalf("%d executions for %d events, want 4 and 4", len(xs), len(events))
	}
}
