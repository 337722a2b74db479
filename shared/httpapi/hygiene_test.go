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

	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"kassa.dev/shared/kassa"
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
	if t.Failed() {
		t.FailNow()
	}
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
