package kassa

// Per-role money limits: who may give how much off an order, and refund how
// much of one. Both are pure rules over the org's settings; the order
// service calls them before it writes anything, and the hub can replay
// them on a change from an edge.

// DiscountLimits are the largest manual discount each kind of actor may
// give on one order: the order's line and order discounts together, in
// basis points of its gross (subtotal). 10000 lets an order go free; 0
// allows no manual discount. Owners are never limited; kitchen staff take
// no orders (0).
type DiscountLimits struct {
	Manager int `json:"manager"` // The largest manual discount a manager may give, in basis points of the line or order.
	Cashier int `json:"cashier"` // The largest manual discount a cashier may give, in basis points of the line or order.
	Partner int `json:"partner"` // OAuth apps the owner registered, acting for the org
}

// DefaultDiscountLimits: managers and partner apps unlimited, cashiers no
// manual discount at all.
func DefaultDiscountLimits() DiscountLimits {
	return DiscountLimits{Manager: MaxPercentBps, Cashier: 0, Partner: MaxPercentBps}
}

// DiscountLimitsUpdate is the discount_limits part of PATCH /settings: each
// role's limit present is replaced.
type DiscountLimitsUpdate struct {
	Manager Opt[int] `json:"manager"`
	Cashier Opt[int] `json:"cashier"`
	Partner Opt[int] `json:"partner"`
}

// check records field errors: each limit present is 0–10000 basis points.
func (u *DiscountLimitsUpdate) check(v *Validation) {
	for _, f := range []struct {
		name string
		o    Opt[int]
	}{{"manager", u.Manager}, {"cashier", u.Cashier}, {"partner", u.Partner}} {
		if f.o.Set {
			v.Check(!f.o.Null && f.o.Value >= 0 && f.o.Value <= MaxPercentBps, "discount_limits."+f.name, "must be 0-10000 basis points")
		}
	}
}

// apply replaces the limits present in u.
func (u *DiscountLimitsUpdate) apply(l *DiscountLimits) {
	set(&l.Manager, u.Manager)
	set(&l.Cashier, u.Cashier)
	set(&l.Partner, u.Partner)
}

// limitFor returns the actor's limit in basis points and the setting that
// holds it ("" for owners, who have none).
func (l DiscountLimits) limitFor(a *Actor) (bps int64, setting string) {
	switch {
	case a.ClientID != "":
		return int64(l.Partner), "discount_limits.partner"
	case a.Role == RoleOwner:
		return MaxPercentBps, ""
	case a.Role == RoleManager:
		return int64(l.Manager), "discount_limits.manager"
	case a.Role == RoleCashier:
		return int64(l.Cashier), "discount_limits.cashier"
	}
	return 0, "discount_limits"
}

// CheckDiscount decides whether actor a may give discount (minor units, the
// order's manual discounts together) off an order whose gross is gross,
// under the org's limits: discount ≤ gross × limit / 10000, compared
// exactly. Errors: EForbidden naming the limit.
func CheckDiscount(a *Actor, limits DiscountLimits, gross, discount int64) error {
	if discount <= 0 {
		return nil
	}
	bps, setting := limits.limitFor(a)
	if bps >= MaxPercentBps || mulLE(discount, MaxPercentBps, max(gross, 0), max(bps, 0)) {
		return nil
	}
	given := int64(MaxPercentBps) // a discount on a zero gross counts as 100 %
	if gross > 0 {
		given, _ = mulDivRound(discount, MaxPercentBps, gross)
	}
	who := string(a.Role)
	if a.ClientID != "" || who == "" {
		who = "partner app"
	}
	if bps == 0 {
		return Errorf(EForbidden, "a %s may give no manual discount (%s is 0); this order's discounts are %s of its gross: a manager or owner must give it",
			who, setting, percent(given))
	}
	return Errorf(EForbidden, "a %s may give manual discounts of at most %s of an order's gross (%s is %d basis points); this order's discounts are %s",
		who, percent(bps), setting, bps, percent(given))
}

// CheckRefund decides whether actor a may refund amount more on an order
// of which refunded was already refunded (by anyone). The org's refund
// limit bounds what a cashier may refund on one order in total, so
// splitting a refund into smaller ones does not get around it: refunded +
// amount ≤ limit. Owners, managers and partner apps are not limited.
// Errors: EForbidden naming the limit.
func CheckRefund(a *Actor, limit, refunded, amount int64) error {
	if a.IsStaff() || a.ClientID != "" {
		return nil
	}
	if addSat(max(refunded, 0), max(amount, 0)) <= limit {
		return nil
	}
	return Errorf(EForbidden, "refunds on one order above refund_limit (%d minor units in total) need a manager or owner; "+
		"%d were refunded on this order before and this refund is %d", limit, refunded, amount)
}
