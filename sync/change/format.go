package change

import "fmt"

// Format is the version of the change-record format this build writes and
// reads: which entities a record may name and which fields each carries
// (the replicated schema, shared/sqlite/format.go). Edges send it with
// every push, pull and digest request; the hub serves each edge at the
// edge's format, so a newer hub keeps an older edge in sync: it leaves out
// the entities and fields that edge's store does not have, and compares
// digests over what both hold.
//
// Bump it (and map it to its migration in shared/sqlite/format.go) with any
// migration that changes a replicated table; a test there fails otherwise.
//
//	1  v0.5.0 and v0.6.0 (migration 0012); v0.5.0 sends no format.
//	2  migration 0019: campaign redemptions are derived at every node, no
//	   longer replicated; a format-1 edge's redemption records are
//	   accepted and dropped, and it is verified without them.
//	3  migration 0021: gift cards and their transactions replicate; an edge
//	   of format 1 or 2 is served without them.
//	4  migrations 0030 and 0031: registers, drawer sessions, drawer entries
//	   and Z reports replicate, locations carry day_cutoff_hour; receipts
//	   replicate (append-only, numbered by the store); an edge of format 1-3
//	   is served without them.
//	5  migration 0035: users carry location_ids and pin_hash, and an edge
//	   writes the cashiers of its location (docs/staff.md); migration
//	   0036: products carry cost (docs/reports.md); migration 0037: lay-bys
//	   and their payments replicate (docs/laybys.md); migration 0041:
//	   refunds carry approved_by (docs/staff.md); migration 0042: products
//	   and categories carry tax_category_id, order lines tax_rate_bps
//	   (docs/tax.md); migration 0043: points entries carry payment_id
//	   (docs/loyalty.md); migration 0045: store credit and its entries
//	   replicate (docs/returns.md); migration 0048: tips replicate, orders
//	   carry approved_by (docs/tips.md); an edge of format 1-4 is served
//	   without them.
const Format = 5

// Formats of the wire: what an edge's request names, 0 being an edge that
// names none (v0.5.0).
const formatUnnamed = 0

// Negotiate returns the format to serve an edge that names f: format 1 for
// an edge that names none, f itself if this build knows it, an error for
// an edge newer than this hub (upgrade the hub first: README, Upgrades).
func Negotiate(f int) (int, error) {
	switch {
	case f == formatUnnamed:
		return 1, nil
	case f < 0 || f > Format:
		return 0, fmt.Errorf("change: the edge speaks change-record format %d, this hub %d at most: upgrade the hub first", f, Format)
	}
	return f, nil
}
