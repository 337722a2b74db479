package freeport

import (
	"net"
	"strconv"
	"testing"
)

// TestAPickedPortIsFreeOutsideTheEphemeralRangeAndGivenOnce: each port
// picked can be listened on, lies below the range the kernel hands out
// for ":0" and outgoing connections, and is never given twice.
func TestAPickedPortIsFreeOutsideTheEphemeralRangeAndGivenOnce(t *testing.T) {
	low := ephemeralLow()
	seen := map[int]bool{}
	for range 300 {
		p, err := Pick()
		if err != nil {
			t.Fatal(err)
		}
		if p >= low || p <= 1024 {
			t.Fatalf("port %d outside [1025, %d)", p, low)
		}
		if seen[p] {
			t.Fatalf("port %d given twice", p)
		}
		seen[p] = true
	}
	p, err := Pick()
	if err != nil {
		t.Fatal(err)
	}
	l, err := net.Listen("tcp", "127.0.0.1:"+strconv.Itoa(p))
	if err != nil {
		t.Fatalf("the picked port %d: %v", p, err)
	}
	l.Close()
}
