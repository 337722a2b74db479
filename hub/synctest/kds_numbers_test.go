package synctest

import (
	"strings"
	"testing"
	"time"

	"kassa.dev/sync/wait"
)

// TestKitchenTicketsOfHubAndEdgeOrdersHaveTheirOwnNumbers: order numbers
// are per node, so the first order the edge takes and the first the hub
// takes for the store (online, for pickup) both end in 00001, and the
// kitchen showed both as #1. The edge numbers the tickets it makes per
// location and business day, whichever node took the order: #1 and #2
// (issue 21).
func TestKitchenTicketsOfHubAndEdgeOrdersHaveTheirOwnNumbers(t *testing.T) {
	e := MustStartPair(t)
	wait.For(t, 20*time.Second, "the demo catalog at the edge", func() bool { return len(e.products(t, e.edge, e.edgeTok)) == 15 })
	product := e.products(t, e.edge, e.edgeTok)[0]["id"].(string)
	order := func(p interface {
		Call(testing.TB, string, string, string, any, any) int
	}, tok, channel string) (string, string) {
		t.Helper()
		var o oneResp
		if st := p.Call(t, "POST", "/api/v1/orders", tok, map[string]any{"location_id": e.location, "channel": channel,
			"line_items": []any{map[string]any{"product_id": product, "quantity": 1}}}, &o); st != 201 {
			t.Fatalf("create order: %d %v", st, o)
		}
		return o.Data["id"].(string), o.Data["number"].(string)
	}
	atEdge, edgeNumber := order(e.edge, e.edgeTok, "pos")
	atHub, hubNumber := order(e.hub, e.hubTok, "online")
	if !strings.HasSuffix(edgeNumber, "-00001") || !strings.HasSuffix(hubNumber, "-00001") {
		t.Fatalf("order numbers %s and %s: the premise is two first orders of two nodes", edgeNumber, hubNumber)
	}
	numbers := map[string]float64{}
	wait.For(t, 15*time.Second, "both tickets on the edge's board", func() bool {
		var board oneResp
		e.edge.Call(t, "GET", "/api/v1/kds/tickets?location_id="+e.location, e.edgeTok, nil, &board)
		tickets, _ := board.Data["tickets"].([]any)
		for _, tk := range tickets {
			m := tk.(map[string]any)
			n, _ := m["ticket_number"].(float64)
			numbers[m["id"].(string)] = n
		}
		return numbers[atEdge] != 0 && numbers[atHub] != 0
	})
	if numbers[atEdge] != 1 || numbers[atHub] != 2 {
		t.Fatalf("ticket numbers: the edge's order %v, the hub's %v; want 1 and 2", numbers[atEdge], numbers[atHub])
	}
}
