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
