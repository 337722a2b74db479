package synctest

import (
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"kassa.dev/edge/edgenode"
	"kassa.dev/hub/hubnode"
	"kassa.dev/shared/demo"
	"kassa.dev/shared/node/nodetest"
	"kassa.dev/sync/wait"
)

// leafConnections reads kassa_nats_leaf_connections from a hub's /metrics.
func leafConnections(t *testing.T, p *nodetest.Proc) string {
	t.Helper()
	res, err := http.Get(p.URL + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	for _, line := range strings.Split(string(b), "\n") {
		if strings.HasPrefix(line, "kassa_nats_leaf_connections{") {
			return line
		}
	}
	return ""
}

// TestTwoClusteredHubsGiveEdgesEveryLeafURLAndNameTheirHub: two hub
// processes joined in a NATS cluster, sharing nothing else (each its own
// SQLite: the shared store waits for PostgreSQL, docs/cluster.md). An edge
// enrolled at the first gets both hubs' leaf URLs; it ends up attached to
// the hub that knows its credentials and syncs; the hub's status and both
// hubs' metrics say where it is attached.
func TestTwoClusteredHubsGiveEdgesEveryLeafURLAndNameTheirHub(t *testing.T) {
	secret := map[string]string{hubnode.ClusterSecretEnv: "a-cluster-secret-0123456789abcdef-xyz"}
	leafA, leafB, routeA, routeB := freePort(t), freePort(t), freePort(t), freePort(t)
	urls := fmt.Sprintf("nats-leaf://127.0.0.1:%s,nats-leaf://127.0.0.1:%s", leafA, leafB)
	dirA := t.TempDir()
	hubA := nodetest.Start(t, hubnode.Run, secret, "--demo", "--http-addr", "127.0.0.1:0", "--data-dir", dirA,
		"--leaf-port", leafA, "--leaf-urls", urls, "--cluster-listen", "127.0.0.1:"+routeA,
		"--cluster-routes", "127.0.0.1:"+routeB)
	hubB := nodetest.Start(t, hubnode.Run, secret, "--http-addr", "127.0.0.1:0", "--data-dir", t.TempDir(),
		"--leaf-port", leafB, "--leaf-urls", urls, "--cluster-listen", "127.0.0.1:"+routeB,
		"--cluster-routes", "127.0.0.1:"+routeA)
	token, err := os.ReadFile(filepath.Join(dirA, hubnode.DemoTokenFile))
	if err != nil {
		t.Fatal(err)
	}
	var claim oneResp
	if st := hubA.Call(t, "POST", "/api/v1/sync/enrol", "", map[string]any{"token": strings.TrimSpace(string(token))}, &claim); st != 200 {
		t.Fatalf("claim: %d", st)
	}
	if got := fmt.Sprint(claim.Data["leaf_urls"]); got != fmt.Sprintf("[nats-leaf://127.0.0.1:%s nats-leaf://127.0.0.1:%s]", leafA, leafB) {
		t.Fatalf("leaf_urls %s", got)
	}
	// A real edge enrols with a fresh token and follows the hubs' URLs
	// (no --hub-leaf-url).
	hubTok := hubA.Login(t, "owner@demo.test", demo.Password)
	var locs struct{ Data []map[string]any }
	hubA.Call(t, "GET", "/api/v1/locations", hubTok, nil, &locs)
	var en oneResp
	if st := hubA.Call(t, "POST", "/api/v1/locations/"+locs.Data[0]["id"].(string)+"/enrolment", hubTok, nil, &en); st != 201 {
		t.Fatalf("enrolment: %d", st)
	}
	edge := nodetest.Start(t, edgenode.Run, nil, "--http-addr", "127.0.0.1:0", "--data-dir", t.TempDir(),
		"--hub-url", hubA.URL, "--enrol-token", en.Data["token"].(string))
	// Hub B does not know the edge's credentials (its own store): the
	// edge's leaf remote moves on to hub A, where sync works.
	edge.WaitLogin(t, 30*time.Second, "cashier@demo.test", demo.Password)
	hubAName := "hub-" + regexp.MustCompile(`kassa hub (\S+) serving`).FindStringSubmatch(hubA.Output())[1]
	wait.For(t, 10*time.Second, "the hubs to say where the edge is attached", func() bool {
		var st struct{ Data map[string]any }
		hubA.Call(t, "GET", "/api/v1/sync/status", hubTok, nil, &st)
		edges, _ := st.Data["edges"].([]any)
		for _, e := range edges {
			if e.(map[string]any)["hub"] == hubAName && e.(map[string]any)["connected"] == true {
				return strings.HasSuffix(leafConnections(t, hubA), " 1") && strings.HasSuffix(leafConnections(t, hubB), " 0")
			}
		}
		return false
	})
	if !strings.Contains(leafConnections(t, hubA), `hub="`+hubAName+`"`) {
		t.Fatalf("hub A's metric %q is not labelled with its name %s", leafConnections(t, hubA), hubAName)
	}
}

// TestAnEdgeFollowsTheHubsNewLeafURLs: the hub is restarted reachable at
// a new leaf URL (here a proxy); the edge learns it with its next pull and
// moves its link there: cutting the proxy cuts the edge off, restoring it
// brings the link back.
func TestAnEdgeFollowsTheHubsNewLeafURLs(t *testing.T) {
	leaf, dir := freePort(t), t.TempDir()
	args := []string{"--http-addr", "127.0.0.1:0", "--data-dir", dir, "--leaf-port", leaf}
	hub := nodetest.Start(t, hubnode.Run, nil, append(args, "--demo")...)
	token, err := os.ReadFile(filepath.Join(dir, hubnode.DemoTokenFile))
	if err != nil {
		t.Fatal(err)
	}
	edge := nodetest.Start(t, edgenode.Run, nil, "--http-addr", "127.0.0.1:0", "--data-dir", t.TempDir(),
		"--hub-url", hub.URL, "--enrol-token", strings.TrimSpace(string(token)))
	edge.WaitLogin(t, 30*time.Second, "cashier@demo.test", demo.Password)
	mgr := edge.Login(t, "manager@demo.test", demo.Password)
	linked := func(want bool) func() bool {
		return func() bool {
			var st oneResp
			edge.Call(t, "GET", "/api/v1/sync/status", mgr, nil, &st)
			return st.Data["connected"] == want
		}
	}
	wait.For(t, 20*time.Second, "the edge's link", linked(true))
	px := startProxy(t, "127.0.0.1:"+leaf)
	hub.Stop(t)
	hub = nodetest.Start(t, hubnode.Run, nil, append(args, "--leaf-advertise", "nats-leaf://"+px.addr)...)
	wait.For(t, 30*time.Second, "the edge's link through the new URL", func() bool {
		px.mu.Lock()
		n := len(px.conns)
		px.mu.Unlock()
		return n > 0 && linked(true)()
	})
	px.cut()
	wait.For(t, 20*time.Second, "the edge cut off with the new URL", linked(false))
	px.restore()
	wait.For(t, 20*time.Second, "the edge's link back", linked(true))
}
