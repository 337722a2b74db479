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
// units share one commit; the middle one writes a record and fails. The
// log then holds the other two units' records at consecutive positions and
// nothing of the failed one: an edge pulling by cursor sees every record
// once and no hole.
func TestAFailedUnitSharingACommitLeavesTheHubsLogWhole(t *testing.T) {
	db := pgHubs(t, 1)[0].db
	ctx := context.Background()
	refused := errors.New("refused after writing")
	for try := 0; ; try++ {
		if try == 50 {
			t.Fatal("the three units never shared one commit")
		}
		before := db.WriterStats()
		running, hold := make(chan struct{}), make(chan struct{})
		ids := []string{db.NewID(), db.NewID(), db.NewID()}
		errs := make(chan error, 3)
		go func() {
			errs <- db.Write(ctx, func(tx *Tx) error {
				close(running)
				<-hold
				return insertOrg(ctx, tx, ids[0], ids[0], "EUR")
			})
		}()
		<-running
		failed := make(chan error, 1)
		go func() {
			failed <- db.Write(ctx, func(tx *Tx) error {
				if err := insertOrg(ctx, tx, ids[1], ids[1], "EUR"); err != nil {
					return err
				}
				return refused
			})
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
			continue // not one commit: try again
		}
		checkLogWhole(t, db, ids)
		return
	}
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
