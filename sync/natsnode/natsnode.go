// Package natsnode runs the NATS server embedded in every Kassa node.
//
// The hub's server has JetStream and a leaf-node listener; an edge's server
// has JetStream for store-and-forward and, once enrolled, a leaf-node remote
// to its hub. Ports are configurable (-1 picks a free one) so that several
// nodes run side by side on one machine.
package natsnode

import (
	"crypto/subtle"
	"fmt"
	"log/slog"
	"net/url"
	"path/filepath"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
)

// Config describes one embedded server.
type Config struct {
	Name      string // server name, e.g. "hub" or "edge-<node id>"
	Host      string // listen host for clients, e.g. 127.0.0.1
	Port      int    // client port; -1 picks a free port
	StoreDir  string // JetStream storage directory
	JetStream bool

	LeafHost string // hub: leaf-node listen host
	LeafPort int    // hub: leaf-node listen port; 0 disables, -1 picks a free port

	LeafRemotes []string // edge: nats-leaf URLs of the hub, with user:password

	// Domain is the JetStream domain, so that an edge's and the hub's
	// JetStream stay apart across the leaf link.
	Domain string

	// LeafAuth (hub) authorizes a leaf connection by its credentials and
	// returns the permissions of that edge; nil refuses it. With LeafAuth
	// set, plain clients must present ClientToken (in-process clients of
	// the node itself).
	LeafAuth    func(user, password string) *server.Permissions
	ClientToken string
}

// Server is a running embedded NATS server.
type Server struct {
	ns   *server.Server
	opts *server.Options // the server writes resolved ports back here
}

// Start starts the server and waits until it accepts connections.
func Start(cfg Config, log *slog.Logger) (*Server, error) {
	opts := &server.Options{
		ServerName: cfg.Name,
		Host:       cfg.Host,
		Port:       cfg.Port,
		NoSigs:     true,
		MaxPayload: 8 << 20, // room for a push of large change records
		NoLog:      true,
		JetStream:  cfg.JetStream,
		StoreDir:   filepath.Clean(cfg.StoreDir),
	}
	if cfg.Domain != "" {
		opts.JetStreamDomain = cfg.Domain
	}
	if cfg.LeafPort != 0 {
		opts.LeafNode.Host = cfg.LeafHost
		opts.LeafNode.Port = cfg.LeafPort
		// Edges reach the hub at the URL they were enrolled with (which may
		// go through a proxy); they must not learn other addresses.
		opts.LeafNode.NoAdvertise = true
	}
	if cfg.LeafAuth != nil {
		opts.CustomClientAuthentication = &auth{leaf: cfg.LeafAuth, token: cfg.ClientToken}
	}
	// A store whose link comes back should notice within a fraction of a
	// second, not the default second.
	opts.LeafNode.ReconnectInterval = 250 * time.Millisecond
	for _, r := range cfg.LeafRemotes {
		u, err := url.Parse(r)
		if err != nil {
			return nil, fmt.Errorf("natsnode: leaf remote %q: %w", r, err)
		}
		opts.LeafNode.Remotes = append(opts.LeafNode.Remotes, &server.RemoteLeafOpts{URLs: []*url.URL{u}})
	}
	ns, err := server.NewServer(opts)
	if err != nil {
		return nil, fmt.Errorf("natsnode: %w", err)
	}
	go ns.Start()
	if !ns.ReadyForConnections(10 * time.Second) {
		ns.Shutdown()
		return nil, fmt.Errorf("natsnode: server %s not ready within 10s", cfg.Name)
	}
	log.Info("nats server started", "name", cfg.Name, "url", ns.ClientURL(), "jetstream", cfg.JetStream)
	return &Server{ns: ns, opts: opts}, nil
}

// ClientURL is the URL local clients connect to.
func (s *Server) ClientURL() string { return s.ns.ClientURL() }

// LeafURL is the nats-leaf URL edges connect to, or "" when the server has
// no leaf-node listener.
func (s *Server) LeafURL() string {
	if s.opts.LeafNode.Port <= 0 {
		return ""
	}
	return fmt.Sprintf("nats-leaf://%s:%d", s.opts.LeafNode.Host, s.opts.LeafNode.Port)
}

// Connect returns an in-process client connection to the server; token is
// the server's ClientToken when it has one. Extra options (a custom inbox
// prefix, handlers) are passed on.
func (s *Server) Connect(name, token string, extra ...nats.Option) (*nats.Conn, error) {
	opts := append([]nats.Option{nats.InProcessServer(s.ns), nats.Name(name), nats.MaxReconnects(-1)}, extra...)
	if token != "" {
		opts = append(opts, nats.Token(token))
	}
	return nats.Connect("", opts...)
}

// LeafConnected reports whether the server has a live leaf-node link.
func (s *Server) LeafConnected() bool { return s.ns.NumLeafNodes() > 0 }

// auth is the hub's authenticator: leaf connections by their edge's
// credentials, plain clients by the node's own token.
type auth struct {
	leaf  func(user, password string) *server.Permissions
	token string
}

func (a *auth) Check(c server.ClientAuthentication) bool {
	o := c.GetOpts()
	switch c.Kind() {
	case server.LEAF:
		perms := a.leaf(o.Username, o.Password)
		if perms == nil {
			return false
		}
		c.RegisterUser(&server.User{Username: o.Username, Permissions: perms})
		return true
	case server.CLIENT:
		return a.token != "" && subtle.ConstantTimeCompare([]byte(o.Token), []byte(a.token)) == 1
	}
	return false
}

// Ready reports whether the server accepts connections.
func (s *Server) Ready() bool { return s.ns.Running() && s.ns.ReadyForConnections(time.Millisecond) }

// Shutdown stops the server and waits for it to finish.
func (s *Server) Shutdown() {
	s.ns.Shutdown()
	s.ns.WaitForShutdown()
}
