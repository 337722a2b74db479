package httpapi

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"testing"

	"kassa.dev/shared/kassa"
)

// panicky is a product service whose list panics: a bug that must become a
// 500 problem with the request id, never a dropped connection or a stack
// trace in the body.
type panicky struct{ kassa.ProductService }

func (panicky) FindProducts(context.Context, kassa.ProductFilter) (kassa.List[kassa.Product], error) {
	var m map[string]int
	m["boom"]++ // nil map write
	return kassa.List[kassa.Product]{}, nil
}

// anyToken authenticates every bearer token as an owner of org "o".
type anyToken struct{ kassa.AuthService }

func (anyToken) Authenticate(context.Context, string) (*kassa.Actor, error) {
	return &kassa.Actor{OrgID: "o", UserID: "u", Role: kassa.RoleOwner, Scopes: kassa.RoleScopes(kassa.RoleOwner)}, nil
}

func startServer(t *testing.T, svc Services, cfg Config, log *slog.Logger) string {
	t.Helper()
	s := New(cfg, svc, log)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go s.Serve(ln)
	t.Cleanup(func() { s.Shutdown(context.Background()) })
	return "http://" + ln.Addr().String()
}

func TestPanicBecomesProblemAndIsLoggedWithRequestID(t *testing.T) {
	var logs bytes.Buffer
	url := startServer(t, Services{Auth: anyToken{}, Products: panicky{}}, Config{Node: kassa.NodeEdge},
		slog.New(slog.NewJSONHandler(&logs, nil)))
	req, _ := http.NewRequest("GET", url+"/api/v1/catalog/products", nil)
	req.Header.Set("Authorization", "Bearer secret-token-value")
	req.Header.Set("X-Request-Id", "req-123")
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(res.Body)
	res.Body.Close()
	var p Problem
	json.Unmarshal(body, &p)
	if res.StatusCode != 500 || res.Header.Get("Content-Type") != "application/problem+json" ||
		p.Type != "https://kassa.dev/problems/internal" || p.RequestID != "req-123" || res.Header.Get("X-Request-Id") != "req-123" {
		t.Fatalf("panic answer: %d %s %v", res.StatusCode, body, res.Header)
	}
	if strings.Contains(string(body), "nil map") || strings.Contains(string(body), "goroutine") {
		t.Fatalf("panic detail leaked to the client: %s", body)
	}
	if !strings.Contains(logs.String(), `"request_id":"req-123"`) || !strings.Contains(logs.String(), "nil map") {
		t.Fatalf("panic not logged with the request id: %s", logs.String())
	}
	if strings.Contains(logs.String(), "secret-token-value") {
		t.Fatal("bearer token written to the log")
	}
	// The server still serves after the panic.
	res, err = http.Get(url + "/healthz")
	if err != nil || res.StatusCode != 200 {
		t.Fatalf("healthz after panic: %v %v", res, err)
	}
	res.Body.Close()
}

func TestRequestIDMintedWhenMissingOrInsane(t *testing.T) {
	url := startServer(t, Services{}, Config{Node: kassa.NodeHub}, slog.New(slog.DiscardHandler))
	for _, sent := range []string{"", strings.Repeat("x", 200), "has space"} {
		req, _ := http.NewRequest("GET", url+"/healthz", nil)
		if sent != "" {
			req.Header.Set("X-Request-Id", sent)
		}
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		if got := res.Header.Get("X-Request-Id"); got == "" || got == sent || len(got) != 36 {
			t.Fatalf("sent %q, got request id %q", sent, got)
		}
	}
}

func TestRateLimitHeadersAnd429PerOrg(t *testing.T) {
	url := startServer(t, Services{Auth: anyToken{}, Locations: emptyLocations{}},
		Config{Node: kassa.NodeHub, RatePerMinute: 600, RateBurst: 3}, slog.New(slog.DiscardHandler))
	get := func() *http.Response {
		req, _ := http.NewRequest("GET", url+"/api/v1/locations", nil)
		req.Header.Set("Authorization", "Bearer t")
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		return res
	}
	for i := range 3 {
		res := get()
		if res.StatusCode != 200 || res.Header.Get("X-RateLimit-Limit") != "600" || res.Header.Get("X-RateLimit-Remaining") != string(rune('2'-i)) {
			t.Fatalf("request %d: %d %v", i, res.StatusCode, res.Header)
		}
	}
	res := get()
	if res.StatusCode != 429 || res.Header.Get("Retry-After") != "1" || res.Header.Get("X-RateLimit-Remaining") != "0" {
		t.Fatalf("over the burst: %d %v", res.StatusCode, res.Header)
	}
}

type emptyLocations struct{ kassa.LocationService }

func (emptyLocations) FindLocations(context.Context, kassa.Page) (kassa.List[kassa.Location], error) {
	return kassa.List[kassa.Location]{}, nil
}

func TestHealthReadyAndMetrics(t *testing.T) {
	ready := error(nil)
	url := startServer(t, Services{Ready: func(context.Context) error { return ready }}, Config{Node: kassa.NodeEdge}, slog.New(slog.DiscardHandler))
	status := func(path string) (int, string) {
		res, err := http.Get(url + path)
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		b, _ := io.ReadAll(res.Body)
		return res.StatusCode, string(b)
	}
	if st, _ := status("/healthz"); st != 200 {
		t.Fatalf("healthz %d", st)
	}
	if st, _ := status("/readyz"); st != 200 {
		t.Fatalf("readyz %d", st)
	}
	ready = io.ErrUnexpectedEOF
	if st, _ := status("/readyz"); st != 503 {
		t.Fatalf("readyz with a failing dependency: %d", st)
	}
	st, body := status("/metrics")
	if st != 200 || !strings.Contains(body, `kassa_http_requests_total{method="GET",route="/readyz",status="503"} 1`) {
		t.Fatalf("metrics %d:\n%s", st, body)
	}
}
