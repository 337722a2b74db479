package kassa

import (
	"cmp"
	"fmt"
	"slices"
	"strings"
)

// Loyalty bounds. They keep every product of points and money within int64.
const (
	MaxPointsPerUnit   = 1_000_000     // points per 100 minor units
	MaxRedemptionValue = 1_000_000     // minor units per point
	MaxPoints          = 1_000_000_000 // points of one transaction
	MaxTierPoints      = 1_000_000_000_000
	MaxTiers           = 20
)

// Validate checks a new program: a name, rates from 0, and tiers with
// distinct names (case-insensitive) and distinct thresholds from 0.
func (in *LoyaltyProgramCreate) Validate() error {
	var v Validation
	v.Check(in.Name != "", "name", "is required")
	v.Check(ValidText(in.Name, 200), "name", "must be at most 200 characters of text")
	v.Check(in.PointsPerUnit >= 0 && in.PointsPerUnit <= MaxPointsPerUnit, "points_per_unit", "must be from 0 to 1000000 (points per 100 minor units)")
	v.Check(in.RedemptionValue >= 0 && in.RedemptionValue <= MaxRedemptionValue, "redemption_value", "must be from 0 to 1000000 minor units per point")
	v.Check(len(in.Tiers) <= MaxTiers, "tiers", "must have at most 20 tiers")
	names := map[string]bool{}
	mins := map[int64]bool{}
	for _, t := range in.Tiers {
		key := strings.ToLower(t.Name)
		switch {
		case t.Name == "" || !ValidText(t.Name, 100) || strings.ContainsAny(t.Name, "\n\t"):
			v.Add("tiers.name", "must be 1-100 characters of text")
		case names[key]:
			v.Add("tiers.name", "must be unique: %q is given twice", t.Name)
		}
		switch {
		case t.MinLifetimePoints < 0 || t.MinLifetimePoints > MaxTierPoints:
			v.Add("tiers.min_lifetime_points", "must be from 0 to 10^12")
		case mins[t.MinLifetimePoints]:
			v.Add("tiers.min_lifetime_points", "must be unique: %d is given twice", t.MinLifetimePoints)
		}
		names[key], mins[t.MinLifetimePoints] = true, true
	}
	return v.Err()
}

// SortTiers orders tiers by their threshold, lowest first, as they are stored.
func SortTiers(tiers []LoyaltyTier) {
	slices.SortFunc(tiers, func(a, b LoyaltyTier) int { return cmp.Compare(a.MinLifetimePoints, b.MinLifetimePoints) })
}

// PointsFor converts an amount spent (minor units) into points at the
// program's rate, rounded down; 0 for an amount of 0 or less.
func (p *LoyaltyProgram) PointsFor(amount int64) int64 {
	if amount <= 0 || p.PointsPerUnit <= 0 {
		return 0
	}
	return amount * p.PointsPerUnit / 100
}

// Validate checks an enrolment: a customer id and, if given, a program id.
func (in *EnrolRequest) Validate() error {
	var v Validation
	if in.CustomerID == "" {
		v.Add("customer_id", "is required")
	} else {
		v.Check(ValidID(in.CustomerID), "customer_id", "must be an id")
	}
	if in.ProgramID != nil {
		v.Check(ValidID(*in.ProgramID), "program_id", "must be an id (or leave it out for the org's only active program)")
	}
	return v.Err()
}

// ValidateEarn checks an earn request: positive points, or a positive
// amount spent that the program converts, not both.
func (in *PointsRequest) ValidateEarn() error {
	var v Validation
	switch {
	case in.Points != 0 && in.Amount != 0:
		v.Add("amount", "give points or amount, not both")
	case in.Points == 0 && in.Amount == 0:
		v.Add("points", "is required (or amount, in minor units, for the program to convert)")
	case in.Amount != 0:
		v.Check(in.Amount > 0 && in.Amount <= MaxMoney, "amount", "must be from 1 to 10^12 minor units")
	default:
		v.Check(in.Points > 0 && in.Points <= MaxPoints, "points", "must be from 1 to 10^9")
	}
	in.checkCommon(&v)
	return v.Err()
}

// ValidateRedeem checks a redeem request: positive points only.
func (in *PointsRequest) ValidateRedeem() error {
	var v Validation
	v.Check(in.Amount == 0, "amount", "applies to earn only; redeem takes points")
	if in.Points == 0 {
		v.Add("points", "is required")
	} else {
		v.Check(in.Points > 0 && in.Points <= MaxPoints, "points", "must be from 1 to 10^9")
	}
	in.checkCommon(&v)
	return v.Err()
}

func (in *PointsRequest) checkCommon(v *Validation) {
	if in.OrderID != nil {
		v.Check(ValidID(*in.OrderID), "order_id", "must be an id")
	}
	v.Check(ValidText(in.Reason, 200), "reason", "must be at most 200 characters of text")
}

// PointsToPay is how many points pay amount (minor units) at the
// program's redemption value. No rounding: the amount must be a whole
// number of points, a multiple of the redemption value (the till offers
// the largest such amount). Errors: EInvalid naming amount (or method,
// for a program whose points are worth nothing).
func (p *LoyaltyProgram) PointsToPay(amount int64) (int64, error) {
	if p.RedemptionValue <= 0 {
		return 0, InvalidField("method", "the customer's loyalty program gives points no redemption value")
	}
	if amount%p.RedemptionValue != 0 {
		return 0, InvalidField("amount", fmt.Sprintf("must be a whole number of points: a multiple of %d minor units", p.RedemptionValue))
	}
	return amount / p.RedemptionValue, nil
}

// PointsGivenBack is how many of the redeemed points of a loyalty_points
// payment of payAmount go back to the account when returned of it (its
// refunds and voids so far, this one included) reaches returned: the
// redeemed points times the share returned, rounded down, so that the
// refunds of a payment never give back more than it took and its last
// one gives back the rest.
func PointsGivenBack(redeemed, payAmount, returned int64) int64 {
	if payAmount <= 0 || returned <= 0 {
		return 0
	}
	return redeemed * min(returned, payAmount) / payAmount
}
