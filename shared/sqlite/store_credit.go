package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"

	"kassa.dev/shared/kassa"
	"kassa.dev/shared/sqlite/engine"
	"kassa.dev/sync/change"
)

// StoreCreditService reads customers' store credit (docs/returns.md).
// Returns credit it (return.go); store_credit payments spend it and
// refunds or voids of them give it back, in the payment's unit.
type StoreCreditService struct{ db *DB }

// NewStoreCreditService returns the store credit service over db.
func NewStoreCreditService(db *DB) *StoreCreditService { return &StoreCreditService{db: db} }

var _ kassa.StoreCreditService = (*StoreCreditService)(nil)

const storeCreditCols = `SELECT id, org_id, customer_id, currency, balance, created_at, updated_at FROM store_credits`

func scanStoreCredit(s scanner) (*kassa.StoreCredit, error) {
	var c kassa.StoreCredit
	var created, updated string
	if err := s.Scan(&c.ID, &c.OrgID, &c.CustomerID, &c.Currency, &c.Balance, &created, &updated); err != nil {
		return nil, err
	}
	c.CreatedAt, c.UpdatedAt = parseTime(created), parseTime(updated)
	return &c, nil
}

// findStoreCredit is the customer's account, or nil when never credited.
func findStoreCredit(ctx context.Context, q querier, orgID, customerID string) (*kassa.StoreCredit, error) {
	c, err := scanStoreCredit(q.QueryRowContext(ctx, storeCreditCols+` WHERE id = ? AND org_id = ?`, customerID, orgID))
	if errors.Is(err, sql.ErrNoRows) {
		return nil, nil
	}
	return c, err
}

const storeCreditTxnCols = `SELECT id, store_credit_id, type, amount, location_id, order_id, payment_id, refund_id, product_id, quantity,
	restock, reason, actor, approved_by, created_at FROM store_credit_transactions`

func scanStoreCreditTxn(s scanner) (*kassa.StoreCreditTransaction, error) {
	var t kassa.StoreCreditTransaction
	var created string
	if err := s.Scan(&t.ID, &t.StoreCreditID, &t.Type, &t.Amount, &t.LocationID, &t.OrderID, &t.PaymentID, &t.RefundID, &t.ProductID,
		&t.Quantity, &t.Restock, &t.Reason, &t.Actor, &t.ApprovedBy, &created); err != nil {
		return nil, err
	}
	t.CreatedAt = parseTime(created)
	return &t, nil
}

func storeCreditTxnID(t *kassa.StoreCreditTransaction) string { return t.ID }

// FindStoreCredit is a customer's store credit; one never credited has a
// balance of 0. Errors: ENotFound for a customer not in the org.
func (s *StoreCreditService) FindStoreCredit(ctx context.Context, customerID string) (*kassa.StoreCredit, error) {
	a, err := kassa.MustActor(ctx)
	if err != nil {
		return nil, err
	}
	if !customerExists(ctx, s.db.Reader, a.OrgID, customerID) {
		return nil, kassa.NotFound("customer", customerID)
	}
	c, err := findStoreCredit(ctx, s.db.Reader, a.OrgID, customerID)
	if c == nil && err == nil {
		c = &kassa.StoreCredit{ID: customerID, OrgID: a.OrgID, CustomerID: customerID}
	}
	return c, err
}

// FindStoreCreditTransactions lists a customer's store credit entries,
// oldest first. Errors: ENotFound for a customer not in the org.
func (s *StoreCreditService) FindStoreCreditTransactions(ctx context.Context, customerID string, p kassa.Page) (kassa.List[kassa.StoreCreditTransaction], error) {
	a, err := kassa.MustActor(ctx)
	if err != nil {
		return kassa.List[kassa.StoreCreditTransaction]{}, err
	}
	if !customerExists(ctx, s.db.Reader, a.OrgID, customerID) {
		return kassa.List[kassa.StoreCreditTransaction]{}, kassa.NotFound("customer", customerID)
	}
	return findPage(ctx, s.db.Reader, storeCreditTxnCols, orgFilter(a.OrgID).and("store_credit_id = ?", customerID), p, scanStoreCreditTxn, storeCreditTxnID)
}

// creditEntry is one entry to append to a customer's store credit.
type creditEntry struct {
	typ                 kassa.StoreCreditTxnType
	amount              int64
	locationID          string
	orderID, paymentID  *string
	refundID, productID *string
	quantity            int64
	restock             bool
	reason              string
	actor, approvedBy   *string
}

// appendStoreCredit is the one way store credit moves at a node: in the
// caller's unit it opens the customer's account in currency when it has
// none, appends the entry, and rewrites the balance as the ledger's sum
// (with a change record, as gift cards do; the balance is derived and
// recomputed where it arrives). It returns the entry's id.
func appendStoreCredit(ctx context.Context, tx *Tx, orgID, customerID, currency string, e creditEntry) (string, error) {
	acct, err := findStoreCredit(ctx, tx, orgID, customerID)
	if err != nil {
		return "", err
	}
	if acct == nil {
		if err := tx.Insert(ctx, entStoreCredit, orgID, customerID, map[string]any{
			"customer_id": customerID, "currency": currency, "balance": int64(0)}); err != nil {
			return "", err
		}
		acct = &kassa.StoreCredit{Currency: currency}
	}
	if acct.Currency != currency {
		return "", kassa.InvalidField("customer_id", fmt.Sprintf("the customer's store credit is in %s, not %s", acct.Currency, currency))
	}
	id := tx.DB.NewID()
	if err := tx.Insert(ctx, entStoreCreditTxn, orgID, id, map[string]any{
		"store_credit_id": customerID, "type": string(e.typ), "amount": e.amount, "location_id": e.locationID,
		"order_id": e.orderID, "payment_id": e.paymentID, "refund_id": e.refundID, "product_id": e.productID,
		"quantity": e.quantity, "restock": e.restock, "reason": e.reason, "actor": e.actor, "approved_by": e.approvedBy,
	}); err != nil {
		return "", err
	}
	sum, err := storeCreditSum(ctx, tx, orgID, customerID)
	if err != nil {
		return "", err
	}
	cols := map[string]any{}
	changed(cols, "balance", acct.Balance, sum)
	return id, tx.Update(ctx, entStoreCredit, orgID, customerID, cols)
}

// storeCreditSum is an account's balance as its ledger says.
func storeCreditSum(ctx context.Context, q querier, orgID, id string) (int64, error) {
	var sum int64
	err := q.QueryRowContext(ctx, `SELECT coalesce(sum(amount), 0) FROM store_credit_transactions WHERE store_credit_id = ? AND org_id = ?`,
		id, orgID).Scan(&sum)
	return sum, err
}

// redeemStoreCreditTender debits, in a store_credit payment's unit and
// before its row (checkStoreCreditPayment), the order's customer's store
// credit by the payment's amount: 422 naming customer_id (no customer, no
// credit, another currency) or amount (not covered), nothing stored.
func redeemStoreCreditTender(ctx context.Context, tx *Tx, o *kassa.Order, in *kassa.PaymentInitiate, paymentID string) error {
	if in.Method != kassa.PaymentStoreCredit {
		return nil
	}
	if o.CustomerID == nil {
		return kassa.InvalidField("customer_id", "the order has no customer: store credit pays only a customer's order")
	}
	acct, err := findStoreCredit(ctx, tx, o.OrgID, *o.CustomerID)
	if err != nil {
		return err
	}
	if err := acct.Spendable(o.Currency, in.Amount); err != nil {
		return err
	}
	_, err = appendStoreCredit(ctx, tx, o.OrgID, acct.ID, acct.Currency, creditEntry{typ: kassa.StoreCreditRedeem, amount: -in.Amount,
		locationID: o.LocationID, orderID: &o.ID, paymentID: &paymentID, reason: "payment"})
	return err
}

// refundStoreCreditTender gives amount of a store_credit payment back to
// the account it was taken from, in the unit that refunds or voids it.
func refundStoreCreditTender(ctx context.Context, tx *Tx, p *kassa.Payment, amount int64) error {
	if p.Method != kassa.PaymentStoreCredit || amount <= 0 {
		return nil
	}
	var acct string
	err := tx.QueryRowContext(ctx, `SELECT store_credit_id FROM store_credit_transactions WHERE payment_id = ? AND org_id = ? AND type = 'redeem'`,
		p.ID, p.OrgID).Scan(&acct)
	if err != nil {
		return err // the payment's redeem is in its own unit: always there
	}
	c, err := findStoreCredit(ctx, tx, p.OrgID, acct)
	if err != nil {
		return err
	}
	_, err = appendStoreCredit(ctx, tx, p.OrgID, acct, c.Currency, creditEntry{typ: kassa.StoreCreditRefund, amount: amount,
		locationID: p.LocationID, orderID: &p.OrderID, paymentID: &p.ID, reason: "refund"})
	return err
}

// Store credit: the account is an org-wide LWW row keyed by its
// customer's id (two stores opening it while apart write one row), its
// balance derived; the ledger is append-only. An edge writes both as its
// API does (checkStoreCredit, checkStoreCreditTxn).
var entStoreCredit, entStoreCreditTxn = new(noun), new(noun)

func init() {
	register(entStoreCredit, noun{Name: "store_credit", Table: "store_credits", Digest: orgRows, Derived: []string{"balance"},
		Formats: []formatStep{{Format: 5, Migration: 45}},
		// Two stores open one customer's account while apart: the second
		// insert arrives as an update of the row, with the same customer
		// and currency (checkStoreCredit), so those are update columns.
		Edge: &edgeRule{Update: []string{"balance", "customer_id", "currency", "created_at"}, Scopes: saleWrite,
			Refs: []ref{{Col: "customer_id", Table: "customers"}}, Check: checkStoreCredit},
		Track:     func(a *applier, c *change.Change, _ map[string]any) { a.Touch(entStoreCredit, c.EntityID, c.OrgID) },
		Recompute: recomputeStoreCredits})
	register(entStoreCreditTxn, noun{Name: "store_credit_transaction", Table: "store_credit_transactions", Merge: mergeAppend, Digest: orgRows,
		Formats: []formatStep{{Format: 5, Migration: 45}},
		Edge: &edgeRule{Scopes: saleWrite,
			Refs: []ref{{Col: "store_credit_id", Table: "store_credits"}, {Col: "order_id", Table: "orders"}, {Col: "product_id", Table: "products"},
				{Col: "approved_by", Table: "users"}}, // payment_id, refund_id: checkStoreCreditTxn
			Check: checkStoreCreditTxn},
		Track: func(a *applier, c *change.Change, f map[string]any) {
			if id := fieldText(f, "store_credit_id"); id != "" {
				a.Touch(entStoreCredit, id, c.OrgID)
			}
		}})
}

// checkStoreCredit: an account is its customer's (its id theirs) in a
// currency that never changes — a store opening an account the hub has
// already writes the same; its balance is derived (recomputed, not taken).
func checkStoreCredit(ctx context.Context, ad *admitter, c *change.Change, f map[string]any) error {
	if v, ok := f["customer_id"]; (ok || c.Op == change.OpInsert) && v != c.EntityID {
		return refuse(RefusedValue, "a store credit's id is its customer's")
	}
	cur, ok := f["currency"].(string)
	if !ok && c.Op != change.OpInsert {
		return nil
	}
	if !kassa.ValidCurrency(cur) {
		return refuse(RefusedValue, "currency must be an ISO 4217 code")
	}
	var held string
	err := ad.Tx.QueryRowContext(ctx, `SELECT currency FROM store_credits WHERE id = ? AND org_id = ?`, c.EntityID, c.OrgID).Scan(&held)
	if err == nil && held != cur {
		return refuse(RefusedValue, "store credit %s is in %s", c.EntityID, held)
	}
	if errors.Is(err, sql.ErrNoRows) {
		return nil
	}
	return err
}

// recomputeStoreCredits rewrites the balance of every account the batch
// touched; one the merge took below zero (two stores spent it while
// apart) is a store_credit_overdrawn conflict, listed once, when it first
// goes below. No sale is undone.
func recomputeStoreCredits(ctx context.Context, a *applier, accts map[string]string) error {
	for id, orgID := range accts {
		var before int64
		err := a.Tx.QueryRowContext(ctx, `SELECT balance FROM store_credits WHERE id = ? AND org_id = ?`, id, orgID).Scan(&before)
		if errors.Is(err, sql.ErrNoRows) {
			continue // its account row arrives later in the log
		}
		if err != nil {
			return err
		}
		after, err := storeCreditSum(ctx, a.Tx, orgID, id)
		if err != nil {
			return err
		}
		if _, err := a.Tx.ExecContext(ctx, `UPDATE store_credits SET balance = ? WHERE id = ? AND org_id = ?`, after, id, orgID); err != nil {
			return err
		}
		if after < 0 && before >= 0 {
			if err := a.Conflict(ctx, orgID, "", kassa.ConflictStoreCreditOverdrawn, entStoreCredit.Name, id,
				map[string]any{"balance_before": before}, map[string]any{"balance": after}); err != nil {
				return err
			}
		}
	}
	return nil
}

// checkStoreCreditTxn: an edge moves store credit only as its API does,
// at its own store: a redeem before its store_credit payment, a refund of
// what that payment gave back, a return of what a refund credited or of
// goods taken back without receipt. Balances are not checked: a redeem
// beyond the merged balance was taken offline (store_credit_overdrawn).
func checkStoreCreditTxn(ctx context.Context, ad *admitter, c *change.Change, f map[string]any) error {
	types := []string{string(kassa.StoreCreditReturn), string(kassa.StoreCreditRedeem), string(kassa.StoreCreditRefund)}
	if err := firstErr(oneOf(f, "type", true, types...), within(f, "amount", -maxAmount, maxAmount, true),
		within(f, "quantity", 0, kassa.MaxLineQuantity, false), within(f, "restock", 0, 1, false)); err != nil {
		return err
	}
	if f["location_id"] != ad.From.LocationID {
		return refuse(RefusedScope, "a store credit entry is written at the edge's own store")
	}
	if a, ok := f["actor"]; ok && a != nil && a != c.Actor {
		return refuse(RefusedField, "the entry's actor is not the change's")
	}
	switch f["type"] {
	case string(kassa.StoreCreditRedeem):
		return checkCreditRedeem(ctx, ad, c, f)
	case string(kassa.StoreCreditRefund):
		return checkCreditRefund(ctx, ad, c, f)
	}
	if fieldText(f, "refund_id") != "" {
		return checkCreditReturn(ctx, ad, c, f)
	}
	return checkNoReceiptReturn(ctx, ad, c, f)
}

// checkCreditRedeem: a redeem debits a store_credit payment not yet
// written (its row follows: checkStoreCreditPayment), once, from the
// account of the customer of an order of the edge's store.
func checkCreditRedeem(ctx context.Context, ad *admitter, c *change.Change, f map[string]any) error {
	amount, _ := intField(f, "amount")
	payment, order := fieldText(f, "payment_id"), fieldText(f, "order_id")
	var n int
	var customer, loc sql.NullString
	err := ad.Tx.QueryRowContext(ctx, `SELECT (SELECT count(*) FROM store_credit_transactions WHERE payment_id = ?1)
		+ (SELECT count(*) FROM payments WHERE id = ?1), o.customer_id, o.location_id FROM orders o WHERE o.id = ?2 AND o.org_id = ?3`,
		payment, order, c.OrgID).Scan(&n, &customer, &loc)
	switch {
	case errors.Is(err, sql.ErrNoRows):
		return refuse(RefusedReference, "a redeem names an order of the org")
	case err != nil:
		return err
	case amount >= 0 || payment == "" || n > 0:
		return refuse(RefusedValue, "a redeem debits a new store_credit payment, once")
	case loc.String != ad.From.LocationID:
		return refuse(RefusedScope, "order %s is another location's", order)
	case customer.String != fieldText(f, "store_credit_id"):
		return refuse(RefusedValue, "store credit pays only its customer's order")
	}
	return nil
}

// checkCreditRefund: a refund credits a store_credit payment's money back
// to the account it was taken from, never more in all than the payment
// gave back as the hub holds it (its void, or its parts of refunds).
func checkCreditRefund(ctx context.Context, ad *admitter, c *change.Change, f map[string]any) error {
	amount, _ := intField(f, "amount")
	payment := fieldText(f, "payment_id")
	var from string
	var moved int64
	err := ad.Tx.QueryRowContext(ctx, `SELECT coalesce(max(CASE WHEN type = 'redeem' THEN store_credit_id END), ''), coalesce(sum(CASE WHEN type = 'refund' THEN amount END), 0)
		FROM store_credit_transactions WHERE payment_id = ? AND org_id = ?`, payment, c.OrgID).Scan(&from, &moved)
	if err != nil {
		return err
	}
	returned, err := paymentReturned(ctx, ad.Tx, c.OrgID, payment)
	if errors.Is(err, sql.ErrNoRows) || from == "" {
		return refuse(RefusedReference, "a refund names a store_credit payment that was redeemed")
	}
	if err != nil {
		return err
	}
	switch {
	case from != fieldText(f, "store_credit_id"):
		return refuse(RefusedValue, "a refund returns to the store credit payment %s was taken from", payment)
	case amount <= 0 || moved+amount > returned:
		return refuse(RefusedValue, "payment %s gave back %d, not %d: no refund or void covers this entry", payment, returned, moved+amount)
	}
	return nil
}

// checkCreditReturn: a return with receipt credits at most what its
// refund (admitted by checkRefund, with the refund limit) did not give
// back through payments, to the order's customer when it has one.
func checkCreditReturn(ctx context.Context, ad *admitter, c *change.Change, f map[string]any) error {
	amount, _ := intField(f, "amount")
	refund := fieldText(f, "refund_id")
	var order, loc string
	var customer sql.NullString
	var left int64
	err := ad.Tx.QueryRowContext(ctx, `SELECT r.order_id, r.location_id, o.customer_id, r.amount
		- coalesce((SELECT sum(`+engine.D(ad.Tx).JSONInt("j.value", "amount")+`) FROM `+engine.D(ad.Tx).JSONElements("r.payments", "j")+`), 0)
		- coalesce((SELECT sum(t.amount) FROM store_credit_transactions t WHERE t.refund_id = r.id AND t.org_id = r.org_id), 0)
		FROM refunds r JOIN orders o ON o.id = r.order_id AND o.org_id = r.org_id WHERE r.id = ? AND r.org_id = ?`, refund, c.OrgID).Scan(&order, &loc, &customer, &left)
	switch {
	case errors.Is(err, sql.ErrNoRows):
		return refuse(RefusedReference, "a return names a refund the hub holds (written before it)")
	case err != nil:
		return err
	case loc != ad.From.LocationID || order != fieldText(f, "order_id"):
		return refuse(RefusedValue, "a return credits a refund of its own order at the edge's store")
	case amount <= 0 || amount > left:
		return refuse(RefusedValue, "refund %s leaves %d to credit, not %d", refund, left, amount)
	case customer.Valid && customer.String != fieldText(f, "store_credit_id"):
		return refuse(RefusedValue, "a return credits the order's customer")
	}
	return nil
}

// checkNoReceiptReturn: goods taken back without receipt are credited by
// a manager or owner (or a cashier with one's approval), at most the
// product's highest price the hub knows (base or a price list) a unit.
func checkNoReceiptReturn(ctx context.Context, ad *admitter, c *change.Change, f map[string]any) error {
	approver, err := approverOf(ctx, ad.Tx, c.OrgID, f)
	if err != nil {
		return err
	}
	if !kassa.MayReturnWithoutReceipt(ad.ActorOf, approver) {
		return refuse(RefusedActor, "a return without receipt is a manager's or owner's, or approved by one")
	}
	amount, _ := intField(f, "amount")
	quantity, _ := intField(f, "quantity")
	product := fieldText(f, "product_id")
	var base, listed int64
	err = ad.Tx.QueryRowContext(ctx, `SELECT p.base_price, coalesce((SELECT max(`+engine.D(ad.Tx).JSONInt("j.value", "price")+`) FROM price_lists pl, `+engine.D(ad.Tx).JSONElements("pl.prices", "j")+`
		WHERE pl.org_id = p.org_id AND `+engine.D(ad.Tx).JSONText("j.value", "product_id")+` = p.id), 0) FROM products p WHERE p.id = ? AND p.org_id = ?`, product, c.OrgID).Scan(&base, &listed)
	highest := max(base, listed)
	switch {
	case errors.Is(err, sql.ErrNoRows):
		return refuse(RefusedReference, "a return without receipt names a product of the org")
	case err != nil:
		return err
	case fieldText(f, "order_id") != "" || fieldText(f, "payment_id") != "" || quantity < 1:
		return refuse(RefusedValue, "a return without receipt names a product and a quantity, no order or payment")
	case amount < 0 || amount > highest*quantity:
		return refuse(RefusedValue, "%d units of product %s credit at most %d", quantity, product, highest*quantity)
	}
	return nil
}

// checkStoreCreditPayment: a store_credit payment is paid by exactly one
// redeem written before it, of its amount, for its order.
func checkStoreCreditPayment(ctx context.Context, ad *admitter, c *change.Change, f map[string]any) error {
	if f["method"] != string(kassa.PaymentStoreCredit) {
		return nil
	}
	var n, debited int64
	var order sql.NullString
	if err := ad.Tx.QueryRowContext(ctx, `SELECT count(*), coalesce(-sum(amount), 0), max(order_id) FROM store_credit_transactions
		WHERE payment_id = ? AND org_id = ? AND type = 'redeem'`, c.EntityID, c.OrgID).Scan(&n, &debited, &order); err != nil {
		return err
	}
	amount, _ := intField(f, "amount")
	if n != 1 || debited != amount || order.String != fieldText(f, "order_id") {
		return refuse(RefusedValue, "a store_credit payment is paid by one redeem of its amount for its order, written before it")
	}
	return nil
}
