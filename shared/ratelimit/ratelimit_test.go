package ratelimit

import (
	"testing"
	"time"
)

func TestBurstThenRefillPerKey(t *testing.T) {
	now := time.Unix(0, 0)
	l := New(60, 3, func() time.Time { return now })
	for i := range 3 {
		if r := l.Take("a"); !r.Allowed || r.Remaining != 2-i {
			t.Fatalf("take %d: %+v", i, r)
		}
	}
	r := l.Take("a")
	if r.Allowed || r.RetryAfter <= 0 || r.RetryAfter > time.Second {
		t.Fatalf("fourth take should be refused with retry within 1s: %+v", r)
	}
	if !l.Take("b").Allowed {
		t.Fatal("another key shares the bucket")
	}
	now = now.Add(time.Second)
	if !l.Take("a").Allowed {
		t.Fatal("bucket did not refill after one second at 60/min")
	}
}

// TestOwnLimitPerKey: a key with its own limit gets its rate and burst
// (also a bucket already in use, keeping its tokens up to the new burst),
// others keep the default, and removing it returns the key to the default.
func TestOwnLimitPerKey(t *testing.T) {
	now := time.Unix(0, 0)
	l := New(60, 3, func() time.Time { return now })
	l.Take("busy")
	l.SetLimit("busy", 6000, 10)
	if r := l.Take("busy"); !r.Allowed || r.Limit != 6000 || r.Remaining != 1 {
		t.Fatalf("bucket in use after SetLimit: %+v", r)
	}
	now = now.Add(time.Second) // 100 tokens a second, up to 10
	for i := range 10 {
		if r := l.Take("busy"); !r.Allowed || r.Remaining != 9-i {
			t.Fatalf("take %d at the own limit: %+v", i, r)
		}
	}
	if r := l.Take("busy"); r.Allowed || r.RetryAfter > 10*time.Millisecond {
		t.Fatalf("over the own burst: %+v", r)
	}
	l.SetLimit("fresh", 120, 1)
	if r := l.Take("fresh"); !r.Allowed || r.Limit != 120 || r.Remaining != 0 {
		t.Fatalf("new bucket at its own limit: %+v", r)
	}
	if r := l.Take("other"); r.Limit != 60 || r.Remaining != 2 {
		t.Fatalf("default key: %+v", r)
	}
	l.SetLimit("busy", 0, 0)
	now = now.Add(time.Minute)
	if r := l.Take("busy"); r.Limit != 60 || r.Remaining != 2 {
		t.Fatalf("back to the default: %+v", r)
	}
}

// TestSpendTakesWhatARequestCostBeyondOne: a request that cost 25 tokens
// leaves the bucket 25 lower, below zero if need be, and the requests
// after it wait until it has refilled.
func TestSpendTakesWhatARequestCostBeyondOne(t *testing.T) {
	now := time.Unix(0, 0)
	l := New(60, 10, func() time.Time { return now }) // a token a second
	if r := l.Take("org"); !r.Allowed || r.Remaining != 9 {
		t.Fatalf("first take: %+v", r)
	}
	if r := l.Spend("org", 14); r.Remaining != 0 {
		t.Fatalf("spend 14 of 9: %+v, want 0 remaining", r)
	}
	if r := l.Take("org"); r.Allowed || r.RetryAfter != 6*time.Second {
		t.Fatalf("take in debt of 5: %+v, want refused for 6 s", r)
	}
	now = now.Add(6 * time.Second)
	if r := l.Take("org"); !r.Allowed || r.Remaining != 0 {
		t.Fatalf("take after the debt is paid: %+v", r)
	}
	if r := l.Spend("other", 3); r.Remaining != 7 || r.Limit != 60 {
		t.Fatalf("spend on a fresh bucket: %+v", r)
	}
}

// TestMaxKeysBoundsTheBuckets: a bounded limiter keeps at most its number
// of buckets; new keys beyond share one bucket until the others refill.
func TestMaxKeysBoundsTheBuckets(t *testing.T) {
	now := time.Unix(0, 0)
	l := New(60, 2, func() time.Time { return now })
	l.SetMaxKeys(3)
	for _, k := range []string{"a", "b", "c"} {
		l.Take(k)
	}
	// Two new keys share the overflow bucket of 2.
	if !l.Take("d").Allowed || !l.Take("e").Allowed || l.Take("f").Allowed {
		t.Fatal("new keys beyond the bound do not share one bucket")
	}
	if len(l.buckets) > 4 {
		t.Fatalf("%d buckets held, want at most 3 and the overflow", len(l.buckets))
	}
	if !l.Take("a").Allowed {
		t.Fatal("a key held before the bound lost its own bucket")
	}
	now = now.Add(time.Minute) // every bucket refilled: swept, room again
	if r := l.Take("g"); !r.Allowed || r.Remaining != 1 {
		t.Fatalf("a new key after the sweep: %+v", r)
	}
}

// TestPeekSpendsNothing: Peek answers as Take would, spends nothing and
// keeps no bucket for a new key.
func TestPeekSpendsNothing(t *testing.T) {
	now := time.Unix(0, 0)
	l := New(60, 1, func() time.Time { return now })
	if r := l.Peek("a"); !r.Allowed || r.Remaining != 1 || len(l.buckets) != 0 {
		t.Fatalf("peek of a new key: %+v, %d buckets", r, len(l.buckets))
	}
	l.Take("a")
	if r := l.Peek("a"); r.Allowed || r.RetryAfter <= 0 {
		t.Fatalf("peek of a spent key: %+v", r)
	}
}
