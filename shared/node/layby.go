package node

import (
	"context"
	"time"

	"kassa.dev/shared/kassa"
	"kassa.dev/shared/sqlite"
)

// laybyExpiryEvery is how often a node expires the lay-bys past their term.
const laybyExpiryEvery = 10 * time.Minute

// ExpireLaybys expires the lay-bys past their term that this node
// expires (docs/laybys.md): an enrolled edge those its store holds, the
// hub (or a standalone store) those of stores without an edge. It returns
// how many (the expiry job's step; tests call it after moving the clock).
func (n *Node) ExpireLaybys(ctx context.Context) (int64, error) {
	loc := ""
	if n.Config.Kind == kassa.NodeEdge {
		var err error
		if loc, err = n.db.Meta(ctx, sqlite.MetaEdgeLocation); err != nil {
			return 0, err
		}
	}
	return n.laybys.ExpireLaybys(ctx, loc)
}

// LaybyExpiryJob expires lay-bys at start and then every ten minutes.
func (n *Node) LaybyExpiryJob() Job {
	return n.sweepJob("layby-expiry", laybyExpiryEvery, "expired lay-bys", n.ExpireLaybys)
}
