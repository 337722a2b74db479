package kassa

import "context"

// OrgSettings are an org's commercial settings, kept on the org row.
type OrgSettings struct {
	// TaxRateBps is the sales tax rate in basis points (1000 = 10 %).
	TaxRateBps int `json:"tax_rate_bps"`
	// TaxInclusive: prices include tax (GST/VAT style); otherwise tax is added.
	TaxInclusive bool `json:"tax_inclusive"`
	// RefundLimit is the largest refund (minor units) a cashier may give;
	// larger refunds need a manager or owner.
	RefundLimit int64 `json:"refund_limit"`
	// AllowNegativeStock lets a sale complete when on-hand would go below
	// zero (the goods are in the customer's hands); false refuses with 409.
	AllowNegativeStock bool `json:"allow_negative_stock"`
	// OfflineCardLimit and OfflineCardDailyLimit bound card payments taken
	// store-and-forward while the edge has no uplink: per payment, and per
	// location and day.
	OfflineCardLimit      int64 `json:"offline_card_limit"`
	OfflineCardDailyLimit int64 `json:"offline_card_daily_limit"`
	// PaymentMethods says which methods the org accepts.
	PaymentMethods []PaymentMethodConfig `json:"payment_methods"`
}

// PaymentMethodConfig enables or disables one payment method.
type PaymentMethodConfig struct {
	Method  PaymentMethod `json:"method"`
	Enabled bool          `json:"enabled"`
}

// DefaultSettings are a new org's settings: 10 % inclusive tax, cashier
// refunds up to 50.00, negative stock allowed, offline card payments up to
// 100.00 each and 1000.00 a day, cash and card enabled.
func DefaultSettings() OrgSettings {
	return OrgSettings{
		TaxRateBps: 1000, TaxInclusive: true, RefundLimit: 5000, AllowNegativeStock: true,
		OfflineCardLimit: 10000, OfflineCardDailyLimit: 100000,
		PaymentMethods: []PaymentMethodConfig{
			{PaymentCash, true}, {PaymentCard, true}, {PaymentGiftCard, false}, {PaymentExternal, false},
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
	return false
}

// SettingsUpdate is the body of PATCH /settings.
type SettingsUpdate struct {
	TaxRateBps            Opt[int]   `json:"tax_rate_bps"`
	TaxInclusive          Opt[bool]  `json:"tax_inclusive"`
	RefundLimit           Opt[int64] `json:"refund_limit"`
	AllowNegativeStock    Opt[bool]  `json:"allow_negative_stock"`
	OfflineCardLimit      Opt[int64] `json:"offline_card_limit"`
	OfflineCardDailyLimit Opt[int64] `json:"offline_card_daily_limit"`
}

// SettingsService reads and changes the caller's org settings; changes need
// an owner. Errors: EForbidden, EInvalid.
type SettingsService interface {
	Settings(ctx context.Context) (*OrgSettings, error)
	UpdateSettings(ctx context.Context, in *SettingsUpdate) (*OrgSettings, error)
	// SetPaymentMethods replaces the method list (PUT /payments/methods).
	SetPaymentMethods(ctx context.Context, methods []PaymentMethodConfig) ([]PaymentMethodConfig, error)
}
