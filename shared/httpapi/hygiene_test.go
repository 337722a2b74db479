package httpapi_test

import (
	"bytes"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"testing/fstest"
	"unicode/utf8"

	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"kassa.dev/shared/kassa"
	"kassa.dev/shared/node"
)

// The tests of this file hold the HTTP hygiene of issue 10: /metrics keeps
// answering after any traffic (no string of Fiber's reused buffers kept
// past its request), 405 with Allow for a wrong method, invalid UTF-8
// refused, and the security headers of pages and API responses.

// hyCall is one request of the mixed traffic and the labels it must leave
// in kassa_http_requests_total.
type hyCall struct {
	method, path string
	body         func(n int64) any // nil: no body
	route        string
	status       int
}

// TestMetricsParseAfterMixedTraffic: after concurrent traffic of many
// methods, routes and statuses over kept-alive connections, /metrics
// answers 200 with a body Prometheus parses, and its request counter has
// exactly the methods, route patterns and statuses sent, each counted once
// per request.
func TestMetricsParseAfterMixedTraffic(t *testing.T) {
	tn := MustStartNode(t, kassa.NodeEdge, nil)
	o := tn.MustOrg("Metrics Traffic")
	r := tn.Do("POST", "/api/v1/catalog/products", o.Owner, map[string]any{"name": "Latte", "sku": "LAT", "base_price": 450})
	if r.Status != 201 {
		t.Fatalf("create product: %d %s", r.Status, r.Body)
	}
	product := r.Data()["id"].(string)
	const products = "/api/v1/catalog/products"
	calls := []hyCall{
		{"GET", "/healthz", nil, "/healthz", 200},
		{"GET", "/readyz", nil, "/readyz", 200},
		{"GET", products, nil, products, 200},
		{"HEAD", products, nil, products, 200},
		{"POST", products, func(n int64) any {
			return map[string]any{"name": "Tea", "sku": fmt.Sprintf("TEA-%d", n), "base_price": 300}
		}, products, 201},
		{"POST", products, func(int64) any { return map[string]any{"name": "No sku"} }, products, 422},
		{"GET", products + "/" + product, nil, products + "/:id", 200},
		{"PATCH", products + "/" + product, func(int64) any { return map[string]any{"description": "hot"} }, products + "/:id", 200},
		{"DELETE", products + "/" + ordNoSuchID, nil, products + "/:id", 404},
		{"GET", "/api/v1/auth/me", nil, "/api/v1/auth/me", 200},
		{"PUT", products, func(int64) any { return map[string]any{} }, "unmatched", 405},
		{"OPTIONS", "/api/v1/auth/me", nil, "unmatched", 405},
		{"GET", "/nope/" + strings.Repeat("x", 40), nil, "unmatched", 404},
		{"POST", "/api/v1/nope", func(int64) any { return map[string]any{} }, "unmatched", 404},
	}
	const workers, rounds = 6, 8
	var seq atomic.Int64
	var wg sync.WaitGroup
	for w := range workers {
		wg.Go(func() {
			for i := range rounds {
				// Each worker walks the table from its own offset, so that
				// requests of every kind follow each other on a connection.
				for j := range calls {
					c := calls[(j+w+i)%len(calls)]
					var body any
					if c.body != nil {
						body = c.body(seq.Add(1))
					}
					if r := tn.Do(c.method, c.path, o.Owner, body); r.Status != c.status {
						t.Errorf("%s %s: %d, want %d: %s", c.method, c.path, r.Status, c.status, r.Body)
					}
				}
			}
		})
	}
	wg.Wait()
	want := map[[3]string]float64{}
	for _, c := range calls {
		want[[3]string{c.method, c.route, fmt.Sprint(c.status)}] += workers * rounds
	}
	// The 201 of the setup and the one of login before it.
	want[[3]string{"POST", products, "201"}]++
	want[[3]string{"POST", "/api/v1/auth/login", "200"}]++

	m := tn.Do("GET", "/metrics", "", nil)
	if m.Status != 200 {
		t.Fatalf("/metrics: %d\n%s", m.Status, m.Body)
	}
	parser := expfmt.NewTextParser(model.UTF8Validation)
	families, err := parser.TextToMetricFamilies(bytes.NewReader(m.Body))
	if err != nil {
		t.Fatalf("/metrics does not parse: %v\n%s", err, m.Body)
	}
	fam := families["kassa_http_requests_total"]
	if fam == nil {
		t.Fatalf("no kassa_http_requests_total in /metrics")
	}
	got := map[[3]string]float64{}
	for _, mt := range fam.GetMetric() {
		l := map[string]string{}
		for _, lp := range mt.GetLabel() {
			l[lp.GetName()] = lp.GetValue()
		}
		got[[3]string{l["method"], l["route"], l["status"]}] += mt.GetCounter().GetValue()
	}
	if !maps.Equal(got, want) {
		keys := slices.Collect(maps.Keys(got))
		for k := range want {
			if _, ok := got[k]; !ok {
				keys = append(keys, k)
			}
		}
		slices.SortFunc(keys, func(a, b [3]string) int { return strings.Compare(strings.Join(a[:], " "), strings.Join(b[:], " ")) })
		var b strings.Builder
		for _, k := range keys {
			if got[k] != want[k] {
				fmt.Fprintf(&b, "  %q: got %v, want %v\n", k, got[k], want[k])
			}
		}
		t.Fatalf("kassa_http_requests_total differs:\n%s", b.String())
	}
	// The latency histogram has the same method and route pairs.
	pairs := map[[2]string]bool{}
	for _, mt := range families["kassa_http_request_duration_seconds"].GetMetric() {
		l := map[string]string{}
		for _, lp := range mt.GetLabel() {
			l[lp.GetName()] = lp.GetValue()
		}
		pairs[[2]string{l["method"], l["route"]}] = true
	}
	wantPairs := map[[2]string]bool{}
	for k := range want {
		wantPairs[[2]string{k[0], k[1]}] = true
	}
	if !maps.Equal(pairs, wantPairs) {
		t.Errorf("latency histograms for %v, want %v", slices.Collect(maps.Keys(pairs)), slices.Collect(maps.Keys(wantPairs)))
	}
}

// hyPages are stand-ins for the KDS and console pages of package web.
var hyPages = fstest.MapFS{
	"index.html": {Data: []byte(`<!doctype html><link rel="stylesheet" href="app.css"><script src="app.js"></script>`)},
	"app.js":     {Data: []byte(`console.log("hi")`)},
	"app.css":    {Data: []byte(`body{margin:0}`)},
}

func hyStartWithPages(t *testing.T) (*testNode, *testOrg) {
	t.Helper()
	tn := MustStartNode(t, kassa.NodeEdge, func(c *node.Config) { c.KDSPage, c.ConsolePage = hyPages, hyPages })
	return tn, tn.MustOrg("Hygiene Cafe")
}

// TestWrongMethodIs405WithAllow: a method the path does not have is a 405
// problem whose Allow header lists the path's methods, on API routes, the
// node's own endpoints and the pages, with or without a token; an unknown
// path stays 404; GET routes answer HEAD. None of it changes anything.
func TestWrongMethodIs405WithAllow(t *testing.T) {
	tn, o := hyStartWithPages(t)
	r := tn.Do("POST", "/api/v1/catalog/categories", o.Owner, map[string]any{"name": "Drinks"})
	if r.Status != 201 {
		t.Fatalf("create category: %d %s", r.Status, r.Body)
	}
	cat := r.Data()["id"].(string)
	cases := []struct {
		method, path string
		status       int
		allow        string // sorted, comma-separated; "" for no Allow
	}{
		{"PUT", "/api/v1/catalog/products", 405, "GET,HEAD,POST"},
		{"DELETE", "/api/v1/catalog/products", 405, "GET,HEAD,POST"},
		{"DELETE", "/api/v1/catalog/categories/" + cat, 405, "GET,HEAD,PATCH"},
		{"PUT", "/api/v1/catalog/categories/" + ordNoSuchID, 405, "GET,HEAD,PATCH"},
		{"DELETE", "/api/v1/locations/" + ordNoSuchID, 405, "GET,HEAD,PATCH"},
		{"GET", "/api/v1/auth/login", 405, "POST"},
		{"GET", "/api/v1/orders/" + ordNoSuchID + "/complete", 405, "POST"},
		{"POST", "/api/v1/kds/stream", 405, "GET"},
		{"HEAD", "/api/v1/kds/stream", 405, "GET"},
		{"OPTIONS", "/api/v1/auth/me", 405, "GET,HEAD"},
		{"POST", "/healthz", 405, "GET,HEAD"},
		{"DELETE", "/metrics", 405, "GET,HEAD"},
		{"POST", "/kds", 405, "GET,HEAD"},
		{"PUT", "/kds/app.js", 405, "GET,HEAD"},
		{"DELETE", "/console/", 405, "GET,HEAD"},
		{"GET", "/api/v1/nope", 404, ""},
		{"DELETE", "/api/v1/catalog/widgets/" + ordNoSuchID, 404, ""},
		{"POST", "/nope", 404, ""},
		{"GET", "/kds/nope.js", 404, ""},
		{"HEAD", "/api/v1/catalog/products", 200, ""},
		{"HEAD", "/api/v1/catalog/categories/" + cat, 200, ""},
		{"HEAD", "/kds/", 200, ""},
	}
	before := tn.outboxLen()
	for _, tc := range cases {
		for _, token := range []string{o.Owner, ""} {
			t.Run(fmt.Sprintf("%s %s token=%v", tc.method, tc.path, token != ""), func(t *testing.T) {
				if tc.status == 200 && token == "" && strings.HasPrefix(tc.path, "/api/") {
					t.Skip("an API read needs a token")
				}
				var body any
				if tc.method != "GET" && tc.method != "HEAD" {
					body = map[string]any{"name": "Renamed"}
				}
				r := tn.Do(tc.method, tc.path, token, body)
				allow := strings.Split(strings.ReplaceAll(r.Header.Get("Allow"), " ", ""), ",")
				slices.Sort(allow)
				if got := strings.Join(allow, ","); got != tc.allow {
					t.Errorf("Allow %q, want %q", r.Header.Get("Allow"), tc.allow)
				}
				switch {
				case tc.method == "HEAD":
					if r.Status != tc.status || len(r.Body) != 0 {
						t.Errorf("status %d with %d bytes, want %d without a body", r.Status, len(r.Body), tc.status)
					}
				case tc.status == 405:
					p := mustProblem(t, r, 405, "method-not-allowed")
					if d := p["detail"].(string); !strings.Contains(d, tc.method) {
						t.Errorf("detail %q does not name the method", d)
					}
				default:
					mustProblem(t, r, 404, "not-found")
				}
			})
		}
	}
	if n := tn.outboxLen(); n != before {
		t.Errorf("outbox grew from %d to %d", before, n)
	}
	if r := tn.Do("GET", "/api/v1/catalog/categories/"+cat, o.Owner, nil); r.Status != 200 || r.Data()["name"] != "Drinks" {
		t.Errorf("category after the wrong methods: %d %s", r.Status, r.Body)
	}
}

// TestInvalidUTF8IsRefused: a JSON body, a query value or a path with bytes
// that are not UTF-8 is a 400 problem and stores nothing (encoding/json
// would have stored U+FFFD in their place); the same text well encoded
// is accepted.
func TestInvalidUTF8IsRefused(t *testing.T) {
	tn, o := hyStartWithPages(t)
	r := tn.Do("POST", "/api/v1/catalog/products", o.Owner, map[string]any{"name": "Crème", "sku": "CRM", "base_price": 450})
	if r.Status != 201 {
		t.Fatalf("create product: %d %s", r.Status, r.Body)
	}
	product := r.Data()["id"].(string)
	cases := []struct {
		name, method, path string
		body               []byte
	}{
		{"a lone continuation byte in a created name", "POST", "/api/v1/catalog/products",
			[]byte(`{"name": "Caf` + "\xa9" + `", "sku": "CAF", "base_price": 300}`)},
		{"a Latin-1 é in a patched description", "PATCH", "/api/v1/catalog/products/" + product,
			[]byte(`{"description": "cr` + "\xe8" + `me"}`)},
		{"a truncated sequence in a customer's name", "POST", "/api/v1/customers",
			[]byte(`{"first_name": "Zo` + "\xc3" + `", "email": "zoe@example.com"}`)},
		{"an overlong encoding of /", "POST", "/api/v1/catalog/categories",
			[]byte(`{"name": "a` + "\xc0\xaf" + `b"}`)},
		{"a surrogate half encoded as UTF-8", "POST", "/api/v1/catalog/categories",
			[]byte(`{"name": "` + "\xed\xa0\x80" + `"}`)},
		{"invalid bytes in a field name", "POST", "/api/v1/catalog/categories",
			[]byte(`{"name": "ok", "` + "\xff" + `": 1}`)},
		{"a search query", "GET", "/api/v1/catalog/products?q=caf%E9", nil},
		{"an e-mail filter", "GET", "/api/v1/customers?email=%FF%40example.com", nil},
		{"a query parameter's name", "GET", "/api/v1/catalog/products?%FF=1", nil},
		// Paths are not percent-decoded (a %FF id is just not an id: 404);
		// raw bytes in the request line are refused.
		{"raw bytes in a path id", "GET", "/api/v1/catalog/products/caf\xe9", nil},
		{"raw bytes in a query value", "GET", "/api/v1/catalog/products?q=caf\xe9", nil},
	}
	before := tn.outboxLen()
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var r *resp
			if strings.ContainsFunc(tc.path, func(r rune) bool { return r == utf8.RuneError }) {
				r = biRawDo(t, tn, tc.method, tc.path, o.Owner, "")
			} else {
				var body any
				if tc.body != nil {
					body = tc.body
				}
				r = tn.Do(tc.method, tc.path, o.Owner, body)
			}
			p := mustProblem(t, r, 400, "bad-request")
			if d := p["detail"].(string); !strings.Contains(d, "UTF-8") {
				t.Errorf("detail %q does not say UTF-8", d)
			}
		})
	}
	if n := tn.outboxLen(); n != before {
		t.Errorf("the refused requests wrote %d change records", n-before)
	}
	r = tn.Do("GET", "/api/v1/catalog/products/"+product, o.Owner, nil)
	if d := r.Data(); d["name"] != "Crème" || d["description"] != nil {
		t.Errorf("product after the refused patch: %s", r.Body)
	}
	t.Run("well-encoded text is accepted", func(t *testing.T) {
		if r := tn.Do("GET", "/api/v1/catalog/products?q=Cr%C3%A8me", o.Owner, nil); r.Status != 200 || len(r.List()) != 1 {
			t.Errorf("search: %d %s", r.Status, r.Body)
		}
		if r := tn.Do("POST", "/api/v1/catalog/categories", o.Owner, []byte(`{"name": "Caf`+"\xc3\xa9"+` \u00e9 \ud83c\udf75"}`)); r.Status != 201 ||
			r.Data()["name"] != "Café é 🍵" {
			t.Errorf("create: %d %s", r.Status, r.Body)
		}
	})
}

// TestSecurityHeaders: every page and asset carries a CSP that allows only
// the node's own script, style and API and no framing, plus nosniff,
// X-Frame-Options and Referrer-Policy; every API answer (data, problem,
// the node's own endpoints) carries nosniff and a CSP that allows nothing.
func TestSecurityHeaders(t *testing.T) {
	tn, o := hyStartWithPages(t)
	common := map[string]string{"X-Content-Type-Options": "nosniff", "X-Frame-Options": "DENY", "Referrer-Policy": "no-referrer"}
	cases := []struct {
		method, path, token string
		status              int
		page                bool
	}{
		{"GET", "/kds", "", 200, true},
		{"GET", "/kds/", "", 200, true},
		{"GET", "/kds/app.js", "", 200, true},
		{"GET", "/console/", "", 200, true},
		{"GET", "/console/app.css", "", 200, true},
		{"HEAD", "/console/app.js", "", 200, true},
		{"GET", "/kds/nope.js", "", 404, true},
		{"GET", "/api/v1/catalog/products", o.Owner, 200, false},
		{"GET", "/api/v1/catalog/products", "", 401, false},
		{"GET", "/api/v1/openapi.json", "", 200, false},
		{"GET", "/api/v1/nope", "", 404, false},
		{"PUT", "/api/v1/catalog/products", "", 405, false},
		{"GET", "/healthz", "", 200, false},
		{"GET", "/metrics", "", 200, false},
	}
	for _, tc := range cases {
		t.Run(tc.method+" "+tc.path, func(t *testing.T) {
			r := tn.Do(tc.method, tc.path, tc.token, nil)
			if r.Status != tc.status {
				t.Fatalf("status %d, want %d: %s", r.Status, tc.status, r.Body)
			}
			for h, v := range common {
				if got := r.Header.Get(h); got != v {
					t.Errorf("%s: %q, want %q", h, got, v)
				}
			}
			csp := hyCSP(r.Header.Get("Content-Security-Policy"))
			if csp["frame-ancestors"] != "'none'" || csp["base-uri"] != "'none'" {
				t.Errorf("CSP %q lets the page be framed or rebased", r.Header.Get("Content-Security-Policy"))
			}
			want := map[string]string{"default-src": "'none'"}
			if tc.page {
				want = map[string]string{"default-src": "'none'", "script-src": "'self'", "style-src": "'self'", "connect-src": "'self'"}
			}
			for d, v := range want {
				if csp[d] != v {
					t.Errorf("CSP %s is %q, want %q (whole: %q)", d, csp[d], v, r.Header.Get("Content-Security-Policy"))
				}
			}
		})
	}
}

// hyCSP splits a Content-Security-Policy into its directives.
func hyCSP(h string) map[string]string {
	out := map[string]string{}
	for _, d := range strings.Split(h, ";") {
		name, value, _ := strings.Cut(strings.TrimSpace(d), " ")
		if name != "" {
			out[name] = value
		}
	}
	return out
}
