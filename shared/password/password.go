// Package password hashes staff passwords with Argon2id, a memory-hard KDF,
// in the PHC string format, through github.com/alexedwards/argon2id.
package password

import (
	"sync"

	"github.com/alexedwards/argon2id"
)

// Params are the Argon2id costs: 64 MiB, 1 pass, 2 lanes — OWASP's
// recommended minimum, about 50 ms on one core of a small server.
var Params = &argon2id.Params{Memory: 64 * 1024, Iterations: 1, Parallelism: 2, SaltLength: 16, KeyLength: 32}

// Hash returns the encoded hash of pw.
func Hash(pw string) (string, error) { return argon2id.CreateHash(pw, Params) }

// Check reports whether pw matches the encoded hash; it compares in constant time.
func Check(pw, hash string) bool {
	ok, err := argon2id.ComparePasswordAndHash(pw, hash)
	return err == nil && ok
}

// dummyHash is checked against when an account does not exist, so that the
// response time does not tell which e-mail addresses have accounts.
var dummyHash = sync.OnceValue(func() string {
	h, _ := Hash("kassa-no-such-user")
	return h
})

// CheckMissing spends the time of one Check and returns false.
func CheckMissing(pw string) bool {
	Check(pw, dummyHash())
	return false
}
