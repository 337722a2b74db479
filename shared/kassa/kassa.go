// Package kassa is the domain of the Kassa point-of-sale platform: its types,
// the interfaces of its services, its error kinds and its rules.
//
// It imports only the standard library. The SQLite store (package sqlite)
// implements the services, the HTTP API (package httpapi) serves them, and
// the edge and hub binaries wire the two together.
package kassa

import "time"

// Now is the clock of the domain; services take their own injected clock and
// tests control it. This default only exists for code with no clock at hand.
var Now = func() time.Time { return time.Now().UTC() }

// Node roles.
const (
	NodeEdge = "edge"
	NodeHub  = "hub"
)
