package kassa

import (
	"context"
	"slices"
	"strings"
)

// Variants (docs/catalog.md): a product with variants (size, colour…) is
// sold as one of them. A variant is a product row of its own — its sku,
// barcodes, price, cost and stock — whose VariantOf names the product it
// varies and whose Options say how ({"size": "M", "colour": "red"}). An
// order line names the product and the variant (OrderLineInput.VariantID):
// it sells at the variant's price, moves the variant's stock, and is taxed,
// categorised and matched by campaigns as its product.

// Bounds of a variant.
const (
	MaxVariantOptions = 5  // option names per variant
	maxOptionName     = 40 // characters of an option's name
	maxOptionValue    = 60 // characters of an option's value
)

// VariantCreate is the body of POST /catalog/products/:id/variants: a new
// variant of product :id.
type VariantCreate struct {
	Options   map[string]string `json:"options" openapi:"required"` // Which variant it is: option name → value, e.g. {"size": "M", "colour": "red"}; 1-5 options.
	SKU       string            `json:"sku" openapi:"required"`     // Its own sku, unique in the org among products and variants.
	Barcodes  []string          `json:"barcodes"`                   // Barcodes that find it (a scan sells it).
	BasePrice *int64            `json:"base_price"`                 // Its price in minor units; absent: its product's.
	Cost      *int64            `json:"cost"`                       // What one unit costs the business; absent: its product's.
	Name      string            `json:"name"`                       // Absent: the product's name and the option values ("T-shirt M / red").
	IsActive  *bool             `json:"is_active"`                  // Absent: true.
}

// Validate checks a new variant's own fields (its product is checked by
// the store).
func (in *VariantCreate) Validate() error {
	var v Validation
	checkOptions(&v, in.Options, true)
	if in.SKU == "" {
		v.Add("sku", "is required")
	} else {
		v.Check(ValidSKU(in.SKU), "sku", "must be 1-64 letters, digits or . _ / - starting with a letter or digit")
	}
	if in.BasePrice != nil {
		v.Check(*in.BasePrice >= 0 && *in.BasePrice <= MaxMoney, "base_price", "must be between 0 and 10^12 minor units")
	}
	checkCost(&v, in.Cost)
	checkStrings(&v, "barcodes", in.Barcodes, 64)
	if in.Name != "" {
		v.Check(ValidText(in.Name, 200), "name", "must be at most 200 characters of text")
	}
	return v.Err()
}

// Product is the variant as a product of parent: the parent's category,
// tax category, tags, modifiers and station, its own sku, barcodes, price
// and options.
func (in *VariantCreate) Product(parent *Product) *ProductCreate {
	price, cost := parent.BasePrice, parent.Cost
	if in.BasePrice != nil {
		price = *in.BasePrice
	}
	if in.Cost != nil {
		cost = in.Cost
	}
	name := in.Name
	if name == "" {
		name = VariantName(parent.Name, in.Options)
	}
	id := parent.ID
	return &ProductCreate{Name: name, Description: parent.Description, SKU: in.SKU, Barcodes: in.Barcodes, BasePrice: &price, Cost: cost,
		CategoryID: parent.CategoryID, TaxCategoryID: parent.TaxCategoryID, Tags: parent.Tags, IsActive: in.IsActive,
		ModifierGroupIDs: parent.ModifierGroupIDs, Station: parent.Station, VariantOf: &id, Options: in.Options}
}

// VariantName is a variant's default name: its product's and its option
// values in the order of their names ("T-shirt colour red, size M" reads
// as "T-shirt red / M").
func VariantName(product string, options map[string]string) string {
	keys := make([]string, 0, len(options))
	for k := range options {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	vals := make([]string, len(keys))
	for i, k := range keys {
		vals[i] = options[k]
	}
	name := product + " " + strings.Join(vals, " / ")
	if len([]rune(name)) > 200 {
		name = string([]rune(name)[:200])
	}
	return name
}

// checkOptions checks a variant's options: 1-5 names of 1-40 characters,
// each with a value of 1-60; required says a variant must have some.
func checkOptions(v *Validation, options map[string]string, required bool) {
	if len(options) == 0 {
		v.Check(!required, "options", "a variant needs 1-5 options (e.g. size, colour)")
		return
	}
	v.Check(len(options) <= MaxVariantOptions, "options", "must have at most 5 options")
	for k, val := range options {
		if k == "" || !ValidText(k, maxOptionName) || val == "" || !ValidText(val, maxOptionValue) {
			v.Add("options", "names must be 1-40 and values 1-60 characters of text")
			return
		}
	}
}

// checkVariantOf checks a product's variant fields: a variant names its
// product and has options; a product that is not a variant has none.
func checkVariantOf(v *Validation, variantOf *string, options map[string]string, components []BundleComponent) {
	if variantOf == nil {
		v.Check(len(options) == 0, "options", "only a variant has options; create it under its product (POST /catalog/products/{id}/variants)")
		return
	}
	v.Check(ValidID(*variantOf), "variant_of", "must be an id")
	checkOptions(v, options, true)
	v.Check(len(components) == 0, "components", "a variant cannot be a bundle")
}

// ChosenVariant checks an order line's variant choice against its product:
// a product with variants must be sold as one of them (variants lists its
// active variants' ids), one without as itself. field names the line.
func ChosenVariant(v *Validation, field string, variantID *string, variants []string) {
	switch {
	case variantID == nil && len(variants) > 0:
		v.Add(field+".variant_id", "the product has variants: choose one")
	case variantID != nil && !slices.Contains(variants, *variantID):
		v.Add(field+".variant_id", "no such active variant of the product")
	}
}

// VariantService makes and lists a product's variants. Errors: ENotFound,
// EInvalid, EConflict (the sku is taken).
type VariantService interface {
	FindVariants(ctx context.Context, productID string, p Page) (List[Product], error)
	CreateVariant(ctx context.Context, productID string, in *VariantCreate) (*Product, error)
}
