package sqlite

import (
	"context"
	"database/sql"
	"errors"

	"kassa.dev/shared/kassa"
	"kassa.dev/shared/sqlite/engine"
	"kassa.dev/sync/change"
)

// PriceListService implements kassa.PriceListService.
type PriceListService struct{ db *DB }

// NewPriceListService returns the price list service of db.
func NewPriceListService(db *DB) *PriceListService { return &PriceListService{db: db} }

var _ kassa.PriceListService = (*PriceListService)(nil)

const priceListCols = `SELECT id, org_id, name, location_ids, prices, starts_at, ends_at, is_active, created_at, updated_at FROM price_lists`

func scanPriceList(s scanner) (*kassa.PriceList, error) {
	var pl kassa.PriceList
	var locations, prices, created, updated string
	var starts, ends sql.NullString
	if err := s.Scan(&pl.ID, &pl.OrgID, &pl.Name, &locations, &prices, &starts, &ends, &pl.IsActive, &created, &updated); err != nil {
		return nil, err
	}
	pl.CreatedAt, pl.UpdatedAt = parseTime(created), parseTime(updated)
	pl.StartsAt, pl.EndsAt = nullTime(starts), nullTime(ends)
	pl.LocationIDs, pl.Prices = []string{}, []kassa.PriceListPrice{}
	err := errors.Join(decodeJSON(locations, &pl.LocationIDs), decodeJSON(prices, &pl.Prices))
	return &pl, err
}

func priceListID(pl *kassa.PriceList) string { return pl.ID }

// FindPriceLists lists the org's price lists by id; with locationID, only
// the lists that name that location.
func (s *PriceListService) FindPriceLists(ctx context.Context, locationID *string, p kassa.Page) (kassa.List[kassa.PriceList], error) {
	a, err := kassa.MustActor(ctx)
	if err != nil {
		return kassa.List[kassa.PriceList]{}, err
	}
	w := orgFilter(a.OrgID)
	if locationID != nil {
		w.and("EXISTS (SELECT 1 FROM "+engine.D(s.db.Reader).JSONValues("price_lists.location_ids", "j")+" WHERE j.value = ?)", *locationID)
	}
	return findPage(ctx, s.db.Reader, priceListCols, w, p, scanPriceList, priceListID)
}

// FindPriceListByID returns one price list of the org, or ENotFound.
func (s *PriceListService) FindPriceListByID(ctx context.Context, id string) (*kassa.PriceList, error) {
	return readOwn(ctx, s.db, findPriceList, id)
}

func findPriceList(ctx context.Context, q querier, orgID, id string) (*kassa.PriceList, error) {
	return findByID(ctx, q, priceListCols, "price list", orgID, id, scanPriceList)
}

// CreatePriceList validates and stores a new price list. Errors: EInvalid
// (also for locations or products not in the org).
func (s *PriceListService) CreatePriceList(ctx context.Context, in *kassa.PriceListCreate) (*kassa.PriceList, error) {
	a, err := kassa.MustActor(ctx)
	if err != nil {
		return nil, err
	}
	// Times are stored to the millisecond: validate what will be stored.
	v := *in
	v.StartsAt, v.EndsAt = truncMilli(in.StartsAt), truncMilli(in.EndsAt)
	if err := v.Validate(); err != nil {
		return nil, err
	}
	locations := dedupe(v.LocationIDs)
	prices := orEmpty(v.Prices)
	id := s.db.NewID()
	return writeRead(ctx, s.db, findPriceList, a.OrgID, id, func(tx *Tx) error {
		if err := checkPriceListRefs(ctx, tx, a.OrgID, locations, prices); err != nil {
			return err
		}
		active := v.IsActive == nil || *v.IsActive
		return tx.Insert(ctx, entPriceList, a.OrgID, id, map[string]any{
			"name": v.Name, "location_ids": locations, "prices": prices,
			"starts_at": v.StartsAt, "ends_at": v.EndsAt, "is_active": active,
		})
	})
}

// UpdatePriceList applies a partial update; location_ids and prices, when
// present, replace the stored lists, and starts_at or ends_at null removes
// that bound. The merged list must be valid as a whole. Errors: ENotFound,
// EInvalid.
func (s *PriceListService) UpdatePriceList(ctx context.Context, id string, in *kassa.PriceListUpdate) (*kassa.PriceList, error) {
	a, err := kassa.MustActor(ctx)
	if err != nil {
		return nil, err
	}
	if err := in.Validate(); err != nil {
		return nil, err
	}
	return updateRead(ctx, s.db, entPriceList, findPriceList, a.OrgID, id, func(tx *Tx, pl *kassa.PriceList, cols map[string]any) error {
		merged := kassa.PriceListCreate{Name: pl.Name, StartsAt: pl.StartsAt, EndsAt: pl.EndsAt}
		in.Name.To(&merged.Name)
		takeAs(&merged.LocationIDs, in.LocationIDs, dedupe)
		takeAs(&merged.Prices, in.Prices, orEmpty)
		if in.StartsAt.Set {
			merged.StartsAt = truncMilli(optPtr(in.StartsAt))
		}
		if in.EndsAt.Set {
			merged.EndsAt = truncMilli(optPtr(in.EndsAt))
		}
		if err := merged.Validate(); err != nil {
			return err
		}
		if err := checkPriceListRefs(ctx, tx, a.OrgID, merged.LocationIDs, merged.Prices); err != nil {
			return err
		}
		patchIf(cols, in.Name.Set, "name", pl.Name, merged.Name)
		patchIf(cols, in.LocationIDs.Set, "location_ids", pl.LocationIDs, merged.LocationIDs)
		patchIf(cols, in.Prices.Set, "prices", pl.Prices, merged.Prices)
		patchIf(cols, in.StartsAt.Set, "starts_at", pl.StartsAt, merged.StartsAt)
		patchIf(cols, in.EndsAt.Set, "ends_at", pl.EndsAt, merged.EndsAt)
		patch(cols, "is_active", pl.IsActive, in.IsActive)
		return nil
	})
}

// checkPriceListRefs checks that the locations and the priced products
// exist in the org.
func checkPriceListRefs(ctx context.Context, q querier, orgID string, locations []string, prices []kassa.PriceListPrice) error {
	if err := checkExist(ctx, q, "locations", orgID, "location_ids", "no such location: %s", locations); err != nil {
		return err
	}
	products := make([]string, len(prices))
	for i, p := range prices {
		products[i] = p.ProductID
	}
	return checkExist(ctx, q, "products", orgID, "prices", "no such product: %s", products)
}

var entPriceList = new(noun)

func init() {
	register(entPriceList, noun{Name: "price_list", Table: "price_lists", Digest: orgRows,
		Edge: &edgeRule{Update: []string{"name", "location_ids", "prices", "starts_at", "ends_at", "is_active"},
			Scopes: catalogWrite, Refs: []ref{{Col: "location_ids", Table: "locations", List: true}, {Col: "prices", Table: "products", Key: "product_id"}},
			Check: checkPriceList},
		NewState: newCatalogWatcher})
}

func checkPriceList(_ context.Context, _ *admitter, c *change.Change, f map[string]any) error {
	return checkAs(c, f, &kassa.PriceListCreate{}, &kassa.PriceListUpdate{})
}
