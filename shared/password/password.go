// Package password hashes staff passwords with Argon2id, a memory-hard KDF,
// in the PHC string format, through github.com/alexedwards/argon2id.
//
// Every hash and check runs in one of a few slots (a semaphore sized from
// GOMAXPROCS), because each one holds Params.Memory for its duration:
// unbounded, a login storm takes a node's memory with it
// (docs/performance.md). A caller that cannot get a slot within Wait gets ErrBusy (the API answers
// 429 with Retry-After), so the memory hashing can use is slots × Memory.
package password

import (
	"context"
	"errors"
	"math"
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"sync"
	"time"

	"github.com/alexedwards/argon2id"
)

// Params are the Argon2id costs of new hashes: 19 MiB, 2 passes, 1 lane,
// the second of OWASP's recommended settings. It costs about the CPU time
// of the first (64 MiB, 1 pass) at under a third of its memory, which suits
// a small store machine. Hashes made with other parameters still verify
// (the parameters are in the PHC string); Verify reports them as stale.
var Params = &argon2id.Params{Memory: 19 * 1024, Iterations: 2, Parallelism: 1, SaltLength: 16, KeyLength: 32}

// Wait is how long Hash, Check and Verify wait for a free slot before
// giving up with ErrBusy.
var Wait = 2 * time.Second

// ErrBusy is returned when every hashing slot stayed busy for Wait.
var ErrBusy = errors.New("password: every hashing slot is busy")

// Slots is the number of hashes that may run at once, fixed at first use:
// half of GOMAXPROCS, and no more than a third of the Go memory limit (if
// one is set) can hold; at least one.
func Slots() int { return cap(slots()) }

var slots = sync.OnceValue(func() chan struct{} {
	n := runtime.GOMAXPROCS(0) / 2
	if limit := debug.SetMemoryLimit(-1); limit < math.MaxInt64 {
		n = min(n, int(limit/3/(int64(Params.Memory)<<10)))
	}
	return make(chan struct{}, max(1, n))
})

// run runs fn in a slot, waiting at most Wait (or until ctx ends) for one.
func run(ctx context.Context, fn func()) error {
	s := slots()
	select {
	case s <- struct{}{}:
	default:
		t := time.NewTimer(Wait)
		defer t.Stop()
		select {
		case s <- struct{}{}:
		case <-t.C:
			return ErrBusy
		case <-ctx.Done():
			return ErrBusy
		}
	}
	defer func() { <-s }()
	fn()
	// Collect the hash's memory (Params.Memory, allocated afresh by every
	// Argon2 call) before the slot is free, so that the next hash reuses it
	// instead of growing the heap: with the GC target of a node (400) a
	// login storm otherwise left several garbage blocks resident at once.
	// Only while the live heap (which may include a block of a hash that
	// was running when it was measured) is at most eight blocks, so that
	// the collection costs at most about a hash (an edge's, at ~20 MiB, a
	// few per cent); beside a larger heap the memory limit and the GC
	// target bound the blocks well enough.
	if liveHeap() <= 8*uint64(Params.Memory)<<10 {
		runtime.GC()
	}
	return nil
}

var liveSample = []metrics.Sample{{Name: "/gc/heap/live:bytes"}}
var liveMu sync.Mutex

// liveHeap is the heap marked live by the last collection.
func liveHeap() uint64 {
	liveMu.Lock()
	defer liveMu.Unlock()
	metrics.Read(liveSample)
	if liveSample[0].Value.Kind() != metrics.KindUint64 {
		return 0
	}
	return liveSample[0].Value.Uint64()
}

// Hash returns the encoded hash of pw with Params. Errors: ErrBusy.
func Hash(pw string) (string, error) {
	var h string
	var err error
	if berr := run(context.Background(), func() { h, err = argon2id.CreateHash(pw, Params) }); berr != nil {
		return "", berr
	}
	return h, err
}

// Verify reports whether pw matches the encoded hash, comparing in constant
// time, and whether the hash was made with parameters other than Params
// (stale: the caller should store a new hash). Errors: ErrBusy; a hash
// that cannot be decoded is a mismatch, not an error.
func Verify(ctx context.Context, pw, hash string) (ok, stale bool, err error) {
	return verify(ctx, pw, func() string { return hash })
}

// verify is Verify of the hash that hash returns, called in the slot.
func verify(ctx context.Context, pw string, hash func() string) (ok, stale bool, err error) {
	var p *argon2id.Params
	var cerr error
	if err := run(ctx, func() { ok, p, cerr = argon2id.CheckHash(pw, hash()) }); err != nil {
		return false, false, err
	}
	if cerr != nil || !ok {
		return false, false, nil
	}
	return true, !sameParams(p, Params), nil
}

func sameParams(a, b *argon2id.Params) bool {
	return a.Memory == b.Memory && a.Iterations == b.Iterations && a.Parallelism == b.Parallelism &&
		a.SaltLength == b.SaltLength && a.KeyLength == b.KeyLength
}

// Bounded reports whether hash is an encoded hash whose check costs no
// more than one made with Params: a hash from elsewhere (a store's push)
// is taken only then, so that no stored hash makes a check cost more than
// this node's own.
func Bounded(hash string) bool {
	p, _, _, err := argon2id.DecodeHash(hash)
	return err == nil && p.Memory <= Params.Memory && p.Iterations <= Params.Iterations &&
		p.Parallelism <= Params.Parallelism && p.KeyLength <= Params.KeyLength
}

// Check reports whether pw matches the encoded hash (false also when no
// slot was free).
func Check(pw, hash string) bool {
	ok, _, _ := Verify(context.Background(), pw, hash)
	return ok
}

// dummyHash is checked against when an account does not exist, so that the
// response time does not tell which e-mail addresses have accounts. It is
// made with Params, so it costs what a current hash costs.
var dummyHash = sync.OnceValue(func() string {
	h, _ := argon2id.CreateHash("kassa-no-such-user", Params)
	runtime.GC() // as run does: the check that follows reuses the memory
	return h
})

// CheckMissing spends the time (and the slot) of one Verify and reports no
// match. Errors: ErrBusy, as Verify would. The dummy hash is made in the
// slot too (once), so that no hashing runs outside the slots.
func CheckMissing(ctx context.Context, pw string) error {
	_, _, err := verify(ctx, pw, dummyHash)
	return err
}
