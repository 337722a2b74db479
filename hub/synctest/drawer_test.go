package synctest

import (
	"reflect"
	"testing"
	"time"

	"kassa.dev/sync/wait"
)

// TestADrawersDayAtAnOfflineEdgeReachesTheHubWithTheSameZ: with the hub
// out of reach, a store makes a register, opens its drawer with a float,
// sells for cash with change and by card, refunds in cash, pays out, opens
// the drawer for no sale, takes an X report and closes with a blind count.
// The Z's figures are the sums of the payments it covers. When the link
// comes back the hub holds the same Z and the closed drawer, and nothing
// was quarantined.
func TestADrawersDayAtAnOfflineEdgeReachesTheHubWithTheSameZ(t *testing.T) {
	e := MustStartPair(t)
	wait.For(t, 20*time.Second, "the demo catalog at the edge", func() bool { return len(e.products(t, e.edge, e.edgeTok)) == 15 })
	product := e.products(t, e.edge, e.edgeTok)[2]["id"].(string)
	limits := map[string]any{"offline_card_limit": 100000, "offline_card_daily_limit": 1000000}
	if st := e.hub.Call(t, "PATCH", "/api/v1/settings", e.hubTok, limits, nil); st != 200 {
		t.Fatalf("offline card limits: %d", st)
	}
	wait.For(t, 20*time.Second, "the offline card limits at the edge", func() bool {
		var s oneResp
		return e.edge.Call(t, "GET", "/api/v1/settings", e.edgeMgr, nil, &s) == 200 && s.Data["offline_card_limit"] == 100000.0
	})
	e.proxy.cut()
	wait.For(t, 10*time.Second, "the edge to see the link down", func() bool { return e.status(t, e.edge, e.edgeMgr)["connected"] == false })

	call := func(method, path, tok string, body any, want int) map[string]any {
		t.Helper()
		var r oneResp
		if st := e.edge.Call(t, method, path, tok, body, &r); st != want {
			t.Fatalf("%s %s: %d, want %d: %v", method, path, st, want, r.Data)
		}
		return r.Data
	}
	register := call("POST", "/api/v1/registers", e.edgeMgr, map[string]any{"location_id": e.location, "name": "Front till"}, 201)["id"].(string)
	drawer := call("POST", "/api/v1/drawers", e.edgeTok, map[string]any{"register_id": register, "float": map[string]any{
		"denominations": []any{map[string]any{"value": 5000, "count": 2}, map[string]any{"value": 1000, "count": 5}}}}, 201)["id"].(string)
	order := func(qty int) (string, int64) {
		o := call("POST", "/api/v1/orders", e.edgeTok, map[string]any{"location_id": e.location,
			"line_items": []any{map[string]any{"product_id": product, "quantity": qty}}}, 201)
		return o["id"].(string), int64(o["total"].(float64))
	}
	cashOrder, cash := order(2)
	tendered := (cash/1000 + 1) * 1000
	p := call("POST", "/api/v1/payments/initiate", e.edgeTok, map[string]any{"order_id": cashOrder, "amount": cash, "method": "cash",
		"tendered": tendered, "register_id": register}, 201)
	if p["change_due"] != float64(tendered-cash) {
		t.Fatalf("cash payment: %v", p)
	}
	cardOrder, card := order(1)
	if p := call("POST", "/api/v1/payments/initiate", e.edgeTok, map[string]any{"order_id": cardOrder, "amount": card, "method": "card",
		"card_number": "4242424242424242", "register_id": register}, 201); p["status"] != "captured" {
		t.Fatalf("card payment offline: %v", p)
	}
	call("POST", "/api/v1/orders/"+cashOrder+"/complete", e.edgeTok, nil, 200)
	call("POST", "/api/v1/orders/"+cardOrder+"/complete", e.edgeTok, nil, 200)
	call("POST", "/api/v1/orders/"+cashOrder+"/refund", e.edgeMgr, map[string]any{"amount": 100, "reason": "cold", "register_id": register}, 200)
	call("POST", "/api/v1/drawers/"+drawer+"/paid-out", e.edgeMgr, map[string]any{"amount": 500, "reason": "milk"}, 201)
	call("POST", "/api/v1/drawers/"+drawer+"/no-sale", e.edgeTok, map[string]any{"reason": "change for a note"}, 201)
	expected := 15000 + cash - 100 - 500
	x := call("GET", "/api/v1/drawers/"+drawer+"/x-report", e.edgeMgr, nil, 200)
	if x["expected"] != float64(expected) || x["status"] != nil {
		t.Fatalf("X report: %v, want expected %d", x, expected)
	}

	// The blind close: the count is all the cashier sends.
	z := call("POST", "/api/v1/drawers/"+drawer+"/close", e.edgeTok, map[string]any{"count": map[string]any{"amount": expected - 20}, "note": "20c short"}, 201)
	// The Z is the sum of the payments it covers: each sale once.
	var pays listResp
	e.edge.Call(t, "GET", "/api/v1/payments?location_id="+e.location+"&limit=200", e.edgeMgr, nil, &pays)
	sums := map[string]float64{}
	for _, p := range pays.Data {
		if p["order_id"] == cashOrder || p["order_id"] == cardOrder {
			sums[p["method"].(string)] += p["amount"].(float64)
		}
	}
	tenders := map[string]map[string]any{}
	for _, tt := range z["tenders"].([]any) {
		tenders[tt.(map[string]any)["method"].(string)] = tt.(map[string]any)
	}
	if z["number"] != 1.0 || z["expected"] != float64(expected) || z["over_short"] != -20.0 || z["sales"] != 2.0 || z["refunds"] != 1.0 ||
		z["cash_sales"] != sums["cash"] || tenders["card"]["sales"] != sums["card"] || sums["card"] != float64(card) ||
		z["change_given"] != float64(tendered-cash) || z["paid_out"] != 500.0 || z["no_sales"] != 1.0 || z["cash_refunds"] != 100.0 {
		t.Fatalf("Z report %v; payments by method %v", z, sums)
	}

	e.proxy.restore()
	var atHub map[string]any
	wait.For(t, 30*time.Second, "the Z report at the hub", func() bool {
		var l listResp
		if e.hub.Call(t, "GET", "/api/v1/z-reports?location_id="+e.location, e.hubTok, nil, &l) != 200 || len(l.Data) != 1 {
			return false
		}
		atHub = l.Data[0]
		return true
	})
	if !reflect.DeepEqual(atHub, z) {
		t.Fatalf("the hub's Z\n %v\ndiffers from the edge's\n %v", atHub, z)
	}
	wait.For(t, 30*time.Second, "the closed drawer at the hub", func() bool {
		var d oneResp
		return e.hub.Call(t, "GET", "/api/v1/drawers/"+drawer, e.hubTok, nil, &d) == 200 && d.Data["status"] == "closed" &&
			d.Data["z_report_id"] == z["id"]
	})
	var cs listResp
	e.hub.Call(t, "GET", "/api/v1/sync/conflicts", e.hubTok, nil, &cs)
	for _, c := range cs.Data {
		if c["kind"] == "quarantined" {
			t.Errorf("a record was quarantined: %v", c)
		}
	}
}
