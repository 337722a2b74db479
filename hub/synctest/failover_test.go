package synctest

import (
	"database/sql"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"kassa.dev/edge/edgenode"
	"kassa.dev/hub/hubnode"
	"kassa.dev/shared/demo"
	"kassa.dev/shared/kassa"
	"kassa.dev/shared/node/nodetest"
	"kassa.dev/shared/pgtest"
	"kassa.dev/shared/webhooktest"
	"kassa.dev/sync/wait"
)

// clusterHub is a hub binary running as a process in a cluster of hubs on
// one PostgreSQL: its API and its NATS server's name.
type clusterHub struct {
	*nodetest.Proc
	proc *process
	name string // hub-<node id>-<instance>, as /sync/status names it
}

// kill ends the hub with SIGKILL, as a machine that dies: no shutdown,
// its connections (to PostgreSQL, its leaf and route links) cut.
func (h *clusterHub) kill(t *testing.T) {
	if err := h.proc.cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	h.proc.cmd.Wait()
}

// startClusterHubs builds the hub and starts n hub processes on one
// throwaway PostgreSQL, joined in a NATS cluster (docs/cluster.md), each
// listing every hub's leaf URL, with args added to each. It returns the
// hubs and the database's DSN.
func startClusterHubs(t *testing.T, n int, env map[string]string, args ...string) ([]*clusterHub, string) {
	t.Helper()
	for k, v := range env {
		t.Setenv(k, v) // the hub processes inherit it; secrets stay out of argv
	}
	t.Setenv(hubnode.ClusterSecretEnv, "a-cluster-secret-0123456789abcdef-xyz")
	bin := buildBinary(t, "kassa.dev/hub")
	dsn := pgtest.Start(t).DSN
	defer func() { // a hub that does not start fails the test here, before the others stop
		if t.Failed() {
			t.Log(pgState(dsn))
		}
	}()
	leaf, route, urls, routes := make([]string, n), make([]string, n), make([]string, n), make([]string, n)
	for i := range n {
		leaf[i], route[i] = freePort(t), freePort(t)
		urls[i], routes[i] = "nats-leaf://127.0.0.1:"+leaf[i], "127.0.0.1:"+route[i]
	}
	hubs := make([]*clusterHub, n)
	for i := range hubs {
		dir := t.TempDir()
		p := startProcess(t, bin, append([]string{"--demo", "--http-addr", "127.0.0.1:0", "--data-dir", dir, "--store", dsn,
			"--leaf-port", leaf[i], "--leaf-urls", strings.Join(urls, ","),
			"--cluster-listen", routes[i], "--cluster-routes", strings.Join(routes, ",")}, args...)...)
		instance, err := os.ReadFile(filepath.Join(dir, "hub-instance")) // hubnode.hubInstanceFile
		if err != nil {
			t.Fatal(err)
		}
		hubs[i] = &clusterHub{Proc: &nodetest.Proc{URL: p.URL}, proc: p}
		var st oneResp
		tok := hubs[i].WaitLogin(t, 60*time.Second, "owner@demo.test", demo.Password)
		hubs[i].Call(t, "GET", "/api/v1/sync/status", tok, nil, &st)
		hubs[i].name = "hub-" + st.Data["node_id"].(string) + "-" + strings.TrimSpace(string(instance))
	}
	logPGStateOnFailure(t, dsn)
	return hubs, dsn
}

// startClusterEdge enrols an edge at loc through hub (which gives it every
// hub's leaf URL) and starts it in-process; it returns the edge's env (its
// cashier's token) and its node id.
func startClusterEdge(t *testing.T, hub *clusterHub, hubTok, loc string) (*env, string) {
	t.Helper()
	var en oneResp
	if st := hub.Call(t, "POST", "/api/v1/locations/"+loc+"/enrolment", hubTok, nil, &en); st != 201 {
		t.Fatalf("enrolment: %d", st)
	}
	edge := nodetest.Start(t, edgenode.Run, nil, "--http-addr", "127.0.0.1:0", "--data-dir", t.TempDir(),
		"--hub-url", hub.URL, "--enrol-token", en.Data["token"].(string))
	e := &env{hub: hub.Proc, edge: edge, hubTok: hubTok, location: loc}
	e.edgeTok = edge.WaitLogin(t, 60*time.Second, "cashier@demo.test", demo.Password)
	e.edgeMgr = edge.Login(t, "manager@demo.test", demo.Password)
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("the edge's status: %v\nits output:\n%s", e.status(t, edge, e.edgeMgr), tail(edge.Output(), 3000))
		}
	})
	return e, e.status(t, edge, e.edgeMgr)["node_id"].(string)
}

// edgeAt is the hub the edge node is attached to, as hub's /sync/status
// says (its edge book is the cluster's), or "" while it is not connected.
func edgeAt(t *testing.T, hub *clusterHub, tok, node string) string {
	var st oneResp
	if hub.TryCall("GET", "/api/v1/sync/status", tok, nil, &st) != 200 {
		return ""
	}
	edges, _ := st.Data["edges"].([]any)
	for _, x := range edges {
		if m := x.(map[string]any); m["node_id"] == node && m["connected"] == true {
			s, _ := m["hub"].(string)
			return s
		}
	}
	return ""
}

// TestKillingTheHubAnEdgeIsAttachedToLosesAndDoublesNothing is issue 25's
// failover test. Three hub processes on one PostgreSQL, joined in a NATS
// cluster; two edges of one store, each enrolled and given every hub's
// leaf URL; a webhook endpoint on 127.0.0.1 subscribed to completed
// orders, checking each POST's signature; both edges selling from four
// terminals each. Mid-burst the hub the first edge is attached to is
// killed (SIGKILL). Then, as a user would notice:
//   - the edge reattaches to another hub within seconds;
//   - an org's rate limit spent through the surviving hubs is refused after
//     the org's limit, not the limit per hub;
//   - every sale of either edge is at the surviving hubs and at both edges
//     exactly once, and each edge's digests agree with the hubs';
//   - the endpoint received each sale's order.completed exactly once:
//     one delivery per order, none missing, no delivery id twice.
func TestKillingTheHubAnEdgeIsAttachedToLosesAndDoublesNothing(t *testing.T) {
	const operator = "an-operator-token-of-at-least-32-chars"
	hubs, dsn := startClusterHubs(t, 3, map[string]string{"KASSA_OPERATOR_TOKEN": operator}, "--webhook-allow-loopback")
	hubTok := hubs[0].Login(t, "owner@demo.test", demo.Password)
	var locs listResp
	hubs[0].Call(t, "GET", "/api/v1/locations", hubTok, nil, &locs)
	loc := locs.Data[0]["id"].(string)
	r := webhooktest.New(t)
	registerHook(t, hubs[0].Proc, hubTok, r, kassa.EventOrderCompleted)
	a, aNode := startClusterEdge(t, hubs[1], hubTok, loc)
	b, bNode := startClusterEdge(t, hubs[2], hubTok, loc)

	var first *clusterHub
	wait.For(t, 30*time.Second, "both edges attached to a hub", func() bool {
		at := edgeAt(t, hubs[0], hubTok, aNode)
		for _, h := range hubs {
			if h.name == at {
				first = h
			}
		}
		return first != nil && edgeAt(t, hubs[0], hubTok, bNode) != ""
	})
	var alive []*clusterHub
	for _, h := range hubs {
		if h != first {
			alive = append(alive, h)
		}
	}
	product := a.products(t, a.edge, a.edgeTok)[0]["id"].(string)
	wait.For(t, 30*time.Second, "the demo catalog at the second edge", func() bool { return len(b.products(t, b.edge, b.edgeTok)) > 0 })
	burstA, burstB := a.startBurst(t, 4, product), b.startBurst(t, 4, product)
	wait.For(t, 30*time.Second, "sales at both edges before the kill", func() bool { return burstA.acked() >= 20 && burstB.acked() >= 20 })
	first.kill(t)
	killed := time.Now()
	wait.For(t, 10*time.Second, "the edge to reattach to another hub", func() bool {
		at := edgeAt(t, alive[0], hubTok, aNode)
		return at != "" && at != first.name
	})
	t.Logf("the edge reattached in %v", time.Since(killed))

	soldA, soldB := burstA.acked(), burstB.acked()
	wait.For(t, 30*time.Second, "sales at both edges after the kill", func() bool {
		return burstA.acked() >= soldA+20 && burstB.acked() >= soldB+20
	})
	burstA.end()
	burstB.end()
	ended := time.Now()
	orgLimitCountsOnce(t, alive, operator)
	sold := burstA.acked() + burstB.acked()
	if fails := burstA.fails + burstB.fails; fails > 0 {
		t.Errorf("%d sales failed at the edges", fails)
	}
	for _, e := range []*env{a, b} {
		// The terminals sell as fast as the edge answers (hundreds of
		// sales a second); the surviving hubs take the backlog in.
		wait.For(t, 120*time.Second, "every sale at the edge, its digests verified since the burst", func() bool {
			st := e.status(t, e.edge, e.edgeMgr)
			v, _ := time.Parse(time.RFC3339Nano, fmt.Sprint(st["last_verified"]))
			return countOrders(t, e.edge, e.edgeMgr, loc) == sold && st["in_sync"] == true && v.After(ended)
		})
	}
	for _, h := range alive {
		if n := countOrders(t, h.Proc, hubTok, loc); n != sold {
			t.Fatalf("hub %s holds %d orders, the edges sold %d", h.name, n, sold)
		}
	}
	wait.For(t, 30*time.Second, "every sale's order.completed at the endpoint", func() bool {
		return len(onePerDelivery(t, r.All())) >= sold
	})
	webhooksOnce(t, r, dsn, sold)
}

// orgLimitCountsOnce gives a new org a burst of 10 requests (one more a
// minute) and spends its token across hubs: exactly 10 are answered,
// not 10 per hub.
func orgLimitCountsOnce(t *testing.T, hubs []*clusterHub, operator string) {
	t.Helper()
	var tenant oneResp
	if st := hubs[0].Call(t, "POST", "/api/v1/partners/tenants", operator, map[string]any{"name": "Limited", "currency": "EUR",
		"owner":    map[string]any{"email": "owner@limited.test", "name": "Owner", "password": "a long password"},
		"location": map[string]any{"name": "Main", "timezone": "Europe/Berlin"}}, &tenant); st != 201 {
		t.Fatalf("create tenant: %d %v", st, tenant)
	}
	if st := hubs[1].Call(t, "PUT", "/api/v1/partners/tenants/"+tenant.Data["id"].(string)+"/rate-limit", operator,
		map[string]any{"per_minute": 1, "burst": 10}, nil); st != 200 {
		t.Fatalf("set the org's rate limit: %d", st)
	}
	tok := hubs[0].Login(t, "owner@limited.test", "a long password")
	allowed := 0
	for i := range 30 {
		switch st := hubs[i%len(hubs)].Call(t, "GET", "/api/v1/locations", tok, nil, nil); st {
		case 200:
			allowed++
		case 429:
		default:
			t.Fatalf("request %d: status %d", i, st)
		}
	}
	if allowed != 10 {
		t.Fatalf("the org's burst is 10 across the hubs: %d of 30 requests spread over %d hubs answered", allowed, len(hubs))
	}
}

// webhooksOnce checks the endpoint's verified POSTs: one delivery per
// completed order, sold of them, each delivery id POSTed once.
func webhooksOnce(t *testing.T, r *webhooktest.Receiver, dsn string, sold int) {
	t.Helper()
	if n := r.Refused(); n > 0 {
		t.Errorf("%d POSTs failed the signature check", n)
	}
	byOrder := onePerDelivery(t, r.All())
	for id, ds := range byOrder {
		if len(ds) != 1 {
			t.Errorf("order %s delivered under %d delivery ids", id, len(ds))
		}
	}
	if len(byOrder) != sold {
		t.Errorf("%d orders' order.completed delivered, %d sold", len(byOrder), sold)
	}
	posts := map[string]int{}
	for _, g := range r.All() {
		posts[g.Delivery]++
	}
	db, err := sql.Open("pgx", dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	// A hub killed between an endpoint's 2xx and recording it leaves the
	// delivery due: another hub sends it again under the same delivery id
	// (the receiver's key for "once"). That window holds at most one
	// claim of the killed hub (hubonly's pgWebhookClaim, two); more
	// re-POSTs would be a delivery sent twice by live hubs.
	again := 0
	for id, n := range posts {
		if n > 1 {
			var attempts int
			db.QueryRow(`SELECT attempts FROM webhook_deliveries WHERE id = $1`, id).Scan(&attempts)
			t.Logf("delivery %s POSTed %d times (%d attempts recorded)", id, n, attempts)
			again += n - 1
		}
	}
	if again > 2 {
		t.Errorf("%d deliveries POSTed again: more than the killed hub's one claim (two)", again)
	}
}

// tail is the last n bytes of s.
func tail(s string, n int) string { return s[max(0, len(s)-n):] }
