package httpapi_test

import (
	"regexp"
	"strconv"
	"testing"
	"time"

	"kassa.dev/shared/kassa"
	"kassa.dev/sync/wait"
)

// metric reads one unlabelled sample from the node's /metrics.
func (tn *testNode) metric(name string) float64 {
	tn.t.Helper()
	r := tn.Do("GET", "/metrics", "", nil)
	m := regexp.MustCompile(`(?m)^` + name + ` (\S+)`).FindSubmatch(r.Body)
	if m == nil {
		tn.t.Fatalf("no %s in /metrics:\n%s", name, r.Body)
	}
	v, err := strconv.ParseFloat(string(m[1]), 64)
	if err != nil {
		tn.t.Fatal(err)
	}
	return v
}

// TestMetricsShowTheWriter: ops see the single writer's work in /metrics —
// units and the batches they were committed in, a failed unit, the time
// spent, and the checkpoint the writer runs once the store goes quiet.
func TestMetricsShowTheWriter(t *testing.T) {
	tn := MustStartNode(t, kassa.NodeEdge, nil)
	o := tn.MustOrg("Metrics Cafe")
	units, batches := tn.metric("kassa_store_write_units_total"), tn.metric("kassa_store_write_batches_total")
	failed := tn.metric("kassa_store_write_units_failed_total")
	for i := range 5 {
		if r := tn.Do("POST", "/api/v1/customers", o.Owner, map[string]any{"first_name": "C", "email": "c" + strconv.Itoa(i) + "@example.com"}); r.Status != 201 {
			t.Fatalf("create customer: %d %s", r.Status, r.Body)
		}
	}
	// The same e-mail again: the unit runs and fails (409), alone.
	if r := tn.Do("POST", "/api/v1/customers", o.Owner, map[string]any{"first_name": "C", "email": "c0@example.com"}); r.Status != 409 {
		t.Fatalf("duplicate e-mail: %d %s", r.Status, r.Body)
	}
	if got := tn.metric("kassa_store_write_units_total") - units; got < 6 {
		t.Errorf("units grew by %v after 6 writes", got)
	}
	if got := tn.metric("kassa_store_write_batches_total") - batches; got < 1 || got > 6 {
		t.Errorf("batches grew by %v for 6 sequential writes", got)
	}
	if got := tn.metric("kassa_store_write_units_failed_total") - failed; got != 1 {
		t.Errorf("failed units grew by %v, want 1", got)
	}
	busy, commit := tn.metric("kassa_store_writer_busy_seconds_total"), tn.metric("kassa_store_commit_seconds_total")
	if busy <= 0 || commit <= 0 || commit > busy {
		t.Errorf("busy %v s, commit %v s: want 0 < commit <= busy", busy, commit)
	}
	if q := tn.metric("kassa_store_write_queue"); q != 0 {
		t.Errorf("write queue %v with nothing in flight", q)
	}
	if r := tn.metric("kassa_store_writer_priority_raised"); r != 0 && r != 1 {
		t.Errorf("kassa_store_writer_priority_raised %v", r)
	}
	wait.For(t, 5*time.Second, "a checkpoint in the lull", func() bool { return tn.metric("kassa_store_checkpoints_total") >= 1 })
}
