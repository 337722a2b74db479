package synctest

import (
	"fmt"
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
	"kassa.dev/shared/pgtest"
	"kassa.dev/sync/wait"
)

// TestAnEdgeMovesToAnotherHubWhenItsHubStopsDuringASalesBurst: three hubs
// on one PostgreSQL, joined in a NATS cluster, every leaf URL given to the
// edge. During a burst of sales at the edge, the hub its leaf link is
// attached to stops; the edge reattaches to another hub within seconds,
// and every sale the edge made is at the hubs exactly once (as many
// orders at each surviving hub as at the edge).
func TestAnEdgeMovesToAnotherHubWhenItsHubStopsDuringASalesBurst(t *testing.T) {
	secret := map[string]string{hubnode.ClusterSecretEnv: "a-cluster-secret-0123456789abcdef-xyz"}
	dsn := pgtest.Start(t).DSN
	leaf, route := make([]string, 3), make([]string, 3)
	for i := range 3 {
		leaf[i], route[i] = freePort(t), freePort(t)
	}
	urls := fmt.Sprintf("nats-leaf://127.0.0.1:%s,nats-leaf://127.0.0.1:%s,nats-leaf://127.0.0.1:%s", leaf[0], leaf[1], leaf[2])
	routes := "127.0.0.1:" + route[0] + ",127.0.0.1:" + route[1] + ",127.0.0.1:" + route[2]
	hubs := make([]*nodetest.Proc, 3)
	names := map[string]int{}
	for i := range hubs {
		dir := t.TempDir()
		hubs[i] = nodetest.Start(t, hubnode.Run, secret, "--demo", "--http-addr", "127.0.0.1:0", "--data-dir", dir,
			"--store", dsn, "--leaf-port", leaf[i], "--leaf-urls", urls, "--cluster-listen", "127.0.0.1:"+route[i], "--cluster-routes", routes)
		instance, err := os.ReadFile(filepath.Join(dir, "hub-instance")) // hubnode.hubInstanceFile
		if err != nil {
			t.Fatal(err)
		}
		names["hub-"+regexp.MustCompile(`kassa hub (\S+) serving`).FindStringSubmatch(hubs[i].Output())[1]+"-"+strings.TrimSpace(string(instance))] = i
	}
	hubTok := hubs[0].Login(t, "owner@demo.test", demo.Password)
	var locs struct{ Data []map[string]any }
	hubs[0].Call(t, "GET", "/api/v1/locations", hubTok, nil, &locs)
	loc := locs.Data[0]["id"].(string)
	var en oneResp
	if st := hubs[0].Call(t, "POST", "/api/v1/locations/"+loc+"/enrolment", hubTok, nil, &en); st != 201 {
		t.Fatalf("enrolment: %d", st)
	}
	edge := nodetest.Start(t, edgenode.Run, nil, "--http-addr", "127.0.0.1:0", "--data-dir", t.TempDir(),
		"--hub-url", hubs[0].URL, "--enrol-token", en.Data["token"].(string))
	e := &env{hub: hubs[0], edge: edge, hubTok: hubTok, location: loc}
	e.edgeTok = edge.WaitLogin(t, 60*time.Second, "cashier@demo.test", demo.Password)
	stopped := -1
	attached := func() int { // the hub the edge is connected at, as that hub says; -1 if none
		for i, h := range hubs {
			var st struct{ Data map[string]any }
			if i == stopped || h.TryCall("GET", "/api/v1/sync/status", hubTok, nil, &st) != 200 {
				continue
			}
			edges, _ := st.Data["edges"].([]any)
			for _, x := range edges {
				if m := x.(map[string]any); m["connected"] == true && names[fmt.Sprint(m["hub"])] == i {
					return i
				}
			}
		}
		return -1
	}
	t.Cleanup(func() {
		if t.Failed() {
			for i, h := range hubs {
				if i != stopped {
					var st struct{ Data map[string]any }
					h.TryCall("GET", "/api/v1/sync/status", hubTok, nil, &st)
					t.Logf("hub %d's status: %v", i, st.Data["edges"])
				}
			}
			t.Logf("the edge's output:\n%s", tail(edge.Output(), 3000))
		}
	})
	first := -1
	wait.For(t, 30*time.Second, "the edge to attach to a hub", func() bool { first = attached(); return first >= 0 })
	product := e.products(t, edge, e.edgeTok)[0]["id"].(string)
	b := e.startBurst(t, 4, product)
	wait.For(t, 30*time.Second, "sales before the hub stops", func() bool { return b.acked() >= 20 })
	hubs[first].Stop(t)
	stopped = first
	other := -1
	start := time.Now()
	wait.For(t, 15*time.Second, "the edge to reattach to another hub", func() bool {
		other = attached()
		return other >= 0
	})
	t.Logf("reattached in %v", time.Since(start))
	wait.For(t, 30*time.Second, "sales after the move", func() bool { return b.acked() >= 40 })
	b.end()
	edgeTok := edge.Login(t, "owner@demo.test", demo.Password)
	atEdge := countOrders(t, edge, edgeTok, loc)
	if atEdge < b.acked() {
		t.Fatalf("the edge holds %d orders, %d sales acknowledged", atEdge, b.acked())
	}
	for i, h := range hubs {
		if i == first {
			continue
		}
		wait.For(t, 60*time.Second, "every sale at hub "+fmt.Sprint(i)+" exactly once", func() bool {
			return countOrders(t, h, hubTok, loc) == atEdge
		})
	}
	if n := countOrders(t, hubs[other], hubTok, loc); n != atEdge {
		t.Fatalf("hub %d holds %d orders, the edge %d", other, n, atEdge)
	}
}

// tail is the last n bytes of s.
func tail(s string, n int) string { return s[max(0, len(s)-n):] }
