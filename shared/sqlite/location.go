package sqlite

import (
	"context"

	"kassa.dev/shared/kassa"
)

// LocationService implements kassa.LocationService.
type LocationService struct{ db *DB }

// NewLocationService returns the location service of db.
func NewLocationService(db *DB) *LocationService { return &LocationService{db: db} }

var _ kassa.LocationService = (*LocationService)(nil)

const locationCols = `SELECT id, org_id, name, timezone, address, currency, day_cutoff_hour, created_at, updated_at FROM locations`

func scanLocation(s scanner) (*kassa.Location, error) {
	var l kassa.Location
	var created, updated string
	if err := s.Scan(&l.ID, &l.OrgID, &l.Name, &l.Timezone, &l.Address, &l.Currency, &l.DayCutoffHour, &created, &updated); err != nil {
		return nil, err
	}
	l.CreatedAt, l.UpdatedAt = parseTime(created), parseTime(updated)
	return &l, nil
}

func locationID(l *kassa.Location) string { return l.ID }

// FindLocations lists the org's locations.
func (s *LocationService) FindLocations(ctx context.Context, p kassa.Page) (kassa.List[kassa.Location], error) {
	a, err := kassa.MustActor(ctx)
	if err != nil {
		return kassa.List[kassa.Location]{}, err
	}
	return findPage(ctx, s.db.Reader, locationCols, orgFilter(a.OrgID), p, scanLocation, locationID)
}

// FindLocationByID returns one location of the org, or ENotFound.
func (s *LocationService) FindLocationByID(ctx context.Context, id string) (*kassa.Location, error) {
	return readOwn(ctx, s.db, findLocation, id)
}

func findLocation(ctx context.Context, q querier, orgID, id string) (*kassa.Location, error) {
	return findByID(ctx, q, locationCols, "location", orgID, id, scanLocation)
}

// CreateLocation adds a location; only owners may. The currency defaults to
// the org's. Errors: EForbidden, EInvalid.
func (s *LocationService) CreateLocation(ctx context.Context, in *kassa.LocationCreate) (*kassa.Location, error) {
	a, err := kassa.MustActor(ctx)
	if err != nil {
		return nil, err
	}
	if a.Role != kassa.RoleOwner {
		return nil, kassa.Errorf(kassa.EForbidden, "only an owner can create locations")
	}
	if err := in.Validate(); err != nil {
		return nil, err
	}
	if err := checkCurrencies(currencyField{"currency", in.Currency}); err != nil {
		return nil, err
	}
	id := s.db.NewID()
	return writeRead(ctx, s.db, findLocation, a.OrgID, id, func(tx *Tx) error {
		cur := in.Currency
		if cur == "" {
			org, err := findOrg(ctx, tx, a.OrgID)
			if err != nil {
				return err
			}
			cur = org.Currency
		}
		return tx.Insert(ctx, entLocation, a.OrgID, id, map[string]any{
			"name": in.Name, "timezone": in.Timezone, "address": in.Address, "currency": cur,
		})
	})
}

// UpdateLocation changes a location's name, time zone or business day
// cutoff; only owners may. Errors: EForbidden, EInvalid, ENotFound.
func (s *LocationService) UpdateLocation(ctx context.Context, id string, in *kassa.LocationUpdate) (*kassa.Location, error) {
	a, err := kassa.MustActor(ctx)
	if err != nil {
		return nil, err
	}
	if a.Role != kassa.RoleOwner {
		return nil, kassa.Errorf(kassa.EForbidden, "only an owner can change a location")
	}
	if err := in.Validate(); err != nil {
		return nil, err
	}
	return updateRead(ctx, s.db, entLocation, findLocation, a.OrgID, id, func(_ *Tx, old *kassa.Location, cols map[string]any) error {
		if in.Name != nil {
			changed(cols, "name", old.Name, *in.Name)
		}
		if in.Timezone != nil {
			changed(cols, "timezone", old.Timezone, *in.Timezone)
		}
		if in.DayCutoffHour != nil {
			changed(cols, "day_cutoff_hour", int64(old.DayCutoffHour), int64(*in.DayCutoffHour))
		}
		return nil
	})
}

// Locations: written at the hub only; day_cutoff_hour came with the
// drawers (format 4).
var entLocation = new(noun)

func init() {
	register(entLocation, noun{Name: "location", Table: "locations", Digest: orgRows, Formats: []formatStep{{Format: 4, Migration: 30}},
		Written: rollupLocation, Track: trackLocationDays, Recompute: recomputeLocationDays})
}
