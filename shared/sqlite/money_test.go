package sqlite

import (
	"encoding/json"
	"testing"

	"kassa.dev/shared/kassa"
)

// moneyConflicts lists a node's conflicts of kind on order id, through
// the same call GET /sync/conflicts makes.
func moneyConflicts(t *testing.T, n *node, w world, kind, id string) []kassa.Conflict {
	t.Helper()
	l, err := n.db.Conflicts(w.ctx, kassa.ConflictFilter{Page: kassa.Page{Limit: 200}})
	if err != nil {
		t.Fatal(err)
	}
	var out []kassa.Conflict
	for _, c := range l.Items {
		if c.Kind == kind && c.EntityID == id {
			out = append(out, c)
		}
	}
	return out
}

// TestPaidTwiceAtTwoNodesIsAnOverpaidConflict: an open order paid in full
// at two nodes apart (each within the total there) merges to twice its
// total, and every node lists one overpaid conflict with both sides.
func TestPaidTwiceAtTwoNodesIsAnOverpaidConflict(t *testing.T) {
	a, b := mustNode(t), mustNode(t)
	w := seed(t, a)
	o, err := a.orders.CreateOrder(w.ctx, &kassa.OrderCreate{LocationID: w.loc, LineItems: []kassa.OrderLineInput{{ProductID: w.p1, Quantity: 2}}})
	if err != nil {
		t.Fatal(err)
	}
	syncPair(t, a, b)
	for _, n := range []*node{a, b} {
		if _, err := n.payments.Initiate(w.ctx, &kassa.PaymentInitiate{OrderID: o.ID, Amount: o.Total, Method: kassa.PaymentCash}); err != nil {
			t.Fatal(err)
		}
	}
	syncPair(t, a, b)
	mustConverge(t, a, b)
	for name, n := range map[string]*node{"a": a, "b": b} {
		got, _ := n.orders.FindOrderByID(w.ctx, o.ID)
		if got.PaidTotal != 2*o.Total {
			t.Fatalf("%s: paid %d, want %d", name, got.PaidTotal, 2*o.Total)
		}
		cs := moneyConflicts(t, n, w, kassa.ConflictOverpaid, o.ID)
		if len(cs) != 1 {
			t.Fatalf("%s: %d overpaid conflicts, want 1", name, len(cs))
		}
		var local, remote map[string]int64
		json.Unmarshal(cs[0].Local, &local)
		json.Unmarshal(cs[0].Remote, &remote)
		if local["paid_total"] != o.Total || remote["paid_total"] != 2*o.Total || remote["total"] != o.Total || *cs[0].LocationID != w.loc {
			t.Fatalf("%s: conflict sides %s / %s", name, cs[0].Local, cs[0].Remote)
		}
	}
	// A replay records nothing more.
	ship(t, a, b)
	if n := len(moneyConflicts(t, b, w, kassa.ConflictOverpaid, o.ID)); n != 1 {
		t.Fatalf("after a replay: %d overpaid conflicts", n)
	}
}

// TestRefundedTwiceAtTwoNodesIsAnOverrefundedConflict: a completed sale
// refunded at two nodes apart, more than was paid together.
func TestRefundedTwiceAtTwoNodesIsAnOverrefundedConflict(t *testing.T) {
	a, b := mustNode(t), mustNode(t)
	w := seed(t, a)
	o := sell(t, a, w, w.p1, 2) // 1000
	syncPair(t, a, b)
	part := o.Total * 3 / 4
	for _, n := range []*node{a, b} {
		if _, err := n.orders.RefundOrder(w.ctx, o.ID, &kassa.RefundRequest{Amount: &part}); err != nil {
			t.Fatal(err)
		}
	}
	syncPair(t, a, b)
	mustConverge(t, a, b)
	for name, n := range map[string]*node{"a": a, "b": b} {
		got, _ := n.orders.FindOrderByID(w.ctx, o.ID)
		if got.RefundedTotal != 2*part {
			t.Fatalf("%s: refunded %d, want %d", name, got.RefundedTotal, 2*part)
		}
		if cs := moneyConflicts(t, n, w, kassa.ConflictOverrefunded, o.ID); len(cs) != 1 {
			t.Fatalf("%s: %d overrefunded conflicts, want 1", name, len(cs))
		}
		if cs := moneyConflicts(t, n, w, kassa.ConflictOverpaid, o.ID); len(cs) != 0 {
			t.Fatalf("%s: an overpaid conflict on an order paid once", name)
		}
	}
}
