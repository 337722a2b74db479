package sqlite

import (
	"encoding/json"
	"maps"
	"math"
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

// TestMarshalFieldsIsEncodingJSON pins the log's encoder of a record's
// fields to json.Marshal byte for byte: the fields as a pushed record
// decodes them (numbers as float64, nested lists and objects), and the
// values a service's record carries.
func TestMarshalFieldsIsEncodingJSON(t *testing.T) {
	var pushed map[string]any
	if err := json.Unmarshal([]byte(`{"id":"0195f3a2","total":1250,"tax":-12.5,"rate":0.0000001,"big":1e21,
		"tiny":-1.5e-7,"zero":0,"neg_zero":-0,"max":1.7976931348623157e308,"half":0.5,"third":0.3333333333333333,
		"name":"Café \"Zur Post\" <&> \u2028 tab\t","ctl":"a\u0001b","bad":"\udc00","empty":"","none":null,"yes":true,"no":false,
		"lines":[{"qty":2,"price":3.5}],"meta":{"b":1,"a":[null,"x"]},"<key>":"k","é":"accent"}`), &pushed); err != nil {
		t.Fatal(err)
	}
	at := time.Date(2026, 11, 29, 9, 30, 15, 123_000_000, time.UTC)
	made := map[string]any{"quantity": 3, "amount": int64(-1250), "at": at, "tags": []string{"a"}, "ptr": &at, "nilptr": (*time.Time)(nil)}
	for _, fields := range []map[string]any{pushed, made, {}, nil} {
		want, err := json.Marshal(fields)
		if err != nil {
			t.Fatal(err)
		}
		got, err := marshalFields(fields)
		if err != nil {
			t.Fatal(err)
		}
		if string(got) != string(want) {
			t.Fatalf("fields\n got %s\nwant %s", got, want)
		}
	}
	if _, err := marshalFields(map[string]any{"x": math.Inf(1)}); err == nil {
		t.Fatal("an infinite number was encoded")
	}
}
