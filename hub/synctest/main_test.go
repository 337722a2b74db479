package synctest

import (
	"os"
	"testing"

	"kassa.dev/shared/pgtest"
)

// TestMain stops the package's one throwaway PostgreSQL (pgtest.Main)
// that MustStartPair's hubs share in the run on PostgreSQL, and removes
// the binaries buildBinary built.
func TestMain(m *testing.M) {
	code := pgtest.Main(m)
	if binaries.dir != "" {
		os.RemoveAll(binaries.dir)
	}
	os.Exit(code)
}
