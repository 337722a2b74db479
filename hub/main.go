// Command hub runs the Kassa hub: the central node that partner apps, head
// office and ops talk to, and that every store's edge replicates to over a
// NATS leaf-node link. See package hubnode.
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
	if len(args) > 0 && args[0] == "verify" {
		run = func(ctx context.Context, args []string, _ func(string) string, out, _ io.Writer) error {
			return hubnode.Verify(ctx, args, out)
		}
		args = args[1:]
	}
	if err := run(ctx, args, os.Getenv, os.Stdout, os.Stderr); err != nil {
		fmt.Fprintln(os.Stderr, "hub:", err)
		os.Exit(1)
	}
}
