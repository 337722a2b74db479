package hubnode

import (
	"context"
	"io"

	"kassa.dev/shared/node"
	"kassa.dev/shared/node/hubonly"
)

// DefaultHTTPAddr is the hub's listen address when --http-addr is not given.
const DefaultHTTPAddr = "127.0.0.1:8080"

// DefaultDataDir is the hub's data directory when --data-dir is not given.
const DefaultDataDir = "data/hub"

// Commands are the hub binary's subcommands besides running the hub:
// verify (an edge's scope against the hub's), backup (of a running hub's
// store), restore (into a stopped hub's data directory) and healthcheck.
// See docs/deploy.md.
var Commands = func() map[string]node.Command {
	cs := node.Commands(DefaultDataDir, DefaultHTTPAddr, node.RestoreHub, hubonly.StoreBackups)
	cs["verify"] = func(ctx context.Context, args []string, _ func(string) string, out io.Writer) error {
		return Verify(ctx, args, out)
	}
	return cs
}()
