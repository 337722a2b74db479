package pg

// RoundTrips is how many requests the driver's connections have sent and
// waited for.
func RoundTrips() int64 { return roundTrips.Load() }
