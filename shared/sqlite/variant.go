package sqlite

import (
	"context"
	"fmt"

	"kassa.dev/shared/kassa"
)

// Variants (docs/catalog.md): a variant is a products row whose
// variant_of names its product (product.go stores it); this file holds
// what is the variants' own: making one under its product, listing them,
// and resolving an order line's variant.

var _ kassa.VariantService = (*ProductService)(nil)

// variantsOnly narrows a product list: a product's variants
// (f.VariantOf), or products without their variants unless f asks for
// them or searches (a barcode or sku finds a variant).
func variantsOnly(w *filter, f kassa.ProductFilter) {
	switch {
	case f.VariantOf != nil:
		w.and("variant_of = ?", *f.VariantOf)
	case !f.Variants && f.Q == "":
		w.and("variant_of IS NULL")
	}
}

// optionsOf is a variant's options as stored ({} for none).
func optionsOf(m map[string]string) map[string]string {
	if m == nil {
		return map[string]string{}
	}
	return m
}

// CreateVariant makes a variant of product productID: a product of its
// own with the product's category, tax category, modifiers and station.
// Errors: ENotFound (no such product), EInvalid, EConflict naming sku when
// a product or variant of the org has it.
func (s *ProductService) CreateVariant(ctx context.Context, productID string, in *kassa.VariantCreate) (*kassa.Product, error) {
	if err := in.Validate(); err != nil {
		return nil, err
	}
	parent, err := s.FindProductByID(ctx, productID)
	if err != nil {
		return nil, err
	}
	return s.CreateProduct(ctx, in.Product(parent))
}

// FindVariants lists a product's variants (ENotFound for no such product).
func (s *ProductService) FindVariants(ctx context.Context, productID string, p kassa.Page) (kassa.List[kassa.Product], error) {
	if _, err := s.FindProductByID(ctx, productID); err != nil {
		return kassa.List[kassa.Product]{}, err
	}
	return s.FindProducts(ctx, kassa.ProductFilter{VariantOf: &productID, Page: p})
}

// checkCatalogShape checks a new product's sku, variant and bundle fields
// against the org's catalog in the unit: the sku is free (409 naming it);
// a variant's product exists and is neither a variant nor a bundle; a
// bundle's components are sellable and do not contain it.
func checkCatalogShape(ctx context.Context, tx *Tx, orgID, id string, in *kassa.ProductCreate) error {
	if skuTaken(ctx, tx, orgID, in.SKU) {
		return &kassa.Error{Kind: kassa.EConflict, Message: fmt.Sprintf("a product or variant with sku %q already exists", in.SKU),
			Fields: []kassa.FieldError{{Field: "sku", Message: "is the sku of another product or variant of the org"}}}
	}
	if in.VariantOf != nil {
		parent, err := findProduct(ctx, tx, orgID, *in.VariantOf)
		switch {
		case err != nil:
			return kassa.InvalidField("variant_of", "no such product")
		case parent.VariantOf != nil:
			return kassa.InvalidField("variant_of", "is itself a variant: make the variant under its product")
		case len(parent.Components) > 0:
			return kassa.InvalidField("variant_of", "is a bundle, which has no variants")
		}
	}
	return checkBundle(ctx, tx, orgID, id, in.Components)
}

func skuTaken(ctx context.Context, q querier, orgID, sku string) bool {
	var n int
	err := q.QueryRowContext(ctx, `SELECT count(*) FROM products WHERE org_id = ? AND sku = ?`, orgID, sku).Scan(&n)
	return err == nil && n > 0
}

// variantIDs are the ids of product id's active variants.
func variantIDs(ctx context.Context, q querier, orgID, id string) ([]string, error) {
	rows, err := q.QueryContext(ctx, `SELECT id FROM products WHERE org_id = ? AND variant_of = ? AND is_active = 1 ORDER BY id`, orgID, id)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var ids []string
	for rows.Next() {
		var v string
		if err := rows.Scan(&v); err != nil {
			return nil, err
		}
		ids = append(ids, v)
	}
	return ids, rows.Err()
}

// soldItem resolves what order line field sells of product p with
// variantID: the product (nil variant) or one of its active variants. A
// line naming a variant as its product sells that variant of its product.
// Problems are added to v; the product returned is the line's product.
func soldItem(ctx context.Context, cat catalogView, p *kassa.Product, variantID *string, field string, v *kassa.Validation) (*kassa.Product, *kassa.Product, error) {
	if p.VariantOf != nil && (variantID == nil || *variantID == p.ID) {
		parent, err := cat.product(ctx, *p.VariantOf)
		if err != nil {
			return nil, nil, err
		}
		return parent, p, nil
	}
	ids, err := cat.variants(ctx, p.ID)
	if err != nil {
		return nil, nil, err
	}
	kassa.ChosenVariant(v, field, variantID, ids)
	if variantID == nil || len(ids) == 0 {
		return p, nil, nil
	}
	variant, err := cat.product(ctx, *variantID)
	if err != nil {
		return p, nil, nil // reported by ChosenVariant
	}
	return p, variant, nil
}
