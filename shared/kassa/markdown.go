package kassa

import (
	"cmp"
	"context"
	"slices"
	"time"
)

// Markdowns (docs/catalog.md): a scheduled price reduction on products
// (a product names its variants too) or on categories, from starts_at to
// ends_at. Pricing applies it to the unit price (the catalog's or the
// price list's, before modifiers) before campaigns: the line sells at the
// marked-down price and keeps the price before it (original_price) and
// the markdown, which the receipt shows. Markdowns do not stack: a line
// takes the one giving the lowest price. A markdown never raises a price:
// one that would is refused when made, and left out when a price has
// changed under it since.

// Markdown types.
const (
	MarkdownPercent = "percent" // value: basis points off (1-10000)
	MarkdownPrice   = "price"   // value: the new unit price, in minor units
)

// Markdown is a scheduled price reduction.
type Markdown struct {
	ID          string    `json:"id"`
	OrgID       string    `json:"org_id"`
	Name        string    `json:"name"`                             // Shown on the receipt beside the line.
	Type        string    `json:"type" openapi:"enum=MarkdownType"` // percent: value basis points off; price: value is the new unit price.
	Value       int64     `json:"value"`                            // Basis points (percent, 1-10000) or minor units (price).
	ProductIDs  []string  `json:"product_ids"`                      // Products (each with its variants) or variants it lowers.
	CategoryIDs []string  `json:"category_ids"`                     // Categories whose products it lowers.
	StartsAt    time.Time `json:"starts_at"`                        // From when it applies.
	EndsAt      time.Time `json:"ends_at"`                          // Until when (excluded).
	IsActive    bool      `json:"is_active"`                        // false: withdrawn, applies to nothing.
	CreatedAt   time.Time `json:"created_at"`
	UpdatedAt   time.Time `json:"updated_at"`
}

// MarkdownCreate is the body of POST /catalog/markdowns.
type MarkdownCreate struct {
	Name        string     `json:"name" openapi:"required"`
	Type        string     `json:"type" openapi:"required,enum=MarkdownType"`
	Value       *int64     `json:"value" openapi:"required"` // Basis points off (percent, 1-10000) or the new unit price in minor units (price).
	ProductIDs  []string   `json:"product_ids"`
	CategoryIDs []string   `json:"category_ids"`
	StartsAt    *time.Time `json:"starts_at" openapi:"required"`
	EndsAt      *time.Time `json:"ends_at" openapi:"required"`
	IsActive    *bool      `json:"is_active"`
}

// Validate checks a new markdown.
func (in *MarkdownCreate) Validate() error {
	var v Validation
	v.Check(in.Name != "" && ValidText(in.Name, 200), "name", "must be 1-200 characters of text")
	checkMarkdownValue(&v, in.Type, in.Value)
	checkIDs(&v, "product_ids", in.ProductIDs)
	checkIDs(&v, "category_ids", in.CategoryIDs)
	v.Check(len(in.ProductIDs)+len(in.CategoryIDs) > 0, "product_ids", "a markdown names products or categories")
	v.Check(in.StartsAt != nil, "starts_at", "is required")
	v.Check(in.EndsAt != nil, "ends_at", "is required")
	if in.StartsAt != nil && in.EndsAt != nil {
		v.Check(in.EndsAt.After(*in.StartsAt), "ends_at", "must be after starts_at")
	}
	return v.Err()
}

func checkMarkdownValue(v *Validation, typ string, value *int64) {
	switch {
	case typ != MarkdownPercent && typ != MarkdownPrice:
		v.Add("type", "must be percent or price")
	case value == nil:
		v.Add("value", "is required")
	case typ == MarkdownPercent:
		v.Check(*value >= 1 && *value <= MaxPercentBps, "value", "a percent markdown takes 1-10000 basis points off")
	default:
		v.Check(*value >= 0 && *value <= MaxMoney, "value", "a new price is 0-10^12 minor units")
	}
}

// MarkdownUpdate is the body of PATCH /catalog/markdowns/:id; the merged
// markdown is validated as a whole (MarkdownCreate.Validate).
type MarkdownUpdate struct {
	Name        Opt[string]    `json:"name"`
	Value       Opt[int64]     `json:"value"`
	ProductIDs  Opt[[]string]  `json:"product_ids"`
	CategoryIDs Opt[[]string]  `json:"category_ids"`
	StartsAt    Opt[time.Time] `json:"starts_at"`
	EndsAt      Opt[time.Time] `json:"ends_at"`
	IsActive    Opt[bool]      `json:"is_active"`
	Type        Opt[any]       `json:"type" openapi:"-"` // refused: make a new markdown
}

// Merged is m with the update's fields over it, as a create body.
func (in *MarkdownUpdate) Merged(m *Markdown) (*MarkdownCreate, error) {
	if in.Type.Set {
		return nil, InvalidField("type", "cannot be changed; create a new markdown instead")
	}
	if in.Name.Null {
		return nil, InvalidField("name", "must be 1-200 characters of text")
	}
	if in.Value.Null || in.StartsAt.Null || in.EndsAt.Null || in.IsActive.Null {
		return nil, InvalidFields("value, starts_at, ends_at and is_active cannot be null")
	}
	value, starts, ends, active := m.Value, m.StartsAt, m.EndsAt, m.IsActive // copies: m stays as it was
	out := &MarkdownCreate{Name: m.Name, Type: m.Type, Value: &value, ProductIDs: m.ProductIDs, CategoryIDs: m.CategoryIDs,
		StartsAt: &starts, EndsAt: &ends, IsActive: &active}
	in.Name.To(&out.Name)
	in.Value.To(out.Value)
	in.ProductIDs.To(&out.ProductIDs)
	in.CategoryIDs.To(&out.CategoryIDs)
	in.StartsAt.To(out.StartsAt)
	in.EndsAt.To(out.EndsAt)
	in.IsActive.To(out.IsActive)
	return out, out.Validate()
}

// MarkdownFilter selects markdowns.
type MarkdownFilter struct {
	ActiveAt *time.Time // only those applying at this instant
	Page
}

// MarkdownedItem is a line's product as markdowns see it.
type MarkdownedItem struct {
	ProductID  string // the product sold (the line's product)
	VariantID  string // the variant sold, "" none
	CategoryID string
}

// AppliesTo reports whether m lowers item's price at instant at: it is
// active, at is in [starts_at, ends_at), and it names the product, the
// variant or the category.
func (m *Markdown) AppliesTo(item MarkdownedItem, at time.Time) bool {
	if !m.IsActive || at.Before(m.StartsAt) || !at.Before(m.EndsAt) {
		return false
	}
	return slices.Contains(m.ProductIDs, item.ProductID) || (item.VariantID != "" && slices.Contains(m.ProductIDs, item.VariantID)) ||
		(item.CategoryID != "" && slices.Contains(m.CategoryIDs, item.CategoryID))
}

// Lower is the unit price m gives unit: a percent off (rounded half up,
// never below 0) or its new price; never above unit (a unit of 0 or less
// is left as it is).
func (m *Markdown) Lower(unit int64) int64 {
	if unit <= 0 {
		return unit
	}
	if m.Type == MarkdownPercent {
		off, ok := mulDivRound(unit, min(max(m.Value, 0), MaxPercentBps), MaxPercentBps)
		if !ok {
			return unit
		}
		return unit - min(off, unit)
	}
	return min(unit, max(m.Value, 0))
}

// BestMarkdown is the markdown of ms that lowers item's unit price the
// most at instant at (ties: the one made first, then the lower id), and
// the price it gives; nil and unit when none lowers it.
func BestMarkdown(ms []Markdown, item MarkdownedItem, unit int64, at time.Time) (*Markdown, int64) {
	var best *Markdown
	price := unit
	for i := range ms {
		m := &ms[i]
		if !m.AppliesTo(item, at) {
			continue
		}
		p := m.Lower(unit)
		if p < price || (p == price && best != nil && cmp.Or(m.CreatedAt.Compare(best.CreatedAt), cmp.Compare(m.ID, best.ID)) < 0) {
			best, price = m, p
		}
	}
	return best, price
}

// MarkdownService manages markdowns. Errors: ENotFound, EInvalid (a
// markdown that would raise a price names value).
type MarkdownService interface {
	FindMarkdowns(ctx context.Context, f MarkdownFilter) (List[Markdown], error)
	FindMarkdownByID(ctx context.Context, id string) (*Markdown, error)
	CreateMarkdown(ctx context.Context, in *MarkdownCreate) (*Markdown, error)
	UpdateMarkdown(ctx context.Context, id string, in *MarkdownUpdate) (*Markdown, error)
}
