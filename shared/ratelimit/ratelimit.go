// Package ratelimit is a keyed token bucket: one bucket per key (an org, an
// account), refilled at a steady rate up to a burst. Idle full buckets are
// forgotten, so memory stays bounded by the number of active keys.
package ratelimit

import (
	"math"
	"sync"
	"time"
)

// Limiter holds the buckets. It is safe for concurrent use.
type Limiter struct {
	rate  float64 // tokens per second
	burst float64
	now   func() time.Time

	mu      sync.Mutex
	buckets map[string]*bucket
	sweep   time.Time
}

type bucket struct {
	tokens float64
	at     time.Time
}

// New returns a limiter refilling perMinute tokens a minute up to burst.
func New(perMinute, burst int, now func() time.Time) *Limiter {
	if now == nil {
		now = time.Now
	}
	return &Limiter{rate: float64(perMinute) / 60, burst: float64(burst), now: now, buckets: map[string]*bucket{}}
}

// Result is the outcome of one Take.
type Result struct {
	Allowed    bool
	Limit      int           // tokens per minute
	Remaining  int           // whole tokens left after this request
	RetryAfter time.Duration // when not allowed: until one token is back
}

// Take spends one token of key's bucket if there is one.
func (l *Limiter) Take(key string) Result {
	l.mu.Lock()
	defer l.mu.Unlock()
	now := l.now()
	b := l.buckets[key]
	if b == nil {
		b = &bucket{tokens: l.burst, at: now}
		l.buckets[key] = b
	}
	b.tokens = math.Min(l.burst, b.tokens+now.Sub(b.at).Seconds()*l.rate)
	b.at = now
	res := Result{Limit: int(math.Round(l.rate * 60))}
	if b.tokens >= 1 {
		b.tokens--
		res.Allowed = true
	} else if l.rate > 0 {
		res.RetryAfter = time.Duration((1 - b.tokens) / l.rate * float64(time.Second))
	} else {
		res.RetryAfter = time.Hour
	}
	res.Remaining = int(b.tokens)
	l.maybeSweep(now)
	return res
}

// maybeSweep drops buckets that have refilled completely, once a minute.
func (l *Limiter) maybeSweep(now time.Time) {
	if now.Sub(l.sweep) < time.Minute {
		return
	}
	l.sweep = now
	for k, b := range l.buckets {
		if b.tokens+now.Sub(b.at).Seconds()*l.rate >= l.burst {
			delete(l.buckets, k)
		}
	}
}
