package kassa

import (
	"context"
	"time"
)

// Product is a sellable catalog item. Archiving sets IsActive false; the row stays.
type Product struct {
	ID          string   `json:"id"`
	OrgID       string   `json:"org_id"`
	Name        string   `json:"name"`
	Description *string  `json:"description"`
	SKU         string   `json:"sku"`
	Barcodes    []string `json:"barcodes"`   // Barcodes that find it by exact match (q).
	BasePrice   int64    `json:"base_price"` // minor units
	// What one unit costs the business, in minor units of the org's
	// currency; null when not known. The inventory report values stock at
	// it and the sales report by product gives the gross margin over it.
	Cost             *int64   `json:"cost"`
	CategoryID       *string  `json:"category_id"`
	TaxCategoryID    *string  `json:"tax_category_id"` // Its tax category (the org's settings' tax_categories); null: its category's, else the org's rate.
	Tags             []string `json:"tags"`
	IsActive         bool     `json:"is_active"`
	ModifierGroupIDs []string `json:"modifier_group_ids"`
	Station          *string  `json:"station"` // KDS station of its lines; nil: the category's
	// VariantOf is the product this one is a variant of (null: not a
	// variant); Options say which variant (docs/catalog.md).
	VariantOf  *string           `json:"variant_of"`
	Options    map[string]string `json:"options"`    // A variant's options (size, colour…); empty for a product.
	Components []BundleComponent `json:"components"` // A bundle's components, whose stock it sells; empty: not a bundle.
	CreatedAt  time.Time         `json:"created_at"`
	UpdatedAt  time.Time         `json:"updated_at"`
}

// ProductCreate is the body of POST /catalog/products.
type ProductCreate struct {
	Name             string   `json:"name" openapi:"required"`
	Description      *string  `json:"description"`
	SKU              string   `json:"sku" openapi:"required"`
	Barcodes         []string `json:"barcodes"`
	BasePrice        *int64   `json:"base_price" openapi:"required"`
	Cost             *int64   `json:"cost"` // What one unit costs the business (0 to 10^12 minor units); absent or null: not known.
	CategoryID       *string  `json:"category_id"`
	TaxCategoryID    *string  `json:"tax_category_id"` // Its tax category, an id of the settings' tax_categories; absent or null: its category's, else the org's rate.
	Tags             []string `json:"tags"`
	IsActive         *bool    `json:"is_active"`
	ModifierGroupIDs []string `json:"modifier_group_ids"`
	Station          *string  `json:"station"`
	// A variant is made under its product (POST /catalog/products/{id}/variants),
	// which sets these two.
	VariantOf  *string           `json:"variant_of" openapi:"-"`
	Options    map[string]string `json:"options" openapi:"-"`
	Components []BundleComponent `json:"components"` // Makes the product a bundle of these (1-20 products, each 1-100 units); its stock is theirs.
}

// Validate checks the fields of a new product (spec 2.3: name, sku and
// base_price are required).
func (in *ProductCreate) Validate() error {
	var v Validation
	v.Check(in.Name != "", "name", "is required")
	v.Check(ValidText(in.Name, 200), "name", "must be at most 200 characters of text")
	if in.Description != nil {
		v.Check(ValidText(*in.Description, 2000), "description", "must be at most 2000 characters of text")
	}
	if in.SKU == "" {
		v.Add("sku", "is required")
	} else {
		v.Check(ValidSKU(in.SKU), "sku", "must be 1-64 letters, digits or . _ / - starting with a letter or digit")
	}
	if in.BasePrice == nil {
		v.Add("base_price", "is required")
	} else {
		v.Check(*in.BasePrice >= 0 && *in.BasePrice <= MaxMoney, "base_price", "must be between 0 and 10^12 minor units")
	}
	checkCost(&v, in.Cost)
	checkStrings(&v, "barcodes", in.Barcodes, 64)
	checkStrings(&v, "tags", in.Tags, 64)
	checkIDs(&v, "modifier_group_ids", in.ModifierGroupIDs)
	if in.CategoryID != nil {
		v.Check(ValidID(*in.CategoryID), "category_id", "must be an id")
	}
	checkStation(&v, in.Station)
	checkTaxCategoryRef(&v, in.TaxCategoryID)
	checkVariantOf(&v, in.VariantOf, in.Options, in.Components)
	checkComponents(&v, in.Components)
	return v.Err()
}

// ProductUpdate is the body of PATCH /catalog/products/:id. SKU and barcodes
// are not updatable (spec 2.3).
type ProductUpdate struct {
	Name             Opt[string]   `json:"name"`
	Description      Opt[string]   `json:"description" openapi:"nullable"`
	BasePrice        Opt[int64]    `json:"base_price"`
	Cost             Opt[int64]    `json:"cost" openapi:"nullable"` // What one unit costs the business (0 to 10^12 minor units); null: not known.
	CategoryID       Opt[string]   `json:"category_id" openapi:"nullable"`
	TaxCategoryID    Opt[string]   `json:"tax_category_id" openapi:"nullable"` // Its tax category, an id of the settings' tax_categories; null: its category's, else the org's rate.
	Tags             Opt[[]string] `json:"tags"`
	IsActive         Opt[bool]     `json:"is_active"`
	ModifierGroupIDs Opt[[]string] `json:"modifier_group_ids"`
	Station          Opt[string]   `json:"station" openapi:"nullable"`
	// Components replaces a bundle's components ([]: no longer a bundle).
	Components Opt[[]BundleComponent] `json:"components"`
	// SKU and Barcodes are only here to be refused with a clear message.
	SKU       Opt[any] `json:"sku" openapi:"-"`
	Barcodes  Opt[any] `json:"barcodes" openapi:"-"`
	VariantOf Opt[any] `json:"variant_of" openapi:"-"`
	Options   Opt[any] `json:"options" openapi:"-"`
}

// Validate checks the fields present in a product update.
func (in *ProductUpdate) Validate() error {
	var v Validation
	v.Check(!in.SKU.Set, "sku", "cannot be changed; create a new product instead")
	v.Check(!in.Barcodes.Set, "barcodes", "cannot be changed; create a new product instead")
	v.Check(!in.VariantOf.Set, "variant_of", "cannot be changed; create a new variant instead")
	v.Check(!in.Options.Set, "options", "cannot be changed; create a new variant instead")
	v.Check(!in.Components.Null, "components", "must be a list ([] for none)")
	checkComponents(&v, in.Components.Value)
	if in.Name.Set {
		v.Check(!in.Name.Null && in.Name.Value != "" && ValidText(in.Name.Value, 200), "name", "must be 1-200 characters of text")
	}
	if in.Description.Set && !in.Description.Null {
		v.Check(ValidText(in.Description.Value, 2000), "description", "must be at most 2000 characters of text")
	}
	if in.BasePrice.Set {
		v.Check(!in.BasePrice.Null && in.BasePrice.Value >= 0 && in.BasePrice.Value <= MaxMoney, "base_price", "must be between 0 and 10^12 minor units")
	}
	if in.Cost.Set && !in.Cost.Null {
		checkCost(&v, &in.Cost.Value)
	}
	if in.CategoryID.Set && !in.CategoryID.Null {
		v.Check(ValidID(in.CategoryID.Value), "category_id", "must be an id")
	}
	if in.TaxCategoryID.Set && !in.TaxCategoryID.Null {
		checkTaxCategoryRef(&v, &in.TaxCategoryID.Value)
	}
	if in.Tags.Set {
		checkStrings(&v, "tags", in.Tags.Value, 64)
	}
	v.Check(!in.IsActive.Null, "is_active", "must be true or false")
	if in.ModifierGroupIDs.Set {
		checkIDs(&v, "modifier_group_ids", in.ModifierGroupIDs.Value)
	}
	if in.Station.Set && !in.Station.Null {
		checkStation(&v, &in.Station.Value)
	}
	return v.Err()
}

// checkCost checks a product's cost: nil (not known) or 0 to MaxMoney.
func checkCost(v *Validation, cost *int64) {
	if cost != nil {
		v.Check(*cost >= 0 && *cost <= MaxMoney, "cost", "must be null or between 0 and 10^12 minor units")
	}
}

func checkStrings(v *Validation, field string, ss []string, max int) {
	v.Check(len(ss) <= 100, field, "must have at most 100 entries")
	for _, s := range ss {
		if s == "" || !ValidText(s, max) {
			v.Add(field, "entries must be 1-%d characters of text", max)
			return
		}
	}
}

func checkIDs(v *Validation, field string, ids []string) {
	v.Check(len(ids) <= 100, field, "must have at most 100 entries")
	for _, id := range ids {
		if !ValidID(id) {
			v.Add(field, "entries must be ids")
			return
		}
	}
}

// ProductFilter selects products in FindProducts.
type ProductFilter struct {
	CategoryID *string
	IsActive   *bool
	VariantOf  *string // only the variants of this product
	Variants   bool    // variants too (a search by q always finds them)
	Q          string  // substring of name, sku or a barcode
	Page
}

// ProductService manages the org's catalog products. Errors: ENotFound,
// EInvalid, EConflict (duplicate sku).
type ProductService interface {
	FindProducts(ctx context.Context, f ProductFilter) (List[Product], error)
	FindProductByID(ctx context.Context, id string) (*Product, error)
	CreateProduct(ctx context.Context, in *ProductCreate) (*Product, error)
	UpdateProduct(ctx context.Context, id string, in *ProductUpdate) (*Product, error)
	ArchiveProduct(ctx context.Context, id string) (*Product, error)
}
