package httpapi_test

import (
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"kassa.dev/shared/kassa"
	"kassa.dev/shared/node"
)

// BenchmarkReceiptReady rings up sales through the till's API calls, as
// the till page makes them — POST /orders (two lines, one with a
// modifier), then the tender tap: POST /payments/initiate (cash with
// change), POST /orders/:id/complete at the till, GET /orders/:id/receipt
// — from 4 tills at a cashier's pace (a sale per till every 250 ms), each
// till with a network printer (a loopback listener) printing every
// receipt in the background. It reports p50/p99 from the tender tap to
// the receipt answered (target p99 <= 100 ms at the edge), beside a raw
// baseline from the same run: the same three requests answered by a bare
// net/http handler on loopback (the transport's floor). `make bench` runs
// it; KASSA_BENCH_SALES changes the number of sales per till.
func BenchmarkReceiptReady(b *testing.B) {
	tills, sales, pace := 4, 50, 250*time.Millisecond
	if s := os.Getenv("KASSA_BENCH_SALES"); s != "" {
		fmt.Sscan(s, &sales)
	}
	defer node.Tune(node.DefaultGCPercent, 0, 0)()
	for range b.N {
		raw := rawTender(b, tills*sales)
		tn := MustStartNode(b, kassa.NodeEdge, func(c *node.Config) { c.Now = time.Now })
		org := tn.MustOrg("Bench Receipts")
		loc := tn.Do("POST", "/api/v1/locations", org.Owner, map[string]any{"name": "Main", "timezone": "UTC"}).Data()["id"].(string)
		latte := tn.Do("POST", "/api/v1/catalog/products", org.Owner, map[string]any{"name": "Latte", "sku": "L", "base_price": 450}).Data()["id"].(string)
		toast := tn.Do("POST", "/api/v1/catalog/products", org.Owner, map[string]any{"name": "Toast", "sku": "T", "base_price": 900}).Data()["id"].(string)
		g := tn.Do("POST", "/api/v1/catalog/modifiers/groups", org.Owner, map[string]any{"name": "Milk", "min_selections": 0, "max_selections": 1,
			"options": []any{map[string]any{"name": "Oat", "price_adjustment": 70}}, "product_ids": []string{latte}}).Data()
		oat := g["options"].([]any)[0].(map[string]any)["id"].(string)
		printers := benchPrinters(b, tills)
		regs := make([]string, tills)
		for i := range tills { // each till with its printer and an open drawer, as the till page works
			regs[i] = tn.Do("POST", "/api/v1/registers", org.Owner, map[string]any{"location_id": loc, "name": fmt.Sprintf("Till %d", i)}).Data()["id"].(string)
			tn.Do("PUT", "/api/v1/registers/"+regs[i]+"/printer", org.Owner, map[string]any{"host": "127.0.0.1", "port": printers[i]})
			tn.Do("POST", "/api/v1/drawers", org.Owner, map[string]any{"register_id": regs[i], "float": map[string]any{"amount": 20000}})
		}
		order := fmt.Sprintf(`{"location_id":%q,"line_items":[{"product_id":%q,"quantity":2,"modifier_option_ids":[%q]},{"product_id":%q,"quantity":1}]}`,
			loc, latte, oat, toast)
		var mu sync.Mutex
		var completed, ready []time.Duration
		var wg sync.WaitGroup
		for i := range tills {
			wg.Add(1)
			go func() {
				defer wg.Done()
				c := &http.Client{}
				for range sales {
					next := time.Now().Add(pace)
					d1, d2 := benchSale(b, c, tn.URL, org.Owner, order, regs[i])
					mu.Lock()
					completed, ready = append(completed, d1), append(ready, d2)
					mu.Unlock()
					time.Sleep(time.Until(next))
				}
			}()
		}
		wg.Wait()
		fmt.Printf("\nReceipts at an edge: %d tills x %d sales, a sale per till every %s, a printer per till, %s, %d CPUs, %s\n",
			tills, sales, pace, runtime.GOOS+"/"+runtime.GOARCH, runtime.NumCPU(), time.Now().UTC().Format("2006-01-02"))
		fmt.Printf("| %-62s | %9s | %9s |\n", "run", "p50 ms", "p99 ms")
		fmt.Printf("|%s|%s|%s|\n", dashes(64), dashes(11), dashes(11))
		fmt.Printf("| %-62s | %9.2f | %9.2f |\n", "raw baseline: 3 requests to a bare net/http handler", percentile(raw, .5), percentile(raw, .99))
		fmt.Printf("| %-62s | %9.2f | %9.2f |\n", "Kassa: tender tap to complete answered", percentile(completed, .5), percentile(completed, .99))
		fmt.Printf("| %-62s | %9.2f | %9.2f |\n", "Kassa: tender tap to receipt answered (GET receipt)", percentile(ready, .5), percentile(ready, .99))
		fmt.Printf("p99 tender tap to receipt ready %.1f ms (target <= 100 ms)\n\n", percentile(ready, .99))
	}
}

// benchSale rings up one sale; it returns the time from the tender tap to
// the completion answered and to the receipt answered.
func benchSale(b *testing.B, c *http.Client, base, token, order, till string) (time.Duration, time.Duration) {
	var o struct {
		Data struct {
			ID    string `json:"id"`
			Total int64  `json:"total"`
		} `json:"data"`
	}
	readJSON(b, benchDo(b, c, "POST", base+"/api/v1/orders", token, order), &o)
	t0 := time.Now()
	pay := fmt.Sprintf(`{"order_id":%q,"amount":%d,"method":"cash","tendered":%d,"register_id":%q}`, o.Data.ID, o.Data.Total, o.Data.Total+1000, till)
	benchOK(b, benchDo(b, c, "POST", base+"/api/v1/payments/initiate", token, pay), 201)
	benchOK(b, benchDo(b, c, "POST", base+"/api/v1/orders/"+o.Data.ID+"/complete", token, fmt.Sprintf(`{"register_id":%q}`, till)), 200)
	d1 := time.Since(t0)
	benchOK(b, benchDo(b, c, "GET", base+"/api/v1/orders/"+o.Data.ID+"/receipt", token, ""), 200)
	return d1, time.Since(t0)
}

func benchDo(b *testing.B, c *http.Client, method, url, token, body string) *http.Response {
	req, _ := http.NewRequest(method, url, strings.NewReader(body))
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	req.Header.Set("Authorization", "Bearer "+token)
	res, err := c.Do(req)
	if err != nil {
		b.Fatal(err)
	}
	return res
}

func benchOK(b *testing.B, res *http.Response, status int) {
	body, _ := io.ReadAll(res.Body)
	res.Body.Close()
	if res.StatusCode != status {
		b.Fatalf("%s %s: %d %s", res.Request.Method, res.Request.URL.Path, res.StatusCode, body)
	}
}

// rawTender times n rounds of three loopback requests to a bare handler.
func rawTender(b *testing.B, n int) []time.Duration {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{"data":{"id":"x"}}`)
	})}
	go srv.Serve(ln)
	defer srv.Close()
	c := &http.Client{}
	url := "http://" + ln.Addr().String() + "/"
	out := make([]time.Duration, 0, n)
	for range n {
		t0 := time.Now()
		for range 3 {
			res := benchDo(b, c, "POST", url, "t", `{"a":1}`)
			io.Copy(io.Discard, res.Body)
			res.Body.Close()
		}
		out = append(out, time.Since(t0))
	}
	return out
}

// benchPrinters starts n loopback printers that read and drop each print.
func benchPrinters(b *testing.B, n int) []int {
	ports := make([]int, n)
	for i := range ports {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			b.Fatal(err)
		}
		b.Cleanup(func() { ln.Close() })
		go func() {
			for {
				c, err := ln.Accept()
				if err != nil {
					return
				}
				io.Copy(io.Discard, c)
				c.Close()
			}
		}()
		ports[i] = ln.Addr().(*net.TCPAddr).Port
	}
	return ports
}
