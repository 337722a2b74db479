package sqlite

import (
	"context"
	"errors"
	"testing"

	"kassa.dev/shared/sqlite/engine"
)

// TestAFailedUnitSharingACommitLeavesTheHubsLogWhole: on PostgreSQL the
// writer numbers a transaction's change records itself and writes its row
// of outbox_commits once before the COMMIT (engine/pg LogCommitSQL). Three
// units share one write loop's batch (the hub opened with one writer); the
// middle one writes a record and fails, or the first, which runs without
// a savepoint (its transaction is rolled back and the others run in the
// next). The log then holds the other two units' records at consecutive
// positions and nothing of the failed one: an edge pulling by cursor sees
// every record once and no hole.
func TestAFailedUnitSharingACommitLeavesTheHubsLogWhole(t *testing.T) {
	for _, first := range []bool{false, true} {
		db := pgHubsWith(t, 1, Options{Hub: true, Writers: 1})[0].db
		for try := 0; ; try++ {
			if try == 50 {
				t.Fatal("the three units never shared one batch")
			}
			if threeUnitsOneFailing(t, db, first) {
				break
			}
		}
	}
}

// threeUnitsOneFailing runs three units, the middle or the first failing
// after it wrote, and checks the log when they shared one batch (it
// reports whether they did).
func threeUnitsOneFailing(t *testing.T, db *DB, first bool) bool {
	ctx := context.Background()
	refused := errors.New("refused after writing")
	before := db.WriterStats()
	running, hold := make(chan struct{}), make(chan struct{})
	ids := []string{db.NewID(), db.NewID(), db.NewID()}
	held, failing := ids[0], ids[1]
	if first {
		held, failing = ids[1], ids[0]
	}
	errs, failed := make(chan error, 3), make(chan error, 1)
	go func() {
		err := db.Write(ctx, func(tx *Tx) error {
			close(running)
			<-hold
			if err := insertOrg(ctx, tx, held, held, "EUR"); err != nil || !first {
				return err
			}
			return refused
		})
		if first {
			failed <- err
		} else {
			errs <- err
		}
	}()
	<-running
	go func() {
		err := db.Write(ctx, func(tx *Tx) error {
			if err := insertOrg(ctx, tx, failing, failing, "EUR"); err != nil || first {
				return err
			}
			return refused
		})
		if first {
			errs <- err
		} else {
			failed <- err
		}
	}()
	go func() {
		errs <- db.Write(ctx, func(tx *Tx) error { return insertOrg(ctx, tx, ids[2], ids[2], "EUR") })
	}()
	close(hold)
	for range 2 {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
	if err := <-failed; !errors.Is(err, refused) {
		t.Fatalf("the failing unit: %v", err)
	}
	after := db.WriterStats()
	if after.Batches-before.Batches != 1 || after.Units-before.Units != 3 {
		return false
	}
	checkLogWhole(t, db, ids)
	return true
}

// checkLogWhole checks that the log's records are at consecutive
// positions, hold ids[0] and ids[2] and not ids[1].
func checkLogWhole(t *testing.T, db *DB, ids []string) {
	t.Helper()
	entries, err := db.ChangesAfter(context.Background(), 0, 100000, engine.LogFilter{})
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	for i, e := range entries {
		if i > 0 && e.Seq != entries[i-1].Seq+1 {
			t.Fatalf("the log jumps from position %d to %d", entries[i-1].Seq, e.Seq)
		}
		seen[e.EntityID] = true
	}
	if !seen[ids[0]] || !seen[ids[2]] || seen[ids[1]] {
		t.Fatalf("the log holds the first unit's org %v, the failed one's %v, the third's %v; want true, false, true",
			seen[ids[0]], seen[ids[1]], seen[ids[2]])
	}
}
