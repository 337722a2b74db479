package node

import (
	"math"
	"runtime/debug"
	"testing"

	"kassa.dev/shared/kassa"
)

func TestParseMemoryLimit(t *testing.T) {
	for in, want := range map[string]int64{"": 0, "0": 0, "off": -1, "96MiB": 96 << 20, "1GiB": 1 << 30, "512KiB": 512 << 10, "123456": 123456, "7B": 7} {
		if got, err := ParseMemoryLimit(in); err != nil || got != want {
			t.Errorf("ParseMemoryLimit(%q) = %d, %v; want %d", in, got, err, want)
		}
	}
	for _, bad := range []string{"-5", "lots", "12MB", "MiB", "99999999999TiB"} {
		if _, err := ParseMemoryLimit(bad); err == nil {
			t.Errorf("ParseMemoryLimit(%q) accepted", bad)
		}
	}
}

func TestDefaultMemoryLimitIsAQuarterBetweenTheKindsBounds(t *testing.T) {
	cases := []struct {
		kind  string
		total int64
		want  int64
	}{
		{kassa.NodeEdge, 24 << 30, 56 << 20}, // ceiling
		{kassa.NodeEdge, 208 << 20, 52 << 20},
		{kassa.NodeEdge, 128 << 20, 48 << 20}, // floor
		{kassa.NodeEdge, 0, 56 << 20},         // unknown: the ceiling
		{kassa.NodeHub, 24 << 30, 80 << 20},   // ceiling (was 1 GiB: issue 21)
		{kassa.NodeHub, 288 << 20, 72 << 20},
		{kassa.NodeHub, 128 << 20, 64 << 20},
	}
	for _, c := range cases {
		if got := DefaultMemoryLimit(c.kind, c.total); got != c.want {
			t.Errorf("DefaultMemoryLimit(%s, %d MiB) = %d MiB, want %d MiB", c.kind, c.total>>20, got>>20, c.want>>20)
		}
	}
}

func TestTuneMemorySetsTheLimitUnlessGOMEMLIMITIsSet(t *testing.T) {
	t.Setenv("GOMEMLIMIT", "")
	before := debug.SetMemoryLimit(-1)
	applied, restore := TuneMemory(kassa.NodeEdge, 0)
	if got := debug.SetMemoryLimit(-1); got != applied || applied != DefaultMemoryLimit(kassa.NodeEdge, MachineMemory()) {
		t.Fatalf("limit %d, applied %d", got, applied)
	}
	restore()
	if got := debug.SetMemoryLimit(-1); got != before {
		t.Fatalf("restore left %d, want %d", got, before)
	}
	if applied, restore := TuneMemory(kassa.NodeEdge, -1); applied != math.MaxInt64 {
		t.Fatalf("off applied %d", applied)
	} else {
		restore()
	}
	t.Setenv("GOMEMLIMIT", "1GiB")
	if _, restore := TuneMemory(kassa.NodeEdge, 96<<20); debug.SetMemoryLimit(-1) != before {
		t.Fatal("GOMEMLIMIT set, yet the limit changed")
	} else {
		restore()
	}
}
