package node

import (
	"context"
	"log/slog"
	"time"

	"kassa.dev/shared/httpapi"
	"kassa.dev/shared/sqlite"
)

// A Part is a piece of a node that only one binary links: the hub's
// webhook sender, automation engine and OAuth server, and their routes
// with the consent page and the ops feed (package node/hubonly). The
// binary's main lists its parts in Config.Parts; the edge's never imports
// them, so none of their code ships in the edge binary (a layout test in
// package edge holds that).
type Part interface {
	// Open adds the part's services to n.Services, after the node's own
	// and the binary's (Extend) and before the API is built; db is the
	// node's store, handed to its parts alone. It returns the part's
	// routes (nil: none), registered after the shared ones.
	Open(ctx context.Context, n *Node, db *sqlite.DB) (*httpapi.Group, error)
	// Start runs once the API is built: the part registers its metrics on
	// n.HTTP and starts its jobs on n.Jobs.
	Start(n *Node)
}

// openParts opens cfg.Parts and collects their routes into the HTTP
// configuration.
func (n *Node) openParts(ctx context.Context, db *sqlite.DB) error {
	for _, p := range n.Config.Parts {
		g, err := p.Open(ctx, n, db)
		if err != nil {
			return err
		}
		if g != nil {
			n.Config.Groups = append(n.Config.Groups, *g)
		}
	}
	return nil
}

// Log is the node's logger, for its parts' jobs.
func (n *Node) Log() *slog.Logger { return n.log }

// SweepJob runs sweep at start and then every period; it logs how many
// rows of what it deleted, and its errors (the next round tries again).
func (n *Node) SweepJob(name string, every time.Duration, what string, sweep func(context.Context) (int64, error)) Job {
	return n.sweepJob(name, every, what, sweep)
}

// RetainedSince is the instant before which a retention of keep (0 or
// less: def) ends, by the node's clock.
func (n *Node) RetainedSince(keep, def time.Duration) time.Time { return n.retainedSince(keep, def) }
