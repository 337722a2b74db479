package link

import (
	"encoding/json"
	"log/slog"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"

	"kassa.dev/sync/change"
	"kassa.dev/sync/natsnode"
	"kassa.dev/sync/wait"
)

// TestEdgeCredentialsAreConfinedToTheirOrgAndLocation connects an edge of
// org A, location 1, with the permissions the hub grants it, and checks
// what crosses the leaf link: its own subjects do; another org's, another
// location's and another edge's do not, in either direction.
func TestEdgeCredentialsAreConfinedToTheirOrgAndLocation(t *testing.T) {
	me := Identity{Org: "orgA", Location: "loc1", Node: "node1"}
	hub, edge := mustLeafPair(t, me)
	hc, _ := hub.Connect("hub", "tok")
	ec, _ := edge.Connect("edge", "")
	other := Identity{Org: "orgB", Location: "loc9", Node: "node9"}
	sameOrgOtherLoc := Identity{Org: "orgA", Location: "loc2", Node: "node2"}
	up := map[string]bool{ // edge → hub
		me.UpSubject(): true, me.PullSubject(): true,
		other.UpSubject(): false, sameOrgOtherLoc.UpSubject(): false, "kassa.notify.orgA": false,
	}
	down := map[string]bool{ // hub → edge
		NotifyOrg("orgA"): true, NotifyLocation("orgA", "loc1"): true,
		NotifyOrg("orgB"): false, NotifyLocation("orgA", "loc2"): false, other.UpSubject(): false,
		"_INBOX_node9.x": false, "_INBOX_node1.x": true,
	}
	got := make(chan string, 100)
	// Each side records only what came from the other side.
	for s := range up {
		hc.Subscribe(s, func(m *nats.Msg) {
			if string(m.Data) == "edge" {
				got <- "up " + m.Subject
			}
		})
	}
	for s := range down {
		ec.Subscribe(s, func(m *nats.Msg) {
			if string(m.Data) == "hub" {
				got <- "down " + m.Subject
			}
		})
	}
	hc.Flush()
	ec.Flush()
	wait.For(t, 5*time.Second, "interest across the link", func() bool {
		ec.Publish(me.UpSubject(), []byte("edge"))
		hc.Publish(NotifyOrg("orgA"), []byte("hub"))
		seen := map[string]bool{}
		for {
			select {
			case m := <-got:
				seen[m] = true
				continue
			case <-time.After(50 * time.Millisecond):
			}
			return seen["up "+me.UpSubject()] && seen["down "+NotifyOrg("orgA")]
		}
	})
	// Forbidden first, then an allowed sentinel on the same path: once the
	// sentinels arrived, anything forbidden that got through is there too.
	for s, ok := range up {
		if !ok {
			ec.Publish(s, []byte("edge"))
		}
	}
	for s, ok := range down {
		if !ok {
			hc.Publish(s, []byte("hub"))
		}
	}
	ec.Publish(me.PullSubject(), []byte("edge"))
	hc.Publish("_INBOX_node1.x", []byte("hub"))
	seen := map[string]bool{}
	wait.For(t, 5*time.Second, "the sentinels", func() bool {
		for {
			select {
			case m := <-got:
				seen[m] = true
			default:
				return seen["up "+me.PullSubject()] && seen["down _INBOX_node1.x"]
			}
		}
	})
	for s, ok := range up {
		if !ok && seen["up "+s] {
			t.Errorf("the edge published into %s", s)
		}
	}
	for s, ok := range down {
		if !ok && seen["down "+s] {
			t.Errorf("the edge received %s", s)
		}
	}
}

func TestCheckScopeRefusesForeignChanges(t *testing.T) {
	me := Identity{Org: "o", Location: "l", Node: "n"}
	ok := change.Change{ID: "1", OrgID: "o", LocationID: "l", Origin: "n"}
	orgWide := change.Change{ID: "2", OrgID: "o", Origin: "n"}
	if err := CheckScope(me, []change.Change{ok, orgWide}); err != nil {
		t.Fatal(err)
	}
	for _, bad := range []change.Change{
		{ID: "3", OrgID: "x", Origin: "n"},
		{ID: "4", OrgID: "o", LocationID: "other", Origin: "n"},
		{ID: "5", OrgID: "o", Origin: "someone-else"},
	} {
		if CheckScope(me, []change.Change{ok, bad}) == nil {
			t.Errorf("accepted %+v", bad)
		}
	}
}

// mustLeafPair starts a hub's NATS server that grants the edge me its
// EdgePermissions (leaf password "s3cret"; in-process token "tok") and an
// edge's server linked to it as a leaf, and waits for the link. Both stop
// at the end of the test.
func mustLeafPair(t *testing.T, me Identity) (hub, edge *natsnode.Server) {
	t.Helper()
	log := slog.New(slog.DiscardHandler)
	hub, err := natsnode.Start(natsnode.Config{Name: "hub", Host: "127.0.0.1", Port: -1, StoreDir: t.TempDir(),
		LeafHost: "127.0.0.1", LeafPort: -1, ClientToken: "tok",
		LeafAuth: func(u, p string) *server.Permissions {
			if u == me.Node && p == "s3cret" {
				return EdgePermissions(me)
			}
			return nil
		}}, log)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(hub.Shutdown)
	u, _ := url.Parse(hub.LeafURL())
	u.User = url.UserPassword(me.Node, "s3cret")
	edge, err = natsnode.Start(natsnode.Config{Name: "edge", Host: "127.0.0.1", Port: -1, StoreDir: t.TempDir(), LeafRemotes: []string{u.String()}}, log)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(edge.Shutdown)
	wait.For(t, 5*time.Second, "the leaf link", edge.LeafConnected)
	return hub, edge
}

// TestRefusalsOnTheWireStayCompatible: a hub of this release says "none
// refused" as an empty list, which an edge tells from an older hub's
// reply without the field (keep what it has); an older edge's decoding of
// the new replies is unchanged.
func TestRefusalsOnTheWireStayCompatible(t *testing.T) {
	none := []Refusal{}
	b, _ := json.Marshal(PullReply{UpTo: 3, Refused: &none})
	if !strings.Contains(string(b), `"refused":[]`) {
		t.Fatalf("a reply with nothing refused: %s", b)
	}
	var older PullReply
	if err := json.Unmarshal([]byte(`{"entries":[],"up_to":3,"last":3}`), &older); err != nil || older.Refused != nil {
		t.Fatalf("an older hub's reply: %+v %v", older, err)
	}
	type oldPush struct {
		Applied, Duplicate int
		Error              string
	}
	b, _ = json.Marshal(PushReply{Applied: 2, Refused: []Refusal{{ChangeID: "c", Reason: "refused_field"}}})
	var old oldPush
	if err := json.Unmarshal(b, &old); err != nil || old.Applied != 2 || old.Error != "" {
		t.Fatalf("an older edge reads %+v (%v) from %s", old, err, b)
	}
}
