package kassa

import (
	"context"
	"time"
)

// Category groups products; categories nest through ParentID.
type Category struct {
	ID          string  `json:"id"`
	OrgID       string  `json:"org_id"`
	Name        string  `json:"name"`
	Description *string `json:"description"`
	ParentID    *string `json:"parent_id"`
	SortOrder   int     `json:"sort_order"`
	IsActive    bool    `json:"is_active"`
	Station     *string `json:"station"` // KDS station of its products' lines; nil: kitchen
	// TaxCategoryID is its products' tax category when they name none.
	TaxCategoryID *string   `json:"tax_category_id"` // Its products' tax category (an id of the settings' tax_categories) when they name none; null: the org's rate.
	CreatedAt     time.Time `json:"created_at"`
	UpdatedAt     time.Time `json:"updated_at"`
}

// CategoryCreate is the body of POST /catalog/categories.
type CategoryCreate struct {
	Name        string  `json:"name" openapi:"required"`
	Description *string `json:"description"`
	ParentID    *string `json:"parent_id"`
	SortOrder   int     `json:"sort_order"`
	IsActive    *bool   `json:"is_active"`
	Station     *string `json:"station"`
	// TaxCategoryID: absent or null, the org's rate.
	TaxCategoryID *string `json:"tax_category_id"` // Its products' tax category when they name none, an id of the settings' tax_categories.
}

// Validate checks a new category.
func (in *CategoryCreate) Validate() error {
	var v Validation
	v.Check(in.Name != "" && ValidText(in.Name, 200), "name", "is required: 1-200 characters of text")
	if in.Description != nil {
		v.Check(ValidText(*in.Description, 2000), "description", "must be at most 2000 characters of text")
	}
	if in.ParentID != nil {
		v.Check(ValidID(*in.ParentID), "parent_id", "must be an id")
	}
	v.Check(in.SortOrder >= -1_000_000 && in.SortOrder <= 1_000_000, "sort_order", "must be between -1000000 and 1000000")
	checkStation(&v, in.Station)
	checkTaxCategoryRef(&v, in.TaxCategoryID)
	return v.Err()
}

// CategoryUpdate is the body of PATCH /catalog/categories/:id.
type CategoryUpdate struct {
	Name        Opt[string] `json:"name"`
	Description Opt[string] `json:"description" openapi:"nullable"`
	ParentID    Opt[string] `json:"parent_id" openapi:"nullable"`
	SortOrder   Opt[int]    `json:"sort_order"`
	IsActive    Opt[bool]   `json:"is_active"`
	Station     Opt[string] `json:"station" openapi:"nullable"`
	// TaxCategoryID: null, the org's rate.
	TaxCategoryID Opt[string] `json:"tax_category_id" openapi:"nullable"` // Its products' tax category when they name none; null: the org's rate.
}

// Validate checks the fields present in a category update.
func (in *CategoryUpdate) Validate() error {
	var v Validation
	if in.Name.Set {
		v.Check(!in.Name.Null && in.Name.Value != "" && ValidText(in.Name.Value, 200), "name", "must be 1-200 characters of text")
	}
	if in.Description.Set && !in.Description.Null {
		v.Check(ValidText(in.Description.Value, 2000), "description", "must be at most 2000 characters of text")
	}
	if in.ParentID.Set && !in.ParentID.Null {
		v.Check(ValidID(in.ParentID.Value), "parent_id", "must be an id")
	}
	if in.SortOrder.Set {
		v.Check(!in.SortOrder.Null && in.SortOrder.Value >= -1_000_000 && in.SortOrder.Value <= 1_000_000, "sort_order", "must be between -1000000 and 1000000")
	}
	v.Check(!in.IsActive.Null, "is_active", "must be true or false")
	if in.Station.Set && !in.Station.Null {
		checkStation(&v, &in.Station.Value)
	}
	if in.TaxCategoryID.Set && !in.TaxCategoryID.Null {
		checkTaxCategoryRef(&v, &in.TaxCategoryID.Value)
	}
	return v.Err()
}

// CategoryFilter selects categories.
type CategoryFilter struct {
	ParentID *string
	IsActive *bool
	Page
}

// CategoryService manages the org's categories. Errors: ENotFound, EInvalid,
// EConflict (a parent that would make a cycle).
type CategoryService interface {
	FindCategories(ctx context.Context, f CategoryFilter) (List[Category], error)
	FindCategoryByID(ctx context.Context, id string) (*Category, error)
	CreateCategory(ctx context.Context, in *CategoryCreate) (*Category, error)
	UpdateCategory(ctx context.Context, id string, in *CategoryUpdate) (*Category, error)
}
