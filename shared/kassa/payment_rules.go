package kassa

import "fmt"

// The payment decisions: the shape of a payment request, whether an order
// takes it, the offline card limits, what a processor's answer does, and
// when a payment may be captured or voided. Pure functions; the store reads
// the rows, calls the processor and writes what these decide.

// Validate checks the shape of a payment request: an order id, an amount
// of 1–MaxMoney, a known method, a tendered sum only for cash and covering
// the amount, a card number for cards, and capture=false only for cards.
func (in *PaymentInitiate) Validate() error {
	var v Validation
	v.Check(ValidID(in.OrderID), "order_id", "is required: an id")
	v.Check(in.Amount > 0 && in.Amount <= MaxMoney, "amount", "must be positive")
	v.Check(in.Method.Valid(), "method", "must be one of cash, card, gift_card, external, loyalty_points, store_credit")
	if in.Tendered != nil {
		v.Check(in.Method == PaymentCash, "tendered", "only applies to cash")
		v.Check(*in.Tendered >= in.Amount && *in.Tendered <= MaxMoney, "tendered", "must cover the amount")
	}
	validTip(&v, in)
	v.Check(in.Method != PaymentCard || in.CardNumber != "", "card_number", "is required for card payments")
	v.Check(len(in.CardNumber) <= 32, "card_number", "is too long")
	v.Check(in.RegisterID == "" || ValidID(in.RegisterID), "register_id", "must be the id of a register")
	if in.Method == PaymentGiftCard {
		_, ok := NormalizeGiftCardCode(in.GiftCardCode)
		v.Check(in.GiftCardCode != "", "gift_card_code", "is required for gift card payments")
		v.Check(in.GiftCardCode == "" || ok, "gift_card_code", "must be a gift card code: 16 characters")
	} else {
		v.Check(in.GiftCardCode == "", "gift_card_code", "only applies to gift card payments")
	}
	v.Check(in.Capture == nil || *in.Capture || in.Method == PaymentCard, "capture", "only card payments can be authorized without capture")
	return v.Err()
}

// MethodUnsupported is the EInvalid error for a method this node has no
// processor for.
func MethodUnsupported(m PaymentMethod) *Error {
	return InvalidField("method", fmt.Sprintf("%s is not supported on this node", m))
}

// AuthorizedTotal sums o's payments not yet captured but holding money
// (pending or authorized).
func (o *Order) AuthorizedTotal() int64 {
	var n int64
	for _, p := range o.Payments {
		if p.Status == PaymentAuthorized || p.Status == PaymentPending {
			n += p.Amount
		}
	}
	return n
}

// Payable decides whether order o (with its payments) takes a payment of
// amount by method under the org's settings: the method enabled, the order
// open, the amount at most what is due (total less paid and authorized).
// Errors: EInvalid (method, amount), EConflict (order not open).
func Payable(o *Order, st *OrgSettings, method PaymentMethod, amount int64) error {
	if !st.Accepts(method) {
		return InvalidField("method", fmt.Sprintf("%s is not enabled for this org", method))
	}
	if o.Status != OrderOpen {
		return Errorf(EConflict, "order %s is %s; payments are taken on open orders", o.Number, o.Status)
	}
	if due := o.Total - o.PaidTotal - o.AuthorizedTotal(); amount > due {
		return InvalidFields("the payment exceeds the amount due",
			FieldError{Field: "amount", Message: fmt.Sprintf("must be at most %d", max(due, 0))})
	}
	return nil
}

// Failure reasons of card payments refused by the offline limits.
const (
	OfflineLimitExceeded      = "offline_limit_exceeded"
	OfflineDailyLimitExceeded = "offline_daily_limit_exceeded"
)

// OfflineCardRefusal returns why an offline card payment of amount is
// refused, or "": above the org's per-payment limit, or taking the
// location's offline card payments of the (UTC) day, takenToday so far,
// above the daily limit.
func OfflineCardRefusal(st *OrgSettings, amount, takenToday int64) string {
	if amount > st.OfflineCardLimit {
		return OfflineLimitExceeded
	}
	if takenToday+amount > st.OfflineCardDailyLimit {
		return OfflineDailyLimitExceeded
	}
	return ""
}

// ChargeOutcome is what a processor's answer does to a payment and its
// order.
type ChargeOutcome struct {
	Status        string // failed, captured or authorized
	Event         string // the event to publish; "" for an authorization
	FailureReason string // set when failed
	// ChangeDue is the cash handed back, set for a captured cash payment.
	ChangeDue *int64
	// Paid is what the order's paid total grows by (a capture).
	Paid int64
	// Forward: taken offline and approved with a token, so the payment is
	// queued to be forwarded to the network once the node is online.
	Forward bool
}

// OutcomeOf decides what answer res to a charge of amount by method does.
// A decline is not an error: the payment fails.
func OutcomeOf(method PaymentMethod, amount int64, res ChargeResult) ChargeOutcome {
	out := ChargeOutcome{Forward: res.Offline && res.Approved && res.Token != ""}
	switch {
	case !res.Approved:
		out.Status, out.Event, out.FailureReason = PaymentFailed, EventPaymentFailed, res.FailureReason
	case res.Captured:
		out.Status, out.Event, out.Paid = PaymentCaptured, EventPaymentCaptured, amount
		if method == PaymentCash {
			change := res.ChangeDue
			out.ChangeDue = &change
		}
	default:
		out.Status = PaymentAuthorized
	}
	return out
}

// Capturable says why payment p of order o cannot be captured, if it
// cannot: only an authorized payment of an open order can. Errors: EConflict.
func Capturable(o *Order, p *Payment) error {
	if p.Status != PaymentAuthorized {
		return Errorf(EConflict, "payment %s is %s; only authorized payments can be captured", p.ID, p.Status)
	}
	if o.Status != OrderOpen {
		return Errorf(EConflict, "order %s is %s", o.Number, o.Status)
	}
	return nil
}

// Voidable says why payment p of order o cannot be voided, if it cannot:
// a pending or authorized payment can, a captured one only while its order
// is open (otherwise the order is refunded). Errors: EConflict.
func Voidable(o *Order, p *Payment) error {
	switch {
	case p.Status == PaymentCaptured && o.Status != OrderOpen:
		return Errorf(EConflict, "payment %s belongs to a %s order; refund the order instead", p.ID, o.Status)
	case p.Status != PaymentCaptured && p.Status != PaymentAuthorized && p.Status != PaymentPending:
		return Errorf(EConflict, "payment %s is %s and cannot be voided", p.ID, p.Status)
	}
	return nil
}
