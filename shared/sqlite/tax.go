package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"slices"

	"kassa.dev/shared/kassa"
)

// Tax categories (docs/tax.md) live in the org's settings; products and
// categories name one by id.

// checkTaxCategory refuses a tax_category_id the org's settings do not
// have. Errors: EInvalid naming tax_category_id.
func checkTaxCategory(ctx context.Context, q querier, orgID string, id *string) error {
	if id == nil {
		return nil
	}
	st, err := orgSettings(ctx, q, orgID)
	if err != nil {
		return err
	}
	if st.TaxCategoryRate(id) == nil {
		return kassa.InvalidField("tax_category_id", "no such tax category in the settings' tax_categories")
	}
	return nil
}

// keepNamedTaxCategories refuses settings that drop a tax category a
// product or a category of the org still names. Errors: EConflict.
func keepNamedTaxCategories(ctx context.Context, q querier, orgID string, old, st kassa.OrgSettings) error {
	for _, c := range old.TaxCategories {
		if slices.ContainsFunc(st.TaxCategories, func(n kassa.TaxCategory) bool { return n.ID == c.ID }) {
			continue
		}
		var n int
		err := q.QueryRowContext(ctx, `SELECT (SELECT count(*) FROM products WHERE org_id = ?1 AND tax_category_id = ?2)
			+ (SELECT count(*) FROM categories WHERE org_id = ?1 AND tax_category_id = ?2)`, orgID, c.ID).Scan(&n)
		if err != nil {
			return err
		}
		if n > 0 {
			return kassa.Errorf(kassa.EConflict, "tax category %s is named by %d products or categories: move them first", c.ID, n)
		}
	}
	return nil
}

// lineTaxRates are the tax rates of an order's lines: the product's tax
// category's, else its category's, else nil (the org's rate). A category
// the settings no longer have counts as none.
func lineTaxRates(ctx context.Context, q querier, orgID string, st *kassa.OrgSettings, lines []builtLine) ([]*int, error) {
	rates := make([]*int, len(lines))
	if len(st.TaxCategories) == 0 {
		return rates, nil
	}
	for i, l := range lines {
		id := l.product.TaxCategoryID
		if id == nil && l.product.CategoryID != nil {
			err := q.QueryRowContext(ctx, `SELECT tax_category_id FROM categories WHERE id = ? AND org_id = ?`, *l.product.CategoryID, orgID).Scan(&id)
			if err != nil && !errors.Is(err, sql.ErrNoRows) {
				return nil, err
			}
		}
		rates[i] = st.TaxCategoryRate(id)
	}
	return rates, nil
}

// lineTaxRate is a pushed order line's own tax rate (tax_rate_bps, checked
// in range), nil when it has none (the order's).
func lineTaxRate(f map[string]any) *int {
	v, ok := intField(f, "tax_rate_bps")
	if !ok {
		return nil
	}
	r := int(v)
	return &r
}
