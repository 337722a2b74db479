package kassa

import (
	"context"
	"time"
)

// ModifierGroup is a set of options added to a product line, such as "Milk".
// Which products offer a group is stored on the product
// (Product.ModifierGroupIDs); ProductIDs here is derived from that.
type ModifierGroup struct {
	ID            string           `json:"id"`
	OrgID         string           `json:"org_id"`
	Name          string           `json:"name"`
	Required      bool             `json:"required"`       // Whether a line of a product offering the group must choose from it.
	MinSelections int              `json:"min_selections"` // The fewest options a line must choose from the group.
	MaxSelections int              `json:"max_selections"` // The most options a line may choose from the group.
	Options       []ModifierOption `json:"options"`        // The options, in display order.
	ProductIDs    []string         `json:"product_ids"`    // The products the group is offered on.
	CreatedAt     time.Time        `json:"created_at"`
	UpdatedAt     time.Time        `json:"updated_at"`
}

// ModifierOption is one choice of a group; PriceAdjustment is in minor units
// and may be negative.
type ModifierOption struct {
	ID              string `json:"id"`
	Name            string `json:"name"`
	PriceAdjustment int64  `json:"price_adjustment"`
	IsDefault       bool   `json:"is_default"` // Whether the option is preselected.
}

// ModifierOptionInput is an option in a create or update body; options
// without an id get a new one.
type ModifierOptionInput struct {
	ID              string `json:"id"`
	Name            string `json:"name" openapi:"required"`
	PriceAdjustment int64  `json:"price_adjustment"`
	IsDefault       bool   `json:"is_default"`
}

// ModifierGroupCreate is the body of POST /catalog/modifiers/groups.
type ModifierGroupCreate struct {
	Name          string                `json:"name" openapi:"required"`
	Required      bool                  `json:"required"`
	MinSelections int                   `json:"min_selections"`
	MaxSelections *int                  `json:"max_selections"` // defaults to the number of options
	Options       []ModifierOptionInput `json:"options" openapi:"required"`
	ProductIDs    []string              `json:"product_ids"`
}

// Validate checks a new modifier group.
func (in *ModifierGroupCreate) Validate() error {
	var v Validation
	v.Check(in.Name != "" && ValidText(in.Name, 200), "name", "is required: 1-200 characters of text")
	max := len(in.Options)
	if in.MaxSelections != nil {
		max = *in.MaxSelections
	}
	validateSelections(&v, in.Required, in.MinSelections, max, in.Options)
	checkIDs(&v, "product_ids", in.ProductIDs)
	return v.Err()
}

func validateSelections(v *Validation, required bool, min, max int, options []ModifierOptionInput) {
	v.Check(len(options) >= 1 && len(options) <= 50, "options", "must have 1-50 options")
	v.Check(min >= 0, "min_selections", "must not be negative")
	v.Check(max >= 1 && max <= len(options), "max_selections", "must be between 1 and the number of options")
	v.Check(min <= max, "min_selections", "must not exceed max_selections")
	v.Check(!required || min >= 1, "min_selections", "must be at least 1 when the group is required")
	defaults := 0
	for i, o := range options {
		v.Check(o.Name != "" && ValidText(o.Name, 200), "options", "every option needs a name of 1-200 characters")
		v.Check(o.PriceAdjustment >= -MaxMoney && o.PriceAdjustment <= MaxMoney, "options", "price_adjustment out of range")
		v.Check(o.ID == "" || ValidID(o.ID), "options", "option ids must be ids")
		if o.IsDefault {
			defaults++
		}
		_ = i
	}
	v.Check(defaults <= max, "options", "more default options than max_selections")
}

// ModifierGroupUpdate is the body of PATCH /catalog/modifiers/groups/:id.
// Options, when present, replace the list: keep an option's id to keep it.
type ModifierGroupUpdate struct {
	Name          Opt[string]                `json:"name"`
	Required      Opt[bool]                  `json:"required"`
	MinSelections Opt[int]                   `json:"min_selections"`
	MaxSelections Opt[int]                   `json:"max_selections"`
	Options       Opt[[]ModifierOptionInput] `json:"options"`
	ProductIDs    Opt[[]string]              `json:"product_ids"`
}

// ModifierGroupService manages modifier groups. Errors: ENotFound, EInvalid.
type ModifierGroupService interface {
	FindModifierGroups(ctx context.Context, productID *string, p Page) (List[ModifierGroup], error)
	FindModifierGroupByID(ctx context.Context, id string) (*ModifierGroup, error)
	CreateModifierGroup(ctx context.Context, in *ModifierGroupCreate) (*ModifierGroup, error)
	UpdateModifierGroup(ctx context.Context, id string, in *ModifierGroupUpdate) (*ModifierGroup, error)
}
