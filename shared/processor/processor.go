// Package processor holds Kassa's payment processors: Cash, which computes
// change and always succeeds; CardSimulator, a card network stand-in with
// documented test cards and store-and-forward while offline; External,
// for money taken outside Kassa; and GiftCard, whose ledger is the store's. All implement kassa.Processor, the same
// interface a real acquirer integration would.
package processor

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"

	"kassa.dev/shared/kassa"
)

// Cash takes notes and coins: it always approves and captures, and hands
// back tendered − amount − tip as change.
type Cash struct{}

var _ kassa.Processor = Cash{}

// Charge approves and captures at once.
func (Cash) Charge(_ context.Context, r kassa.ChargeRequest) (kassa.ChargeResult, error) {
	tendered := max(r.Tendered, r.Amount+r.Tip)
	return kassa.ChargeResult{Approved: true, Captured: true, Ref: "cash_" + r.PaymentID, ChangeDue: tendered - r.Amount - r.Tip}, nil
}

// Forward is never needed: cash is not taken offline.
func (Cash) Forward(context.Context, string, int64, bool) (kassa.ChargeResult, error) {
	return kassa.ChargeResult{}, errors.New("processor: cash is not forwarded")
}

// Instant reports that cash needs no network round trip.
func (Cash) Instant() bool { return true }

// Capture is a no-op: cash is captured when taken.
func (Cash) Capture(context.Context, string, int64) error { return nil }

// Void hands the cash back.
func (Cash) Void(context.Context, string) error { return nil }

// Refund hands cash back from the drawer.
func (Cash) Refund(_ context.Context, ref string, amount int64) (string, error) {
	return fmt.Sprintf("%s_refund_%d", ref, amount), nil
}

// External records money taken outside Kassa (a voucher, a bank transfer).
type External struct{}

var _ kassa.Processor = External{}

// Charge approves and captures.
func (External) Charge(_ context.Context, r kassa.ChargeRequest) (kassa.ChargeResult, error) {
	return kassa.ChargeResult{Approved: true, Captured: true, Ref: "ext_" + r.PaymentID}, nil
}

// Forward is never needed for external money.
func (External) Forward(context.Context, string, int64, bool) (kassa.ChargeResult, error) {
	return kassa.ChargeResult{}, errors.New("processor: external payments are not forwarded")
}

// Instant reports that recording external money needs no network.
func (External) Instant() bool { return true }

// Capture is a no-op.
func (External) Capture(context.Context, string, int64) error { return nil }

// Void is a no-op.
func (External) Void(context.Context, string) error { return nil }

// Refund records the refund.
func (External) Refund(_ context.Context, ref string, amount int64) (string, error) {
	return fmt.Sprintf("%s_refund_%d", ref, amount), nil
}

// GiftCard takes gift cards: the card's ledger is in the store, which
// checks and debits the card in the payment's own unit of work, and
// credits it back on a void or refund (sqlite.PaymentService). As a
// processor it is External, but for its references.
type GiftCard struct{ External }

var _ kassa.Processor = GiftCard{}

// Charge approves and captures.
func (GiftCard) Charge(_ context.Context, r kassa.ChargeRequest) (kassa.ChargeResult, error) {
	return kassa.ChargeResult{Approved: true, Captured: true, Ref: "gift_" + r.PaymentID}, nil
}

// LoyaltyPoints takes loyalty points: the customer's points ledger is in
// the store, which debits it in the payment's own unit of work and
// credits it back on a void or refund (sqlite.PaymentService). As a
// processor it is External, but for its references.
type LoyaltyPoints struct{ External }

var _ kassa.Processor = LoyaltyPoints{}

// Charge approves and captures.
func (LoyaltyPoints) Charge(_ context.Context, r kassa.ChargeRequest) (kassa.ChargeResult, error) {
	return kassa.ChargeResult{Approved: true, Captured: true, Ref: "points_" + r.PaymentID}, nil
}

// StoreCredit takes a customer's store credit: its ledger is in the store,
// which debits it in the payment's own unit and credits it back on a void
// or refund (docs/returns.md). As a processor it is External, but for its
// references.
type StoreCredit struct{ External }

var _ kassa.Processor = StoreCredit{}

// Charge approves and captures.
func (StoreCredit) Charge(_ context.Context, r kassa.ChargeRequest) (kassa.ChargeResult, error) {
	return kassa.ChargeResult{Approved: true, Captured: true, Ref: "credit_" + r.PaymentID}, nil
}

// Test cards of the CardSimulator. Any other number that passes the Luhn
// check is approved; one that fails it is declined as invalid_number.
const (
	CardApprove           = "4242424242424242"
	CardDecline           = "4000000000000002" // declined: card_declined
	CardInsufficientFunds = "4000000000009995" // declined: insufficient_funds
	CardProcessingError   = "4000000000000119" // the network errors: processing_error
	// CardTerminalTip is approved, and the customer adds a tip of 10 %
	// of the amount (half up) on the terminal when the till sent none
	// (docs/tips.md): the result's Tip, charged with the amount.
	CardTerminalTip = "4000000000001505"
)

// TerminalTipPercent is the tip the customer of CardTerminalTip adds.
const TerminalTipPercent = 10

// TestCard is a card number the CardSimulator knows and what it does.
type TestCard struct {
	Number, Online, Offline string
}

// TestCards are the simulator's documented cards, as the README and the
// OpenAPI description list them (a test checks both).
var TestCards = []TestCard{
	{CardApprove, "approved (any other number that passes the Luhn check too)", "approved, and approved when forwarded"},
	{CardDecline, "failed, failure_reason card_declined", "approved at the till, declined card_declined when forwarded"},
	{CardInsufficientFunds, "failed, failure_reason insufficient_funds", "approved at the till, declined insufficient_funds when forwarded"},
	{CardProcessingError, "failed, failure_reason processing_error (the network errs)", "approved, and approved when forwarded"},
	{CardTerminalTip, "approved, with a tip of 10 % of the amount chosen on the terminal (unless the till sent a tip)", "the same, and approved when forwarded"},
	{"4242424242424241", "failed, failure_reason invalid_number (any number failing the Luhn check, or not 12-19 digits)", "the same: never taken offline"},
}

// ErrProcessing is the error of CardProcessingError.
var ErrProcessing = errors.New("processor: card network processing error")

// CardSimulator stands in for a card network. It keeps authorizations in
// memory; a payment it approved offline is approved again when forwarded,
// unless its number is a decline card (the merchant's offline risk).
type CardSimulator struct {
	mu    sync.Mutex
	auths map[string]*auth
}

type auth struct {
	amount, captured, refunded int64
	voided                     bool
}

// NewCardSimulator returns a simulator with no authorizations.
func NewCardSimulator() *CardSimulator { return &CardSimulator{auths: map[string]*auth{}} }

var _ kassa.Processor = (*CardSimulator)(nil)

// Charge authorizes (and captures when asked) the amount on a test card.
// Offline, it approves without asking the network and marks the result
// for forwarding.
func (s *CardSimulator) Charge(_ context.Context, r kassa.ChargeRequest) (kassa.ChargeResult, error) {
	num := strings.ReplaceAll(strings.ReplaceAll(r.CardNumber, " ", ""), "-", "")
	res := kassa.ChargeResult{}
	if len(num) >= 4 {
		res.CardLast4 = num[len(num)-4:]
	}
	if !luhn(num) {
		res.FailureReason = "invalid_number"
		return res, nil
	}
	if num == CardTerminalTip && r.Tip == 0 {
		res.Tip = (r.Amount*TerminalTipPercent + 50) / 100
	}
	if r.Offline {
		// The terminal approves on its own; the token records what the
		// network will answer when the payment is forwarded.
		res.Approved, res.Offline, res.Captured = true, true, r.Capture
		res.Ref = "offline_" + r.PaymentID
		res.Token = "simtok:approve:" + res.CardLast4
		switch num {
		case CardDecline:
			res.Token = "simtok:decline:card_declined:" + res.CardLast4
		case CardInsufficientFunds:
			res.Token = "simtok:decline:insufficient_funds:" + res.CardLast4
		}
		return res, nil
	}
	switch num {
	case CardDecline:
		res.FailureReason = "card_declined"
		return res, nil
	case CardInsufficientFunds:
		res.FailureReason = "insufficient_funds"
		return res, nil
	case CardProcessingError:
		return res, ErrProcessing
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	res.Ref = "sim_" + r.PaymentID
	charged := r.Amount + r.Tip + res.Tip
	a := &auth{amount: charged}
	if r.Capture {
		a.captured = charged
	}
	s.auths[res.Ref] = a
	res.Approved, res.Captured = true, r.Capture
	return res, nil
}

// Capture captures an authorization (up to its amount).
func (s *CardSimulator) Capture(_ context.Context, ref string, amount int64) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	a := s.auths[ref]
	switch {
	case strings.HasPrefix(ref, "offline_"):
		return nil
	case a == nil || a.voided:
		return fmt.Errorf("processor: no open authorization %s", ref)
	case amount > a.amount:
		return fmt.Errorf("processor: capture %d above authorization %d", amount, a.amount)
	}
	a.captured = amount
	return nil
}

// Void releases an authorization or reverses a capture before settlement.
func (s *CardSimulator) Void(_ context.Context, ref string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if a := s.auths[ref]; a != nil {
		a.voided = true
	}
	return nil
}

// Refund returns part of a captured amount.
func (s *CardSimulator) Refund(_ context.Context, ref string, amount int64) (string, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if a := s.auths[ref]; a != nil {
		if a.refunded+amount > a.captured {
			return "", fmt.Errorf("processor: refund above captured amount of %s", ref)
		}
		a.refunded += amount
	}
	return fmt.Sprintf("%s_refund_%d", ref, amount), nil
}

// Forward sends an offline payment to the network: the token says how the
// simulated network answers.
func (s *CardSimulator) Forward(_ context.Context, token string, amount int64, capture bool) (kassa.ChargeResult, error) {
	parts := strings.Split(token, ":")
	if len(parts) < 3 || parts[0] != "simtok" {
		return kassa.ChargeResult{}, fmt.Errorf("processor: not a simulator token")
	}
	res := kassa.ChargeResult{CardLast4: parts[len(parts)-1]}
	if parts[1] == "decline" {
		res.FailureReason = parts[2]
		return res, nil
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	res.Ref = fmt.Sprintf("sim_fwd_%d_%s", len(s.auths)+1, res.CardLast4)
	a := &auth{amount: amount}
	if capture {
		a.captured = amount
	}
	s.auths[res.Ref] = a
	res.Approved, res.Captured = true, capture
	return res, nil
}

// luhn reports whether num is 12-19 digits with a valid check digit.
func luhn(num string) bool {
	if len(num) < 12 || len(num) > 19 {
		return false
	}
	sum := 0
	for i := range len(num) {
		c := num[len(num)-1-i]
		if c < '0' || c > '9' {
			return false
		}
		d := int(c - '0')
		if i%2 == 1 {
			d *= 2
			if d > 9 {
				d -= 9
			}
		}
		sum += d
	}
	return sum%10 == 0
}
