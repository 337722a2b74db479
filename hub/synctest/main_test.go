package synctest

import (
	"os"
	"testing"

	"kassa.dev/shared/pgtest"
)

// TestMain stops the package's one throwaway PostgreSQL (pgtest.Main)
// that MustStartPair's hubs share in the run on PostgreSQL.
func TestMain(m *testing.M) { os.Exit(pgtest.Main(m)) }
