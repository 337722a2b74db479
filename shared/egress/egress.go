// Package egress makes the outbound HTTP requests whose target a partner
// chooses (webhook deliveries) without letting that choice reach inside:
// the hub's loopback, the store network, the cloud metadata service (SSRF).
//
// Two checks, both needed:
//
//   - CheckURL, at registration: https only, no user info, no IP literal
//     in any notation (decimal 2130706433, hex 0x7f000001, octal
//     0177.0.0.1, short 127.1, [::ffff:127.0.0.1], zones), no internal
//     name (localhost, single labels, .local, .internal, ...), and a name
//     that resolves to any forbidden address is refused. It answers a
//     kassa EInvalid error naming "url", so the API says 422.
//   - Client, at every connection: its dialer resolves the name itself,
//     refuses the whole name if any answer is forbidden, dials only the
//     checked addresses, and checks the socket's address once more just
//     before connect. A name that answered a public address at
//     registration and 127.0.0.1 now (DNS rebinding) gets nowhere.
//
// The client follows no redirect (a 3xx is the response), uses no proxy
// from the environment, and bounds each attempt by Options.Timeout; the
// caller bounds how much of a response body it reads. The ranges refused
// are the table in addr.go, one RFC per line.
//
// Traps: Options.AllowLoopback opens 127.0.0.0/8, ::1, the name localhost
// and plain http, for development and tests only; it opens no other range.
// A name that does not exist is refused at registration, but a resolver
// that fails for another reason (no DNS right now) does not block it: the
// dial-time check is the guard that always holds.
package egress

import (
	"context"
	"crypto/x509"
	"errors"
	"net"
	"net/netip"
	"net/url"
	"strconv"
	"strings"
	"time"

	"kassa.dev/shared/kassa"
)

// DefaultTimeout bounds one attempt (connect, TLS, request, response
// headers and body) when Options.Timeout is zero.
const DefaultTimeout = 10 * time.Second

// maxURL is the longest URL CheckURL accepts.
const maxURL = 2048

// Resolver answers a name's addresses; *net.Resolver is one. Tests inject
// their own to make a name resolve to what they need.
type Resolver interface {
	LookupNetIP(ctx context.Context, network, host string) ([]netip.Addr, error)
}

// Options configure CheckURL and Client. The zero value is the
// production policy.
type Options struct {
	// AllowLoopback permits 127.0.0.0/8 and ::1 (as literals, or the name
	// localhost) and plain http: development and tests only.
	AllowLoopback bool
	// Timeout bounds one attempt; zero means DefaultTimeout.
	Timeout time.Duration
	// RootCAs are trusted in addition to the system roots (tests with an
	// httptest TLS server).
	RootCAs []*x509.Certificate
	// Resolver resolves names; nil means net.DefaultResolver.
	Resolver Resolver
}

func (o Options) resolver() Resolver {
	if o.Resolver == nil {
		return net.DefaultResolver
	}
	return o.Resolver
}

func (o Options) timeout() time.Duration {
	if o.Timeout <= 0 {
		return DefaultTimeout
	}
	return o.Timeout
}

// internalSuffixes are names that are never a partner's public host:
// special-use and private-use domains.
var internalSuffixes = []string{
	"localhost",   // RFC 6761
	"local",       // mDNS, RFC 6762
	"internal",    // ICANN private use (metadata.google.internal, *.ec2.internal)
	"home.arpa",   // RFC 8375
	"arpa",        // reverse zones, infrastructure (RFC 3172)
	"localdomain", // common resolver default
	"lan",         // common home-router domain
	"intranet", "corp", "private", "home",
	"test", "invalid", "example", // RFC 6761
	"onion", // RFC 7686
	"alt",   // RFC 9476
}

// CheckURL reports whether raw may be registered as an outbound target.
// It returns nil, or a kassa EInvalid error whose field is "url" and whose
// message says what is wrong. It resolves the host with opt's resolver: a
// name any of whose addresses is forbidden, or a name that does not
// exist, is refused.
func CheckURL(ctx context.Context, raw string, opt Options) error {
	host, err := parseURL(raw, opt)
	if err != nil {
		return err
	}
	if opt.AllowLoopback && (host == "localhost" || strings.HasSuffix(host, ".localhost")) {
		return nil // the dial-time check keeps it to loopback
	}
	if a, err := netip.ParseAddr(host); err == nil {
		// Only AllowLoopback lets a literal through (parseURL refused the rest).
		if !loopback(a) {
			return invalid("must name a host, not an IP address")
		}
		return nil
	}
	lctx, cancel := context.WithTimeout(ctx, opt.timeout())
	defer cancel()
	addrs, err := opt.resolver().LookupNetIP(lctx, "ip", host)
	var dnsErr *net.DNSError
	switch {
	case errors.As(err, &dnsErr) && dnsErr.IsNotFound, err == nil && len(addrs) == 0:
		return invalid("names a host that does not exist")
	case err != nil:
		return nil // DNS is down, not the name wrong: the dial-time check still holds
	}
	if err := check(host, addrs, opt.AllowLoopback); err != nil {
		return invalid("names a host that resolves to an internal address")
	}
	return nil
}

// parseURL applies every rule that needs no resolver and returns the
// host, lower-cased, without a trailing dot or brackets.
func parseURL(raw string, opt Options) (string, error) {
	if len(raw) > maxURL {
		return "", invalid("must be at most " + strconv.Itoa(maxURL) + " characters")
	}
	for _, r := range raw {
		if r <= ' ' || r == 0x7f || r == '\\' {
			return "", invalid("must not contain spaces, control characters or backslashes")
		}
	}
	u, err := url.Parse(raw)
	if err != nil || u.Opaque != "" {
		return "", invalid("must be an absolute https URL")
	}
	switch {
	case u.Scheme == "https":
	case u.Scheme == "http" && opt.AllowLoopback:
	case u.Scheme == "http":
		return "", invalid("must use https")
	default:
		return "", invalid("must be an absolute https URL")
	}
	if u.User != nil {
		return "", invalid("must not carry a user name or password")
	}
	if p := u.Port(); p != "" {
		if n, err := strconv.Atoi(p); err != nil || n < 1 || n > 65535 {
			return "", invalid("has a port outside 1-65535")
		}
	}
	host := strings.ToLower(u.Hostname())
	if host == "" {
		return "", invalid("must name a host")
	}
	if strings.ContainsAny(host, ":%[]") {
		// An IPv6 literal, with or without a zone.
		if a, err := netip.ParseAddr(host); err == nil && opt.AllowLoopback && loopback(a) && a.Zone() == "" && !a.Is4In6() {
			return host, nil
		}
		return "", invalid("must name a host, not an IP address")
	}
	if a, err := netip.ParseAddr(host); err == nil && a.Is4() && opt.AllowLoopback && loopback(a) {
		return host, nil // the canonical dotted form, 127.0.0.1 itself
	}
	host = strings.TrimSuffix(host, ".")
	if err := checkName(host, opt); err != nil {
		return "", err
	}
	return host, nil
}

// checkName refuses what is not a public DNS name: characters outside
// letters, digits, hyphen and dot (IDNs must be given in xn-- form), empty
// labels, a numeric last label (browsers and inet_aton read those as an
// IPv4 address: 127.1, 2130706433, 0x7f000001, 0177.0.0.1), single labels
// and the internal suffixes.
func checkName(host string, opt Options) error {
	for _, r := range host {
		if !(r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r == '-' || r == '.') {
			return invalid("must be a DNS name of letters, digits, hyphens and dots (IDNs in xn-- form)")
		}
	}
	labels := strings.Split(host, ".")
	for _, l := range labels {
		if l == "" || len(l) > 63 || strings.HasPrefix(l, "-") || strings.HasSuffix(l, "-") {
			return invalid("has an invalid host name")
		}
	}
	if numeric(labels[len(labels)-1]) {
		return invalid("must name a host, not an IP address")
	}
	if opt.AllowLoopback && (host == "localhost" || strings.HasSuffix(host, ".localhost")) {
		return nil
	}
	if len(labels) == 1 {
		return invalid("must be a fully qualified public host name")
	}
	for _, s := range internalSuffixes {
		if host == s || strings.HasSuffix(host, "."+s) {
			return invalid("names an internal host")
		}
	}
	return nil
}

// numeric reports whether a label reads as a number the way the WHATWG URL
// parser's "ends in a number" does: decimal digits, or 0x and hex digits.
func numeric(label string) bool {
	digits := label
	hex := false
	if len(label) >= 2 && label[0] == '0' && (label[1] == 'x' || label[1] == 'X') {
		digits, hex = label[2:], true
	}
	for _, r := range digits {
		if !(r >= '0' && r <= '9' || hex && (r >= 'a' && r <= 'f' || r >= 'A' && r <= 'F')) {
			return false
		}
	}
	return digits != "" || hex
}

func invalid(msg string) error { return kassa.InvalidField("url", msg) }
