// Package kassa is the domain of the Kassa point-of-sale platform: its types,
// the interfaces of its services, its error kinds and its rules.
//
// It imports only the standard library, and its rules are pure functions
// tested without a database: validation (the Validate methods and
// InvalidField), pricing (pricing.go), the order and payment decisions
// (order_rules.go, payment_rules.go), the per-role limits (limits.go) and
// the order-status lattice (OrderStatusRank). The SQLite store (package
// sqlite) implements the services, keeping only SQL and the unit of work;
// the HTTP API (package httpapi) serves them and words their errors as
// problems; the edge and hub binaries wire the two together. Services
// take an injected clock; the domain has none of its own.
package kassa

// Node roles.
const (
	NodeEdge = "edge"
	NodeHub  = "hub"
)
