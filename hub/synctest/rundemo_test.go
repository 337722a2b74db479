package synctest

import (
	"bytes"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"kassa.dev/sync/wait"
)

// TestTwoDemosRunSideBySide runs deploy/run-demo.sh twice at once, each
// with its own HUB_ADDR, EDGE_ADDR, LEAF_PORT and DATA_DIR, as the README
// says it can: both hubs and both edges answer, each edge enrols at its
// own hub over its own leaf port and serves the demo logins, each keeps
// its files in its own folder, and Ctrl-C stops each demo (issue 21).
func TestTwoDemosRunSideBySide(t *testing.T) {
	if testing.Short() {
		t.Skip("builds both binaries")
	}
	bin := filepath.Dir(buildBinary(t, "kassa.dev/hub")) // run-demo.sh's BIN_DIR: hub and edge
	buildBinary(t, "kassa.dev/edge")
	root := t.TempDir()
	a := startDemo(t, bin, filepath.Join(root, "a"))
	b := startDemo(t, bin, filepath.Join(root, "b"))
	for _, d := range []*demoRun{a, b} {
		d.waitRunning(t)
	}
	for _, d := range []*demoRun{a, b} {
		for _, addr := range []string{d.hub, d.edge} {
			if r, err := http.Get("http://" + addr + "/readyz"); err != nil || r.StatusCode != 200 {
				t.Fatalf("%s: %v %v", addr, r, err)
			}
		}
		// The edge got the demo staff from its own hub over the leaf link.
		wait.For(t, 30*time.Second, "a demo login at the edge "+d.edge, func() bool {
			r, err := http.Post("http://"+d.edge+"/api/v1/auth/login", "application/json",
				strings.NewReader(`{"email":"cashier@demo.test","password":"kassa-demo"}`))
			if err != nil {
				return false
			}
			r.Body.Close()
			return r.StatusCode == 200
		})
		for _, f := range []string{"hub/kassa.db", "edge/kassa.db", "hub.log", "edge.log"} {
			if _, err := os.Stat(filepath.Join(d.dir, f)); err != nil {
				t.Errorf("%s: %v", d.dir, err)
			}
		}
		if !strings.Contains(d.output(), "nats-leaf://127.0.0.1:"+d.leaf) {
			t.Errorf("the demo in %s does not say its leaf port %s:\n%s", d.dir, d.leaf, d.output())
		}
	}
	for _, d := range []*demoRun{a, b} {
		d.stop(t)
	}
}

type demoRun struct {
	dir, hub, edge string
	leaf           string
	cmd            *exec.Cmd
	mu             sync.Mutex
	out            bytes.Buffer
	done           chan error
}

func (d *demoRun) Write(p []byte) (int, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.out.Write(p)
}

func (d *demoRun) output() string { d.mu.Lock(); defer d.mu.Unlock(); return d.out.String() }

func startDemo(t *testing.T, bin, dir string) *demoRun {
	t.Helper()
	d := &demoRun{dir: dir, hub: "127.0.0.1:" + freePort(t), edge: "127.0.0.1:" + freePort(t), leaf: freePort(t), done: make(chan error, 1)}
	d.cmd = exec.Command("bash", "../../deploy/run-demo.sh")
	d.cmd.Env = append(os.Environ(), "BIN_DIR="+bin, "DATA_DIR="+dir, "HUB_ADDR="+d.hub, "EDGE_ADDR="+d.edge,
		"LEAF_PORT="+d.leaf)
	d.cmd.Stdout, d.cmd.Stderr = d, d
	d.cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true} // its own group: a failed test ends it whole
	if err := d.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { d.done <- d.cmd.Wait() }()
	t.Cleanup(func() {
		syscall.Kill(-d.cmd.Process.Pid, syscall.SIGKILL)
	})
	return d
}

func (d *demoRun) waitRunning(t *testing.T) {
	t.Helper()
	wait.For(t, 60*time.Second, "the demo in "+d.dir+" running", func() bool {
		select {
		case err := <-d.done:
			t.Fatalf("the demo in %s ended: %v\n%s", d.dir, err, d.output())
		default:
		}
		return strings.Contains(d.output(), "Kassa is running.")
	})
}

// stop sends Ctrl-C (SIGINT) to the script and waits for it to stop
// both nodes.
func (d *demoRun) stop(t *testing.T) {
	t.Helper()
	if err := d.cmd.Process.Signal(syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-d.done:
		if err != nil || !strings.Contains(d.output(), "stopped hub and edge") {
			t.Fatalf("the demo in %s stopped with %v:\n%s", d.dir, err, d.output())
		}
	case <-time.After(30 * time.Second):
		t.Fatalf("the demo in %s did not stop:\n%s", d.dir, d.output())
	}
}
