package egress_test

import (
	"context"
	"crypto/x509"
	"errors"
	"io"
	"log"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"kassa.dev/shared/egress"
	"kassa.dev/shared/kassa"
)

// public is an address outside every forbidden range (example.com's).
var public = netip.MustParseAddr("93.184.216.34")

// names is a resolver for tests: a fixed table, NXDOMAIN for the rest.
// A name may list several answers in turn (rebinding): each lookup takes
// the next, the last repeats.
type names struct {
	mu    sync.Mutex
	table map[string][][]netip.Addr
	calls map[string]int
}

func resolver(table map[string][]string) *names {
	r := &names{table: map[string][][]netip.Addr{}, calls: map[string]int{}}
	for host, addrs := range table {
		r.add(host, addrs...)
	}
	return r
}

// add appends one answer (a list of addresses) for host.
func (r *names) add(host string, addrs ...string) {
	var answer []netip.Addr
	for _, a := range addrs {
		answer = append(answer, netip.MustParseAddr(a))
	}
	r.table[host] = append(r.table[host], answer)
}

func (r *names) LookupNetIP(_ context.Context, _, host string) ([]netip.Addr, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	answers, ok := r.table[host]
	if !ok {
		return nil, &net.DNSError{Err: "no such host", Name: host, IsNotFound: true}
	}
	i := min(r.calls[host], len(answers)-1)
	r.calls[host]++
	return answers[i], nil
}

// everywhere resolves every name to a public address, so that only the
// rules that need no resolver refuse.
type everywhere struct{}

func (everywhere) LookupNetIP(context.Context, string, string) ([]netip.Addr, error) {
	return []netip.Addr{public}, nil
}

// wantURLRefused fails unless err is the 422 a client sees: EInvalid
// naming the field url.
func wantURLRefused(t *testing.T, raw string, err error) {
	t.Helper()
	var ke *kassa.Error
	if !errors.As(err, &ke) || ke.Kind != kassa.EInvalid || len(ke.Fields) != 1 || ke.Fields[0].Field != "url" {
		t.Errorf("CheckURL(%q) = %v, want an EInvalid error naming url", raw, err)
	}
}

// counting starts a real server on 127.0.0.1 that counts its requests.
func counting(t *testing.T, tls bool, h http.HandlerFunc) (*httptest.Server, *atomic.Int64) {
	t.Helper()
	hits := new(atomic.Int64)
	handler := func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		if h != nil {
			h(w, r)
		}
	}
	var srv *httptest.Server
	if tls {
		srv = httptest.NewUnstartedServer(http.HandlerFunc(handler))
		srv.Config.ErrorLog = log.New(io.Discard, "", 0) // the refused handshakes of TestClientTLSNeedsTrustedRoots
		srv.StartTLS()
	} else {
		srv = httptest.NewServer(http.HandlerFunc(handler))
	}
	t.Cleanup(srv.Close)
	return srv, hits
}

func port(t *testing.T, srv *httptest.Server) string {
	u, err := url.Parse(srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	return u.Port()
}

func TestCheckURLRefusesIPLiteralsInEveryNotation(t *testing.T) {
	for _, raw := range []string{
		"https://127.0.0.1/hook",
		"https://2130706433/hook",          // decimal
		"https://0x7f000001/hook",          // hex
		"https://0X7F000001/hook",          // hex, upper case
		"https://0177.0.0.1/hook",          // octal
		"https://0x7f.0.0.1/hook",          // hex first part
		"https://127.1/hook",               // short form
		"https://127.0.1/hook",             // short form
		"https://127.0.0.1./hook",          // trailing dot
		"https://%31%32%37.0.0.1/hook",     // percent-encoded
		"https://10.0.0.1/hook",            // private
		"https://169.254.169.254/latest",   // metadata
		"https://0/hook",                   // 0.0.0.0
		"https://0x/hook",                  // WHATWG: an empty hex number
		"https://8.8.8.8/hook",             // public: every literal is refused
		"https://[::1]/hook",               // IPv6 loopback
		"https://[::ffff:127.0.0.1]/hook",  // IPv4-mapped
		"https://[::ffff:7f00:1]/hook",     // IPv4-mapped, hex
		"https://[0:0:0:0:0:ffff:7f00:1]/", // IPv4-mapped, long
		"https://[::127.0.0.1]/hook",       // IPv4-compatible
		"https://[fe80::1%25eth0]/hook",    // zone
		"https://[fd00:ec2::254]/latest",   // AWS metadata over IPv6
		"https://[2606:4700:4700::1111]/",  // public IPv6
		"https://[::]/hook",                // unspecified
		"https://1.2.3.4:8443/hook",
	} {
		for _, opt := range []egress.Options{{Resolver: everywhere{}}, {Resolver: everywhere{}, AllowLoopback: true}} {
			if raw == "https://127.0.0.1/hook" || raw == "https://[::1]/hook" {
				if opt.AllowLoopback {
					continue // the canonical loopback literals are what the flag opens
				}
			}
			wantURLRefused(t, raw, egress.CheckURL(context.Background(), raw, opt))
		}
	}
}

func TestCheckURLRefusesInternalNames(t *testing.T) {
	for _, raw := range []string{
		"https://localhost/hook",
		"https://LOCALHOST./hook",
		"https://api.localhost/hook",
		"https://metadata/computeMetadata/v1/",
		"https://metadata.google.internal/computeMetadata/v1/",
		"https://ip-10-0-0-1.ec2.internal/",
		"https://printer.local/",
		"https://router.home.arpa/",
		"https://1.0.0.127.in-addr.arpa/",
		"https://nas.localdomain/",
		"https://intranet/",
		"https://box.lan/",
		"https://shop.test/",
		"https://hidden.onion/",
	} {
		wantURLRefused(t, raw, egress.CheckURL(context.Background(), raw, egress.Options{Resolver: everywhere{}}))
	}
}

func TestCheckURLRefusesNamesThatResolveInside(t *testing.T) {
	r := resolver(map[string][]string{
		"private.partner.com":   {"10.0.0.5"},
		"rfc1918.partner.com":   {"192.168.1.20"},
		"partly.partner.com":    {"93.184.216.34", "172.16.0.1"},
		"loop.partner.com":      {"127.0.0.1"},
		"metadata.partner.com":  {"169.254.169.254"},
		"cgnat.partner.com":     {"100.100.100.200"},
		"ula.partner.com":       {"2606:2800:220:1::1", "fd00:ec2::254"},
		"linklocal.partner.com": {"fe80::1"},
		"mapped.partner.com":    {"::ffff:10.0.0.1"},
		"nat64.partner.com":     {"64:ff9b::7f00:1"},
		"zero.partner.com":      {"0.0.0.0"},
		"multicast.partner.com": {"224.0.0.1"},
		"bcast.partner.com":     {"255.255.255.255"},
	})
	for host := range r.table {
		raw := "https://" + host + "/hook"
		wantURLRefused(t, raw, egress.CheckURL(context.Background(), raw, egress.Options{Resolver: r}))
	}
	// A name that does not exist is refused too.
	wantURLRefused(t, "https://gone.partner.com/", egress.CheckURL(context.Background(), "https://gone.partner.com/", egress.Options{Resolver: r}))
	// AllowLoopback opens loopback, nothing else.
	ok := egress.Options{Resolver: r, AllowLoopback: true}
	if err := egress.CheckURL(context.Background(), "https://loop.partner.com/", ok); err != nil {
		t.Errorf("AllowLoopback: a name resolving to 127.0.0.1 refused: %v", err)
	}
	wantURLRefused(t, "https://private.partner.com/", egress.CheckURL(context.Background(), "https://private.partner.com/", ok))
}

// TestCheckURLOddURLs is a table of the URLs partners (or attackers) send.
func TestCheckURLOddURLs(t *testing.T) {
	r := resolver(map[string][]string{
		"hooks.partner.com": {"93.184.216.34", "2606:2800:220:1:248:1893:25c8:1946"},
		"xn--bcher-kva.com": {"93.184.216.34"},
		"evil.com":          {"93.184.216.34"},
	})
	for _, tc := range []struct {
		raw  string
		ok   bool
		loop bool // with AllowLoopback
	}{
		{raw: "https://hooks.partner.com/kassa", ok: true},
		{raw: "https://HOOKS.Partner.com./kassa?x=1", ok: true},
		{raw: "https://hooks.partner.com:8443/kassa", ok: true},
		{raw: "https://hooks.partner.com:3000/kassa", ok: true},
		{raw: "https://xn--bcher-kva.com/", ok: true},
		{raw: "http://hooks.partner.com/kassa"},
		{raw: "http://hooks.partner.com/kassa", ok: true, loop: true},
		{raw: "ftp://hooks.partner.com/"},
		{raw: "gopher://hooks.partner.com/"},
		{raw: "file:///etc/passwd"},
		{raw: "javascript:alert(1)"},
		{raw: "https:hooks.partner.com"},
		{raw: "//hooks.partner.com/kassa"},
		{raw: "hooks.partner.com/kassa"},
		{raw: "https:///kassa"},
		{raw: "https://"},
		{raw: ""},
		{raw: "https://user:pw@hooks.partner.com/"},
		{raw: "https://user@hooks.partner.com/"},
		{raw: "https://hooks.partner.com@127.0.0.1/"},
		{raw: "https://evil.com\\@hooks.partner.com/"},
		{raw: "https://evil.com#@127.0.0.1/", ok: true}, // the host is evil.com; the fragment is never sent
		{raw: "https://hooks.partner.com:0/"},
		{raw: "https://hooks.partner.com:65536/"},
		{raw: "https://hooks.partner.com:99999999999999999999/"},
		{raw: "https://hooks.partner.com:/", ok: true},
		{raw: "https://hooks partner.com/"},
		{raw: "https://hooks.partner.com\t/"},
		{raw: "https://hooks.partner.com\n.evil/"},
		{raw: "https://bücher.com/"},
		{raw: "https://ｌｏｃａｌｈｏｓｔ/"},
		{raw: "https://hooks..partner.com/"},
		{raw: "https://-hooks.partner.com/"},
		{raw: "https://hooks_x.partner.com/"},
		{raw: "https://" + strings.Repeat("a", 64) + ".com/"},
		{raw: "https://hooks.partner.com/" + strings.Repeat("a", 2100)},
		{raw: "https://127.0.0.1/", ok: true, loop: true},
		{raw: "https://[::1]:8080/", ok: true, loop: true},
		{raw: "https://127.1/", loop: true},
		{raw: "https://[::ffff:127.0.0.1]/", loop: true},
		{raw: "https://localhost:8080/", ok: true, loop: true},
		{raw: "https://10.0.0.1/", loop: true},
	} {
		err := egress.CheckURL(context.Background(), tc.raw, egress.Options{Resolver: r, AllowLoopback: tc.loop})
		if tc.ok && err != nil {
			t.Errorf("CheckURL(%q, loopback %v) = %v, want accepted", tc.raw, tc.loop, err)
		}
		if !tc.ok {
			wantURLRefused(t, tc.raw, err)
		}
	}
}

// TestClientRefusesLoopbackByDefault: a real server on 127.0.0.1 is out
// of reach of the production client however it is named.
func TestClientRefusesLoopbackByDefault(t *testing.T) {
	srv, hits := counting(t, false, nil)
	r := resolver(map[string][]string{"loop.partner.com": {"127.0.0.1"}})
	c := egress.Client(egress.Options{Resolver: r})
	for _, u := range []string{
		srv.URL,
		"http://loop.partner.com:" + port(t, srv) + "/",
		"http://[::ffff:127.0.0.1]:" + port(t, srv) + "/",
	} {
		resp, err := c.Get(u)
		if err == nil {
			resp.Body.Close()
		}
		if !errors.Is(err, egress.ErrBlocked) {
			t.Errorf("GET %s: err = %v, want ErrBlocked", u, err)
		}
	}
	if n := hits.Load(); n != 0 {
		t.Errorf("the loopback server got %d requests, want 0", n)
	}
}

// TestClientRefusesRebinding: the name answers a public address when the
// URL is registered and 127.0.0.1 when the delivery dials; the dial is
// refused and the server on 127.0.0.1 hears nothing.
func TestClientRefusesRebinding(t *testing.T) {
	srv, hits := counting(t, false, nil)
	r := resolver(nil)
	r.add("rebind.partner.com", public.String())
	r.add("rebind.partner.com", "127.0.0.1")
	opt := egress.Options{Resolver: r}
	raw := "https://rebind.partner.com:" + port(t, srv) + "/hook"
	if err := egress.CheckURL(context.Background(), raw, opt); err != nil {
		t.Fatalf("CheckURL at registration: %v", err)
	}
	resp, err := egress.Client(opt).Get("http://rebind.partner.com:" + port(t, srv) + "/hook")
	if err == nil {
		resp.Body.Close()
	}
	var be *egress.BlockedError
	if !errors.As(err, &be) || be.Addr != netip.MustParseAddr("127.0.0.1") {
		t.Fatalf("GET after rebinding: err = %v, want a BlockedError for 127.0.0.1", err)
	}
	if n := hits.Load(); n != 0 {
		t.Errorf("the loopback server got %d requests, want 0", n)
	}
}

// TestClientDoesNotFollowRedirects: a 302 to the metadata service, or to
// another server, is the response itself.
func TestClientDoesNotFollowRedirects(t *testing.T) {
	other, otherHits := counting(t, false, nil)
	for _, target := range []string{"http://169.254.169.254/latest/meta-data/", other.URL + "/internal"} {
		srv, _ := counting(t, false, func(w http.ResponseWriter, r *http.Request) {
			http.Redirect(w, r, target, http.StatusFound)
		})
		resp, err := egress.Client(egress.Options{AllowLoopback: true}).Get(srv.URL)
		if err != nil {
			t.Fatalf("GET %s: %v", srv.URL, err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusFound || resp.Header.Get("Location") != target {
			t.Errorf("GET redirecting to %s: status %d, Location %q; want the 302 itself", target, resp.StatusCode, resp.Header.Get("Location"))
		}
	}
	if n := otherHits.Load(); n != 0 {
		t.Errorf("the redirect target got %d requests, want 0", n)
	}
}

// TestAllowLoopbackReachesLoopbackOnly: the development flag reaches a
// real TLS server on 127.0.0.1 and still refuses private and metadata
// addresses.
func TestAllowLoopbackReachesLoopbackOnly(t *testing.T) {
	srv, hits := counting(t, true, func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "ok") })
	r := resolver(map[string][]string{
		"private.partner.com":  {"10.1.2.3"},
		"metadata.partner.com": {"169.254.169.254"},
	})
	opt := egress.Options{AllowLoopback: true, Resolver: r, RootCAs: []*x509.Certificate{srv.Certificate()}}
	if err := egress.CheckURL(context.Background(), srv.URL, opt); err != nil {
		t.Fatalf("CheckURL(%s) with AllowLoopback: %v", srv.URL, err)
	}
	c := egress.Client(opt)
	resp, err := c.Get(srv.URL)
	if err != nil {
		t.Fatalf("GET %s: %v", srv.URL, err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK || string(body) != "ok" || hits.Load() != 1 {
		t.Fatalf("GET %s: %d %q, %d hits; want 200 ok once", srv.URL, resp.StatusCode, body, hits.Load())
	}
	for _, raw := range []string{"https://10.0.0.1/", "https://169.254.169.254/", "https://private.partner.com/", "https://metadata.partner.com/"} {
		wantURLRefused(t, raw, egress.CheckURL(context.Background(), raw, opt))
	}
	for _, u := range []string{"http://10.1.2.3/", "http://169.254.169.254/latest/meta-data/", "http://[fd00:ec2::254]/", "http://private.partner.com/", "http://metadata.partner.com/"} {
		resp, err := c.Get(u)
		if err == nil {
			resp.Body.Close()
		}
		if !errors.Is(err, egress.ErrBlocked) {
			t.Errorf("GET %s with AllowLoopback: err = %v, want ErrBlocked", u, err)
		}
	}
}

// TestClientTLSNeedsTrustedRoots: without the test server's root the
// handshake fails; the extra root is what makes it pass.
func TestClientTLSNeedsTrustedRoots(t *testing.T) {
	srv, _ := counting(t, true, nil)
	resp, err := egress.Client(egress.Options{AllowLoopback: true}).Get(srv.URL)
	if err == nil {
		resp.Body.Close()
		t.Fatalf("GET %s with system roots only succeeded, want a certificate error", srv.URL)
	}
	var unknown x509.UnknownAuthorityError
	if !errors.As(err, &unknown) {
		t.Errorf("GET %s: err = %v, want an unknown-authority error", srv.URL, err)
	}
}

// TestClientTimesOut: a receiver that never answers costs one attempt's
// timeout, not forever.
func TestClientTimesOut(t *testing.T) {
	release := make(chan struct{})
	srv, _ := counting(t, false, func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-release:
		case <-r.Context().Done():
		}
	})
	t.Cleanup(func() { close(release) }) // runs before srv.Close
	resp, err := egress.Client(egress.Options{AllowLoopback: true, Timeout: 200 * time.Millisecond}).Get(srv.URL)
	if err == nil {
		resp.Body.Close()
		t.Fatal("GET of a hanging receiver succeeded")
	}
	var ne net.Error
	if !errors.As(err, &ne) || !ne.Timeout() {
		t.Errorf("GET of a hanging receiver: err = %v, want a timeout", err)
	}
}

// FuzzCheckURL: whatever the input, an accepted URL is https (or http with
// AllowLoopback), names a host with a dot, and no reading of that host
// (netip, inet_aton's legacy forms) is an IP address.
func FuzzCheckURL(f *testing.F) {
	for _, s := range []string{
		"https://hooks.partner.com/x", "https://0x7f.1/", "https://017700000001/", "https://127.0.0.1.nip.io/",
		"https://[::ffff:a00:1]/", "https://a.b.c.1e/", "https://1.2.3.0x/", "https://%30x7f000001/",
		"https://[v1.fe80::a+en1]/", "https://xn--/", "HTTPS://A.COM", "https://a.com:443:443/",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, raw string) {
		if egress.CheckURL(context.Background(), raw, egress.Options{Resolver: everywhere{}}) != nil {
			return
		}
		u, err := url.Parse(raw)
		if err != nil || u.Scheme != "https" || u.User != nil {
			t.Fatalf("accepted %q: scheme %q, user %v, parse error %v", raw, u.Scheme, u.User, err)
		}
		host := strings.TrimSuffix(strings.ToLower(u.Hostname()), ".")
		if _, err := netip.ParseAddr(host); err == nil || legacyIPv4(host) || !strings.Contains(host, ".") {
			t.Fatalf("accepted %q whose host %q is an address or a single label", raw, host)
		}
	})
}

// legacyIPv4 reports whether host parses as inet_aton does: one to four
// parts, each decimal, octal (leading 0) or hex (0x).
func legacyIPv4(host string) bool {
	parts := strings.Split(host, ".")
	if len(parts) > 4 {
		return false
	}
	for _, p := range parts {
		if _, err := strconv.ParseUint(p, 0, 32); err != nil {
			return false
		}
	}
	return true
}
