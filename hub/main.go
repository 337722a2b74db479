// Command hub runs the Kassa hub: the central node that partner apps, head
// office and ops talk to, and that every store's edge replicates to over a
// NATS leaf-node link. See package hubnode.
//
// Subcommands: `hub verify` compares an edge's scope with the hub's;
// `hub backup --data-dir D --out FILE` copies the store of a running hub;
// `hub restore --backup FILE --data-dir D` puts one back; `hub healthcheck`;
// `hub reports-rebuild --data-dir D` rebuilds a stopped hub's report
// rollups from its raw sales.
package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"

	"kassa.dev/hub/hubnode"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	run := hubnode.Run
	args := os.Args[1:]
	if len(args) > 0 {
		if cmd, ok := hubnode.Commands[args[0]]; ok {
			run = func(ctx context.Context, args []string, getenv func(string) string, out, _ io.Writer) error {
				return cmd(ctx, args, getenv, out)
			}
			args = args[1:]
		}
	}
	if err := run(ctx, args, os.Getenv, os.Stdout, os.Stderr); err != nil {
		fmt.Fprintln(os.Stderr, "hub:", err)
		os.Exit(1)
	}
}
