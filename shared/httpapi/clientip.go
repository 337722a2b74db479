package httpapi

// The client address of a request: what logins are throttled and locked
// by, and what the access log shows. Behind a reverse proxy every
// connection comes from the proxy, which names the client in
// X-Forwarded-For by appending the address it got the request from to
// whatever the request already carried. Everything left of the entries
// trusted proxies appended is the client's to write. So:
//
//   - The header is read only when the connection's peer is a trusted
//     proxy (Config.TrustedProxies, --trusted-proxies); from any other
//     peer, or with none configured (the default), it is ignored and the
//     peer is the client.
//   - It is read from the right (all its lines, the last line's last
//     entry first): the client is the first entry that is not itself a
//     trusted proxy. When every entry is one, the left-most is the client.
//   - An entry that is not a plain IP address (empty, a port, a zone,
//     garbage) ends the walk: the client is the last trusted hop reached,
//     as if the header had stopped there. Garbage a client puts left of
//     its own address is never read.
//
// Fiber's own ProxyHeader with EnableTrustedProxyCheck is not used: its
// c.IP() answers the left-most valid address of the header's first line,
// which is the one a client chooses, and the string it returns points into
// the request's buffer.

import (
	"bytes"
	"fmt"
	"net/netip"
	"strings"

	"github.com/gofiber/fiber/v2"
)

// ParseTrustedProxies reads a comma-separated list of IP addresses and
// CIDR ranges (10.0.0.5, 10.0.0.0/8, fd00::/8); blanks are skipped, "" is
// none. IPv4 is written as IPv4 (not ::ffff:…), and zones are refused.
func ParseTrustedProxies(s string) ([]netip.Prefix, error) {
	var out []netip.Prefix
	for _, f := range strings.Split(s, ",") {
		f = strings.TrimSpace(f)
		if f == "" {
			continue
		}
		p, err := netip.ParsePrefix(f)
		if !strings.Contains(f, "/") {
			var a netip.Addr
			if a, err = netip.ParseAddr(f); err == nil && a.Zone() != "" {
				return nil, fmt.Errorf("trusted proxy %q: an address with a zone cannot be matched", f)
			}
			p = netip.PrefixFrom(a, a.BitLen())
		}
		switch {
		case err != nil || !p.IsValid():
			return nil, fmt.Errorf("trusted proxy %q is neither an IP address nor a CIDR range", f)
		case p.Addr().Is4In6():
			return nil, fmt.Errorf("trusted proxy %q: write an IPv4 address as IPv4", f)
		}
		out = append(out, p.Masked())
	}
	return out, nil
}

// clientIP returns the request's client address by the rule above.
func (s *Server) clientIP(c *fiber.Ctx) netip.Addr {
	peer, _ := netip.AddrFromSlice(c.Context().RemoteIP())
	peer = peer.Unmap()
	if !s.trustedProxy(peer) {
		return peer
	}
	return forwardedClient(peer, c.Request().Header.PeekAll(fiber.HeaderXForwardedFor), s.trustedProxy)
}

// trustedProxy reports whether a is in Config.TrustedProxies.
func (s *Server) trustedProxy(a netip.Addr) bool {
	for _, p := range s.cfg.TrustedProxies {
		if p.Contains(a) {
			return true
		}
	}
	return false
}

// forwardedClient walks the X-Forwarded-For lines from the right, starting
// at peer, a trusted proxy: the first entry trusted does not hold is the
// client; a malformed entry leaves the last trusted hop.
func forwardedClient(peer netip.Addr, lines [][]byte, trusted func(netip.Addr) bool) netip.Addr {
	client := peer
	for i := len(lines) - 1; i >= 0; i-- {
		line := lines[i]
		for {
			j := bytes.LastIndexByte(line, ',') // -1: the line's first entry
			a, err := netip.ParseAddr(string(bytes.TrimSpace(line[j+1:])))
			if err != nil || a.Zone() != "" {
				return client
			}
			if a = a.Unmap(); !trusted(a) {
				return a
			}
			client = a
			if j < 0 {
				break
			}
			line = line[:j]
		}
	}
	return client
}
