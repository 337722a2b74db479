package kassa

import (
	"context"
	"time"
)

// Customer is a person who buys; deleting one keeps a tombstone with the
// personal fields erased.
type Customer struct {
	ID              string         `json:"id"`
	OrgID           string         `json:"org_id"`
	FirstName       string         `json:"first_name"`        // Given name; "" when unknown.
	LastName        string         `json:"last_name"`         // Family name; "" when unknown.
	Email           *string        `json:"email"`             // E-mail address, trimmed and lower-cased; unique per org; null when none.
	Phone           *string        `json:"phone"`             // Phone number as entered (3-32 of digits, spaces, + - ( )); null when none.
	Birthday        *string        `json:"birthday"`          // YYYY-MM-DD
	Preferences     map[string]any `json:"preferences"`       // Free-form preferences (a JSON object of at most 8 KiB), replaced as a whole on update.
	LoyaltyMemberID *string        `json:"loyalty_member_id"` // An external loyalty card or member number; null when none.
	Tags            []string       `json:"tags"`
	Notes           string         `json:"notes"`
	CreatedAt       time.Time      `json:"created_at"`
	UpdatedAt       time.Time      `json:"updated_at"`
	StoreCredit     int64          `json:"store_credit"` // The customer's store credit balance, in minor units (docs/returns.md; entries at /customers/{id}/store-credit).
}

// CustomerCreate is the body of POST /customers. At least one of a name,
// an e-mail or a phone is needed.
type CustomerCreate struct {
	FirstName       string         `json:"first_name"`
	LastName        string         `json:"last_name"`
	Email           *string        `json:"email"`
	Phone           *string        `json:"phone"`
	Birthday        *string        `json:"birthday"`
	Preferences     map[string]any `json:"preferences"`
	LoyaltyMemberID *string        `json:"loyalty_member_id"`
	Tags            []string       `json:"tags"`
	Notes           string         `json:"notes"`
}

// CustomerUpdate is the body of PATCH /customers/:id.
type CustomerUpdate struct {
	FirstName       Opt[string]         `json:"first_name"`
	LastName        Opt[string]         `json:"last_name"`
	Email           Opt[string]         `json:"email"`
	Phone           Opt[string]         `json:"phone"`
	Birthday        Opt[string]         `json:"birthday"`
	Preferences     Opt[map[string]any] `json:"preferences"`
	LoyaltyMemberID Opt[string]         `json:"loyalty_member_id"`
	Tags            Opt[[]string]       `json:"tags"`
	Notes           Opt[string]         `json:"notes"`
}

// CustomerFilter selects customers: Q matches name, e-mail or phone
// (case-insensitive substring); Email matches exactly.
type CustomerFilter struct {
	Q     string
	Email string
	Page
}

// CustomerService manages the org's customers. Errors: ENotFound, EInvalid,
// EConflict (e-mail taken in the org).
type CustomerService interface {
	FindCustomers(ctx context.Context, f CustomerFilter) (List[Customer], error)
	FindCustomerByID(ctx context.Context, id string) (*Customer, error)
	CreateCustomer(ctx context.Context, in *CustomerCreate) (*Customer, error)
	UpdateCustomer(ctx context.Context, id string, in *CustomerUpdate) (*Customer, error)
	DeleteCustomer(ctx context.Context, id string) error
}
