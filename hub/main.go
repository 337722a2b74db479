// Command hub runs the Kassa hub: the central node that partner apps, head
// office and ops talk to, and that every store's edge replicates to over a
// NATS leaf-node link. See package hubnode.
package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"kassa.dev/hub/hubnode"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := hubnode.Run(ctx, os.Args[1:], os.Getenv, os.Stdout, os.Stderr); err != nil {
		fmt.Fprintln(os.Stderr, "hub:", err)
		os.Exit(1)
	}
}
