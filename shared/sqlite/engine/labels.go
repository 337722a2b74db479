package engine

import (
	"context"
	"runtime/pprof"
)

// writerCtx is the context of a write loop's own statements (its
// transaction's begin, savepoints, log numbering and commit), labelled as
// its goroutine is: the PostgreSQL driver counts their round trips as the
// writer's (pg.TripsEnv), apart from its units' (labelled by their
// callers).
var writerCtx = pprof.WithLabels(context.Background(), pprof.Labels("kassa", "writer"))
