package node

import (
	"bufio"
	"bytes"
	"fmt"
	"math"
	"os"
	"runtime/debug"
	"strconv"
	"strings"

	"kassa.dev/shared/kassa"
)

// The default memory limit is a quarter of the machine's memory (or of
// the cgroup's limit, when lower), between a floor and a ceiling per node
// kind. Without it a node's heap grows with the GC target
// (DefaultGCPercent lets it reach five times the live heap) and with any
// burst, and the runtime keeps what it reserved for minutes (the figures:
// docs/performance.md, "Figures behind code defaults"). The limit is soft: the collector runs as
// often as it must to stay under it (and the GC target applies below it),
// and beyond it only if the live heap itself is larger.
//
// The edge's ceiling keeps its peak RSS under 100 MiB: Go memory plus
// what is not Go's, about 40 MiB on Linux 6.18 (the binary's pages, which
// the kernel maps whole, ~34 MiB; SQLite's memory, bounded by
// engine.HeapLimit; thread stacks). What a hub holds at once
// is bounded by design (request bodies, open connections, hashing slots:
// docs/trust.md, "Memory"), so its ceiling keeps it under 150 MiB under
// mixed traffic (hub/synctest BenchmarkMemoryMixed). A hub with many more
// stores raises it with --memory-limit.
const MemoryLimitFraction = 4

// MemoryLimitBounds are a node kind's floor and ceiling of the default
// memory limit.
var MemoryLimitBounds = map[string][2]int64{
	kassa.NodeEdge: {48 << 20, 56 << 20},
	kassa.NodeHub:  {64 << 20, 80 << 20},
}

// DefaultMemoryLimit is the limit of a node of kind on a machine with total
// bytes of memory (0: unknown): total/MemoryLimitFraction between the
// kind's floor and ceiling (the hub's for an unknown kind).
func DefaultMemoryLimit(kind string, total int64) int64 {
	bounds, ok := MemoryLimitBounds[kind]
	if !ok {
		bounds = MemoryLimitBounds[kassa.NodeHub]
	}
	if total <= 0 {
		return bounds[1]
	}
	return min(max(total/MemoryLimitFraction, bounds[0]), bounds[1])
}

// MachineMemory returns the memory this process may use: /proc/meminfo's
// MemTotal, or the cgroup v2 memory.max when lower. 0 when unknown.
func MachineMemory() int64 {
	var total int64
	if b, err := os.ReadFile("/proc/meminfo"); err == nil {
		total = statusKiB(b, "MemTotal:")
	}
	if b, err := os.ReadFile("/sys/fs/cgroup/memory.max"); err == nil {
		if n, err := strconv.ParseInt(strings.TrimSpace(string(b)), 10, 64); err == nil && n > 0 && (total == 0 || n < total) {
			total = n
		}
	}
	return total
}

// ParseMemoryLimit reads a --memory-limit value: "" or "0" for the default
// (DefaultMemoryLimit), "off" for none, or a size in bytes
// with an optional B, KiB, MiB, GiB or TiB suffix as GOMEMLIMIT takes it.
// It returns -1 for "off", 0 for the default.
func ParseMemoryLimit(s string) (int64, error) {
	s = strings.TrimSpace(s)
	switch s {
	case "", "0":
		return 0, nil
	case "off":
		return -1, nil
	}
	units := []struct {
		suffix string
		mult   int64
	}{{"TiB", 1 << 40}, {"GiB", 1 << 30}, {"MiB", 1 << 20}, {"KiB", 1 << 10}, {"B", 1}}
	mult := int64(1)
	for _, u := range units {
		if num, ok := strings.CutSuffix(s, u.suffix); ok {
			s, mult = num, u.mult
			break
		}
	}
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil || n <= 0 || n > math.MaxInt64/mult {
		return 0, fmt.Errorf("memory limit %q: want a size such as 256MiB, 0 for the default or off", s)
	}
	return n * mult, nil
}

// TuneMemory sets the Go memory limit of a node of kind (limit as
// ParseMemoryLimit returns it) unless the GOMEMLIMIT variable is set, which
// wins. It returns the limit in effect (math.MaxInt64: none) and a function
// that restores the previous one.
func TuneMemory(kind string, limit int64) (applied int64, restore func()) {
	old := debug.SetMemoryLimit(-1)
	if os.Getenv("GOMEMLIMIT") != "" {
		return old, func() {}
	}
	switch {
	case limit == 0:
		limit = DefaultMemoryLimit(kind, MachineMemory())
	case limit < 0:
		limit = math.MaxInt64
	}
	debug.SetMemoryLimit(limit)
	return limit, func() { debug.SetMemoryLimit(old) }
}

// RSS returns this process's resident set size and its peak (VmRSS and
// VmHWM of /proc/self/status) in bytes; 0, 0 where there is no /proc.
func RSS() (cur, peak int64) {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0, 0
	}
	return statusKiB(b, "VmRSS:"), statusKiB(b, "VmHWM:")
}

// ResetPeakRSS sets the peak RSS back to the current RSS (Linux: writing 5
// to /proc/self/clear_refs), so that RSS reports the peak of what follows.
func ResetPeakRSS() error { return os.WriteFile("/proc/self/clear_refs", []byte("5"), 0) }

// statusKiB reads a "Key:   123 kB" line of a /proc file, in bytes.
func statusKiB(b []byte, key string) int64 {
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		if rest, ok := strings.CutPrefix(sc.Text(), key); ok {
			f := strings.Fields(rest)
			if len(f) > 0 {
				n, _ := strconv.ParseInt(f[0], 10, 64)
				return n << 10
			}
		}
	}
	return 0
}
