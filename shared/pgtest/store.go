package pgtest

import (
	"os"
	"sync"
	"testing"
)

// StoreEnv names the environment variable that picks the hub's store in
// the black-box suites: "postgres" runs each hub they start on a fresh
// database of one throwaway PostgreSQL per package (docs/postgres.md);
// anything else, the SQLite file as always.
const StoreEnv = "KASSA_TEST_STORE"

// OnPostgres reports whether this run puts the suites' hubs on PostgreSQL.
func OnPostgres() bool { return os.Getenv(StoreEnv) == "postgres" }

// shared is the package's one server, started by the first test that
// asks for a database and stopped by Main when the package's tests end.
var shared struct {
	once sync.Once
	s    *Server
	err  error
}

// HubStore is the store a black-box test gives the hub it starts: "" (the
// SQLite file in the data folder) unless KASSA_TEST_STORE=postgres, then
// the DSN of a new database, the test's own, on the package's one
// throwaway PostgreSQL. A package that calls it runs its tests through
// Main, which stops that server.
func HubStore(tb testing.TB) string {
	tb.Helper()
	if !OnPostgres() {
		return ""
	}
	return Shared(tb).Database(tb)
}

// Shared is the package's one throwaway PostgreSQL, started on first use;
// a test is skipped where no binaries exist, as with Start.
func Shared(tb testing.TB) *Server {
	tb.Helper()
	shared.once.Do(func() { shared.s, shared.err = start() })
	if shared.err != nil {
		if _, missing := Binaries(); missing != nil {
			tb.Skip("pgtest: " + missing.Error())
		}
		tb.Fatalf("pgtest: %v", shared.err)
	}
	return shared.s
}

// SkipOnPostgres skips tb, with why, when the run puts hubs on
// PostgreSQL: for a test that is SQLite's by nature (it opens the store's
// file, or tests SQLite itself).
func SkipOnPostgres(tb testing.TB, why string) {
	tb.Helper()
	if OnPostgres() {
		tb.Skip("SQLite only: " + why)
	}
}

// Main runs a package's tests (call it from TestMain) and then stops the
// package's shared server, if one was started, and removes its folder.
func Main(m *testing.M) int {
	code := m.Run()
	if shared.s != nil {
		shared.s.Stop()
		os.RemoveAll(shared.s.Dir)
	}
	return code
}

// HubArgs are the arguments that put a hub binary's main (hubnode.Run)
// on HubStore: none on SQLite, --store and a fresh database's DSN with
// KASSA_TEST_STORE=postgres.
func HubArgs(tb testing.TB) []string {
	tb.Helper()
	if dsn := HubStore(tb); dsn != "" {
		return []string{"--store", dsn}
	}
	return nil
}
