package httpapi_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"runtime"
	"strings"
	"testing"
	"time"

	"kassa.dev/shared/kassa"
	"kassa.dev/shared/node"
)

// BenchmarkGraphQL measures the GraphQL catalog against a real hub on
// loopback, beside its raw baseline in the same run: REST's GET of the
// same 200 products. Then the heaviest query a partner would send, 10
// categories with their products (1,000 objects and a category lookup
// each). Runs are interleaved (the machine drifts); the table gives
// requests/s, latency and the bytes allocated per request in the process
// (node and client together), the memory a request costs a small hub.
// `make bench` runs it.
func BenchmarkGraphQL(b *testing.B) {
	const clients, requests, rounds = 4, 400, 2
	defer node.Tune(node.DefaultGCPercent, 0, 0)()
	for range b.N {
		tn := MustStartNode(b, kassa.NodeHub, nil)
		o := tn.MustOrg("Bench Graph")
		for c := range 10 {
			cat := tn.Do("POST", "/api/v1/catalog/categories", o.Owner, map[string]any{"name": fmt.Sprint("C", c)}).Data()["id"].(string)
			for batch := range 2 {
				var m strings.Builder
				m.WriteString("mutation {")
				for i := range 50 {
					fmt.Fprintf(&m, ` m%d: createProduct(input: {name: "P%d-%d-%d", sku: "B-%d-%d-%d", basePrice: 4.5, categoryId: %q, tags: ["bench"]}) { id }`,
						i, c, batch, i, c, batch, i, cat)
				}
				m.WriteString(" }")
				tn.gql(o.Owner, m.String(), nil).ok(b)
			}
		}
		client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: clients}}
		send := func(method, path string, body []byte) func(c, k int, lat []time.Duration) []time.Duration {
			return func(c, k int, lat []time.Duration) []time.Duration {
				req, _ := http.NewRequest(method, tn.URL+path, bytes.NewReader(body))
				req.Header.Set("Authorization", "Bearer "+o.Owner)
				return append(lat, timed(b, client, req))
			}
		}
		query := func(q string) []byte { j, _ := json.Marshal(map[string]any{"query": q}); return j }
		runs := []struct {
			name string
			req  func(c, k int, lat []time.Duration) []time.Duration
		}{
			{"REST GET /catalog/products?limit=200 (baseline)", send("GET", "/api/v1/catalog/products?limit=200", nil)},
			{"GraphQL products(limit: 200), same fields", send("POST", "/api/v1/catalog/graphql",
				query(`{ products(limit: 200) { id name description sku barcodes basePrice isActive categoryId tags createdAt updatedAt } }`))},
			{"GraphQL 10 categories x 100 products + category", send("POST", "/api/v1/catalog/graphql",
				query(`{ categories { name products(limit: 200) { id name basePrice category { name } } } }`))},
		}
		results := make([][]benchResult, len(runs))
		alloc := make([]float64, len(runs))
		for _, r := range runs {
			drive(clients, requests/4, r.req) // warm-up
		}
		for range rounds {
			for i, r := range runs {
				var before, after runtime.MemStats
				runtime.ReadMemStats(&before)
				results[i] = append(results[i], measure(clients, requests, r.req))
				runtime.ReadMemStats(&after)
				alloc[i] += float64(after.TotalAlloc-before.TotalAlloc) / float64(requests*rounds)
			}
		}
		fmt.Printf("\nGraphQL catalog at the hub: 1,000 products in 10 categories, %d concurrent clients, %d requests a run, %d rounds interleaved, %s, %d CPUs, %s\n",
			clients, requests, rounds, runtime.GOOS+"/"+runtime.GOARCH, runtime.NumCPU(), time.Now().UTC().Format("2006-01-02"))
		fmt.Printf("| %-58s | %10s | %9s | %9s | %12s |\n", "run", "requests/s", "p50 ms", "p99 ms", "KiB/request")
		fmt.Printf("|%s|%s|%s|%s|%s|\n", dashes(60), dashes(12), dashes(11), dashes(11), dashes(14))
		var sums [3]float64
		for round := range rounds {
			for i, r := range runs {
				res := results[i][round]
				sums[i] += res.salesPerSec
				fmt.Printf("| %-58s | %10.0f | %9.2f | %9.2f | %12.0f |\n", fmt.Sprintf("%s, round %d", r.name, round+1), res.salesPerSec, res.p50, res.p99, alloc[i]/1024)
			}
		}
		fmt.Printf("GraphQL for the same 200 products at %.0f%% of REST's requests/s; the 1,000-object query at %.0f%% (5x the objects)\n\n",
			100*sums[1]/sums[0], 100*sums[2]/sums[0])
		client.CloseIdleConnections()
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		tn.N.Shutdown(ctx)
		cancel()
	}
}
