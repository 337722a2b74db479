// Command hub runs the Kassa hub: the central node that partner apps, head
// office and ops talk to, and that every store's edge replicates to over a
// NATS leaf-node link.
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"path/filepath"
	"syscall"

	"kassa.dev/shared/demo"
	"kassa.dev/shared/envflag"
	"kassa.dev/shared/kassa"
	"kassa.dev/shared/node"
	"kassa.dev/sync/natsnode"
)

var version = "dev"

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, os.Args[1:], os.Getenv, os.Stdout, os.Stderr); err != nil {
		fmt.Fprintln(os.Stderr, "hub:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	var f node.Flags
	fs := flag.NewFlagSet("hub", flag.ContinueOnError)
	fs.SetOutput(stderr)
	f.Bind(fs, "127.0.0.1:8080", "data/hub", 4222, 600, 900)
	leafHost := fs.String("leaf-host", "127.0.0.1", "listen host of the NATS leaf-node port that edges connect to")
	leafPort := fs.Int("leaf-port", 7422, "NATS leaf-node port (-1: any free port)")
	if err := envflag.Parse(fs, args, "KASSA_", getenv); err != nil {
		return err
	}
	f.Kind, f.Version = kassa.NodeHub, version
	log := slog.New(slog.NewJSONHandler(stderr, &slog.HandlerOptions{Level: f.LogLevel}))
	var ns *natsnode.Server
	f.Ready = func(context.Context) error {
		if ns == nil || !ns.Ready() {
			return fmt.Errorf("nats server not ready")
		}
		return nil
	}
	return node.Run(ctx, &f, log, stdout, func(ctx context.Context, n *node.Node) (func(), error) {
		var err error
		ns, err = natsnode.Start(natsnode.Config{
			Name: "hub-" + n.DB.NodeID, Host: f.NATSHost, Port: f.NATSPort,
			StoreDir: filepath.Join(f.DataDir, "nats"), JetStream: true,
			LeafHost: *leafHost, LeafPort: *leafPort,
		}, log)
		if err != nil {
			return nil, err
		}
		fmt.Fprintf(stdout, "kassa hub nats %s leaf %s\n", ns.ClientURL(), ns.LeafURL())
		if f.Demo {
			if _, err := demo.Seed(ctx, n); err != nil {
				ns.Shutdown()
				return nil, err
			}
			demo.PrintLogins(stdout)
		}
		return ns.Shutdown, nil
	})
}
