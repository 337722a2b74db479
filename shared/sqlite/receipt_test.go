package sqlite

import (
	"context"
	"testing"

	"kassa.dev/shared/kassa"
	"kassa.dev/sync/change"
)

// TestTheHubAdmitsOnlyAStoresOwnReceiptNumbers: a store's receipt is
// admitted with a number of its own node's sequences, once per sale or
// refund and once per number; a number of another node's, a repeat, or a
// second receipt of a sale is quarantined.
func TestTheHubAdmitsOnlyAStoresOwnReceiptNumbers(t *testing.T) {
	hub := mustNode(t)
	w := seed(t, hub)
	cashier := mustCashier(t, hub, w)
	sold := sell(t, hub, w, w.p1, 2) // completed at the hub: the hub numbered its receipt
	from := EdgeScope{OrgID: w.org, LocationID: w.loc, NodeID: hub.db.NewID()}
	now := hub.db.Now()
	push := func(entity, id string, fields map[string]any) int {
		t.Helper()
		c := change.Change{ID: hub.db.NewID(), OrgID: w.org, LocationID: w.loc, Entity: entity, EntityID: id, Op: change.OpInsert,
			Fields: fields, HLC: hub.db.Clock.Now(), Origin: from.NodeID, Actor: cashier.ID}
		res, q, err := hub.db.Ingest(context.Background(), from, []change.Change{c})
		if err != nil {
			t.Fatal(err)
		}
		if res.Applied+q != 1 {
			t.Fatalf("applied %d quarantined %d", res.Applied, q)
		}
		return res.Applied
	}
	refund := func() string {
		id := hub.db.NewID()
		if push("refund", id, map[string]any{"order_id": sold.ID, "location_id": w.loc, "amount": int64(100), "reason": "", "restock": false,
			"lines": "[]", "payments": `[{"payment_id":"` + sold.Payments[0].ID + `","amount":100}]`,
			"actor": cashier.ID, "created_at": now, "updated_at": now}) != 1 {
			t.Fatal("the refund was refused")
		}
		return id
	}
	receipt := func(number string, seq int64, kind string, refundID any) map[string]any {
		return map[string]any{"location_id": w.loc, "register_id": "till-1", "number": number, "seq": seq, "kind": kind,
			"order_id": sold.ID, "refund_id": refundID, "created_at": now, "updated_at": now}
	}
	own := numberPrefixOf(from.NodeID) + "-1"
	r1, r2 := refund(), refund()
	for _, c := range []struct {
		what   string
		fields map[string]any
		admit  bool
	}{
		{"another node's number", receipt(hub.db.NumberPrefix()+"-1-000001", 1, kassa.ReceiptRefund, r1), false},
		{"a number not spelled from its seq", receipt(own+"-000002", 1, kassa.ReceiptRefund, r1), false},
		{"a refund receipt without its refund", receipt(own+"-000001", 1, kassa.ReceiptRefund, nil), false},
		{"its own number for a refund", receipt(own+"-000001", 1, kassa.ReceiptRefund, r1), true},
		{"the same number again", receipt(own+"-000001", 1, kassa.ReceiptRefund, r2), false},
		{"a second receipt of the same refund", receipt(own+"-000002", 2, kassa.ReceiptRefund, r1), false},
		{"a second receipt of the sale", receipt(own+"-000003", 3, kassa.ReceiptSale, nil), false},
		{"the next number for the next refund", receipt(own+"-000002", 2, kassa.ReceiptRefund, r2), true},
	} {
		if got := push("receipt", hub.db.NewID(), c.fields) == 1; got != c.admit {
			t.Errorf("%s (%v): admitted %v, want %v", c.what, c.fields["number"], got, c.admit)
		}
	}
	var n int
	if err := hub.db.Reader.QueryRow(`SELECT count(*) FROM receipts WHERE org_id = ? AND origin = ?`, w.org, from.NodeID).Scan(&n); err != nil || n != 2 {
		t.Fatalf("the hub holds %d of the store's receipts (%v), want 2", n, err)
	}
}

// TestARestoredEdgeNumbersPastTheReceiptsItGetsBack: an edge restored
// from a backup taken before a till's first sale has lost that till's
// sequence but gets its receipts back by sync. The till goes on after
// its last number, and a new till never takes the lost sequence's code
// (a repeated number would fail every completion at that till).
func TestARestoredEdgeNumbersPastTheReceiptsItGetsBack(t *testing.T) {
	n := mustNode(t)
	w := seed(t, n)
	ctx := context.Background()
	next := func(reg string) (code string, seq int64) {
		t.Helper()
		err := n.db.Write(ctx, func(tx *Tx) error {
			var err error
			code, seq, err = nextReceiptSeq(ctx, tx, w.org, w.loc, reg)
			if err == nil {
				_, err = tx.ExecContext(ctx, `INSERT INTO receipts (id, org_id, location_id, register_id, number, seq, kind, order_id,
					created_at, updated_at, hlc, origin) VALUES (?, ?, ?, ?, ?, ?, 'sale', ?, '', '', '', '')`,
					n.db.NewID(), w.org, w.loc, reg, kassa.ReceiptNumber(code, seq), seq, n.db.NewID())
			}
			return err
		})
		if err != nil {
			t.Fatalf("numbering a receipt at %s: %v", reg, err)
		}
		return code, seq
	}
	a, _ := next("till-a")
	next("till-a")
	if err := n.db.Exec(ctx, `DELETE FROM receipt_sequences`); err != nil { // the restore
		t.Fatal(err)
	}
	if code, seq := next("till-a"); code != a || seq != 3 {
		t.Errorf("till A after the restore: %s-%d, want %s-3", code, seq, a)
	}
	if code, seq := next("till-b"); code == a || seq != 1 {
		t.Errorf("a new till after the restore: %s-%d, want a code of its own from 1", code, seq)
	}
}
