package egress

import (
	"errors"
	"fmt"
	"net/netip"
)

// forbidden is every address range an outbound request may not reach: one
// place, one reason per range. An address is checked after Unmap, so the
// IPv4-mapped form (::ffff:a.b.c.d) of an IPv4 range is covered by that
// range; the IPv6 prefixes that embed an IPv4 address some other way
// (IPv4-compatible, NAT64, 6to4, Teredo) are refused whole.
var forbidden = []struct {
	prefix netip.Prefix
	reason string
}{
	// IPv4.
	{mustPrefix("0.0.0.0/8"), "is in 0.0.0.0/8, this network (RFC 1122 3.2.1.3)"},
	{mustPrefix("10.0.0.0/8"), "is private (RFC 1918)"},
	{mustPrefix("100.64.0.0/10"), "is carrier-grade NAT space (RFC 6598)"}, // holds Alibaba's metadata 100.100.100.200
	{mustPrefix("127.0.0.0/8"), "is loopback (RFC 1122)"},
	{mustPrefix("169.254.0.0/16"), "is link-local (RFC 3927)"}, // holds the cloud metadata service 169.254.169.254
	{mustPrefix("172.16.0.0/12"), "is private (RFC 1918)"},
	{mustPrefix("192.0.0.0/24"), "is reserved for IETF protocol assignments (RFC 6890)"},
	{mustPrefix("192.0.2.0/24"), "is documentation space TEST-NET-1 (RFC 5737)"},
	{mustPrefix("192.88.99.0/24"), "is the deprecated 6to4 relay anycast (RFC 7526)"},
	{mustPrefix("192.168.0.0/16"), "is private (RFC 1918)"},
	{mustPrefix("198.18.0.0/15"), "is benchmarking space (RFC 2544)"},
	{mustPrefix("198.51.100.0/24"), "is documentation space TEST-NET-2 (RFC 5737)"},
	{mustPrefix("203.0.113.0/24"), "is documentation space TEST-NET-3 (RFC 5737)"},
	{mustPrefix("224.0.0.0/4"), "is multicast (RFC 5771)"},
	{mustPrefix("240.0.0.0/4"), "is reserved or broadcast (RFC 1112, RFC 919)"}, // 255.255.255.255 included

	// IPv6.
	{mustPrefix("::/128"), "is unspecified (RFC 4291)"},
	{mustPrefix("::1/128"), "is loopback (RFC 4291)"},
	{mustPrefix("::/96"), "is IPv4-compatible, deprecated (RFC 4291 2.5.5.1)"},
	{mustPrefix("::ffff:0:0:0/96"), "is IPv4-translated (RFC 2765)"},
	{mustPrefix("64:ff9b::/96"), "is NAT64, it reaches an embedded IPv4 address (RFC 6052)"},
	{mustPrefix("64:ff9b:1::/48"), "is local-use NAT64 (RFC 8215)"},
	{mustPrefix("100::/64"), "is the discard prefix (RFC 6666)"},
	{mustPrefix("2001::/23"), "is reserved for IETF protocol assignments, Teredo included (RFC 2928, RFC 4380)"},
	{mustPrefix("2001:db8::/32"), "is documentation space (RFC 3849)"},
	{mustPrefix("2002::/16"), "is 6to4, it reaches an embedded IPv4 address (RFC 3056)"},
	{mustPrefix("3fff::/20"), "is documentation space (RFC 9637)"},
	{mustPrefix("5f00::/16"), "is SRv6 segment identifiers (RFC 9602)"},
	{mustPrefix("fc00::/7"), "is a unique local address (RFC 4193)"}, // holds AWS's metadata fd00:ec2::254
	{mustPrefix("fe80::/10"), "is link-local (RFC 4291)"},
	{mustPrefix("fec0::/10"), "is site-local, deprecated (RFC 3879)"},
	{mustPrefix("ff00::/8"), "is multicast (RFC 4291)"},
}

func mustPrefix(s string) netip.Prefix { return netip.MustParsePrefix(s) }

// loopback is what Options.AllowLoopback opens: 127.0.0.0/8 and ::1, no
// other range.
func loopback(a netip.Addr) bool {
	a = a.Unmap()
	return a.Is4() && a.IsLoopback() || a == netip.IPv6Loopback()
}

// refusal says why a may not be reached ("" when it may). Besides the
// table, anything Go does not call global unicast is refused, and so is an
// address with a zone (it names an interface, not a host).
func refusal(a netip.Addr, allowLoopback bool) string {
	if !a.IsValid() {
		return "is not an IP address"
	}
	if a.Zone() != "" {
		return "carries an IPv6 zone"
	}
	a = a.Unmap()
	if allowLoopback && loopback(a) {
		return ""
	}
	for _, f := range forbidden {
		if f.prefix.Contains(a) {
			return f.reason
		}
	}
	if !a.IsGlobalUnicast() {
		return "is not a global unicast address"
	}
	return ""
}

// BlockedError is the error a connection gets when its address is
// refused, at dial time or by a name's resolution. errors.Is(err,
// ErrBlocked) matches it.
type BlockedError struct {
	Host   string     // the name asked for, or the address itself
	Addr   netip.Addr // the refused address
	Reason string     // why, e.g. "is private (RFC 1918)"
}

func (e *BlockedError) Error() string {
	if e.Host != "" && e.Host != e.Addr.String() {
		return fmt.Sprintf("egress: %s resolves to %s, which %s", e.Host, e.Addr, e.Reason)
	}
	return fmt.Sprintf("egress: address %s %s", e.Addr, e.Reason)
}

// Is makes errors.Is(err, ErrBlocked) true for every *BlockedError.
func (e *BlockedError) Is(target error) bool { return target == ErrBlocked }

// ErrBlocked matches (errors.Is) every refusal of an address.
var ErrBlocked = errors.New("egress: address refused")

// check returns a *BlockedError for the first address of addrs that may
// not be reached, or nil. One bad address refuses the whole name: a name
// that partly resolves inside must not be tried at all.
func check(host string, addrs []netip.Addr, allowLoopback bool) error {
	for _, a := range addrs {
		if why := refusal(a, allowLoopback); why != "" {
			return &BlockedError{Host: host, Addr: a, Reason: why}
		}
	}
	return nil
}
