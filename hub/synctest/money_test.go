package synctest

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strconv"
	"sync"
	"testing"
	"time"

	"kassa.dev/shared/node/nodetest"
	"kassa.dev/sync/wait"
)

// answer is one HTTP answer: status, headers and decoded body.
type answer struct {
	status int
	header http.Header
	body   map[string]any
}

// raw sends a JSON request and keeps the headers too (Retry-After).
func raw(t *testing.T, p *nodetest.Proc, method, path, tok string, body any) answer {
	b, _ := json.Marshal(body)
	req, _ := http.NewRequest(method, p.URL+path, bytes.NewReader(b))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", "Bearer "+tok)
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Errorf("%s %s: %v", method, path, err)
		return answer{}
	}
	defer res.Body.Close()
	data, _ := io.ReadAll(res.Body)
	a := answer{status: res.StatusCode, header: res.Header}
	json.Unmarshal(data, &a.body)
	return a
}

// atOnce sends one request to the edge and one to the hub at the same
// moment and returns their answers.
func atOnce(t *testing.T, e *env, path string, edgeTok string, edgeBody, hubBody any) (edge, hub answer) {
	var wg sync.WaitGroup
	start := make(chan struct{})
	wg.Add(2)
	go func() { defer wg.Done(); <-start; edge = raw(t, e.edge, "POST", path, edgeTok, edgeBody) }()
	go func() { defer wg.Done(); <-start; hub = raw(t, e.hub, "POST", path, e.hubTok, hubBody) }()
	close(start)
	wg.Wait()
	return edge, hub
}

// moneyPair starts an edge and a hub with a 66.00 product known to both.
func moneyPair(t *testing.T) (*env, string) {
	e := MustStartPair(t)
	var p oneResp
	if st := e.hub.Call(t, "POST", "/api/v1/catalog/products", e.hubTok, map[string]any{"name": "Hamper", "sku": "HAMPER", "base_price": 6600}, &p); st != 201 {
		t.Fatalf("product at the hub: %d", st)
	}
	id := p.Data["id"].(string)
	wait.For(t, 20*time.Second, "the product at the edge", func() bool {
		return e.edge.Call(t, "GET", "/api/v1/catalog/products/"+id, e.edgeTok, nil, nil) == 200
	})
	return e, id
}

// order reads an order at a node.
func order(t *testing.T, p *nodetest.Proc, tok, id string) map[string]any {
	var o oneResp
	if p.Call(t, "GET", "/api/v1/orders/"+id, tok, nil, &o) != 200 {
		return map[string]any{}
	}
	return o.Data
}

// oneWinner checks that of two answers exactly one is want and the other
// the problem the store gives when it runs the second after the first.
func oneWinner(t *testing.T, edge, hub answer, want int, field, message string) {
	t.Helper()
	won, lost := edge, hub
	if hub.status == want {
		won, lost = hub, edge
	}
	errs, _ := lost.body["errors"].([]any)
	if won.status != want || lost.status != 422 || len(errs) != 1 ||
		errs[0].(map[string]any)["field"] != field || errs[0].(map[string]any)["message"] != message {
		t.Fatalf("edge %d %v, hub %d %v: want one %d and one 422 (%s %s)", edge.status, edge.body, hub.status, hub.body, want, field, message)
	}
}

// TestRefundsAtEdgeAndHubAtOnceCountOnce: a 66.00 sale refunded 50.00 at
// the store and 50.00 at the hub at the same moment is refunded once:
// the hub routes its refund to the store, which runs the two one after
// the other; the second finds 16.00 left. Both nodes agree on 50.00.
func TestRefundsAtEdgeAndHubAtOnceCountOnce(t *testing.T) {
	e, product := moneyPair(t)
	id := e.sale(t, product)
	total := order(t, e.edge, e.edgeTok, id)["total"].(float64)
	wait.For(t, 20*time.Second, "the sale at the hub", func() bool { return order(t, e.hub, e.hubTok, id)["status"] == "completed" })
	refund := map[string]any{"amount": 5000, "reason": "damaged"}
	edge, hub := atOnce(t, e, "/api/v1/orders/"+id+"/refund", e.edgeMgr, refund, refund)
	oneWinner(t, edge, hub, 200, "amount", "must be at most "+itoa(total-5000))
	for _, n := range []struct {
		p   *nodetest.Proc
		tok string
	}{{e.edge, e.edgeMgr}, {e.hub, e.hubTok}} {
		wait.For(t, 20*time.Second, "refunded 50.00 once at "+n.p.URL, func() bool {
			o := order(t, n.p, n.tok, id)
			refunds, _ := o["refunds"].([]any)
			return o["refunded_total"] == float64(5000) && len(refunds) == 1 && o["status"] == "partially_refunded"
		})
	}
}

// TestFullPaymentsAtEdgeAndHubAtOncePayOnce: an open order paid in full
// at the store and at the hub at the same moment is paid once.
func TestFullPaymentsAtEdgeAndHubAtOncePayOnce(t *testing.T) {
	e, product := moneyPair(t)
	var o oneResp
	if st := e.edge.Call(t, "POST", "/api/v1/orders", e.edgeTok, map[string]any{"location_id": e.location,
		"line_items": []any{map[string]any{"product_id": product, "quantity": 1}}}, &o); st != 201 {
		t.Fatalf("order at the edge: %d", st)
	}
	id, total := o.Data["id"].(string), o.Data["total"].(float64)
	wait.For(t, 20*time.Second, "the order at the hub", func() bool { return order(t, e.hub, e.hubTok, id)["status"] == "open" })
	pay := map[string]any{"order_id": id, "amount": total, "method": "cash"}
	edge, hub := atOnce(t, e, "/api/v1/payments/initiate", e.edgeTok, pay, pay)
	oneWinner(t, edge, hub, 201, "amount", "must be at most 0")
	for _, n := range []struct {
		p   *nodetest.Proc
		tok string
	}{{e.edge, e.edgeTok}, {e.hub, e.hubTok}} {
		wait.For(t, 20*time.Second, "paid once at "+n.p.URL, func() bool {
			o := order(t, n.p, n.tok, id)
			payments, _ := o["payments"].([]any)
			return o["paid_total"] == total && len(payments) == 1
		})
	}
}

// TestHubRefusesMoneyOfAStoreCutOff: with the store's link cut, the hub
// refuses a refund, a payment, a cancel and a complete of that store's
// orders with 503 and Retry-After, and nothing changes on either side; a
// location without an edge is paid at the hub as before; once the link is
// back the hub's refund and cancel run at the store. kassa_money_operations_total counts
// each refusal and each routed operation, not the hub-local payment.
func TestHubRefusesMoneyOfAStoreCutOff(t *testing.T) {
	e, product := moneyPair(t)
	ops := func(op, outcome string) float64 {
		return metricValue(metricsText(t, e.hub.URL), `kassa_money_operations_total{operation="`+op+`",outcome="`+outcome+`"}`)
	}
	for _, op := range []string{"payment.initiate", "payment.capture", "payment.void", "order.complete", "order.refund", "order.update"} {
		for _, outcome := range []string{"routed", "refused", "unanswered"} {
			if v := ops(op, outcome); v != 0 {
				t.Fatalf("%s %s of a new hub: %v, want 0", op, outcome, v)
			}
		}
	}
	sold := e.sale(t, product)
	var o oneResp
	e.edge.Call(t, "POST", "/api/v1/orders", e.edgeTok, map[string]any{"location_id": e.location,
		"line_items": []any{map[string]any{"product_id": product, "quantity": 1}}}, &o)
	open := o.Data["id"].(string)
	wait.For(t, 20*time.Second, "both orders at the hub", func() bool {
		return order(t, e.hub, e.hubTok, sold)["status"] == "completed" && order(t, e.hub, e.hubTok, open)["status"] == "open"
	})
	e.proxy.cut()
	wait.For(t, 10*time.Second, "the edge to see the link down", func() bool { return e.status(t, e.edge, e.edgeMgr)["connected"] == false })
	for _, c := range []struct {
		method, path string
		body         any
	}{
		{"POST", "/api/v1/orders/" + sold + "/refund", map[string]any{"amount": 1000, "reason": "cut off"}},
		{"POST", "/api/v1/payments/initiate", map[string]any{"order_id": open, "amount": 100, "method": "cash"}},
		{"PATCH", "/api/v1/orders/" + open, map[string]any{"status": "cancelled"}},
		{"POST", "/api/v1/orders/" + open + "/complete", nil},
	} {
		a := raw(t, e.hub, c.method, c.path, e.hubTok, c.body)
		if a.status != 503 || a.body["type"] != "https://kassa.dev/problems/unavailable" || a.header.Get("Retry-After") == "" ||
			a.header.Get("Content-Type") != "application/problem+json" {
			t.Fatalf("%s while the store is cut off: %d %v %v", c.path, a.status, a.header, a.body)
		}
	}
	for _, op := range []string{"order.refund", "payment.initiate", "order.update", "order.complete"} {
		if ops(op, "refused") != 1 || ops(op, "routed") != 0 {
			t.Fatalf("%s refused %v, routed %v while the store is cut off; want 1, 0", op, ops(op, "refused"), ops(op, "routed"))
		}
	}
	// A location with no edge is the hub's own.
	var loc, local oneResp
	if st := e.hub.Call(t, "POST", "/api/v1/locations", e.hubTok, map[string]any{"name": "Pop-up", "timezone": "Australia/Sydney"}, &loc); st != 201 {
		t.Fatalf("location: %d", st)
	}
	e.hub.Call(t, "POST", "/api/v1/orders", e.hubTok, map[string]any{"location_id": loc.Data["id"],
		"line_items": []any{map[string]any{"product_id": product, "quantity": 1}}}, &local)
	if st := e.hub.Call(t, "POST", "/api/v1/payments/initiate", e.hubTok, map[string]any{"order_id": local.Data["id"],
		"amount": local.Data["total"], "method": "cash"}, nil); st != 201 {
		t.Fatalf("payment at the hub for a location without an edge: %d", st)
	}
	if ops("payment.initiate", "refused") != 1 || ops("payment.initiate", "routed") != 0 {
		t.Fatalf("a hub-local payment was counted as a store's")
	}
	e.proxy.restore()
	wait.For(t, 20*time.Second, "the edge to verify after reconnect", func() bool {
		st := e.status(t, e.edge, e.edgeMgr)
		return st["connected"] == true && st["last_verified"] != nil && st["pending_up"] == float64(0)
	})
	for _, n := range []struct {
		p   *nodetest.Proc
		tok string
	}{{e.edge, e.edgeMgr}, {e.hub, e.hubTok}} {
		if s, op := order(t, n.p, n.tok, sold), order(t, n.p, n.tok, open); s["refunded_total"] != float64(0) || op["paid_total"] != float64(0) || op["status"] != "open" {
			t.Fatalf("refused operations changed %s: refunded %v, paid %v, %v", n.p.URL, s["refunded_total"], op["paid_total"], op["status"])
		}
	}
	wait.For(t, 20*time.Second, "the hub's refund to run at the store", func() bool {
		return raw(t, e.hub, "POST", "/api/v1/orders/"+sold+"/refund", e.hubTok, map[string]any{"amount": 1000, "reason": "back"}).status == 200
	})
	wait.For(t, 20*time.Second, "the refund at the edge", func() bool { return order(t, e.edge, e.edgeMgr, sold)["refunded_total"] == float64(1000) })
	if ops("order.refund", "routed") < 1 {
		t.Fatalf("the routed refund is not counted: %v", ops("order.refund", "routed"))
	}
	if a := raw(t, e.hub, "PATCH", "/api/v1/orders/"+open, e.hubTok, map[string]any{"status": "cancelled", "notes": "no show"}); a.status != 200 ||
		a.body["data"].(map[string]any)["status"] != "cancelled" || a.body["data"].(map[string]any)["notes"] != "no show" {
		t.Fatalf("cancel at the hub once the store is back: %d %v", a.status, a.body)
	}
	if o := order(t, e.hub, e.hubTok, open); o["status"] != "cancelled" {
		t.Fatalf("the hub's copy right after the cancel: %v", o["status"])
	}
	if ops("order.update", "routed") != 1 || ops("order.update", "refused") != 1 {
		t.Fatalf("cancel routed %v, refused %v; want 1, 1", ops("order.update", "routed"), ops("order.update", "refused"))
	}
	wait.For(t, 20*time.Second, "the cancel at the edge", func() bool { return order(t, e.edge, e.edgeMgr, open)["status"] == "cancelled" })
}

func itoa(f float64) string { return strconv.FormatFloat(f, 'f', 0, 64) }

// TestOnlineOrderAtTheHubIsPaidAndCompletedAtOnce: a partner creates an
// order for pickup at the store, pays it and completes it at the hub, one
// call right after the other. The payment runs at the store, which may
// not have pulled the order yet (it catches up first), and the hub
// answers once the store's payment reached its own copy, so the complete
// that follows sees the order paid.
func TestOnlineOrderAtTheHubIsPaidAndCompletedAtOnce(t *testing.T) {
	e, product := moneyPair(t)
	for i := range 3 {
		var o oneResp
		if st := e.hub.Call(t, "POST", "/api/v1/orders", e.hubTok, map[string]any{"location_id": e.location, "channel": "online",
			"line_items": []any{map[string]any{"product_id": product, "quantity": 1 + i}}}, &o); st != 201 {
			t.Fatalf("online order: %d", st)
		}
		id := o.Data["id"].(string)
		if a := raw(t, e.hub, "POST", "/api/v1/payments/initiate", e.hubTok, map[string]any{"order_id": id, "amount": o.Data["total"], "method": "card",
			"card_number": "4242424242424242"}); a.status != 201 || a.body["data"].(map[string]any)["status"] != "captured" {
			t.Fatalf("pay at the hub right after creating: %d %v", a.status, a.body)
		}
		if a := raw(t, e.hub, "POST", "/api/v1/orders/"+id+"/complete", e.hubTok, nil); a.status != 200 {
			t.Fatalf("complete at the hub right after paying: %d %v", a.status, a.body)
		}
		wait.For(t, 20*time.Second, "the completed order at the store", func() bool {
			o := order(t, e.edge, e.edgeMgr, id)
			return o["status"] == "completed" && o["paid_total"] == o["total"]
		})
	}
}

// TestOrderPaidAtTwoStoresOfflineIsAListedConflict: the backstop. Two
// edges of one location, both cut off, each take the full amount of the
// same open order; once they are back every node holds both payments
// and the hub lists the order as overpaid, with both sides' totals.
func TestOrderPaidAtTwoStoresOfflineIsAListedConflict(t *testing.T) {
	e, product := moneyPair(t)
	b, bProxy, bTok := e.addEdge(t)
	var o oneResp
	if st := e.edge.Call(t, "POST", "/api/v1/orders", e.edgeTok, map[string]any{"location_id": e.location,
		"line_items": []any{map[string]any{"product_id": product, "quantity": 1}}}, &o); st != 201 {
		t.Fatalf("order: %d", st)
	}
	id, total := o.Data["id"].(string), o.Data["total"].(float64)
	wait.For(t, 20*time.Second, "the order at the second edge", func() bool { return order(t, b, bTok, id)["status"] == "open" })
	e.proxy.cut()
	bProxy.cut()
	wait.For(t, 10*time.Second, "both edges to see the link down", func() bool {
		return e.status(t, e.edge, e.edgeMgr)["connected"] == false && e.status(t, b, bTok)["connected"] == false
	})
	for _, n := range []struct {
		p   *nodetest.Proc
		tok string
	}{{e.edge, e.edgeTok}, {b, bTok}} {
		if st := n.p.Call(t, "POST", "/api/v1/payments/initiate", n.tok, map[string]any{"order_id": id, "amount": total, "method": "cash"}, nil); st != 201 {
			t.Fatalf("offline payment: %d", st)
		}
	}
	e.proxy.restore()
	bProxy.restore()
	wait.For(t, 30*time.Second, "both payments everywhere", func() bool {
		return order(t, e.hub, e.hubTok, id)["paid_total"] == 2*total && order(t, e.edge, e.edgeMgr, id)["paid_total"] == 2*total &&
			order(t, b, bTok, id)["paid_total"] == 2*total
	})
	var cs listResp
	e.hub.Call(t, "GET", "/api/v1/sync/conflicts?limit=200", e.hubTok, nil, &cs)
	var found []map[string]any
	for _, c := range cs.Data {
		if c["kind"] == "overpaid" && c["entity_id"] == id {
			found = append(found, c)
		}
	}
	if len(found) != 1 {
		t.Fatalf("overpaid conflicts of the order at the hub: %v (all: %v)", found, cs.Data)
	}
	local, _ := found[0]["local"].(map[string]any)
	remote, _ := found[0]["remote"].(map[string]any)
	if local["paid_total"] != total || remote["paid_total"] != 2*total || remote["total"] != total {
		t.Fatalf("conflict sides: %v / %v", local, remote)
	}
}

// hubSale makes an online order of qty hampers at the hub for the store's
// location and pays it by card at the hub (the payment runs at the
// store), as a partner's app does; it returns the order and its payment.
func hubSale(t *testing.T, e *env, product string, qty int) (order, payment string, total float64) {
	t.Helper()
	var o oneResp
	if st := e.hub.Call(t, "POST", "/api/v1/orders", e.hubTok, map[string]any{"location_id": e.location, "channel": "online",
		"line_items": []any{map[string]any{"product_id": product, "quantity": qty}}}, &o); st != 201 {
		t.Fatalf("online order at the hub: %d %v", st, o.Data)
	}
	order, total = o.Data["id"].(string), o.Data["total"].(float64)
	a := raw(t, e.hub, "POST", "/api/v1/payments/initiate", e.hubTok, map[string]any{"order_id": order, "amount": total,
		"method": "card", "card_number": "4242424242424242"})
	if a.status != 201 || a.body["data"].(map[string]any)["status"] != "captured" {
		t.Fatalf("card payment at the hub: %d %v", a.status, a.body)
	}
	return order, a.body["data"].(map[string]any)["id"].(string), total
}

// stocked counts n of a product at the store's location at the hub and
// waits until the store holds the count, so that sales of it are not
// oversold conflicts.
func stocked(t *testing.T, e *env, product string, n int) {
	t.Helper()
	if st := e.hub.Call(t, "POST", "/api/v1/inventory/stock/adjust", e.hubTok, map[string]any{"location_id": e.location,
		"product_id": product, "reason": "count", "quantity": n}, nil); st != 200 {
		t.Fatalf("stock count at the hub: %d", st)
	}
	wait.For(t, 20*time.Second, "the count at the store", func() bool {
		var l listResp
		e.edge.Call(t, "GET", "/api/v1/inventory/stock?location_id="+e.location+"&product_id="+product, e.edgeMgr, nil, &l)
		return len(l.Data) == 1 && l.Data[0]["on_hand"] == float64(n)
	})
}

// money is what a node holds of an order's money: its status, totals and
// each payment's status and refunded amount, and its refunds' amounts.
func money(o map[string]any) string {
	s := fmt.Sprintf("%v paid %v refunded %v", o["status"], o["paid_total"], o["refunded_total"])
	payments, _ := o["payments"].([]any)
	for _, p := range payments {
		p := p.(map[string]any)
		s += fmt.Sprintf("; payment %v %v %v refunded %v", p["id"], p["status"], p["amount"], p["refunded_amount"])
	}
	refunds, _ := o["refunds"].([]any)
	amounts := make([]float64, 0, len(refunds))
	for _, r := range refunds {
		amounts = append(amounts, r.(map[string]any)["amount"].(float64))
	}
	slices.Sort(amounts)
	return s + fmt.Sprintf("; refunds %v", amounts)
}

// agreed waits until the hub's copy of an order holds the store's money
// with nothing left to push, and fails on any conflict the hub listed
// (a quarantined change ends the wait at once). It returns the order as
// both hold it.
func agreed(t *testing.T, e *env, id string) map[string]any {
	t.Helper()
	var edge, hub map[string]any
	var conflicts listResp
	wait.For(t, 30*time.Second, "the hub and the store to agree on the order", func() bool {
		edge, hub = order(t, e.edge, e.edgeMgr, id), order(t, e.hub, e.hubTok, id)
		e.hub.Call(t, "GET", "/api/v1/sync/conflicts", e.hubTok, nil, &conflicts)
		return len(conflicts.Data) > 0 || money(edge) == money(hub) && e.status(t, e.edge, e.edgeMgr)["pending_up"] == float64(0)
	})
	if len(conflicts.Data) > 0 {
		t.Fatalf("the hub listed conflicts: %v\nstore: %s\nhub:   %s", conflicts.Data, money(edge), money(hub))
	}
	return edge
}

// TestARefundAtTheHubRightAfterTheCompleteRunsAtTheStore: a partner's
// app pays, completes and refunds an order of the store at the hub, each
// call right after the other. The complete runs at the store like the
// payment and the refund, so the store holds the completion when the
// refund reaches it: the refund is 200 (not 409 "order is open"), and
// hub and store agree on the money.
func TestARefundAtTheHubRightAfterTheCompleteRunsAtTheStore(t *testing.T) {
	e, product := moneyPair(t)
	stocked(t, e, product, 10)
	for i := range 3 {
		id, payment, total := hubSale(t, e, product, 1+i)
		if a := raw(t, e.hub, "POST", "/api/v1/orders/"+id+"/complete", e.hubTok, nil); a.status != 200 ||
			a.body["data"].(map[string]any)["status"] != "completed" {
			t.Fatalf("complete at the hub: %d %v", a.status, a.body)
		}
		a := raw(t, e.hub, "POST", "/api/v1/orders/"+id+"/refund", e.hubTok, map[string]any{"amount": 2000, "reason": "late"})
		if a.status != 200 {
			t.Fatalf("refund at the hub right after its complete: %d %v", a.status, a.body)
		}
		want := fmt.Sprintf("partially_refunded paid %v refunded 2000; payment %s partially_refunded %v refunded 2000; refunds [2000]", total, payment, total)
		if got := money(a.body["data"].(map[string]any)); got != want {
			t.Fatalf("the refund's answer: %s, want %s", got, want)
		}
		if got := money(agreed(t, e, id)); got != want {
			t.Fatalf("after sync: %s, want %s", got, want)
		}
	}
}

// TestAVoidAtTheHubRightAfterTheCompleteIsRefused: the captured payment
// of an order the hub has just completed cannot be voided at the hub:
// 409 as the store answers it (refund the order instead), and nothing is
// voided at either node.
func TestAVoidAtTheHubRightAfterTheCompleteIsRefused(t *testing.T) {
	e, product := moneyPair(t)
	stocked(t, e, product, 10)
	for i := range 3 {
		id, payment, total := hubSale(t, e, product, 1+i)
		if st := e.hub.Call(t, "POST", "/api/v1/orders/"+id+"/complete", e.hubTok, nil, nil); st != 200 {
			t.Fatalf("complete at the hub: %d", st)
		}
		a := raw(t, e.hub, "POST", "/api/v1/payments/"+payment+"/void", e.hubTok, nil)
		if a.status != 409 || a.body["type"] != "https://kassa.dev/problems/conflict" ||
			a.body["detail"] != "payment "+payment+" belongs to a completed order; refund the order instead" {
			t.Fatalf("void at the hub of a completed sale's payment: %d %v", a.status, a.body)
		}
		want := fmt.Sprintf("completed paid %v refunded 0; payment %s captured %v refunded 0; refunds []", total, payment, total)
		if got := money(agreed(t, e, id)); got != want {
			t.Fatalf("after the refused void: %s, want %s", got, want)
		}
	}
}

// TestEightRefundsAtTheHubRightAfterTheCompleteRefundOnlyWhatWasPaid:
// eight refunds of 10.00 sent at once to the hub right after it
// completed a 66.00 card sale all run at the store, one after the other:
// six are 200, the other two 422 (60.00 refunded, 6.00 left), and hub
// and store agree, nothing quarantined.
func TestEightRefundsAtTheHubRightAfterTheCompleteRefundOnlyWhatWasPaid(t *testing.T) {
	e, product := moneyPair(t)
	stocked(t, e, product, 10)
	id, payment, total := hubSale(t, e, product, 1)
	if st := e.hub.Call(t, "POST", "/api/v1/orders/"+id+"/complete", e.hubTok, nil, nil); st != 200 {
		t.Fatalf("complete at the hub: %d", st)
	}
	answers := make([]answer, 8)
	var wg sync.WaitGroup
	start := make(chan struct{})
	for i := range answers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			answers[i] = raw(t, e.hub, "POST", "/api/v1/orders/"+id+"/refund", e.hubTok, map[string]any{"amount": 1000, "reason": "batch"})
		}()
	}
	close(start)
	wg.Wait()
	count := map[int]int{}
	for _, a := range answers {
		count[a.status]++
		if a.status == 422 {
			errs, _ := a.body["errors"].([]any)
			if len(errs) != 1 || errs[0].(map[string]any)["field"] != "amount" || errs[0].(map[string]any)["message"] != "must be at most 600" {
				t.Errorf("a refused refund: %v", a.body)
			}
		}
	}
	if count[200] != 6 || count[422] != 2 {
		t.Fatalf("eight refunds of 10.00 on a 66.00 sale: %v, want six 200 and two 422", count)
	}
	want := fmt.Sprintf("partially_refunded paid %v refunded 6000; payment %s partially_refunded %v refunded 6000; refunds [1000 1000 1000 1000 1000 1000]", total, payment, total)
	if got := money(agreed(t, e, id)); got != want {
		t.Fatalf("after sync: %s, want %s", got, want)
	}
}

// TestACustomerAttachedAtTheHubEarnsAtTheStoresComplete: a partner's app
// makes a customer at the hub, attaches them to a paid order of the store,
// enrols them in the loyalty program and completes the order, one call
// right after the other. The attach and the enrolment are the hub's
// writes; the complete runs at the store, which applies the hub's log
// before it runs a routed operation, so its completion credits the
// customer, and hub and store agree on the points.
func TestACustomerAttachedAtTheHubEarnsAtTheStoresComplete(t *testing.T) {
	e, product := moneyPair(t)
	stocked(t, e, product, 10)
	if st := e.hub.Call(t, "POST", "/api/v1/loyalty/programs", e.hubTok, map[string]any{"name": "Beans", "points_per_unit": 1, "redemption_value": 10}, nil); st != 201 {
		t.Fatalf("program: %d", st)
	}
	for i := range 3 {
		id, _, _ := hubSale(t, e, product, 1+i)
		var cust, acct oneResp
		e.hub.Call(t, "POST", "/api/v1/customers", e.hubTok, map[string]any{"first_name": "Kim", "email": fmt.Sprintf("kim%d@x.test", i)}, &cust)
		customer := cust.Data["id"].(string)
		if a := raw(t, e.hub, "PATCH", "/api/v1/orders/"+id, e.hubTok, map[string]any{"customer_id": customer}); a.status != 200 {
			t.Fatalf("attach the customer at the hub right after creating it: %d %v", a.status, a.body)
		}
		if st := e.hub.Call(t, "POST", "/api/v1/loyalty/accounts", e.hubTok, map[string]any{"customer_id": customer}, &acct); st != 201 {
			t.Fatalf("enrol: %d %v", st, acct)
		}
		a := raw(t, e.hub, "POST", "/api/v1/orders/"+id+"/complete", e.hubTok, nil)
		if a.status != 200 {
			t.Fatalf("complete at the hub: %d %v", a.status, a.body)
		}
		earned := a.body["data"].(map[string]any)["loyalty_points_earned"]
		if earned == nil || earned.(float64) <= 0 || a.body["data"].(map[string]any)["customer_id"] != customer {
			t.Fatalf("the completion credited %v to %v, want points to %s", earned, a.body["data"].(map[string]any)["customer_id"], customer)
		}
		agreed(t, e, id)
		account := acct.Data["id"].(string)
		for _, n := range []struct {
			p   *nodetest.Proc
			tok string
		}{{e.edge, e.edgeMgr}, {e.hub, e.hubTok}} {
			wait.For(t, 20*time.Second, "the points at "+n.p.URL, func() bool {
				var got oneResp
				n.p.Call(t, "GET", "/api/v1/loyalty/accounts/"+account, n.tok, nil, &got)
				return got.Data["points_balance"] == earned && order(t, n.p, n.tok, id)["loyalty_points_earned"] == earned
			})
		}
	}
}
