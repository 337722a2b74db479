package kassa

import (
	"context"
	"encoding/json"
)

// OrgSettings are an org's commercial settings, kept on the org row.
type OrgSettings struct {
	// TaxRateBps is the sales tax rate in basis points (1000 = 10 %).
	TaxRateBps int `json:"tax_rate_bps"`
	// TaxInclusive: prices include tax (GST/VAT style); otherwise tax is added.
	TaxInclusive bool `json:"tax_inclusive"`
	// RefundLimit is the most (minor units) a cashier may refund on one
	// order, all its refunds together; beyond it a manager or owner must
	// refund (CheckRefund).
	RefundLimit int64 `json:"refund_limit"`
	// DiscountLimits are the largest manual discount each role may give on
	// an order, in basis points of its gross (CheckDiscount).
	DiscountLimits DiscountLimits `json:"discount_limits"`
	// AllowNegativeStock lets a sale complete when on-hand would go below
	// zero (the goods are in the customer's hands); false refuses with 409.
	AllowNegativeStock bool `json:"allow_negative_stock"`
	// OfflineCardLimit and OfflineCardDailyLimit bound card payments taken
	// store-and-forward while the edge has no uplink: per payment, and per
	// location and day.
	OfflineCardLimit      int64 `json:"offline_card_limit"`
	OfflineCardDailyLimit int64 `json:"offline_card_daily_limit"` // The most card payments taken offline at one store may add up to per day, in minor units; 0: no limit.
	// GiftCardOfflineLimit bounds gift card payments a store takes while it
	// cannot reach the hub to authorize them (GiftCardOfflineRefusal).
	GiftCardOfflineLimit int64 `json:"gift_card_offline_limit"` // The most one store may take from gift cards, all cards together, per (UTC) day while it cannot reach the hub to authorize them, in minor units; 0 (the default): gift cards are taken online only.
	// PaymentMethods says which methods the org accepts.
	PaymentMethods []PaymentMethodConfig `json:"payment_methods"`
	// TaxCategories are the org's tax categories (docs/tax.md).
	TaxCategories []TaxCategory `json:"tax_categories"` // The org's tax categories, each with its rate; products and categories name one by id (tax_category_id). Empty: every line at tax_rate_bps.
	// Lay-bys (docs/laybys.md).
	LaybyMinDepositBps     int   `json:"layby_min_deposit_bps"`    // The least deposit of a lay-by, in basis points of its total (default 1000: 10 %).
	LaybyTermDays          int   `json:"layby_term_days"`          // Days a lay-by has to be paid in full before it expires (default 56).
	TipMaxPercent          int   `json:"tip_max_percent"`          // The largest tip on a payment, in percent of its amount (default 100; 0: no tips). docs/tips.md.
	LaybyTerminationCharge int64 `json:"layby_termination_charge"` // Kept, in minor units, when a customer cancels or a lay-by expires; at most what was paid. Default 0. Australian Consumer Law caps it at the seller's reasonable costs.
}

// PaymentMethodConfig enables or disables one payment method.
type PaymentMethodConfig struct {
	Method  PaymentMethod `json:"method"`  // The payment method.
	Enabled bool          `json:"enabled"` // Whether the org accepts it.
}

// DefaultSettings are a new org's settings: 10 % inclusive tax, cashier
// refunds up to 50.00 an order, no manual discounts by cashiers (managers
// and partner apps unlimited), negative stock allowed, offline card
// payments up to 100.00 each and 1000.00 a day, gift cards online only,
// cash and card enabled (gift cards, external money and loyalty points
// are the org's choice).
func DefaultSettings() OrgSettings {
	return OrgSettings{
		TaxRateBps: 1000, TaxInclusive: true, RefundLimit: 5000, DiscountLimits: DefaultDiscountLimits(), AllowNegativeStock: true,
		OfflineCardLimit: 10000, OfflineCardDailyLimit: 100000,
		LaybyMinDepositBps: 1000, LaybyTermDays: 56, TipMaxPercent: DefaultTipMaxPercent, TaxCategories: []TaxCategory{},
		PaymentMethods: []PaymentMethodConfig{
			{PaymentCash, true}, {PaymentCard, true}, {PaymentGiftCard, false}, {PaymentExternal, false}, {PaymentLoyaltyPoints, false}, {PaymentStoreCredit, true},
		},
	}
}

// Accepts reports whether method is enabled.
func (s *OrgSettings) Accepts(m PaymentMethod) bool {
	for _, c := range s.PaymentMethods {
		if c.Method == m {
			return c.Enabled
		}
	}
	// Store credit is the customer's money the org already holds: taken
	// unless the org turned it off (a list saved before it existed).
	return m == PaymentStoreCredit
}

// SettingsUpdate is the body of PATCH /settings.
type SettingsUpdate struct {
	TaxRateBps   Opt[int]   `json:"tax_rate_bps"`
	TaxInclusive Opt[bool]  `json:"tax_inclusive"`
	RefundLimit  Opt[int64] `json:"refund_limit"`
	// DiscountLimits replaces the roles' limits it names; absent or null
	// changes none.
	DiscountLimits         *DiscountLimitsUpdate `json:"discount_limits"`
	AllowNegativeStock     Opt[bool]             `json:"allow_negative_stock"`
	OfflineCardLimit       Opt[int64]            `json:"offline_card_limit"`
	OfflineCardDailyLimit  Opt[int64]            `json:"offline_card_daily_limit"`
	GiftCardOfflineLimit   Opt[int64]            `json:"gift_card_offline_limit"`
	LaybyMinDepositBps     Opt[int]              `json:"layby_min_deposit_bps"`    // 0 to 10000 basis points of the total.
	LaybyTermDays          Opt[int]              `json:"layby_term_days"`          // 1 to 365 days.
	LaybyTerminationCharge Opt[int64]            `json:"layby_termination_charge"` // 0 to 10^12 minor units.
	TipMaxPercent          Opt[int]              `json:"tip_max_percent"`          // 0 to 1000 percent of a payment's amount.
	TaxCategories          Opt[[]TaxCategory]    `json:"tax_categories"`           // Replaces the list (at most 20); a category a product or category names cannot be removed (409).
}

// Validate checks the fields present: a tax rate of 0–MaxTaxRateBps, money
// limits of 0–MaxMoney, discount limits of 0–10000 basis points, no null
// where a value is needed.
func (in *SettingsUpdate) Validate() error {
	var v Validation
	if in.TaxRateBps.Set {
		v.Check(!in.TaxRateBps.Null && in.TaxRateBps.Value >= 0 && in.TaxRateBps.Value <= MaxTaxRateBps, "tax_rate_bps", "must be 0-5000 basis points")
	}
	for _, f := range []struct {
		name string
		o    Opt[int64]
	}{{"refund_limit", in.RefundLimit}, {"offline_card_limit", in.OfflineCardLimit}, {"offline_card_daily_limit", in.OfflineCardDailyLimit},
		{"gift_card_offline_limit", in.GiftCardOfflineLimit}, {"layby_termination_charge", in.LaybyTerminationCharge}} {
		if f.o.Set {
			v.Check(!f.o.Null && f.o.Value >= 0 && f.o.Value <= MaxMoney, f.name, "must be 0-10^12 minor units")
		}
	}
	if in.LaybyMinDepositBps.Set {
		v.Check(!in.LaybyMinDepositBps.Null && in.LaybyMinDepositBps.Value >= 0 && in.LaybyMinDepositBps.Value <= MaxPercentBps, "layby_min_deposit_bps", "must be 0-10000 basis points")
	}
	if in.LaybyTermDays.Set {
		v.Check(!in.LaybyTermDays.Null && in.LaybyTermDays.Value >= 1 && in.LaybyTermDays.Value <= laybyMaxTermDay, "layby_term_days", "must be 1-365 days")
	}
	if in.TipMaxPercent.Set {
		v.Check(!in.TipMaxPercent.Null && in.TipMaxPercent.Value >= 0 && in.TipMaxPercent.Value <= MaxTipMaxPercent, "tip_max_percent", "must be 0-1000 percent")
	}
	if in.TaxCategories.Set {
		v.Check(!in.TaxCategories.Null, "tax_categories", "must be a list (empty: none)")
		checkTaxCategories(&v, in.TaxCategories.Value)
	}
	v.Check(!in.TaxInclusive.Null, "tax_inclusive", "must be true or false")
	v.Check(!in.AllowNegativeStock.Null, "allow_negative_stock", "must be true or false")
	if in.DiscountLimits != nil {
		in.DiscountLimits.check(&v)
	}
	return v.Err()
}

// Apply changes st by the fields present in a validated update.
func (in *SettingsUpdate) Apply(st *OrgSettings) {
	set(&st.TaxRateBps, in.TaxRateBps)
	set(&st.TaxInclusive, in.TaxInclusive)
	set(&st.RefundLimit, in.RefundLimit)
	set(&st.AllowNegativeStock, in.AllowNegativeStock)
	set(&st.OfflineCardLimit, in.OfflineCardLimit)
	set(&st.OfflineCardDailyLimit, in.OfflineCardDailyLimit)
	set(&st.GiftCardOfflineLimit, in.GiftCardOfflineLimit)
	set(&st.LaybyMinDepositBps, in.LaybyMinDepositBps)
	set(&st.LaybyTermDays, in.LaybyTermDays)
	set(&st.LaybyTerminationCharge, in.LaybyTerminationCharge)
	set(&st.TaxCategories, in.TaxCategories)
	set(&st.TipMaxPercent, in.TipMaxPercent)
	if in.DiscountLimits != nil {
		in.DiscountLimits.apply(&st.DiscountLimits)
	}
}

// set stores o's value in dst when o was present.
func set[T any](dst *T, o Opt[T]) {
	if o.Set {
		*dst = o.Value
	}
}

// SettingsService reads and changes the caller's org settings; changes need
// an owner. Errors: EForbidden, EInvalid.
type SettingsService interface {
	Settings(ctx context.Context) (*OrgSettings, error)
	UpdateSettings(ctx context.Context, in *SettingsUpdate) (*OrgSettings, error)
	// SetPaymentMethods replaces the method list (PUT /payments/methods).
	SetPaymentMethods(ctx context.Context, methods []PaymentMethodConfig) ([]PaymentMethodConfig, error)
}

// ValidatePaymentMethods checks a list of accepted methods: each entry a
// known method, none twice.
func ValidatePaymentMethods(methods []PaymentMethodConfig) error {
	seen := map[PaymentMethod]bool{}
	for _, m := range methods {
		if !m.Method.Valid() || seen[m.Method] {
			return InvalidField("methods", "each entry needs a distinct method of cash, card, gift_card, external, loyalty_points, store_credit")
		}
		seen[m.Method] = true
	}
	return nil
}

// DecodeSettings reads an org's stored settings: DefaultSettings overlaid
// with what data holds (which may be "{}" or empty). A stored
// payment_methods list replaces the default list as a whole; a field the
// data leaves out keeps its default. On an error the value is what was
// decoded so far.
func DecodeSettings(data []byte) (OrgSettings, error) {
	set := DefaultSettings()
	if len(data) == 0 {
		return set, nil
	}
	var present map[string]json.RawMessage
	if err := json.Unmarshal(data, &present); err != nil {
		return set, err
	}
	if _, ok := present["payment_methods"]; ok {
		set.PaymentMethods = nil
	}
	err := json.Unmarshal(data, &set)
	if set.TaxCategories == nil {
		set.TaxCategories = []TaxCategory{}
	}
	return set, err
}
