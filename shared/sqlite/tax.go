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

// refundTaxRows adds each refund of the tax report's scope by rate: its
// amount spread over its order's rates (kassa.SplitRefundTax) in
// proportion to what it returned of each rate's lines, or for a refund by
// amount to the lines' totals; an order of one rate reports its refunds as
// before tax categories (docs/tax.md).
func (s *ReportService) refundTaxRows(ctx context.Context, key string, args []any, add func(k, cur string, rate, inclusive, amount, tax int64)) error {
	rows, err := s.db.Reader.QueryContext(ctx, s.withD()+`SELECT `+key+`, o.currency, r.id, r.amount - r.gift_card_amount, o.tax_inclusive,
		coalesce(l.tax_rate_bps, o.tax_rate_bps), CASE WHEN `+s.d().JSONArrayLength("r.lines")+` > 0
			THEN coalesce(sum((SELECT sum(`+s.d().JSONInt("j.value", "amount")+`) FROM `+s.d().JSONElements("r.lines", "j")+` WHERE `+s.d().JSONText("j.value", "line_item_id")+` = l.id)), 0)
			ELSE coalesce(sum(l.total), 0) END
		FROM d CROSS JOIN refunds r JOIN orders o ON o.id = r.order_id LEFT JOIN order_lines l ON l.order_id = o.id AND l.org_id = o.org_id
		WHERE r.org_id = ? AND r.amount > r.gift_card_amount AND r.location_id = d.loc AND r.created_at >= d.lo AND r.created_at < d.hi
		GROUP BY 1, 2, 3, 4, 5, 6 ORDER BY 3, 6`, args...)
	if err != nil {
		return err
	}
	defer rows.Close()
	var k, cur, id string
	var amount, inclusive int64
	var rates []int
	var weights []int64
	flush := func() {
		parts, taxes := kassa.SplitRefundTax(amount, rates, weights)
		for i := range parts {
			add(k, cur, int64(rates[i]), inclusive, parts[i], taxes[i])
		}
	}
	for rows.Next() {
		var rk, rcur, rid string
		var ramount, rincl, rrate, rweight int64
		if err := rows.Scan(&rk, &rcur, &rid, &ramount, &rincl, &rrate, &rweight); err != nil {
			return err
		}
		if rid != id || rk != k {
			if id != "" {
				flush()
			}
			k, cur, id, amount, inclusive, rates, weights = rk, rcur, rid, ramount, rincl, nil, nil
		}
		rates, weights = append(rates, int(rrate)), append(weights, rweight)
	}
	if id != "" {
		flush()
	}
	return rows.Err()
}
