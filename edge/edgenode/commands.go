package edgenode

import (
	"context"
	"io"

	"kassa.dev/shared/node"
)

// DefaultDataDir is the edge's data directory when --data-dir is not given.
const DefaultDataDir = "data/edge"

// Command is a subcommand of the edge binary (edge <name> args…).
type Command func(ctx context.Context, args []string, out io.Writer) error

// Commands are the edge binary's subcommands besides running the edge:
// backup (of a running edge's store) and restore (into a stopped edge's
// data directory). See docs/arch-deploy.md.
var Commands = map[string]Command{
	"backup": func(ctx context.Context, args []string, out io.Writer) error {
		return node.BackupCommand(ctx, args, DefaultDataDir, out)
	},
	"restore": func(ctx context.Context, args []string, out io.Writer) error {
		return node.RestoreCommand(ctx, args, DefaultDataDir, out)
	},
}
