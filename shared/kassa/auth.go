package kassa

import (
	"context"
	"slices"
	"time"
)

// Role is a first-party user's role within an org.
type Role string

// The roles.
const (
	RoleOwner   Role = "owner"
	RoleManager Role = "manager"
	RoleCashier Role = "cashier"
	RoleKitchen Role = "kitchen"
	// RoleOps watches the stores' sync from the hub and resolves its
	// conflicts: reports:read and sync:write, nothing of the business.
	RoleOps Role = "ops"
)

// Valid reports whether r is a known role.
func (r Role) Valid() bool { _, ok := roleScopes[r]; return ok }

// Scope is an OAuth-style permission (spec part 5).
type Scope string

// The scopes of the spec.
const (
	ScopeCatalogRead      Scope = "catalog:read"
	ScopeCatalogWrite     Scope = "catalog:write"
	ScopeOrdersRead       Scope = "orders:read"
	ScopeOrdersWrite      Scope = "orders:write"
	ScopeCustomersRead    Scope = "customers:read"
	ScopeCustomersWrite   Scope = "customers:write"
	ScopeLoyaltyRead      Scope = "loyalty:read"
	ScopeLoyaltyWrite     Scope = "loyalty:write"
	ScopePaymentsRead     Scope = "payments:read"
	ScopePaymentsWrite    Scope = "payments:write"
	ScopeInventoryRead    Scope = "inventory:read"
	ScopeInventoryWrite   Scope = "inventory:write"
	ScopeReportsRead      Scope = "reports:read"
	ScopeWebhooksWrite    Scope = "webhooks:write"
	ScopeAutomationsRead  Scope = "automations:read"
	ScopeAutomationsWrite Scope = "automations:write"
	// ScopeKDS is Kassa's own scope for the kitchen display feed and bumps.
	ScopeKDS Scope = "kds"
	// ScopeLocationsWrite is Kassa's own scope for creating locations (owners).
	ScopeLocationsWrite Scope = "locations:write"
	// ScopeSyncWrite is Kassa's own scope for resolving and re-applying
	// sync conflicts at the hub (owners and ops).
	ScopeSyncWrite Scope = "sync:write"
)

// AllScopes lists every scope of the spec in its order.
var AllScopes = []Scope{
	ScopeCatalogRead, ScopeCatalogWrite, ScopeOrdersRead, ScopeOrdersWrite,
	ScopeCustomersRead, ScopeCustomersWrite, ScopeLoyaltyRead, ScopeLoyaltyWrite,
	ScopePaymentsRead, ScopePaymentsWrite, ScopeInventoryRead, ScopeInventoryWrite,
	ScopeReportsRead, ScopeWebhooksWrite, ScopeAutomationsRead, ScopeAutomationsWrite,
}

var roleScopes = map[Role][]Scope{
	RoleOwner:   append(slices.Clone(AllScopes), ScopeKDS, ScopeLocationsWrite, ScopeSyncWrite),
	RoleManager: append(slices.Clone(AllScopes), ScopeKDS),
	RoleCashier: {
		ScopeCatalogRead, ScopeOrdersRead, ScopeOrdersWrite, ScopeCustomersRead, ScopeCustomersWrite,
		ScopeLoyaltyRead, ScopeLoyaltyWrite, ScopePaymentsRead, ScopePaymentsWrite, ScopeInventoryRead, ScopeKDS,
	},
	RoleKitchen: {ScopeKDS, ScopeCatalogRead},
	RoleOps:     {ScopeReportsRead, ScopeSyncWrite},
}

// RoleScopes returns the scopes a role grants. A cashier has no
// inventory:write (stock adjustment) and refunds above the org's limit need a
// manager or owner, which the order service checks by role.
func RoleScopes(r Role) []Scope { return slices.Clone(roleScopes[r]) }

// Actor is who makes a request: a first-party user or a partner app acting
// for an org. Every service method reads it from the context and scopes all
// it touches to Actor.OrgID.
type Actor struct {
	OrgID     string
	UserID    string // empty for OAuth client_credentials tokens
	Role      Role   // empty for OAuth tokens
	ClientID  string // OAuth client, empty for first-party tokens
	SessionID string // first-party session
	Scopes    []Scope
}

// Has reports whether the actor was granted scope.
func (a *Actor) Has(s Scope) bool { return slices.Contains(a.Scopes, s) }

// IsStaff reports whether the actor is a manager or an owner.
func (a *Actor) IsStaff() bool { return a.Role == RoleOwner || a.Role == RoleManager }

type actorKey struct{}

// WithActor returns a context carrying a.
func WithActor(ctx context.Context, a *Actor) context.Context {
	return context.WithValue(ctx, actorKey{}, a)
}

// ActorFrom returns the actor of ctx, or nil.
func ActorFrom(ctx context.Context) *Actor {
	a, _ := ctx.Value(actorKey{}).(*Actor)
	return a
}

// MustActor returns the actor of ctx or an EUnauthorized error.
func MustActor(ctx context.Context) (*Actor, error) {
	if a := ActorFrom(ctx); a != nil && a.OrgID != "" {
		return a, nil
	}
	return nil, Errorf(EUnauthorized, "authentication required")
}

// User is a first-party staff account.
type User struct {
	ID       string `json:"id"`
	OrgID    string `json:"org_id"`
	Email    string `json:"email"` // The e-mail address they sign in with.
	Name     string `json:"name"`
	Role     Role   `json:"role"`      // The staff member's role; it sets their scopes.
	IsActive bool   `json:"is_active"` // Whether they may sign in.
	// The locations they work at; empty: every location of the org.
	LocationIDs []string  `json:"location_ids"`
	HasPIN      bool      `json:"has_pin"` // Whether a PIN is set for quick sign-in at a till (POST /auth/pin).
	CreatedAt   time.Time `json:"created_at"`
	UpdatedAt   time.Time `json:"updated_at"`
}

// Tokens is the result of a login or refresh.
type Tokens struct {
	AccessToken  string
	RefreshToken string
	ExpiresIn    int // seconds
	User         *User
}

// AuthService logs staff in and out. Errors: EUnauthorized for bad
// credentials or tokens, ERateLimited when logins are throttled or an
// account is locked for the client's address.
type AuthService interface {
	// Login checks the credentials; addr is the client's network address
	// (throttles and lockout are per address).
	Login(ctx context.Context, email, password, addr string) (*Tokens, error)
	Refresh(ctx context.Context, refreshToken string) (*Tokens, error)
	Logout(ctx context.Context) error
	// Authenticate checks an access token and returns its actor.
	Authenticate(ctx context.Context, accessToken string) (*Actor, error)
	Me(ctx context.Context) (*User, error)
	// PINLogin signs a user in with their PIN (quick sign-in at a till),
	// bounded like Login plus PINMaxFailures in a row per user and node.
	PINLogin(ctx context.Context, userID, pin, addr string) (*Tokens, error)
}

// UserCreate is the input of UserService.CreateUser.
type UserCreate struct {
	Email    string `json:"email" openapi:"required"`
	Name     string `json:"name"`
	Role     Role   `json:"role" openapi:"required"`
	Password string `json:"password" openapi:"required"` // 8-256 bytes; stored only as a hash.
	// The locations they work at (at most 50, each of the org); empty or
	// absent: every location. A manager adds cashiers of their own locations.
	LocationIDs []string `json:"location_ids"`
}

// Validate checks a new staff account: an e-mail address, a known role, a
// password of 8–256 bytes and a name of at most 200 characters.
func (in *UserCreate) Validate() error {
	var v Validation
	v.Check(ValidEmail(in.Email), "email", "must be an e-mail address")
	v.Check(in.Role.Valid(), "role", "must be one of owner, manager, cashier, kitchen")
	v.Check(len(in.Password) >= 8 && len(in.Password) <= 256, "password", "must have 8-256 characters")
	v.Check(ValidText(in.Name, 200), "name", "must be at most 200 characters of text")
	checkLocationIDs(&v, in.LocationIDs)
	return v.Err()
}
