package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"slices"

	"kassa.dev/shared/kassa"
	"kassa.dev/shared/password"
	"kassa.dev/shared/sqlite/engine"
	"kassa.dev/sync/change"
)

// UserService implements kassa.UserService: staff accounts, their
// locations, passwords and PINs (docs/staff.md). The rules of who manages
// whom are kassa.CheckStaffChange everywhere and, at an enrolled edge,
// kassa.CheckEdgeStaffChange too: the hub admits an edge's user changes by
// the same rule (checkUser), so an honest edge is never refused.
type UserService struct{ db *DB }

// NewUserService returns the user service of db.
func NewUserService(db *DB) *UserService { return &UserService{db: db} }

var _ kassa.UserService = (*UserService)(nil)

// MetaEdgeLocation is the node_meta key of an enrolled edge's location
// (written at enrolment, shared/node).
const MetaEdgeLocation = "sync_location"

const userCols = `SELECT id, org_id, email, name, role, is_active, location_ids, pin_hash != '', created_at, updated_at FROM users`

func scanUser(s scanner) (*kassa.User, error) {
	var u kassa.User
	var locs, created, updated string
	if err := s.Scan(&u.ID, &u.OrgID, &u.Email, &u.Name, &u.Role, &u.IsActive, &locs, &u.HasPIN, &created, &updated); err != nil {
		return nil, err
	}
	u.CreatedAt, u.UpdatedAt = parseTime(created), parseTime(updated)
	u.LocationIDs = []string{}
	return &u, decodeJSON(locs, &u.LocationIDs)
}

func userID(u *kassa.User) string { return u.ID }

func findUser(ctx context.Context, q querier, orgID, id string) (*kassa.User, error) {
	return findByID(ctx, q, userCols, "user", orgID, id, scanUser)
}

func staffOf(u *kassa.User) *kassa.Staff {
	return &kassa.Staff{ID: u.ID, Role: u.Role, LocationIDs: u.LocationIDs, Active: u.IsActive}
}

// CreateUser adds a staff account to the caller's org, by the staff rules.
// Errors: EForbidden, EConflict (an enrolled edge: not a cashier of its
// own), EInvalid (also when the e-mail is taken: see insertUser).
func (s *UserService) CreateUser(ctx context.Context, in *kassa.UserCreate) (*kassa.User, error) {
	a, err := kassa.MustActor(ctx)
	if err != nil {
		return nil, err
	}
	if err := in.Validate(); err != nil {
		return nil, err
	}
	after := &kassa.Staff{Role: in.Role, LocationIDs: orEmpty(in.LocationIDs), Active: true}
	if err := s.rules(ctx, s.db.Reader, a, nil, after, kassa.AccountChange); err != nil {
		return nil, err
	}
	hash, err := hashPassword(in.Password)
	if err != nil {
		return nil, err
	}
	id := s.db.NewID()
	return writeRead(ctx, s.db, findUser, a.OrgID, id, func(tx *Tx) error {
		if err := checkLocations(ctx, tx, a.OrgID, after.LocationIDs); err != nil {
			return err
		}
		return insertUser(ctx, tx, a.OrgID, id, in, hash, "email")
	})
}

// emailUnusable is the answer to a new user's e-mail that is taken. An
// e-mail signs in alone (spec 2.2: no org in the login), so it is unique
// on the node, across orgs; the answer is the same whether the address is
// this org's or another's, and says neither (docs/tenants.md), so an owner
// cannot probe which addresses other merchants' staff use.
const emailUnusable = "cannot be used for a new user: give another address"

// insertUser adds a user; a taken e-mail is an EInvalid naming emailField
// (emailUnusable).
func insertUser(ctx context.Context, tx *Tx, orgID, id string, in *kassa.UserCreate, hash, emailField string) error {
	err := tx.Insert(ctx, entUser, orgID, id, map[string]any{
		"email": kassa.NormalizeEmail(in.Email), "name": in.Name, "role": string(in.Role),
		"password_hash": hash, "is_active": true, "location_ids": orEmpty(in.LocationIDs),
	})
	if isUniqueViolation(err) {
		return kassa.InvalidField(emailField, emailUnusable)
	}
	return err
}

// FindUsers lists the org's staff by id, for its owners and managers.
func (s *UserService) FindUsers(ctx context.Context, f kassa.UserFilter) (kassa.List[kassa.User], error) {
	a, err := kassa.MustActor(ctx)
	if err != nil {
		return kassa.List[kassa.User]{}, err
	}
	if !a.IsStaff() {
		return kassa.List[kassa.User]{}, kassa.Errorf(kassa.EForbidden, "only an owner or a manager lists staff")
	}
	w := orgFilter(a.OrgID)
	if f.Role != "" {
		w.and("role = ?", string(f.Role))
	}
	if f.LocationID != "" {
		w.and("(location_ids = '[]' OR EXISTS (SELECT 1 FROM "+engine.D(s.db.Reader).JSONValues("location_ids", "j")+" WHERE j.value = ?))", f.LocationID)
	}
	if f.Status != "" {
		w.and("is_active = ?", f.Status == "active")
	}
	return findPage(ctx, s.db.Reader, userCols, w, f.Page, scanUser, userID)
}

// FindUserByID returns a user of the org to its owners and managers, and
// to the user themselves. Errors: ENotFound, EForbidden.
func (s *UserService) FindUserByID(ctx context.Context, id string) (*kassa.User, error) {
	a, err := kassa.MustActor(ctx)
	if err != nil {
		return nil, err
	}
	u, err := findUser(ctx, s.db.Reader, a.OrgID, id)
	if err == nil && !a.IsStaff() && a.UserID != id {
		return nil, kassa.Errorf(kassa.EForbidden, "only an owner or a manager reads other staff")
	}
	return u, err
}

// UpdateUser changes a user's name, role or locations.
func (s *UserService) UpdateUser(ctx context.Context, id string, in *kassa.UserUpdate) (*kassa.User, error) {
	if err := in.Validate(); err != nil {
		return nil, err
	}
	cols := map[string]any{}
	if in.Name.Set {
		cols["name"] = in.Name.Value
	}
	if in.Role.Set {
		cols["role"] = string(in.Role.Value)
	}
	if in.LocationIDs.Set {
		cols["location_ids"] = orEmpty(in.LocationIDs.Value)
	}
	return s.change(ctx, id, edit{cols: cols})
}

// DeactivateUser stops a user signing in; their sessions at this node end
// now, at the other when the change arrives (migration 0035's trigger).
func (s *UserService) DeactivateUser(ctx context.Context, id string) (*kassa.User, error) {
	return s.change(ctx, id, edit{cols: map[string]any{"is_active": false}})
}

// ReactivateUser lets a deactivated user sign in again (with new sessions).
func (s *UserService) ReactivateUser(ctx context.Context, id string) (*kassa.User, error) {
	return s.change(ctx, id, edit{cols: map[string]any{"is_active": true}})
}

// ResetPassword gives a user a new password; their sessions at this node end.
func (s *UserService) ResetPassword(ctx context.Context, id string, in *kassa.PasswordReset) (*kassa.User, error) {
	if err := in.Validate(); err != nil {
		return nil, err
	}
	hash, err := hashPassword(in.Password)
	if err != nil {
		return nil, err
	}
	return s.change(ctx, id, edit{cols: map[string]any{"password_hash": hash}, endSessions: true})
}

// SetPIN gives a user a PIN for quick sign-in (their own, or a manager's
// cashier's); it also ends a PIN lockout (kassa.PINMaxFailures).
func (s *UserService) SetPIN(ctx context.Context, id string, in *kassa.PINSet) (*kassa.User, error) {
	if err := in.Validate(); err != nil {
		return nil, err
	}
	hash, err := hashPassword(in.PIN)
	if err != nil {
		return nil, err
	}
	return s.change(ctx, id, edit{cols: map[string]any{"pin_hash": hash}, kind: kassa.PINChange})
}

// ClearPIN removes a user's PIN: they sign in with their password only.
func (s *UserService) ClearPIN(ctx context.Context, id string) (*kassa.User, error) {
	return s.change(ctx, id, edit{cols: map[string]any{"pin_hash": ""}, kind: kassa.PINChange})
}

// edit is one change of an account: the columns it writes, what it
// touches, and whether the user's sessions at this node end with it.
type edit struct {
	cols        map[string]any
	kind        kassa.StaffChange
	endSessions bool
}

// change makes one edit of user id in a unit of work, by the staff rules.
// Errors: ENotFound, EForbidden, EConflict, EInvalid (a location not the org's).
func (s *UserService) change(ctx context.Context, id string, e edit) (*kassa.User, error) {
	a, err := kassa.MustActor(ctx)
	if err != nil {
		return nil, err
	}
	return writeRead(ctx, s.db, findUser, a.OrgID, id, func(tx *Tx) error {
		u, err := findUser(ctx, tx, a.OrgID, id)
		if err != nil {
			return err
		}
		before := staffOf(u)
		after := edited(*before, e.cols)
		if err := s.rules(ctx, tx, a, before, &after, e.kind); err != nil {
			return err
		}
		if err := checkLocations(ctx, tx, a.OrgID, after.LocationIDs); err != nil {
			return err
		}
		if e.endSessions {
			if _, err := tx.ExecContext(ctx, `UPDATE sessions SET revoked_at = ? WHERE user_id = ? AND revoked_at IS NULL`, fmtTime(tx.Now), id); err != nil {
				return err
			}
		}
		return tx.Update(ctx, entUser, a.OrgID, id, e.cols)
	})
}

// edited is s with the role, locations and status cols write.
func edited(s kassa.Staff, cols map[string]any) kassa.Staff {
	if r, ok := cols["role"].(string); ok {
		s.Role = kassa.Role(r)
	}
	if l, ok := cols["location_ids"].([]string); ok {
		s.LocationIDs = l
	}
	if v, ok := cols["is_active"].(bool); ok {
		s.Active = v
	}
	return s
}

// rules checks a staff change: kassa.CheckStaffChange, and at an enrolled
// edge kassa.CheckEdgeStaffChange for its location too — a change the
// hub would make is EConflict there ("changed at the hub").
func (s *UserService) rules(ctx context.Context, q querier, a *kassa.Actor, before, after *kassa.Staff, kind kassa.StaffChange) error {
	if a.UserID == "" {
		return kassa.Errorf(kassa.EForbidden, "staff are managed by staff, not by apps")
	}
	u, err := findUser(ctx, q, a.OrgID, a.UserID)
	if err != nil {
		return err
	}
	actor := staffOf(u)
	if err := kassa.CheckStaffChange(actor, before, after, kind); err != nil || !s.db.UnderHub.Load() {
		return err
	}
	// Read on q: inside a unit of work the writer is the unit's (db.Meta
	// would wait for it).
	var loc string
	if err := q.QueryRowContext(ctx, `SELECT value FROM node_meta WHERE key = ?`, MetaEdgeLocation).Scan(&loc); err != nil {
		return err
	}
	if err := kassa.CheckEdgeStaffChange(actor, before, after, loc, kind); err != nil {
		return kassa.Errorf(kassa.EConflict, "this store is enrolled at a hub: %s", err.(*kassa.Error).Message)
	}
	return nil
}

// checkLocations checks that every id names a location of the org.
func checkLocations(ctx context.Context, q querier, orgID string, ids []string) error {
	if len(ids) == 0 {
		return nil
	}
	var n int
	err := q.QueryRowContext(ctx, `SELECT count(*) FROM locations WHERE org_id = ? AND id IN (SELECT j.value FROM `+engine.D(q).JSONValues("?", "j")+`)`,
		orgID, columnValue(ids)).Scan(&n)
	if err == nil && n != len(ids) {
		return kassa.InvalidField("location_ids", "names a location that is not one of the org's")
	}
	return err
}

// UserByEmail returns the user with that e-mail on this node (internal
// callers only: it reads across orgs).
func (db *DB) UserByEmail(ctx context.Context, email string) (*kassa.User, error) {
	u, err := scanUser(db.Reader.QueryRowContext(ctx, userCols+` WHERE email = ?`, kassa.NormalizeEmail(email)))
	if errors.Is(err, sql.ErrNoRows) {
		return nil, kassa.NotFound("user", email)
	}
	return u, err
}

// checkUser admits an edge's change of a user (edgeRules["user"]): the
// actor, an active user of the org, makes it by kassa.CheckEdgeStaffChange
// for the edge's location — a manager of that location adds, changes and
// deactivates cashiers of that location alone; anybody sets their own
// PIN. A hash is taken only when its check costs no more than this node's
// (password.Bounded); a new user's e-mail must be free on the hub.
func checkUser(ctx context.Context, ad *admitter, c *change.Change, f map[string]any) error {
	delete(ad.Users, c.EntityID) // a later change of this batch by this user reads the user anew
	if ad.ActorOf == nil || ad.ActorOf.UserID == "" {
		return refuse(RefusedActor, "a user is changed by a user")
	}
	actor, err := findUser(ctx, ad.Tx, c.OrgID, c.Actor)
	if err != nil {
		return err
	}
	before, err := findUser(ctx, ad.Tx, c.OrgID, c.EntityID)
	if err != nil && kassa.ErrorKind(err) != kassa.ENotFound {
		return err
	}
	after, invalid := userAfter(before, f)
	var was *kassa.Staff
	if before != nil {
		was = staffOf(before)
	}
	if err := kassa.CheckEdgeStaffChange(staffOf(actor), was, after, ad.From.LocationID, changeOf(f)); err != nil {
		return refuse(RefusedActor, "%s", err.(*kassa.Error).Message)
	}
	if invalid != nil {
		return invalid
	}
	if before == nil {
		return newUserFields(ctx, ad, c, f)
	}
	return nil
}

// changeOf says what an edge's change of a user touches.
func changeOf(f map[string]any) kassa.StaffChange {
	for k := range f {
		if !slices.Contains([]string{"pin_hash", "updated_at", "id", "org_id"}, k) {
			return kassa.AccountChange
		}
	}
	return kassa.PINChange
}

// newUserFields checks an edge's new user: it has an e-mail, a role and a
// password hash, and the e-mail is free on the hub (unique across orgs).
func newUserFields(ctx context.Context, ad *admitter, c *change.Change, f map[string]any) error {
	for _, k := range []string{"email", "role", "password_hash"} {
		if _, ok := f[k].(string); !ok {
			return refuse(RefusedField, "a new user needs its %s", k)
		}
	}
	var n int
	if err := ad.Tx.QueryRowContext(ctx, `SELECT count(*) FROM users WHERE email = ?`, f["email"]).Scan(&n); err != nil {
		return err
	}
	if n > 0 {
		return refuse(RefusedValue, "the e-mail of user %s is in use", c.EntityID)
	}
	return nil
}

// userAfter is the user as an edge's change leaves it, and a refusal when
// a field fails the API's checks.
func userAfter(before *kassa.User, f map[string]any) (*kassa.Staff, error) {
	s := kassa.Staff{Active: true, LocationIDs: []string{}}
	if before != nil {
		s = *staffOf(before)
	}
	var v kassa.Validation
	for k, x := range f {
		str, _ := x.(string)
		switch k {
		case "role":
			s.Role = kassa.Role(str)
		case "location_ids":
			v.Check(decodeJSON(str, &s.LocationIDs) == nil, k, "must be a list of location ids")
		case "is_active":
			s.Active = x == int64(1)
		case "email":
			v.Check(kassa.ValidEmail(str) && str == kassa.NormalizeEmail(str), k, "must be an e-mail address")
		case "name":
			v.Check(kassa.ValidText(str, 200), k, "must be at most 200 characters of text")
		case "password_hash":
			v.Check(password.Bounded(str), k, "must be a hash this node checks")
		case "pin_hash":
			v.Check(str == "" || password.Bounded(str), k, "must be empty or a hash this node checks")
		}
	}
	if err := v.Err(); err != nil {
		return &s, refuse(RefusedValue, "%v", err)
	}
	return &s, nil
}

// Users: written at the hub, and at a store by its manager for its own
// cashiers (docs/staff.md; checkUser holds the rule).
var entUser = new(noun)

func init() {
	register(entUser, noun{Name: "user", Table: "users", Digest: orgRows, Formats: []formatStep{{Format: 5, Migration: 35}},
		Edge: &edgeRule{Update: []string{"name", "role", "location_ids", "is_active", "password_hash", "pin_hash"}, Once: []string{"email"}, AnyUser: true,
			Refs: []ref{{Col: "location_ids", Table: "locations", List: true}}, Check: checkUser},
		NewState: func(*engine.DB) any { return &userState{} }})
}

// Users are the actors of most changes an edge pushes: tried first.
func init() {
	engine.ActorSources = append([]engine.ActorSource{{Table: "users", Cols: "role, CAST(is_active AS TEXT)", Decode: userActor}}, engine.ActorSources...)
}

// userActor is a user of the org as the hub's admission sees it (its
// role, and is_active as text), for the authorization it replays
// (admitter.actor).
func userActor(role, active string) (batchUser, error) {
	return batchUser{Found: true, Role: role, Active: active == "1"}, nil
}
