package sqlite

import (
	"context"
	"encoding/json"

	"kassa.dev/shared/kassa"
	"kassa.dev/sync/change"
)

// Bundles (docs/catalog.md): a product whose components column lists
// what one of it holds. This file checks a bundle's components, expands a
// sold or restocked line into the stock it moves, and answers
// availability.

var _ kassa.BundleService = (*ProductService)(nil)

// bundlesOf is the org's bundles' components, by bundle id.
func bundlesOf(ctx context.Context, q querier, orgID string) (map[string][]kassa.BundleComponent, error) {
	rows, err := q.QueryContext(ctx, `SELECT id, components FROM products WHERE org_id = ? AND components != '[]'`, orgID)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	of := map[string][]kassa.BundleComponent{}
	for rows.Next() {
		var id, comps string
		if err := rows.Scan(&id, &comps); err != nil {
			return nil, err
		}
		var cs []kassa.BundleComponent
		if err := decodeJSON(comps, &cs); err != nil {
			return nil, err
		}
		of[id] = cs
	}
	return of, rows.Err()
}

// isBundle reports whether product id of the org is a bundle.
func isBundle(ctx context.Context, q querier, orgID, id string) bool {
	var n int
	err := q.QueryRowContext(ctx, `SELECT count(*) FROM products WHERE org_id = ? AND id = ? AND components != '[]'`, orgID, id).Scan(&n)
	return err == nil && n > 0
}

// checkBundle checks bundle id's components in the unit: each a product
// of the org without variants (a variant of one names which), and the
// bundle not containing itself, directly or through another bundle.
func checkBundle(ctx context.Context, q querier, orgID, id string, comps []kassa.BundleComponent) error {
	if len(comps) == 0 {
		return nil
	}
	for _, c := range comps {
		if !exists(ctx, q, "products", orgID, c.ProductID) {
			return kassa.InvalidField("components", "no such product: "+c.ProductID)
		}
		ids, err := variantIDs(ctx, q, orgID, c.ProductID)
		if err != nil {
			return err
		}
		if len(ids) > 0 {
			return kassa.InvalidField("components", "product "+c.ProductID+" has variants: name one of them")
		}
	}
	of, err := bundlesOf(ctx, q, orgID)
	if err != nil {
		return err
	}
	if kassa.ContainsItself(id, comps, of) {
		return kassa.InvalidField("components", "a bundle cannot contain itself, directly or through another bundle")
	}
	return nil
}

// checkComponentsOf checks an update's components of product p: a variant
// or a product with variants is not a bundle.
func checkComponentsOf(ctx context.Context, tx *Tx, orgID string, p *kassa.Product, in kassa.Opt[[]kassa.BundleComponent]) error {
	if !in.Set || len(in.Value) == 0 {
		return nil
	}
	if p.VariantOf != nil {
		return kassa.InvalidField("components", "a variant cannot be a bundle")
	}
	ids, err := variantIDs(ctx, tx, orgID, p.ID)
	if err != nil {
		return err
	}
	if len(ids) > 0 {
		return kassa.InvalidField("components", "a product with variants cannot be a bundle")
	}
	return checkBundle(ctx, tx, orgID, p.ID, in.Value)
}

// admitBundle refuses, at the hub, a pushed bundle that would contain
// itself (the edge's own service never writes one).
func admitBundle(ctx context.Context, ad *admitter, c *change.Change, f map[string]any) error {
	s, _ := f["components"].(string)
	if s == "" || s == "[]" {
		return nil
	}
	var comps []kassa.BundleComponent
	if err := json.Unmarshal([]byte(s), &comps); err != nil {
		return refuse(RefusedValue, "components must be a list of {product_id, quantity}")
	}
	of, err := bundlesOf(ctx, ad.Tx, c.OrgID)
	if err != nil {
		return err
	}
	if kassa.ContainsItself(c.EntityID, comps, of) {
		return refuse(RefusedValue, "a bundle cannot contain itself, directly or through another bundle")
	}
	return nil
}

// lineStockItem is the stock item a line sold: its variant, else its
// product.
func lineStockItem(l *kassa.LineItem) string {
	if l.VariantID != nil {
		return *l.VariantID
	}
	return l.ProductID
}

// lineStockParts is what qty units of line l move: its stock item, or a
// bundle's components (kassa.StockParts; of from bundlesOf).
func lineStockParts(l *kassa.LineItem, qty int64, of map[string][]kassa.BundleComponent) []kassa.StockPart {
	return kassa.StockParts(lineStockItem(l), qty, of)
}

// ProductAvailability is how many of product id location locationID can
// sell from its stock: a bundle's scarcest component decides. Errors:
// ENotFound (the product, before anything else), EBadRequest without a
// location, EInvalid for a location not of the org.
func (s *ProductService) ProductAvailability(ctx context.Context, id, locationID string) (*kassa.Availability, error) {
	a, err := kassa.MustActor(ctx)
	if err != nil {
		return nil, err
	}
	snap, err := s.db.Reader.Snapshot(ctx)
	if err != nil {
		return nil, err
	}
	defer snap.Done()
	if _, err := findProduct(ctx, snap, a.OrgID, id); err != nil {
		return nil, err
	}
	if locationID == "" {
		return nil, kassa.Errorf(kassa.EBadRequest, "location_id is required")
	}
	if !exists(ctx, snap, "locations", a.OrgID, locationID) {
		return nil, kassa.InvalidField("location_id", "no such location")
	}
	of, err := bundlesOf(ctx, snap, a.OrgID)
	if err != nil {
		return nil, err
	}
	parts := kassa.StockParts(id, 1, of)
	out := &kassa.Availability{ProductID: id, LocationID: locationID, Components: make([]kassa.ComponentStock, len(parts))}
	onHand := map[string]int64{}
	for i, p := range parts {
		var n int64
		err := snap.QueryRowContext(ctx, `SELECT coalesce(sum(on_hand), 0) FROM stock_levels WHERE org_id = ? AND location_id = ? AND product_id = ?`,
			a.OrgID, locationID, p.ProductID).Scan(&n)
		if err != nil {
			return nil, err
		}
		onHand[p.ProductID] = n
		out.Components[i] = kassa.ComponentStock{ProductID: p.ProductID, Quantity: p.Quantity, OnHand: n}
	}
	out.Available = kassa.BundleAvailable(parts, onHand)
	return out, nil
}
