package egress

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"strconv"
	"syscall"
	"time"
)

// Client returns an HTTP client for partner-chosen URLs: every connection
// is checked against the forbidden ranges when it is made (see the package
// comment), no redirect is followed (the 3xx comes back as the response),
// no proxy is used, and a request, body read included, is bounded by
// opt.Timeout. A refused address fails the request with an error matching
// ErrBlocked. Build one client and reuse it: it pools connections.
func Client(opt Options) *http.Client {
	d := &dialer{opt: opt, net: &net.Dialer{
		Timeout:        opt.timeout(),
		KeepAlive:      30 * time.Second,
		ControlContext: control(opt.AllowLoopback),
	}}
	tr := &http.Transport{
		Proxy:                 nil, // a proxy would connect on our behalf, past the checks
		DialContext:           d.dial,
		TLSClientConfig:       &tls.Config{RootCAs: roots(opt.RootCAs), MinVersion: tls.VersionTLS12},
		ForceAttemptHTTP2:     true,
		TLSHandshakeTimeout:   opt.timeout(),
		ResponseHeaderTimeout: opt.timeout(),
		MaxIdleConns:          100,
		MaxIdleConnsPerHost:   4,
		IdleConnTimeout:       90 * time.Second,
	}
	return &http.Client{
		Transport:     tr,
		Timeout:       opt.timeout(),
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}
}

// roots is the system pool plus extra, or nil (the system pool) when
// there are no extra roots.
func roots(extra []*x509.Certificate) *x509.CertPool {
	if len(extra) == 0 {
		return nil
	}
	pool, err := x509.SystemCertPool()
	if err != nil {
		pool = x509.NewCertPool()
	}
	for _, c := range extra {
		pool.AddCert(c)
	}
	return pool
}

type dialer struct {
	opt Options
	net *net.Dialer
}

// dial resolves addr's host with the options' resolver, refuses the whole
// name if any address is forbidden, then dials the checked addresses in
// turn (never the name, so no second, unchecked resolution happens).
func (d *dialer) dial(ctx context.Context, network, addr string) (net.Conn, error) {
	host, portText, err := net.SplitHostPort(addr)
	if err != nil {
		return nil, err
	}
	port, err := strconv.ParseUint(portText, 10, 16)
	if err != nil {
		return nil, fmt.Errorf("egress: bad port in %q", addr)
	}
	var addrs []netip.Addr
	if a, err := netip.ParseAddr(host); err == nil {
		addrs = []netip.Addr{a}
	} else if addrs, err = d.opt.resolver().LookupNetIP(ctx, "ip", host); err != nil {
		return nil, err
	}
	if len(addrs) == 0 {
		return nil, fmt.Errorf("egress: %s has no addresses", host)
	}
	if err := check(host, addrs, d.opt.AllowLoopback); err != nil {
		return nil, err
	}
	var first error
	for _, a := range addrs {
		conn, err := d.net.DialContext(ctx, network, netip.AddrPortFrom(a, uint16(port)).String())
		if err == nil {
			return conn, nil
		}
		if first == nil {
			first = err
		}
	}
	return nil, first
}

// control checks the address a socket is about to connect to, the last
// moment before any packet leaves: whatever resolved it, the kernel gets
// no forbidden address.
func control(allowLoopback bool) func(context.Context, string, string, syscall.RawConn) error {
	return func(_ context.Context, _, address string, _ syscall.RawConn) error {
		ap, err := netip.ParseAddrPort(address)
		if err != nil {
			return fmt.Errorf("egress: cannot check address %q: %w", address, ErrBlocked)
		}
		if why := refusal(ap.Addr(), allowLoopback); why != "" {
			return &BlockedError{Addr: ap.Addr(), Reason: why}
		}
		return nil
	}
}
