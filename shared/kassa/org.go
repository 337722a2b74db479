package kassa

import (
	"context"
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
	v.Check(in.Name != "", "name", "is required")
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
	ID        string    `json:"id"`
	OrgID     string    `json:"org_id"`
	Name      string    `json:"name"`
	Timezone  string    `json:"timezone"`
	Address   string    `json:"address"`
	Currency  string    `json:"currency"`
	CreatedAt time.Time `json:"created_at"`
	UpdatedAt time.Time `json:"updated_at"`
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
}

// Validate checks a new location: a name of 1–200 characters, an IANA time
// zone, an address of at most 500 characters, and an ISO 4217 currency if
// given (empty takes the org's).
func (in *LocationCreate) Validate() error {
	var v Validation
	v.Check(in.Name != "" && ValidText(in.Name, 200), "name", "is required: 1-200 characters of text")
	v.Check(ValidTimezone(in.Timezone), "timezone", "must be an IANA time zone such as Australia/Sydney")
	v.Check(ValidText(in.Address, 500), "address", "must be at most 500 characters of text")
	v.Check(in.Currency == "" || ValidCurrency(in.Currency), "currency", "must be a three-letter ISO 4217 code")
	return v.Err()
}
