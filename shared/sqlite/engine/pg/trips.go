package pg

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"runtime/pprof"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
)

// TripsEnv names a file the driver's round trips to PostgreSQL are
// written to, counted by who made them (docs/performance.md, "Round trips
// a push at the ingest (session 20, helper rtcount)"): a hidden knob for
// measuring, off unless set. Who is the statement's context's pprof label
// "kassa" (the node's jobs are labelled by name, node.Jobs; a push's unit
// "push"; the writer's own statements "writer"), or, unlabelled, "unit"
// inside a writer's transaction and "pool" outside one. Each SIGUSR1 the
// process gets appends the counts so far to the file, a line a kind of
// round trip: the ingest bench (KASSA_BENCH_TRIPS) signals the hub before
// and after its pushes and prints the difference.
const TripsEnv = "KASSA_PG_TRIPS"

var tripsFile = os.Getenv(TripsEnv)

// tripKey is a kind of round trip: who sent it, how (lone: one statement;
// pipe: a pipeline; commit: a pipeline ending with COMMIT; prepare: a
// statement prepared for the pipeline; begin, rollback) and the first
// words of its last statement.
type tripKey struct{ who, how, stmt string }

// tripCount is a kind's round trips and the statements they carried.
type tripCount struct{ trips, stmts atomic.Int64 }

var tripCounts sync.Map // tripKey → *tripCount

func init() {
	if tripsFile == "" {
		return
	}
	ch := make(chan os.Signal, 1)
	signal.Notify(ch, syscall.SIGUSR1)
	go func() {
		for range ch {
			writeTrips()
		}
	}()
}

// trip counts a round trip of c under ctx carrying stmts statements, the
// last q.
func (c *conn) trip(ctx context.Context, how, q string, stmts int) {
	roundTrips.Add(1)
	c.countTrip(ctx, how, q, stmts)
}

// countTrip counts a round trip for TripsEnv alone (a statement the
// pipeline prepares, which tests do not count).
func (c *conn) countTrip(ctx context.Context, how, q string, stmts int) {
	if tripsFile == "" {
		return
	}
	who, ok := "", false
	if ctx != nil {
		who, ok = pprof.Label(ctx, "kassa")
	}
	if !ok {
		who = "pool"
		if c.pipeTx {
			who = "unit"
		}
	}
	q = strings.Join(strings.Fields(q), " ")
	if len(q) > 60 {
		q = q[:60]
	}
	k := tripKey{who, how, q}
	v, ok := tripCounts.Load(k)
	if !ok {
		v, _ = tripCounts.LoadOrStore(k, new(tripCount))
	}
	v.(*tripCount).trips.Add(1)
	v.(*tripCount).stmts.Add(int64(stmts))
}

// writeTrips appends the counts so far to tripsFile: a line "---", a
// line a kind (trips, statements, who, how, statement, tab-separated) and
// a line "end".
func writeTrips() {
	var lines []string
	tripCounts.Range(func(k, v any) bool {
		key, n := k.(tripKey), v.(*tripCount)
		lines = append(lines, fmt.Sprintf("%d\t%d\t%s\t%s\t%s", n.trips.Load(), n.stmts.Load(), key.who, key.how, key.stmt))
		return true
	})
	slices.Sort(lines)
	f, err := os.OpenFile(tripsFile, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o600)
	if err != nil {
		return
	}
	defer f.Close()
	fmt.Fprintf(f, "---\n%s\nend\n", strings.Join(lines, "\n"))
}

// pipeHow is how a pipeline of stmts is counted: "commit" when it
// commits, "pipe" otherwise.
func pipeHow(stmts []preparedStmt) string {
	for _, s := range stmts {
		if s.query == "commit" {
			return "commit"
		}
	}
	return "pipe"
}

// lastQuery is the text of the last of stmts ("" for none).
func lastQuery(stmts []preparedStmt) string {
	if len(stmts) == 0 {
		return ""
	}
	return stmts[len(stmts)-1].query
}
