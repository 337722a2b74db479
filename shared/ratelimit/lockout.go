package ratelimit

import (
	"sync"
	"time"
)

// Lockout counts consecutive failures per key (an account and a client
// address) and locks a key for delay(failures) after each failure. Keys
// with no failure for Forget are dropped, and at most MaxKeys are kept (a
// new key beyond that is not tracked until a sweep frees room), so memory
// stays bounded whatever the callers send. It is safe for concurrent use.
type Lockout struct {
	delay func(failures int) time.Duration
	now   func() time.Time

	mu    sync.Mutex
	keys  map[string]*lockState
	sweep time.Time
}

// Forget is how long a key's failures are remembered without a new one.
const Forget = time.Hour

// MaxKeys bounds the keys a Lockout tracks.
const MaxKeys = 50_000

type lockState struct {
	failures int
	last     time.Time // of the last failure
	until    time.Time
}

// NewLockout returns a lockout using delay (kassa.LockoutDelay).
func NewLockout(delay func(failures int) time.Duration, now func() time.Time) *Lockout {
	if now == nil {
		now = time.Now
	}
	return &Lockout{delay: delay, now: now, keys: map[string]*lockState{}}
}

// Locked returns how long key stays locked (0: not locked).
func (l *Lockout) Locked(key string) time.Duration {
	l.mu.Lock()
	defer l.mu.Unlock()
	if s := l.keys[key]; s != nil {
		if d := s.until.Sub(l.now()); d > 0 {
			return d
		}
	}
	return 0
}

// Fail records a failure of key and returns how long key is now locked.
func (l *Lockout) Fail(key string) time.Duration {
	l.mu.Lock()
	defer l.mu.Unlock()
	now := l.now()
	l.maybeSweep(now)
	s := l.keys[key]
	if s == nil {
		if len(l.keys) >= MaxKeys {
			return 0
		}
		s = &lockState{}
		l.keys[key] = s
	}
	s.failures++
	s.last = now
	d := l.delay(s.failures)
	s.until = now.Add(d)
	return d
}

// Reset forgets key's failures (after a success).
func (l *Lockout) Reset(key string) {
	l.mu.Lock()
	delete(l.keys, key)
	l.mu.Unlock()
}

// maybeSweep drops keys whose last failure is older than Forget and that
// are not locked, once a minute, or once a second while the map is full.
func (l *Lockout) maybeSweep(now time.Time) {
	since := now.Sub(l.sweep)
	if since < time.Second || since < time.Minute && len(l.keys) < MaxKeys {
		return
	}
	l.sweep = now
	for k, s := range l.keys {
		if now.Sub(s.last) > Forget && !now.Before(s.until) {
			delete(l.keys, k)
		}
	}
}
