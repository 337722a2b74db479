// Command edge runs a Kassa edge: the node in a store that serves the
// store's terminals, kitchen displays and manager over the LAN, with its own
// SQLite file and embedded NATS server, and keeps working while the
// internet is down. See package edgenode.
//
// Subcommands: `edge backup --data-dir D --out FILE` copies the store of a
// running edge; `edge restore --backup FILE --data-dir D` puts one back;
// `edge healthcheck` checks a running edge's /healthz (containers);
// `edge reports-rebuild --data-dir D` rebuilds a stopped edge's report
// rollups from its raw sales.
package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"

	"kassa.dev/edge/edgenode"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	run := edgenode.Run
	args := os.Args[1:]
	if len(args) > 0 {
		if cmd, ok := edgenode.Commands[args[0]]; ok {
			run = func(ctx context.Context, args []string, getenv func(string) string, out, _ io.Writer) error {
				return cmd(ctx, args, getenv, out)
			}
			args = args[1:]
		}
	}
	if err := run(ctx, args, os.Getenv, os.Stdout, os.Stderr); err != nil {
		fmt.Fprintln(os.Stderr, "edge:", err)
		os.Exit(1)
	}
}
