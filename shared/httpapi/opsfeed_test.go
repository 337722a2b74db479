package httpapi_test

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/gorilla/websocket"

	"kassa.dev/shared/kassa"
	"kassa.dev/shared/node"
)

// startOpsHub is a hub with its enrolment and sync services, configured
// further by tweaks.
func startOpsHub(t *testing.T, tweaks ...func(*node.Config)) *testNode {
	return MustStartNode(t, kassa.NodeHub, func(c *node.Config) {
		for _, tweak := range tweaks {
			tweak(c)
		}
		c.Extend = func(n *node.Node) error {
			n.Services.Enrolment = n.EnrolmentService(func() string { return "nats-leaf://127.0.0.1:7422" }, nil)
			n.Services.Sync = n.HubSync(node.NewEdgeBook())
			return nil
		}
	})
}

// mustLocation creates a location of o and returns its id.
func mustLocation(t *testing.T, tn *testNode, o *testOrg, name string) string {
	t.Helper()
	loc := tn.Do("POST", "/api/v1/locations", o.Owner, map[string]any{"name": name, "timezone": "Australia/Sydney"})
	if loc.Status != 201 {
		t.Fatalf("location: %d %s", loc.Status, loc.Body)
	}
	return loc.Data()["id"].(string)
}

// enrolEdge enrols an edge of o at a location and returns its node id.
func enrolEdge(t *testing.T, tn *testNode, o *testOrg, location string) string {
	t.Helper()
	en := tn.Do("POST", "/api/v1/locations/"+location+"/enrolment", o.Owner, map[string]any{})
	claim := tn.Do("POST", "/api/v1/sync/enrol", "", map[string]any{"token": en.Data()["token"]})
	if claim.Status != 200 {
		t.Fatalf("enrol: %d %s / %d %s", en.Status, en.Body, claim.Status, claim.Body)
	}
	return claim.Data()["node_id"].(string)
}

// dialOps opens the ops feed with a bearer header.
func dialOps(t *testing.T, tn *testNode, token string) (*websocket.Conn, *http.Response, error) {
	h := http.Header{}
	if token != "" {
		h.Set("Authorization", "Bearer "+token)
	}
	c, res, err := websocket.DefaultDialer.Dial("ws"+strings.TrimPrefix(tn.URL, "http")+"/api/v1/sync/ws", h)
	if err == nil {
		t.Cleanup(func() { c.Close() })
	}
	return c, res, err
}

// next reads the feed's next message, failing after 5 s.
func next(t *testing.T, c *websocket.Conn) kassa.OpsMessage {
	t.Helper()
	var m kassa.OpsMessage
	c.SetReadDeadline(time.Now().Add(5 * time.Second))
	if err := c.ReadJSON(&m); err != nil {
		t.Fatalf("read the ops feed: %v", err)
	}
	return m
}

func nodes(m kassa.OpsMessage) []string {
	var out []string
	for _, e := range m.Edges {
		out = append(out, e.NodeID)
	}
	return out
}

func TestOpsFeedSendsASnapshotThenChangesOfItsOrgOnly(t *testing.T) {
	hub := startOpsHub(t)
	a, b := hub.MustOrg("Ops A"), hub.MustOrg("Ops B")
	bondi := mustLocation(t, hub, a, "Bondi")
	first := enrolEdge(t, hub, a, bondi)

	wa, _, err := dialOps(t, hub, a.Owner)
	if err != nil {
		t.Fatal(err)
	}
	snap := next(t, wa)
	if snap.Type != kassa.OpsSnapshot || strings.Join(nodes(snap), ",") != first || snap.AsOf.IsZero() {
		t.Fatalf("A's snapshot: %+v", snap)
	}
	wb, _, err := dialOps(t, hub, b.Owner)
	if err != nil {
		t.Fatal(err)
	}
	if m := next(t, wb); m.Type != kassa.OpsSnapshot || len(m.Edges) != 0 {
		t.Fatalf("B's snapshot shows A's edges: %+v", m)
	}

	// A second till of A's store enrols: A's page gets that row alone.
	second := enrolEdge(t, hub, a, bondi)
	for {
		m := next(t, wa)
		if m.Type == kassa.OpsHeartbeat {
			continue
		}
		if m.Type != kassa.OpsDiff || strings.Join(nodes(m), ",") != second {
			t.Fatalf("A's diff: %+v", m)
		}
		break
	}
	// B's feed has polled since (two more messages): nothing of A.
	for range 2 {
		if m := next(t, wb); m.Type != kassa.OpsHeartbeat {
			t.Fatalf("B was sent %+v", m)
		}
	}
	// A late page of A starts from a snapshot of both.
	wa2, _, err := dialOps(t, hub, a.Owner)
	if err != nil {
		t.Fatal(err)
	}
	if m := next(t, wa2); m.Type != kassa.OpsSnapshot || len(m.Edges) != 2 {
		t.Fatalf("late snapshot: %+v", m)
	}
}

func TestOpsFeedIsForReportsReadAtTheHubOnly(t *testing.T) {
	hub := startOpsHub(t)
	a := hub.MustOrg("Ops C")
	cashier := hub.MustUser(a, "till@c.test", kassa.RoleCashier)
	if _, res, err := dialOps(t, hub, cashier); err == nil || res == nil || res.StatusCode != 403 {
		t.Fatalf("a cashier opened the ops feed: %v %v", err, res)
	}
	ops := hub.MustUser(a, "watch@c.test", kassa.RoleOps)
	c, _, err := dialOps(t, hub, ops)
	if err != nil {
		t.Fatalf("the ops role is refused: %v", err)
	}
	if m := next(t, c); m.Type != kassa.OpsSnapshot {
		t.Fatalf("ops role's first message: %+v", m)
	}
	edge := MustStartNode(t, kassa.NodeEdge, nil)
	e := edge.MustOrg("Ops D")
	if _, res, err := dialOps(t, edge, e.Owner); err == nil || res == nil || res.StatusCode != 404 {
		t.Fatalf("the edge serves an ops feed: %v %v", err, res)
	}
}
