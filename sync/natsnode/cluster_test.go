package natsnode

import (
	"bufio"
	"encoding/json"
	"io"
	"log/slog"
	"net"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"

	"kassa.dev/sync/tlstest"
	"kassa.dev/sync/wait"
)

const testSecret = "cluster-secret-0123456789abcdef-0123"

// hubCluster is n clustered hub servers, each with a leaf listener that
// admits the user "edge" with password "secret" unless revoked, and what
// each heard of leaf sessions (user → hub).
type hubCluster struct {
	hubs    []*Server
	logs    syncLog // every hub's log
	revoked atomic.Bool
	mu      sync.Mutex
	heard   []map[string]string
}

func startHubCluster(t *testing.T, n int) *hubCluster {
	t.Helper()
	hc := &hubCluster{}
	log := slog.New(slog.NewTextHandler(&hc.logs, nil))
	var seed []string
	for i := range n {
		hc.heard = append(hc.heard, map[string]string{})
		s, err := Start(Config{Name: "hub-" + string(rune('a'+i)), StoreDir: t.TempDir(), JetStream: true, Domain: "hub",
			LeafHost: "127.0.0.1", LeafPort: -1,
			LeafAuth: func(u, p string) *server.Permissions {
				if u == "edge" && p == "secret" && !hc.revoked.Load() {
					return &server.Permissions{}
				}
				return nil
			},
			OnLeaf:  func(user, hub string) { hc.mu.Lock(); hc.heard[i][user] = hub; hc.mu.Unlock() },
			Cluster: &Cluster{Name: "kassa-test", Host: "127.0.0.1", Port: -1, Routes: seed, Secret: testSecret}}, log)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(s.Shutdown)
		if i == 0 {
			seed = []string{s.ClusterURL()}
		}
		hc.hubs = append(hc.hubs, s)
	}
	wait.For(t, 10*time.Second, "a full mesh of routes", func() bool {
		for _, s := range hc.hubs {
			if s.Peers() < n-1 {
				return false
			}
		}
		return true
	})
	// Routes up is not yet interest across them: a hub's news published
	// before the others' subscriptions crossed is heard by none (a loaded
	// machine showed it). Each hub announces a probe until every other
	// hub heard it.
	wait.For(t, 10*time.Second, "every hub to hear the others' news", func() bool {
		all := true
		for i, s := range hc.hubs {
			b, _ := json.Marshal(leafNews{User: "probe-" + s.Name(), Hub: s.Name()})
			s.auth.cluster.publish(subjectLeaf, b)
			for j := range hc.hubs {
				if j != i && hc.heardAt(j, "probe-"+s.Name()) != s.Name() {
					all = false
				}
			}
		}
		return all
	})
	return hc
}

// leafURLs are every hub's leaf URL with the edge's credentials.
func (hc *hubCluster) leafURLs() []string {
	var out []string
	for _, s := range hc.hubs {
		u, _ := url.Parse(s.LeafURL())
		u.User = url.UserPassword("edge", "secret")
		out = append(out, u.String())
	}
	return out
}

// holder is the running hub the edge's leaf session is up at, or nil.
func (hc *hubCluster) holder(dead map[*Server]bool) *Server {
	for _, s := range hc.hubs {
		if !dead[s] && s.LeafConnections() == 1 {
			return s
		}
	}
	return nil
}

func (hc *hubCluster) heardAt(i int, user string) string {
	hc.mu.Lock()
	defer hc.mu.Unlock()
	return hc.heard[i][user]
}

// request retries until a reply comes (interest crosses routes and the
// leaf link asynchronously) and returns it.
func request(t *testing.T, nc *nats.Conn, subject, what string) string {
	t.Helper()
	var got string
	wait.For(t, 10*time.Second, what, func() bool {
		m, err := nc.Request(subject, []byte("ping"), 200*time.Millisecond)
		if err == nil {
			got = string(m.Data)
		}
		return err == nil
	})
	return got
}

func TestClusterEdgeFailsOverAndIsReachedThroughAnyHub(t *testing.T) {
	hc := startHubCluster(t, 3)
	edge, err := Start(Config{Name: "edge", StoreDir: t.TempDir(), LeafRemotes: hc.leafURLs()}, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	defer edge.Shutdown()
	wait.For(t, 10*time.Second, "the edge's leaf link", func() bool { return hc.holder(nil) != nil })
	holder := hc.holder(nil)
	// Every hub heard where the edge is attached.
	wait.For(t, 5*time.Second, "every hub to hear where the edge is attached", func() bool {
		for i := range hc.hubs {
			if hc.heardAt(i, "edge") != holder.Name() {
				return false
			}
		}
		return true
	})
	var other *Server
	for _, s := range hc.hubs {
		if s != holder {
			other = s
		}
	}
	// A request the edge sends is answered by the queue group "hub", here
	// only subscribed at a hub that does not hold the leaf.
	oc, err := other.Connect("hub-sync", "")
	if err != nil {
		t.Fatal(err)
	}
	defer oc.Close()
	oc.QueueSubscribe("kassa.pull.o.l.edge", "hub", func(m *nats.Msg) { m.Respond([]byte(other.Name())) })
	oc.Flush()
	ec, err := edge.Connect("edge-sync", "")
	if err != nil {
		t.Fatal(err)
	}
	defer ec.Close()
	if got := request(t, ec, "kassa.pull.o.l.edge", "the edge's request answered"); got != other.Name() {
		t.Fatalf("answered by %q, want %q", got, other.Name())
	}
	// A command sent from a hub that does not hold the leaf reaches the edge.
	ec.Subscribe("kassa.cmd.o.l.edge", func(m *nats.Msg) { m.Respond([]byte("done at the edge")) })
	ec.Flush()
	if got := request(t, oc, "kassa.cmd.o.l.edge", "the hub's command answered by the edge"); got != "done at the edge" {
		t.Fatalf("command answer %q", got)
	}
	// The hub the edge is attached to dies: the edge reattaches to another.
	dead := map[*Server]bool{holder: true}
	holder.Shutdown()
	wait.For(t, 10*time.Second, "the edge to reattach to another hub", func() bool {
		return hc.holder(dead) != nil && edge.LeafConnected()
	})
	if got := request(t, ec, "kassa.pull.o.l.edge", "the edge's request after failover"); got != other.Name() {
		t.Fatalf("after failover answered by %q, want %q", got, other.Name())
	}
	if got := request(t, oc, "kassa.cmd.o.l.edge", "a command after failover"); got != "done at the edge" {
		t.Fatalf("command answer after failover %q", got)
	}
}

func TestClusterRevocationDisconnectsTheEdgeAtWhicheverHubHoldsIt(t *testing.T) {
	hc := startHubCluster(t, 3)
	edge, err := Start(Config{Name: "edge", StoreDir: t.TempDir(), LeafRemotes: hc.leafURLs()}, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	defer edge.Shutdown()
	wait.For(t, 10*time.Second, "the edge's leaf link", func() bool { return hc.holder(nil) != nil })
	holder := hc.holder(nil)
	var other *Server
	for _, s := range hc.hubs {
		if s != holder {
			other = s
		}
	}
	// The owner revokes the edge at a hub that does not hold its session.
	hc.revoked.Store(true)
	other.DisconnectLeaf("edge")
	wait.For(t, 10*time.Second, "the revoked edge to be disconnected", func() bool {
		return hc.holder(nil) == nil && !edge.LeafConnected()
	})
}

func TestClusterRefusesARouteWithTheWrongSecret(t *testing.T) {
	hc := startHubCluster(t, 1)
	c, err := net.Dial("tcp", hc.hubs[0].ClusterURL())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(10 * time.Second))
	r := bufio.NewReader(c)
	if info, err := r.ReadString('\n'); err != nil || !strings.Contains(info, `"auth_required":true`) {
		t.Fatalf("route INFO %q, %v", info, err)
	}
	c.Write([]byte(`CONNECT {"user":"kassa-hub","pass":"not-the-cluster-secret-0123456789ab","name":"forged","cluster":"kassa-test"}` + "\r\nPING\r\n"))
	line, _ := r.ReadString('\n')
	if !strings.Contains(line, "Authorization Violation") {
		t.Fatalf("a forged route got %q", line)
	}
	// A hub with the wrong secret never joins.
	forged, err := Start(Config{Name: "forged", StoreDir: t.TempDir(),
		Cluster: &Cluster{Name: "kassa-test", Host: "127.0.0.1", Port: -1, Routes: []string{hc.hubs[0].ClusterURL()},
			Secret: "another-secret-0123456789abcdef-0123"}}, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	defer forged.Shutdown()
	// The forged hub's attempts are refused: give it a few, then check.
	deadline := time.Now().Add(1500 * time.Millisecond)
	for time.Now().Before(deadline) {
		if hc.hubs[0].Peers() != 0 || forged.Peers() != 0 {
			t.Fatal("a hub with the wrong secret joined the cluster")
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func TestEdgeTakesANewSetOfLeafURLs(t *testing.T) {
	hc := startHubCluster(t, 2)
	urls := hc.leafURLs()
	edge, err := Start(Config{Name: "edge", StoreDir: t.TempDir(), LeafRemotes: urls[:1]}, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	defer edge.Shutdown()
	wait.For(t, 10*time.Second, "the leaf link to the first hub", func() bool { return hc.hubs[0].LeafConnections() == 1 })
	// The cluster's set changes to the second hub only: the edge moves.
	if err := edge.SetLeafRemotes(urls[1:], nil); err != nil {
		t.Fatal(err)
	}
	wait.For(t, 10*time.Second, "the leaf link to the second hub", func() bool {
		return hc.hubs[1].LeafConnections() == 1 && hc.hubs[0].LeafConnections() == 0 && edge.LeafConnected()
	})
}

func TestAcrossHubsTheNewestLeafSessionOfAnEdgeWins(t *testing.T) {
	hc := startHubCluster(t, 2)
	urls := hc.leafURLs()
	quiet := slog.New(slog.DiscardHandler)
	first, err := Start(Config{Name: "edge-1", StoreDir: t.TempDir(), LeafRemotes: urls[:1]}, quiet)
	if err != nil {
		t.Fatal(err)
	}
	defer first.Shutdown()
	wait.For(t, 10*time.Second, "the first session at the first hub", func() bool { return hc.hubs[0].LeafConnections() == 1 })
	// The same credentials attach at the other hub (the edge came back
	// there after a silent cut, or a copy of its credentials did): the
	// first hub closes its session and says why.
	second, err := Start(Config{Name: "edge-2", StoreDir: t.TempDir(), LeafRemotes: urls[1:]}, quiet)
	if err != nil {
		t.Fatal(err)
	}
	defer second.Shutdown()
	wait.For(t, 10*time.Second, "the older session closed", func() bool {
		return strings.Contains(hc.logs.String(), "leaf session closed: the edge attached to another hub")
	})
}

func TestClusterRoutesAreTLSWhenTheHubHasACertificate(t *testing.T) {
	certs := tlstest.New(t)
	routeTLS := certs.Server(t).Clone()
	routeTLS.RootCAs = certs.Client().RootCAs
	log := slog.New(slog.DiscardHandler)
	var hubs []*Server
	var seed []string
	for _, name := range []string{"hub-a", "hub-b"} {
		s, err := Start(Config{Name: name, StoreDir: t.TempDir(),
			Cluster: &Cluster{Name: "kassa-test", Host: "127.0.0.1", Port: -1, Routes: seed, Secret: testSecret, TLS: routeTLS}}, log)
		if err != nil {
			t.Fatal(err)
		}
		defer s.Shutdown()
		seed = []string{s.ClusterURL()}
		hubs = append(hubs, s)
	}
	wait.For(t, 10*time.Second, "the TLS route", func() bool { return hubs[0].Peers() == 1 && hubs[1].Peers() == 1 })
	// A plain-text route with the right secret gets nowhere.
	c, err := net.Dial("tcp", hubs[0].ClusterURL())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(10 * time.Second))
	// The route listener starts with the TLS handshake: plain text gets
	// the connection closed, no INFO, no PONG.
	c.Write([]byte(`CONNECT {"user":"kassa-hub","pass":"` + testSecret + `","name":"plain","cluster":"kassa-test"}` + "\r\nPING\r\n"))
	got, _ := io.ReadAll(c)
	if strings.Contains(string(got), "PONG") || strings.Contains(string(got), "INFO") || hubs[0].Peers() != 1 {
		t.Fatalf("a plain-text route was answered: %q", got)
	}
}
