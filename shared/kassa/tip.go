package kassa

import (
	"context"
	"fmt"
	"time"
)

// Tips (docs/tips.md): money a customer gives the staff on top of a
// payment, cash or card, entered at the till (PaymentInitiate.Tip) or sent
// by the card terminal (ChargeResult.Tip). A tip is kept apart from the
// sale: it is not in the order's total or its tax, not in the payment's
// amount and not in the sales reports' revenue. It is on the receipt, in
// the drawer (a tip entry: a cash tip is in the expected cash) and in the
// tips report, per staff member.

// Tip states.
const (
	TipHeld     = "held"     // taken with its payment
	TipRefunded = "refunded" // given back with the whole of its payment
	TipVoided   = "voided"   // its payment was voided
)

// Tip sources.
const (
	TipFromTill     = "till"     // entered at the till (or by an API client)
	TipFromTerminal = "terminal" // chosen by the customer on the card terminal
)

// DefaultTipMaxPercent is a new org's tip_max_percent: a tip of at most
// the payment's own amount.
const DefaultTipMaxPercent = 100

// MaxTipMaxPercent bounds the setting tip_max_percent.
const MaxTipMaxPercent = 1000

// Tip is the tip on one payment.
type Tip struct {
	ID         string        `json:"id"`
	OrgID      string        `json:"org_id"`
	LocationID string        `json:"location_id"`
	PaymentID  string        `json:"payment_id"`                      // The payment it was given on (one tip per payment).
	OrderID    string        `json:"order_id"`                        // The payment's order.
	Method     PaymentMethod `json:"method"`                          // The payment's method: a cash tip is in the drawer.
	Amount     int64         `json:"amount"`                          // In minor units; never changes.
	Source     string        `json:"source" openapi:"enum=TipSource"` // till or terminal.
	StaffID    string        `json:"staff_id"`                        // The staff member it is credited to: who took the payment.
	RegisterID *string       `json:"register_id"`                     // The till it was taken at; null: none.
	Status     string        `json:"status" openapi:"enum=TipStatus"` // held, refunded or voided.
	RefundID   *string       `json:"refund_id"`                       // The refund that gave it back.
	RefundedAt *time.Time    `json:"refunded_at"`                     // When it was given back.
	CreatedAt  time.Time     `json:"created_at"`
}

// TipBound is the largest tip on a payment of amount under the org's
// tip_max_percent (half up).
func TipBound(amount int64, maxPercent int) int64 {
	return (amount*int64(maxPercent) + 50) / 100
}

// CheckTip decides whether a payment request may carry its tip: a tip of
// 0 to the org's bound (tip_max_percent of the amount), captured at once,
// and on cash covered by what was tendered. Errors: EInvalid naming tip.
func CheckTip(in *PaymentInitiate, st *OrgSettings) error {
	if in.Tip == 0 {
		return nil
	}
	if bound := TipBound(in.Amount, st.TipMaxPercent); in.Tip > bound {
		return InvalidField("tip", fmt.Sprintf("must be at most %d (tip_max_percent %d %% of the amount)", bound, st.TipMaxPercent))
	}
	return nil
}

// validTip checks a payment request's tip shape (PaymentInitiate.Validate).
func validTip(v *Validation, in *PaymentInitiate) {
	v.Check(in.Tip >= 0 && in.Tip <= MaxMoney, "tip", "must be 0 or more minor units")
	if in.Tip == 0 {
		return
	}
	v.Check(in.Method == PaymentCash || in.Method == PaymentCard, "tip", "only applies to cash and card payments")
	v.Check(in.Capture == nil || *in.Capture, "tip", "needs the payment captured at once")
	if in.Tendered != nil {
		v.Check(*in.Tendered >= in.Amount+in.Tip, "tendered", "must cover the amount and the tip")
	}
}

// TipFilter selects tips.
type TipFilter struct {
	OrderID   *string
	PaymentID *string
	StaffID   *string
	Page
}

// ReportTips is the tips report: tips per staff member.
const ReportTips ReportKind = "tips"

func init() {
	Enums["TipStatus"], EnumText["TipStatus"] = []string{TipHeld, TipRefunded, TipVoided}, "A tip's state: held, then refunded (with the whole of its payment) or voided (with its payment)."
	Enums["TipSource"], EnumText["TipSource"] = []string{TipFromTill, TipFromTerminal}, "Where a tip was entered: at the till (or by an API client), or on the card terminal."
	reportGroupings[ReportTips] = []ReportGrouping{GroupStaff, GroupNone, GroupDay, GroupLocation, GroupRegister, GroupPaymentMethod}
}

// TipRow sums tips: given in the range (booked on the business day of
// their payment) and given back in it (on the day of the refund).
type TipRow struct {
	Group    string `json:"group"`                   // The grouping's key: a staff member's id, a business day, an id, a tender.
	Label    string `json:"label"`                   // The group's name (a staff member's, a location's …).
	Currency string `json:"currency"`                // ISO 4217.
	Count    int64  `json:"count"`                   // Tips given.
	Tips     int64  `json:"tips" report:"money"`     // Their sum.
	Refunded int64  `json:"refunded" report:"money"` // Tips given back (with their payment).
	Net      int64  `json:"net" report:"money"`      // tips less refunded.
	Cash     int64  `json:"cash" report:"money"`     // Net cash tips: in the drawers.
	Card     int64  `json:"card" report:"money"`     // Net card tips: paid out to staff from the card takings.
}

// TipService reads tips and reports them. Tips are written by the
// payments and refunds they belong to, never on their own.
type TipService interface {
	FindTips(ctx context.Context, f TipFilter) (List[Tip], error)
	FindTipByID(ctx context.Context, id string) (*Tip, error)
	TipsReport(ctx context.Context, f ReportFilter, emit func(*TipRow) error) (*ReportInfo, error)
}
