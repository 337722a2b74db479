package hubnode

import (
	"context"
	"io"

	"kassa.dev/shared/node"
)

// DefaultHTTPAddr is the hub's listen address when --http-addr is not given.
const DefaultHTTPAddr = "127.0.0.1:8080"

// DefaultDataDir is the hub's data directory when --data-dir is not given.
const DefaultDataDir = "data/hub"

// Command is a subcommand of the hub binary (hub <name> args…).
type Command func(ctx context.Context, args []string, getenv func(string) string, out io.Writer) error

// Commands are the hub binary's subcommands besides running the hub:
// verify (an edge's scope against the hub's), backup (of a running hub's
// store), restore (into a stopped hub's data directory) and healthcheck.
// See docs/deploy.md.
var Commands = map[string]Command{
	"verify": func(ctx context.Context, args []string, _ func(string) string, out io.Writer) error {
		return Verify(ctx, args, out)
	},
	"backup": func(ctx context.Context, args []string, getenv func(string) string, out io.Writer) error {
		return node.BackupCommand(ctx, args, getenv, DefaultDataDir, out)
	},
	"restore": func(ctx context.Context, args []string, getenv func(string) string, out io.Writer) error {
		return node.RestoreCommand(ctx, args, getenv, DefaultDataDir, out, node.RestoreHub)
	},
	"healthcheck": func(ctx context.Context, args []string, getenv func(string) string, out io.Writer) error {
		return node.HealthCommand(ctx, args, getenv, DefaultHTTPAddr, out)
	},
}
