package edgenode

import (
	"net"
	"net/http"
	"testing"
	"time"

	"kassa.dev/shared/demo"
	"kassa.dev/shared/kassa"
	"kassa.dev/shared/node/nodetest"
)

type list struct {
	Data       []map[string]any `json:"data"`
	NextCursor *string          `json:"next_cursor"`
}

// TestEdgeBinaryDemoStartRestart runs the edge's main as a shell would:
// with --demo it seeds the demo org and serves the catalog; stopped and
// started again on the same data directory without --demo, it keeps
// everything and seeds nothing twice.
func TestEdgeBinaryDemoStartRestart(t *testing.T) {
	dir := t.TempDir()
	args := []string{"--http-addr", "127.0.0.1:0", "--data-dir", dir}
	var env map[string]string
	p := nodetest.Start(t, Run, env, append(args, "--demo")...)
	tok := p.Login(t, "cashier@demo.test", demo.Password)
	var products list
	if st := p.Call(t, "GET", "/api/v1/catalog/products?limit=200", tok, nil, &products); st != 200 || len(products.Data) != 15 {
		t.Fatalf("demo catalog: status %d, %d products", st, len(products.Data))
	}
	var ready map[string]any
	if st := p.Call(t, "GET", "/readyz", "", nil, &ready); st != 200 {
		t.Fatalf("readyz %d", st)
	}
	p.Stop(t)

	p = nodetest.Start(t, Run, env, args...)
	tok = p.Login(t, "owner@demo.test", demo.Password)
	if st := p.Call(t, "GET", "/api/v1/catalog/products?limit=200", tok, nil, &products); st != 200 || len(products.Data) != 15 {
		t.Fatalf("after restart: status %d, %d products", st, len(products.Data))
	}
	var groups list
	if p.Call(t, "GET", "/api/v1/catalog/modifiers/groups", tok, nil, &groups); len(groups.Data) != 1 || groups.Data[0]["name"] != "Milk" {
		t.Fatalf("modifier groups after restart: %v", groups.Data)
	}
}

// TestEdgeRefusesBadConfiguration checks that a bad flag value stops the
// binary with an error instead of starting half-configured.
func TestEdgeRefusesBadConfiguration(t *testing.T) {
	for name, value := range map[string]string{
		"KASSA_BODY_LIMIT":      "lots",
		"KASSA_TRUSTED_PROXIES": "10.0.0.0/33",
	} {
		err := Run(t.Context(), []string{"--data-dir", t.TempDir()}, func(k string) string {
			return map[string]string{name: value}[k]
		}, nil, discard{})
		if err == nil {
			t.Errorf("edge started with %s=%s", name, value)
		}
	}
}

// forwarding is a reverse proxy's connection to the node: from the
// proxy's address, with X-Forwarded-For naming the client.
type forwarding struct {
	base   http.RoundTripper
	client string
}

func (f forwarding) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("X-Forwarded-For", f.client)
	return f.base.RoundTrip(r)
}

// TestEdgeTrustsTheProxiesOfKASSA_TRUSTED_PROXIES: an edge started with
// KASSA_TRUSTED_PROXIES locks a guesser out by the address its proxy
// forwards, and the owner coming through the same proxy still logs in.
func TestEdgeTrustsTheProxiesOfKASSA_TRUSTED_PROXIES(t *testing.T) {
	const proxy = "127.0.0.60"
	p := nodetest.Start(t, Run, map[string]string{"KASSA_TRUSTED_PROXIES": "10.0.0.0/8," + proxy},
		"--demo", "--http-addr", "127.0.0.1:0", "--data-dir", t.TempDir())
	d := &net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(proxy)}, Timeout: 5 * time.Second}
	via := func(client string) *http.Client {
		return &http.Client{Transport: forwarding{&http.Transport{DialContext: d.DialContext, DisableKeepAlives: true}, client}}
	}
	login := map[string]string{"email": "owner@demo.test", "password": "wrong"}
	p.Client = via("203.0.113.7")
	for range kassa.LockoutFreeFailures - 1 {
		if st := p.Call(t, "POST", "/api/v1/auth/login", "", login, nil); st != 401 {
			t.Fatalf("a wrong password: %d", st)
		}
	}
	if st := p.Call(t, "POST", "/api/v1/auth/login", "", login, nil); st != 429 {
		t.Fatalf("the guesser's fifth failure: %d, want 429", st)
	}
	p.Client = via("203.0.113.8")
	p.Login(t, "owner@demo.test", demo.Password)
}

type discard struct{}

func (discard) Write(p []byte) (int, error) { return len(p), nil }
