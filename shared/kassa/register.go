package kassa

import (
	"context"
	"time"
)

// Register is a till at a location: the place a cash drawer is opened
// and where a payment's cash goes (docs/drawers.md). Receipts and
// printers name it by id.
type Register struct {
	ID         string    `json:"id"`
	OrgID      string    `json:"org_id"`
	LocationID string    `json:"location_id"` // The store it stands in; never changes.
	Name       string    `json:"name"`        // e.g. "Front till".
	IsActive   bool      `json:"is_active"`   // An inactive register opens no drawer.
	CreatedAt  time.Time `json:"created_at"`
	UpdatedAt  time.Time `json:"updated_at"`
}

// RegisterCreate is the body of POST /registers.
type RegisterCreate struct {
	LocationID string `json:"location_id" openapi:"required"`
	Name       string `json:"name" openapi:"required"`
}

// RegisterUpdate is the body of PATCH /registers/{id}.
type RegisterUpdate struct {
	Name     *string `json:"name"`
	IsActive *bool   `json:"is_active"`
}

// RegisterFilter selects registers.
type RegisterFilter struct {
	LocationID *string
	Page
}

// Validate checks a new register.
func (in *RegisterCreate) Validate() error {
	var v Validation
	v.Check(ValidID(in.LocationID), "location_id", "must be the id of a location")
	v.Check(in.Name != "" && ValidText(in.Name, 100), "name", "is required: 1-100 characters of text")
	return v.Err()
}

// Validate checks a register update.
func (in *RegisterUpdate) Validate() error {
	var v Validation
	v.Check(in.Name == nil || (*in.Name != "" && ValidText(*in.Name, 100)), "name", "must be 1-100 characters of text")
	return v.Err()
}

// CanManageRegisters reports whether a may create and change registers:
// managers and owners.
func CanManageRegisters(a *Actor) error {
	if !a.IsStaff() {
		return Errorf(EForbidden, "only a manager or an owner can manage registers")
	}
	return nil
}

// RegisterService manages the org's registers. Errors: ENotFound,
// EInvalid, EForbidden (writes need a manager or owner).
type RegisterService interface {
	FindRegisters(ctx context.Context, f RegisterFilter) (List[Register], error)
	FindRegisterByID(ctx context.Context, id string) (*Register, error)
	CreateRegister(ctx context.Context, in *RegisterCreate) (*Register, error)
	UpdateRegister(ctx context.Context, id string, in *RegisterUpdate) (*Register, error)
}
