package synctest

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"kassa.dev/shared/demo"
	"kassa.dev/shared/node/nodetest"
	"kassa.dev/sync/wait"
)

// process is a kassa binary running as a child process, so that tests can
// kill it for real (SIGKILL) or measure it (/proc/<pid>/status).
type process struct {
	cmd  *exec.Cmd
	URL  string
	leaf chan string // a hub's leaf URL, once printed
}

func buildEdge(t *testing.T) string { return buildBinary(t, "kassa.dev/edge") }

// binaries are the commands buildBinary built in this run of the package,
// in one folder (removed by TestMain), by package path.
var binaries struct {
	sync.Mutex
	dir   string
	built map[string]string
}

// buildBinary builds the command pkg once per run of the package (a build
// links for seconds, and several tests run the same binary) and returns
// its path; the tests only run it.
func buildBinary(t *testing.T, pkg string) string {
	t.Helper()
	binaries.Lock()
	defer binaries.Unlock()
	if bin, ok := binaries.built[pkg]; ok {
		return bin
	}
	if binaries.dir == "" {
		dir, err := os.MkdirTemp("", "synctest-bin")
		if err != nil {
			t.Fatal(err)
		}
		binaries.dir, binaries.built = dir, map[string]string{}
	}
	bin := filepath.Join(binaries.dir, filepath.Base(pkg))
	out, err := exec.Command("go", "build", "-o", bin, pkg).CombinedOutput()
	if err != nil {
		t.Fatalf("go build %s: %v\n%s", pkg, err, out)
	}
	binaries.built[pkg] = bin
	return bin
}

var (
	servingRe = regexp.MustCompile(`serving (http://[0-9.:]+)`)
	leafRe    = regexp.MustCompile(`hub leaf nats-leaf://([0-9.:]+)`)
)

// startProcess runs bin with args and waits (up to 60 s) until it prints
// the URL it serves on; it is interrupted at the end of the test.
func startProcess(tb testing.TB, bin string, args ...string) *process {
	tb.Helper()
	cmd := exec.Command(bin, args...)
	tail := &tailBuffer{max: 16 << 10} // what the process said, shown when it does not serve
	cmd.Stderr = tail
	if os.Getenv("KASSA_TEST_LOG") == "1" {
		cmd.Stderr = io.MultiWriter(os.Stderr, tail)
	}
	stdout, _ := cmd.StdoutPipe()
	if err := cmd.Start(); err != nil {
		tb.Fatal(err)
	}
	p := &process{cmd: cmd, leaf: make(chan string, 1)}
	tb.Cleanup(func() { cmd.Process.Signal(os.Interrupt); cmd.Wait() })
	urls, ended := make(chan string, 1), make(chan struct{})
	go func() {
		defer close(ended)
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			fmt.Fprintln(tail, sc.Text())
			if m := servingRe.FindStringSubmatch(sc.Text()); m != nil {
				urls <- m[1]
			}
			if m := leafRe.FindStringSubmatch(sc.Text()); m != nil {
				p.leaf <- m[1]
			}
		}
	}()
	select {
	case p.URL = <-urls:
	case <-ended: // its output closed: it exited (a port it was given was taken, a bad flag)
		select {
		case p.URL = <-urls: // it served, then stopped: its test says what it makes of that
			return p
		default:
		}
		tb.Fatalf("%s ended before it served: %v; its last output:\n%s", bin, cmd.Wait(), tail)
	case <-time.After(60 * time.Second):
		tb.Fatalf("%s did not serve within 60s; its last output:\n%s", bin, tail)
	}
	return p
}

// tailBuffer keeps the last max bytes written to it.
type tailBuffer struct {
	mu  sync.Mutex
	max int
	b   []byte
}

func (t *tailBuffer) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.b = append(t.b, p...)
	if len(t.b) > t.max {
		t.b = t.b[len(t.b)-t.max:]
	}
	return len(p), nil
}

func (t *tailBuffer) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return string(t.b)
}

// TestKillDashNineLosesNoCommittedSale runs the edge as a process, makes
// sales from eight terminals, kills the edge with SIGKILL in the middle of
// the burst, restarts it on the same data directory, and checks that every
// sale the edge acknowledged reached the hub, completed, exactly once.
func TestKillDashNineLosesNoCommittedSale(t *testing.T) {
	k := mustKillMidBurst(t, 8, 40)
	hub, loc, done := k.hub, k.loc, k.acked
	edge := startProcess(t, k.bin, k.edgeArgs...) // no token: it is enrolled
	ep := &nodetest.Proc{URL: edge.URL}
	tok := ep.Login(t, "cashier@demo.test", demo.Password)
	hubTok := hub.Login(t, "owner@demo.test", demo.Password)
	for _, id := range done {
		var o oneResp
		if st := ep.Call(t, "GET", "/api/v1/orders/"+id, tok, nil, &o); st != 200 || o.Data["status"] != "completed" {
			t.Fatalf("acknowledged sale %s lost at the edge: %d %v", id, st, o.Data["status"])
		}
		wait.For(t, 30*time.Second, "sale "+id+" at the hub", func() bool {
			return hub.Call(t, "GET", "/api/v1/orders/"+id, hubTok, nil, &o) == 200 && o.Data["status"] == "completed"
		})
	}
	// Exactly once: the hub ends with the edge's orders, no more, no fewer.
	count := func(p *nodetest.Proc, tok string) int {
		n, cursor := 0, ""
		for {
			var l struct {
				Data       []map[string]any `json:"data"`
				NextCursor *string          `json:"next_cursor"`
			}
			p.Call(t, "GET", "/api/v1/orders?limit=200&location_id="+loc+cursor, tok, nil, &l)
			n += len(l.Data)
			if l.NextCursor == nil {
				return n
			}
			cursor = "&cursor=" + *l.NextCursor
		}
	}
	mgr := ep.Login(t, "manager@demo.test", demo.Password)
	wait.For(t, 30*time.Second, "the hub to hold exactly the edge's orders", func() bool {
		return count(hub, hubTok) == count(ep, mgr)
	})
	t.Logf("%d sales acknowledged before the kill; %d orders at both nodes after restart", len(done), count(ep, mgr))
}

// killedMidBurst is a demo hub and an edge binary enrolled at it whose
// process was killed with SIGKILL in the middle of a burst of sales.
type killedMidBurst struct {
	bin, hubDir, edgeDir string
	hub                  *nodetest.Proc
	edgeArgs             []string // restart the edge with these (it is enrolled: no token)
	loc                  string
	acked                []string // sales acknowledged (created, paid, completed) before the kill
}

// mustKillMidBurst starts a demo hub and an edge binary enrolled at it,
// lets terminals sell one product until at least min sales were
// acknowledged, and kills the edge process with SIGKILL.
func mustKillMidBurst(t *testing.T, terminals, min int) *killedMidBurst {
	t.Helper()
	k := &killedMidBurst{bin: buildEdge(t), hubDir: t.TempDir(), edgeDir: t.TempDir()}
	k.hub = nodetest.Start(t, hubRun, nil, "--demo", "--http-addr", "127.0.0.1:0", "--data-dir", k.hubDir, "--leaf-port", "-1")
	token, err := os.ReadFile(filepath.Join(k.hubDir, "demo-edge.token"))
	if err != nil {
		t.Fatal(err)
	}
	k.edgeArgs = []string{"--http-addr", "127.0.0.1:0", "--data-dir", k.edgeDir, "--hub-url", k.hub.URL}
	edge := startProcess(t, k.bin, append(k.edgeArgs, "--enrol-token", strings.TrimSpace(string(token)))...)
	ep := &nodetest.Proc{URL: edge.URL}
	ep.WaitLogin(t, 20*time.Second, "cashier@demo.test", demo.Password) // the demo users at the edge
	tok := ep.Login(t, "cashier@demo.test", demo.Password)
	var locs, products listResp
	ep.Call(t, "GET", "/api/v1/locations", tok, nil, &locs)
	wait.For(t, 20*time.Second, "the catalog", func() bool {
		ep.Call(t, "GET", "/api/v1/catalog/products", tok, nil, &products)
		return len(products.Data) == 15
	})
	loc, product := locs.Data[0]["id"].(string), products.Data[0]["id"].(string)
	k.loc = loc

	var mu sync.Mutex
	var acked []string
	stop := make(chan struct{})
	var wg sync.WaitGroup
	for range terminals {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				select {
				case <-stop:
					return
				default:
				}
				var o oneResp
				if ep.TryCall("POST", "/api/v1/orders", tok, map[string]any{"location_id": loc,
					"line_items": []any{map[string]any{"product_id": product, "quantity": 1}}}, &o) != 201 {
					return
				}
				id, _ := o.Data["id"].(string)
				if ep.TryCall("POST", "/api/v1/payments/initiate", tok, map[string]any{"order_id": id, "amount": o.Data["total"], "method": "cash"}, nil) != 201 {
					return
				}
				if ep.TryCall("POST", "/api/v1/orders/"+id+"/complete", tok, nil, nil) != 200 {
					return
				}
				mu.Lock()
				acked = append(acked, id)
				mu.Unlock()
			}
		}()
	}
	wait.For(t, 30*time.Second, "a burst of sales", func() bool { mu.Lock(); defer mu.Unlock(); return len(acked) >= min })
	edge.cmd.Process.Signal(syscall.SIGKILL)
	edge.cmd.Wait()
	close(stop)
	wg.Wait()
	mu.Lock()
	k.acked = append([]string(nil), acked...)
	mu.Unlock()
	return k
}
