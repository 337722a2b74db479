package kassa

import "regexp"

// Tax categories (docs/tax.md): an org's settings name a few tax
// categories, each with a rate; a product or a category names one
// (tax_category_id), the product's winning; a line of neither is taxed at
// the org's tax_rate_bps, so an org without categories prices as before.
// A rate of 0 is a zero-rated or an exempt category (the name says which).

// MaxTaxCategories bounds an org's tax categories.
const MaxTaxCategories = 20

// TaxCategory is one of an org's tax categories.
type TaxCategory struct {
	ID      string `json:"id"`       // Its key, chosen by the org: 1-40 lower-case letters, digits, - or _ (gst-free, vat-reduced).
	Name    string `json:"name"`     // Its name on receipts and reports (GST-free, VAT 9 %).
	RateBps int    `json:"rate_bps"` // Its rate in basis points, 0-5000 (0: zero-rated or exempt).
}

var taxCategoryKey = regexp.MustCompile(`^[a-z0-9][a-z0-9_-]{0,39}$`)

// ValidTaxCategoryID reports whether id is the form of a tax category's key.
func ValidTaxCategoryID(id string) bool { return taxCategoryKey.MatchString(id) }

// checkTaxCategories checks a list of tax categories: at most
// MaxTaxCategories, keys unique and well formed, names 1-100 characters,
// rates 0-MaxTaxRateBps.
func checkTaxCategories(v *Validation, cs []TaxCategory) {
	v.Check(len(cs) <= MaxTaxCategories, "tax_categories", "must be at most 20 tax categories")
	seen := make(map[string]bool, len(cs))
	for _, c := range cs {
		v.Check(ValidTaxCategoryID(c.ID) && !seen[c.ID], "tax_categories", "each id must be unique: 1-40 lower-case letters, digits, - or _")
		v.Check(c.Name != "" && ValidText(c.Name, 100), "tax_categories", "each name must be 1-100 characters of text")
		v.Check(c.RateBps >= 0 && c.RateBps <= MaxTaxRateBps, "tax_categories", "each rate_bps must be 0-5000 basis points")
		seen[c.ID] = true
	}
}

// TaxCategoryRate is the rate of the tax category id in the settings; nil
// when id is nil or names no category of the org (the org's rate applies).
func (s *OrgSettings) TaxCategoryRate(id *string) *int {
	if id == nil {
		return nil
	}
	for _, c := range s.TaxCategories {
		if c.ID == *id {
			r := c.RateBps
			return &r
		}
	}
	return nil
}

// checkTaxCategoryRef checks a product's or category's tax_category_id
// when present: the form of a key (the store checks the org has it).
func checkTaxCategoryRef(v *Validation, id *string) {
	if id != nil {
		v.Check(ValidTaxCategoryID(*id), "tax_category_id", "must be a tax category's id: 1-40 lower-case letters, digits, - or _")
	}
}

// SplitRefundTax spreads a refund of amount over an order's rates in
// proportion to weights (each rate's lines' total; largest remainder, so
// the parts sum to amount; all to the first rate when no weight is
// positive) and returns each part and the tax it contains at its rate,
// part × r / (10000 + r) half up — for an order of one rate, the tax
// report's refund tax before tax categories.
func SplitRefundTax(amount int64, rates []int, weights []int64) (parts, taxes []int64) {
	if len(rates) == 0 {
		return nil, nil
	}
	var total int64
	for _, w := range weights {
		total = addSat(total, max(w, 0))
	}
	if total == 0 {
		weights = append(make([]int64, 0, len(rates)), 1)
		weights = append(weights, make([]int64, len(rates)-1)...)
	}
	parts = allocate(amount, weights)
	taxes = make([]int64, len(parts))
	for i, p := range parts {
		r := int64(min(max(rates[i], 0), MaxTaxRateBps))
		taxes[i], _ = mulDivRound(p, r, 10000+r)
	}
	return parts, taxes
}

// LineTaxBreakdown is the tax by rate of an order's lines as stored (each
// with its rate), lowest rate first; [] for no lines.
func LineTaxBreakdown(lines []LineItem) []TaxGroup {
	groups := []TaxGroup{}
	for _, l := range lines {
		groups = AddTax(groups, l.TaxRateBps, l.Total-l.Tax, l.Tax)
	}
	return groups
}
