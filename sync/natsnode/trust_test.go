package natsnode

import (
	"bufio"
	"bytes"
	"context"
	"log/slog"
	"net"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"kassa.dev/sync/tlstest"
	"kassa.dev/sync/wait"
)

// syncLog collects log output for tests that wait on a logged event.
type syncLog struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *syncLog) Write(p []byte) (int, error) { l.mu.Lock(); defer l.mu.Unlock(); return l.b.Write(p) }
func (l *syncLog) String() string              { l.mu.Lock(); defer l.mu.Unlock(); return l.b.String() }

func TestNoClientListenerWithoutPort(t *testing.T) {
	log := slog.New(slog.DiscardHandler)
	s, err := Start(Config{Name: "edge", StoreDir: t.TempDir(), JetStream: true}, log)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Shutdown()
	if u := s.ClientURL(); u != "" {
		t.Fatalf("a server without a port has a client listener at %s", u)
	}
	if s.ns.Addr() != nil {
		t.Fatalf("the server listens at %v", s.ns.Addr())
	}
	// The node's own in-process clients still work, JetStream included.
	nc, err := s.Connect("self", "")
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	js, _ := jetstream.New(nc)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if _, err := js.AccountInfo(ctx); err != nil {
		t.Fatalf("in-process JetStream: %v", err)
	}
}

func TestClientListenerNeedsTokenAndIsolatesOutsideClients(t *testing.T) {
	log := slog.New(slog.DiscardHandler)
	s, err := Start(Config{Name: "edge", Host: "127.0.0.1", Port: -1, StoreDir: t.TempDir(), JetStream: true,
		ListenToken: "outside-token-0123456789"}, log)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Shutdown()
	for _, opt := range []nats.Option{nil, nats.Token("wrong"), nats.UserInfo("edge", "x")} {
		var opts []nats.Option
		if opt != nil {
			opts = append(opts, opt)
		}
		if nc, err := nats.Connect(s.ClientURL(), opts...); err == nil {
			nc.Close()
			t.Fatal("a client without the listen token connected")
		}
	}
	out, err := nats.Connect(s.ClientURL(), nats.Token("outside-token-0123456789"))
	if err != nil {
		t.Fatalf("with the listen token: %v", err)
	}
	defer out.Close()
	// No JetStream for outside clients.
	js, _ := jetstream.New(out)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	if _, err := js.AccountInfo(ctx); err == nil {
		t.Fatal("an outside client reached JetStream")
	}
	// Nothing crosses between outside clients and the node's own: the
	// node's subscriber on kassa.> gets its own message but not the
	// outside client's, sent before it on the same subject.
	self, err := s.Connect("self", "")
	if err != nil {
		t.Fatal(err)
	}
	defer self.Close()
	got := make(chan string, 10)
	self.Subscribe("kassa.>", func(m *nats.Msg) { got <- string(m.Data) })
	self.Flush()
	leak := make(chan string, 10)
	out.Subscribe("kassa.>", func(m *nats.Msg) { leak <- string(m.Data) })
	out.Flush()
	out.Publish("kassa.up.x", []byte("outside"))
	out.Flush()
	self.Publish("kassa.up.x", []byte("self"))
	self.Flush()
	select {
	case m := <-got:
		if m != "self" {
			t.Fatalf("the node received %q from an outside client", m)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("the node's own message did not arrive")
	}
	// Outside subscriber: the outside message is its own (same account),
	// the node's message must not be there.
	out.Publish("kassa.probe", []byte("probe"))
	out.Flush()
	for m := range leak {
		if m == "self" {
			t.Fatal("an outside client read the node's traffic")
		}
		if m == "probe" {
			break
		}
	}
}

func TestHubRefusesSecondLeafSessionWithSameCredentials(t *testing.T) {
	var logs syncLog
	log := slog.New(slog.NewTextHandler(&logs, nil))
	hub, err := Start(Config{Name: "hub", StoreDir: t.TempDir(), LeafHost: "127.0.0.1", LeafPort: -1,
		LeafAuth: onlyEdge(&server.Permissions{})}, log)
	if err != nil {
		t.Fatal(err)
	}
	defer hub.Shutdown()
	u, _ := url.Parse(hub.LeafURL())
	u.User = url.UserPassword("edge", "secret")
	quiet := slog.New(slog.DiscardHandler)
	first, err := Start(Config{Name: "edge-1", StoreDir: t.TempDir(), LeafRemotes: []string{u.String()}}, quiet)
	if err != nil {
		t.Fatal(err)
	}
	wait.For(t, 5*time.Second, "the first session", first.LeafConnected)
	second, err := Start(Config{Name: "edge-2", StoreDir: t.TempDir(), LeafRemotes: []string{u.String()}}, quiet)
	if err != nil {
		t.Fatal(err)
	}
	defer second.Shutdown()
	wait.For(t, 10*time.Second, "the second session to be refused", func() bool {
		return strings.Contains(logs.String(), "a session with the same credentials is up")
	})
	if second.LeafConnected() || hub.ns.NumLeafNodes() != 1 || !first.LeafConnected() {
		t.Fatalf("second connected %v, hub sessions %d, first connected %v", second.LeafConnected(), hub.ns.NumLeafNodes(), first.LeafConnected())
	}
	// Once the first is gone (its process died: the socket closes), the
	// same credentials connect again promptly.
	first.Shutdown()
	wait.For(t, 10*time.Second, "the second session once the first is gone", second.LeafConnected)
}

func TestTLSLeafListenerRefusesPlainText(t *testing.T) {
	certs := tlstest.New(t)
	log := slog.New(slog.DiscardHandler)
	hub, err := Start(Config{Name: "hub", StoreDir: t.TempDir(), LeafHost: "127.0.0.1", LeafPort: -1, TLS: certs.Server(t),
		LeafAuth: onlyEdge(&server.Permissions{})}, log)
	if err != nil {
		t.Fatal(err)
	}
	defer hub.Shutdown()
	u, _ := url.Parse(hub.LeafURL())
	// A plain-text leaf CONNECT with valid credentials gets no session.
	c, err := net.Dial("tcp", u.Host)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(10 * time.Second))
	r := bufio.NewReader(c)
	info, err := r.ReadString('\n')
	if err != nil || !strings.Contains(info, `"tls_required":true`) {
		t.Fatalf("INFO %q, %v", info, err)
	}
	c.Write([]byte(`CONNECT {"user":"edge","pass":"secret","tls_required":false,"name":"plain"}` + "\r\nPING\r\n"))
	rest := make([]byte, 4096)
	n, _ := r.Read(rest)
	if bytes.Contains(rest[:n], []byte("PONG")) || hub.ns.NumLeafNodes() != 0 {
		t.Fatalf("a plain-text leaf was accepted: %q", rest[:n])
	}
	// Over TLS, verifying the hub against the CA, the edge connects.
	u.User = url.UserPassword("edge", "secret")
	edge, err := Start(Config{Name: "edge", StoreDir: t.TempDir(), LeafRemotes: []string{u.String()}, LeafTLS: certs.Client()}, log)
	if err != nil {
		t.Fatal(err)
	}
	defer edge.Shutdown()
	wait.For(t, 10*time.Second, "the TLS leaf link", edge.LeafConnected)
}
