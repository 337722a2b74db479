package kassa

import (
	"context"
	"fmt"
	"time"
)

// StoreCredit is what the org owes a customer as credit to spend in its
// stores (docs/returns.md): one account a customer, its id the
// customer's, its balance the sum of its transactions. Returns credit it;
// a payment of method store_credit spends it.
type StoreCredit struct {
	ID         string    `json:"id"` // The customer's id.
	OrgID      string    `json:"org_id"`
	CustomerID string    `json:"customer_id"`
	Currency   string    `json:"currency"` // ISO 4217 code of its first credit; only orders in it are paid with it.
	Balance    int64     `json:"balance"`  // Sum of its transactions, in minor units; below 0 only after two stores spent it offline.
	CreatedAt  time.Time `json:"created_at"`
	UpdatedAt  time.Time `json:"updated_at"`
}

// StoreCreditTxnType is the kind of a store credit transaction.
type StoreCreditTxnType string

// The store credit transaction types.
const (
	StoreCreditReturn StoreCreditTxnType = "return" // + a return's value (with or without receipt)
	StoreCreditRedeem StoreCreditTxnType = "redeem" // − a store_credit payment
	StoreCreditRefund StoreCreditTxnType = "refund" // + a store_credit payment given back (void or refund)
)

// PaymentStoreCredit pays with the order's customer's store credit.
const PaymentStoreCredit PaymentMethod = "store_credit"

// StoreCreditTransaction is one append-only entry of a customer's store
// credit; the amount is signed minor units (a redeem is negative).
type StoreCreditTransaction struct {
	ID            string             `json:"id"`
	StoreCreditID string             `json:"store_credit_id"`                        // The account: the customer's id.
	Type          StoreCreditTxnType `json:"type" openapi:"enum=StoreCreditTxnType"` // return, redeem or refund.
	Amount        int64              `json:"amount"`                                 // Signed minor units.
	LocationID    string             `json:"location_id"`                            // The store that wrote it.
	OrderID       *string            `json:"order_id"`                               // The order returned to credit, or paid with it.
	PaymentID     *string            `json:"payment_id"`                             // The store_credit payment of a redeem or refund.
	RefundID      *string            `json:"refund_id"`                              // The order refund of a return with receipt.
	ProductID     *string            `json:"product_id"`                             // A return without receipt: the product that came back.
	Quantity      int64              `json:"quantity"`                               // A return without receipt: how many units.
	Restock       bool               `json:"restock"`                                // A return without receipt: put back on sale.
	Reason        string             `json:"reason"`                                 // Why: a return's reason, "payment" or "refund".
	Actor         *string            `json:"actor"`
	ApprovedBy    *string            `json:"approved_by"` // The manager or owner who let a cashier return without receipt.
	CreatedAt     time.Time          `json:"created_at"`
}

// Spendable decides whether credit pays amount of an order in currency:
// the same currency and a balance that covers it. Errors: EInvalid naming
// amount (not covered) or customer_id (another currency).
func (s *StoreCredit) Spendable(currency string, amount int64) error {
	if s == nil {
		return InvalidField("customer_id", "the order's customer has no store credit")
	}
	if s.Currency != currency {
		return InvalidField("customer_id", fmt.Sprintf("the customer's store credit is in %s, the order in %s", s.Currency, currency))
	}
	if amount > s.Balance {
		return InvalidField("amount", fmt.Sprintf("the customer has %d of store credit", max(s.Balance, 0)))
	}
	return nil
}

// StoreCreditService reads a customer's store credit; returns credit it
// and store_credit payments spend it. Errors: ENotFound.
type StoreCreditService interface {
	// FindStoreCredit is the customer's account; a customer never
	// credited has one of balance 0 (currency empty).
	FindStoreCredit(ctx context.Context, customerID string) (*StoreCredit, error)
	FindStoreCreditTransactions(ctx context.Context, customerID string, p Page) (List[StoreCreditTransaction], error)
}
