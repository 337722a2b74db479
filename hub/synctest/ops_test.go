package synctest

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"kassa.dev/hub/hubnode"
	"kassa.dev/shared/demo"
	"kassa.dev/shared/node/nodetest"
	"kassa.dev/sync/change"
	"kassa.dev/sync/link"
	"kassa.dev/sync/wait"
)

// edgeStatus returns the hub's status of one edge, or nil.
func (e *env) edgeStatus(t *testing.T, hub *nodetest.Proc, tok, node string) map[string]any {
	t.Helper()
	edges, _ := e.status(t, hub, tok)["edges"].([]any)
	for _, x := range edges {
		if m := x.(map[string]any); m["node_id"] == node {
			return m
		}
	}
	return nil
}

// edgeMetric returns the value of one of the edge's sync metrics at the
// hub, or "" when it is absent.
func edgeMetric(t *testing.T, url, name, node string) string {
	t.Helper()
	for _, line := range strings.Split(metricsText(t, url), "\n") {
		if strings.HasPrefix(line, name+"{") && strings.Contains(line, `node="`+node+`"`) {
			return line[strings.LastIndexByte(line, ' ')+1:]
		}
	}
	return ""
}

// TestOpsSeeEveryEdgeAcrossAHubRestart: the hub shows what an edge
// reported (its version, its last verification, its lag, when it reported
// and since when it is connected) and the conflicts of its location, in
// GET /sync/status and /metrics; the link cut, the edge turns
// disconnected; and after a hub restart the status is still all there,
// read from the hub's store. An edge older than v0.6.0, which reports none
// of the new figures, is shown with an empty version.
func TestOpsSeeEveryEdgeAcrossAHubRestart(t *testing.T) {
	e := MustStartPair(t)
	var me oneResp
	e.edge.Call(t, "GET", "/api/v1/sync/status", e.edgeMgr, nil, &me)
	node := me.Data["node_id"].(string)
	product := e.products(t, e.edge, e.edgeTok)[0]["id"].(string)
	e.sale(t, product)

	var st map[string]any
	wait.For(t, 30*time.Second, "the hub to show the edge's report, lag and verification", func() bool {
		st = e.edgeStatus(t, e.hub, e.hubTok, node)
		return st != nil && st["connected"] == true && st["version"] == "dev" && st["reported_at"] != nil &&
			st["verify_ok"] == true && st["lag_p99"].(float64) > 0 && st["pending_up"] == 0.0
	})
	if st["connected_since"] == nil || st["last_seen"] == nil || len(st["verify_differ"].([]any)) != 0 {
		t.Fatalf("edge status: %v", st)
	}
	if got := edgeMetric(t, e.hub.URL, "kassa_sync_edge_connected", node); got != "1" {
		t.Errorf("kassa_sync_edge_connected = %q, want 1", got)
	}
	if got := edgeMetric(t, e.hub.URL, "kassa_sync_edge_verify_ok", node); got != "1" {
		t.Errorf("kassa_sync_edge_verify_ok = %q, want 1", got)
	}

	// A record refused at the edge's location counts as its conflict.
	f := e.mustForge(t, e.location)
	cashier := hubState{e: e, tok: e.hub.Login(t, "kitchen@demo.test", demo.Password)}.get(t, "/api/v1/auth/me")["id"].(string)
	f.push(t, f.change("customer", newID(), change.OpInsert, "", cashier, map[string]any{"first_name": "Q",
		"created_at": time.Now().UTC().Format(time.RFC3339Nano), "updated_at": time.Now().UTC().Format(time.RFC3339Nano)}))
	st = e.edgeStatus(t, e.hub, e.hubTok, node)
	if st["open_conflicts"] != 1.0 || st["quarantined"] != 1.0 {
		t.Errorf("open_conflicts %v, quarantined %v, want 1 and 1", st["open_conflicts"], st["quarantined"])
	}
	if m := metricsText(t, e.hub.URL); !strings.Contains(m, `kassa_sync_conflicts_open{kind="quarantined",org="`+f.id.Org+`"} 1`) {
		t.Errorf("/metrics has no open quarantined conflict:\n%s", grepLines(m, "kassa_sync_conflicts_open"))
	}

	// An edge of v0.5.0 pulls without the new figures: accepted, shown
	// with an empty version and no verification.
	b, _ := json.Marshal(map[string]any{"after": 0, "limit": 10, "pending_up": 0})
	m, err := f.nc.Request(f.id.PullSubject(), b, 5*time.Second)
	var rep link.PullReply
	if err != nil || json.Unmarshal(m.Data, &rep) != nil || rep.Error != "" {
		t.Fatalf("an old edge's pull: %v %s", err, m.Data)
	}
	old := e.edgeStatus(t, e.hub, e.hubTok, f.id.Node)
	if old["connected"] != true || old["version"] != "" || old["verify_ok"] != nil || old["reported_at"] != nil {
		t.Errorf("the old edge's status: %v", old)
	}

	// The link is cut: the edge turns disconnected, since it was last seen.
	e.proxy.cut()
	wait.For(t, 30*time.Second, "the edge to show disconnected", func() bool {
		return edgeMetric(t, e.hub.URL, "kassa_sync_edge_connected", node) == "0"
	})
	before := e.edgeStatus(t, e.hub, e.hubTok, node)
	if before["connected"] != false || before["connected_since"] != before["last_seen"] {
		t.Errorf("disconnected status: %v", before)
	}

	// The hub restarts: its status of the edge is what it was.
	e.hub.Stop(t)
	hub := nodetest.Start(t, hubnode.Run, nil, append([]string{"--demo", "--http-addr", "127.0.0.1:0", "--data-dir", e.hubDir,
		"--leaf-port", "-1", "--webhook-allow-loopback"}, e.hubArgs...)...)
	after := e.edgeStatus(t, hub, hub.Login(t, "owner@demo.test", demo.Password), node)
	for _, k := range []string{"version", "last_seen", "connected_since", "reported_at", "pending_up", "lag_p50", "lag_p99",
		"verify_ok", "last_verified", "open_conflicts", "quarantined", "connected"} {
		if fmt.Sprint(after[k]) != fmt.Sprint(before[k]) {
			t.Errorf("after the restart %s = %v, want %v", k, after[k], before[k])
		}
	}
	if got := edgeMetric(t, hub.URL, "kassa_sync_edge_connected", node); got != "0" {
		t.Errorf("after the restart kassa_sync_edge_connected = %q, want 0", got)
	}
}

func grepLines(s, prefix string) string {
	var out []string
	for _, l := range strings.Split(s, "\n") {
		if strings.HasPrefix(l, prefix) {
			out = append(out, l)
		}
	}
	return strings.Join(out, "\n")
}
