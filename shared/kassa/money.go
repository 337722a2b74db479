package kassa

import (
	"fmt"
	"math"
	"math/bits"
)

// Money limits. Every amount a client sends or the catalog holds is bounded,
// so that pricing and money arithmetic can never overflow int64 and a
// request beyond a bound is refused with 422 naming the field. All amounts
// are integer minor units of the org's currency.
const (
	// MaxMoney bounds any single amount: a price, a modifier adjustment (±),
	// an amount discount, a payment, a refund, a setting's money limit.
	MaxMoney = 1_000_000_000_000 // 10^12 minor units: 10 billion of a 2-decimal currency

	// MaxUnitPrice bounds a line's unit price with its modifiers.
	MaxUnitPrice = MaxMoney
	// MaxLineGross bounds a line's gross: unit price × quantity.
	MaxLineGross = MaxMoney
	// MaxOrderTotal bounds an order's subtotal and its total (with tax).
	MaxOrderTotal = MaxMoney

	// MaxLineQuantity bounds the quantity of one order line.
	MaxLineQuantity = 10_000
	// MaxOrderLines bounds the lines of one order.
	MaxOrderLines = 100
	// MaxLineModifiers bounds the modifier options a client picks on one line.
	MaxLineModifiers = 50

	// MaxPercentBps is 100 % in basis points: the largest percent discount.
	MaxPercentBps = 10_000
	// MaxTaxRateBps bounds the org's tax rate (50 %).
	MaxTaxRateBps = 5_000
)

// mulDivRound returns a × b / c rounded half up, computed with a 128-bit
// intermediate so that a × b never overflows; ok is false when an argument
// is out of range (a or b negative, c not positive) or the quotient does not
// fit an int64.
func mulDivRound(a, b, c int64) (q int64, ok bool) {
	if a < 0 || b < 0 || c <= 0 {
		return 0, false
	}
	hi, lo := bits.Mul64(uint64(a), uint64(b))
	if hi >= uint64(c) { // the quotient would not fit 64 bits (and Div64 would panic)
		return 0, false
	}
	quo, rem := bits.Div64(hi, lo, uint64(c))
	if rem >= uint64(c)-rem { // 2 × rem ≥ c, without overflowing
		quo++
	}
	if quo > math.MaxInt64 {
		return 0, false
	}
	return int64(quo), true
}

// mulDiv returns a × b / c and the remainder, for a, b ≥ 0 and c > 0, with a
// 128-bit intermediate; ok is false when the arguments are out of range or
// the quotient does not fit an int64.
func mulDiv(a, b, c int64) (q, r int64, ok bool) {
	if a < 0 || b < 0 || c <= 0 {
		return 0, 0, false
	}
	hi, lo := bits.Mul64(uint64(a), uint64(b))
	if hi >= uint64(c) {
		return 0, 0, false
	}
	quo, rem := bits.Div64(hi, lo, uint64(c))
	if quo > math.MaxInt64 {
		return 0, 0, false
	}
	return int64(quo), int64(rem), true
}

// mulLE reports whether a × b ≤ c × d for non-negative arguments, exactly.
func mulLE(a, b, c, d int64) bool {
	h1, l1 := bits.Mul64(uint64(a), uint64(b))
	h2, l2 := bits.Mul64(uint64(c), uint64(d))
	return h1 < h2 || (h1 == h2 && l1 <= l2)
}

// addSat returns a + b, saturated at the int64 bounds instead of wrapping.
func addSat(a, b int64) int64 {
	s := a + b
	switch {
	case a > 0 && b > 0 && s < 0:
		return math.MaxInt64
	case a < 0 && b < 0 && s >= 0:
		return math.MinInt64
	}
	return s
}

// UnitPrice returns a line's unit price: the catalog or price-list price
// plus the chosen modifiers' adjustments, never below zero. The sum
// saturates instead of wrapping, so a unit above MaxUnitPrice stays above it
// and Price refuses the line.
func UnitPrice(price int64, adjustments ...int64) int64 {
	u := price
	for _, a := range adjustments {
		u = addSat(u, a)
	}
	return max(0, u)
}

// checkDiscount records field errors for a manual discount: a percent is
// 0–10000 basis points, an amount 0–MaxMoney minor units.
func checkDiscount(v *Validation, field string, d *Discount) {
	if d == nil {
		return
	}
	switch d.Type {
	case "percent":
		v.Check(d.Value >= 0 && d.Value <= MaxPercentBps, field+".value", "a percent discount is 0-10000 basis points")
	case "amount":
		v.Check(d.Value >= 0 && d.Value <= MaxMoney, field+".value", "an amount discount is 0-10^12 minor units")
	default:
		v.Add(field+".type", "must be percent or amount")
	}
}

// percent formats basis points as a percentage with two decimals.
func percent(bps int64) string { return fmt.Sprintf("%d.%02d %%", bps/100, bps%100) }

// The money invariants of an order, across nodes: an order is never paid
// beyond its total, and never refunded beyond what was paid (up to its
// total). Each node keeps them with its own per-order lock; the hub keeps
// them across nodes by routing a store's money operations to the store
// (package forward). Sync checks them after every merge and records a
// conflict for each one a merge breaks.

// The conflict kinds of the money invariants.
const (
	ConflictOverpaid     = "overpaid"     // captured payments above the order's total
	ConflictOverrefunded = "overrefunded" // refunds above what was paid (capped at the total)
)

// MoneyBreaches returns the money invariants an order's totals break, as
// conflict kinds: overpaid when paid exceeds total, overrefunded when
// refunded exceeds min(total, paid), the most a refund may return.
func MoneyBreaches(total, paid, refunded int64) []string {
	var out []string
	if paid > total {
		out = append(out, ConflictOverpaid)
	}
	if refunded > min(total, paid) {
		out = append(out, ConflictOverrefunded)
	}
	return out
}
