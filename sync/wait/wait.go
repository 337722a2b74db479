// Package wait is for tests that wait on a condition: they poll it with a
// deadline instead of sleeping and hoping. Tests of every module use it.
package wait

import (
	"testing"
	"time"
)

// For polls cond until it holds, failing t once d has passed; what names
// the condition in the failure.
func For(t testing.TB, d time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(d)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out after %s waiting for %s", d, what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}
