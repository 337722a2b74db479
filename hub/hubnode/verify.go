package hubnode

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"path/filepath"
	"sort"
	"strings"

	"kassa.dev/shared/sqlite"
)

// ErrDiffer is returned by Verify when the edge's data differs from the hub's.
var ErrDiffer = errors.New("the edge's data in scope differs from the hub's")

// Verify compares, table by table, the data of an edge's scope in the
// hub's store and in the edge's store (both opened read-side from their
// data directories; the nodes may keep running) and prints the result.
// Usage: hub verify --data-dir data/hub --edge-data-dir data/edge
func Verify(ctx context.Context, args []string, out io.Writer) error {
	fs := flag.NewFlagSet("verify", flag.ContinueOnError)
	fs.SetOutput(out)
	hubDir := fs.String("data-dir", "data/hub", "the hub's data directory")
	edgeDir := fs.String("edge-data-dir", "data/edge", "the edge's data directory")
	if err := fs.Parse(args); err != nil {
		return err
	}
	open := func(dir string) (*sqlite.DB, error) {
		return sqlite.Open(ctx, filepath.Join(dir, "kassa.db"), sqlite.Options{Log: slog.New(slog.DiscardHandler)})
	}
	hub, err := open(*hubDir)
	if err != nil {
		return err
	}
	defer hub.Close()
	edge, err := open(*edgeDir)
	if err != nil {
		return err
	}
	defer edge.Close()
	org, _ := edge.Meta(ctx, "sync_org")
	loc, _ := edge.Meta(ctx, "sync_location")
	if org == "" {
		return fmt.Errorf("the edge in %s is not enrolled", *edgeDir)
	}
	hd, err := hub.Digests(ctx, org, loc)
	if err != nil {
		return err
	}
	ed, err := edge.Digests(ctx, org, loc)
	if err != nil {
		return err
	}
	tables := make([]string, 0, len(hd))
	for t := range hd {
		tables = append(tables, t)
	}
	sort.Strings(tables)
	fmt.Fprintf(out, "edge %s (org %s, location %s) against hub %s\n", edge.NodeID, org, loc, hub.NodeID)
	differ := 0
	for _, t := range tables {
		state := "identical"
		if hd[t] != ed[t] {
			state = "DIFFERENT"
			differ++
		}
		hn, _, _ := strings.Cut(hd[t], ":")
		en, _, _ := strings.Cut(ed[t], ":")
		fmt.Fprintf(out, "  %-20s hub %6s rows  edge %6s rows  %s\n", t, hn, en, state)
	}
	if differ > 0 {
		fmt.Fprintf(out, "%d tables differ\n", differ)
		return ErrDiffer
	}
	fmt.Fprintln(out, "identical: the edge and the hub hold the same data in its scope")
	return nil
}
