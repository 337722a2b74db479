package httpapi_test

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"runtime"
	"runtime/metrics"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/gorilla/websocket"

	"kassa.dev/shared/kassa"
	"kassa.dev/shared/node"
)

// BenchmarkLiveTerminals measures GET /api/v1/ws at an edge as two tills
// use it: till A makes an order over REST (POST /orders), till B sees it
// arrive over its WebSocket; p50/p99 from the POST's start to B's
// receipt, beside a raw baseline in the same run (a plain gorilla/websocket
// server relaying A's message to B on loopback, from A's send to B's
// receipt). Then 500 idle authenticated, subscribed clients: the heap and
// RSS they add (both ends are in this process: the clients' side counts
// too). `make bench` runs it. KASSA_BENCH_ORDERS changes the run.
func BenchmarkLiveTerminals(b *testing.B) {
	orders, idle := 500, 500
	if s := os.Getenv("KASSA_BENCH_ORDERS"); s != "" {
		fmt.Sscan(s, &orders)
	}
	defer node.Tune(node.DefaultGCPercent, 0, 0)()
	for range b.N {
		raw := rawRelay(b, orders)

		tn := MustStartNode(b, kassa.NodeEdge, func(c *node.Config) { c.Now = time.Now })
		o := tn.MustOrg("Bench Live")
		loc := tn.Do("POST", "/api/v1/locations", o.Owner, map[string]any{"name": "Main", "timezone": "UTC"}).Data()["id"].(string)
		pid := tn.Do("POST", "/api/v1/catalog/products", o.Owner, map[string]any{"name": "Toast", "sku": "T", "base_price": 900}).Data()["id"].(string)
		tillB := tn.MustTerminal(o.Owner)
		tillB.subscribe(loc, "", "orders")
		client := &http.Client{}
		body := fmt.Sprintf(`{"location_id":%q,"line_items":[{"product_id":%q,"quantity":1}]}`, loc, pid)
		var seen, rtt, hop []time.Duration
		for range orders {
			t0 := time.Now()
			req, _ := http.NewRequest("POST", tn.URL+"/api/v1/orders", strings.NewReader(body))
			req.Header.Set("Content-Type", "application/json")
			req.Header.Set("Authorization", "Bearer "+o.Owner)
			res, err := client.Do(req)
			if err != nil {
				b.Fatal(err)
			}
			var created struct {
				Data struct {
					ID string `json:"id"`
				} `json:"data"`
			}
			readJSON(b, res, &created)
			rtt = append(rtt, time.Since(t0))
			tillB.until(func(m liveMsg) bool { return m.ID == created.Data.ID })
			seen = append(seen, time.Since(t0))
			hop = append(hop, seen[len(seen)-1]-rtt[len(rtt)-1])
		}
		client.CloseIdleConnections()

		// 500 idle clients, each signed in and subscribed.
		heap0, rss0 := memNow()
		conns := make([]*terminal, idle)
		for i := range conns {
			conns[i] = tn.MustTerminal(o.Owner)
			conns[i].subscribe(loc, "", "orders", "stock", "catalog", "customers")
		}
		heap1, rss1 := memNow()

		fmt.Printf("\nLive terminals (GET /api/v1/ws) at an edge: %d orders, one at a time, %s, %d CPUs, %s\n",
			orders, runtime.GOOS+"/"+runtime.GOARCH, runtime.NumCPU(), time.Now().UTC().Format("2006-01-02"))
		fmt.Printf("| %-62s | %9s | %9s |\n", "run", "p50 ms", "p99 ms")
		fmt.Printf("|%s|%s|%s|\n", dashes(64), dashes(11), dashes(11))
		fmt.Printf("| %-62s | %9.2f | %9.2f |\n", "raw baseline: gorilla/websocket relay A to B (send to receipt)", percentile(raw, .5), percentile(raw, .99))
		fmt.Printf("| %-62s | %9.2f | %9.2f |\n", "Kassa: POST /orders round trip (till A)", percentile(rtt, .5), percentile(rtt, .99))
		fmt.Printf("| %-62s | %9.2f | %9.2f |\n", "Kassa: POST /orders start to change at till B", percentile(seen, .5), percentile(seen, .99))
		fmt.Printf("| %-62s | %9.2f | %9.2f |\n", "Kassa: POST answered at A to change at till B", percentile(hop, .5), percentile(hop, .99))
		fmt.Printf("p99 POST to till B %.1f ms (target <= 20 ms)\n", percentile(seen, .99))
		fmt.Printf("%d idle subscribed clients: heap +%.1f MiB, RSS +%.1f MiB (server and clients in one process; target < 50 MB)\n\n",
			idle, float64(int64(heap1)-int64(heap0))/(1<<20), float64(int64(rss1)-int64(rss0))/(1<<20))
		for _, c := range conns {
			c.c.Close()
		}
	}
}

func readJSON(b *testing.B, res *http.Response, v any) {
	defer res.Body.Close()
	data, _ := io.ReadAll(res.Body)
	if res.StatusCode != 201 {
		b.Fatalf("POST /orders: %d %s", res.StatusCode, data)
	}
	if err := json.Unmarshal(data, v); err != nil {
		b.Fatal(err)
	}
}

// rawRelay is the baseline: a gorilla/websocket server that relays each
// message of client A to client B, on loopback.
func rawRelay(b *testing.B, n int) []time.Duration {
	up := websocket.Upgrader{}
	peers := make(chan *websocket.Conn, 2)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		c, err := up.Upgrade(w, r, nil)
		if err != nil {
			return
		}
		peers <- c
	}))
	defer srv.Close()
	url := "ws" + strings.TrimPrefix(srv.URL, "http")
	a, _, err := websocket.DefaultDialer.Dial(url, nil)
	if err != nil {
		b.Fatal(err)
	}
	defer a.Close()
	sa := <-peers
	bb, _, err := websocket.DefaultDialer.Dial(url, nil)
	if err != nil {
		b.Fatal(err)
	}
	defer bb.Close()
	sb := <-peers
	go func() {
		for {
			_, m, err := sa.ReadMessage()
			if err != nil {
				return
			}
			if sb.WriteMessage(websocket.TextMessage, m) != nil {
				return
			}
		}
	}()
	msg := []byte(`{"type":"change","topic":"orders","data":{"id":"` + strings.Repeat("x", 600) + `"}}`)
	lat := make([]time.Duration, 0, n)
	for range n {
		t0 := time.Now()
		if err := a.WriteMessage(websocket.TextMessage, msg); err != nil {
			b.Fatal(err)
		}
		if _, _, err := bb.ReadMessage(); err != nil {
			b.Fatal(err)
		}
		lat = append(lat, time.Since(t0))
	}
	return lat
}

// memNow is the live heap after a collection and the process's VmRSS.
func memNow() (heap, rss uint64) {
	runtime.GC()
	s := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
	metrics.Read(s)
	b, _ := os.ReadFile("/proc/self/status")
	for _, line := range strings.Split(string(b), "\n") {
		if f := strings.Fields(line); len(f) >= 2 && f[0] == "VmRSS:" {
			kb, _ := strconv.ParseUint(f[1], 10, 64)
			rss = kb << 10
		}
	}
	return s[0].Value.Uint64(), rss
}
