package edgenode

import (
	"context"
	"io"

	"kassa.dev/shared/node"
)

// DefaultHTTPAddr is the edge's listen address when --http-addr is not given.
const DefaultHTTPAddr = "127.0.0.1:8081"

// DefaultDataDir is the edge's data directory when --data-dir is not given.
const DefaultDataDir = "data/edge"

// Command is a subcommand of the edge binary (edge <name> args…).
type Command func(ctx context.Context, args []string, getenv func(string) string, out io.Writer) error

// Commands are the edge binary's subcommands besides running the edge:
// backup (of a running edge's store), restore (into a stopped edge's data
// directory) and healthcheck. See docs/deploy.md.
var Commands = map[string]Command{
	"backup": func(ctx context.Context, args []string, getenv func(string) string, out io.Writer) error {
		return node.BackupCommand(ctx, args, getenv, DefaultDataDir, out)
	},
	"restore": func(ctx context.Context, args []string, getenv func(string) string, out io.Writer) error {
		return node.RestoreCommand(ctx, args, getenv, DefaultDataDir, out, node.RestoreEdge)
	},
	"healthcheck": func(ctx context.Context, args []string, getenv func(string) string, out io.Writer) error {
		return node.HealthCommand(ctx, args, getenv, DefaultHTTPAddr, out)
	},
}
