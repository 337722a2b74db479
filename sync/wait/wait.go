// Package wait is for tests that wait on a condition: they poll it with a
// deadline instead of sleeping and hoping. Tests of every module use it.
package wait

import (
	"testing"
	"time"
)

// For polls cond until it holds, failing t once d has passed; what names
// the condition in the failure. It polls every 5 ms at first and backs off
// to every 50 ms, so that a long wait (a benchmark's catch-up) takes little
// CPU from what it waits for.
func For(t testing.TB, d time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(d)
	pause := 5 * time.Millisecond
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out after %s waiting for %s", d, what)
		}
		time.Sleep(pause)
		pause = min(2*pause, 50*time.Millisecond)
	}
}
