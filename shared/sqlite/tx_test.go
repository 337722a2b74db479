package sqlite

import (
	"encoding/json"
	"maps"
	"reflect"
	"slices"
	"testing"
	"time"
)

// TestAppendFieldsIsWhatTheAPIShows pins the change record's hand-written
// encoder to encoding/json: every kind of column value a service writes
// decodes to what json.Marshal of the same values (times as the API
// renders them) decodes to, and the text is valid JSON.
func TestAppendFieldsIsWhatTheAPIShows(t *testing.T) {
	at := time.Date(2026, 11, 22, 9, 30, 15, 123_000_000, time.UTC)
	name := "Café \"Zur Post\" <&> \u2028 tab\t"
	var none *string
	cols := map[string]any{
		"id": "0195f3a2-0000-7000-8000-000000000001", "name": name, "plain": "Flat white",
		"quantity": 3, "total": int64(-1250), "active": true, "deleted": false, "notes": nil,
		"created_at": at, "completed_at": &at, "cancelled_at": (*time.Time)(nil),
		"description": &name, "customer_id": none, "modifiers": []map[string]any{{"name": "Oat", "price": 70}},
		"emoji": "☕ x\u00e9", "control": "a\x01b", "backslash": `a\b`,
	}
	want := map[string]any{}
	for k, v := range cols {
		switch x := v.(type) {
		case time.Time:
			want[k] = fmtTime(x)
		case *time.Time:
			if x == nil {
				want[k] = nil
			} else {
				want[k] = fmtTime(*x)
			}
		default:
			want[k] = v
		}
	}
	wantJSON, _ := json.Marshal(want)
	got, err := appendFields(nil, slices.Sorted(maps.Keys(cols)), cols)
	if err != nil {
		t.Fatal(err)
	}
	if !json.Valid(got) {
		t.Fatalf("not JSON: %s", got)
	}
	var g, w map[string]any
	json.Unmarshal(got, &g)
	json.Unmarshal(wantJSON, &w)
	if !reflect.DeepEqual(g, w) {
		t.Fatalf("fields\n got %s\nwant %s", got, wantJSON)
	}
	if string(got) != string(wantJSON) {
		t.Fatalf("text differs from encoding/json\n got %s\nwant %s", got, wantJSON)
	}
}
