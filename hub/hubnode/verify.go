package hubnode

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"sort"
	"strings"

	"kassa.dev/shared/node"
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
	store := fs.String("store", "", "the hub's store when not the SQLite file in --data-dir: a postgres:// URL, as the hub's --store")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *store != "" {
		hubDir = store
	}
	c, err := node.CompareScope(ctx, *hubDir, *edgeDir)
	if err != nil {
		return err
	}
	hd, ed, org, loc := c.Hub, c.Edge, c.Org, c.Location
	tables := make([]string, 0, len(hd))
	for t := range hd {
		tables = append(tables, t)
	}
	sort.Strings(tables)
	fmt.Fprintf(out, "edge %s (org %s, location %s) against hub %s\n", c.EdgeID, org, loc, c.HubID)
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
