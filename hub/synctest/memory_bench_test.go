package synctest

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"kassa.dev/shared/demo"
	"kassa.dev/shared/node/nodetest"
	"kassa.dev/sync/wait"
)

// BenchmarkMemory runs the hub and the edge binaries as processes, as a
// store and head office would run them (their default flags, so the
// default GC target and memory limit), and reports from /proc/<pid>/status:
// the hub's RSS after seeding the demo; the edge's peak RSS (VmHWM, reset
// before each run) during the order flow — 3,000 sales from 8 terminals,
// replicated to the hub as they happen — and during a login storm of 64
// concurrent logins with unknown e-mails from 64 client addresses (so the
// per-address throttle lets them through to the password check). Target:
// <= 100 MiB for the edge. `make bench` runs it; KASSA_BENCH_MEMSTATS=1
// also prints the edge's go_memstats after the order flow.
func BenchmarkMemory(b *testing.B) {
	dir := b.TempDir()
	edgeBin, hubBin := filepath.Join(dir, "edge"), filepath.Join(dir, "hub")
	for bin, pkg := range map[string]string{edgeBin: "kassa.dev/edge", hubBin: "kassa.dev/hub"} {
		if out, err := exec.Command("go", "build", "-o", bin, pkg).CombinedOutput(); err != nil {
			b.Fatalf("go build %s: %v\n%s", pkg, err, out)
		}
	}
	for range b.N {
		hubDir := b.TempDir()
		hub := startProcess(b, hubBin, "--demo", "--http-addr", "127.0.0.1:0", "--data-dir", hubDir, "--leaf-port", "-1")
		hubRSS, _ := procRSS(b, hub.cmd.Process.Pid)
		token, err := os.ReadFile(filepath.Join(hubDir, "demo-edge.token"))
		if err != nil {
			b.Fatal(err)
		}
		edge := startProcess(b, edgeBin, "--http-addr", "127.0.0.1:0", "--data-dir", b.TempDir(),
			"--hub-url", hub.URL, "--enrol-token", strings.TrimSpace(string(token)))
		ep := &nodetest.Proc{URL: edge.URL}
		ep.WaitLogin(b, 20*time.Second, "cashier@demo.test", demo.Password) // the demo users at the edge
		tok := ep.Login(b, "cashier@demo.test", demo.Password)
		var locs, products listResp
		ep.Call(b, "GET", "/api/v1/locations", tok, nil, &locs)
		wait.For(b, 20*time.Second, "the catalog", func() bool {
			ep.Call(b, "GET", "/api/v1/catalog/products", tok, nil, &products)
			return len(products.Data) == 15
		})
		loc := locs.Data[0]["id"].(string)
		idle, _ := procRSS(b, edge.cmd.Process.Pid)

		resetPeak(b, edge.cmd.Process.Pid)
		start := time.Now()
		sell(b, ep, tok, loc, []string{products.Data[0]["id"].(string), products.Data[1]["id"].(string), products.Data[2]["id"].(string)}, 8, 3000)
		took := time.Since(start)
		_, flowPeak := procRSS(b, edge.cmd.Process.Pid)
		afterFlow, _ := procRSS(b, edge.cmd.Process.Pid)
		if os.Getenv("KASSA_BENCH_MEMSTATS") != "" {
			res, err := http.Get(edge.URL + "/metrics")
			if err == nil {
				sc := bufio.NewScanner(res.Body)
				for sc.Scan() {
					if l := sc.Text(); strings.HasPrefix(l, "go_memstats_") && !strings.Contains(l, "total") || strings.HasPrefix(l, "go_gc_gogc") || strings.HasPrefix(l, "go_gc_gomemlimit") || strings.HasPrefix(l, "go_goroutines") || strings.HasPrefix(l, "go_threads") {
						fmt.Println(l)
					}
				}
				res.Body.Close()
			}
		}

		resetPeak(b, edge.cmd.Process.Pid)
		got := storm(b, edge.URL, 64)
		_, stormPeak := procRSS(b, edge.cmd.Process.Pid)

		fmt.Printf("\nMemory (binaries as processes, default flags): %s, %d CPUs\n", runtime.GOOS+"/"+runtime.GOARCH, runtime.NumCPU())
		fmt.Printf("| %-52s | %10s | %10s |\n", "run", "RSS MiB", "peak MiB")
		fmt.Printf("|%s|%s|%s|\n", dashes(54), dashes(12), dashes(12))
		fmt.Printf("| %-52s | %10d | %10s |\n", "hub: after seeding the demo", hubRSS>>20, "")
		fmt.Printf("| %-52s | %10d | %10s |\n", "edge: idle, enrolled, catalog synced", idle>>20, "")
		fmt.Printf("| %-52s | %10d | %10d |\n", fmt.Sprintf("edge: order flow, 3,000 sales, 8 terminals (%.0f s)", took.Seconds()), afterFlow>>20, flowPeak>>20)
		fmt.Printf("| %-52s | %10s | %10d |\n", fmt.Sprintf("edge: login storm, 64 addresses (%d 401, %d 429)", got[401], got[429]), "", stormPeak>>20)
		fmt.Println("Target: the edge's peak RSS <= 100 MiB in both runs.")
	}
}

// proc is a kassa binary running as a child process.
// procRSS reads VmRSS and VmHWM of a process, in bytes.
func procRSS(tb testing.TB, pid int) (cur, peak int64) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		tb.Fatal(err)
	}
	for _, l := range strings.Split(string(b), "\n") {
		f := strings.Fields(l)
		if len(f) >= 2 && (f[0] == "VmRSS:" || f[0] == "VmHWM:") {
			n, _ := strconv.ParseInt(f[1], 10, 64)
			if f[0] == "VmRSS:" {
				cur = n << 10
			} else {
				peak = n << 10
			}
		}
	}
	return cur, peak
}

// resetPeak sets a process's VmHWM back to its current RSS.
func resetPeak(tb testing.TB, pid int) {
	if err := os.WriteFile(fmt.Sprintf("/proc/%d/clear_refs", pid), []byte("5"), 0); err != nil {
		tb.Skipf("cannot reset the peak RSS: %v", err)
	}
}

// sell rings up n sales (3 lines, cash, complete) from clients terminals.
func sell(tb testing.TB, ep *nodetest.Proc, tok, loc string, products []string, clients, n int) {
	var next atomic.Int64
	var wg sync.WaitGroup
	var failed atomic.Value
	for range clients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for next.Add(1) <= int64(n) {
				var o oneResp
				lines := []any{}
				for _, p := range products {
					lines = append(lines, map[string]any{"product_id": p, "quantity": 1})
				}
				if st := ep.TryCall("POST", "/api/v1/orders", tok, map[string]any{"location_id": loc, "line_items": lines}, &o); st != 201 {
					failed.Store(fmt.Sprint("create: ", st))
					return
				}
				id, _ := o.Data["id"].(string)
				if st := ep.TryCall("POST", "/api/v1/payments/initiate", tok, map[string]any{"order_id": id, "amount": o.Data["total"], "method": "cash"}, nil); st != 201 {
					failed.Store(fmt.Sprint("pay: ", st))
					return
				}
				if st := ep.TryCall("POST", "/api/v1/orders/"+id+"/complete", tok, nil, nil); st != 200 {
					failed.Store(fmt.Sprint("complete: ", st))
					return
				}
			}
		}()
	}
	wg.Wait()
	if f := failed.Load(); f != nil {
		tb.Fatalf("sale failed: %v", f)
	}
}

// storm sends n concurrent logins with unknown e-mails, each from its own
// loopback address, and counts the statuses.
func storm(tb testing.TB, url string, n int) map[int]int {
	var mu sync.Mutex
	got := map[int]int{}
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			d := &net.Dialer{LocalAddr: &net.TCPAddr{IP: net.IPv4(127, 1, byte(i/250), byte(1+i%250))}}
			c := &http.Client{Transport: &http.Transport{DialContext: d.DialContext}}
			body, _ := json.Marshal(map[string]string{"email": fmt.Sprintf("storm%d@nowhere.test", i), "password": "guess"})
			res, err := c.Post(url+"/api/v1/auth/login", "application/json", bytes.NewReader(body))
			st := 0
			if err == nil {
				st = res.StatusCode
				res.Body.Close()
			}
			mu.Lock()
			got[st]++
			mu.Unlock()
		}()
	}
	wg.Wait()
	return got
}
