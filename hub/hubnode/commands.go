package hubnode

import (
	"context"
	"io"

	"kassa.dev/shared/node"
)

// DefaultDataDir is the hub's data directory when --data-dir is not given.
const DefaultDataDir = "data/hub"

// Command is a subcommand of the hub binary (hub <name> args…).
type Command func(ctx context.Context, args []string, out io.Writer) error

// Commands are the hub binary's subcommands besides running the hub:
// verify (an edge's scope against the hub's) and backup (of a running
// hub's store). See docs/arch-deploy.md.
var Commands = map[string]Command{
	"verify": Verify,
	"backup": func(ctx context.Context, args []string, out io.Writer) error {
		return node.BackupCommand(ctx, args, DefaultDataDir, out)
	},
}
