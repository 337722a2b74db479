package synctest

import (
	"context"
	"encoding/json"
	"reflect"
	"testing"
	"time"

	"kassa.dev/shared/demo"
	"kassa.dev/shared/kassa"
	"kassa.dev/shared/node"
	"kassa.dev/shared/node/nodetest"
	"kassa.dev/sync/wait"
)

// eventLog reads the event log of the store in dir, which a running node
// may hold open (as hub verify reads a live store).
func eventLog(t testing.TB, dir string) []node.LoggedEvent {
	t.Helper()
	_, es, err := node.ReadEventLog(context.Background(), dir, 0, 1_000_000)
	if err != nil {
		t.Fatal(err)
	}
	return es
}

// eventsOf counts a log's events of one type per resource id (data.id).
func eventsOf(t testing.TB, es []node.LoggedEvent, typ, origin string) map[string]int {
	out := map[string]int{}
	for _, e := range es {
		if e.Type != typ || e.Origin != origin {
			continue
		}
		var d struct{ ID string }
		if err := json.Unmarshal(e.Data.(json.RawMessage), &d); err != nil {
			t.Fatal(err)
		}
		out[d.ID]++
	}
	return out
}

// edgeOrigin is the node id of the edge whose store is in dir.
func edgeOrigin(t testing.TB, dir string) string {
	t.Helper()
	id, _, err := node.ReadEventLog(context.Background(), dir, 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	return id
}

// sameEvents checks that every event the edge made is in the hub's log
// exactly once, with the edge's type, time and data.
func sameEvents(t testing.TB, hubLog, edgeLog []node.LoggedEvent, origin string) int {
	t.Helper()
	atHub := map[string][]node.LoggedEvent{}
	for _, e := range hubLog {
		atHub[e.ID] = append(atHub[e.ID], e)
	}
	n := 0
	for _, e := range edgeLog {
		if e.Origin != origin {
			continue
		}
		n++
		h := atHub[e.ID]
		if len(h) != 1 || h[0].Type != e.Type || !h[0].OccurredAt.Equal(e.OccurredAt) || h[0].Origin != origin ||
			!sameJSON(h[0].Data.(json.RawMessage), e.Data.(json.RawMessage)) {
			t.Fatalf("edge event %s %s at the hub: %+v", e.ID, e.Type, h)
		}
	}
	return n
}

// sameJSON reports whether two documents say the same: a hub on
// PostgreSQL keeps an event's data as jsonb, its keys in its own order.
func sameJSON(a, b json.RawMessage) bool {
	var x, y any
	return json.Unmarshal(a, &x) == nil && json.Unmarshal(b, &y) == nil && reflect.DeepEqual(x, y)
}

// TestAnEdgesEventsReachTheHubOnceAcrossPartitions: events made at an
// edge while it is cut off, twice, and while it is connected, are in the
// hub's log exactly once each, with the edge's occurred_at.
func TestAnEdgesEventsReachTheHubOnceAcrossPartitions(t *testing.T) {
	e := MustStartPair(t)
	wait.For(t, 20*time.Second, "the demo catalog at the edge", func() bool { return len(e.products(t, e.edge, e.edgeTok)) == 15 })
	products := e.products(t, e.edge, e.edgeTok)
	var orders []string
	for round := range 2 {
		e.proxy.cut()
		wait.For(t, 10*time.Second, "the edge to see the link down", func() bool { return e.status(t, e.edge, e.edgeMgr)["connected"] == false })
		for i := range 5 {
			orders = append(orders, e.sale(t, products[(round+i)%5]["id"].(string)))
		}
		e.proxy.restore()
		orders = append(orders, e.sale(t, products[round]["id"].(string)))
		for _, id := range orders {
			wait.For(t, 20*time.Second, "order "+id+" at the hub", func() bool {
				var o oneResp
				return e.hub.Call(t, "GET", "/api/v1/orders/"+id, e.hubTok, nil, &o) == 200 && o.Data["status"] == "completed"
			})
		}
	}
	wait.For(t, 20*time.Second, "the edge to verify after reconnect", func() bool {
		st := e.status(t, e.edge, e.edgeMgr)
		return st["connected"] == true && st["last_verified"] != nil && st["pending_up"] == float64(0)
	})
	origin := edgeOrigin(t, e.edgeDir)
	hubLog, edgeLog := eventLog(t, e.hubStore), eventLog(t, e.edgeDir)
	if n := sameEvents(t, hubLog, edgeLog, origin); n < 3*len(orders) {
		t.Fatalf("the edge logged %d events for %d sales", n, len(orders))
	}
	created, completed := eventsOf(t, hubLog, kassa.EventOrderCreated, origin), eventsOf(t, hubLog, kassa.EventOrderCompleted, origin)
	for _, id := range orders {
		if created[id] != 1 || completed[id] != 1 {
			t.Fatalf("order %s: %d order.created, %d order.completed at the hub", id, created[id], completed[id])
		}
	}
	if len(created) != len(orders) {
		t.Fatalf("the hub logged %d orders of the edge, it made %d", len(created), len(orders))
	}
}

// TestKillDashNineLosesNoEventOfACommittedSale kills the edge binary in a
// burst of sales and restarts it: every acknowledged sale has its
// order.created and order.completed events once, at the edge and at the
// hub, and no event names an order the edge does not have (a unit cut off
// by the kill left neither its rows nor its events).
func TestKillDashNineLosesNoEventOfACommittedSale(t *testing.T) {
	k := mustKillMidBurst(t, 6, 30)
	hub, hubDir, edgeDir, loc, acked := k.hub, k.hubDir, k.edgeDir, k.loc, k.acked

	edge := startProcess(t, k.bin, k.edgeArgs...)
	ep := &nodetest.Proc{URL: edge.URL}
	tok := ep.Login(t, "manager@demo.test", demo.Password)
	hubTok := hub.Login(t, "owner@demo.test", demo.Password)
	for _, id := range acked {
		wait.For(t, 30*time.Second, "sale "+id+" at the hub", func() bool {
			var o oneResp
			return hub.Call(t, "GET", "/api/v1/orders/"+id, hubTok, nil, &o) == 200 && o.Data["status"] == "completed"
		})
	}
	wait.For(t, 30*time.Second, "the edge to have pushed everything", func() bool {
		var st oneResp
		ep.Call(t, "GET", "/api/v1/sync/status", tok, nil, &st)
		return st.Data["connected"] == true && st.Data["pending_up"] == float64(0)
	})
	origin := edgeOrigin(t, edgeDir)
	hubLog, edgeLog := eventLog(t, hubDir), eventLog(t, edgeDir)
	sameEvents(t, hubLog, edgeLog, origin)
	for _, log := range [][]node.LoggedEvent{edgeLog, hubLog} {
		created, completed := eventsOf(t, log, kassa.EventOrderCreated, origin), eventsOf(t, log, kassa.EventOrderCompleted, origin)
		for _, id := range acked {
			if created[id] != 1 || completed[id] != 1 {
				t.Fatalf("acknowledged sale %s: %d order.created, %d order.completed", id, created[id], completed[id])
			}
		}
		for id := range created { // an order.created event only of an order that was committed
			var o oneResp
			if st := ep.Call(t, "GET", "/api/v1/orders/"+id, tok, nil, &o); st != 200 {
				t.Fatalf("order.created of order %s, which the edge does not have: %d", id, st)
			}
		}
	}
	// And every order the edge has (also those committed but not
	// acknowledged before the kill) has its event.
	var l struct {
		Data       []map[string]any `json:"data"`
		NextCursor *string          `json:"next_cursor"`
	}
	created := eventsOf(t, edgeLog, kassa.EventOrderCreated, origin)
	for cursor := ""; ; cursor = "&cursor=" + *l.NextCursor {
		l.NextCursor = nil
		ep.Call(t, "GET", "/api/v1/orders?limit=200&location_id="+loc+cursor, tok, nil, &l)
		for _, o := range l.Data {
			if created[o["id"].(string)] != 1 {
				t.Fatalf("order %s at the edge has %d order.created events", o["id"], created[o["id"].(string)])
			}
		}
		if l.NextCursor == nil {
			break
		}
	}
	t.Logf("%d sales acknowledged before the kill; %d events at the edge, %d at the hub", len(acked), len(edgeLog), len(hubLog))
}
