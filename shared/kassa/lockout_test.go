package kassa

import (
	"testing"
	"time"
)

func TestLockoutDelayDoublesUpToTheCap(t *testing.T) {
	want := map[int]time.Duration{0: 0, 1: 0, 4: 0, 5: 15 * time.Second, 6: 30 * time.Second, 7: time.Minute,
		10: 8 * time.Minute, 11: 15 * time.Minute, 12: 15 * time.Minute, 1 << 30: 15 * time.Minute}
	for n, d := range want {
		if got := LockoutDelay(n); got != d {
			t.Errorf("LockoutDelay(%d) = %v, want %v", n, got, d)
		}
	}
}
