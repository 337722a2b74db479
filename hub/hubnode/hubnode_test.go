package hubnode

import (
	"io"
	"net/http"
	"os"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"kassa.dev/shared/demo"
	"kassa.dev/shared/node/nodetest"
	"kassa.dev/shared/pgtest"
)

// TestMain runs the package's tests and then stops its throwaway
// PostgreSQL, if KASSA_TEST_STORE=postgres started one.
func TestMain(m *testing.M) { os.Exit(pgtest.Main(m)) }

// startHub runs the hub's main with args and, with
// KASSA_TEST_STORE=postgres, on a fresh database (pgtest.HubArgs).
func startHub(t *testing.T, env map[string]string, args ...string) *nodetest.Proc {
	t.Helper()
	return nodetest.Start(t, Run, env, append(args, pgtest.HubArgs(t)...)...)
}

// TestHubBinaryServesDemoAndLeafPort runs the hub's main with the demo
// seed and free ports, logs in and reads the catalog and locations, and
// checks that the per-org rate limit headers of the hub are present.
func TestHubBinaryServesDemoAndLeafPort(t *testing.T) {
	p := startHub(t, nil, "--demo", "--http-addr", "127.0.0.1:0", "--data-dir", t.TempDir(),
		"--leaf-port", "-1")
	if !strings.Contains(p.Output(), "leaf nats-leaf://127.0.0.1:") || !strings.Contains(p.Output(), "owner@demo.test") {
		t.Fatalf("hub output lacks the leaf URL or the demo logins:\n%s", p.Output())
	}
	tok := p.Login(t, "manager@demo.test", demo.Password)
	var locs struct {
		Data []map[string]any `json:"data"`
	}
	if st := p.Call(t, "GET", "/api/v1/locations", tok, nil, &locs); st != 200 || len(locs.Data) != 1 || locs.Data[0]["currency"] != "AUD" {
		t.Fatalf("locations: %d %v", st, locs.Data)
	}
	var cats struct {
		Data []map[string]any `json:"data"`
	}
	if st := p.Call(t, "GET", "/api/v1/catalog/categories", tok, nil, &cats); st != 200 || len(cats.Data) != 5 {
		t.Fatalf("categories: %d %v", st, cats.Data)
	}
}

// TestHubOperatorTokenCreatesTenant runs the hub with --operator-token
// (from the environment): the token creates a tenant whose owner logs in
// at once; a hub given a short token does not start.
func TestHubOperatorTokenCreatesTenant(t *testing.T) {
	const op = "an-operator-token-of-at-least-32-chars"
	p := startHub(t, map[string]string{"KASSA_OPERATOR_TOKEN": op}, "--http-addr", "127.0.0.1:0",
		"--data-dir", t.TempDir(), "--leaf-port", "-1")
	body := map[string]any{"name": "Reseller Client", "currency": "EUR",
		"owner":    map[string]any{"email": "owner@client.test", "name": "Owner", "password": "a long password"},
		"location": map[string]any{"name": "Main", "timezone": "Europe/Berlin"}}
	var out struct {
		Data struct {
			CreatedBy string `json:"created_by"`
		} `json:"data"`
	}
	if st := p.Call(t, "POST", "/api/v1/partners/tenants", op, body, &out); st != 201 || out.Data.CreatedBy != "operator" {
		t.Fatalf("create tenant: %d %+v", st, out)
	}
	if strings.Contains(p.Output(), op) {
		t.Fatal("the operator token is in the hub's output")
	}
	p.Login(t, "owner@client.test", "a long password")

	err := Run(t.Context(), []string{"--operator-token", "short", "--data-dir", t.TempDir()}, func(string) string { return "" }, io.Discard, io.Discard)
	if err == nil || !strings.Contains(err.Error(), "--operator-token") {
		t.Fatalf("a short operator token: %v", err)
	}
}

// TestHubPublicURLFromTheEnvironment: KASSA_PUBLIC_URL is the OAuth
// metadata's issuer; a hub given a URL that cannot be one does not start.
func TestHubPublicURLFromTheEnvironment(t *testing.T) {
	p := startHub(t, map[string]string{"KASSA_PUBLIC_URL": "https://pos.example.com/"}, "--http-addr", "127.0.0.1:0",
		"--data-dir", t.TempDir(), "--leaf-port", "-1")
	var m map[string]any
	if st := p.Call(t, "GET", "/.well-known/oauth-authorization-server", "", nil, &m); st != 200 || m["issuer"] != "https://pos.example.com" ||
		m["token_endpoint"] != "https://pos.example.com/api/v1/oauth/token" {
		t.Fatalf("metadata: %d %v", st, m)
	}
	err := Run(t.Context(), []string{"--public-url", "pos.example.com", "--data-dir", t.TempDir()}, func(string) string { return "" }, io.Discard, io.Discard)
	if err == nil || !strings.Contains(err.Error(), "--public-url") {
		t.Fatalf("a hub with --public-url pos.example.com: %v", err)
	}
}

// TestHubMetricsOnTheirOwnAddressBehindAToken: --metrics-addr moves
// /metrics off the API listener, KASSA_METRICS_TOKEN guards it; a short
// token does not start.
func TestHubMetricsOnTheirOwnAddressBehindAToken(t *testing.T) {
	const token = "scraper-token-0123456789"
	p := startHub(t, map[string]string{"KASSA_METRICS_TOKEN": token, "KASSA_WRITERS": "3"}, "--http-addr", "127.0.0.1:0",
		"--data-dir", t.TempDir(), "--leaf-port", "-1", "--metrics-addr", "127.0.0.1:0")
	m := regexp.MustCompile(`metrics at (http://[0-9.:]+/metrics)`).FindStringSubmatch(p.Output())
	if m == nil {
		t.Fatalf("no metrics address in the output:\n%s", p.Output())
	}
	if st := p.Call(t, "GET", "/metrics", token, nil, nil); st != 404 {
		t.Fatalf("/metrics on the API listener: %d", st)
	}
	scrape := func(tok string) (int, string) {
		req, _ := http.NewRequest("GET", m[1], nil)
		req.Header.Set("Authorization", "Bearer "+tok)
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		b, _ := io.ReadAll(res.Body)
		return res.StatusCode, string(b)
	}
	if st, _ := scrape("wrong"); st != 401 {
		t.Fatalf("scrape with a wrong token: %d", st)
	}
	if st, body := scrape(token); st != 200 || !strings.Contains(body, "kassa_sync_edges_connected") {
		t.Fatalf("scrape: %d", st)
	}
	if _, body := scrape(token); !strings.Contains(body, "kassa_store_write_loops "+wantLoops(3)) {
		t.Errorf("the hub runs --writers 3 write loops, want %s on this store:\n%s", wantLoops(3), grepLines(body, "kassa_store_write"))
	}
	err := Run(t.Context(), []string{"--metrics-token", "short", "--data-dir", t.TempDir()}, func(string) string { return "" }, io.Discard, io.Discard)
	if err == nil || !strings.Contains(err.Error(), "--metrics-token") {
		t.Fatalf("a hub with a short --metrics-token: %v", err)
	}
}

// wantLoops is how many write loops a hub given --writers n runs on the
// test's store: n on PostgreSQL, one on SQLite whatever it is given.
func wantLoops(n int) string {
	if pgtest.OnPostgres() {
		return strconv.Itoa(n)
	}
	return "1"
}

// grepLines are the lines of s that contain sub.
func grepLines(s, sub string) string {
	var out []string
	for _, l := range strings.Split(s, "\n") {
		if strings.Contains(l, sub) {
			out = append(out, l)
		}
	}
	return strings.Join(out, "\n")
}
