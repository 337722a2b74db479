package node

import (
	"context"
	"crypto/tls"
	"fmt"
	"io"
	"log/slog"
	"net"
)

// Run opens the node described by f, calls start for the binary's own parts
// (its embedded NATS server, the demo seed), serves the API on f.HTTPAddr
// and, once ctx is done, finishes in-flight requests, calls the stop that
// start returned and closes the store. It prints the API's URL to out.
// It tunes the Go runtime from the flags first (Tune, TuneMemory).
func Run(ctx context.Context, f *Flags, log *slog.Logger, out io.Writer, start func(ctx context.Context, n *Node) (stop func(), err error)) error {
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
	n, err := Open(ctx, f.Config, log)
	if err != nil {
		return err
	}
	stop := func() {}
	if start != nil {
		if stop, err = start(ctx, n); err != nil {
			n.DB.Close()
			return err
		}
	}
	ln, err := net.Listen("tcp", f.HTTPAddr)
	if err != nil {
		stop()
		n.DB.Close()
		return fmt.Errorf("%s: listen %s: %w", f.Kind, f.HTTPAddr, err)
	}
	scheme := "http"
	if serverTLS != nil {
		ln, scheme = tls.NewListener(ln, serverTLS), "https"
	}
	fmt.Fprintf(out, "kassa %s %s serving %s://%s\n", f.Kind, n.DB.NodeID, scheme, ln.Addr())
	served := make(chan error, 1)
	go func() { served <- n.Serve(ln) }()
	select {
	case err = <-served:
	case <-ctx.Done():
	}
	log.Info("shutting down", slog.String("node", f.Kind))
	sctx, cancel := context.WithTimeout(context.Background(), f.ShutdownTimeout)
	defer cancel()
	serr := n.Shutdown(sctx)
	stop()
	if err != nil {
		return err
	}
	return serr
}
