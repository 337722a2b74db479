package synctest

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/gorilla/websocket"

	"kassa.dev/shared/node/nodetest"
	"kassa.dev/sync/wait"
)

// liveChange is a message of GET /api/v1/ws.
type liveChange struct {
	Type     string         `json:"type"`
	Position string         `json:"position"`
	Topic    string         `json:"topic"`
	Entity   string         `json:"entity"`
	ID       string         `json:"id"`
	Data     map[string]any `json:"data"`
}

// liveTerminal opens /api/v1/ws at p and subscribes; its messages arrive
// on the returned channel.
func liveTerminal(t *testing.T, p *nodetest.Proc, token, location string, topics ...string) <-chan liveChange {
	t.Helper()
	c, _, err := websocket.DefaultDialer.Dial("ws"+strings.TrimPrefix(p.URL, "http")+"/api/v1/ws", http.Header{"Authorization": {"Bearer " + token}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	if err := c.WriteJSON(map[string]any{"type": "subscribe", "topics": topics, "location_id": location}); err != nil {
		t.Fatal(err)
	}
	out := make(chan liveChange, 1024)
	go func() {
		defer close(out)
		for {
			_, b, err := c.ReadMessage()
			if err != nil {
				return
			}
			var m liveChange
			json.Unmarshal(b, &m)
			out <- m
		}
	}()
	return out
}

// awaitChange reads ch until ok holds.
func awaitChange(t *testing.T, ch <-chan liveChange, what string, ok func(liveChange) bool) {
	t.Helper()
	deadline := time.After(30 * time.Second)
	for {
		select {
		case m, open := <-ch:
			if !open {
				t.Fatalf("%s: the connection ended", what)
			}
			if ok(m) {
				return
			}
		case <-deadline:
			t.Fatalf("%s: not seen", what)
		}
	}
}

// Terminals at the edge keep working with the hub unreachable; the hub's
// changes reach them after sync, and the edge's orders reach terminals at
// the hub.
func TestLiveTerminalsAtBothNodesAcrossSync(t *testing.T) {
	e := MustStartPair(t)
	wait.For(t, 20*time.Second, "the demo catalog at the edge", func() bool { return len(e.products(t, e.edge, e.edgeTok)) == 15 })
	pid := e.products(t, e.edge, e.edgeTok)[0]["id"].(string)
	till := liveTerminal(t, e.edge, e.edgeTok, e.location, "orders", "catalog")
	office := liveTerminal(t, e.hub, e.hubTok, e.location, "orders")
	awaitChange(t, till, "subscribed at the edge", func(m liveChange) bool { return m.Type == "subscribed" })
	awaitChange(t, office, "subscribed at the hub", func(m liveChange) bool { return m.Type == "subscribed" })

	e.proxy.cut()
	wait.For(t, 10*time.Second, "the edge to see the link down", func() bool { return e.status(t, e.edge, e.edgeMgr)["connected"] == false })
	id := e.sale(t, pid)
	awaitChange(t, till, "the offline sale at the edge's terminal", func(m liveChange) bool {
		return m.Topic == "orders" && m.ID == id && m.Data["status"] == "completed"
	})
	if st := e.hub.Call(t, "PATCH", "/api/v1/catalog/products/"+pid, e.hubTok, map[string]any{"base_price": 555}, nil); st != 200 {
		t.Fatalf("patch at hub: %d", st)
	}
	e.proxy.restore()
	awaitChange(t, till, "the hub's price at the edge's terminal", func(m liveChange) bool {
		return m.Topic == "catalog" && m.ID == pid && m.Data["base_price"] == float64(555)
	})
	awaitChange(t, office, "the edge's sale at the hub's terminal", func(m liveChange) bool {
		return m.Topic == "orders" && m.ID == id && m.Data["status"] == "completed"
	})
}
