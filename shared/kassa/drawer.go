package kassa

import (
	"context"
	"slices"
	"time"
)

// A drawer session is the cash in one register's drawer from its opening
// with a counted float to its blind close (docs/drawers.md). Every cash
// movement is an append-only DrawerEntry; the figures of an X or Z report
// are Tally of the session's entries, at any node the same.

// Drawer session states.
const (
	DrawerOpen   = "open"
	DrawerClosed = "closed"
)

// DrawerStatusRank orders a session's states: a closed drawer never opens
// again, whatever the stamps say.
func DrawerStatusRank(s string) int {
	if s == DrawerClosed {
		return 1
	}
	return 0
}

// DrawerEntryType is the kind of a drawer entry.
type DrawerEntryType string

// The drawer entry types. Sale and refund entries are written by the
// payment and refund they belong to; the others by the drawer's own calls.
const (
	DrawerFloat   DrawerEntryType = "float"    // the counted opening float
	DrawerSale    DrawerEntryType = "sale"     // a payment captured at the register (any method; only cash moves the drawer)
	DrawerRefund  DrawerEntryType = "refund"   // money returned through a payment at the register (negative)
	DrawerPaidIn  DrawerEntryType = "paid_in"  // cash put in, with a reason
	DrawerPaidOut DrawerEntryType = "paid_out" // cash taken out, with a reason (negative)
	DrawerNoSale  DrawerEntryType = "no_sale"  // the drawer opened without a sale (amount 0)
	// DrawerTip is a tip taken on a payment at the register (any method;
	// a cash tip is in the drawer), DrawerTipRefund one given back with
	// its payment (negative). docs/tips.md.
	DrawerTip       DrawerEntryType = "tip"
	DrawerTipRefund DrawerEntryType = "tip_refund"
)

// DrawerSession is one register's drawer from opening to close.
type DrawerSession struct {
	ID           string              `json:"id"`
	OrgID        string              `json:"org_id"`
	LocationID   string              `json:"location_id"`
	RegisterID   string              `json:"register_id"`                        // The register (till) it belongs to.
	Currency     string              `json:"currency"`                           // The location's currency, ISO 4217.
	BusinessDay  string              `json:"business_day"`                       // The location's business day it opened on (YYYY-MM-DD).
	Status       string              `json:"status" openapi:"enum=DrawerStatus"` // open, then closed.
	OpenedBy     string              `json:"opened_by"`                          // The staff member who opened it.
	OpenedByName string              `json:"opened_by_name"`                     // Their name, as this node knows the user ("" for an app).
	OpenedAt     time.Time           `json:"opened_at"`                          // When it was opened.
	Float        int64               `json:"float"`                              // The counted opening float, in minor units.
	FloatCount   []DenominationCount `json:"float_count"`                        // The float by denomination (empty when counted by amount).
	ClosedBy     *string             `json:"closed_by"`                          // Who closed it; null while open.
	ClosedAt     *time.Time          `json:"closed_at"`                          // When it was closed; null while open.
	ZReportID    *string             `json:"z_report_id"`                        // The Z report of its close.
	CreatedAt    time.Time           `json:"created_at"`
	UpdatedAt    time.Time           `json:"updated_at"`
}

// DrawerEntry is one append-only movement of a drawer.
type DrawerEntry struct {
	ID        string          `json:"id"`
	DrawerID  string          `json:"drawer_id"`  // The drawer session it moves.
	Type      DrawerEntryType `json:"type"`       // float, sale, refund, paid_in, paid_out or no_sale.
	Method    PaymentMethod   `json:"method"`     // The tender; cash for float, paid-in/out and no-sale.
	Amount    int64           `json:"amount"`     // Signed minor units: what the drawer's tally moves by (only cash moves the drawer).
	Tendered  *int64          `json:"tendered"`   // A cash sale: what the customer handed over.
	Change    *int64          `json:"change"`     // A cash sale: the change given back.
	PaymentID *string         `json:"payment_id"` // The payment of a sale or refund.
	RefundID  *string         `json:"refund_id"`  // The refund of a refund entry.
	Reason    string          `json:"reason"`     // Why, for paid-in and paid-out.
	CreatedBy string          `json:"created_by"` // The staff member (or app) that made it.
	CreatedAt time.Time       `json:"created_at"`
}

// TenderTotal sums one tender's sales and refunds at a register.
type TenderTotal struct {
	Method  PaymentMethod `json:"method"`         // The tender.
	Count   int64         `json:"count"`          // Sales.
	Sales   int64         `json:"sales"`          // Their sum, in minor units.
	Refunds int64         `json:"refunds"`        // Returned through it, in minor units (positive).
	Net     int64         `json:"net"`            // sales minus refunds.
	Tips    int64         `json:"tips,omitempty"` // Tips taken through it less tips given back, in minor units (absent: none).
}

// DrawerTotals are a drawer's figures: what X and Z reports show.
type DrawerTotals struct {
	Float        int64         `json:"float"`         // The opening float.
	CashSales    int64         `json:"cash_sales"`    // Cash payments taken (net of change).
	CashTendered int64         `json:"cash_tendered"` // Cash handed over by customers.
	ChangeGiven  int64         `json:"change_given"`  // Change handed back.
	CashRefunds  int64         `json:"cash_refunds"`  // Cash paid back on refunds (positive).
	PaidIn       int64         `json:"paid_in"`       // Cash put in.
	PaidOut      int64         `json:"paid_out"`      // Positive.
	Expected     int64         `json:"expected"`      // float + cash_sales − cash_refunds + paid_in − paid_out + cash_tips − cash_tips_refunded.
	Sales        int64         `json:"sales"`         // Sales at the register, all tenders.
	Refunds      int64         `json:"refunds"`       // Refund entries, all tenders.
	NoSales      int64         `json:"no_sales"`      // Drawer opens without a sale.
	Tenders      []TenderTotal `json:"tenders"`       // By tender, sorted by method.
	// Tips (docs/tips.md); absent when the drawer took none, so that a
	// drawer without tips tallies as it did before them.
	Tips             int64 `json:"tips,omitempty"`               // Tips taken at the register, all tenders.
	TipsRefunded     int64 `json:"tips_refunded,omitempty"`      // Tips given back there (positive).
	CashTips         int64 `json:"cash_tips,omitempty"`          // Cash tips: in the drawer.
	CashTipsRefunded int64 `json:"cash_tips_refunded,omitempty"` // Cash tips paid back from it (positive).
}

// Tally sums a drawer's entries. It depends on nothing but the entries,
// so every node that holds them tallies the same figures.
func Tally(entries []DrawerEntry) DrawerTotals {
	var t DrawerTotals
	tenders := map[PaymentMethod]*TenderTotal{}
	tender := func(m PaymentMethod) *TenderTotal {
		if tenders[m] == nil {
			tenders[m] = &TenderTotal{Method: m}
		}
		return tenders[m]
	}
	for _, e := range entries {
		cash := e.Method == PaymentCash
		switch e.Type {
		case DrawerFloat:
			t.Float += e.Amount
		case DrawerSale:
			t.Sales++
			tt := tender(e.Method)
			tt.Count++
			tt.Sales += e.Amount
			if cash {
				t.CashSales += e.Amount
				t.CashTendered += deref(e.Tendered, e.Amount)
				t.ChangeGiven += deref(e.Change, 0)
			}
		case DrawerRefund:
			t.Refunds++
			tender(e.Method).Refunds -= e.Amount
			if cash {
				t.CashRefunds -= e.Amount
			}
		case DrawerPaidIn:
			t.PaidIn += e.Amount
		case DrawerPaidOut:
			t.PaidOut -= e.Amount
		case DrawerNoSale:
			t.NoSales++
		case DrawerTip, DrawerTipRefund:
			t.tip(e, tender(e.Method))
		}
	}
	t.Expected = t.Float + t.CashSales - t.CashRefunds + t.PaidIn - t.PaidOut + t.CashTips - t.CashTipsRefunded
	t.Tenders = []TenderTotal{}
	for _, tt := range tenders {
		tt.Net = tt.Sales - tt.Refunds
		t.Tenders = append(t.Tenders, *tt)
	}
	slices.SortFunc(t.Tenders, func(a, b TenderTotal) int {
		if a.Method < b.Method {
			return -1
		}
		if a.Method > b.Method {
			return 1
		}
		return 0
	})
	return t
}

// tip adds a tip or tip refund entry to t and to its tender's tt.
func (t *DrawerTotals) tip(e DrawerEntry, tt *TenderTotal) {
	tt.Tips += e.Amount
	cash := e.Method == PaymentCash
	if e.Type == DrawerTip {
		t.Tips += e.Amount
		if cash {
			t.CashTips += e.Amount
		}
		return
	}
	t.TipsRefunded -= e.Amount
	if cash {
		t.CashTipsRefunded -= e.Amount
	}
}

func deref(p *int64, def int64) int64 {
	if p == nil {
		return def
	}
	return *p
}

// XReport is a drawer's figures so far; it closes nothing.
type XReport struct {
	Drawer DrawerSession `json:"drawer"` // The drawer session.
	DrawerTotals
	At time.Time `json:"at"` // When it was taken.
}

// ZReport is the immutable report of a drawer's close. Its number runs
// without gaps per register (1, 2, 3 …), its figures are Tally of the
// session's entries, and it is never changed once written.
type ZReport struct {
	ID          string `json:"id"`
	OrgID       string `json:"org_id"`
	LocationID  string `json:"location_id"`
	RegisterID  string `json:"register_id"`  // The register it is numbered on.
	DrawerID    string `json:"drawer_id"`    // The drawer session it closed.
	Number      int64  `json:"number"`       // The register's Z number: gapless, from 1.
	BusinessDay string `json:"business_day"` // The business day of the drawer session.
	Currency    string `json:"currency"`
	DrawerTotals
	Counted   int64               `json:"counted"`    // The blind count at close, in minor units.
	CountedBy []DenominationCount `json:"count"`      // The count by denomination.
	OverShort int64               `json:"over_short"` // counted − expected: positive over, negative short.
	Note      string              `json:"note"`       // The closer's note.
	OpenedBy  string              `json:"opened_by"`  // Who opened the drawer.
	OpenedAt  time.Time           `json:"opened_at"`  // When the drawer was opened.
	ClosedBy  string              `json:"closed_by"`  // Who counted and closed it.
	ClosedAt  time.Time           `json:"closed_at"`  // When it was closed.
	Origin    string              `json:"origin"`     // The node that closed it.
}

// DrawerOpenRequest is the body of POST /drawers: open a drawer at a
// register with a counted float.
type DrawerOpenRequest struct {
	RegisterID string    `json:"register_id" openapi:"required"` // The register to open the drawer at.
	Float      CashCount `json:"float" openapi:"required"`       // The counted opening float.
}

// DrawerCashRequest is the body of a paid-in or paid-out.
type DrawerCashRequest struct {
	Amount int64  `json:"amount" openapi:"required"` // Positive minor units.
	Reason string `json:"reason" openapi:"required"` // Why, 1–200 characters.
}

// DrawerNoSaleRequest is the body of a "no sale" drawer open.
type DrawerNoSaleRequest struct {
	Reason string `json:"reason"` // Optional, at most 200 characters.
}

// DrawerCloseRequest is the body of a blind close: the count only; the
// expected amount is shown in the answer.
type DrawerCloseRequest struct {
	Count CashCount `json:"count" openapi:"required"` // The blind count of the cash in the drawer.
	Note  string    `json:"note"`                     // At most 500 characters, e.g. why it is short.
}

// Validate checks a drawer opening (the float's count is checked against
// the location's currency by CashCount.Total).
func (in *DrawerOpenRequest) Validate() error {
	var v Validation
	v.Check(ValidID(in.RegisterID), "register_id", "must be the id of a register")
	return v.Err()
}

// Validate checks a paid-in or paid-out in currency cur.
func (in *DrawerCashRequest) Validate(cur CashCurrency) error {
	var v Validation
	v.Check(in.Amount > 0 && in.Amount <= cur.MaxCash(), "amount", "must be a positive amount in minor units, at most what a till holds")
	v.Check(in.Reason != "" && ValidText(in.Reason, 200), "reason", "is required: 1-200 characters of text")
	return v.Err()
}

// Validate checks a no-sale.
func (in *DrawerNoSaleRequest) Validate() error {
	var v Validation
	v.Check(ValidText(in.Reason, 200), "reason", "must be at most 200 characters of text")
	return v.Err()
}

// Validate checks a close's note (the count is checked by CashCount.Total).
func (in *DrawerCloseRequest) Validate() error {
	var v Validation
	v.Check(ValidText(in.Note, 500), "note", "must be at most 500 characters of text")
	return v.Err()
}

// DrawerFilter selects drawer sessions or Z reports.
type DrawerFilter struct {
	LocationID  *string
	RegisterID  *string
	Status      string
	BusinessDay string
	Page
}

// CanMoveDrawerCash reports whether a may record a paid-in or paid-out:
// managers and owners.
func CanMoveDrawerCash(a *Actor) error {
	if !a.IsStaff() {
		return Errorf(EForbidden, "only a manager or an owner can pay cash in or out of a drawer")
	}
	return nil
}

// DrawerService runs cash drawers. Errors: ENotFound, EInvalid,
// EForbidden, EConflict (a second open drawer on a register, a closed
// drawer, a paid-out beyond the drawer's cash).
type DrawerService interface {
	OpenDrawer(ctx context.Context, in *DrawerOpenRequest) (*DrawerSession, error)
	FindDrawers(ctx context.Context, f DrawerFilter) (List[DrawerSession], error)
	FindDrawerByID(ctx context.Context, id string) (*DrawerSession, error)
	DrawerEntries(ctx context.Context, id string) ([]DrawerEntry, error)
	PayIn(ctx context.Context, id string, in *DrawerCashRequest) (*DrawerEntry, error)
	PayOut(ctx context.Context, id string, in *DrawerCashRequest) (*DrawerEntry, error)
	NoSale(ctx context.Context, id string, in *DrawerNoSaleRequest) (*DrawerEntry, error)
	XReport(ctx context.Context, id string) (*XReport, error)
	CloseDrawer(ctx context.Context, id string, in *DrawerCloseRequest) (*ZReport, error)
	FindZReports(ctx context.Context, f DrawerFilter) (List[ZReport], error)
	FindZReportByID(ctx context.Context, id string) (*ZReport, error)
}
