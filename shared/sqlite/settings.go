package sqlite

import (
	"context"

	"kassa.dev/shared/kassa"
)

// SettingsService implements kassa.SettingsService on the org row.
type SettingsService struct{ db *DB }

// NewSettingsService returns the settings service of db.
func NewSettingsService(db *DB) *SettingsService { return &SettingsService{db: db} }

var _ kassa.SettingsService = (*SettingsService)(nil)

// Settings returns the caller's org settings.
func (s *SettingsService) Settings(ctx context.Context) (*kassa.OrgSettings, error) {
	a, err := kassa.MustActor(ctx)
	if err != nil {
		return nil, err
	}
	st, err := orgSettings(ctx, s.db.reader, a.OrgID)
	return &st, err
}

// UpdateSettings changes the settings present in the update; owners only.
func (s *SettingsService) UpdateSettings(ctx context.Context, in *kassa.SettingsUpdate) (*kassa.OrgSettings, error) {
	var v kassa.Validation
	if in.TaxRateBps.Set {
		v.Check(!in.TaxRateBps.Null && in.TaxRateBps.Value >= 0 && in.TaxRateBps.Value <= 5000, "tax_rate_bps", "must be 0-5000 basis points")
	}
	for _, f := range []struct {
		name string
		o    kassa.Opt[int64]
	}{{"refund_limit", in.RefundLimit}, {"offline_card_limit", in.OfflineCardLimit}, {"offline_card_daily_limit", in.OfflineCardDailyLimit}} {
		if f.o.Set {
			v.Check(!f.o.Null && f.o.Value >= 0 && f.o.Value <= kassa.MaxMoney, f.name, "must be 0-10^12 minor units")
		}
	}
	v.Check(!in.TaxInclusive.Null, "tax_inclusive", "must be true or false")
	v.Check(!in.AllowNegativeStock.Null, "allow_negative_stock", "must be true or false")
	if err := v.Err(); err != nil {
		return nil, err
	}
	return s.change(ctx, func(st *kassa.OrgSettings) {
		if in.TaxRateBps.Set {
			st.TaxRateBps = in.TaxRateBps.Value
		}
		if in.TaxInclusive.Set {
			st.TaxInclusive = in.TaxInclusive.Value
		}
		if in.RefundLimit.Set {
			st.RefundLimit = in.RefundLimit.Value
		}
		if in.AllowNegativeStock.Set {
			st.AllowNegativeStock = in.AllowNegativeStock.Value
		}
		if in.OfflineCardLimit.Set {
			st.OfflineCardLimit = in.OfflineCardLimit.Value
		}
		if in.OfflineCardDailyLimit.Set {
			st.OfflineCardDailyLimit = in.OfflineCardDailyLimit.Value
		}
	})
}

// SetPaymentMethods replaces the accepted methods; owners only.
func (s *SettingsService) SetPaymentMethods(ctx context.Context, methods []kassa.PaymentMethodConfig) ([]kassa.PaymentMethodConfig, error) {
	var v kassa.Validation
	seen := map[kassa.PaymentMethod]bool{}
	for _, m := range methods {
		if !m.Method.Valid() || seen[m.Method] {
			v.Add("methods", "each entry needs a distinct method of cash, card, gift_card, external")
			break
		}
		seen[m.Method] = true
	}
	if err := v.Err(); err != nil {
		return nil, err
	}
	st, err := s.change(ctx, func(st *kassa.OrgSettings) {
		for _, m := range methods {
			found := false
			for i := range st.PaymentMethods {
				if st.PaymentMethods[i].Method == m.Method {
					st.PaymentMethods[i].Enabled, found = m.Enabled, true
				}
			}
			if !found {
				st.PaymentMethods = append(st.PaymentMethods, m)
			}
		}
	})
	if err != nil {
		return nil, err
	}
	return st.PaymentMethods, nil
}

// change applies fn to the org's settings in one transaction.
func (s *SettingsService) change(ctx context.Context, fn func(*kassa.OrgSettings)) (*kassa.OrgSettings, error) {
	a, err := kassa.MustActor(ctx)
	if err != nil {
		return nil, err
	}
	if a.Role != kassa.RoleOwner {
		return nil, kassa.Errorf(kassa.EForbidden, "only an owner can change the org's settings")
	}
	var st kassa.OrgSettings
	err = s.db.write(ctx, func(tx *Tx) error {
		old, err := orgSettings(ctx, tx, a.OrgID)
		if err != nil {
			return err
		}
		st = old
		st.PaymentMethods = append([]kassa.PaymentMethodConfig(nil), old.PaymentMethods...)
		fn(&st)
		cols := map[string]any{}
		changed(cols, "settings", old, st)
		return tx.update(ctx, entOrg, a.OrgID, a.OrgID, cols)
	})
	return &st, err
}
