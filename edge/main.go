// Command edge runs a Kassa edge: the node in a store that serves the
// store's terminals, kitchen displays and manager over the LAN, with its own
// SQLite file and embedded NATS server, and keeps working while the
// internet is down.
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
		fmt.Fprintln(os.Stderr, "edge:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	var f node.Flags
	fs := flag.NewFlagSet("edge", flag.ContinueOnError)
	fs.SetOutput(stderr)
	f.Bind(fs, "127.0.0.1:8081", "data/edge", 4223, 6000, 9000)
	if err := envflag.Parse(fs, args, "KASSA_", getenv); err != nil {
		return err
	}
	f.Kind, f.Version = kassa.NodeEdge, version
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
			Name: "edge-" + n.DB.NodeID, Host: f.NATSHost, Port: f.NATSPort,
			StoreDir: filepath.Join(f.DataDir, "nats"), JetStream: true,
		}, log)
		if err != nil {
			return nil, err
		}
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
