package kassa

import "embed"

// Source is the package's Go source. The OpenAPI document takes its
// descriptions of types and fields from their doc comments, so a field's
// comment is its documentation for clients too. Its tests are left out
// (embed has no exclusion: the patterns match every name that does not
// end in _test.go and has a file today; TestTheEmbeddedSourceIsEveryNonTestFile,
// shared/httpapi, fails when a new file needs another pattern, e.g.
// *[^t]est.go for a request.go).
//
//go:embed *[^t].go *[^s]t.go *[^e]st.go
var Source embed.FS
