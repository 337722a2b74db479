package natsnode

import (
	"log/slog"
	"net/url"
	"testing"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"

	"kassa.dev/sync/wait"
)

func TestLeafPermissionsDirection(t *testing.T) {
	log := slog.New(slog.DiscardHandler)
	perms := &server.Permissions{
		Publish:   &server.SubjectPermission{Allow: []string{"p.allowed"}},
		Subscribe: &server.SubjectPermission{Allow: []string{"s.allowed"}},
	}
	hub, err := Start(Config{Name: "hub", Host: "127.0.0.1", Port: -1, StoreDir: t.TempDir(), LeafHost: "127.0.0.1", LeafPort: -1,
		ClientToken: "tok", LeafAuth: onlyEdge(perms)}, log)
	if err != nil {
		t.Fatal(err)
	}
	defer hub.Shutdown()
	u, _ := url.Parse(hub.LeafURL())
	u.User = url.UserPassword("edge", "secret")
	edge, err := Start(Config{Name: "edge", Host: "127.0.0.1", Port: -1, StoreDir: t.TempDir(), LeafRemotes: []string{u.String()}}, log)
	if err != nil {
		t.Fatal(err)
	}
	defer edge.Shutdown()
	wait.For(t, 5*time.Second, "leaf link", edge.LeafConnected)
	hc, err := hub.Connect("hub", "tok")
	if err != nil {
		t.Fatal(err)
	}
	ec, err := edge.Connect("edge", "")
	if err != nil {
		t.Fatal(err)
	}
	// Each side subscribes to every subject; what crosses the link is
	// decided by the edge's permissions: Publish for edge → hub, Subscribe
	// for hub → edge. A forbidden message is followed by an allowed one on
	// the same path: once the allowed one arrived, the forbidden one would
	// have too (messages keep their order), so its absence is proof.
	got := make(chan string, 100)
	for _, subj := range []string{"p.allowed", "s.allowed", "other"} {
		hc.Subscribe(subj, func(m *nats.Msg) {
			if string(m.Data) == "edge" {
				got <- "edge->hub " + m.Subject
			}
		})
		ec.Subscribe(subj, func(m *nats.Msg) {
			if string(m.Data) == "hub" {
				got <- "hub->edge " + m.Subject
			}
		})
	}
	hc.Flush()
	ec.Flush()
	// Interest crosses the link asynchronously: wait until an allowed
	// message gets through each way.
	wait.For(t, 5*time.Second, "interest to propagate", func() bool {
		ec.Publish("p.allowed", []byte("edge"))
		hc.Publish("s.allowed", []byte("hub"))
		seen := map[string]bool{}
		for {
			select {
			case m := <-got:
				seen[m] = true
				continue
			case <-time.After(50 * time.Millisecond):
			}
			return seen["edge->hub p.allowed"] && seen["hub->edge s.allowed"]
		}
	})
	for _, subj := range []string{"other", "s.allowed", "p.allowed"} {
		ec.Publish(subj, []byte("edge"))
	}
	for _, subj := range []string{"other", "p.allowed", "s.allowed"} {
		hc.Publish(subj, []byte("hub"))
	}
	seen := map[string]bool{}
	wait.For(t, 5*time.Second, "the allowed messages", func() bool {
		for {
			select {
			case m := <-got:
				seen[m] = true
			default:
				return seen["edge->hub p.allowed"] && seen["hub->edge s.allowed"]
			}
		}
	})
	for _, forbidden := range []string{"edge->hub other", "edge->hub s.allowed", "hub->edge other", "hub->edge p.allowed"} {
		if seen[forbidden] {
			t.Errorf("%s crossed the link", forbidden)
		}
	}
}

func TestLeafWithWrongCredentialsNeverConnects(t *testing.T) {
	log := slog.New(slog.DiscardHandler)
	hub, err := Start(Config{Name: "hub", Host: "127.0.0.1", Port: -1, StoreDir: t.TempDir(), LeafHost: "127.0.0.1", LeafPort: -1,
		ClientToken: "tok", LeafAuth: func(u, p string) *server.Permissions { return nil }}, log)
	if err != nil {
		t.Fatal(err)
	}
	defer hub.Shutdown()
	if _, err := nats.Connect(hub.ClientURL()); err == nil {
		t.Fatal("a client without the token connected to the hub")
	}
	u, _ := url.Parse(hub.LeafURL())
	u.User = url.UserPassword("edge", "wrong")
	edge, err := Start(Config{Name: "edge", Host: "127.0.0.1", Port: -1, StoreDir: t.TempDir(), LeafRemotes: []string{u.String()}}, log)
	if err != nil {
		t.Fatal(err)
	}
	defer edge.Shutdown()
	// The edge keeps trying; give it a few attempts' time, then check.
	deadline := time.Now().Add(1500 * time.Millisecond)
	for time.Now().Before(deadline) {
		if edge.LeafConnected() {
			t.Fatal("leaf with wrong credentials connected")
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// onlyEdge is a hub's leaf authenticator that admits the user "edge" with
// password "secret", granting perms, and nobody else.
func onlyEdge(perms *server.Permissions) func(user, password string) *server.Permissions {
	return func(u, p string) *server.Permissions {
		if u == "edge" && p == "secret" {
			return perms
		}
		return nil
	}
}

// TestLeafLinksAreUncompressedUnlessTheHubAsks: an edge asks for NATS's
// default (s2_auto) and takes what the hub's leaf listener says; a hub
// names a compression only when told, and refuses one NATS does not know.
func TestLeafLinksAreUncompressedUnlessTheHubAsks(t *testing.T) {
	log := slog.New(slog.DiscardHandler)
	// An edge's s2_auto picks its level by the link's round trip: on
	// loopback, s2 framing without compression.
	for _, tc := range []struct{ hub, wantHub, wantEdge string }{
		{"", server.CompressionOff, server.CompressionOff},
		{server.CompressionS2Fast, server.CompressionS2Fast, server.CompressionS2Uncompressed},
	} {
		hub, err := Start(Config{Name: "hub", StoreDir: t.TempDir(), LeafHost: "127.0.0.1", LeafPort: -1, LeafCompression: tc.hub,
			ClientToken: "tok", LeafAuth: onlyEdge(&server.Permissions{})}, log)
		if err != nil {
			t.Fatal(err)
		}
		u, _ := url.Parse(hub.LeafURL())
		u.User = url.UserPassword("edge", "secret")
		edge, err := Start(Config{Name: "edge", StoreDir: t.TempDir(), LeafRemotes: []string{u.String()}}, log)
		if err != nil {
			t.Fatal(err)
		}
		wait.For(t, 5*time.Second, "leaf link", edge.LeafConnected)
		for name, side := range map[string]struct {
			s    *Server
			want string
		}{"hub": {hub, tc.wantHub}, "edge": {edge, tc.wantEdge}} {
			lz, err := side.s.ns.Leafz(nil)
			if err != nil || len(lz.Leafs) != 1 {
				t.Fatalf("%s: leafz %v %+v", name, err, lz)
			}
			if got := lz.Leafs[0].Compression; got != side.want {
				t.Errorf("hub asking %q: the %s's side of the link compresses %q, want %q", tc.hub, name, got, side.want)
			}
		}
		edge.Shutdown()
		hub.Shutdown()
	}
	if _, err := Start(Config{Name: "hub", StoreDir: t.TempDir(), LeafHost: "127.0.0.1", LeafPort: -1, LeafCompression: "zip"}, log); err == nil {
		t.Error("a hub started with leaf compression \"zip\"")
	}
}
