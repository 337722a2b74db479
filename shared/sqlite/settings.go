package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"

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
	st, err := orgSettings(ctx, s.db.Reader, a.OrgID)
	return &st, err
}

// UpdateSettings changes the settings present in the update; owners only.
func (s *SettingsService) UpdateSettings(ctx context.Context, in *kassa.SettingsUpdate) (*kassa.OrgSettings, error) {
	if err := in.Validate(); err != nil {
		return nil, err
	}
	return s.change(ctx, in.Apply)
}

// SetPaymentMethods replaces the accepted methods; owners only.
func (s *SettingsService) SetPaymentMethods(ctx context.Context, methods []kassa.PaymentMethodConfig) ([]kassa.PaymentMethodConfig, error) {
	if err := kassa.ValidatePaymentMethods(methods); err != nil {
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
	err = s.db.Write(ctx, func(tx *Tx) error {
		old, err := orgSettings(ctx, tx, a.OrgID)
		if err != nil {
			return err
		}
		st = old
		st.PaymentMethods = append([]kassa.PaymentMethodConfig(nil), old.PaymentMethods...)
		fn(&st)
		if err := keepNamedTaxCategories(ctx, tx, a.OrgID, old, st); err != nil {
			return err
		}
		cols := map[string]any{}
		changed(cols, "settings", old, st)
		return tx.Update(ctx, entOrg, a.OrgID, a.OrgID, cols)
	})
	return &st, err
}

// orgSettings returns an org's settings as kassa.DecodeSettings reads
// the org row's. Errors: ENotFound.
func orgSettings(ctx context.Context, q querier, orgID string) (kassa.OrgSettings, error) {
	var raw string
	err := q.QueryRowContext(ctx, `SELECT settings FROM orgs WHERE id = ?`, orgID).Scan(&raw)
	if errors.Is(err, sql.ErrNoRows) {
		return kassa.DefaultSettings(), kassa.NotFound("org", orgID)
	}
	if err != nil {
		return kassa.DefaultSettings(), err
	}
	set, err := kassa.DecodeSettings([]byte(raw))
	if err != nil {
		return set, fmt.Errorf("sqlite: settings of org %s: %w", orgID, err)
	}
	return set, nil
}
