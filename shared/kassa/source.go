package kassa

import "embed"

// Source is the package's Go source. The OpenAPI document takes its
// descriptions of types and fields from their doc comments, so a field's
// comment is its documentation for clients too.
//
//go:embed *.go
var Source embed.FS
