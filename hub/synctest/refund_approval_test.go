package synctest

import (
	"maps"
	"testing"
	"time"

	"kassa.dev/shared/demo"
	"kassa.dev/shared/node"
	"kassa.dev/sync/change"
	"kassa.dev/sync/wait"
)

// TestAnApprovedRefundIsAdmittedWithItsApprover (issue 26): at a store
// cut from the hub a cashier refunds above the org's refund_limit with the
// store manager's approval_token; the refund is the cashier's and names
// the manager as approved_by. The hub admits it when the link is back and
// serves approved_by. A forged copy naming a cashier as approver, or
// none, is refused (refused_actor); a copy naming the manager is
// admitted, as the replay of the limit against the approver allows. (An
// approver the hub does not hold yet waits like any reference.)
func TestAnApprovedRefundIsAdmittedWithItsApprover(t *testing.T) {
	e := MustStartPair(t)
	hub := hubState{e: e, tok: e.hubTok}
	if st := e.hub.Call(t, "PATCH", "/api/v1/settings", e.hubTok, map[string]any{"refund_limit": 1000}, nil); st != 200 {
		t.Fatalf("refund limit: %d", st)
	}
	wait.For(t, 30*time.Second, "the refund limit at the edge", func() bool {
		var s oneResp
		return e.edge.Call(t, "GET", "/api/v1/settings", e.edgeMgr, nil, &s) == 200 && s.Data["refund_limit"] == 1000.0
	})
	cashierTok := e.edge.Login(t, "cashier@demo.test", demo.Password)
	cashierID := hubState{e: e, tok: e.hub.Login(t, "cashier@demo.test", demo.Password)}.get(t, "/api/v1/auth/me")["id"].(string)
	managerID := hubState{e: e, tok: e.hub.Login(t, "manager@demo.test", demo.Password)}.get(t, "/api/v1/auth/me")["id"].(string)

	e.proxy.cut()
	wait.For(t, 10*time.Second, "the edge to see the link down", func() bool { return e.status(t, e.edge, e.edgeMgr)["connected"] == false })
	product := e.products(t, e.edge, e.edgeTok)[0]["id"].(string)
	var o oneResp
	if st := e.edge.Call(t, "POST", "/api/v1/orders", e.edgeTok, map[string]any{"location_id": e.location,
		"line_items": []any{map[string]any{"product_id": product, "quantity": 4}}}, &o); st != 201 {
		t.Fatalf("order: %d %v", st, o)
	}
	id := o.Data["id"].(string)
	if st := e.edge.Call(t, "POST", "/api/v1/payments/initiate", e.edgeTok, map[string]any{"order_id": id, "amount": o.Data["total"], "method": "cash"}, nil); st != 201 {
		t.Fatalf("pay: %d", st)
	}
	if st := e.edge.Call(t, "POST", "/api/v1/orders/"+id+"/complete", e.edgeTok, nil, nil); st != 200 {
		t.Fatalf("complete: %d", st)
	}
	if st := e.edge.Call(t, "POST", "/api/v1/orders/"+id+"/refund", cashierTok, map[string]any{"reason": "spilt"}, nil); st != 403 {
		t.Fatalf("the cashier's refund above the limit alone: %d, want 403", st)
	}
	if st := e.edge.Call(t, "POST", "/api/v1/orders/"+id+"/refund", cashierTok, map[string]any{"reason": "spilt", "approval_token": e.edgeMgr}, &o); st != 200 {
		t.Fatalf("the approved refund: %d %v", st, o)
	}
	refund := o.Data["refunds"].([]any)[0].(map[string]any)
	if refund["actor"] != cashierID || refund["approved_by"] != managerID {
		t.Fatalf("at the store the refund is %v", refund)
	}

	e.proxy.restore()
	waitPushed(t, e)
	wait.For(t, 30*time.Second, "the refund at the hub", func() bool {
		var h oneResp
		if e.hub.Call(t, "GET", "/api/v1/orders/"+id, e.hubTok, nil, &h) != 200 || h.Data["status"] != "refunded" {
			return false
		}
		r := h.Data["refunds"].([]any)[0].(map[string]any)
		return r["actor"] == cashierID && r["approved_by"] == managerID
	})
	noQuarantine(t, e)

	// Forged copies of the store's refund record, on the same order.
	written, err := node.ReadChanges(t.Context(), e.edgeDir, "refund", refund["id"].(string))
	if err != nil || len(written) != 1 {
		t.Fatalf("the store's refund record: %v %v", written, err)
	}
	f := e.mustForge(t, e.location)
	copyWith := func(approver any) change.Change {
		fields := maps.Clone(written[0].Fields)
		id := newID()
		fields["id"], fields["approved_by"] = id, approver
		return f.change("refund", id, change.OpInsert, e.location, cashierID, fields)
	}
	honest := copyWith(managerID)
	cases := []struct {
		name   string
		change change.Change
		reason string
	}{
		{"approved by a cashier", copyWith(cashierID), "refused_actor"},
		{"approved by nobody", copyWith(nil), "refused_actor"},
	}
	batch := []change.Change{honest}
	for _, c := range cases {
		batch = append(batch, c.change)
	}
	if rep := f.push(t, batch...); rep.Error != "" || rep.Applied != 1 {
		t.Fatalf("the push: %+v, want the copy approved by the manager applied", rep)
	}
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
}
