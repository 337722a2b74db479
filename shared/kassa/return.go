package kassa

import (
	"context"
	"fmt"
)

// Where a return's money goes (docs/returns.md).
const (
	RefundToOriginal    = "original"     // back through the order's payments, newest first
	RefundToStoreCredit = "store_credit" // onto the customer's store credit
)

// NoReceiptWindowDays is how far back a return without receipt looks for
// the lowest price its product sold at: it credits the lower of that and
// the product's price now.
const NoReceiptWindowDays = 90

// ReturnLineInput is one line of a return: with a receipt, a line of the
// order and a quantity of it; without, a product and a quantity.
type ReturnLineInput struct {
	LineItemID string `json:"line_item_id"`                // With a receipt: the order line returned.
	ProductID  string `json:"product_id"`                  // Without a receipt: the product returned.
	Quantity   int64  `json:"quantity" openapi:"required"` // Units, 1-10000; with a receipt at most what was sold less what was returned before.
	Restock    bool   `json:"restock"`                     // Put the units back on sale at the store (damaged goods: false).
}

// ReturnRequest is the body of POST /returns. With order_id (the receipt:
// the order found by its number) its lines come back to the original
// tender or to store credit; without, the products come back to store
// credit only, and only a manager or owner (or a cashier with a manager's
// approval_token) may take them.
type ReturnRequest struct {
	OrderID    string            `json:"order_id"`    // The receipt's order; empty: a return without receipt.
	LocationID string            `json:"location_id"` // Without a receipt (required then): the store taking the goods back.
	CustomerID *string           `json:"customer_id"` // Whose store credit: the order's customer, else this one (required for store credit then).
	LineItems  []ReturnLineInput `json:"line_items" openapi:"required"`
	RefundTo   string            `json:"refund_to" openapi:"enum=RefundTo"` // original (default with a receipt) or store_credit (always without one).
	Reason     string            `json:"reason"`                            // Why, as the customer says (at most 500 characters).
	RegisterID string            `json:"register_id"`                       // The till: its open drawer pays cash back and counts it.
	// A manager's or owner's access token: approves a cashier's refund
	// above refund_limit, or a return without receipt.
	ApprovalToken string `json:"approval_token"`
	Approver      *Actor `json:"-"`
}

// Return is what a return did: the money, where it went, the lines and
// the order or store credit after it.
type Return struct {
	ID          string       `json:"id"` // The order refund's id with a receipt, the store credit entry's without.
	OrderID     *string      `json:"order_id"`
	LocationID  string       `json:"location_id"`
	CustomerID  *string      `json:"customer_id"`
	Amount      int64        `json:"amount"`                            // What the goods were worth, in minor units.
	RefundTo    string       `json:"refund_to" openapi:"enum=RefundTo"` // original or store_credit.
	ToTender    int64        `json:"to_tender"`                         // Of amount, given back through the order's payments.
	ToCredit    int64        `json:"to_credit"`                         // Of amount, credited to the customer's store credit.
	Lines       []ReturnLine `json:"line_items"`
	Order       *Order       `json:"order"`        // The order after the return; null without a receipt.
	StoreCredit *StoreCredit `json:"store_credit"` // The customer's store credit after it; null when none was credited.
}

// ReturnLine is a returned quantity and what it was worth.
type ReturnLine struct {
	LineItemID *string `json:"line_item_id"` // The order line returned; null without a receipt.
	ProductID  string  `json:"product_id"`   // The product that came back.
	Quantity   int64   `json:"quantity"`     // Units returned.
	Restock    bool    `json:"restock"`      // Put back on sale.
	Amount     int64   `json:"amount"`       // What they were worth, in minor units.
}

// ExchangeRequest is the body of POST /exchanges: lines of a past order
// come back and new ones are sold, in one call. The return's value pays
// the new sale (through the customer's store credit); what the new sale
// costs beyond it is due on the new order (any tender, then complete);
// what the return is worth beyond the new sale goes to difference_to.
type ExchangeRequest struct {
	OrderID       string            `json:"order_id" openapi:"required"`           // The receipt's order.
	CustomerID    *string           `json:"customer_id"`                           // When the order has no customer: whose store credit carries the value.
	ReturnLines   []ReturnLineInput `json:"return_lines" openapi:"required"`       // The order's lines coming back, as POST /returns takes them.
	LineItems     []OrderLineInput  `json:"line_items" openapi:"required"`         // The new sale, priced as POST /orders prices it.
	DifferenceTo  string            `json:"difference_to" openapi:"enum=RefundTo"` // original (default) or store_credit.
	Reason        string            `json:"reason"`                                // Why, as the customer says.
	RegisterID    string            `json:"register_id"`                           // The till: its drawer pays cash back and takes the new sale's store credit payment.
	ApprovalToken string            `json:"approval_token"`                        // A manager's or owner's access token approving a return above the caller's refund_limit.
	Approver      *Actor            `json:"-"`
}

// Exchange is what an exchange did: the return, and the new order paid
// with its value (completed when that paid it all).
type Exchange struct {
	Return *Return `json:"return"` // The return of return_lines.
	Order  *Order  `json:"order"`  // The new sale.
	Due    int64   `json:"due"`    // What the customer still pays on the new order (then complete it); 0: completed.
}

// ReturnService takes goods back and exchanges them. Errors: ENotFound,
// EInvalid (naming the field), EConflict, EForbidden (a return without
// receipt by a cashier without a manager's approval; a refund above the
// refund limit).
type ReturnService interface {
	Return(ctx context.Context, in *ReturnRequest) (*Return, error)
	Exchange(ctx context.Context, in *ExchangeRequest) (*Exchange, error)
}

// Validate checks the shape of a return: an order or products, at most
// MaxOrderLines lines each listed once, quantities of 1–MaxLineQuantity,
// a destination, store credit without a receipt.
func (in *ReturnRequest) Validate() error {
	var v Validation
	receipt := in.OrderID != ""
	v.Check(!receipt || ValidID(in.OrderID), "order_id", "must be an order's id")
	v.Check(in.LocationID == "" || ValidID(in.LocationID), "location_id", "must be a location's id")
	v.Check(in.CustomerID == nil || ValidID(*in.CustomerID), "customer_id", "must be a customer's id")
	v.Check(in.RefundTo == "" || in.RefundTo == RefundToOriginal || in.RefundTo == RefundToStoreCredit, "refund_to", "must be original or store_credit")
	v.Check(receipt || in.RefundTo != RefundToOriginal, "refund_to", "a return without receipt refunds only to store credit")
	v.Check(ValidText(in.Reason, 500), "reason", "must be at most 500 characters of text")
	v.Check(in.RegisterID == "" || ValidID(in.RegisterID), "register_id", "must be the id of a register")
	validateReturnLines(&v, "line_items", in.LineItems, receipt)
	return v.Err()
}

// Destination is where the return's money goes: the request's, else the
// original tender with a receipt and store credit without.
func (in *ReturnRequest) Destination() string {
	if in.OrderID == "" {
		return RefundToStoreCredit
	}
	if in.RefundTo == "" {
		return RefundToOriginal
	}
	return in.RefundTo
}

// Validate checks an exchange: an order, its return lines, the new lines
// and where the difference goes.
func (in *ExchangeRequest) Validate() error {
	var v Validation
	v.Check(ValidID(in.OrderID), "order_id", "is required: the receipt's order id")
	v.Check(in.CustomerID == nil || ValidID(*in.CustomerID), "customer_id", "must be a customer's id")
	v.Check(in.DifferenceTo == "" || in.DifferenceTo == RefundToOriginal || in.DifferenceTo == RefundToStoreCredit, "difference_to", "must be original or store_credit")
	v.Check(ValidText(in.Reason, 500), "reason", "must be at most 500 characters of text")
	v.Check(in.RegisterID == "" || ValidID(in.RegisterID), "register_id", "must be the id of a register")
	v.Check(len(in.LineItems) >= 1, "line_items", "an exchange sells at least one line (a return alone is POST /returns)")
	validateReturnLines(&v, "return_lines", in.ReturnLines, true)
	return v.Err()
}

// validateReturnLines checks a return's lines: 1 to MaxOrderLines, each
// naming an order line (with a receipt) or a product (without), once.
func validateReturnLines(v *Validation, field string, lines []ReturnLineInput, receipt bool) {
	v.Check(len(lines) >= 1 && len(lines) <= MaxOrderLines, field, "must have 1-100 entries")
	seen := map[string]bool{}
	for i, l := range lines {
		at := fmt.Sprintf("%s[%d]", field, i)
		key := l.ProductID
		if receipt {
			key = l.LineItemID
			v.Check(ValidID(l.LineItemID) && l.ProductID == "", at+".line_item_id", "is required with a receipt: a line of the order (no product_id)")
		} else {
			v.Check(ValidID(l.ProductID) && l.LineItemID == "", at+".product_id", "is required without a receipt: a product (no line_item_id)")
		}
		v.Check(!seen[key], at, "is listed twice")
		seen[key] = true
		v.Check(l.Quantity >= 1 && l.Quantity <= MaxLineQuantity, at+".quantity", "must be 1-10000")
	}
}

// MayReturnWithoutReceipt reports whether a may take goods back without
// a receipt: a manager or owner; a cashier only with a manager's or
// owner's approval (approver). Partner apps may not: the goods are at the
// counter.
func MayReturnWithoutReceipt(a, approver *Actor) bool {
	if a != nil && a.UserID != "" && a.IsStaff() {
		return true
	}
	return a != nil && approver != nil && approver.OrgID == a.OrgID && approver.UserID != "" && approver.IsStaff()
}

// NoReceiptCredit is what a return without receipt credits for quantity
// units of a product whose price is now and whose lowest unit price sold
// in the last NoReceiptWindowDays was lowest (0: none sold): the lower.
func NoReceiptCredit(now, lowest, quantity int64) int64 {
	unit := now
	if lowest > 0 && lowest < unit {
		unit = lowest
	}
	return unit * quantity
}
