package httpapi

import (
	"net/netip"
	"slices"
	"strings"
	"testing"
)

func TestClientAddrCutsIPv6ToItsSlash64(t *testing.T) {
	for in, want := range map[string]string{
		"127.0.0.1":            "127.0.0.1",
		"::ffff:10.1.2.3":      "10.1.2.3",
		"2001:db8:1:2:3:4:5:6": "2001:db8:1:2::/64",
		"2001:db8:1:2:ffff::1": "2001:db8:1:2::/64",
	} {
		if got := clientAddr(netip.MustParseAddr(in)); got != want {
			t.Errorf("clientAddr(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestParseTrustedProxies(t *testing.T) {
	for _, c := range []struct {
		in   string
		want []string // nil with bad: refused
		bad  bool
	}{
		{in: ""},
		{in: " , "},
		{in: "10.0.0.5", want: []string{"10.0.0.5/32"}},
		{in: "10.1.2.3/8, fd00::1/8 ,::1", want: []string{"10.0.0.0/8", "fd00::/8", "::1/128"}},
		{in: "10.0.0.0/33", bad: true},
		{in: "proxy.internal", bad: true},
		{in: "10.0.0.5:8080", bad: true},
		{in: "fe80::1%eth0", bad: true},
		{in: "::ffff:10.0.0.5", bad: true},
		{in: "10.0.0.5;10.0.0.6", bad: true},
	} {
		got, err := ParseTrustedProxies(c.in)
		if c.bad {
			if err == nil {
				t.Errorf("ParseTrustedProxies(%q) = %v, want an error", c.in, got)
			}
			continue
		}
		var s []string
		for _, p := range got {
			s = append(s, p.String())
		}
		if err != nil || !slices.Equal(s, c.want) {
			t.Errorf("ParseTrustedProxies(%q) = %v, %v; want %v", c.in, s, err, c.want)
		}
	}
}

// TestForwardedClientWalksFromTheRight: behind trusted proxies the client
// is the right-most X-Forwarded-For entry that is not a trusted proxy;
// what a client writes left of it, and malformed entries, change nothing.
func TestForwardedClientWalksFromTheRight(t *testing.T) {
	trusted, _ := ParseTrustedProxies("127.0.0.1, 10.0.0.0/8, fd00::/8")
	s := &Server{cfg: Config{TrustedProxies: trusted}}
	peer := netip.MustParseAddr("127.0.0.1")
	for _, c := range []struct {
		name  string
		lines []string
		want  string
	}{
		{"no header", nil, "127.0.0.1"},
		{"one client", []string{"203.0.113.7"}, "203.0.113.7"},
		{"through an inner proxy", []string{"203.0.113.7, 10.1.1.1"}, "203.0.113.7"},
		{"a forged entry left of the client", []string{"198.51.100.1, 203.0.113.7"}, "203.0.113.7"},
		{"a forged trusted entry left of the client", []string{"10.9.9.9, 203.0.113.7, 10.1.1.1"}, "203.0.113.7"},
		{"every entry trusted: the left-most", []string{"10.2.2.2, 10.1.1.1"}, "10.2.2.2"},
		{"lines read last first", []string{"198.51.100.1", "203.0.113.7, 10.1.1.1"}, "203.0.113.7"},
		{"the walk goes on into an earlier line", []string{"203.0.113.7", "10.1.1.1"}, "203.0.113.7"},
		{"IPv6 client", []string{"2001:db8::7, fd00::2"}, "2001:db8::7"},
		{"IPv4-mapped client", []string{"::ffff:203.0.113.7"}, "203.0.113.7"},
		{"tabs and spaces", []string{" \t203.0.113.7\t, 10.1.1.1 "}, "203.0.113.7"},
		{"garbage left of the client", []string{"garbage, 203.0.113.7"}, "203.0.113.7"},
		{"garbage only", []string{"garbage"}, "127.0.0.1"},
		{"garbage right of a trusted hop", []string{"203.0.113.7, 10.1.1.1, garbage"}, "127.0.0.1"},
		{"garbage right of the client", []string{"10.1.1.1, nope"}, "127.0.0.1"},
		{"malformed after a trusted hop", []string{"203.0.113.7, , 10.1.1.1"}, "10.1.1.1"},
		{"empty header", []string{""}, "127.0.0.1"},
		{"commas only", []string{",,,"}, "127.0.0.1"},
		{"trailing comma", []string{"203.0.113.7,"}, "127.0.0.1"},
		{"a port", []string{"203.0.113.7:4711"}, "127.0.0.1"},
		{"bracketed IPv6", []string{"[2001:db8::7]"}, "127.0.0.1"},
		{"a zone", []string{"fe80::1%eth0"}, "127.0.0.1"},
		{"leading zeros", []string{"203.000.113.7"}, "127.0.0.1"},
		{"not UTF-8", []string{"\xff\xfe, 203.0.113.7"}, "203.0.113.7"},
		{"very long", []string{strings.Repeat("10.1.1.1,", 500) + "203.0.113.7"}, "203.0.113.7"},
	} {
		var lines [][]byte
		for _, l := range c.lines {
			lines = append(lines, []byte(l))
		}
		if got := forwardedClient(peer, lines, s.trustedProxy); got.String() != c.want {
			t.Errorf("%s: client %s, want %s", c.name, got, c.want)
		}
	}
}
