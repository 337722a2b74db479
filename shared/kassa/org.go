package kassa

import (
	"context"
	"strings"
	"time"
)

// Org is a tenant: a merchant with its stores, staff and data.
type Org struct {
	ID        string    `json:"id"`
	Name      string    `json:"name"`
	Currency  string    `json:"currency"` // ISO 4217
	CreatedAt time.Time `json:"created_at"`
	UpdatedAt time.Time `json:"updated_at"`
}

// OrgCreate provisions a tenant with its first owner.
type OrgCreate struct {
	Name          string
	Currency      string
	OwnerEmail    string
	OwnerName     string
	OwnerPassword string
}

// Validate checks the input of a provisioning call.
func (in *OrgCreate) Validate() error {
	var v Validation
	v.Check(ValidName(in.Name, 200), "name", "is required: 1-200 characters of text, not only spaces")
	v.Check(ValidCurrency(in.Currency), "currency", "must be a three-letter ISO 4217 code")
	v.Check(ValidEmail(in.OwnerEmail), "owner_email", "must be an e-mail address")
	v.Check(len(in.OwnerPassword) >= 8, "owner_password", "must have at least 8 characters")
	return v.Err()
}

// OrgService provisions tenants. It is internal to a node (demo seed, tests,
// the hub's tenant provisioning); it reads across orgs and has no actor.
type OrgService interface {
	CreateOrg(ctx context.Context, in *OrgCreate) (*Org, *User, error)
	FindOrgByName(ctx context.Context, name string) (*Org, error)
	// FindOrg returns the org with that id, or ENotFound.
	FindOrg(ctx context.Context, id string) (*Org, error)
}

// Location is a site or store of an org.
type Location struct {
	ID       string `json:"id"`
	OrgID    string `json:"org_id"`
	Name     string `json:"name"`
	Timezone string `json:"timezone"`
	Address  string `json:"address"`
	Currency string `json:"currency"`
	// DayCutoffHour is the local hour (0–12) the business day starts at:
	// sales before it belong to the previous day (BusinessDay).
	DayCutoffHour int       `json:"day_cutoff_hour"`
	CreatedAt     time.Time `json:"created_at"`
	UpdatedAt     time.Time `json:"updated_at"`
}

// LocationCreate is the body of POST /locations.
type LocationCreate struct {
	Name     string `json:"name" openapi:"required"`
	Timezone string `json:"timezone" openapi:"required"`
	Address  string `json:"address"`
	Currency string `json:"currency"` // defaults to the org's
}

// LocationService manages the org's locations. CreateLocation needs an owner.
type LocationService interface {
	FindLocations(ctx context.Context, p Page) (List[Location], error)
	FindLocationByID(ctx context.Context, id string) (*Location, error)
	CreateLocation(ctx context.Context, in *LocationCreate) (*Location, error)
	// UpdateLocation changes a location's name or business day (owners).
	UpdateLocation(ctx context.Context, id string, in *LocationUpdate) (*Location, error)
}

// Validate checks a new location: a name of 1–200 characters, an IANA time
// zone, an address of at most 500 characters, and an ISO 4217 currency if
// given (empty takes the org's).
func (in *LocationCreate) Validate() error {
	var v Validation
	v.Check(ValidName(in.Name, 200), "name", "is required: 1-200 characters of text, not only spaces")
	v.Check(ValidTimezone(in.Timezone), "timezone", "must be an IANA time zone such as Australia/Sydney")
	v.Check(ValidText(in.Address, 500), "address", "must be at most 500 characters of text")
	v.Check(in.Currency == "" || ValidCurrency(in.Currency), "currency", "must be a three-letter ISO 4217 code")
	return v.Err()
}

// Tenants (resellers, issue 12): a partner app with the partners:write
// scope, or the hub's operator, creates an org with its owner and first
// location in one call. The hub records who created it and may give the
// org its own API rate limit. Tenants are hub-only data: the org, owner
// and location replicate to the org's edges like any others, the record of
// the creator and the rate limit never leave the hub.

// Operator is the creator recorded for a tenant the hub's operator made,
// where a partner app's is its client id.
const Operator = "operator"

// TenantCreate is the body of POST /partners/tenants.
type TenantCreate struct {
	Name     string `json:"name" openapi:"required"`
	Currency string `json:"currency" openapi:"required"` // ISO 4217
	// Owner is the tenant's first staff account, of role owner.
	Owner TenantOwner `json:"owner" openapi:"required"`
	// Location is the tenant's first store.
	Location LocationCreate `json:"location" openapi:"required"`
}

// TenantOwner is the first owner of a new tenant; the role is owner.
type TenantOwner struct {
	Email string `json:"email" openapi:"required"`
	Name  string `json:"name" openapi:"required"`
	// Password is the owner's first password, 8-256 characters; it is
	// stored only as an Argon2id hash and never shown again.
	Password string `json:"password" openapi:"required"`
}

// User returns the owner as a new user of role owner.
func (o *TenantOwner) User() *UserCreate {
	return &UserCreate{Email: o.Email, Name: o.Name, Password: o.Password, Role: RoleOwner}
}

// Validate checks a new tenant: a name of 1–200 characters, not blank, a
// three-letter currency (the store checks it is an ISO 4217 code in use), the owner as a new user (a name is required) and the location
// as a new location. Field names are nested: owner.email, location.timezone.
func (in *TenantCreate) Validate() error {
	var v Validation
	v.Check(ValidName(in.Name, 200), "name", "is required: 1-200 characters of text, not only spaces")
	v.Check(ValidCurrency(in.Currency), "currency", "must be a three-letter ISO 4217 code")
	v.Check(strings.TrimSpace(in.Owner.Name) != "", "owner.name", "is required, not only spaces")
	v.nest("owner.", in.Owner.User().Validate())
	v.nest("location.", in.Location.Validate())
	return v.Err()
}

// nest adds the field errors of err under prefix.
func (v *Validation) nest(prefix string, err error) {
	e, ok := err.(*Error)
	if !ok || e == nil {
		return
	}
	for _, f := range e.Fields {
		v.Add(prefix+f.Field, "%s", f.Message)
	}
}

// RateLimit is an org's own API rate limit, replacing the node's default
// per-org token bucket (--rate-per-minute, --rate-burst).
type RateLimit struct {
	PerMinute int `json:"per_minute" openapi:"required"` // refill, requests per minute
	Burst     int `json:"burst" openapi:"required"`      // bucket size
}

// MaxRate bounds an org's rate limit and burst.
const MaxRate = 1_000_000

// Validate checks a rate limit: both 1 to MaxRate.
func (r *RateLimit) Validate() error {
	var v Validation
	v.Check(r.PerMinute >= 1 && r.PerMinute <= MaxRate, "per_minute", "must be an integer from 1 to 1000000")
	v.Check(r.Burst >= 1 && r.Burst <= MaxRate, "burst", "must be an integer from 1 to 1000000")
	return v.Err()
}

// Tenant is an org as a partner or the operator sees it: the org, its
// first owner and location, who created it and its own rate limit (null:
// the node's default).
type Tenant struct {
	ID string `json:"id"` // the org's id
	// Org is the tenant's org.
	Org Org `json:"org"`
	// Owner is the owner created with the tenant.
	Owner *User `json:"owner"`
	// Location is the first location, created with the tenant.
	Location  *Location `json:"location"`
	CreatedBy string    `json:"created_by"` // the partner app's client id, or "operator"
	// RateLimit is the org's own request limit set by the operator; null:
	// the hub's default.
	RateLimit *RateLimit `json:"rate_limit"`
	CreatedAt time.Time  `json:"created_at"`
}

// TenantService creates and reads tenants at the hub. The caller is the
// context's operator mark (WithOperator) or an actor with the
// partners:write scope; a partner sees only the tenants it created.
type TenantService interface {
	// CreateTenant creates the org, its owner and location in one unit of
	// work. Errors: EForbidden, EInvalid, EConflict (the owner's e-mail or
	// the org's name is taken).
	CreateTenant(ctx context.Context, in *TenantCreate) (*Tenant, error)
	FindTenants(ctx context.Context, p Page) (List[Tenant], error)
	// FindTenantByID returns ENotFound for an org the caller did not create.
	FindTenantByID(ctx context.Context, id string) (*Tenant, error)
	// SetRateLimit gives any org its own limit (nil: back to the default);
	// the operator only.
	SetRateLimit(ctx context.Context, orgID string, r *RateLimit) (*Tenant, error)
	// RateLimits returns every org's own limit, for the node to load at start.
	RateLimits(ctx context.Context) (map[string]RateLimit, error)
}

type operatorKey struct{}

// WithOperator marks ctx as the hub operator's (the --operator-token).
func WithOperator(ctx context.Context) context.Context {
	return context.WithValue(ctx, operatorKey{}, true)
}

// IsOperator reports whether ctx is the hub operator's.
func IsOperator(ctx context.Context) bool {
	op, _ := ctx.Value(operatorKey{}).(bool)
	return op
}

// TenantCaller returns who calls the tenant service: Operator, or the
// client id of an actor with the partners:write scope. Anyone else gets
// EForbidden.
func TenantCaller(ctx context.Context) (string, error) {
	if IsOperator(ctx) {
		return Operator, nil
	}
	a := ActorFrom(ctx)
	if a == nil || !a.Has(ScopePartnersWrite) || a.ClientID == "" {
		return "", Errorf(EForbidden, "this token lacks the %s scope", ScopePartnersWrite)
	}
	return a.ClientID, nil
}
