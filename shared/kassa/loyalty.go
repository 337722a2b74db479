package kassa

import (
	"context"
	"time"
)

// LoyaltyProgram defines how points are earned and what they are worth.
type LoyaltyProgram struct {
	ID    string `json:"id"`
	OrgID string `json:"org_id"`
	Name  string `json:"name"`
	// PointsPerUnit is the points earned per major currency unit spent
	// (per 100 minor units), rounded down per order.
	PointsPerUnit int64 `json:"points_per_unit"` // Points earned per 100 minor units spent (rounded down).
	// RedemptionValue is what one point is worth, in minor units.
	RedemptionValue int64         `json:"redemption_value"` // Minor units one point is worth when redeemed.
	Tiers           []LoyaltyTier `json:"tiers"`            // The tiers, lowest min_lifetime_points first.
	IsActive        bool          `json:"is_active"`
	CreatedAt       time.Time     `json:"created_at"`
	UpdatedAt       time.Time     `json:"updated_at"`
}

// LoyaltyTier is reached at MinLifetimePoints.
type LoyaltyTier struct {
	Name              string `json:"name" openapi:"required"`                // The tier name, unique in the program.
	MinLifetimePoints int64  `json:"min_lifetime_points" openapi:"required"` // Lifetime points from which an account is in the tier.
}

// TierFor returns the name of the highest tier reached with lifetime
// points, or nil when none is.
func (p *LoyaltyProgram) TierFor(lifetime int64) *string {
	var best *LoyaltyTier
	for i := range p.Tiers {
		t := &p.Tiers[i]
		if lifetime >= t.MinLifetimePoints && (best == nil || t.MinLifetimePoints > best.MinLifetimePoints) {
			best = t
		}
	}
	if best == nil {
		return nil
	}
	name := best.Name
	return &name
}

// LoyaltyProgramCreate is the body of POST /loyalty/programs.
type LoyaltyProgramCreate struct {
	Name            string        `json:"name"`
	PointsPerUnit   int64         `json:"points_per_unit"`
	RedemptionValue int64         `json:"redemption_value"`
	Tiers           []LoyaltyTier `json:"tiers"`
	IsActive        *bool         `json:"is_active"`
}

// LoyaltyAccount is a customer's membership of a program. Balance and
// lifetime points are sums of its transactions; the tier follows lifetime points.
type LoyaltyAccount struct {
	ID             string    `json:"id"`
	OrgID          string    `json:"org_id"`
	ProgramID      string    `json:"program_id"`
	CustomerID     string    `json:"customer_id"`
	PointsBalance  int64     `json:"points_balance"`  // Points available to redeem (sum of its transactions).
	LifetimePoints int64     `json:"lifetime_points"` // Points ever earned; they set the tier.
	Tier           *string   `json:"tier"`            // The name of the tier lifetime_points reach; null below the lowest.
	CreatedAt      time.Time `json:"created_at"`
	UpdatedAt      time.Time `json:"updated_at"`
}

// PointsType is the kind of a points transaction.
type PointsType string

// The points transaction types.
const (
	PointsEarn   PointsType = "earn"
	PointsRedeem PointsType = "redeem"
	PointsAdjust PointsType = "adjust"
	// PointsRefund credits back points a loyalty_points payment redeemed,
	// when the payment is refunded or voided.
	PointsRefund PointsType = "refund"
)

// PointsTransaction is one append-only entry of an account. Points are
// signed: redemptions are negative.
type PointsTransaction struct {
	ID           string     `json:"id"`
	OrgID        string     `json:"org_id"`
	AccountID    string     `json:"account_id"`
	Type         PointsType `json:"type"`          // earn, redeem, adjust or refund (a loyalty_points payment given back).
	Points       int64      `json:"points"`        // Signed points: redemptions are negative.
	BalanceAfter int64      `json:"balance_after"` // The account's balance after it.
	OrderID      *string    `json:"order_id"`
	PaymentID    *string    `json:"payment_id"` // The loyalty_points payment a redeem or refund belongs to; null otherwise.
	Reason       string     `json:"reason"`     // Free text saying why.
	Origin       string     `json:"origin"`
	CreatedAt    time.Time  `json:"created_at"`
}

// EnrolRequest is the body of POST /loyalty/accounts; the program defaults
// to the org's only active program.
type EnrolRequest struct {
	CustomerID string  `json:"customer_id" openapi:"required"`
	ProgramID  *string `json:"program_id"`
}

// PointsRequest is the body of earn and redeem: positive points, or (earn
// only) an amount spent in minor units that the program converts.
type PointsRequest struct {
	Points  int64   `json:"points"`
	Amount  int64   `json:"amount"`
	OrderID *string `json:"order_id"`
	Reason  string  `json:"reason"`
	// EntryID, set by a caller that must not move points twice for one
	// cause (an automation's action: one per execution cause and action),
	// is the ledger entry's id: when the ledger has it already as this
	// request's entry (its account, type and points, written at this
	// node), that entry is the answer and nothing is written; any other
	// entry under that id is EConflict. Not part of the API.
	EntryID string `json:"-"`
}

// LoyaltyService runs programs, accounts and the points ledger. Redeeming
// more than the balance is EConflict. Errors also: ENotFound, EInvalid.
type LoyaltyService interface {
	FindPrograms(ctx context.Context, p Page) (List[LoyaltyProgram], error)
	CreateProgram(ctx context.Context, in *LoyaltyProgramCreate) (*LoyaltyProgram, error)
	Enrol(ctx context.Context, in *EnrolRequest) (*LoyaltyAccount, error)
	FindAccountByID(ctx context.Context, id string) (*LoyaltyAccount, error)
	FindAccountByCustomer(ctx context.Context, customerID string) (*LoyaltyAccount, error)
	Earn(ctx context.Context, accountID string, in *PointsRequest) (*PointsTransaction, error)
	Redeem(ctx context.Context, accountID string, in *PointsRequest) (*PointsTransaction, error)
	FindTransactions(ctx context.Context, accountID string, p Page) (List[PointsTransaction], error)
}
