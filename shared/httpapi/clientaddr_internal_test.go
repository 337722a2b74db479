package httpapi

import "testing"

func TestClientAddrCutsIPv6ToItsSlash64(t *testing.T) {
	for in, want := range map[string]string{
		"127.0.0.1":            "127.0.0.1",
		"::ffff:10.1.2.3":      "10.1.2.3",
		"2001:db8:1:2:3:4:5:6": "2001:db8:1:2::/64",
		"2001:db8:1:2:ffff::1": "2001:db8:1:2::/64",
		"not-an-address":       "not-an-address",
	} {
		if got := clientAddr(in); got != want {
			t.Errorf("clientAddr(%q) = %q, want %q", in, got, want)
		}
	}
}
