package kassa

import (
	"context"
	"slices"
)

// Bundles (docs/catalog.md): a bundle is a product sold as one line at its
// own price whose stock is its components': selling one moves each
// component's stock by its quantity, and as many are available as the
// scarcest component allows (BundleAvailable). A component may be a
// variant, or another bundle (its components are moved in turn), never
// the bundle itself, directly or through another bundle (ContainsItself).

// Bounds of a bundle.
const (
	MaxBundleComponents = 20
	MaxComponentQty     = 100 // with MaxBundleDepth, a line of 10^4 bundles moves at most 10^14 units: no overflow
	// MaxBundleDepth bounds how deep bundles nest (a bundle of bundles…).
	MaxBundleDepth = 5
)

// BundleComponent is one product of a bundle and how many units of it one
// bundle holds.
type BundleComponent struct {
	ProductID string `json:"product_id" openapi:"required"` // A product or a variant of the org.
	Quantity  int64  `json:"quantity" openapi:"required"`   // Units of it in one bundle, 1-100.
}

// checkComponents checks a bundle's components: at most 20, each product
// once, quantities 1-100.
func checkComponents(v *Validation, comps []BundleComponent) {
	v.Check(len(comps) <= MaxBundleComponents, "components", "must have at most 20 components")
	seen := map[string]bool{}
	for _, c := range comps {
		if !ValidID(c.ProductID) || seen[c.ProductID] || c.Quantity < 1 || c.Quantity > MaxComponentQty {
			v.Add("components", "each names a product once, with a quantity of 1-100")
			return
		}
		seen[c.ProductID] = true
	}
}

// ContainsItself reports whether bundle id, with components comps, would
// contain itself: one of comps is id, or a bundle that (through of, the
// components of the org's other bundles) contains id, or the nesting runs
// deeper than MaxBundleDepth (which a cycle elsewhere would also make).
func ContainsItself(id string, comps []BundleComponent, of map[string][]BundleComponent) bool {
	return reaches(id, comps, of, 1)
}

func reaches(id string, comps []BundleComponent, of map[string][]BundleComponent, depth int) bool {
	if depth > MaxBundleDepth {
		return true
	}
	for _, c := range comps {
		if c.ProductID == id || (len(of[c.ProductID]) > 0 && reaches(id, of[c.ProductID], of, depth+1)) {
			return true
		}
	}
	return false
}

// StockPart is what selling a line moves of one stock item.
type StockPart struct {
	ProductID string
	Quantity  int64
}

// StockParts is what qty units of item move: the item itself, or, for a
// bundle (of gives each bundle's components), each leaf component times
// its quantity, summed per product, in the order first met. Nesting past
// MaxBundleDepth stops (a store never writes such a bundle).
func StockParts(item string, qty int64, of map[string][]BundleComponent) []StockPart {
	w := stockWalk{of: of}
	w.walk(item, qty, 0)
	return w.out
}

// stockWalk gathers the leaf components of a bundle (StockParts).
type stockWalk struct {
	of  map[string][]BundleComponent
	out []StockPart
}

func (w *stockWalk) walk(id string, q int64, depth int) {
	comps := w.of[id]
	if len(comps) == 0 || depth > MaxBundleDepth {
		if i := slices.IndexFunc(w.out, func(p StockPart) bool { return p.ProductID == id }); i >= 0 {
			w.out[i].Quantity += q
		} else {
			w.out = append(w.out, StockPart{ProductID: id, Quantity: q})
		}
		return
	}
	for _, c := range comps {
		w.walk(c.ProductID, q*c.Quantity, depth+1)
	}
}

// BundleAvailable is how many of a bundle can be sold from stock: for
// each leaf component (parts: StockParts of one bundle), its on-hand
// divided by what one bundle takes, rounded down; the least of them, never
// below 0.
func BundleAvailable(parts []StockPart, onHand map[string]int64) int64 {
	var avail int64 = -1
	for _, p := range parts {
		n := max(onHand[p.ProductID], 0) / max(p.Quantity, 1)
		if avail < 0 || n < avail {
			avail = n
		}
	}
	return max(avail, 0)
}

// Availability is GET /catalog/products/:id/availability: how many of a
// product a location can sell from its stock.
type Availability struct {
	ProductID  string           `json:"product_id"`
	LocationID string           `json:"location_id"`
	Available  int64            `json:"available"`  // For a bundle, the least over its components of on-hand ÷ units per bundle; else on-hand (never below 0).
	Components []ComponentStock `json:"components"` // A bundle's leaf components and their stock; the product itself otherwise.
}

// ComponentStock is one stock item behind an availability.
type ComponentStock struct {
	ProductID string `json:"product_id"`
	Quantity  int64  `json:"quantity"` // Units one sale takes.
	OnHand    int64  `json:"on_hand"`  // At the location.
}

// BundleService answers a product's availability. Errors: ENotFound,
// EInvalid (no such location).
type BundleService interface {
	ProductAvailability(ctx context.Context, productID, locationID string) (*Availability, error)
}
