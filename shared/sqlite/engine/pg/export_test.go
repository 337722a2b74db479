package pg

// RoundTrips is how many requests the driver's connections have sent and
// waited for.
func RoundTrips() int64 { return roundTrips.Load() }

// PipedSends is how many batches went through a connection's own
// pipeline (piped.go).
func PipedSends() int64 { return pipedSends.Load() }

// SetMaxPrepared sets how many statements a connection keeps prepared
// for its pipeline, until the test ends.
func SetMaxPrepared(t interface{ Cleanup(func()) }, n int) {
	old := maxPrepared
	maxPrepared = n
	t.Cleanup(func() { maxPrepared = old })
}
