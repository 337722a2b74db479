package kassa

// Version is the release of this build. The linker sets it:
//
//	go build -ldflags "-X kassa.dev/shared/kassa.Version=v0.6.0" ./edge
//
// The Makefile and the container images pass `git describe --tags`; a
// plain `go build` or `go test` says "dev". An edge reports it to its hub,
// which shows it on the ops monitor (see docs/ops.md).
var Version = "dev"
