package kassa

import "time"

// Login lockout, by account and client address (not by account alone, so
// that nobody who knows an e-mail address can lock its owner out): the
// first LockoutFreeFailures wrong passwords from one address for one
// account cost nothing more; from then on every failure locks that pair for
// LockoutDelay, doubling each time up to LockoutMaxDelay. A successful
// login resets the count. The right password from another address works
// throughout.
const (
	LockoutFreeFailures = 5
	LockoutBaseDelay    = 15 * time.Second
	LockoutMaxDelay     = 15 * time.Minute
)

// LockoutDelay is how long an account is locked for one client address
// after its failures-th consecutive failed login from that address: 0
// before LockoutFreeFailures, then LockoutBaseDelay doubling per further
// failure, at most LockoutMaxDelay.
func LockoutDelay(failures int) time.Duration {
	if failures < LockoutFreeFailures {
		return 0
	}
	d := LockoutBaseDelay
	for range failures - LockoutFreeFailures {
		d *= 2
		if d >= LockoutMaxDelay {
			return LockoutMaxDelay
		}
	}
	return d
}
