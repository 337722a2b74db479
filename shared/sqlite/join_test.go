package sqlite

import (
	"context"
	"maps"
	"sync"
	"testing"
	"time"

	"kassa.dev/shared/pgtest"
	"kassa.dev/sync/change"
)

// TestPushesQueuedTogetherLeaveTheHubAsPushesInTurnWould: the honest
// edge's records of every kind (TestEveryRecordAnHonestEdgeWritesIsAdmitted),
// each pushed on its own and all queued at the hub at once, with a forged
// push among them, run joined where they may (engine/ingest.go: a unit of
// several pushes) and alone where they may not. The hub ends as the edge
// is, as when one push carried them all: no honest record refused, every
// order, payment, refund, receipt, line, stock movement, lay-by and points
// entry the same; the forged record alone is quarantined. On SQLite and
// on PostgreSQL.
func TestPushesQueuedTogetherLeaveTheHubAsPushesInTurnWould(t *testing.T) {
	for _, backend := range []string{"sqlite", "postgres"} {
		t.Run(backend, func(t *testing.T) {
			var ew *edgeWorld
			if backend == "sqlite" {
				ew = mustEdgeWorld(t)
			} else {
				if _, missing := pgtest.Binaries(); missing != nil {
					t.Skip("no PostgreSQL here: " + missing.Error())
				}
				ew = mustEdgeWorldAt(t, pgHubs(t, 1)[0])
			}
			ew.tills(t)
			ew.laybys(t)
			cs, _ := changesAfter(t, ew.edge.db, 0)
			edge := EdgeScope{OrgID: ew.org, LocationID: ew.loc, NodeID: ew.edge.db.NodeID}
			depot := EdgeScope{OrgID: ew.org, LocationID: ew.loc2, NodeID: ew.hub.db.NewID()}
			var pushes []queuedPush
			for i := range cs {
				pushes = append(pushes, queuedPush{edge, cs[i : i+1]})
				switch {
				case i == len(cs)/2:
					pushes = append(pushes, queuedPush{edge, badColumn(cs[i])})
				case i == len(cs)/3 && cs[i].Entity == "order" && cs[i].Op == change.OpInsert, i == len(cs)/3+1:
					// Another store's edge, joined with this one's
					// pushes, may not make an order of this store.
					pushes = append(pushes, queuedPush{depot, remade(t, ew.hub.db, cs, "order")})
				}
			}
			got := ingestQueued(t, ew.hub.db, pushes)
			for k := range pushes {
				if r := got[k].res.Refused; pushes[k].from == depot && (len(r) != 1 || r[0].Reason != RefusedScope) {
					t.Errorf("the other store's edge's order was answered %+v, want refused as out of its scope", got[k].res)
				}
			}
			refused := 0
			for k, r := range got {
				if r.err != nil {
					t.Fatalf("push %d (%s %s): %v", k, pushes[k].cs[0].Entity, pushes[k].cs[0].Op, r.err)
				}
				refused += r.quarantined
				if r.res.Applied+r.res.Duplicate+len(r.res.Refused) != len(pushes[k].cs) {
					t.Errorf("push %d answered %+v for %d records", k, r.res, len(pushes[k].cs))
				}
			}
			if refused != 2 {
				t.Errorf("the hub quarantined %d records, want the two forged ones:\n%s", refused, quarantined(t, ew.hub.db))
			}
			if n := ew.hub.db.WriterStats().Joined; n < 2 {
				t.Errorf("%d pushes ran joined: the test no longer tests joining", n)
			}
			t.Logf("%d pushes, %d ran joined", len(pushes), ew.hub.db.WriterStats().Joined)
			ew.hubHoldsWhatTheEdgeHas(t)
		})
	}
}

// badColumn is a push of c again, as a new record with a field no table
// has.
func badColumn(c change.Change) []change.Change {
	f := c
	f.ID, f.Fields = c.ID[:len(c.ID)-4]+"beef", map[string]any{"no such; column": 1}
	return []change.Change{f}
}

// remade is a push of the first insert of entity in cs again, as a new
// record of a new row.
func remade(t *testing.T, db *DB, cs []change.Change, entity string) []change.Change {
	t.Helper()
	for _, c := range cs {
		if c.Entity == entity && c.Op == change.OpInsert {
			f := c
			f.ID, f.EntityID, f.Fields = db.NewID(), db.NewID(), maps.Clone(c.Fields)
			f.Fields["number"] = "forged-1"
			if _, ok := f.Fields["id"]; ok {
				f.Fields["id"] = f.EntityID
			}
			return []change.Change{f}
		}
	}
	t.Fatalf("no %s was made", entity)
	return nil
}

// queuedPush is a push and the edge that sends it.
type queuedPush struct {
	from EdgeScope
	cs   []change.Change
}

type ingested struct {
	res         ApplyResult
	quarantined int
	err         error
}

// ingestQueued has db ingest pushes from, queued in their order while
// every write loop is held, and answers each push's result once all ran:
// the loop let go first finds them all waiting.
func ingestQueued(t *testing.T, db *DB, pushes []queuedPush) []ingested {
	t.Helper()
	ctx := context.Background()
	loops := db.WriterStats().Loops
	started, release := make(chan struct{}), make([]chan struct{}, loops)
	for i := range release {
		release[i] = make(chan struct{})
		go db.Write(ctx, func(*Tx) error { started <- struct{}{}; <-release[i]; return nil })
		select {
		case <-started:
		case <-time.After(10 * time.Second):
			t.Fatalf("write loop %d of %d did not take its unit", i+1, loops)
		}
	}
	out := make([]ingested, len(pushes))
	var wg sync.WaitGroup
	for k, p := range pushes {
		wg.Add(1)
		go func() {
			defer wg.Done()
			out[k].res, out[k].quarantined, out[k].err = db.Ingest(ctx, p.from, p.cs)
		}()
		waitQueued(t, db, k+1)
	}
	for _, r := range release {
		close(r)
		waitQueued(t, db, 0)
	}
	wg.Wait()
	return out
}

// waitQueued waits until n units wait for db's write loops.
func waitQueued(t *testing.T, db *DB, n int) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); db.WriterStats().Queued != n; time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("%d units queued, want %d", db.WriterStats().Queued, n)
		}
	}
}
