package httpapi_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"kassa.dev/sync/change"
)

// TestSyncStatusOfAThousandEdges: a hub with 1,000 enrolled edges, one of
// which pushed 5,000 records that the 999 others have yet to pull, lists
// every edge with what it has to pull and the open conflict of its
// location. It logs how long the status took
// (docs/ops-data.md records the figure; nothing here is timed).
func TestSyncStatusOfAThousandEdges(t *testing.T) {
	if testing.Short() {
		t.Skip("1,000 edges")
	}
	h := mustConflictHub(t)
	ctx := context.Background()
	nodes, err := h.tn.N.EnrolEdges(ctx, h.o.ID, h.loc, 999)
	if err != nil {
		t.Fatal(err)
	}
	h.quarantine(t, "Refused") // a conflict of their location
	start := time.Now()
	if r := h.tn.Do("GET", "/api/v1/sync/status", h.o.Owner, nil); r.Status != 200 || len(r.Data()["edges"].([]any)) != 1000 {
		t.Fatalf("status: %d %s", r.Status, r.Body)
	}
	t.Logf("GET /sync/status with 1000 edges, nothing to pull: %v", time.Since(start))
	const pushed = 5000
	now := time.Now().UTC().Format(time.RFC3339Nano)
	for b := 0; b < pushed/500; b++ {
		cs := make([]change.Change, 500)
		for i := range cs {
			cs[i] = change.Change{ID: h.tn.N.NewID(), OrgID: h.o.ID, Entity: "customer", EntityID: h.tn.N.NewID(), Op: change.OpInsert,
				Origin: h.edge, Actor: h.ownerID, HLC: h.tn.N.Stamp(),
				Fields: map[string]any{"first_name": fmt.Sprint("C", b*500+i), "created_at": now, "updated_at": now}}
		}
		if q, err := h.tn.N.IngestFrom(ctx, h.o.ID, h.loc, h.edge, cs); err != nil || q != 0 {
			t.Fatalf("ingest: %d quarantined, %v", q, err)
		}
	}
	start = time.Now()
	r := h.tn.Do("GET", "/api/v1/sync/status", h.o.Owner, nil)
	took := time.Since(start)
	if r.Status != 200 {
		t.Fatalf("status: %d %s", r.Status, r.Body)
	}
	edges, _ := r.Data()["edges"].([]any)
	if len(edges) != len(nodes)+1 {
		t.Fatalf("%d edges listed, want %d", len(edges), len(nodes)+1)
	}
	for _, x := range edges {
		e := x.(map[string]any)
		want := float64(pushed)
		if e["node_id"] == h.edge {
			want = 0 // its own records
		}
		if e["pending_down"].(float64) < want || e["connected"] != false || e["version"] != "" ||
			e["open_conflicts"] != 1.0 || e["quarantined"] != 1.0 {
			t.Fatalf("edge %v, want pending_down at least %v and one open quarantined conflict", e, want)
		}
	}
	t.Logf("GET /sync/status with %d edges and %d records to pull each: %v", len(edges), pushed, took)
}
