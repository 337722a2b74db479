package httpapi_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"runtime"
	"strings"
	"testing"
	"time"

	"kassa.dev/shared/httpapi"
	"kassa.dev/shared/kassa"
	"kassa.dev/shared/node"
)

// BenchmarkOAuth measures, against a real hub on loopback, an
// authenticated GET (/catalog/products, 10 products) with an OAuth access
// token beside the same GET with a first-party JWT, interleaved in the
// same run (target: OAuth within 10 % of the JWT), and the token
// endpoint's client_credentials grants per second. It prints a table;
// `make bench` runs it.
func BenchmarkOAuth(b *testing.B) {
	const clients, gets, grants, rounds = 8, 3000, 1000, 2
	defer node.Tune(node.DefaultGCPercent, 0, 0)()
	for range b.N {
		tn := MustStartNode(b, kassa.NodeHub, func(c *node.Config) {
			// The token endpoint's throttle would measure itself.
			c.TokenRate = httpapi.TokenRate{ClientPerMinute: 1 << 30, ClientBurst: 1 << 30, AddrPerMinute: 1 << 30, AddrBurst: 1 << 30}
		})
		o := tn.MustOrg("Bench Partner")
		for i := range 10 {
			tn.Do("POST", "/api/v1/catalog/products", o.Owner, map[string]any{"name": fmt.Sprint("P", i), "sku": fmt.Sprint("B-", i), "base_price": 450})
		}
		app := tn.mustApp(o, kassa.ScopeCatalogRead)
		form := url.Values{"grant_type": {"client_credentials"}, "client_id": {app.ID}, "client_secret": {app.Secret}}.Encode()
		oauthToken := tn.form("/api/v1/oauth/token", url.Values{"grant_type": {"client_credentials"}}, app.ID, app.Secret).JSON()["access_token"].(string)
		client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: clients}}
		do := func(req *http.Request) time.Duration { return timed(b, client, req) }
		get := func(token string) func(c, k int, lat []time.Duration) []time.Duration {
			return func(c, k int, lat []time.Duration) []time.Duration {
				req, _ := http.NewRequest("GET", tn.URL+"/api/v1/catalog/products?limit=10", nil)
				req.Header.Set("Authorization", "Bearer "+token)
				return append(lat, do(req))
			}
		}
		grant := func(c, k int, lat []time.Duration) []time.Duration {
			req, _ := http.NewRequest("POST", tn.URL+"/api/v1/oauth/token", strings.NewReader(form))
			req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
			return append(lat, do(req))
		}
		// Interleaved rounds: this shared machine drifts within minutes.
		var jwt, oauth []benchResult
		drive(clients, gets/4, get(o.Owner)) // warm-up
		for range rounds {
			jwt = append(jwt, measure(clients, gets, get(o.Owner)))
			oauth = append(oauth, measure(clients, gets, get(oauthToken)))
		}
		tokens := measure(clients, grants, grant)
		fmt.Printf("\nOAuth at the hub: GET /catalog/products (10 products), %d concurrent clients, %d requests a run, %d rounds interleaved, %s, %d CPUs, %s\n",
			clients, gets, rounds, runtime.GOOS+"/"+runtime.GOARCH, runtime.NumCPU(), time.Now().UTC().Format("2006-01-02"))
		fmt.Printf("| %-44s | %10s | %9s | %9s |\n", "run", "requests/s", "p50 ms", "p99 ms")
		fmt.Printf("|%s|%s|%s|%s|\n", dashes(46), dashes(12), dashes(11), dashes(11))
		row := func(name string, r benchResult) {
			fmt.Printf("| %-44s | %10.0f | %9.2f | %9.2f |\n", name, r.salesPerSec, r.p50, r.p99)
		}
		var jsum, osum float64
		for i := range rounds {
			row(fmt.Sprintf("first-party JWT, round %d", i+1), jwt[i])
			row(fmt.Sprintf("OAuth access token, round %d", i+1), oauth[i])
			jsum, osum = jsum+jwt[i].salesPerSec, osum+oauth[i].salesPerSec
		}
		row("token endpoint, client_credentials grants", tokens)
		fmt.Printf("OAuth GETs at %.0f%% of the JWT's throughput (target >= 90%%); %.0f grants/s\n\n", 100*osum/jsum, tokens.salesPerSec)
		client.CloseIdleConnections()
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		tn.N.Shutdown(ctx)
		cancel()
	}
}

// timed sends req on client and returns how long its whole answer took;
// anything but 200 fails b.
func timed(b testing.TB, client *http.Client, req *http.Request) time.Duration {
	t0 := time.Now()
	res, err := client.Do(req)
	if err != nil {
		b.Fatal(err)
	}
	io.Copy(io.Discard, res.Body)
	res.Body.Close()
	if res.StatusCode != 200 {
		b.Fatalf("%s %s: %d", req.Method, req.URL.Path, res.StatusCode)
	}
	return time.Since(t0)
}

// measure runs n requests on clients goroutines; the result's salesPerSec
// is requests per second.
func measure(clients, n int, req func(c, k int, lat []time.Duration) []time.Duration) benchResult {
	all, elapsed, _ := drive(clients, n, req)
	return benchResult{salesPerSec: float64(n) / elapsed.Seconds(), p50: percentile(all, .5), p99: percentile(all, .99)}
}
