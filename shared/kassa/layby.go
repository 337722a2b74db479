package kassa

import (
	"context"
	"fmt"
	"slices"
	"time"
)

// Lay-by (docs/laybys.md): goods set aside for a customer who pays for
// them in instalments. The deposit is the first instalment; the goods are
// reserved at the store that opened the lay-by (taken off its sellable
// on-hand, shown as reserved) until they are collected or released. The
// paid total is derived from the append-only instalments, so instalments
// taken at two stores while apart add up when they meet.
type Layby struct {
	ID                string         `json:"id"`
	OrgID             string         `json:"org_id"`
	LocationID        string         `json:"location_id"`                                  // The store holding the goods (where it was opened).
	CustomerID        string         `json:"customer_id"`                                  // The customer the goods are set aside for.
	Status            string         `json:"status" openapi:"enum=LaybyStatus"`            // open, completed (paid and collected), cancelled, or expired (released; the refund is paid out by a cancel).
	Currency          string         `json:"currency"`                                     // The holding store's currency.
	LineItems         []LaybyLine    `json:"line_items"`                                   // The goods set aside.
	Subtotal          int64          `json:"subtotal"`                                     // Sum of the lines' gross, in minor units.
	TaxTotal          int64          `json:"tax_total"`                                    // Tax at the org's rate, in minor units (inside the total when tax is inclusive).
	Total             int64          `json:"total"`                                        // What the customer pays for the goods, in minor units.
	Paid              int64          `json:"paid"`                                         // Sum of the payments (never less the refunds), in minor units; derived from payments[].
	Refunded          int64          `json:"refunded"`                                     // Sum of the refunds paid out, in minor units; derived from payments[].
	Balance           int64          `json:"balance"`                                      // total − paid: what is still owed (below 0 only when two stores took the last instalment while apart).
	TerminationCharge int64          `json:"termination_charge"`                           // Kept from what was paid when the customer cancelled or the lay-by expired (the org's layby_termination_charge, at most what was paid).
	CancelledBy       *string        `json:"cancelled_by" openapi:"enum=LaybyCancelledBy"` // customer or store, once cancelled or expired (expiry: store).
	ExpiresAt         time.Time      `json:"expires_at"`                                   // An open lay-by not fully paid by then expires and its goods are released.
	Payments          []LaybyPayment `json:"payments"`                                     // Instalments and refunds, oldest first.
	CreatedBy         *string        `json:"created_by"`                                   // The user (or OAuth client) who opened it.
	CompletedAt       *time.Time     `json:"completed_at"`                                 // When its goods were collected.
	CancelledAt       *time.Time     `json:"cancelled_at"`                                 // When cancelled or expired.
	CreatedAt         time.Time      `json:"created_at"`
	UpdatedAt         time.Time      `json:"updated_at"`
}

// Lay-by states. open moves to completed, cancelled or expired; expired
// moves on to cancelled when its refund is paid out (LaybyStatusRank).
const (
	LaybyOpen      = "open"
	LaybyCompleted = "completed"
	LaybyCancelled = "cancelled"
	LaybyExpired   = "expired"
)

// Who cancelled a lay-by.
const (
	LaybyByCustomer = "customer"
	LaybyByStore    = "store"
)

// LaybyStatusRank orders the states for merging: a state only moves
// forward. A completion beats a cancellation made elsewhere while apart
// (recorded as a conflict: the goods were collected).
func LaybyStatusRank(s string) int {
	switch s {
	case LaybyOpen:
		return 0
	case LaybyExpired:
		return 1
	case LaybyCancelled:
		return 2
	case LaybyCompleted:
		return 3
	}
	return -1
}

// LaybyLine is one product set aside.
type LaybyLine struct {
	ProductID string `json:"product_id"`
	Name      string `json:"name"`
	SKU       string `json:"sku"`
	Quantity  int64  `json:"quantity"`
	UnitPrice int64  `json:"unit_price"` // The store's price when the lay-by was opened, in minor units.
	Tax       int64  `json:"tax"`        // The line's tax at the org's rate, in minor units.
	Total     int64  `json:"total"`      // The line's part of the lay-by's total.
}

// Lay-by payment entry types.
const (
	LaybyPaymentIn  = "payment"
	LaybyRefundOut  = "refund"
	laybyMaxLines   = MaxOrderLines
	laybyMaxTermDay = 365
)

// LaybyTenders are the methods a lay-by instalment (or refund) takes.
var LaybyTenders = []PaymentMethod{PaymentCash, PaymentCard, PaymentGiftCard}

// LaybyPayment is one append-only entry of a lay-by's money: an
// instalment (positive) taken at any store of the org, or the refund
// (negative) paid out on cancellation.
type LaybyPayment struct {
	ID         string        `json:"id"`
	LaybyID    string        `json:"layby_id"`                       // The lay-by it belongs to.
	LocationID string        `json:"location_id"`                    // The store that took or paid it out.
	Type       string        `json:"type" openapi:"enum=LaybyEntry"` // payment or refund.
	Method     PaymentMethod `json:"method"`                         // cash, card or gift_card.
	Amount     int64         `json:"amount"`                         // Signed minor units: a payment positive, a refund negative.
	GiftCardID *string       `json:"gift_card_id"`                   // The card a gift_card instalment was taken from.
	CardLast4  *string       `json:"card_last4"`                     // The card's last 4 digits (card).
	Reference  *string       `json:"processor_ref"`                  // The card network's reference (card).
	CreatedBy  *string       `json:"created_by"`                     // The user (or OAuth client) who took it.
	CreatedAt  time.Time     `json:"created_at"`
}

// LaybyTender is money given for a lay-by: its method, amount and what
// the method needs.
type LaybyTender struct {
	Method       PaymentMethod `json:"method" openapi:"required"` // cash, card or gift_card.
	Amount       int64         `json:"amount" openapi:"required"` // Minor units, 1 to the balance.
	CardNumber   string        `json:"card_number"`               // card: the number the terminal read (never stored; its last 4 are).
	GiftCardCode string        `json:"gift_card_code"`            // gift_card: the card's code.
	RegisterID   string        `json:"register_id"`               // The till whose open drawer records it (its cash counts in the drawer), as POST /payments/initiate; "" : none.
}

// LaybyLineInput is a product to set aside.
type LaybyLineInput struct {
	ProductID string `json:"product_id" openapi:"required"`
	Quantity  int64  `json:"quantity" openapi:"required"` // 1 to 10,000.
}

// LaybyCreate is the body of POST /laybys.
type LaybyCreate struct {
	LocationID string           `json:"location_id" openapi:"required"` // The store holding the goods (where they are reserved).
	CustomerID string           `json:"customer_id" openapi:"required"` // The customer (lay-bys are always for someone).
	LineItems  []LaybyLineInput `json:"line_items" openapi:"required"`
	Deposit    LaybyTender      `json:"deposit" openapi:"required"` // The first instalment: at least the org's layby_min_deposit_bps of the total, less than the total.
}

// LaybyPay is the body of POST /laybys/:id/payments.
type LaybyPay = LaybyTender

// LaybyCancel is the body of POST /laybys/:id/cancel.
type LaybyCancel struct {
	By           string        `json:"by" openapi:"required,enum=LaybyCancelledBy"` // customer: the termination charge is kept; store: everything paid is refunded.
	RefundMethod PaymentMethod `json:"refund_method"`                               // cash (the default) or card: how the refund is paid out.
	RegisterID   string        `json:"register_id"`                                 // The till whose open drawer pays the refund out; "" : none.
}

// LaybyFilter selects lay-bys.
type LaybyFilter struct {
	Status     string
	CustomerID *string
	LocationID *string
	Page
}

// Validate checks a tender's shape; field prefixes the fields named.
func (t *LaybyTender) validate(v *Validation, field string) {
	v.Check(slices.Contains(LaybyTenders, t.Method), field+"method", "must be cash, card or gift_card")
	v.Check(t.Amount >= 1 && t.Amount <= MaxMoney, field+"amount", "must be 1 to 10^12 minor units")
	if t.Method == PaymentCard {
		v.Check(t.CardNumber != "", field+"card_number", "is required for a card")
	}
	v.Check(t.RegisterID == "" || ValidID(t.RegisterID), field+"register_id", "must be an id")
	if t.Method == PaymentGiftCard {
		_, ok := NormalizeGiftCardCode(t.GiftCardCode)
		v.Check(ok, field+"gift_card_code", "must be a gift card code")
	}
}

// Validate checks an instalment's body.
func (t *LaybyTender) Validate() error {
	var v Validation
	t.validate(&v, "")
	return v.Err()
}

// Validate checks a lay-by's body (the deposit against the total is
// CheckDeposit, once priced).
func (in *LaybyCreate) Validate() error {
	var v Validation
	v.Check(ValidID(in.LocationID), "location_id", "is required: an id")
	v.Check(ValidID(in.CustomerID), "customer_id", "is required: a lay-by is for a customer")
	v.Check(len(in.LineItems) >= 1 && len(in.LineItems) <= laybyMaxLines, "line_items", fmt.Sprintf("must hold 1 to %d lines", laybyMaxLines))
	for i, l := range in.LineItems {
		f := fmt.Sprintf("line_items[%d].", i)
		v.Check(ValidID(l.ProductID), f+"product_id", "must be an id")
		v.Check(l.Quantity >= 1 && l.Quantity <= MaxLineQuantity, f+"quantity", "must be 1 to 10000")
	}
	in.Deposit.validate(&v, "deposit.")
	return v.Err()
}

// Validate checks a cancellation's body.
func (in *LaybyCancel) Validate() error {
	var v Validation
	v.Check(in.By == LaybyByCustomer || in.By == LaybyByStore, "by", "must be customer or store")
	v.Check(in.RefundMethod == "" || in.RefundMethod == PaymentCash || in.RefundMethod == PaymentCard, "refund_method", "must be cash or card")
	v.Check(in.RegisterID == "" || ValidID(in.RegisterID), "register_id", "must be an id")
	return v.Err()
}

// CheckDeposit: the deposit is at least minBps of the total (rounded up)
// and less than the total (a deposit of the whole total is a sale).
func CheckDeposit(total, deposit int64, minBps int) error {
	least, _ := mulDivRound(total, int64(minBps), 10_000)
	least = max(least, 1)
	switch {
	case deposit >= total:
		return InvalidField("deposit.amount", fmt.Sprintf("must be less than the total %d: paying it all at once is a sale", total))
	case deposit < least:
		return InvalidField("deposit.amount", fmt.Sprintf("must be at least %d (%s of the total %d)", least, percent(int64(minBps)), total))
	}
	return nil
}

// Payable: an instalment of amount is taken only on an open lay-by and
// never beyond its balance.
func (l *Layby) Payable(amount int64) error {
	if l.Status != LaybyOpen {
		return Errorf(EConflict, "lay-by %s is %s: it takes no payment", l.ID, l.Status)
	}
	if amount > l.Balance {
		return InvalidField("amount", fmt.Sprintf("must be at most the balance %d", l.Balance))
	}
	return nil
}

// Completable: a lay-by is collected once open and fully paid.
func (l *Layby) Completable() error {
	if l.Status != LaybyOpen {
		return Errorf(EConflict, "lay-by %s is %s", l.ID, l.Status)
	}
	if l.Balance > 0 {
		return Errorf(EConflict, "lay-by %s still owes %d", l.ID, l.Balance)
	}
	return nil
}

// CancelTerms returns what a cancellation of l by by keeps (the
// termination charge) and refunds. A customer's cancellation keeps the
// org's charge, never more than was paid (Australian Consumer Law caps it
// at the seller's reasonable costs: docs/laybys.md); the store's keeps
// nothing. An expired lay-by keeps the charge fixed when it expired,
// whoever pays its refund out.
func (l *Layby) CancelTerms(by string, charge int64) (kept, refund int64, err error) {
	net := l.Paid - l.Refunded
	switch l.Status {
	case LaybyExpired:
		return l.TerminationCharge, net - l.TerminationCharge, nil
	case LaybyOpen:
	default:
		return 0, 0, Errorf(EConflict, "lay-by %s is %s", l.ID, l.Status)
	}
	if by == LaybyByCustomer {
		kept = min(max(charge, 0), net)
	}
	return kept, net - kept, nil
}

// Unsettled is money the lay-by holds that is the customer's and that no
// entry paid back: over its total (two stores took its last instalment
// while apart), or, once cancelled, what was paid less the charge kept and
// the refunds (an instalment taken at another store while this one
// cancelled it). Above 0 a person must refund it.
func (l *Layby) Unsettled() int64 {
	if l.Status == LaybyCancelled {
		return l.Paid - l.TerminationCharge - l.Refunded
	}
	return l.Paid - l.Total
}

// Expired reports whether an open lay-by not fully paid is past its term.
func (l *Layby) Expired(now time.Time) bool {
	return l.Status == LaybyOpen && l.Balance > 0 && !now.Before(l.ExpiresAt)
}

// LaybyService opens lay-bys, takes their instalments and closes them.
// Errors: ENotFound, EInvalid (naming the field), EConflict (a state that
// does not allow it), EForbidden.
type LaybyService interface {
	FindLaybys(ctx context.Context, f LaybyFilter) (List[Layby], error)
	FindLaybyByID(ctx context.Context, id string) (*Layby, error)
	CreateLayby(ctx context.Context, in *LaybyCreate) (*Layby, error)
	PayLayby(ctx context.Context, id string, in *LaybyPay) (*Layby, error)
	CompleteLayby(ctx context.Context, id string) (*Layby, error)
	CancelLayby(ctx context.Context, id string, in *LaybyCancel) (*Layby, error)
}

// Stock movements of lay-bys: the goods leave the sellable on-hand when
// the lay-by opens and come back when it is cancelled (RefLayby names it).
const (
	ReasonLaybyReserve = "layby_reserve"
	ReasonLaybyRelease = "layby_release"
	RefLayby           = "layby"
)

func init() {
	Enums["LaybyStatus"] = []string{LaybyOpen, LaybyCompleted, LaybyCancelled, LaybyExpired}
	Enums["LaybyCancelledBy"] = []string{LaybyByCustomer, LaybyByStore}
	Enums["LaybyEntry"] = []string{LaybyPaymentIn, LaybyRefundOut}
	Enums["MovementReason"] = append(Enums["MovementReason"], ReasonLaybyReserve, ReasonLaybyRelease)
	Enums["RefType"] = append(Enums["RefType"], RefLayby)
	EnumText["LaybyStatus"] = "A lay-by's state: open, then completed (paid and collected), cancelled, or expired (its refund is paid out by a cancel)."
	EnumText["LaybyCancelledBy"] = "Who ended a lay-by: the customer (the termination charge is kept) or the store (nothing is kept; also an expiry)."
	EnumText["LaybyEntry"] = "A lay-by money entry: a payment (an instalment, the deposit first) or the refund paid out on cancellation."
}
