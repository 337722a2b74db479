package engine

import (
	"testing"

	"kassa.dev/sync/change"
)

// The test's nouns: an entry touches its tally (by its tally_id) to be
// recomputed, as an order's line touches its order.
var entTestTally, entTestEntry Noun

func init() {
	Register(&entTestTally, Noun{Name: "test_tally", Table: "test_tallies"})
	Register(&entTestEntry, Noun{Name: "test_entry", Table: "test_entries",
		Track: func(a *Applier, c *change.Change, f map[string]any) {
			a.Touch(&entTestTally, FieldText(f, "tally_id"), c.OrgID)
		}})
}

// TestPushesThatCouldMeetDoNotJoin: a push joins the pushes queued before
// it only when it names none of their changes or rows (in a field, in the
// JSON a field holds, as its actor) and touches no row they touch.
func TestPushesThatCouldMeetDoNotJoin(t *testing.T) {
	entry := func(id, tally string, fields map[string]any) change.Change {
		f := map[string]any{"tally_id": tally}
		for k, v := range fields {
			f[k] = v
		}
		return change.Change{ID: "c-" + id, Entity: "test_entry", EntityID: id, Op: change.OpInsert, OrgID: "org", Fields: f}
	}
	push := func(cs ...change.Change) *pushPart {
		p := &pushPart{changes: cs}
		p.index()
		return p
	}
	for _, tc := range []struct {
		name   string
		pushes []*pushPart
		fit    int
	}{
		{"rows of their own", []*pushPart{push(entry("e1", "t1", nil)), push(entry("e2", "t2", nil)), push(entry("e3", "t3", nil))}, 3},
		{"a field names another's row", []*pushPart{push(entry("e1", "t1", nil)), push(entry("e2", "t2", map[string]any{"after": "e1"}))}, 1},
		{"another names its row", []*pushPart{push(entry("e1", "t1", map[string]any{"before": "e2"})), push(entry("e2", "t2", nil))}, 1},
		{"JSON in a field names another's change", []*pushPart{push(entry("e1", "t1", nil)), push(entry("e2", "t2", map[string]any{"refs": `[{"change":"c-e1"}]`}))}, 1},
		{"a nested value names another's row", []*pushPart{push(entry("e1", "t1", nil)), push(entry("e2", "t2", map[string]any{"refs": []any{map[string]any{"row": "e1"}}}))}, 1},
		{"one row touched by two", []*pushPart{push(entry("e1", "t1", nil)), push(entry("e2", "t1", nil))}, 1},
		{"the third meets the first", []*pushPart{push(entry("e1", "t1", nil)), push(entry("e2", "t2", nil)), push(entry("e3", "t1", nil))}, 2},
		{"an actor is another's row", []*pushPart{push(entry("e1", "t1", nil)), push(func() change.Change {
			c := entry("e2", "t2", nil)
			c.Actor = "e1"
			return c
		}())}, 1},
	} {
		parts := make([]any, len(tc.pushes))
		for i, p := range tc.pushes {
			parts[i] = p
		}
		if got := fitPushes(parts); got != tc.fit {
			t.Errorf("%s: %d of %d pushes fit, want %d", tc.name, got, len(parts), tc.fit)
		}
	}
}
