package kassa

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
