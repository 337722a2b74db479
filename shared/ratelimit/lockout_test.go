package ratelimit

import (
	"testing"
	"time"
)

func TestLockoutLocksAfterFailuresAndResets(t *testing.T) {
	now := time.Unix(0, 0)
	delay := func(n int) time.Duration {
		if n < 3 {
			return 0
		}
		return time.Duration(n) * time.Second
	}
	l := NewLockout(delay, func() time.Time { return now })
	for range 2 {
		if d := l.Fail("a"); d != 0 {
			t.Fatalf("locked %v before the third failure", d)
		}
	}
	if d := l.Fail("a"); d != 3*time.Second || l.Locked("a") != 3*time.Second {
		t.Fatalf("third failure: locked %v", l.Locked("a"))
	}
	if l.Locked("b") != 0 {
		t.Fatal("another key is locked")
	}
	now = now.Add(3 * time.Second)
	if l.Locked("a") != 0 {
		t.Fatal("still locked after the delay")
	}
	l.Reset("a")
	if d := l.Fail("a"); d != 0 {
		t.Fatalf("reset did not forget the failures: %v", d)
	}
	// Forgotten after an hour without failures.
	now = now.Add(Forget + 2*time.Minute)
	l.Fail("c")
	if _, ok := l.keys["a"]; ok {
		t.Fatal("an idle key was kept")
	}
}
