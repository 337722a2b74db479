package pg_test

import (
	"context"
	"testing"
	"time"

	"kassa.dev/shared/sqlite/engine/pg"
)

// Two hubs write one edge book. An edge that moves from hub1 to hub2 shows
// at hub2 with hub2's figures, and hub1 writing its older word afterwards
// (its flush comes later) changes nothing; when the edge comes back,
// hub1's newer word wins. Racing writers leave the newest word.
func TestTheEdgeBookKeepsTheNewestWordAcrossTwoHubs(t *testing.T) {
	ctx := context.Background()
	hubs := hubPools(t, 2)
	t0 := time.Date(2026, 11, 28, 9, 0, 0, 0, time.UTC)
	report := func(node string, seen time.Time, cursor int64) []pg.EdgeReport {
		ok := true
		return []pg.EdgeReport{{NodeID: node, LastSeen: seen, ConnectedSince: t0, Cursor: cursor, Version: "v0.9.0",
			VerifyOK: &ok, VerifyDiffer: []string{}, LagP50: 0.01, LagP99: 0.2}}
	}
	save := func(hub int, rs []pg.EdgeReport) {
		t.Helper()
		if err := pg.SaveEdgeReports(ctx, hubs[hub], []string{"hub1", "hub2"}[hub], rs); err != nil {
			t.Fatal(err)
		}
	}
	book := func(node, hub string, cursor int64) {
		t.Helper()
		var c int64
		var last string
		if err := hubs[0].QueryRow(ctx, `SELECT cursor, last_seen FROM edge_reports WHERE node_id = $1`, node).Scan(&c, &last); err != nil {
			t.Fatal(err)
		}
		at, err := pg.EdgeHubs(ctx, hubs[1])
		if err != nil {
			t.Fatal(err)
		}
		if at[node].HubID != hub || c != cursor {
			t.Fatalf("edge %s: the book says hub %q, cursor %d (seen %s); want %s, cursor %d", node, at[node].HubID, c, last, hub, cursor)
		}
	}

	save(0, report("edge_a", t0.Add(time.Second), 10))
	save(0, report("edge_b", t0.Add(time.Second), 5))
	book("edge_a", "hub1", 10)
	save(1, report("edge_a", t0.Add(3*time.Second), 20)) // edge_a moved to hub2
	book("edge_a", "hub2", 20)
	save(0, report("edge_a", t0.Add(2*time.Second), 15)) // hub1's later flush of what it heard before
	book("edge_a", "hub2", 20)
	save(0, report("edge_a", t0.Add(4*time.Second), 30)) // back at hub1
	book("edge_a", "hub1", 30)
	book("edge_b", "hub1", 5)

	// Both hubs write one edge's word at once, each its own seconds: the
	// book ends with the newest.
	done := make(chan error, 2)
	for h := range hubs {
		go func() {
			for i := h; i < 60; i += 2 {
				r := report("edge_c", t0.Add(time.Duration(i)*time.Second), int64(i))
				if err := pg.SaveEdgeReports(ctx, hubs[h], []string{"hub1", "hub2"}[h], r); err != nil {
					done <- err
					return
				}
			}
			done <- nil
		}()
	}
	for range hubs {
		if err := <-done; err != nil {
			t.Fatal(err)
		}
	}
	book("edge_c", "hub2", 59)
}
