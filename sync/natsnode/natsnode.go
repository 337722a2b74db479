// Package natsnode runs the NATS server embedded in every Kassa node.
//
// The hub's server has JetStream and a leaf-node listener; an edge's server
// has JetStream for store-and-forward and, once enrolled, a leaf-node remote
// to its hub. Ports are configurable (-1 picks a free one) so that several
// nodes run side by side on one machine.
//
// Trust: the node's own clients connect in-process with a token minted at
// start. There is no client listener unless Port is set, and on it only
// clients presenting ListenToken are admitted, into an account of their
// own: they reach neither the node's subjects (the sync link, its replies)
// nor its JetStream. The hub admits one leaf session per edge credential
// at a time; leaf links are pinged every PingInterval so that a session
// cut off silently is dropped within three intervals.
//
// Several hubs join a NATS cluster (Config.Cluster, cluster.go): routes
// with a shared secret, leaf sessions announced to every hub, revocation
// carried to the hub that holds the edge; an edge's one leaf remote lists
// every hub's URL and fails over among them (docs/cluster.md).
package natsnode

import (
	"crypto/rand"
	"crypto/subtle"
	"crypto/tls"
	"encoding/hex"
	"fmt"
	"log/slog"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
)

// Config describes one embedded server.
type Config struct {
	Name      string // server name, e.g. "hub" or "edge-<node id>"
	Host      string // listen host for outside clients, e.g. 127.0.0.1
	Port      int    // client port; 0: no listener (in-process only), -1: a free port
	StoreDir  string // JetStream storage directory
	JetStream bool

	LeafHost string // hub: leaf-node listen host
	LeafPort int    // hub: leaf-node listen port; 0 disables, -1 picks a free port
	// LeafCompression (hub) is the leaf links' compression, one of
	// LeafCompressionModes; "": off. The hub's choice decides for every
	// link (an edge asks for s2_auto, NATS's default, and takes the hub's
	// off). Each compressed link holds an s2 writer of about a megabyte,
	// so a hub with a hundred edges spent most of its CPU collecting
	// garbage under its memory limit (docs/performance.md, "Hub ingest").
	LeafCompression string

	// LeafRemotes (edge) are the nats-leaf URLs of the hub, with
	// user:password: one leaf remote over all of them, so that when the
	// hub it is attached to dies the edge connects to another of its
	// cluster (docs/cluster.md). SetLeafRemotes replaces them.
	LeafRemotes []string

	// Cluster (hub) joins the hub's server to a NATS cluster of hubs;
	// nil: a lone hub.
	Cluster *Cluster

	// Domain is the JetStream domain, so that an edge's and the hub's
	// JetStream stay apart across the leaf link.
	Domain string

	// LeafAuth (hub) authorizes a leaf connection by its credentials and
	// returns the permissions of that edge; nil refuses it. A second
	// session with the same user while the first is up is refused.
	LeafAuth func(user, password string) *server.Permissions
	// OnLeaf (hub) is told of every leaf session authenticated in the
	// cluster: user's edge is now attached to the hub named hub (this
	// server's Name or another hub's). It must not block.
	OnLeaf func(user, hub string)
	// ClientToken is what the node's own in-process clients present;
	// empty: one is minted (Connect with an empty token uses it).
	ClientToken string
	// ListenToken admits outside clients on the client listener (Port),
	// compared in constant time, into the isolated account LocalAccount.
	// Empty: no outside client is admitted.
	ListenToken string
	// TLS (hub) is the server side of the leaf listener and of the client
	// listener: with it, both require TLS and plain-text connections fail.
	TLS *tls.Config
	// LeafTLS (edge) makes the leaf remotes TLS connections verified with
	// its RootCAs (the hub's name comes from the URL).
	LeafTLS *tls.Config
}

// LocalAccount is the account of outside clients on the client listener:
// no JetStream, no subjects shared with the node's own account.
const LocalAccount = "kassa-local"

// PingInterval is how often every connection, leaf links included, is
// pinged when quiet; after two unanswered pings it is closed, so a leaf
// session whose network went away silently is dropped within about 15 s
// and its edge can connect again.
const PingInterval = 5 * time.Second

// outsidePermissions bar outside clients from JetStream and the system
// subjects even within their own account.
var outsidePermissions = &server.Permissions{
	Publish:   &server.SubjectPermission{Deny: []string{"$JS.>", "$JSC.>", "$KV.>", "$O.>", "$SYS.>", "$NRG.>", "$MQTT.>"}},
	Subscribe: &server.SubjectPermission{Deny: []string{"$JS.>", "$JSC.>", "$KV.>", "$O.>", "$SYS.>", "$NRG.>", "$MQTT.>"}},
}

// LeafCompressionModes are the leaf links' compression modes a hub takes
// (NATS's names).
var LeafCompressionModes = []string{server.CompressionOff, server.CompressionS2Auto, server.CompressionS2Uncompressed,
	server.CompressionS2Fast, server.CompressionS2Better, server.CompressionS2Best}

// Server is a running embedded NATS server.
type Server struct {
	ns    *server.Server
	opts  *server.Options // the server writes resolved ports back here
	token string          // the in-process clients' token
	auth  *auth
	log   *slog.Logger

	remotesMu sync.Mutex // serializes SetLeafRemotes
}

// Start starts the server and waits until it accepts connections.
func Start(cfg Config, log *slog.Logger) (*Server, error) {
	var err error
	opts := &server.Options{
		ServerName: cfg.Name,
		Host:       cfg.Host,
		Port:       cfg.Port,
		// NATS opens routes only once the client listener is up: a hub in
		// a cluster has one even without Port, on 127.0.0.1 at a free port,
		// admitting nobody from outside (only the in-process token).
		DontListen:   cfg.Port == 0 && cfg.Cluster == nil,
		NoSigs:       true,
		MaxPayload:   8 << 20, // room for a push of large change records
		NoLog:        true,
		JetStream:    cfg.JetStream,
		StoreDir:     filepath.Clean(cfg.StoreDir),
		PingInterval: PingInterval,
		MaxPingsOut:  2,
		Accounts:     []*server.Account{server.NewAccount(LocalAccount)},
	}
	if cfg.Port == 0 {
		opts.Host, opts.Port = "127.0.0.1", -1 // unused: nothing listens
	}
	if cfg.TLS != nil && cfg.Port != 0 {
		opts.TLSConfig, opts.TLSTimeout = cfg.TLS, 5
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
		opts.LeafNode.Compression.Mode = server.CompressionOff
		if cfg.LeafCompression != "" {
			if !slices.Contains(LeafCompressionModes, cfg.LeafCompression) {
				return nil, fmt.Errorf("natsnode: leaf compression %q: want one of %s", cfg.LeafCompression, strings.Join(LeafCompressionModes, ", "))
			}
			opts.LeafNode.Compression.Mode = cfg.LeafCompression
		}
		if cfg.TLS != nil {
			opts.LeafNode.TLSConfig, opts.LeafNode.TLSTimeout = cfg.TLS, 5
		}
	}
	token := cfg.ClientToken
	if token == "" {
		token = randomToken()
	}
	a := &auth{leaf: cfg.LeafAuth, token: token, listen: cfg.ListenToken, sessions: map[string]session{}, log: log, onLeaf: cfg.OnLeaf}
	opts.CustomClientAuthentication = a
	// A store whose link comes back should notice within a fraction of a
	// second, not the default second: its backlog waits for the link (an
	// edge's pull loop looks at it every few ms, link.Edge.LeafUp), and a
	// dial every 100 ms to a hub that is away costs an edge nothing.
	opts.LeafNode.ReconnectInterval = 100 * time.Millisecond
	if opts.LeafNode.Remotes, err = leafRemotes(cfg.LeafRemotes, cfg.LeafTLS); err != nil {
		return nil, err
	}
	if err := clusterOptions(opts, cfg); err != nil {
		return nil, err
	}
	ns, err := server.NewServer(opts)
	if err != nil {
		return nil, fmt.Errorf("natsnode: %w", err)
	}
	a.srv, a.name = ns, cfg.Name
	if a.local, err = ns.LookupAccount(LocalAccount); err != nil {
		return nil, fmt.Errorf("natsnode: %w", err)
	}
	go ns.Start()
	if !ns.ReadyForConnections(10 * time.Second) {
		ns.Shutdown()
		return nil, fmt.Errorf("natsnode: server %s not ready within 10s", cfg.Name)
	}
	// With LocalAccount configured the server no longer enables JetStream
	// on the global account by itself; the node's own clients live there.
	if opts.JetStream {
		if err := ns.GlobalAccount().EnableJetStream(nil, nil); err != nil {
			ns.Shutdown()
			return nil, fmt.Errorf("natsnode: jetstream: %w", err)
		}
	}
	cl, err := startCluster(ns, opts, cfg, log)
	if err != nil {
		ns.Shutdown()
		return nil, err
	}
	a.cluster = cl
	listen := "none"
	if cfg.Port != 0 {
		listen = ns.ClientURL()
	}
	log.Info("nats server started", "name", cfg.Name, "client_listener", listen, "jetstream", opts.JetStream, "tls", cfg.TLS != nil,
		"cluster", opts.Cluster.Name)
	return &Server{ns: ns, opts: opts, token: token, auth: a, log: log}, nil
}

// ClientURL is the URL outside clients connect to, or "" when the server
// has no client listener.
func (s *Server) ClientURL() string {
	if s.opts.DontListen {
		return ""
	}
	return s.ns.ClientURL()
}

// LeafURL is the nats-leaf URL edges connect to, or "" when the server has
// no leaf-node listener.
func (s *Server) LeafURL() string {
	if s.opts.LeafNode.Port <= 0 {
		return ""
	}
	return fmt.Sprintf("nats-leaf://%s:%d", s.opts.LeafNode.Host, s.opts.LeafNode.Port)
}

// Connect returns an in-process client connection to the server; token is
// the server's ClientToken ("" uses it too). Extra options (a custom inbox
// prefix, handlers) are passed on.
func (s *Server) Connect(name, token string, extra ...nats.Option) (*nats.Conn, error) {
	if token == "" {
		token = s.token
	}
	opts := append([]nats.Option{nats.InProcessServer(s.ns), nats.Name(name), nats.MaxReconnects(-1), nats.Token(token)}, extra...)
	return nats.Connect("", opts...)
}

// LeafConnected reports whether the server has a live leaf-node link.
func (s *Server) LeafConnected() bool { return s.ns.NumLeafNodes() > 0 }

// auth is every node's authenticator: leaf connections by their edge's
// credentials (hub), the node's own clients by its in-process token,
// outside clients by the listen token into their own account.
type auth struct {
	leaf   func(user, password string) *server.Permissions
	token  string
	listen string
	srv    *server.Server
	name   string // the server's name: the hub an edge is attached to
	local  *server.Account
	log    *slog.Logger
	// cluster announces this server's leaf sessions to the other hubs
	// (nil on a lone server); onLeaf hears of every session in the
	// cluster, this server's included.
	cluster *cluster
	onLeaf  func(user, hub string)

	mu       sync.Mutex
	sessions map[string]session // leaf user → its latest session
}

type session struct {
	cid uint64    // the server's connection id
	at  time.Time // when it was authenticated
}

// pendingGrace covers the moment between a leaf session's authentication
// and its registration with the server, when Leafz does not list it yet.
const pendingGrace = 2 * time.Second

func (a *auth) Check(c server.ClientAuthentication) bool {
	o := c.GetOpts()
	switch c.Kind() {
	case server.LEAF:
		if a.leaf == nil {
			return false
		}
		perms := a.leaf(o.Username, o.Password)
		if perms == nil {
			return false
		}
		if !a.claimSession(o.Username, c.GetID()) {
			a.log.Warn("leaf connection refused: a session with the same credentials is up", "user", o.Username,
				"remote", c.RemoteAddress().String())
			return false
		}
		c.RegisterUser(&server.User{Username: o.Username, Permissions: perms})
		a.attached(o.Username)
		return true
	case server.CLIENT:
		if equal(o.Token, a.token) {
			return true
		}
		if a.listen != "" && equal(o.Token, a.listen) {
			c.RegisterUser(&server.User{Username: "local", Account: a.local, Permissions: outsidePermissions})
			return true
		}
	}
	return false
}

// claimSession records cid as user's leaf session unless another session
// of user is alive: listed by the server, or authenticated so recently
// that the server may not list it yet.
func (a *auth) claimSession(user string, cid uint64) bool {
	a.mu.Lock()
	defer a.mu.Unlock()
	if old, ok := a.sessions[user]; ok && (time.Since(old.at) < pendingGrace || a.listed(old.cid)) {
		return false
	}
	a.sessions[user] = session{cid: cid, at: time.Now()}
	return true
}

func (a *auth) listed(cid uint64) bool {
	lz, err := a.srv.Leafz(nil)
	if err != nil {
		return false
	}
	for _, l := range lz.Leafs {
		if l.ID == cid {
			return true
		}
	}
	return false
}

func equal(got, want string) bool {
	return want != "" && subtle.ConstantTimeCompare([]byte(got), []byte(want)) == 1
}

func randomToken() string {
	b := make([]byte, 24)
	if _, err := rand.Read(b); err != nil {
		panic(err)
	}
	return hex.EncodeToString(b)
}

// Ready reports whether the server accepts connections.
func (s *Server) Ready() bool { return s.ns.Running() && s.ns.ReadyForConnections(time.Millisecond) }

// Shutdown stops the server and waits for it to finish.
func (s *Server) Shutdown() {
	s.auth.cluster.close()
	s.ns.Shutdown()
	s.ns.WaitForShutdown()
}
