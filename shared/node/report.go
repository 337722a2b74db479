package node

import (
	"context"
	"flag"
	"fmt"
	"io"

	"kassa.dev/shared/envflag"
)

// The sales report's rollups (docs/reports.md, "Rollups"): kept by the
// store in the unit of work of every sale; rebuilt from the raw rows by
// `hub reports-rebuild` / `edge reports-rebuild` (on a stopped node: after
// an upgrade from a release without them, or to check them).

// RebuildRollups recomputes the store's report rollups from its raw rows.
func (n *Node) RebuildRollups(ctx context.Context) (int, error) { return n.db.RebuildRollups(ctx) }

// DropRollups stops keeping them: reports read the raw rows until
// RebuildRollups (the benchmark's "rollups off").
func (n *Node) DropRollups(ctx context.Context) error { return n.db.DropRollups(ctx) }

// RebuildCommand is `reports-rebuild [--data-dir D]` (a hub also
// `--store postgres://…`): it opens the store of a stopped node and rebuilds its report rollups from the raw rows.
func RebuildCommand(ctx context.Context, args []string, getenv func(string) string, defaultDir string, out io.Writer, urls *URLStores) error {
	fs := flag.NewFlagSet("reports-rebuild", flag.ContinueOnError)
	fs.SetOutput(out)
	dir := fs.String("data-dir", defaultDir, "the data directory of the node (stopped)")
	store := storeFlag(fs, urls)
	if err := envflag.Parse(fs, args, "KASSA_", getenv); err != nil {
		return err
	}
	if *store != "" {
		dir = store
	}
	db, err := OpenStoreAt(ctx, *dir)
	if err != nil {
		return err
	}
	defer db.Close()
	locs, err := db.RebuildRollups(ctx)
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "rebuilt the report rollups of %d locations in %s from the raw rows\n", locs, shown(*dir))
	return nil
}
