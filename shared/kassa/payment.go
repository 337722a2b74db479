package kassa

import (
	"context"
	"time"
)

// PaymentMethod is how a payment is made.
type PaymentMethod string

// The payment methods.
const (
	PaymentCash     PaymentMethod = "cash"
	PaymentCard     PaymentMethod = "card"
	PaymentGiftCard PaymentMethod = "gift_card"
	PaymentExternal PaymentMethod = "external"
	// PaymentLoyaltyPoints pays with the order's customer's loyalty
	// points at the program's redemption value (docs/loyalty.md).
	PaymentLoyaltyPoints PaymentMethod = "loyalty_points"
)

// Valid reports whether m is a known method.
func (m PaymentMethod) Valid() bool {
	return m == PaymentCash || m == PaymentCard || m == PaymentGiftCard || m == PaymentExternal || m == PaymentLoyaltyPoints || m == PaymentStoreCredit
}

// Payment states.
const (
	PaymentPending           = "pending"
	PaymentAuthorized        = "authorized"
	PaymentCaptured          = "captured"
	PaymentVoided            = "voided"
	PaymentFailed            = "failed"
	PaymentRefunded          = "refunded"
	PaymentPartiallyRefunded = "partially_refunded"
)

// Payment is money taken (or attempted) for an order.
type Payment struct {
	ID             string        `json:"id"`
	OrgID          string        `json:"org_id"`
	OrderID        string        `json:"order_id"`
	LocationID     string        `json:"location_id"`
	Amount         int64         `json:"amount"`
	Method         PaymentMethod `json:"method"`                              // How it was paid.
	Status         string        `json:"status" openapi:"enum=PaymentStatus"` // The payment's state.
	Offline        bool          `json:"offline"`                             // taken while the edge had no uplink: a card store-and-forward, a gift card without the hub's authorization (within gift_card_offline_limit)
	ProcessorRef   *string       `json:"processor_ref"`
	Tendered       *int64        `json:"tendered"`        // cash handed over
	ChangeDue      *int64        `json:"change_due"`      // cash handed back
	CardLast4      *string       `json:"card_last4"`      // The last four digits of the card; null for other methods.
	RefundedAmount int64         `json:"refunded_amount"` // Refunded through this payment so far, in minor units.
	Tip            int64         `json:"tip"`             // The tip given on top of it, in minor units (docs/tips.md); 0: none. Not in amount.
	FailureReason  *string       `json:"failure_reason"`  // Why a failed payment failed (e.g. card_declined); null otherwise.
	CapturedAt     *time.Time    `json:"captured_at"`     // When it was captured; null until then.
	CreatedAt      time.Time     `json:"created_at"`
	UpdatedAt      time.Time     `json:"updated_at"`
}

// PaymentInitiate is the body of POST /payments/initiate. Capture defaults
// to true; false only authorizes (cards). Tendered is the cash handed over
// (default: the amount). CardNumber is only read by the card simulator and
// never stored beyond its last four digits.
type PaymentInitiate struct {
	OrderID    string        `json:"order_id" openapi:"required"`
	Amount     int64         `json:"amount" openapi:"required"`
	Method     PaymentMethod `json:"method" openapi:"required"` // How the customer pays. loyalty_points: the order's customer's points at the program's redemption_value, the amount a whole number of points (a multiple of it), within the customer's balance; refunds give the points back.
	Capture    *bool         `json:"capture"`                   // false only authorizes a card payment (capture it later); default true.
	Tendered   *int64        `json:"tendered"`                  // Cash handed over, in minor units, at least amount; the change is tendered minus amount.
	CardNumber string        `json:"card_number"`               // The card number, for the simulator of card payments; never stored (only its last four digits).
	// GiftCardCode is the code of the gift card that pays (method gift_card only).
	// RegisterID names the register (till) the payment is taken at: its
	// open drawer records the sale, and a cash payment moves its cash
	// (docs/drawers.md). Omitted: no drawer records it.
	RegisterID   string `json:"register_id"`
	Tip          int64  `json:"tip"`            // A tip on top of the amount, in minor units (cash and card; docs/tips.md): not in the order's total or tax; at most the org's tip_max_percent of the amount. Cash: tendered covers amount and tip.
	GiftCardCode string `json:"gift_card_code"` // The gift card's code, required for method gift_card (case, spaces and dashes do not matter). A connected store has the hub authorize the amount first; a store that cannot reach it takes the card within the org's gift_card_offline_limit, else 503.
}

// PaymentFilter selects payments.
type PaymentFilter struct {
	OrderID    *string
	LocationID *string
	Status     string
	Method     PaymentMethod
	Page
}

// Settlement sums a day's payments at a location by method. Date is the
// local date of the location.
type Settlement struct {
	Date       string        `json:"date"` // The local date (YYYY-MM-DD) at the location.
	LocationID string        `json:"location_id"`
	Method     PaymentMethod `json:"method"`  // The payment method.
	Count      int64         `json:"count"`   // Captured payments.
	Gross      int64         `json:"gross"`   // Their sum, in minor units.
	Refunds    int64         `json:"refunds"` // Refunded through them, in minor units.
	Net        int64         `json:"net"`     // gross minus refunds.
}

// SettlementFilter selects settlements by local date (YYYY-MM-DD, inclusive).
// An empty To is each location's own today, an empty From six days before
// To (see Days).
type SettlementFilter struct {
	From, To   string
	LocationID *string
	// Page pages the rows, ordered by date, location id and method, like
	// every list (the cursor names the last row of a page).
	Page Page
}

// MaxSettlementSpan is the longest range of dates a settlement query covers.
const MaxSettlementSpan = 366 * 24 * time.Hour

// Days returns the local dates, inclusive, that f covers at a location in
// zone at the instant now: To defaults to the location's today (a store
// east of UTC is already on tomorrow's date), From to six days before To.
// Errors: EBadRequest for a date that is not YYYY-MM-DD, dates out of order
// or more than MaxSettlementSpan apart.
func (f SettlementFilter) Days(now time.Time, zone *time.Location) (from, to string, err error) {
	const day = "2006-01-02"
	from, to = f.From, f.To
	if to == "" {
		to = now.In(zone).Format(day)
	}
	t, err2 := time.Parse(day, to)
	if from == "" && err2 == nil {
		from = t.AddDate(0, 0, -6).Format(day)
	}
	fr, err1 := time.Parse(day, from)
	if err1 != nil || err2 != nil || t.Before(fr) || t.Sub(fr) > MaxSettlementSpan {
		return "", "", Errorf(EBadRequest, "date_from and date_to must be dates (YYYY-MM-DD), in order, at most a year apart")
	}
	return from, to, nil
}

// PaymentService takes payments. A declined card is not an error: the
// payment is stored with status failed. Errors: ENotFound, EInvalid,
// EConflict (capture of a captured payment, void of a captured one, paying
// a closed order).
type PaymentService interface {
	FindPayments(ctx context.Context, f PaymentFilter) (List[Payment], error)
	FindPaymentByID(ctx context.Context, id string) (*Payment, error)
	Initiate(ctx context.Context, in *PaymentInitiate) (*Payment, error)
	Capture(ctx context.Context, id string) (*Payment, error)
	Void(ctx context.Context, id string) (*Payment, error)
	Settlements(ctx context.Context, f SettlementFilter) (List[Settlement], error)
}

// ChargeRequest asks a processor for money.
type ChargeRequest struct {
	PaymentID  string
	Amount     int64
	Currency   string
	Capture    bool
	Tendered   int64
	Tip        int64 // a tip on top of Amount, charged with it (cash: change is tendered − amount − tip)
	CardNumber string
	// Offline is set when the node has no uplink: a processor that can
	// store and forward does so, others refuse.
	Offline bool
}

// ChargeResult is a processor's answer. Declined is not an error.
type ChargeResult struct {
	Approved      bool
	Captured      bool
	Offline       bool // stored to forward later
	Ref           string
	ChangeDue     int64
	CardLast4     string
	FailureReason string
	// Tip is a tip the customer chose on the card terminal, charged on top
	// of the amount asked (docs/tips.md).
	Tip int64
	// Token identifies the card to the processor for forwarding a payment
	// taken offline (never the card number).
	Token string
}

// Processor talks to a payment network. Cash and the card simulator
// implement it; a real acquirer would too.
type Processor interface {
	Charge(ctx context.Context, r ChargeRequest) (ChargeResult, error)
	Capture(ctx context.Context, ref string, amount int64) error
	Void(ctx context.Context, ref string) error
	Refund(ctx context.Context, ref string, amount int64) (refundRef string, err error)
	// Forward sends a payment taken offline to the network once the node
	// is back online; a decline then is the merchant's loss, not an error.
	Forward(ctx context.Context, token string, amount int64, capture bool) (ChargeResult, error)
}
