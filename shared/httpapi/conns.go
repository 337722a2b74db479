package httpapi

import (
	"crypto/tls"
	"net"
	"sync"
	"sync/atomic"
)

// silentConns are the server's connections on which no byte of a request
// has arrived yet. A graceful stop closes them: they hold no request, and
// the HTTP server (fasthttp) counts them as busy and would wait for its
// read timeout (30 s), past the node's --shutdown-timeout. An HTTP client
// leaves such connections: Go's transport dials a spare one when requests
// queue and keeps it idle when another frees up first.
type silentConns struct {
	mu    sync.Mutex
	conns map[*silentConn]struct{}
}

// silentConn is what silentConns knows of one connection.
type silentConn struct {
	set   *silentConns
	raw   net.Conn
	heard atomic.Bool
}

// listener wraps ln so that its connections are tracked until they speak.
func (s *silentConns) listener(ln net.Listener) net.Listener {
	return &silentListener{Listener: ln, set: s}
}

// closeAll closes the connections that have not spoken.
func (s *silentConns) closeAll() {
	s.mu.Lock()
	conns := s.conns
	s.conns = nil
	s.mu.Unlock()
	for c := range conns {
		c.raw.Close()
	}
}

func (s *silentConns) add(c *silentConn) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.conns == nil {
		s.conns = map[*silentConn]struct{}{}
	}
	s.conns[c] = struct{}{}
}

func (s *silentConns) forget(c *silentConn) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.conns, c)
}

// read notes that n bytes arrived on c.
func (c *silentConn) read(n int) {
	if n > 0 && !c.heard.Swap(true) {
		c.set.forget(c)
	}
}

type silentListener struct {
	net.Listener
	set *silentConns
}

// Accept tracks a new connection; a TLS one keeps its TLS methods, which
// the HTTP server asks for (ConnectionState).
func (l *silentListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	t := &silentConn{set: l.set, raw: c}
	l.set.add(t)
	if tc, ok := c.(*tls.Conn); ok {
		return &trackedTLS{Conn: tc, t: t}, nil
	}
	return &trackedConn{Conn: c, t: t}, nil
}

type trackedConn struct {
	net.Conn
	t *silentConn
}

func (c *trackedConn) Read(b []byte) (int, error) {
	n, err := c.Conn.Read(b)
	c.t.read(n)
	return n, err
}

// NetConn is the connection tracked (as tls.Conn.NetConn).
func (c *trackedConn) NetConn() net.Conn { return c.Conn }

func (c *trackedConn) Close() error {
	c.t.set.forget(c.t)
	return c.Conn.Close()
}

type trackedTLS struct {
	*tls.Conn
	t *silentConn
}

func (c *trackedTLS) Read(b []byte) (int, error) {
	n, err := c.Conn.Read(b)
	c.t.read(n)
	return n, err
}

func (c *trackedTLS) Close() error {
	c.t.set.forget(c.t)
	return c.Conn.Close()
}
