package sqlite

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"kassa.dev/shared/kassa"
	"kassa.dev/shared/processor"
	"kassa.dev/sync/change"
)

// Returns and store credit at the hub (docs/returns.md): an honest edge's
// every return, exchange and store credit write is admitted; forged ones
// are refused each with its reason; a customer's credit spent at two
// nodes while apart merges to one overdrawn conflict.

// retNode is a node's services for returns: cash and store credit.
type retNode struct {
	orders   *OrderService
	payments *PaymentService
	returns  *ReturnService
}

func retServices(n *node) *retNode {
	pay := NewPaymentService(n.db, map[kassa.PaymentMethod]kassa.Processor{kassa.PaymentCash: processor.Cash{}, kassa.PaymentStoreCredit: processor.StoreCredit{}})
	orders := NewOrderService(n.db, pay)
	return &retNode{orders: orders, payments: pay, returns: NewReturnService(n.db, orders, pay)}
}

// sale sells qty of product to customer for cash, completed.
func (r *retNode) sale(t *testing.T, w world, customer *string, qty int64) *kassa.Order {
	t.Helper()
	o := must[*kassa.Order](t, "order")(r.orders.CreateOrder(w.ctx, &kassa.OrderCreate{LocationID: w.loc, CustomerID: customer,
		LineItems: []kassa.OrderLineInput{{ProductID: w.p1, Quantity: qty}}}))
	must[*kassa.Payment](t, "cash")(r.payments.Initiate(w.ctx, &kassa.PaymentInitiate{OrderID: o.ID, Amount: o.Total, Method: kassa.PaymentCash}))
	return must[*kassa.Order](t, "complete")(r.orders.CompleteOrder(w.ctx, o.ID))
}

// creditBack returns qty of order o's first line.
func (r *retNode) creditBack(t *testing.T, w world, o *kassa.Order, qty int64, to string) *kassa.Return {
	t.Helper()
	return must[*kassa.Return](t, "return to "+to)(r.returns.Return(w.ctx, &kassa.ReturnRequest{OrderID: o.ID, RefundTo: to,
		LineItems: []kassa.ReturnLineInput{{LineItemID: o.LineItems[0].ID, Quantity: qty, Restock: to == kassa.RefundToOriginal}}}))
}

// noReceipt takes qty of p1 back without receipt onto the customer's credit.
func (r *retNode) noReceipt(t *testing.T, w world, qty int64) *kassa.Return {
	t.Helper()
	return must[*kassa.Return](t, "return without receipt")(r.returns.Return(w.ctx, &kassa.ReturnRequest{LocationID: w.loc, CustomerID: &w.customer,
		LineItems: []kassa.ReturnLineInput{{ProductID: w.p1, Quantity: qty, Restock: true}}}))
}

// payWithCredit opens an order of p1 for the customer and pays amount of
// it with store credit.
func (r *retNode) payWithCredit(t *testing.T, w world, amount int64) (*kassa.Order, *kassa.Payment) {
	t.Helper()
	o := must[*kassa.Order](t, "order")(r.orders.CreateOrder(w.ctx, &kassa.OrderCreate{LocationID: w.loc, CustomerID: &w.customer,
		LineItems: []kassa.OrderLineInput{{ProductID: w.p1, Quantity: 2}}}))
	p := must[*kassa.Payment](t, "store credit")(r.payments.Initiate(w.ctx, &kassa.PaymentInitiate{OrderID: o.ID, Amount: amount, Method: kassa.PaymentStoreCredit}))
	return o, p
}

func TestTheHubAdmitsReturnsAndStoreCreditOnlyAsTheAPIMovesThem(t *testing.T) {
	edge, hub, w := edgeAndHub(t)
	ctx := context.Background()
	other := must[*kassa.Location](t, "location")(NewLocationService(hub.db).CreateLocation(w.ctx, &kassa.LocationCreate{Name: "Other", Timezone: "UTC"}))
	cashier := mustCashier(t, hub, w)
	ship(t, hub, edge)
	r := retServices(edge)
	// Honest: every kind of return, a store credit payment voided and paid
	// again, the order refunded back onto the credit, an exchange.
	o := r.sale(t, w, &w.customer, 4)
	r.creditBack(t, w, o, 1, kassa.RefundToOriginal)
	r.creditBack(t, w, o, 1, kassa.RefundToStoreCredit)
	r.noReceipt(t, w, 1)
	paid, p := r.payWithCredit(t, w, 300)
	must[*kassa.Payment](t, "void")(r.payments.Void(w.ctx, p.ID))
	paid, p = r.payWithCredit(t, w, 300)
	must[*kassa.Payment](t, "cash")(r.payments.Initiate(w.ctx, &kassa.PaymentInitiate{OrderID: paid.ID, Amount: paid.Total - 300, Method: kassa.PaymentCash}))
	must[*kassa.Order](t, "complete")(r.orders.CompleteOrder(w.ctx, paid.ID))
	must[*kassa.Order](t, "refund")(r.orders.RefundOrder(w.ctx, paid.ID, &kassa.RefundRequest{Reason: "changed mind"}))
	x := must[*kassa.Exchange](t, "exchange")(r.returns.Exchange(w.ctx, &kassa.ExchangeRequest{OrderID: o.ID,
		ReturnLines: []kassa.ReturnLineInput{{LineItemID: o.LineItems[0].ID, Quantity: 1, Restock: true}},
		LineItems:   []kassa.OrderLineInput{{ProductID: w.p2, Quantity: 1}}}))
	if x.Order.Status != kassa.OrderCompleted && x.Due == 0 {
		t.Fatalf("an exchange paid in full left its order %s", x.Order.Status)
	}
	push(t, edge, hub, w)
	for _, q := range []string{`SELECT id, customer_id, currency, balance FROM store_credits ORDER BY id`,
		`SELECT id, type, amount, order_id, payment_id, refund_id, product_id, quantity, restock FROM store_credit_transactions ORDER BY id`} {
		if h, e := dumpRows(t, hub.db, q), dumpRows(t, edge.db, q); len(h) == 0 || fmt.Sprint(h) != fmt.Sprint(e) {
			t.Fatalf("hub and edge differ:\n hub  %v\n edge %v", h, e)
		}
	}
	full := must[*kassa.Order](t, "order")(r.orders.FindOrderByID(w.ctx, o.ID))
	refund := full.Refunds // [0] went back in cash, [1] to store credit
	from := EdgeScope{OrgID: w.org, LocationID: w.loc, NodeID: edge.db.NodeID}
	owner := kassa.ActorFrom(w.ctx).UserID
	now := fmtTime(hub.db.Now())
	rec := func(entity string, f map[string]any) change.Change {
		f["created_at"], f["updated_at"] = now, now
		return change.Change{ID: hub.db.NewID(), OrgID: w.org, Entity: entity, EntityID: hub.db.NewID(), Op: change.OpInsert, Fields: f,
			HLC: hub.db.Clock.Now(), Origin: from.NodeID, Actor: owner}
	}
	entry := func(f map[string]any) change.Change {
		for k, v := range map[string]any{"store_credit_id": w.customer, "location_id": w.loc, "quantity": 0, "restock": 0, "reason": ""} {
			if _, ok := f[k]; !ok {
				f[k] = v
			}
		}
		return rec("store_credit_transaction", f)
	}
	recurrency := rec("store_credit", map[string]any{"customer_id": w.customer, "currency": "NZD", "balance": 0})
	recurrency.EntityID = w.customer // the account the hub holds, reopened in another currency
	// The store takes goods back at its own location only: another's
	// entry would be refused at the hub.
	if err := edge.db.SetMeta(ctx, MetaEdgeLocation, w.loc); err != nil {
		t.Fatal(err)
	}
	if _, err := r.returns.Return(w.ctx, &kassa.ReturnRequest{LocationID: other.ID, CustomerID: &w.customer,
		LineItems: []kassa.ReturnLineInput{{ProductID: w.p1, Quantity: 1}}}); fieldOf(err) != "location_id" {
		t.Fatalf("a return without receipt for another store at the edge: %v, want a refusal naming location_id", err)
	}
	byCashier := entry(map[string]any{"type": "return", "amount": 100, "product_id": w.p1, "quantity": 1})
	byCashier.Actor = cashier.ID
	for _, tc := range []struct {
		name, reason string
		c            change.Change
	}{
		{"credit for a return whose money went back in cash", RefusedValue, entry(map[string]any{"type": "return", "amount": 100,
			"refund_id": refund[0].ID, "order_id": o.ID})},
		{"credit twice for one return", RefusedValue, entry(map[string]any{"type": "return", "amount": refund[1].Amount,
			"refund_id": refund[1].ID, "order_id": o.ID})},
		{"a return without receipt above the product's price", RefusedValue, entry(map[string]any{"type": "return", "amount": 1_000_000,
			"product_id": w.p1, "quantity": 1})},
		{"a cashier's return without receipt", RefusedActor, byCashier},
		{"credit written at another store", RefusedScope, entry(map[string]any{"type": "return", "amount": 100, "product_id": w.p1,
			"quantity": 1, "location_id": other.ID})},
		{"credit given back that no refund or void returned", RefusedValue, entry(map[string]any{"type": "refund", "amount": 300,
			"payment_id": x.Order.Payments[0].ID, "order_id": x.Order.ID})},
		{"a redeem for a payment already taken", RefusedValue, entry(map[string]any{"type": "redeem", "amount": -300,
			"payment_id": p.ID, "order_id": paid.ID})},
		{"an account reopened in another currency", RefusedValue, recurrency},
		{"a store credit that is not its customer's", RefusedValue, rec("store_credit", map[string]any{"customer_id": w.customer,
			"currency": "AUD", "balance": 0})},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, q, err := hub.db.Ingest(ctx, from, []change.Change{tc.c})
			if err != nil || q != 1 {
				t.Fatalf("ingest: %v, %d quarantined; want it refused", err, q)
			}
			var reason string
			hub.db.Reader.QueryRow(`SELECT reason FROM sync_quarantine WHERE id = ?`, tc.c.ID).Scan(&reason)
			if reason != tc.reason {
				t.Fatalf("refused as %q, want %q", reason, tc.reason)
			}
		})
	}
	if h, e := dumpRows(t, hub.db, `SELECT balance FROM store_credits`), dumpRows(t, edge.db, `SELECT balance FROM store_credits`); fmt.Sprint(h) != fmt.Sprint(e) {
		t.Fatalf("forged entries moved the hub's store credit: hub %v, edge %v", h, e)
	}
}

// TestStoreCreditSpentAtTwoNodesWhileApartIsOneOverdrawnConflict: a
// customer's 10.00 of credit is spent, 8.00 at the store and 8.00 at the
// hub, while apart: neither node went below zero, and after the merge both
// hold both payments, the same balance of -6.00 and one conflict.
func TestStoreCreditSpentAtTwoNodesWhileApartIsOneOverdrawnConflict(t *testing.T) {
	edge, hub, w := edgeAndHub(t)
	h := retServices(hub)
	h.noReceipt(t, w, 2) // p1 at 5.00: 10.00 of credit
	ship(t, hub, edge)
	e := retServices(edge)
	for _, n := range []*retNode{h, e} {
		n.payWithCredit(t, w, 800)
		// Each node alone never goes below zero: 2.00 is left, not 3.00.
		o := must[*kassa.Order](t, "order")(n.orders.CreateOrder(w.ctx, &kassa.OrderCreate{LocationID: w.loc, CustomerID: &w.customer,
			LineItems: []kassa.OrderLineInput{{ProductID: w.p1, Quantity: 1}}}))
		_, err := n.payments.Initiate(w.ctx, &kassa.PaymentInitiate{OrderID: o.ID, Amount: 300, Method: kassa.PaymentStoreCredit})
		if fe := fieldOf(err); fe != "amount" {
			t.Fatalf("a payment beyond the store credit: %v, want a refusal naming amount", err)
		}
	}
	// Bo is credited at both while apart: each opens his account (one row,
	// his id), and the store's opening is admitted.
	bo := must[*kassa.Customer](t, "customer")(hub.custs.CreateCustomer(w.ctx, &kassa.CustomerCreate{FirstName: "Bo"}))
	ship(t, hub, edge)
	for _, n := range []*retNode{h, e} {
		must[*kassa.Return](t, "credit Bo")(n.returns.Return(w.ctx, &kassa.ReturnRequest{LocationID: w.loc, CustomerID: &bo.ID,
			LineItems: []kassa.ReturnLineInput{{ProductID: w.p2, Quantity: 1}}}))
	}
	push(t, edge, hub, w)
	ship(t, hub, edge)
	for _, n := range []*node{hub, edge} {
		if b := dumpRows(t, n.db, `SELECT balance FROM store_credits WHERE id = ?`, bo.ID); fmt.Sprint(b) != "[[1000]]" {
			t.Fatalf("Bo's credit from both nodes: %v, want 1000", b)
		}
	}
	for _, n := range []*node{hub, edge} {
		if b := dumpRows(t, n.db, `SELECT balance FROM store_credits WHERE id = ?`, w.customer); fmt.Sprint(b) != "[[-600]]" {
			t.Fatalf("after the merge the balance is %v, want -600", b)
		}
	}
	cs := must[kassa.List[kassa.Conflict]](t, "conflicts")(hub.db.Conflicts(w.ctx, kassa.ConflictFilter{}))
	var over int
	for _, c := range cs.Items {
		if c.Kind == kassa.ConflictStoreCreditOverdrawn {
			over++
		}
	}
	if over != 1 {
		t.Fatalf("%d store_credit_overdrawn conflicts at the hub, want 1: %+v", over, cs.Items)
	}
}

// fieldOf is the first field an EInvalid error names.
func fieldOf(err error) string {
	var ke *kassa.Error
	if !errors.As(err, &ke) || len(ke.Fields) == 0 {
		return ""
	}
	return ke.Fields[0].Field
}

// TestAtTheHubAStoreWithAnEdgeTakesItsOwnReturns: the hub takes returns
// of a store without an edge; once the store has one, a return, a return
// without receipt and an exchange there are 409 at the hub, nothing
// written: the store takes them.
func TestAtTheHubAStoreWithAnEdgeTakesItsOwnReturns(t *testing.T) {
	_, hub, w := edgeAndHub(t)
	h := retServices(hub)
	o := h.sale(t, w, &w.customer, 3)
	h.creditBack(t, w, o, 1, kassa.RefundToStoreCredit)
	if _, err := hub.db.Writer.ExecContext(w.ctx, `INSERT INTO sync_nodes (node_id, org_id, location_id, secret_hash, enrolled_at) VALUES (?, ?, ?, '-', ?)`,
		hub.db.NewID(), w.org, w.loc, fmtTime(hub.db.Now())); err != nil {
		t.Fatal(err)
	}
	count := func() string {
		return fmt.Sprint(dumpRows(t, hub.db, `SELECT (SELECT count(*) FROM refunds), (SELECT count(*) FROM store_credit_transactions), (SELECT count(*) FROM orders)`))
	}
	before := count()
	line := []kassa.ReturnLineInput{{LineItemID: o.LineItems[0].ID, Quantity: 1}}
	_, err1 := h.returns.Return(w.ctx, &kassa.ReturnRequest{OrderID: o.ID, LineItems: line})
	_, err2 := h.returns.Return(w.ctx, &kassa.ReturnRequest{LocationID: w.loc, CustomerID: &w.customer,
		LineItems: []kassa.ReturnLineInput{{ProductID: w.p1, Quantity: 1}}})
	_, err3 := h.returns.Exchange(w.ctx, &kassa.ExchangeRequest{OrderID: o.ID, ReturnLines: line, LineItems: []kassa.OrderLineInput{{ProductID: w.p2, Quantity: 1}}})
	for i, err := range []error{err1, err2, err3} {
		if kassa.ErrorKind(err) != kassa.EConflict {
			t.Errorf("call %d at the hub for a store with an edge: %v, want a conflict", i, err)
		}
	}
	if after := count(); after != before {
		t.Fatalf("refused calls wrote: %s, then %s", before, after)
	}
}
