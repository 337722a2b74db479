package change

import "testing"

func TestNegotiateServesOlderEdgesAndRefusesNewerOnes(t *testing.T) {
	for _, tc := range []struct {
		in, want int
		ok       bool
	}{
		{0, 1, true}, // v0.5.0 names no format
		{1, 1, true},
		{Format, Format, true},
		{Format + 1, 0, false},
		{-1, 0, false},
	} {
		got, err := Negotiate(tc.in)
		if (err == nil) != tc.ok || got != tc.want {
			t.Errorf("Negotiate(%d) = %d, %v; want %d (ok %v)", tc.in, got, err, tc.want, tc.ok)
		}
	}
}
