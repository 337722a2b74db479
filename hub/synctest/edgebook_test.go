package synctest

import (
	"testing"
	"time"

	"kassa.dev/hub/hubnode"
	"kassa.dev/shared/demo"
	"kassa.dev/shared/node/nodetest"
	"kassa.dev/shared/pgtest"
	"kassa.dev/sync/wait"
)

// TestEveryHubOnOnePostgreSQLShowsAnEdgeConnectedWhileAnyHearsIt: two
// hubs share one PostgreSQL; the edge's link reaches only the first. The
// second never hears the edge itself, yet its /sync/status (what ops and
// the ops page read, behind a load balancer either hub) shows the edge
// connected, from the edge book the first writes to the shared table;
// once the edge stops, both show it disconnected.
func TestEveryHubOnOnePostgreSQLShowsAnEdgeConnectedWhileAnyHearsIt(t *testing.T) {
	dsn := pgtest.Start(t).DSN
	e := startPair(t, "--store", dsn)
	other := nodetest.Start(t, hubnode.Run, nil, "--http-addr", "127.0.0.1:0", "--data-dir", t.TempDir(),
		"--leaf-port", "-1", "--store", dsn)
	otherTok := other.Login(t, "owner@demo.test", demo.Password)
	var me oneResp
	e.edge.Call(t, "GET", "/api/v1/sync/status", e.edgeMgr, nil, &me)
	node := me.Data["node_id"].(string)
	wait.For(t, 30*time.Second, "the edge connected at the hub it is not linked to", func() bool {
		st := e.edgeStatus(t, other, otherTok, node)
		return st != nil && st["connected"] == true && st["last_seen"] != nil
	})
	e.proxy.cut()
	wait.For(t, 60*time.Second, "the edge disconnected at both hubs", func() bool {
		a, b := e.edgeStatus(t, e.hub, e.hubTok, node), e.edgeStatus(t, other, otherTok, node)
		return a != nil && b != nil && a["connected"] == false && b["connected"] == false
	})
}
