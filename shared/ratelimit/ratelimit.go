// Package ratelimit is a keyed token bucket: one bucket per key (an org, an
// account), refilled at a steady rate up to a burst. A key may have its own
// rate and burst (SetLimit), kept in memory so that Take never reads a
// store. Idle full buckets are forgotten, so memory stays bounded by the
// number of active keys (and of keys with their own limit).
package ratelimit

import (
	"math"
	"sync"
	"time"
)

// Limiter holds the buckets. It is safe for concurrent use.
type Limiter struct {
	def rate
	now func() time.Time

	mu      sync.Mutex
	own     map[string]rate // keys with their own limit
	buckets map[string]*bucket
	sweep   time.Time
	maxKeys int // 0: unbounded (SetMaxKeys)
}

// overflowKey is the one bucket every new key shares while a bounded
// limiter is full (SetMaxKeys).
const overflowKey = "\x00overflow"

// SetMaxKeys bounds the buckets held to n (0: no bound), for keys a
// client chooses (its address): while n buckets are in use and none has
// refilled, a new key shares one bucket with every other new key, so a
// flood of addresses is throttled together and memory stays bounded.
func (l *Limiter) SetMaxKeys(n int) {
	l.mu.Lock()
	l.maxKeys = n
	l.mu.Unlock()
}

// rate is a bucket's refill and size.
type rate struct {
	perSecond float64
	burst     float64
}

func newRate(perMinute, burst int) rate {
	return rate{perSecond: float64(perMinute) / 60, burst: float64(burst)}
}

type bucket struct {
	rate
	tokens float64
	at     time.Time
}

// refill adds the tokens earned since the bucket was last used.
func (b *bucket) refill(now time.Time) {
	b.tokens = math.Min(b.burst, b.tokens+now.Sub(b.at).Seconds()*b.perSecond)
	b.at = now
}

// New returns a limiter refilling perMinute tokens a minute up to burst.
func New(perMinute, burst int, now func() time.Time) *Limiter {
	if now == nil {
		now = time.Now
	}
	return &Limiter{def: newRate(perMinute, burst), now: now, own: map[string]rate{}, buckets: map[string]*bucket{}}
}

// SetLimit gives key its own rate and burst; perMinute 0 returns it to the
// limiter's. A bucket in use keeps its tokens, up to the new burst.
func (l *Limiter) SetLimit(key string, perMinute, burst int) {
	l.mu.Lock()
	defer l.mu.Unlock()
	r := l.def
	if perMinute > 0 {
		r = newRate(perMinute, burst)
		l.own[key] = r
	} else {
		delete(l.own, key)
	}
	if b := l.buckets[key]; b != nil {
		b.refill(l.now())
		b.rate = r
		b.tokens = math.Min(b.tokens, b.burst)
	}
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
	b := l.bucket(key, now)
	res := Result{Limit: int(math.Round(b.perSecond * 60))}
	if b.tokens >= 1 {
		b.tokens--
		res.Allowed = true
	} else if b.perSecond > 0 {
		res.RetryAfter = time.Duration((1 - b.tokens) / b.perSecond * float64(time.Second))
	} else {
		res.RetryAfter = time.Hour
	}
	res.Remaining = int(b.tokens)
	l.maybeSweep(now)
	return res
}

// Spend takes n more tokens of key's bucket after a request that Take
// allowed turned out to cost more than one (a GraphQL query that read many
// objects). The bucket may go below zero: the requests that follow wait
// until it has refilled past one again. It never refuses: the work is done.
func (l *Limiter) Spend(key string, n int) Result {
	l.mu.Lock()
	defer l.mu.Unlock()
	now := l.now()
	b := l.bucket(key, now)
	b.tokens -= float64(max(n, 0))
	return Result{Allowed: true, Limit: int(math.Round(b.perSecond * 60)), Remaining: max(int(b.tokens), 0)}
}

// Peek reports what Take would answer for key without spending a token
// (Allowed: a token is there), and without keeping a bucket for a new key.
func (l *Limiter) Peek(key string) Result {
	l.mu.Lock()
	defer l.mu.Unlock()
	now := l.now()
	b := l.buckets[key]
	if b == nil {
		r, ok := l.own[key]
		if !ok {
			r = l.def
		}
		b = &bucket{rate: r, tokens: r.burst, at: now}
	}
	b.refill(now)
	res := Result{Limit: int(math.Round(b.perSecond * 60)), Remaining: max(int(b.tokens), 0), Allowed: b.tokens >= 1}
	if !res.Allowed && b.perSecond > 0 {
		res.RetryAfter = time.Duration((1 - b.tokens) / b.perSecond * float64(time.Second))
	} else if !res.Allowed {
		res.RetryAfter = time.Hour
	}
	return res
}

// bucket returns key's bucket refilled to now, made full when key has none.
// l.mu is held.
func (l *Limiter) bucket(key string, now time.Time) *bucket {
	b := l.buckets[key]
	if b == nil && l.maxKeys > 0 && len(l.buckets) >= l.maxKeys {
		l.sweep = time.Time{}
		l.maybeSweep(now)
		if len(l.buckets) >= l.maxKeys {
			key = overflowKey
			b = l.buckets[key]
		}
	}
	if b == nil {
		r, ok := l.own[key]
		if !ok {
			r = l.def
		}
		b = &bucket{rate: r, tokens: r.burst, at: now}
		l.buckets[key] = b
	}
	b.refill(now)
	return b
}

// maybeSweep drops buckets that have refilled completely, once a minute.
func (l *Limiter) maybeSweep(now time.Time) {
	if now.Sub(l.sweep) < time.Minute {
		return
	}
	l.sweep = now
	for k, b := range l.buckets {
		if b.tokens+now.Sub(b.at).Seconds()*b.perSecond >= b.burst {
			delete(l.buckets, k)
		}
	}
}
