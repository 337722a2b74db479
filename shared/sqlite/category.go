package sqlite

import (
	"context"

	"kassa.dev/shared/kassa"
	"kassa.dev/sync/change"
)

// CategoryService implements kassa.CategoryService.
type CategoryService struct{ db *DB }

// NewCategoryService returns the category service of db.
func NewCategoryService(db *DB) *CategoryService { return &CategoryService{db: db} }

var _ kassa.CategoryService = (*CategoryService)(nil)

const categoryCols = `SELECT id, org_id, name, description, parent_id, sort_order, is_active, station, tax_category_id, created_at, updated_at FROM categories`

func scanCategory(s scanner) (*kassa.Category, error) {
	var c kassa.Category
	var created, updated string
	if err := s.Scan(&c.ID, &c.OrgID, &c.Name, &c.Description, &c.ParentID, &c.SortOrder, &c.IsActive, &c.Station, &c.TaxCategoryID, &created, &updated); err != nil {
		return nil, err
	}
	c.CreatedAt, c.UpdatedAt = parseTime(created), parseTime(updated)
	return &c, nil
}

func categoryID(c *kassa.Category) string { return c.ID }

// FindCategories lists the org's categories by id, filtered.
func (s *CategoryService) FindCategories(ctx context.Context, f kassa.CategoryFilter) (kassa.List[kassa.Category], error) {
	a, err := kassa.MustActor(ctx)
	if err != nil {
		return kassa.List[kassa.Category]{}, err
	}
	w := orgFilter(a.OrgID)
	eq(w, "parent_id", f.ParentID)
	eq(w, "is_active", f.IsActive)
	return findPage(ctx, s.db.Reader, categoryCols, w, f.Page, scanCategory, categoryID)
}

// FindCategoryByID returns one category of the org, or ENotFound.
func (s *CategoryService) FindCategoryByID(ctx context.Context, id string) (*kassa.Category, error) {
	return readOwn(ctx, s.db, findCategory, id)
}

func findCategory(ctx context.Context, q querier, orgID, id string) (*kassa.Category, error) {
	return findByID(ctx, q, categoryCols, "category", orgID, id, scanCategory)
}

// CreateCategory validates and stores a new category. Errors: EInvalid
// (also when parent_id names no category of the org).
func (s *CategoryService) CreateCategory(ctx context.Context, in *kassa.CategoryCreate) (*kassa.Category, error) {
	a, err := kassa.MustActor(ctx)
	if err != nil {
		return nil, err
	}
	if err := in.Validate(); err != nil {
		return nil, err
	}
	id := s.db.NewID()
	return writeRead(ctx, s.db, findCategory, a.OrgID, id, func(tx *Tx) error {
		if in.ParentID != nil && !exists(ctx, tx, "categories", a.OrgID, *in.ParentID) {
			return noSuchParent()
		}
		if err := checkTaxCategory(ctx, tx, a.OrgID, in.TaxCategoryID); err != nil {
			return err
		}
		active := in.IsActive == nil || *in.IsActive
		return tx.Insert(ctx, entCategory, a.OrgID, id, map[string]any{
			"name": in.Name, "description": in.Description, "parent_id": in.ParentID,
			"sort_order": in.SortOrder, "is_active": active, "station": in.Station, "tax_category_id": in.TaxCategoryID,
		})
	})
}

// UpdateCategory applies a partial update. Errors: ENotFound, EInvalid,
// EConflict when the new parent would make the category its own ancestor.
func (s *CategoryService) UpdateCategory(ctx context.Context, id string, in *kassa.CategoryUpdate) (*kassa.Category, error) {
	a, err := kassa.MustActor(ctx)
	if err != nil {
		return nil, err
	}
	if err := in.Validate(); err != nil {
		return nil, err
	}
	return updateRead(ctx, s.db, entCategory, findCategory, a.OrgID, id, func(tx *Tx, c *kassa.Category, cols map[string]any) error {
		patch(cols, "name", c.Name, in.Name)
		patchNullable(cols, "description", c.Description, in.Description)
		patchNullable(cols, "parent_id", c.ParentID, in.ParentID)
		patch(cols, "sort_order", c.SortOrder, in.SortOrder)
		patch(cols, "is_active", c.IsActive, in.IsActive)
		patchNullable(cols, "station", c.Station, in.Station)
		patchNullable(cols, "tax_category_id", c.TaxCategoryID, in.TaxCategoryID)
		if err := checkTaxCategory(ctx, tx, a.OrgID, optPtr(in.TaxCategoryID)); err != nil {
			return err
		}
		if parent, ok := cols["parent_id"].(*string); ok && parent != nil {
			if !exists(ctx, tx, "categories", a.OrgID, *parent) {
				return noSuchParent()
			}
			cycle, err := isAncestorOrSelf(ctx, tx, a.OrgID, id, *parent)
			if err != nil {
				return err
			}
			if cycle {
				return kassa.Errorf(kassa.EConflict, "category %s cannot be its own ancestor", id)
			}
		}
		return nil
	})
}

func noSuchParent() error {
	return kassa.InvalidField("parent_id", "no such category")
}

// isAncestorOrSelf reports whether id is from or one of from's ancestors in
// the org. UNION (not UNION ALL) ends the walk on a loop already in the data.
func isAncestorOrSelf(ctx context.Context, q querier, orgID, id, from string) (bool, error) {
	var n int
	err := q.QueryRowContext(ctx, `WITH RECURSIVE up(id) AS (
			SELECT ?
			UNION
			SELECT c.parent_id FROM categories c JOIN up ON c.id = up.id
			WHERE c.org_id = ? AND c.parent_id IS NOT NULL
		)
		SELECT count(*) FROM up WHERE id = ?`, from, orgID, id).Scan(&n)
	return n > 0, err
}

var entCategory = new(noun)

func init() {
	register(entCategory, noun{Name: "category", Table: "categories", Digest: orgRows, Formats: []formatStep{{Format: 5, Migration: 42}},
		Edge: &edgeRule{Update: []string{"name", "description", "parent_id", "sort_order", "is_active", "station", "tax_category_id"},
			Scopes: catalogWrite, Refs: []ref{{Col: "parent_id", Table: "categories"}}, Check: checkCategory}})
}

func checkCategory(_ context.Context, _ *admitter, c *change.Change, f map[string]any) error {
	return checkAs(c, f, &kassa.CategoryCreate{}, &kassa.CategoryUpdate{})
}
