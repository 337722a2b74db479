package sqlite

import (
	"context"
	"encoding/json"
	"testing"

	"kassa.dev/shared/kassa"
	"kassa.dev/sync/change"
)

// unsent is every change the edge has not pushed yet, as the wire carries
// them.
func unsent(t *testing.T, edge *node) []change.Change {
	t.Helper()
	es, err := edge.db.ChangesAfter(context.Background(), 0, 1_000_000, LogFilter{Unsent: true})
	if err != nil {
		t.Fatal(err)
	}
	return wire(t, es)
}

// openOrder makes an order at n and leaves it open (no payment).
func openOrder(t *testing.T, n *node, w world) *kassa.Order {
	t.Helper()
	o, err := n.orders.CreateOrder(w.ctx, &kassa.OrderCreate{LocationID: w.loc, LineItems: []kassa.OrderLineInput{{ProductID: w.p1, Quantity: 1}}})
	if err != nil {
		t.Fatal(err)
	}
	return o
}

// TestAPushWritesEachRowAfterTheRowsItNames: a push's new rows are written
// together after its records are admitted (Tx.InsertLater), a table's
// rows after those of the tables it references. Here the last order
// comes as an older edge writes it (without a column its release did not
// know: another insert statement than the others'), after another
// order's line: its own line must still be written after it. Written in
// the order the statements first came, the second line would name an
// order not yet there, and the whole push would fail and be applied again
// record by record.
func TestAPushWritesEachRowAfterTheRowsItNames(t *testing.T) {
	edge, hub, w := edgeAndHub(t)
	push(t, edge, hub, w)
	orders := []*kassa.Order{openOrder(t, edge, w), openOrder(t, edge, w), openOrder(t, edge, w)}
	last := orders[2]
	cs := unsent(t, edge)
	older := false
	for i := range cs {
		if cs[i].Entity == "order" && cs[i].EntityID == last.ID && cs[i].Op == change.OpInsert {
			if v, ok := cs[i].Fields["approved_by"]; !ok || v != nil {
				t.Fatalf("the order's record has approved_by %v (%v)", v, ok)
			}
			delete(cs[i].Fields, "approved_by")
			older = true
		}
	}
	if !older {
		t.Fatal("the last order's insert is not in the push")
	}
	failed := hub.db.WriterStats().Failed
	res, q, err := hub.db.Ingest(context.Background(), EdgeScope{OrgID: w.org, LocationID: w.loc, NodeID: edge.db.NodeID}, cs)
	if err != nil || q != 0 || len(res.Refused) != 0 {
		t.Fatalf("ingest: %+v, %d quarantined, %v", res, q, err)
	}
	if n := hub.db.WriterStats().Failed - failed; n != 0 {
		t.Fatalf("%d units of the push failed: it was applied record by record", n)
	}
	for _, o := range orders {
		var lines int
		if err := hub.db.Reader.QueryRow(`SELECT count(*) FROM order_lines WHERE order_id = ?`, o.ID).Scan(&lines); err != nil || lines != 1 {
			t.Fatalf("order %s has %d lines at the hub (%v)", o.Number, lines, err)
		}
	}
}

// TestAnEventPushedWithItsOrderIsCheckedAgainstThatOrder: an event about
// an order of the same push is checked against the order as the push
// inserts it (the batch's row, Admitter.MadeRow, not yet written): a
// number or currency other than the order's is refused, the order kept.
func TestAnEventPushedWithItsOrderIsCheckedAgainstThatOrder(t *testing.T) {
	for _, col := range []string{"number", "currency"} {
		t.Run(col, func(t *testing.T) {
			edge, hub, w := edgeAndHub(t)
			push(t, edge, hub, w)
			o := openOrder(t, edge, w)
			cs := unsent(t, edge)
			forged := ""
			for i := range cs {
				if cs[i].Entity != "event" || cs[i].Fields["type"] != kassa.EventOrderCreated {
					continue
				}
				var d map[string]any
				if err := json.Unmarshal([]byte(cs[i].Fields["data"].(string)), &d); err != nil || d["id"] != o.ID {
					t.Fatalf("the event's data: %v %v", d, err)
				}
				d[col] = map[string]string{"number": "X-000001", "currency": "NZD"}[col]
				b, _ := json.Marshal(d)
				cs[i].Fields["data"], forged = string(b), cs[i].ID
			}
			if forged == "" {
				t.Fatal("no order.created in the push")
			}
			_, q, err := hub.db.Ingest(context.Background(), EdgeScope{OrgID: w.org, LocationID: w.loc, NodeID: edge.db.NodeID}, cs)
			if err != nil || q != 1 {
				t.Fatalf("ingest: %d quarantined, %v", q, err)
			}
			var reason string
			if err := hub.db.Reader.QueryRow(`SELECT reason FROM sync_quarantine WHERE id = ?`, forged).Scan(&reason); err != nil || reason != RefusedValue {
				t.Fatalf("the forged event: reason %q (%v), want %s", reason, err, RefusedValue)
			}
			var n int
			if err := hub.db.Reader.QueryRow(`SELECT count(*) FROM orders WHERE id = ?`, o.ID).Scan(&n); err != nil || n != 1 {
				t.Fatalf("the order is not at the hub: %d %v", n, err)
			}
		})
	}
}
