package kassa

import (
	"context"
	"time"
)

// PriceList overrides base prices at some locations for a time window.
type PriceList struct {
	ID          string           `json:"id"`
	OrgID       string           `json:"org_id"`
	Name        string           `json:"name"`
	LocationIDs []string         `json:"location_ids"`
	Prices      []PriceListPrice `json:"prices"`    // Prices of products that override base_price where the list applies.
	StartsAt    *time.Time       `json:"starts_at"` // When the list starts applying; null: already.
	EndsAt      *time.Time       `json:"ends_at"`   // When it stops applying; null: never.
	IsActive    bool             `json:"is_active"`
	CreatedAt   time.Time        `json:"created_at"`
	UpdatedAt   time.Time        `json:"updated_at"`
}

// PriceListPrice is one product's price in a list, in minor units.
type PriceListPrice struct {
	ProductID string `json:"product_id" openapi:"required"`
	Price     int64  `json:"price" openapi:"required"` // The product's price under the list, in minor units.
}

// ActiveAt reports whether the list applies at t.
func (pl *PriceList) ActiveAt(t time.Time) bool {
	return pl.IsActive && (pl.StartsAt == nil || !t.Before(*pl.StartsAt)) && (pl.EndsAt == nil || t.Before(*pl.EndsAt))
}

// PriceListCreate is the body of POST /catalog/price-lists.
type PriceListCreate struct {
	Name        string           `json:"name" openapi:"required"`
	LocationIDs []string         `json:"location_ids"`
	Prices      []PriceListPrice `json:"prices"`
	StartsAt    *time.Time       `json:"starts_at"`
	EndsAt      *time.Time       `json:"ends_at"`
	IsActive    *bool            `json:"is_active"`
}

// Validate checks a new price list.
func (in *PriceListCreate) Validate() error {
	var v Validation
	v.Check(in.Name != "" && ValidText(in.Name, 200), "name", "is required: 1-200 characters of text")
	checkIDs(&v, "location_ids", in.LocationIDs)
	validatePrices(&v, in.Prices)
	v.Check(in.StartsAt == nil || in.EndsAt == nil || in.EndsAt.After(*in.StartsAt), "ends_at", "must be after starts_at")
	return v.Err()
}

func validatePrices(v *Validation, prices []PriceListPrice) {
	v.Check(len(prices) <= 10_000, "prices", "must have at most 10000 entries")
	seen := map[string]bool{}
	for _, p := range prices {
		if !ValidID(p.ProductID) {
			v.Add("prices", "every entry needs a product_id")
			return
		}
		if p.Price < 0 || p.Price > MaxMoney {
			v.Add("prices", "prices must be between 0 and 10^12 minor units")
			return
		}
		if seen[p.ProductID] {
			v.Add("prices", "product %s is listed twice", p.ProductID)
			return
		}
		seen[p.ProductID] = true
	}
}

// PriceListUpdate is the body of PATCH /catalog/price-lists/:id.
type PriceListUpdate struct {
	Name        Opt[string]           `json:"name"`
	LocationIDs Opt[[]string]         `json:"location_ids"`
	Prices      Opt[[]PriceListPrice] `json:"prices"`
	StartsAt    Opt[time.Time]        `json:"starts_at" openapi:"nullable"`
	EndsAt      Opt[time.Time]        `json:"ends_at" openapi:"nullable"`
	IsActive    Opt[bool]             `json:"is_active"`
}

// PriceListService manages price lists. Errors: ENotFound, EInvalid.
type PriceListService interface {
	FindPriceLists(ctx context.Context, locationID *string, p Page) (List[PriceList], error)
	FindPriceListByID(ctx context.Context, id string) (*PriceList, error)
	CreatePriceList(ctx context.Context, in *PriceListCreate) (*PriceList, error)
	UpdatePriceList(ctx context.Context, id string, in *PriceListUpdate) (*PriceList, error)
}
