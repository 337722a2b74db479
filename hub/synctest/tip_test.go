package synctest

import (
	"maps"
	"reflect"
	"testing"
	"time"

	"kassa.dev/shared/demo"
	"kassa.dev/shared/node"
	"kassa.dev/sync/change"
	"kassa.dev/sync/wait"
)

// TestTipsAtAnOfflineEdgeAreAdmittedAndForgedTipsRefused (docs/tips.md):
// with the hub out of reach a store takes a cash payment with a tip at its
// till, a card whose customer tips on the terminal (store-and-forward),
// refunds the cash sale in full (its tip goes back), sells with a
// discount a manager approved, and closes its drawer. When the link comes
// back the hub holds the same tips, the same Z (cash tips in its expected
// cash), the order's approved_by and the same tips report, and nothing
// was quarantined. Forged records are refused: a tip on a payment of
// another store, a tip credited to someone who did not take the payment,
// a tip beyond tip_max_percent, a tip's amount changed later, and an
// approved discount whose approver is a cashier.
func TestTipsAtAnOfflineEdgeAreAdmittedAndForgedTipsRefused(t *testing.T) {
	e := MustStartPair(t)
	hub := hubState{e: e, tok: e.hubTok}
	wait.For(t, 20*time.Second, "the demo catalog at the edge", func() bool { return len(e.products(t, e.edge, e.edgeTok)) == 15 })
	product := e.products(t, e.edge, e.edgeTok)[2]["id"].(string)
	if st := e.hub.Call(t, "PATCH", "/api/v1/settings", e.hubTok, map[string]any{"offline_card_limit": 100000, "offline_card_daily_limit": 1000000}, nil); st != 200 {
		t.Fatalf("offline card limits: %d", st)
	}
	wait.For(t, 20*time.Second, "the offline card limits at the edge", func() bool {
		var s oneResp
		return e.edge.Call(t, "GET", "/api/v1/settings", e.edgeMgr, nil, &s) == 200 && s.Data["offline_card_limit"] == 100000.0
	})
	cashierID := hubState{e: e, tok: e.hub.Login(t, "cashier@demo.test", demo.Password)}.get(t, "/api/v1/auth/me")["id"].(string)
	managerID := hubState{e: e, tok: e.hub.Login(t, "manager@demo.test", demo.Password)}.get(t, "/api/v1/auth/me")["id"].(string)

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
	drawer := call("POST", "/api/v1/drawers", e.edgeTok, map[string]any{"register_id": register, "float": map[string]any{"amount": 10000}}, 201)["id"].(string)
	order := func(body map[string]any, tok string) (string, int64) {
		body["location_id"], body["line_items"] = e.location, []any{map[string]any{"product_id": product, "quantity": 2}}
		o := call("POST", "/api/v1/orders", tok, body, 201)
		return o["id"].(string), int64(o["total"].(float64))
	}
	pay := func(body map[string]any) map[string]any {
		body["register_id"] = register
		return call("POST", "/api/v1/payments/initiate", e.edgeTok, body, 201)
	}
	cashOrder, cash := order(map[string]any{}, e.edgeTok)
	cashPay := pay(map[string]any{"order_id": cashOrder, "amount": cash, "method": "cash", "tendered": cash + 1000, "tip": 200})
	cardOrder, card := order(map[string]any{}, e.edgeTok)
	cardPay := pay(map[string]any{"order_id": cardOrder, "amount": card, "method": "card", "card_number": "4000000000001505"})
	if cashPay["tip"] != 200.0 || cardPay["tip"] != float64((card*10+50)/100) || cardPay["offline"] != true {
		t.Fatalf("offline tips: cash %v, card %v", cashPay, cardPay)
	}
	call("POST", "/api/v1/orders/"+cashOrder+"/complete", e.edgeTok, nil, 200)
	call("POST", "/api/v1/orders/"+cardOrder+"/complete", e.edgeTok, nil, 200)
	call("POST", "/api/v1/orders/"+cashOrder+"/refund", e.edgeMgr, map[string]any{"reason": "wrong order", "register_id": register}, 200)
	approved, _ := order(map[string]any{"discount": map[string]any{"type": "percent", "value": 1000}, "approval_token": e.edgeMgr}, e.edgeTok)
	z := call("POST", "/api/v1/drawers/"+drawer+"/close", e.edgeTok, map[string]any{"count": map[string]any{"amount": 10000}}, 201)
	if z["expected"] != 10000.0 || z["cash_tips"] != 200.0 || z["cash_tips_refunded"] != 200.0 || z["over_short"] != 0.0 {
		t.Fatalf("the store's Z: %v", z)
	}
	var edgeReport listResp
	if st := e.edge.Call(t, "GET", "/api/v1/reports/tips?group_by=staff", e.edgeMgr, nil, &edgeReport); st != 200 || len(edgeReport.Data) != 1 ||
		edgeReport.Data[0]["net"] != cardPay["tip"] || edgeReport.Data[0]["refunded"] != 200.0 {
		t.Fatalf("the store's tips by staff: %d %v", st, edgeReport.Data)
	}

	e.proxy.restore()
	waitPushed(t, e)
	wait.For(t, 30*time.Second, "the Z and the order's approver at the hub", func() bool {
		var hz, ho oneResp
		return e.hub.Call(t, "GET", "/api/v1/z-reports/"+z["id"].(string), e.hubTok, nil, &hz) == 200 &&
			e.hub.Call(t, "GET", "/api/v1/orders/"+approved, e.hubTok, nil, &ho) == 200 && ho.Data["approved_by"] == managerID
	})
	noQuarantine(t, e)
	if hz := hub.get(t, "/api/v1/z-reports/"+z["id"].(string)); !reflect.DeepEqual(hz["cash_tips"], z["cash_tips"]) || hz["expected"] != z["expected"] || hz["tips"] != z["tips"] {
		t.Fatalf("the hub's Z %v, the store's %v", hz, z)
	}
	var hubReport listResp
	e.hub.Call(t, "GET", "/api/v1/reports/tips?group_by=staff&location_id="+e.location, e.hubTok, nil, &hubReport)
	if !reflect.DeepEqual(hubReport.Data, edgeReport.Data) {
		t.Fatalf("tips by staff: hub %v, store %v", hubReport.Data, edgeReport.Data)
	}

	// Forged records, pushed by a node enrolled at the store.
	tips := hub.list(t, "/api/v1/tips?payment_id="+cardPay["id"].(string))
	if len(tips) != 1 || tips[0]["source"] != "terminal" || tips[0]["staff_id"] != cashierID {
		t.Fatalf("the card's tip at the hub: %v", tips)
	}
	written, err := node.ReadChanges(t.Context(), e.edgeDir, "tip", tips[0]["id"].(string))
	if err != nil || len(written) == 0 {
		t.Fatalf("the store's tip record: %v %v", written, err)
	}
	// A payment of another store: a location of the hub's, paid there.
	var loc, o oneResp
	e.hub.Call(t, "POST", "/api/v1/locations", e.hubTok, map[string]any{"name": "Elsewhere", "timezone": "UTC"}, &loc)
	e.hub.Call(t, "POST", "/api/v1/orders", e.hubTok, map[string]any{"location_id": loc.Data["id"],
		"line_items": []any{map[string]any{"product_id": product, "quantity": 1}}}, &o)
	var other oneResp
	if st := e.hub.Call(t, "POST", "/api/v1/payments/initiate", e.hubTok, map[string]any{"order_id": o.Data["id"], "amount": o.Data["total"], "method": "cash"}, &other); st != 201 {
		t.Fatalf("the other store's payment: %d %v", st, other)
	}
	f := e.mustForge(t, e.location)
	forged := func(edit map[string]any) change.Change {
		fields := maps.Clone(written[0].Fields)
		id := newID()
		fields["id"] = id
		maps.Copy(fields, edit)
		return f.change("tip", id, change.OpInsert, e.location, cashierID, fields)
	}
	// The cash order's payment, refunded with its tip: a fresh tip on it is
	// on a payment of this store but credited to the manager.
	cases := []struct {
		name   string
		change change.Change
		reason string
	}{
		{"on another store's payment", forged(map[string]any{"payment_id": other.Data["id"], "order_id": o.Data["id"], "method": "cash", "source": "till"}), "refused_scope"},
		{"credited to someone else", forged(map[string]any{"payment_id": cashPay["id"], "order_id": cashOrder, "method": "cash", "source": "till", "staff_id": managerID}), "refused_actor"},
		{"beyond tip_max_percent", forged(map[string]any{"payment_id": cashPay["id"], "order_id": cashOrder, "method": "cash", "source": "till", "amount": cash + 1}), "refused_value"},
		{"changed later", f.change("tip", tips[0]["id"].(string), change.OpUpdate, e.location, cashierID, map[string]any{"amount": 1}), "refused_field"},
	}
	// And an order whose discount a cashier "approved".
	orders, err := node.ReadChanges(t.Context(), e.edgeDir, "order", approved)
	if err != nil || len(orders) == 0 {
		t.Fatalf("the approved order's records: %v %v", orders, err)
	}
	lines := hub.get(t, "/api/v1/orders/"+approved)["line_items"].([]any)
	lineRecs, _ := node.ReadChanges(t.Context(), e.edgeDir, "order_line", lines[0].(map[string]any)["id"].(string))
	ofields := maps.Clone(orders[0].Fields)
	oid := newID()
	num := ofields["number"].(string)
	ofields["id"], ofields["approved_by"], ofields["number"] = oid, cashierID, num[:len(num)-5]+"99999"
	lfields := maps.Clone(lineRecs[0].Fields)
	lid := newID()
	lfields["id"], lfields["order_id"] = lid, oid
	forgedLine := f.change("order_line", lid, change.OpInsert, e.location, cashierID, lfields)
	batch := []change.Change{f.change("order", oid, change.OpInsert, e.location, cashierID, ofields), forgedLine}
	for _, c := range cases {
		batch = append(batch, c.change)
	}
	// The order's row is taken alone; its discount is replayed once its
	// lines come, and the line that makes it refused (checkDiscount).
	if rep := f.push(t, batch...); rep.Error != "" || rep.Applied != 1 {
		t.Fatalf("the push: %+v, want only the bare order row applied", rep)
	}
	cases = append(cases, struct {
		name   string
		change change.Change
		reason string
	}{"a discount a cashier approved", forgedLine, "refused_actor"})
	byChange := map[string]map[string]any{}
	for _, c := range hub.list(t, "/api/v1/sync/conflicts?limit=200") {
		if c["kind"] == "quarantined" {
			byChange[c["remote"].(map[string]any)["id"].(string)] = c
		}
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			q, ok := byChange[c.change.ID]
			if !ok {
				t.Fatalf("not quarantined")
			}
			if got := q["local"].(map[string]any)["reason"]; got != c.reason {
				t.Errorf("reason = %v, want %s (%v)", got, c.reason, q["local"].(map[string]any)["error"])
			}
		})
	}
	if got := hub.get(t, "/api/v1/tips/"+tips[0]["id"].(string))["amount"]; got != cardPay["tip"] {
		t.Fatalf("the tip's amount at the hub is now %v", got)
	}
}
