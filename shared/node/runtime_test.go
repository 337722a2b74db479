package node

import (
	"runtime"
	"runtime/debug"
	"testing"

	"kassa.dev/shared/sqlite"
)

// TestTuneSetsAndRestoresTheRuntime: the GC target and the Go processors
// a serving node runs with, as the flags ask, and back after.
func TestTuneSetsAndRestoresTheRuntime(t *testing.T) {
	procs := runtime.GOMAXPROCS(0)
	gc := debug.SetGCPercent(-1)
	debug.SetGCPercent(gc)

	restore := Tune(DefaultGCPercent, 0, 0)
	want := procs
	if sqlite.CanRaiseThread(sqlite.DefaultWriterPriority) {
		want = procs + 1
	} else {
		t.Log("threads cannot be raised here (no CAP_SYS_NICE or RLIMIT_NICE): no extra processor expected")
	}
	if got := runtime.GOMAXPROCS(0); got != want {
		t.Errorf("GOMAXPROCS %d with the defaults, want %d", got, want)
	}
	if got := debug.SetGCPercent(DefaultGCPercent); got != DefaultGCPercent {
		t.Errorf("GC target %d, want %d", got, DefaultGCPercent)
	}
	restore()
	if got := runtime.GOMAXPROCS(0); got != procs {
		t.Errorf("GOMAXPROCS %d after restore, want %d", got, procs)
	}
	if got := debug.SetGCPercent(gc); got != gc {
		t.Errorf("GC target %d after restore, want %d", got, gc)
	}

	// Two nodes in one process (tests run several) add one processor, not two.
	r1, r2 := Tune(0, 0, 0), Tune(0, 0, 0)
	if got := runtime.GOMAXPROCS(0); got != want {
		t.Errorf("GOMAXPROCS %d after two nodes tuned, want %d", got, want)
	}
	r2()
	r1()

	for _, tc := range []struct {
		name                string
		procs, writer, want int
	}{
		{"explicit processors", 5, 0, 5},
		{"negative: Go's own", -1, 0, procs},
		{"writer not raised: no extra processor", 0, -1, procs},
	} {
		restore := Tune(0, tc.procs, tc.writer)
		if got := runtime.GOMAXPROCS(0); got != tc.want {
			t.Errorf("%s: GOMAXPROCS %d, want %d", tc.name, got, tc.want)
		}
		restore()
	}
}
