package kassa

import (
	"context"
	"crypto/rand"
	"fmt"
	"strings"
	"time"
)

// GiftCard is stored value an org sells and takes back as tender. Its
// balance is the sum of its transactions (docs/giftcards.md); the code is
// what the customer holds, unique in the org, and is shown in full only to
// actors that may take payments (MaskCode).
type GiftCard struct {
	ID            string     `json:"id"`
	OrgID         string     `json:"org_id"`
	Code          string     `json:"code"`                                 // 16 characters of GiftCardAlphabet; masked but for its last 4 without payments:write.
	Currency      string     `json:"currency"`                             // ISO 4217 code; only orders in it are paid with the card.
	InitialAmount int64      `json:"initial_amount"`                       // What the card was issued with, in minor units.
	Balance       int64      `json:"balance"`                              // Sum of its transactions, in minor units; below 0 only after two stores redeemed it offline.
	Status        string     `json:"status" openapi:"enum=GiftCardStatus"` // active, or disabled: it pays nothing.
	CustomerID    *string    `json:"customer_id"`                          // The customer it was sold to, if any.
	ExpiresAt     *time.Time `json:"expires_at"`                           // After it the card pays nothing; null: never.
	CreatedAt     time.Time  `json:"created_at"`
	UpdatedAt     time.Time  `json:"updated_at"`
}

// Gift card states.
const (
	GiftCardActive   = "active"
	GiftCardDisabled = "disabled"
	// GiftCardPending is a card sold on an order line whose order has not
	// completed: it pays nothing and takes no reload until it activates.
	GiftCardPending = "pending"
)

// GiftCardTxnType is the kind of a gift card transaction.
type GiftCardTxnType string

// The gift card transaction types.
const (
	GiftCardTxnIssue  GiftCardTxnType = "issue"
	GiftCardTxnRedeem GiftCardTxnType = "redeem"
	GiftCardTxnRefund GiftCardTxnType = "refund"
	GiftCardTxnAdjust GiftCardTxnType = "adjust"
	// GiftCardTxnReload (+) is a reload sold on an order line, credited
	// when the order completes.
	GiftCardTxnReload GiftCardTxnType = "reload"
	// GiftCardTxnTakeback (−) takes back what is left of a refunded gift
	// card line's amount.
	GiftCardTxnTakeback GiftCardTxnType = "takeback"
)

// GiftCardTransaction is one append-only entry of a card's ledger; the
// amount is signed minor units (a redeem is negative).
type GiftCardTransaction struct {
	ID         string          `json:"id"`
	OrgID      string          `json:"org_id"`
	GiftCardID string          `json:"gift_card_id"` // The card whose ledger it is in.
	Type       GiftCardTxnType `json:"type"`         // issue, redeem, refund, reload, takeback or adjust.
	Amount     int64           `json:"amount"`       // Signed minor units: issue and refund positive, redeem negative.
	OrderID    *string         `json:"order_id"`     // The order a redeem or refund paid or returned.
	PaymentID  *string         `json:"payment_id"`   // The gift_card payment a redeem or refund belongs to.
	LineID     *string         `json:"line_id"`      // The order's gift card line an issue, reload or takeback belongs to.
	Origin     string          `json:"origin"`       // The node that wrote it.
	CreatedAt  time.Time       `json:"created_at"`
}

// GiftCardIssue is the body of POST /gift-cards: the code is generated.
type GiftCardIssue struct {
	InitialAmount int64      `json:"initial_amount" openapi:"required"` // 1 to 10^12 minor units.
	Currency      string     `json:"currency"`                          // Default: the org's currency.
	CustomerID    *string    `json:"customer_id"`
	ExpiresAt     *time.Time `json:"expires_at"` // In the future; null: never expires.
}

// GiftCardFilter selects gift cards.
type GiftCardFilter struct {
	Status     string
	CustomerID *string
	Page
}

// GiftCardService issues, finds, disables and re-enables gift cards; redeeming and
// refunding happen through payments. Errors: ENotFound, EInvalid, EConflict.
type GiftCardService interface {
	FindGiftCards(ctx context.Context, f GiftCardFilter) (List[GiftCard], error)
	FindGiftCardByID(ctx context.Context, id string) (*GiftCard, error)
	FindGiftCardByCode(ctx context.Context, code string) (*GiftCard, error)
	IssueGiftCard(ctx context.Context, in *GiftCardIssue) (*GiftCard, error)
	DisableGiftCard(ctx context.Context, id string) (*GiftCard, error)
	EnableGiftCard(ctx context.Context, id string) (*GiftCard, error)
	FindGiftCardTransactions(ctx context.Context, id string, p Page) (List[GiftCardTransaction], error)
}

// GiftCardAlphabet is the alphabet of gift card codes: digits and capitals
// without 0/O, 1/I/L, so a code read aloud or typed is not mistaken.
const GiftCardAlphabet = "23456789ABCDEFGHJKMNPQRSTUVWXYZ"

// GiftCardCodeLen is the length of a gift card code.
const GiftCardCodeLen = 16

// NewGiftCardCode returns a random code of GiftCardCodeLen characters of
// GiftCardAlphabet, from crypto/rand (about 79 bits).
func NewGiftCardCode() string {
	var b [GiftCardCodeLen]byte
	out := make([]byte, GiftCardCodeLen)
	n := byte(len(GiftCardAlphabet))
	limit := 256 - 256%int(n) // rejection sampling: no modulo bias
	for i := 0; i < GiftCardCodeLen; {
		rand.Read(b[:])
		for _, c := range b {
			if int(c) < limit && i < GiftCardCodeLen {
				out[i] = GiftCardAlphabet[c%n]
				i++
			}
		}
	}
	return string(out)
}

// NormalizeGiftCardCode reads a code as a person types it: case, spaces
// and dashes do not matter. It reports false for anything that is not a
// code.
func NormalizeGiftCardCode(s string) (string, bool) {
	s = strings.ToUpper(strings.NewReplacer(" ", "", "-", "").Replace(s))
	if len(s) != GiftCardCodeLen {
		return "", false
	}
	for i := 0; i < len(s); i++ {
		if strings.IndexByte(GiftCardAlphabet, s[i]) < 0 {
			return "", false
		}
	}
	return s, true
}

// MaskCode hides all but the last four characters of the code unless the
// actor may take payments (payments:write): staff at the till and apps
// that redeem see it; read-only reporting does not.
func (g *GiftCard) MaskCode(a *Actor) {
	if a != nil && a.Has(ScopePaymentsWrite) {
		return
	}
	g.Code = MaskedGiftCardCode(g.Code)
}

// MaskedGiftCardCode is a code as events, webhooks and read-only readers
// see it: all but its last four characters hidden.
func MaskedGiftCardCode(code string) string {
	if len(code) <= 4 {
		return code
	}
	return strings.Repeat("•", len(code)-4) + code[len(code)-4:]
}

// MayIssueGiftCards reports whether a may issue (or disable) a gift
// card: a card is stored value made without a sale's payment, so a
// manager, an owner or a partner app granted payments:write may, a
// cashier may not — as a cashier may give no manual discount beyond the
// role's limit. The hub replays it on an edge's cards.
func MayIssueGiftCards(a *Actor) bool {
	return a != nil && a.Has(ScopePaymentsWrite) && (a.IsStaff() || a.ClientID != "")
}

// Validate checks an issue request at now: an amount within the money
// limits, a currency code when given, an id for the customer, an expiry
// in the future.
func (in *GiftCardIssue) Validate(now time.Time) error {
	var v Validation
	v.Check(in.InitialAmount > 0 && in.InitialAmount <= MaxMoney, "initial_amount", "must be from 1 to 10^12 minor units")
	v.Check(in.Currency == "" || ValidCurrency(in.Currency), "currency", "must be an ISO 4217 code")
	if in.CustomerID != nil {
		v.Check(ValidID(*in.CustomerID), "customer_id", "must be an id")
	}
	if in.ExpiresAt != nil {
		v.Check(in.ExpiresAt.After(now), "expires_at", "must be in the future")
	}
	return v.Err()
}

// Redeemable decides whether card pays amount of an order in currency at
// now; the refusal is EInvalid naming gift_card_code, as the payment
// request's field is what is wrong.
func (g *GiftCard) Redeemable(now time.Time, currency string, amount int64) error {
	switch {
	case g.Status != GiftCardActive:
		return InvalidField("gift_card_code", "the gift card is disabled")
	case g.ExpiresAt != nil && !now.Before(*g.ExpiresAt):
		return InvalidField("gift_card_code", "the gift card has expired")
	case g.Currency != currency:
		return InvalidField("gift_card_code", "the gift card is in "+g.Currency+", the order in "+currency)
	case g.Balance < amount:
		return InvalidField("gift_card_code", "the gift card's balance does not cover the amount")
	}
	return nil
}

// RedeemableWith is Redeemable with held minor units of the balance set
// aside for payments other stores are taking with the card right now
// (GiftCardHold): what is left must cover the amount.
func (g *GiftCard) RedeemableWith(now time.Time, currency string, amount, held int64) error {
	if err := g.Redeemable(now, currency, amount); err != nil || held <= 0 {
		return err
	}
	if g.Balance-held < amount {
		return InvalidField("gift_card_code", "the gift card's balance, less what is being paid with it at another till right now, does not cover the amount")
	}
	return nil
}

// GiftCardHold is a store's request to the node where a card's balance is
// authoritative (the hub) to set Amount of the card aside for the payment
// PaymentID it is about to take (docs/giftcards.md, "Authorization"). The
// hub holds it until the payment's redeem entry arrives, the store
// releases it (the payment was not taken) or GiftCardHoldTTL passes.
type GiftCardHold struct {
	PaymentID string `json:"payment_id"`
	Code      string `json:"code"`     // as the customer gave it; normalized by Validate
	Amount    int64  `json:"amount"`   // minor units, 1 to MaxMoney
	Currency  string `json:"currency"` // the order's
}

// GiftCardHoldTTL is how long the hub keeps a hold whose redeem entry has
// not arrived and that nobody released: a store that authorized and then
// lost its link, or stopped, blocks the amount no longer than this.
const GiftCardHoldTTL = 5 * time.Minute

// MaxGiftCardHolds is the most holds one card has outstanding at once;
// beyond, the hub refuses (bounds the work an edge can make it do).
const MaxGiftCardHolds = 32

// Validate checks a hold request as the hub receives it and normalizes its
// code. Errors: EInvalid naming gift_card_code or amount.
func (h *GiftCardHold) Validate() error {
	var v Validation
	norm, ok := NormalizeGiftCardCode(h.Code)
	v.Check(ok, "gift_card_code", "must be a gift card code")
	v.Check(h.Amount > 0 && h.Amount <= MaxMoney, "amount", "must be 1-10^12 minor units")
	v.Check(ValidID(h.PaymentID), "payment_id", "must be an id")
	v.Check(len(h.Currency) == 3, "currency", "must be an ISO 4217 code")
	h.Code = norm
	return v.Err()
}

// GiftCardAuthorizer asks the hub to hold a gift card payment's amount
// before a store takes it. Authorize returns reached=false when the hub
// could not be asked in time (the store is offline: GiftCardOfflineRefusal
// decides), else the hub's answer: nil (held), or EInvalid naming
// gift_card_code. Release gives a hold back (the payment was not taken);
// it is best effort, the hold expires anyway.
type GiftCardAuthorizer interface {
	Authorize(ctx context.Context, h *GiftCardHold) (reached bool, err error)
	Release(ctx context.Context, paymentID string)
}

// GiftCardOfflineRefusal says whether a store that cannot reach the hub may
// take amount from a gift card, having taken takenToday from gift cards
// without the hub on the (UTC) day so far: within the org's
// GiftCardOfflineLimit it may; else EUnavailable with a RetryAfter (0: the
// org takes gift cards online only).
func GiftCardOfflineRefusal(st *OrgSettings, amount, takenToday int64) error {
	if takenToday+amount <= st.GiftCardOfflineLimit {
		return nil
	}
	msg := "the hub cannot be reached to authorize the gift card, and this org takes gift cards online only: take another tender or retry once the store is back online"
	if st.GiftCardOfflineLimit > 0 {
		msg = fmt.Sprintf("the hub cannot be reached to authorize the gift card, and the store's offline gift card allowance has %d of %d left today: "+
			"take another tender or retry once the store is back online", max(st.GiftCardOfflineLimit-takenToday, 0), st.GiftCardOfflineLimit)
	}
	return &Error{Kind: EUnavailable, Message: msg, RetryAfter: 5}
}

// Gift card line types (GiftCardLineInput.Type).
const (
	GiftCardLineIssue  = "issue"
	GiftCardLineReload = "reload"
)

// MaxGiftCardLines bounds the gift card lines of one order.
const MaxGiftCardLines = 20

// GiftCardLineInput is a gift card line of POST /orders: a card sold
// (issue) or topped up (reload) through the register, so that its money is
// a sale's payment and lands in the drawer. The card activates, or the
// reload is credited, when the order completes (docs/giftcards.md).
type GiftCardLineInput struct {
	Type   string  `json:"type" openapi:"required,enum=GiftCardLineType"` // issue or reload.
	Amount int64   `json:"amount" openapi:"required"`                     // Put on the card, in minor units: 1 to 10^12, within gift_card_max_balance.
	Code   *string `json:"code"`                                          // reload: the card's code (required); issue: the code of the physical card handed over (null: one is generated).
}

// GiftCardLine is a gift card line of an order: untaxed, part of the
// order's total, kept out of sales (a gift card is a liability).
type GiftCardLine struct {
	ID         string `json:"id"`
	GiftCardID string `json:"gift_card_id"`                         // The card sold or reloaded.
	Code       string `json:"code"`                                 // The card's code, masked but for its last 4 characters.
	Type       string `json:"type" openapi:"enum=GiftCardLineType"` // issue or reload.
	Amount     int64  `json:"amount"`                               // Minor units.
	TakenBack  int64  `json:"taken_back"`                           // What a refund of the line took back from the card; 0: not refunded.
	Refunded   bool   `json:"refunded"`                             // Whether the line was refunded (once, whole).
}

// checkGiftCardLines checks the shape of an order's gift card lines.
func checkGiftCardLines(v *Validation, lines []GiftCardLineInput) {
	v.Check(len(lines) <= MaxGiftCardLines, "gift_cards", "must have at most 20 lines")
	for i, l := range lines {
		f := fmt.Sprintf("gift_cards[%d].", i)
		v.Check(l.Type == GiftCardLineIssue || l.Type == GiftCardLineReload, f+"type", "must be issue or reload")
		v.Check(l.Amount > 0 && l.Amount <= MaxMoney, f+"amount", "must be from 1 to 10^12 minor units")
		if l.Code != nil {
			_, ok := NormalizeGiftCardCode(*l.Code)
			v.Check(ok, f+"code", "must be a gift card code: 16 characters of "+GiftCardAlphabet)
		}
		v.Check(l.Type != GiftCardLineReload || l.Code != nil, f+"code", "is required to reload a card")
	}
}

// WithinMaxBalance refuses a card that would hold more than the org's cap
// (0: no cap) after amount is put on it; the refusal names field.
func WithinMaxBalance(st *OrgSettings, balance, amount int64, field string) error {
	if st.GiftCardMaxBalance > 0 && balance+amount > st.GiftCardMaxBalance {
		return InvalidField(field, fmt.Sprintf("the card would hold %d, over the org's gift_card_max_balance of %d", balance+amount, st.GiftCardMaxBalance))
	}
	return nil
}

// Reloadable decides whether the card takes a reload of amount on an
// order in currency at now: active (a pending card is on an open order; a
// disabled one takes nothing until re-enabled), unexpired, the order's
// currency, within the org's cap. Refusals name prefix+"code", the cap
// prefix+"amount".
func (g *GiftCard) Reloadable(now time.Time, currency string, amount int64, st *OrgSettings, prefix string) error {
	switch {
	case g.Status == GiftCardPending:
		return InvalidField(prefix+"code", "the gift card is not activated yet: its sale is not complete")
	case g.Status != GiftCardActive:
		return InvalidField(prefix+"code", "the gift card is disabled: a manager re-enables it first")
	case g.ExpiresAt != nil && !now.Before(*g.ExpiresAt):
		return InvalidField(prefix+"code", "the gift card has expired")
	case g.Currency != currency:
		return InvalidField(prefix+"code", "the gift card is in "+g.Currency+", the order in "+currency)
	}
	return WithinMaxBalance(st, g.Balance, amount, prefix+"amount")
}

// TakeBack is what refunding a gift card line of amount gives back when
// the card holds balance: what is left of the amount on the card. What was
// spent stays spent: the customer has the goods it paid for.
func TakeBack(amount, balance int64) int64 { return max(min(amount, balance), 0) }

// GroupGiftCardsSold is the group of the sales report by payment method
// that takes the gift card money the tenders took back out of sales
// (negative): what cards sold and reloaded on orders brought in, less what
// refunds of those lines gave back.
const GroupGiftCardsSold = "gift_cards_sold"

// giftCardReceiptLines are an order's gift card lines as its receipt
// shows them: untaxed, the card's code masked.
func giftCardReceiptLines(o *Order) []ReceiptLine {
	out := make([]ReceiptLine, 0, len(o.GiftCards))
	for _, g := range o.GiftCards {
		name := "Gift card " + g.Code
		if g.Type == GiftCardLineReload {
			name = "Gift card reload " + g.Code
		}
		out = append(out, ReceiptLine{Name: name, Quantity: 1, UnitPrice: g.Amount, Total: g.Amount, Modifiers: []ReceiptAmount{}})
	}
	return out
}
