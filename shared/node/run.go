package node

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/netip"
	"time"

	"kassa.dev/shared/kassa"
)

// Run opens the node described by f, calls start for the binary's own parts
// (its embedded NATS server, the sync link, the demo seed), which adds its
// jobs and resources to n.Jobs, serves the API on f.HTTPAddr and, once ctx
// is done, finishes in-flight requests, stops the jobs in reverse order and
// closes the store (Node.Shutdown). It prints the API's URL to out.
// It tunes the Go runtime from the flags first (Tune, TuneMemory).
func Run(ctx context.Context, f *Flags, log *slog.Logger, out io.Writer, start func(ctx context.Context, n *Node) error) error {
	if err := f.Check(); err != nil {
		return err
	}
	serverTLS, err := f.TLS.Server()
	if err != nil {
		return err
	}
	limit, err := ParseMemoryLimit(f.MemoryLimit)
	if err != nil {
		return err
	}
	defer Tune(f.GCPercent, f.GoProcs, f.WriterPriority)()
	applied, restore := TuneMemory(f.Kind, limit)
	defer restore()
	log.Info("memory limit", slog.Int64("bytes", applied))
	f.MetricsApart = f.MetricsAddr != ""
	n, err := Open(ctx, f.Config, log)
	if err != nil {
		return err
	}
	if start != nil {
		if err := start(ctx, n); err != nil {
			n.close()
			return err
		}
	}
	served := make(chan error, 2)
	stopMetrics := func() {}
	if f.MetricsApart {
		if stopMetrics, err = serveMetrics(f.MetricsAddr, n, out, served); err != nil {
			n.close()
			return err
		}
	}
	ln, scheme, err := listenAPI(f, serverTLS)
	if err != nil {
		stopMetrics()
		n.close()
		return err
	}
	n.HTTP.SetListenURL(scheme + "://" + ln.Addr().String())
	warnExposed(f, n, ln.Addr(), log)
	fmt.Fprintf(out, "kassa %s %s serving %s://%s\n", f.Kind, n.db.NodeID, scheme, ln.Addr())
	go func() { served <- n.Serve(ln) }()
	select {
	case err = <-served:
	case <-ctx.Done():
	}
	log.Info("shutting down", slog.String("node", f.Kind))
	stopMetrics()
	sctx, cancel := context.WithTimeout(context.Background(), f.ShutdownTimeout)
	defer cancel()
	serr := n.Shutdown(sctx)
	if err != nil {
		return err
	}
	return serr
}

// listenAPI listens on --http-addr, with TLS when serverTLS is set.
func listenAPI(f *Flags, serverTLS *tls.Config) (net.Listener, string, error) {
	ln, err := net.Listen("tcp", f.HTTPAddr)
	if err != nil {
		return nil, "", fmt.Errorf("%s: listen %s: %w", f.Kind, f.HTTPAddr, err)
	}
	if serverTLS != nil {
		return tls.NewListener(ln, serverTLS), "https", nil
	}
	return ln, "http", nil
}

// warnExposed warns of settings meant for development on a node whose API
// listens beyond loopback: a hub without --public-url, /metrics open.
func warnExposed(f *Flags, n *Node, addr net.Addr, log *slog.Logger) {
	if loopback(addr) {
		return
	}
	if f.Kind == kassa.NodeHub && f.PublicURL == "" {
		log.Warn("--public-url is not set: the OAuth metadata names " + n.HTTP.PublicURL() + "; set it to the URL partners reach the hub at")
	}
	if f.MetricsToken == "" && !f.MetricsApart {
		log.Warn("/metrics is open on the API listener beyond loopback: set --metrics-token or --metrics-addr for production")
	}
}

// loopback reports whether a listener's address is on a loopback host.
func loopback(a net.Addr) bool {
	ap, err := netip.ParseAddrPort(a.String())
	return err == nil && ap.Addr().IsLoopback()
}

// serveMetrics serves /metrics on addr (--metrics-addr), plain HTTP, until
// the returned stop; a failure to serve is sent to served.
func serveMetrics(addr string, n *Node, out io.Writer, served chan<- error) (stop func(), err error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("%s: listen --metrics-addr %s: %w", n.Config.Kind, addr, err)
	}
	srv := &http.Server{Handler: n.HTTP.MetricsHandler(), ReadHeaderTimeout: 10 * time.Second}
	fmt.Fprintf(out, "kassa %s metrics at http://%s/metrics\n", n.Config.Kind, ln.Addr())
	go func() {
		if err := srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			served <- err
		}
	}()
	return func() { srv.Close() }, nil
}
