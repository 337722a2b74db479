package kassa

import (
	"context"
	"slices"
)

// Staff management (docs/staff.md): who may add, change, deactivate and
// reactivate which staff accounts, at the hub and at an enrolled edge.

// UserService manages staff accounts of the caller's org. Errors:
// ENotFound (also another org's user), EForbidden (the staff rules below),
// EInvalid, EConflict (at an enrolled edge, a change only the hub makes).
type UserService interface {
	CreateUser(ctx context.Context, in *UserCreate) (*User, error)
	FindUsers(ctx context.Context, f UserFilter) (List[User], error)
	FindUserByID(ctx context.Context, id string) (*User, error)
	UpdateUser(ctx context.Context, id string, in *UserUpdate) (*User, error)
	DeactivateUser(ctx context.Context, id string) (*User, error)
	ReactivateUser(ctx context.Context, id string) (*User, error)
	ResetPassword(ctx context.Context, id string, in *PasswordReset) (*User, error)
	SetPIN(ctx context.Context, id string, in *PINSet) (*User, error)
	ClearPIN(ctx context.Context, id string) (*User, error)
}

// UserFilter selects staff: by role, by a location they work at (staff of
// every location included), by status ("active" or "inactive").
type UserFilter struct {
	Role       Role
	LocationID string
	Status     string
	Page
}

// UserUpdate is the body of PATCH /users/:id. The e-mail is not
// changeable (it is the sign-in name); a password or PIN has its own route.
type UserUpdate struct {
	Name        Opt[string]   `json:"name"`
	Role        Opt[Role]     `json:"role"`
	LocationIDs Opt[[]string] `json:"location_ids"` // The locations they work at; [] or null: every location.
}

// Validate checks the fields present.
func (in *UserUpdate) Validate() error {
	var v Validation
	v.Check(!in.Name.Null && ValidText(in.Name.Value, 200), "name", "must be at most 200 characters of text")
	v.Check(!in.Role.Set || in.Role.Value.Valid(), "role", "must be one of owner, manager, cashier, kitchen, ops")
	checkLocationIDs(&v, in.LocationIDs.Value)
	return v.Err()
}

// PasswordReset is the body of POST /users/:id/password.
type PasswordReset struct {
	Password string `json:"password" openapi:"required"` // The new password, 8-256 bytes; the user's sessions at this node end.
}

// Validate checks the new password's length.
func (in *PasswordReset) Validate() error {
	if len(in.Password) < 8 || len(in.Password) > 256 {
		return InvalidField("password", "must have 8-256 characters")
	}
	return nil
}

// PINSet is the body of PUT /users/:id/pin.
type PINSet struct {
	PIN string `json:"pin" openapi:"required"` // 4-8 digits; stored only as a hash.
}

// Validate checks the PIN: 4 to 8 ASCII digits.
func (in *PINSet) Validate() error {
	if !ValidPIN(in.PIN) {
		return InvalidField("pin", "must be 4-8 digits")
	}
	return nil
}

// ValidPIN reports whether s is a PIN: 4 to 8 ASCII digits.
func ValidPIN(s string) bool {
	if len(s) < 4 || len(s) > 8 {
		return false
	}
	for _, r := range s {
		if r < '0' || r > '9' {
			return false
		}
	}
	return true
}

// PINMaxFailures is how many wrong PINs in a row a user may enter at one
// node before their PIN stops working there, until a new PIN is set or
// they sign in with their password. Besides it, PIN sign-ins are locked by
// user and client address like passwords (LockoutDelay).
const PINMaxFailures = 10

// MaxUserLocations bounds a user's location list.
const MaxUserLocations = 50

func checkLocationIDs(v *Validation, ids []string) {
	ok := len(ids) <= MaxUserLocations
	for i, id := range ids {
		ok = ok && ValidID(id) && !slices.Contains(ids[:i], id)
	}
	v.Check(ok, "location_ids", "must be at most 50 distinct location ids")
}

// Staff is a user as the staff rules see them.
type Staff struct {
	ID          string
	Role        Role
	LocationIDs []string // empty: every location
	Active      bool
}

// Covers reports whether the staff member works at every location of
// ids (an empty ids is every location).
func (s *Staff) Covers(ids []string) bool {
	if len(s.LocationIDs) == 0 {
		return true
	}
	if len(ids) == 0 {
		return false
	}
	for _, id := range ids {
		if !slices.Contains(s.LocationIDs, id) {
			return false
		}
	}
	return true
}

// StaffChange says what a change of an account touches.
type StaffChange int

// The kinds of staff change.
const (
	AccountChange StaffChange = iota // any field of the account
	PINChange                        // only its PIN: everybody sets and clears their own
)

// CheckStaffChange says whether actor may turn before (nil: a new
// account) into after; everybody may change their own PIN. An owner manages every account but may not change
// their own role or deactivate themselves (another owner must, so an org
// always keeps an owner who can sign in); a manager manages cashiers who
// work only at locations the manager works at, and only as cashiers;
// nobody else manages staff. Errors: EForbidden.
func CheckStaffChange(actor, before, after *Staff, kind StaffChange) error {
	if kind == PINChange && before != nil && actor.ID == before.ID {
		return nil
	}
	if before != nil && actor.ID == before.ID && (after.Role != before.Role || !after.Active) {
		return Errorf(EForbidden, "nobody can change their own role or deactivate themselves: another owner must")
	}
	switch actor.Role {
	case RoleOwner:
		return nil
	case RoleManager:
		for _, s := range []*Staff{before, after} {
			if s != nil && (s.Role != RoleCashier || len(s.LocationIDs) == 0 || !actor.Covers(s.LocationIDs)) {
				return Errorf(EForbidden, "a manager manages only cashiers of the locations the manager works at")
			}
		}
		return nil
	}
	return Errorf(EForbidden, "only an owner or a manager manages staff")
}

// CheckEdgeStaffChange is what an enrolled edge of location may change of
// staff, made there and admitted at the hub alike (docs/staff.md): a
// manager (or an owner) who works at location adds, changes and
// deactivates cashiers of that location alone, and such a cashier sets or
// clears their own PIN. Nothing else: a PIN replicates to every node, so
// a store never sets one for staff it does not hold alone. Errors:
// EForbidden.
func CheckEdgeStaffChange(actor, before, after *Staff, location string, kind StaffChange) error {
	if kind == PINChange && before != nil && actor.ID == before.ID && before.cashierOf(location) {
		return nil
	}
	if actor.Role != RoleManager && actor.Role != RoleOwner || !actor.Covers([]string{location}) {
		return Errorf(EForbidden, "at a store only a manager of the store manages staff")
	}
	for _, s := range []*Staff{before, after} {
		if s != nil && !s.cashierOf(location) {
			return Errorf(EForbidden, "at a store a manager manages only cashiers of this store alone; other staff are changed at the hub")
		}
	}
	if before != nil && actor.ID == before.ID {
		return Errorf(EForbidden, "nobody can change their own role or deactivate themselves")
	}
	return nil
}

// cashierOf reports whether s is a cashier of location alone.
func (s *Staff) cashierOf(location string) bool {
	return s.Role == RoleCashier && slices.Equal(s.LocationIDs, []string{location})
}
