package synctest

import (
	"fmt"
	"testing"
	"time"

	"kassa.dev/sync/wait"
)

// TestAnOfflineEdgeReportsItsSalesAndTheHubCountsThemOnce (docs/reports.md):
// one sale made online; then, with the hub out of reach, the store sells
// three times (one split over two tenders) and refunds part of one. The
// edge's sales and payments reports answer offline and include them, to
// the cent, as sums of the orders themselves; the hub's do not yet. When
// the link comes back and the edge has nothing left to send, the hub's
// reports for the store equal the edge's figure for figure: each offline
// sale counted once.
func TestAnOfflineEdgeReportsItsSalesAndTheHubCountsThemOnce(t *testing.T) {
	e := MustStartPair(t)
	wait.For(t, 20*time.Second, "the demo catalog at the edge", func() bool { return len(e.products(t, e.edge, e.edgeTok)) == 15 })
	products := e.products(t, e.edge, e.edgeTok)
	now := time.Now().UTC()
	q := fmt.Sprintf("?date_from=%s&date_to=%s&location_id=%s", now.AddDate(0, 0, -2).Format(time.DateOnly),
		now.AddDate(0, 0, 2).Format(time.DateOnly), e.location)
	online := e.sale(t, products[0]["id"].(string))
	settled := func() bool {
		st := e.status(t, e.edge, e.edgeMgr)
		return st["connected"] == true && st["pending_up"] == float64(0)
	}
	wait.For(t, 30*time.Second, "the online sale at the hub", func() bool {
		var o oneResp
		return settled() && e.hub.Call(t, "GET", "/api/v1/orders/"+online, e.hubTok, nil, &o) == 200 && o.Data["status"] == "completed"
	})
	hubBefore := repTotals(t, e, "hub", q)
	if hubBefore.orders != 1 || hubBefore != repTotals(t, e, "edge", q) {
		t.Fatalf("before the cut: hub %v, edge %v; want the one online sale at both", hubBefore, repTotals(t, e, "edge", q))
	}

	e.proxy.cut()
	wait.For(t, 10*time.Second, "the edge to see the link down", func() bool { return e.status(t, e.edge, e.edgeMgr)["connected"] == false })
	want := hubBefore
	var offline []string
	for i, p := range products[1:4] {
		var o oneResp
		if st := e.edge.Call(t, "POST", "/api/v1/orders", e.edgeTok, map[string]any{"location_id": e.location,
			"line_items": []any{map[string]any{"product_id": p["id"], "quantity": 1 + i}}}, &o); st != 201 {
			t.Fatalf("order offline: %d %v", st, o.Data)
		}
		id, total := o.Data["id"].(string), int64(o.Data["total"].(float64))
		first := total
		if i == 1 {
			first = total / 3
		}
		for _, pay := range []map[string]any{{"method": "cash", "amount": first}, {"method": "card", "amount": total - first, "card_number": "4242424242424242"}} {
			if pay["amount"].(int64) == 0 {
				continue
			}
			pay["order_id"] = id
			if st := e.edge.Call(t, "POST", "/api/v1/payments/initiate", e.edgeTok, pay, nil); st != 201 {
				t.Fatalf("pay %v offline: %d", pay, st)
			}
		}
		if st := e.edge.Call(t, "POST", "/api/v1/orders/"+id+"/complete", e.edgeTok, nil, nil); st != 200 {
			t.Fatalf("complete offline: %d", st)
		}
		offline = append(offline, id)
		want.orders++
		want.sales += total
		want.net += total
	}
	if st := e.edge.Call(t, "POST", "/api/v1/orders/"+offline[0]+"/refund", e.edgeMgr, map[string]any{"amount": 150, "reason": "spilt"}, nil); st != 200 {
		t.Fatalf("refund offline: %d", st)
	}
	want.refunds += 150
	want.net -= 150

	atEdge := repTotals(t, e, "edge", q)
	if atEdge.orders != want.orders || atEdge.sales != want.sales || atEdge.refunds != want.refunds || atEdge.net != want.net {
		t.Fatalf("the offline edge reports %v; the orders sum to %v", atEdge, want)
	}
	if got := repTotals(t, e, "hub", q); got != hubBefore {
		t.Fatalf("the hub reports %v while the edge is cut off; want %v", got, hubBefore)
	}

	e.proxy.restore()
	wait.For(t, 60*time.Second, "the edge's offline sales in the hub's report", func() bool {
		return settled() && repTotals(t, e, "hub", q).orders == want.orders
	})
	for _, path := range []string{"/reports/sales" + q + "&group_by=day", "/reports/payments" + q + "&group_by=day", "/reports/tax" + q} {
		hub, edge := repList(t, e, "hub", path), repList(t, e, "edge", path)
		if fmt.Sprint(hub) != fmt.Sprint(edge) {
			t.Errorf("%s after reconnect:\nhub  %v\nedge %v", path, hub, edge)
		}
	}
	if got := repTotals(t, e, "hub", q); got != atEdge {
		t.Fatalf("after reconnect the hub reports %v; the edge %v", got, atEdge)
	}
}

// repList is a report's rows at the hub (its owner) or the edge (its manager).
func repList(t *testing.T, e *env, at, path string) []map[string]any {
	t.Helper()
	p, tok := e.hub, e.hubTok
	if at == "edge" {
		p, tok = e.edge, e.edgeMgr
	}
	var l listResp
	if st := p.Call(t, "GET", "/api/v1"+path, tok, nil, &l); st != 200 {
		t.Fatalf("%s at the %s: %d", path, at, st)
	}
	return l.Data
}

// repSums are a sales report's totals.
type repSums struct{ orders, gross, tax, sales, refunds, net int64 }

// repTotals sums the sales report by day over q's days.
func repTotals(t *testing.T, e *env, at, q string) repSums {
	t.Helper()
	var out repSums
	for _, r := range repList(t, e, at, "/reports/sales"+q+"&group_by=day") {
		n := func(k string) int64 { return int64(r[k].(float64)) }
		out = repSums{out.orders + n("orders"), out.gross + n("gross"), out.tax + n("tax"), out.sales + n("sales"),
			out.refunds + n("refunds"), out.net + n("net")}
	}
	return out
}
