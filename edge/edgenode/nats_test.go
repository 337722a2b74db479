package edgenode

import (
	"bufio"
	"context"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"kassa.dev/shared/node/nodetest"
)

// listeningPorts returns the TCP ports this process listens on, read from
// /proc: the sockets in LISTEN state whose inodes are among this
// process's open files.
func listeningPorts(t *testing.T) map[int]bool {
	t.Helper()
	mine := map[string]bool{}
	fds, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		t.Skipf("no /proc: %v", err)
	}
	for _, fd := range fds {
		if l, err := os.Readlink(filepath.Join("/proc/self/fd", fd.Name())); err == nil && strings.HasPrefix(l, "socket:[") {
			mine[strings.TrimSuffix(strings.TrimPrefix(l, "socket:["), "]")] = true
		}
	}
	ports := map[int]bool{}
	for _, table := range []string{"/proc/self/net/tcp", "/proc/self/net/tcp6"} {
		f, err := os.Open(table)
		if err != nil {
			continue
		}
		sc := bufio.NewScanner(f)
		for sc.Scan() {
			fs := strings.Fields(sc.Text())
			if len(fs) < 10 || fs[3] != "0A" || !mine[fs[9]] { // 0A: LISTEN
				continue
			}
			if i := strings.LastIndex(fs[1], ":"); i >= 0 {
				p, _ := strconv.ParseInt(fs[1][i+1:], 16, 32)
				ports[int(p)] = true
			}
		}
		f.Close()
	}
	return ports
}

func newPorts(before, after map[int]bool) []int {
	var out []int
	for p := range after {
		if !before[p] {
			out = append(out, p)
		}
	}
	return out
}

func httpPort(t *testing.T, p *nodetest.Proc) int {
	u, err := url.Parse(p.URL)
	if err != nil {
		t.Fatal(err)
	}
	n, _ := strconv.Atoi(u.Port())
	return n
}

// TestEdgeListensOnlyOnHTTPByDefault: an edge started as a store runs it
// opens its HTTP port and nothing else; in particular no NATS client port
// that a local process could use to reach the hub as the edge.
func TestEdgeListensOnlyOnHTTPByDefault(t *testing.T) {
	before := listeningPorts(t)
	p := nodetest.Start(t, Run, nil, "--http-addr", "127.0.0.1:0", "--data-dir", t.TempDir(), "--demo")
	opened := newPorts(before, listeningPorts(t))
	if len(opened) != 1 || opened[0] != httpPort(t, p) {
		t.Fatalf("the edge listens on %v; want only its HTTP port %d", opened, httpPort(t, p))
	}
}

// TestEdgeNATSListenerOnlyWithToken: a NATS client port is opened only
// when asked for, the edge refuses to start one without a token, and on
// it a client needs the token and gets no JetStream.
func TestEdgeNATSListenerOnlyWithToken(t *testing.T) {
	err := Run(t.Context(), []string{"--http-addr", "127.0.0.1:0", "--data-dir", t.TempDir(), "--nats-port", "-1"},
		func(string) string { return "" }, discard{}, discard{})
	if err == nil || !strings.Contains(err.Error(), "--nats-token") {
		t.Fatalf("edge with --nats-port and no token: %v", err)
	}
	before := listeningPorts(t)
	token := "store-tools-0123456789"
	p := nodetest.Start(t, Run, map[string]string{"KASSA_NATS_TOKEN": token}, "--http-addr", "127.0.0.1:0",
		"--data-dir", t.TempDir(), "--nats-port", "-1")
	var natsURL string
	for _, port := range newPorts(before, listeningPorts(t)) {
		if port != httpPort(t, p) {
			natsURL = fmt.Sprintf("nats://127.0.0.1:%d", port)
		}
	}
	if natsURL == "" {
		t.Fatal("no NATS client port with --nats-port -1")
	}
	for _, opts := range [][]nats.Option{nil, {nats.Token("wrong")}} {
		if nc, err := nats.Connect(natsURL, opts...); err == nil {
			nc.Close()
			t.Fatal("a NATS client without the token connected to the edge")
		}
	}
	nc, err := nats.Connect(natsURL, nats.Token(token))
	if err != nil {
		t.Fatalf("with the token: %v", err)
	}
	defer nc.Close()
	js, _ := jetstream.New(nc)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	if _, err := js.AccountInfo(ctx); err == nil {
		t.Fatal("an outside client reached the edge's JetStream")
	}
}
