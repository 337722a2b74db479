package httpapi_test

import (
	"log/slog"
	"strconv"
	"strings"
	"testing"

	"kassa.dev/shared/httpapi"
	"kassa.dev/shared/kassa"
	"kassa.dev/shared/node"
	"kassa.dev/shared/node/nodetest"
)

// trusting sets the node's trusted proxies.
func trusting(t *testing.T, list string) func(*node.Config) {
	t.Helper()
	p, err := httpapi.ParseTrustedProxies(list)
	if err != nil {
		t.Fatal(err)
	}
	return func(c *node.Config) { c.TrustedProxies = p }
}

const xff = "X-Forwarded-For"

// TestForwardedClientsBehindATrustedProxyAreLockedOutApart: behind a
// trusted reverse proxy (127.0.0.1), the lockout goes by the address the
// proxy forwards, so a guesser does not lock the owner out when both come
// through the proxy, and what the guesser writes into X-Forwarded-For
// itself (left of what the proxy appends) does not get it out of its
// lock. The access log shows the forwarded address.
func TestForwardedClientsBehindATrustedProxyAreLockedOutApart(t *testing.T) {
	var logs nodetest.SyncBuffer
	tn := MustStartNodeLog(t, kassa.NodeEdge, trusting(t, "127.0.0.1"), slog.New(slog.NewJSONHandler(&logs, nil)))
	o := tn.MustOrg("Proxied Cafe")
	const proxy, guesser, owner = "127.0.0.1", "203.0.113.7", "203.0.113.8"

	for i := range kassa.LockoutFreeFailures - 1 {
		mustProblem(t, tn.loginFrom(proxy, o.OwnerEmail, "guess"+strconv.Itoa(i), xff, guesser), 401, "unauthorized")
	}
	if s := mustRetryAfter(t, tn.loginFrom(proxy, o.OwnerEmail, "guess-5", xff, guesser)); s != 15 {
		t.Fatalf("lock of the forwarded guesser %d s, want 15", s)
	}
	// The guesser prepends a made-up address; the proxy appends its real one.
	mustRetryAfter(t, tn.loginFrom(proxy, o.OwnerEmail, testPassword, xff, "198.51.100.9, "+guesser))
	mustRetryAfter(t, tn.loginFrom(proxy, o.OwnerEmail, testPassword, xff, "198.51.100.9", xff, guesser))
	// The owner, through the same proxy, is not locked out by it.
	if r := tn.loginFrom(proxy, o.OwnerEmail, testPassword, xff, owner); r.Status != 200 {
		t.Fatalf("the owner through the proxy while the guesser is locked: %d %s", r.Status, r.Body)
	}
	out := logs.String()
	for _, ip := range []string{guesser, owner} {
		if !strings.Contains(out, `"path":"/api/v1/auth/login","status":`) || !strings.Contains(out, `"ip":"`+ip+`"`) {
			t.Errorf("the access log does not show the login of %s:\n%s", ip, out)
		}
	}
}

// TestForwardedForCountsOnlyFromATrustedProxy: the per-address login
// throttle (3 at once) goes by the forwarded client only when the peer is
// a trusted proxy; a client that forges X-Forwarded-For itself, with no
// trusted proxy or from a peer that is not one, stays in its own bucket.
func TestForwardedForCountsOnlyFromATrustedProxy(t *testing.T) {
	for _, c := range []struct {
		name, trusted, peer string
		apart               bool // forwarded clients have buckets of their own
	}{
		{"through a trusted proxy", "127.0.0.30", "127.0.0.30", true},
		{"through a trusted range", "127.0.0.0/24, 10.0.0.0/8", "127.0.0.31", true},
		{"no trusted proxy", "", "127.0.0.32", false},
		{"a peer that is not a trusted proxy", "10.0.0.0/8, 127.0.0.30", "127.0.0.33", false},
	} {
		t.Run(c.name, func(t *testing.T) {
			tn := MustStartNode(t, kassa.NodeEdge, func(cfg *node.Config) {
				trusting(t, c.trusted)(cfg)
				cfg.LoginIPPerMinute, cfg.LoginIPBurst = 2, 3
			})
			for i := range 3 {
				forged := "203.0.113." + strconv.Itoa(10+i)
				if r := tn.loginFrom(c.peer, "x@proxy.test", "x", xff, forged); r.Status != 401 {
					t.Fatalf("attempt %d within the burst: %d %s", i, r.Status, r.Body)
				}
			}
			r := tn.loginFrom(c.peer, "x@proxy.test", "x", xff, "203.0.113.99")
			if c.apart && r.Status != 401 {
				t.Fatalf("a fourth forwarded client was throttled: %d %s", r.Status, r.Body)
			}
			if !c.apart {
				mustRetryAfter(t, r)
			}
		})
	}
}

// TestMalformedForwardedForChangesNothing: from a trusted proxy, an
// X-Forwarded-For that names no client (garbage, a port, a zone, empty
// entries, bytes that are not UTF-8) is no error and counts against the
// proxy's own address, as a request without the header would; a well
// formed one still counts apart.
func TestMalformedForwardedForChangesNothing(t *testing.T) {
	const proxy = "127.0.0.40"
	malformed := []string{"garbage", " , ,", "203.0.113.7:4711", "[2001:db8::7]", "fe80::1%eth0", "203.0.113.7,", "\xff\xfe",
		strings.Repeat("x", 2000)}
	tn := MustStartNode(t, kassa.NodeEdge, func(c *node.Config) {
		trusting(t, proxy)(c)
		c.LoginIPPerMinute, c.LoginIPBurst = 2, len(malformed)
	})
	for i, h := range malformed { // an e-mail each: the lockout stays out of it
		if r := tn.loginFrom(proxy, strconv.Itoa(i)+"@proxy.test", "x", xff, h); r.Status != 401 {
			t.Fatalf("X-Forwarded-For %q: %d %s", h, r.Status, r.Body)
		}
	}
	mustRetryAfter(t, tn.loginFrom(proxy, "y@proxy.test", "x"))
	if r := tn.loginFrom(proxy, "z@proxy.test", "x", xff, "203.0.113.7"); r.Status != 401 {
		t.Fatalf("a forwarded client after the proxy's own bucket ran dry: %d %s", r.Status, r.Body)
	}
}
