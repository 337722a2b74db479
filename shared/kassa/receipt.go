package kassa

import (
	"context"
	"fmt"
	"regexp"
	"strings"
	"time"
)

// Receipts (docs/receipts.md). Every completed sale and every refund gets
// a receipt numbered without gaps per till (register) at the edge that
// completed it, in the same unit of work: <code>-<n>, where code names the
// sequence (the node's number prefix and the sequence's ordinal there) and
// n counts from 1. A completion or refund names its till with register_id;
// without one it takes the location's default sequence at that node.

// Receipt kinds.
const (
	ReceiptSale   = "sale"
	ReceiptRefund = "refund"
)

// Receipt job kinds and states.
const (
	JobPrint   = "print"
	JobEmail   = "email"
	JobPending = "pending"
	JobDone    = "done"
	JobFailed  = "failed"
)

// Receipt is the document of one sale or one refund, as printed, shown
// and e-mailed.
type Receipt struct {
	ID           string           `json:"id"`
	Number       string           `json:"number"`                          // <sequence code>-<n>, gap-free per till
	Kind         string           `json:"kind" openapi:"enum=ReceiptKind"` // sale or refund.
	OrderID      string           `json:"order_id"`
	OrderNumber  string           `json:"order_number"` // also the barcode (CODE128) for returns
	RefundID     *string          `json:"refund_id"`    // The refund, for a refund receipt.
	RegisterID   *string          `json:"register_id"`  // The till; null: the location's default sequence.
	LocationID   string           `json:"location_id"`
	Store        ReceiptStore     `json:"store"` // The store as the receipt names it.
	Lines        []ReceiptLine    `json:"lines"`
	Subtotal     int64            `json:"subtotal"`       // Lines before discounts, in minor units.
	Discount     int64            `json:"discount_total"` // The order's discounts (manual and campaigns), in minor units.
	Campaigns    []ReceiptAmount  `json:"campaigns"`      // What each campaign took off the order.
	Taxes        []ReceiptTax     `json:"taxes"`          // The tax breakdown by rate.
	TaxTotal     int64            `json:"tax_total"`      // The tax, in minor units.
	TaxInclusive bool             `json:"tax_inclusive"`  // Whether the prices include the tax.
	Total        int64            `json:"total"`          // The sale's total, or the amount refunded.
	TipTotal     int64            `json:"tip_total"`      // Tips on the sale's payments, or given back by the refund (not in total; docs/tips.md).
	Currency     string           `json:"currency"`
	Scale        int              `json:"scale"`     // Decimals of the currency (AUD 2).
	Payments     []ReceiptPayment `json:"payments"`  // The tenders, or for a refund what went back through each.
	Loyalty      *ReceiptLoyalty  `json:"loyalty"`   // null: no customer account
	Reason       string           `json:"reason"`    // A refund's reason.
	Jobs         []ReceiptJob     `json:"jobs"`      // Its prints and e-mails, oldest first.
	IssuedAt     time.Time        `json:"issued_at"` // When the sale completed or the refund was made.
}

// ReceiptStore is the store as the receipt names it.
type ReceiptStore struct {
	Name    string `json:"name"`
	Address string `json:"address"`
	Header  string `json:"header"` // Text printed above the lines (receipt settings).
	Footer  string `json:"footer"` // Text printed below the payments (receipt settings).
	TaxID   string `json:"tax_id"` // The store's tax number (receipt settings).
}

// ReceiptLine is one line: for a refund, the refunded quantity.
type ReceiptLine struct {
	Name      string          `json:"name"`
	Quantity  int64           `json:"quantity"`
	UnitPrice int64           `json:"unit_price"` // with modifiers
	Modifiers []ReceiptAmount `json:"modifiers"`  // The chosen modifier options and their prices.
	Discount  int64           `json:"discount"`
	Total     int64           `json:"total"` // The line's total, in minor units.
}

// ReceiptAmount is a named amount: a modifier's price, a campaign's discount.
type ReceiptAmount struct {
	Name   string `json:"name"`
	Amount int64  `json:"amount"`
}

// ReceiptTax is the tax at one rate.
type ReceiptTax struct {
	RateBps int   `json:"rate_bps"` // The rate in basis points (1000 = 10 %).
	Net     int64 `json:"net"`      // what the tax was charged on
	Tax     int64 `json:"tax"`      // The tax at this rate, in minor units.
}

// ReceiptPayment is one tender, or for a refund what went back through it.
type ReceiptPayment struct {
	Method          PaymentMethod `json:"method"` // How it was paid.
	Amount          int64         `json:"amount"`
	Tendered        *int64        `json:"tendered"`          // cash handed over
	Change          *int64        `json:"change"`            // cash handed back
	Card            *string       `json:"card"`              // masked: **** 4242
	GiftCard        *string       `json:"gift_card"`         // masked: **** AB12
	GiftCardBalance *int64        `json:"gift_card_balance"` // what the card holds now
	Tip             int64         `json:"tip"`               // The tip on it (a refund's: given back with it), not in amount.
}

// ReceiptLoyalty is the customer's loyalty standing after the sale.
type ReceiptLoyalty struct {
	Earned  int64 `json:"earned"`  // Points the sale earned.
	Balance int64 `json:"balance"` // The customer's points balance now.
}

// ReceiptJob is a print or an e-mail of a receipt and how it went.
type ReceiptJob struct {
	ID         string     `json:"id"`
	Kind       string     `json:"kind" openapi:"enum=ReceiptJobKind"`     // print or email.
	Status     string     `json:"status" openapi:"enum=ReceiptJobStatus"` // pending until the printer or relay took it
	RegisterID *string    `json:"register_id"`                            // a print's till
	Email      *string    `json:"email"`                                  // an e-mail's recipient
	Attempts   int        `json:"attempts"`                               // Attempts made so far.
	LastError  string     `json:"last_error"`                             // why the last attempt failed; "" when none did
	CreatedAt  time.Time  `json:"created_at"`
	DoneAt     *time.Time `json:"done_at"` // When the printer or relay took it; null until then.
}

// ReceiptFacts is what BuildReceipt reads: the order, the refund for a
// refund receipt, and what the store knows around them.
type ReceiptFacts struct {
	ID, Number string
	RegisterID *string
	Order      *Order
	Refund     *Refund
	Location   *Location
	Settings   ReceiptSettings
	Scale      int
	GiftCards  map[string]GiftCardBalance // by payment id
	Loyalty    *int64                     // the customer's points balance
	TipsBack   map[string]int64           // a refund's: the tips it gave back, by payment id
	IssuedAt   time.Time
}

// GiftCardBalance is a card that paid, masked, and what it holds now.
type GiftCardBalance struct {
	Masked  string
	Balance int64
}

// BuildReceipt assembles the receipt document.
func BuildReceipt(f *ReceiptFacts) *Receipt {
	o := f.Order
	r := &Receipt{ID: f.ID, Number: f.Number, Kind: ReceiptSale, OrderID: o.ID, OrderNumber: o.Number,
		RegisterID: f.RegisterID, LocationID: o.LocationID, Currency: o.Currency, Scale: f.Scale,
		TaxInclusive: o.TaxInclusive, IssuedAt: f.IssuedAt, Jobs: []ReceiptJob{}, Campaigns: []ReceiptAmount{}}
	r.Store = ReceiptStore{Header: f.Settings.Header, Footer: f.Settings.Footer, TaxID: f.Settings.TaxID}
	if f.Location != nil {
		r.Store.Name, r.Store.Address = f.Location.Name, f.Location.Address
	}
	if f.Refund != nil {
		refundReceipt(r, o, f.Refund, f.GiftCards, f.TipsBack)
		return r
	}
	r.Lines = make([]ReceiptLine, 0, len(o.LineItems))
	for _, l := range o.LineItems {
		r.Lines = append(r.Lines, receiptLine(l, l.Quantity, l.Discount, l.Total))
	}
	for _, c := range o.Campaigns {
		if c.Amount > 0 {
			r.Campaigns = append(r.Campaigns, ReceiptAmount{Name: c.Name, Amount: c.Amount})
		}
	}
	r.Subtotal, r.Discount, r.TaxTotal, r.Total = o.Subtotal, o.DiscountTotal, o.TaxTotal, o.Total
	r.Taxes = []ReceiptTax{}
	for _, g := range orderTaxes(o) {
		r.Taxes = append(r.Taxes, ReceiptTax{RateBps: g.RateBps, Net: g.Taxable, Tax: g.Tax})
	}
	r.Payments = saleTenders(o.Payments, f.GiftCards)
	r.TipTotal = tipTotal(r.Payments)
	if f.Loyalty != nil {
		r.Loyalty = &ReceiptLoyalty{Earned: o.LoyaltyPointsEarned, Balance: *f.Loyalty}
	}
	return r
}

func receiptLine(l LineItem, qty, discount, total int64) ReceiptLine {
	rl := ReceiptLine{Name: l.Name, Quantity: qty, UnitPrice: l.UnitPrice, Discount: discount, Total: total,
		Modifiers: make([]ReceiptAmount, 0, len(l.Modifiers))}
	for _, m := range l.Modifiers {
		rl.Modifiers = append(rl.Modifiers, ReceiptAmount{Name: m.Name, Amount: m.PriceAdjustment})
	}
	return rl
}

// orderTaxes is an order's tax by rate: its breakdown, or for an order
// read without its lines one group at the order's rate.
func orderTaxes(o *Order) []TaxGroup {
	if len(o.TaxBreakdown) > 0 {
		return o.TaxBreakdown
	}
	return []TaxGroup{{RateBps: o.TaxRateBps, Taxable: o.Total - o.TaxTotal, Tax: o.TaxTotal}}
}

// refundTaxes is the tax a refund returns, by rate. Of an order of
// several rates, a refund of lines
// returns each line's tax at the line's rate in proportion to the amount
// returned (half up); an amount beyond the lines' is spread by
// amountTaxes.
func refundTaxes(o *Order, rf *Refund) []ReceiptTax {
	if len(orderTaxes(o)) == 1 {
		return amountTaxes(o, rf.Amount) // one rate: as before tax categories
	}
	var groups []TaxGroup
	rest := rf.Amount
	for _, rl := range rf.Lines {
		l := o.FindLine(rl.LineItemID)
		if l == nil || l.Total <= 0 || rl.Amount > rest {
			continue
		}
		tax, _ := mulDivRound(rl.Amount, l.Tax, l.Total)
		groups = AddTax(groups, l.TaxRateBps, rl.Amount-tax, tax)
		rest -= rl.Amount
	}
	if len(groups) == 0 {
		return amountTaxes(o, rest)
	}
	for _, t := range amountTaxes(o, rest) {
		if t.Net+t.Tax > 0 {
			groups = AddTax(groups, t.RateBps, t.Net, t.Tax)
		}
	}
	out := make([]ReceiptTax, len(groups))
	for i, g := range groups {
		out[i] = ReceiptTax{RateBps: g.RateBps, Net: g.Taxable, Tax: g.Tax}
	}
	return out
}

// amountTaxes is the tax a refund of an amount returns, by rate: amount
// is spread over the order's rates in proportion to each rate's total
// (largest remainder, so the parts sum to amount), and each part returns
// its rate's tax in the same proportion, half up. An order of one rate
// returns amount × tax_total / total, as before tax categories.
func amountTaxes(o *Order, amount int64) []ReceiptTax {
	groups := orderTaxes(o)
	weights := make([]int64, len(groups))
	for i, g := range groups {
		weights[i] = g.Taxable + g.Tax
	}
	out := []ReceiptTax{}
	for i, part := range allocate(amount, weights) {
		tax := int64(0)
		if weights[i] > 0 {
			tax, _ = mulDivRound(part, groups[i].Tax, weights[i])
		}
		if part > 0 || len(groups) == 1 {
			out = append(out, ReceiptTax{RateBps: groups[i].RateBps, Net: part - tax, Tax: tax})
		}
	}
	return out
}

func saleTenders(ps []Payment, cards map[string]GiftCardBalance) []ReceiptPayment {
	out := []ReceiptPayment{}
	for _, p := range ps {
		if p.Status != PaymentCaptured && p.Status != PaymentRefunded && p.Status != PaymentPartiallyRefunded {
			continue
		}
		rp := ReceiptPayment{Method: p.Method, Amount: p.Amount, Tendered: p.Tendered, Change: p.ChangeDue, Tip: p.Tip}
		tenderDetails(&rp, p, cards)
		out = append(out, rp)
	}
	return out
}

func tenderDetails(rp *ReceiptPayment, p Payment, cards map[string]GiftCardBalance) {
	if p.CardLast4 != nil {
		m := "**** " + *p.CardLast4
		rp.Card = &m
	}
	if g, ok := cards[p.ID]; ok {
		m, b := g.Masked, g.Balance
		rp.GiftCard, rp.GiftCardBalance = &m, &b
	}
}

func refundReceipt(r *Receipt, o *Order, rf *Refund, cards map[string]GiftCardBalance, tipsBack map[string]int64) {
	id := rf.ID
	r.Kind, r.RefundID, r.Reason, r.IssuedAt = ReceiptRefund, &id, rf.Reason, rf.CreatedAt
	r.Lines = []ReceiptLine{}
	for _, rl := range rf.Lines {
		if l := o.FindLine(rl.LineItemID); l != nil {
			r.Lines = append(r.Lines, receiptLine(*l, rl.Quantity, 0, rl.Amount))
		}
	}
	r.Total, r.Subtotal = rf.Amount, rf.Amount
	r.Taxes = refundTaxes(o, rf)
	for _, t := range r.Taxes {
		r.TaxTotal += t.Tax
	}
	r.Payments = []ReceiptPayment{}
	var back int64
	for _, rp := range rf.Payments {
		p := o.FindPayment(rp.PaymentID)
		if p == nil {
			continue
		}
		out := ReceiptPayment{Method: p.Method, Amount: rp.Amount, Tip: tipsBack[p.ID]}
		tenderDetails(&out, *p, cards)
		r.Payments = append(r.Payments, out)
		back += rp.Amount
	}
	if rf.Amount > back { // a return's part on store credit (docs/returns.md)
		r.Payments = append(r.Payments, ReceiptPayment{Method: PaymentStoreCredit, Amount: rf.Amount - back})
	}
	r.TipTotal = tipTotal(r.Payments)
}

// tipTotal sums the tips of a receipt's tenders.
func tipTotal(ps []ReceiptPayment) int64 {
	var n int64
	for _, p := range ps {
		n += p.Tip
	}
	return n
}

// PaidCash reports whether a cash tender moved money (and so the drawer
// opens when the receipt prints).
func (r *Receipt) PaidCash() bool {
	for _, p := range r.Payments {
		if p.Method == PaymentCash {
			return true
		}
	}
	return false
}

// Money formats minor units in the receipt's currency: 1234 → "12.34".
func (r *Receipt) Money(minor int64) string { return FormatMinor(minor, r.Scale) }

// FormatMinor formats minor units with scale decimals: (-1234, 2) → "-12.34".
func FormatMinor(minor int64, scale int) string {
	sign := ""
	if minor < 0 {
		sign, minor = "-", -minor
	}
	if scale <= 0 {
		return fmt.Sprintf("%s%d", sign, minor)
	}
	p := int64(1)
	for range scale {
		p *= 10
	}
	return fmt.Sprintf("%s%d.%0*d", sign, minor/p, scale, minor%p)
}

// ReceiptNumber is the n-th number of the sequence code: ABC123-1-000042.
func ReceiptNumber(code string, n int64) string { return fmt.Sprintf("%s-%06d", code, n) }

// RegisterCtx carries the till a request comes from.
type registerKey struct{}

// WithRegister returns ctx naming the till (register) a completion or a
// refund happens at; "" names none (the location's default sequence).
func WithRegister(ctx context.Context, registerID string) context.Context {
	return context.WithValue(ctx, registerKey{}, registerID)
}

// RegisterOf returns the till ctx names, or "".
func RegisterOf(ctx context.Context) string {
	s, _ := ctx.Value(registerKey{}).(string)
	return s
}

var registerRe = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9_-]{0,63}$`)

// ValidRegisterID reports whether s can name a till: 1-64 letters, digits,
// _ and -, starting with a letter or digit. The registers table (drawers)
// owns what a till is; receipts only need its id to be a safe key.
func ValidRegisterID(s string) bool { return registerRe.MatchString(s) }

// OrderComplete is the optional body of POST /orders/:id/complete.
type OrderComplete struct {
	RegisterID *string `json:"register_id"` // The till: a register of the order's location (422 otherwise); its receipt sequence numbers the sale. null: the location's default.
}

// Validate checks the till id.
func (in *OrderComplete) Validate() error {
	if in.RegisterID != nil && !ValidRegisterID(*in.RegisterID) {
		return InvalidField("register_id", "must be 1-64 letters, digits, _ or -")
	}
	return nil
}

// ReceiptSettings is what receipts say about the store and how they are
// e-mailed, per org. The SMTP password is never answered: smtp_password_set
// says whether one is stored.
type ReceiptSettings struct {
	Header          string `json:"header"`            // Printed above the lines, at most 500 characters.
	Footer          string `json:"footer"`            // Printed below the payments, at most 500 characters.
	TaxID           string `json:"tax_id"`            // The store's tax number (ABN, VAT id), at most 50 characters.
	SMTPHost        string `json:"smtp_host"`         // The org's relay; "" : no e-mail receipts.
	SMTPPort        int    `json:"smtp_port"`         // 587 by default.
	SMTPUsername    string `json:"smtp_username"`     // The relay user; "" : no sign-in.
	SMTPPasswordSet bool   `json:"smtp_password_set"` // Whether a password is stored (it is never shown).
	SMTPFrom        string `json:"smtp_from"`         // The sender address.
	SMTPPassword    string `json:"-"`
}

// ReceiptSettingsUpdate is the body of PATCH /receipt-settings.
type ReceiptSettingsUpdate struct {
	Header       Opt[string] `json:"header"`
	Footer       Opt[string] `json:"footer"`
	TaxID        Opt[string] `json:"tax_id"`
	SMTPHost     Opt[string] `json:"smtp_host"`
	SMTPPort     Opt[int]    `json:"smtp_port"`
	SMTPUsername Opt[string] `json:"smtp_username"`
	SMTPPassword Opt[string] `json:"smtp_password"` // Write-only.
	SMTPFrom     Opt[string] `json:"smtp_from"`
}

// Validate checks the update's fields.
func (in *ReceiptSettingsUpdate) Validate() error {
	var v Validation
	v.Check(ValidText(in.Header.Value, 500), "header", "at most 500 characters of text")
	v.Check(ValidText(in.Footer.Value, 500), "footer", "at most 500 characters of text")
	v.Check(ValidText(in.TaxID.Value, 50), "tax_id", "at most 50 characters of text")
	v.Check(in.SMTPHost.Value == "" || hostRe.MatchString(in.SMTPHost.Value), "smtp_host", "must be a host name or IP address")
	v.Check(!in.SMTPPort.Set || (in.SMTPPort.Value >= 1 && in.SMTPPort.Value <= 65535), "smtp_port", "must be 1-65535")
	v.Check(ValidText(in.SMTPUsername.Value, 200), "smtp_username", "at most 200 characters")
	v.Check(ValidText(in.SMTPPassword.Value, 200), "smtp_password", "at most 200 characters")
	v.Check(in.SMTPFrom.Value == "" || ValidEmail(in.SMTPFrom.Value), "smtp_from", "must be an e-mail address such as shop@example.com")
	return v.Err()
}

var hostRe = regexp.MustCompile(`^[A-Za-z0-9]([A-Za-z0-9.:-]{0,252})$`)

// RegisterPrinter is the network thermal printer of a till.
type RegisterPrinter struct {
	RegisterID string     `json:"register_id"`                         // The till.
	Host       string     `json:"host"`                                // Its host name or IP address on the store's LAN.
	Port       int        `json:"port"`                                // Its raw TCP port (9100).
	PaperWidth int        `json:"paper_width"`                         // 58 or 80 mm
	Enabled    bool       `json:"enabled"`                             // Whether receipts print on it.
	Status     string     `json:"status" openapi:"enum=PrinterStatus"` // ok | unreachable | unknown (never tried)
	LastError  string     `json:"last_error"`                          // why the last print failed
	LastOKAt   *time.Time `json:"last_ok_at"`                          // When it last took a print; null: never.
	Pending    int        `json:"pending"`                             // prints waiting for it
}

// Printer states.
const (
	PrinterOK          = "ok"
	PrinterUnreachable = "unreachable"
	PrinterUnknown     = "unknown"
)

// RegisterPrinterSet is the body of PUT /registers/:id/printer.
type RegisterPrinterSet struct {
	Host       string `json:"host" openapi:"required"` // host name or IP address on the store's LAN
	Port       int    `json:"port"`                    // 9100 by default
	PaperWidth int    `json:"paper_width"`             // 58 or 80 (default 80)
	Enabled    *bool  `json:"enabled"`                 // default true
}

// Validate checks the printer and fills defaults.
func (in *RegisterPrinterSet) Validate() error {
	if in.Port == 0 {
		in.Port = 9100
	}
	if in.PaperWidth == 0 {
		in.PaperWidth = 80
	}
	var v Validation
	v.Check(hostRe.MatchString(in.Host), "host", "must be a host name or IP address")
	v.Check(in.Port >= 1 && in.Port <= 65535, "port", "must be 1-65535")
	v.Check(in.PaperWidth == 58 || in.PaperWidth == 80, "paper_width", "must be 58 or 80")
	return v.Err()
}

// ReceiptEmail is the body of POST /orders/:id/receipt/email.
type ReceiptEmail struct {
	Email    string  `json:"email" openapi:"required"`
	RefundID *string `json:"refund_id"` // a refund's receipt instead of the sale's
}

// Validate checks the address (net/mail, as written).
func (in *ReceiptEmail) Validate() error {
	in.Email = strings.TrimSpace(in.Email)
	if !ValidEmail(in.Email) {
		return InvalidField("email", "must be an e-mail address such as ann@example.com")
	}
	return nil
}

// ReceiptPrint is the optional body of POST /orders/:id/receipt/print.
type ReceiptPrint struct {
	RegisterID *string `json:"register_id"` // the till whose printer prints; default: the receipt's own
	RefundID   *string `json:"refund_id"`   // a refund's receipt instead of the sale's
}

// ReceiptService reads receipts and queues their prints and e-mails.
// Errors: ENotFound, EInvalid, EConflict (no receipt yet: the order is not
// completed; no printer at the till; no SMTP relay), EForbidden.
type ReceiptService interface {
	Receipt(ctx context.Context, orderID string, refundID *string) (*Receipt, error)
	Print(ctx context.Context, orderID string, in *ReceiptPrint) (*ReceiptJob, error)
	Email(ctx context.Context, orderID string, in *ReceiptEmail) (*ReceiptJob, error)
	Settings(ctx context.Context) (*ReceiptSettings, error)
	UpdateSettings(ctx context.Context, in *ReceiptSettingsUpdate) (*ReceiptSettings, error)
	Printer(ctx context.Context, registerID string) (*RegisterPrinter, error)
	SetPrinter(ctx context.Context, registerID string, in *RegisterPrinterSet) (*RegisterPrinter, error)
}
