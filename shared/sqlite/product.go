package sqlite

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"kassa.dev/shared/kassa"
	"kassa.dev/shared/sqlite/engine"
	"kassa.dev/sync/change"
)

// ProductService implements kassa.ProductService.
type ProductService struct{ db *DB }

// NewProductService returns the product service of db.
func NewProductService(db *DB) *ProductService { return &ProductService{db: db} }

var _ kassa.ProductService = (*ProductService)(nil)

const productCols = `SELECT id, org_id, name, description, sku, barcodes, base_price, cost, category_id, tax_category_id, tags, is_active, modifier_group_ids, station, variant_of, options, components, created_at, updated_at FROM products`

func scanProduct(s scanner) (*kassa.Product, error) {
	var p kassa.Product
	var barcodes, tags, groups, options, comps, created, updated string
	if err := s.Scan(&p.ID, &p.OrgID, &p.Name, &p.Description, &p.SKU, &barcodes, &p.BasePrice, &p.Cost, &p.CategoryID, &p.TaxCategoryID,
		&tags, &p.IsActive, &groups, &p.Station, &p.VariantOf, &options, &comps, &created, &updated); err != nil {
		return nil, err
	}
	p.CreatedAt, p.UpdatedAt = parseTime(created), parseTime(updated)
	p.Options, p.Components = map[string]string{}, []kassa.BundleComponent{}
	err := errors.Join(decodeJSON(barcodes, &p.Barcodes), decodeJSON(tags, &p.Tags), decodeJSON(groups, &p.ModifierGroupIDs),
		decodeJSON(options, &p.Options), decodeJSON(comps, &p.Components))
	return &p, err
}

func productID(p *kassa.Product) string { return p.ID }

// FindProducts lists the org's products by id, filtered.
func (s *ProductService) FindProducts(ctx context.Context, f kassa.ProductFilter) (kassa.List[kassa.Product], error) {
	a, err := kassa.MustActor(ctx)
	if err != nil {
		return kassa.List[kassa.Product]{}, err
	}
	w := orgFilter(a.OrgID)
	eq(w, "category_id", f.CategoryID)
	eq(w, "is_active", f.IsActive)
	variantsOnly(w, f)
	if f.Q != "" {
		like := "%" + escapeLike(strings.ToLower(f.Q)) + "%"
		d := engine.D(s.db.Reader)
		w.and(`(`+d.Fold("name")+` LIKE ? ESCAPE '\' OR `+d.Fold("sku")+` LIKE ? ESCAPE '\' OR EXISTS (SELECT 1 FROM `+d.JSONValues("products.barcodes", "j")+` WHERE j.value = ?))`, like, like, f.Q)
	}
	return findPage(ctx, s.db.Reader, productCols, w, f.Page, scanProduct, productID)
}

// FindProductByID returns one product of the org, or ENotFound.
func (s *ProductService) FindProductByID(ctx context.Context, id string) (*kassa.Product, error) {
	return readOwn(ctx, s.db, findProduct, id)
}

func findProduct(ctx context.Context, q querier, orgID, id string) (*kassa.Product, error) {
	return findByID(ctx, q, productCols, "product", orgID, id, scanProduct)
}

// CreateProduct validates and stores a new product and emits
// product.created. Errors: EInvalid,
// EConflict when the sku is taken in the org.
func (s *ProductService) CreateProduct(ctx context.Context, in *kassa.ProductCreate) (*kassa.Product, error) {
	a, err := kassa.MustActor(ctx)
	if err != nil {
		return nil, err
	}
	if err := in.Validate(); err != nil {
		return nil, err
	}
	id := s.db.NewID()
	var out *kassa.Product
	err = s.db.Write(ctx, func(tx *Tx) error {
		if err := checkRefs(ctx, tx, a.OrgID, in.CategoryID, in.ModifierGroupIDs); err != nil {
			return err
		}
		if err := checkTaxCategory(ctx, tx, a.OrgID, in.TaxCategoryID); err != nil {
			return err
		}
		if err := checkCatalogShape(ctx, tx, a.OrgID, id, in); err != nil {
			return err
		}
		active := in.IsActive == nil || *in.IsActive
		err := tx.Insert(ctx, entProduct, a.OrgID, id, map[string]any{
			"name": in.Name, "description": in.Description, "sku": in.SKU,
			"barcodes": orEmpty(in.Barcodes), "base_price": *in.BasePrice, "cost": in.Cost, "category_id": in.CategoryID, "tax_category_id": in.TaxCategoryID,
			"tags": orEmpty(in.Tags), "is_active": active, "modifier_group_ids": dedupe(in.ModifierGroupIDs),
			"station": in.Station, "variant_of": in.VariantOf, "options": optionsOf(in.Options), "components": orEmpty(in.Components),
		})
		if isUniqueViolation(err) {
			return kassa.Errorf(kassa.EConflict, "a product with sku %q already exists", in.SKU)
		}
		if err != nil {
			return err
		}
		return emitRead(ctx, tx, findProduct, a.OrgID, id, kassa.EventProductCreated, &out)
	})
	return out, err
}

// UpdateProduct applies a partial update and emits product.updated when
// a field changed. Errors: ENotFound, EInvalid.
func (s *ProductService) UpdateProduct(ctx context.Context, id string, in *kassa.ProductUpdate) (*kassa.Product, error) {
	a, err := kassa.MustActor(ctx)
	if err != nil {
		return nil, err
	}
	if err := in.Validate(); err != nil {
		return nil, err
	}
	return updateEmit(ctx, s.db, entProduct, kassa.EventProductUpdated, findProduct, a.OrgID, id, func(tx *Tx, p *kassa.Product, cols map[string]any) error {
		patch(cols, "name", p.Name, in.Name)
		patchNullable(cols, "description", p.Description, in.Description)
		patch(cols, "base_price", p.BasePrice, in.BasePrice)
		patchNullable(cols, "cost", p.Cost, in.Cost)
		patchNullable(cols, "category_id", p.CategoryID, in.CategoryID)
		patchNullable(cols, "tax_category_id", p.TaxCategoryID, in.TaxCategoryID)
		patchAs(cols, "tags", p.Tags, in.Tags, orEmpty)
		patch(cols, "is_active", p.IsActive, in.IsActive)
		patchAs(cols, "modifier_group_ids", p.ModifierGroupIDs, in.ModifierGroupIDs, dedupe)
		patchNullable(cols, "station", p.Station, in.Station)
		patchAs(cols, "components", p.Components, in.Components, orEmpty)
		if err := checkComponentsOf(ctx, tx, a.OrgID, p, in.Components); err != nil {
			return err
		}
		var groups []string
		in.ModifierGroupIDs.To(&groups)
		if err := checkRefs(ctx, tx, a.OrgID, optPtr(in.CategoryID), groups); err != nil {
			return err
		}
		return checkTaxCategory(ctx, tx, a.OrgID, optPtr(in.TaxCategoryID))
	})
}

// ArchiveProduct soft-deletes a product: it stays, inactive. Archiving an
// archived product changes nothing and returns it.
func (s *ProductService) ArchiveProduct(ctx context.Context, id string) (*kassa.Product, error) {
	return s.UpdateProduct(ctx, id, &kassa.ProductUpdate{IsActive: kassa.Some(false)})
}

// checkRefs checks that a category and modifier groups exist in the org.
func checkRefs(ctx context.Context, tx *Tx, orgID string, categoryID *string, groupIDs []string) error {
	var v kassa.Validation
	if categoryID != nil && !exists(ctx, tx, "categories", orgID, *categoryID) {
		v.Add("category_id", "no such category")
	}
	for _, g := range groupIDs {
		if !exists(ctx, tx, "modifier_groups", orgID, g) {
			v.Add("modifier_group_ids", "no such modifier group: %s", g)
			break
		}
	}
	return v.Err()
}

// Products: a sku two stores gave alike while apart is settled by
// renaming the one with the greater id. Format 5 (migration 0036) adds
// cost, which a store's catalog writer may set as it sets the price, and
// (migration 0042) tax_category_id.
var entProduct = new(noun)

func init() {
	register(entProduct, noun{Name: "product", Table: "products", Digest: orgRows, Formats: []formatStep{{Format: 5, Migration: 36}, {Format: 5, Migration: 42}, {Format: 5, Migration: 46}},
		Unique: &uniqueKey{Col: "sku", GiveWay: func(v any, id string) any { return fmt.Sprintf("%v-%s", v, strings.ToUpper(id[len(id)-6:])) }},
		Edge: &edgeRule{Update: []string{"name", "description", "base_price", "cost", "category_id", "tax_category_id", "tags", "is_active", "modifier_group_ids", "station", "components"},
			Once:   []string{"sku", "barcodes", "variant_of", "options"},
			Scopes: catalogWrite, Refs: []ref{{Col: "category_id", Table: "categories"}, {Col: "modifier_group_ids", Table: "modifier_groups", List: true},
				{Col: "variant_of", Table: "products"}, {Col: "components", Table: "products", Key: "product_id"}},
			Check: checkProduct},
		Events: map[string]eventSubject{kassa.EventProductCreated: {}, kassa.EventProductUpdated: {}},
		NewState: func(db *engine.DB) any {
			return &productState{catalog: &catalogCache{}, catalogWatcher: catalogWatcher{db}}
		}})
}

func checkProduct(ctx context.Context, ad *admitter, c *change.Change, f map[string]any) error {
	if err := checkAs(c, f, &kassa.ProductCreate{}, &kassa.ProductUpdate{}); err != nil {
		return err
	}
	return admitBundle(ctx, ad, c, f)
}
