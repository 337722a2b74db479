// Package clienttest keeps the OpenAPI document usable by partners: it
// holds the hub's and the edge's documents as served (openapi/*.json, the
// input of make openapi-lint), a Go client generated from the hub's with
// oapi-codegen (kassaclient), and tests that fail when either is stale and
// that drive a real hub through the generated client.
package clienttest
