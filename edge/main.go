// Command edge runs a Kassa edge: the node in a store that serves the
// store's terminals, kitchen displays and manager over the LAN, with its own
// SQLite file and embedded NATS server, and keeps working while the
// internet is down. See package edgenode.
package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"kassa.dev/edge/edgenode"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := edgenode.Run(ctx, os.Args[1:], os.Getenv, os.Stdout, os.Stderr); err != nil {
		fmt.Fprintln(os.Stderr, "edge:", err)
		os.Exit(1)
	}
}
