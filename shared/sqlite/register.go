package sqlite

import (
	"context"

	"kassa.dev/shared/kassa"
	"kassa.dev/sync/change"
)

// RegisterService implements kassa.RegisterService. A register belongs to
// one location, whose edge may create and change it (its edge rule).
type RegisterService struct{ db *DB }

// NewRegisterService returns the register service of db.
func NewRegisterService(db *DB) *RegisterService { return &RegisterService{db: db} }

var _ kassa.RegisterService = (*RegisterService)(nil)

const registerCols = `SELECT id, org_id, location_id, name, is_active, created_at, updated_at FROM registers`

func scanRegister(s scanner) (*kassa.Register, error) {
	var r kassa.Register
	var created, updated string
	if err := s.Scan(&r.ID, &r.OrgID, &r.LocationID, &r.Name, &r.IsActive, &created, &updated); err != nil {
		return nil, err
	}
	r.CreatedAt, r.UpdatedAt = parseTime(created), parseTime(updated)
	return &r, nil
}

func registerID(r *kassa.Register) string { return r.ID }

func findRegister(ctx context.Context, q querier, orgID, id string) (*kassa.Register, error) {
	return findByID(ctx, q, registerCols, "register", orgID, id, scanRegister)
}

// FindRegisters lists the org's registers, optionally of one location.
func (s *RegisterService) FindRegisters(ctx context.Context, f kassa.RegisterFilter) (kassa.List[kassa.Register], error) {
	a, err := kassa.MustActor(ctx)
	if err != nil {
		return kassa.List[kassa.Register]{}, err
	}
	w := orgFilter(a.OrgID)
	eq(w, "location_id", f.LocationID)
	return findPage(ctx, s.db.Reader, registerCols, w, f.Page, scanRegister, registerID)
}

// FindRegisterByID returns one register of the org, or ENotFound.
func (s *RegisterService) FindRegisterByID(ctx context.Context, id string) (*kassa.Register, error) {
	return readOwn(ctx, s.db, findRegister, id)
}

// CreateRegister adds a register to a location of the org (managers and
// owners). Errors: EForbidden, EInvalid (a location not of the org).
func (s *RegisterService) CreateRegister(ctx context.Context, in *kassa.RegisterCreate) (*kassa.Register, error) {
	a, err := kassa.MustActor(ctx)
	if err != nil {
		return nil, err
	}
	if err := kassa.CanManageRegisters(a); err != nil {
		return nil, err
	}
	if err := in.Validate(); err != nil {
		return nil, err
	}
	if !exists(ctx, s.db.Reader, "locations", a.OrgID, in.LocationID) {
		return nil, kassa.InvalidField("location_id", "is not a location of the org")
	}
	id := s.db.NewID()
	return writeRead(ctx, s.db, findRegister, a.OrgID, id, func(tx *Tx) error {
		return tx.InsertAt(ctx, entRegister, a.OrgID, in.LocationID, id, map[string]any{
			"location_id": in.LocationID, "name": in.Name, "is_active": true,
		})
	})
}

// UpdateRegister renames a register or takes it out of use (managers and
// owners). A register with an open drawer stays active until it closes.
// Errors: EForbidden, EInvalid, ENotFound, EConflict.
func (s *RegisterService) UpdateRegister(ctx context.Context, id string, in *kassa.RegisterUpdate) (*kassa.Register, error) {
	a, err := kassa.MustActor(ctx)
	if err != nil {
		return nil, err
	}
	if err := kassa.CanManageRegisters(a); err != nil {
		return nil, err
	}
	if err := in.Validate(); err != nil {
		return nil, err
	}
	var at string
	return writeRead(ctx, s.db, findRegister, a.OrgID, id, func(tx *Tx) error {
		old, err := findRegister(ctx, tx, a.OrgID, id)
		if err != nil {
			return err
		}
		at = old.LocationID
		cols := map[string]any{}
		if in.Name != nil {
			changed(cols, "name", old.Name, *in.Name)
		}
		if in.IsActive != nil && !*in.IsActive && old.IsActive {
			if _, err := openDrawerAt(ctx, tx, a.OrgID, id); err == nil {
				return kassa.Errorf(kassa.EConflict, "register %s has an open drawer: close it first", old.Name)
			}
		}
		if in.IsActive != nil {
			changed(cols, "is_active", old.IsActive, *in.IsActive)
		}
		return tx.UpdateAt(ctx, entRegister, a.OrgID, at, id, cols)
	})
}

// checkRegister admits an edge's register: a valid name, written by a
// manager or an owner (as the hub knows the actor).
func checkRegister(_ context.Context, ad *admitter, _ *change.Change, f map[string]any) error {
	if ad.ActorOf == nil || kassa.CanManageRegisters(ad.ActorOf) != nil {
		return refuse(RefusedActor, "only a manager or an owner manages registers")
	}
	if name, ok := f["name"]; ok {
		if s, _ := name.(string); s == "" || !kassa.ValidText(s, 100) {
			return refuse(RefusedValue, "name must be 1-100 characters of text")
		}
	}
	return nil
}

// Registers (docs/drawers.md): the edge of the location owns them.
var entRegister = new(noun)

func init() {
	register(entRegister, noun{Name: "register", Table: "registers", Formats: []formatStep{{Format: 4, Migration: 30}},
		Edge: &edgeRule{Loc: ownLocation, Update: []string{"name", "is_active"}, Once: []string{"location_id"},
			Scopes: paymentsWrite, Check: checkRegister}})
}
