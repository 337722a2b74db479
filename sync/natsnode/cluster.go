package natsnode

import (
	"crypto/tls"
	"encoding/json"
	"fmt"
	"log/slog"
	"net"
	"net/url"
	"strconv"
	"strings"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
)

// Cluster joins a hub's server to a NATS cluster of hubs (docs/cluster.md).
// Every hub of a cluster has the same Name and Secret and routes to the
// others; requests an edge sends reach whichever hub answers first in the
// queue group, and a message to an edge reaches it through whichever hub
// holds its leaf session.
type Cluster struct {
	Name   string   // the cluster's name, the same on every hub
	Host   string   // route listen host
	Port   int      // route listen port; -1 picks a free one
	Routes []string // host:port (or nats-route://host:port) of the other hubs; this hub's own is ignored
	// Secret authenticates routes: a hub presents it and checks the one
	// presented, in constant time (NATS's own route authentication). It
	// is never part of a URL given on a command line.
	Secret string
	// TLS, when set, is the route listener's server side and the client
	// side of routes to the other hubs (it must verify their certificates):
	// every route is TLS.
	TLS *tls.Config
}

// MinClusterSecret is the shortest route secret accepted.
const MinClusterSecret = 32

// routeUser is the user name routes present with the secret.
const routeUser = "kassa-hub"

// Subjects hubs tell each other on, in the node's own account: edges'
// permissions (allow lists) and outside clients (another account) reach
// neither.
const (
	subjectLeaf   = "kassa.cluster.leaf"   // a hub authenticated an edge's leaf session: {user, hub}
	subjectRevoke = "kassa.cluster.revoke" // an edge was revoked: its user; every hub cuts its session
)

// leafNews is what a hub announces when it authenticated a leaf session.
type leafNews struct {
	User string `json:"user"`
	Hub  string `json:"hub"`
}

// clusterOptions sets the route options of cfg.Cluster on opts. A hub in
// a cluster runs without JetStream (decision 2026-11-28, docs/cluster.md):
// no production code uses the hub's, and a clustered JetStream would need
// its own quorum of hubs and storage.
func clusterOptions(opts *server.Options, cfg Config) error {
	c := cfg.Cluster
	if c == nil {
		return nil
	}
	if c.Name == "" || len(c.Secret) < MinClusterSecret {
		return fmt.Errorf("natsnode: a cluster needs a name and a secret of at least %d characters", MinClusterSecret)
	}
	opts.JetStream, opts.JetStreamDomain = false, ""
	opts.Cluster = server.ClusterOpts{Name: c.Name, Host: c.Host, Port: c.Port, Username: routeUser, Password: c.Secret,
		AuthTimeout: 5, TLSTimeout: 5, TLSConfig: c.TLS, PingInterval: PingInterval, MaxPingsOut: 2}
	for _, r := range c.Routes {
		u, err := routeURL(r, c.Secret)
		if err != nil {
			return err
		}
		opts.Routes = append(opts.Routes, u)
	}
	return nil
}

// routeURL reads host:port or a nats-route URL and adds the credentials.
func routeURL(r, secret string) (*url.URL, error) {
	if !strings.Contains(r, "://") {
		r = "nats-route://" + r
	}
	u, err := url.Parse(r)
	if err != nil || u.Hostname() == "" || u.Port() == "" {
		return nil, fmt.Errorf("natsnode: route %q: want host:port", r)
	}
	u.User = url.UserPassword(routeUser, secret)
	return u, nil
}

// leafRemotes is one leaf remote over urls (nil for none).
func leafRemotes(urls []string, leafTLS *tls.Config) ([]*server.RemoteLeafOpts, error) {
	if len(urls) == 0 {
		return nil, nil
	}
	r := &server.RemoteLeafOpts{}
	for _, s := range urls {
		u, err := url.Parse(s)
		if err != nil { // url.Error quotes the URL, credentials included: not passed on
			return nil, fmt.Errorf("natsnode: leaf remote %q is not a URL", redact(s))
		}
		r.URLs = append(r.URLs, u)
	}
	if leafTLS != nil {
		r.TLS, r.TLSConfig, r.TLSTimeout = true, leafTLS, 5
	}
	return []*server.RemoteLeafOpts{r}, nil
}

// redact drops the credentials of a URL for logs and errors.
func redact(s string) string {
	if i, j := strings.Index(s, "://"), strings.LastIndex(s, "@"); i >= 0 && j > i {
		return s[:i+3] + s[j+1:]
	}
	return s
}

// cluster is a hub's in-process connection for what hubs tell each other.
type cluster struct {
	nc *nats.Conn
}

// startCluster connects the hub's cluster client and subscribes to the
// other hubs' news; nil for a lone server.
func startCluster(ns *server.Server, opts *server.Options, cfg Config, log *slog.Logger) (*cluster, error) {
	if cfg.Cluster == nil {
		return nil, nil
	}
	a := opts.CustomClientAuthentication.(*auth)
	nc, err := nats.Connect("", nats.InProcessServer(ns), nats.Name("cluster"), nats.MaxReconnects(-1), nats.Token(a.token), nats.NoEcho())
	if err != nil {
		return nil, fmt.Errorf("natsnode: cluster client: %w", err)
	}
	_, err = nc.Subscribe(subjectLeaf, func(m *nats.Msg) {
		var n leafNews
		if json.Unmarshal(m.Data, &n) != nil || n.Hub == a.name {
			return
		}
		// The edge is attached elsewhere now: a session of it here is
		// stale (its network went away silently) or a second process
		// with the same credentials; the newest session wins.
		if a.disconnect(n.User) {
			log.Warn("leaf session closed: the edge attached to another hub", "user", n.User, "hub", n.Hub)
		}
		if a.onLeaf != nil {
			a.onLeaf(n.User, n.Hub)
		}
	})
	if err == nil {
		_, err = nc.Subscribe(subjectRevoke, func(m *nats.Msg) {
			if a.disconnect(string(m.Data)) {
				log.Info("leaf session of a revoked edge closed", "user", string(m.Data))
			}
		})
	}
	if err == nil {
		err = nc.Flush()
	}
	if err != nil {
		nc.Close()
		return nil, fmt.Errorf("natsnode: cluster client: %w", err)
	}
	return &cluster{nc: nc}, nil
}

func (c *cluster) publish(subject string, data []byte) {
	if c != nil {
		c.nc.Publish(subject, data)
	}
}

func (c *cluster) close() {
	if c != nil {
		c.nc.Close()
	}
}

// attached tells this hub and the others that user's edge is attached here.
func (a *auth) attached(user string) {
	b, _ := json.Marshal(leafNews{User: user, Hub: a.name})
	a.cluster.publish(subjectLeaf, b)
	if a.onLeaf != nil {
		a.onLeaf(user, a.name)
	}
}

// disconnect closes user's leaf session at this server, if it has one up.
func (a *auth) disconnect(user string) bool {
	a.mu.Lock()
	sess, ok := a.sessions[user]
	a.mu.Unlock()
	return ok && a.srv.DisconnectClientByID(sess.cid) == nil
}

// DisconnectLeaf closes the leaf session of user (an edge's node id)
// wherever it is up: at this hub, and, in a cluster, at whichever hub
// holds it. After its credentials were revoked it must not keep a link it
// authenticated before.
func (s *Server) DisconnectLeaf(user string) {
	s.auth.disconnect(user)
	s.auth.cluster.publish(subjectRevoke, []byte(user))
}

// Name is the server's name (Config.Name).
func (s *Server) Name() string { return s.auth.name }

// LeafConnections counts the leaf sessions up at this server.
func (s *Server) LeafConnections() int { return s.ns.NumLeafNodes() }

// ClusterURL is the host:port other hubs route to, or "" outside a cluster.
func (s *Server) ClusterURL() string {
	if s.opts.Cluster.Port <= 0 {
		return ""
	}
	return net.JoinHostPort(s.opts.Cluster.Host, strconv.Itoa(s.opts.Cluster.Port))
}

// Peers counts the other hubs this one has a route up to (NATS may keep
// several connections to each).
func (s *Server) Peers() int {
	rz, err := s.ns.Routez(nil)
	if err != nil {
		return 0
	}
	ids := map[string]bool{}
	for _, r := range rz.Routes {
		ids[r.RemoteID] = true
	}
	return len(ids)
}

// SetLeafRemotes replaces an edge's leaf URLs (the hub's cluster changed):
// the server reloads its leaf remote; the link reconnects to one of the
// new URLs if it was up on a URL no longer listed or on none.
func (s *Server) SetLeafRemotes(urls []string, leafTLS *tls.Config) error {
	s.remotesMu.Lock()
	defer s.remotesMu.Unlock()
	remotes, err := leafRemotes(urls, leafTLS)
	if err != nil {
		return err
	}
	opts := s.opts.Clone()
	opts.LeafNode.Remotes = remotes
	if opts.DontListen {
		opts.Port = -1 // the reload then keeps the port it has (none)
	}
	if err := s.ns.ReloadOptions(opts); err != nil {
		return fmt.Errorf("natsnode: new leaf remotes: %w", err)
	}
	s.opts = opts
	s.log.Info("leaf remotes replaced", "urls", len(urls))
	return nil
}
