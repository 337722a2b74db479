package node

import (
	"runtime"
	"runtime/debug"

	"kassa.dev/shared/sqlite"
)

// DefaultWriterPriority is the edge's default --writer-priority: how many
// nice levels the store's writer thread runs above the rest (sqlite.Options).
const DefaultWriterPriority = sqlite.DefaultWriterPriority

// goProcs is Go's own GOMAXPROCS (the CPUs, or the GOMAXPROCS variable),
// read before anything changed it: Tune adds to it, not to the current
// value, so that two nodes in one process (tests) add one processor, not two.
var goProcs = runtime.GOMAXPROCS(0)

// Tune sets the Go runtime as a serving node wants it and returns a
// function that restores the previous settings; node.Run applies it from
// the flags, and the benchmarks apply the defaults, so that they measure
// what the binaries run.
//
// gcPercent > 0 sets the GC target (DefaultGCPercent). procs > 0 sets
// GOMAXPROCS; procs == 0 adds one Go processor to Go's own setting when the
// store's writer thread can run raised (writerPriority as in
// Config.WriterPriority): the OS then runs that thread first, and the
// spare processor means it never waits for one after a long SQLite call.
// Without the raise an extra processor only adds contention (see
// docs/performance.md, "Order-flow performance"), so it is not added.
// Negative values leave Go's settings.
func Tune(gcPercent, procs, writerPriority int) (restore func()) {
	oldGC, oldProcs := -2, runtime.GOMAXPROCS(0)
	if gcPercent > 0 {
		oldGC = debug.SetGCPercent(gcPercent)
	}
	if writerPriority == 0 {
		writerPriority = sqlite.DefaultWriterPriority
	}
	switch {
	case procs > 0:
		runtime.GOMAXPROCS(procs)
	case procs == 0 && writerPriority > 0 && sqlite.CanRaiseThread(writerPriority):
		runtime.GOMAXPROCS(goProcs + 1)
	}
	return func() {
		if oldGC != -2 {
			debug.SetGCPercent(oldGC)
		}
		runtime.GOMAXPROCS(oldProcs)
	}
}
