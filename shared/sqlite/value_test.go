package sqlite

import (
	"encoding/json"
	"reflect"
	"testing"
	"time"

	"kassa.dev/sync/hlc"
)

// TestColumnValueStoresEveryKindOfValueOneWay pins the store's one value
// converter: what a service writes, what a change record's JSON decodes
// to and what a column scans as all reach the column in the same form.
func TestColumnValueStoresEveryKindOfValueOneWay(t *testing.T) {
	at := time.Date(2026, 11, 22, 9, 30, 15, 123_000_000, time.FixedZone("AEST", 10*3600))
	name, n64, n, yes := "Flat white", int64(-1250), 3, true
	stamp := hlc.Timestamp{Wall: 1_700_000_000_000, Logical: 7}
	cases := []struct {
		name string
		in   any
		want any
	}{
		{"nil", nil, nil},
		{"string", "Flat white", "Flat white"},
		{"JSON-looking string stays as it is", `{"b":1,"a":2}`, `{"b":1,"a":2}`},
		{"int64", int64(-1250), int64(-1250)},
		{"int", 3, int64(3)},
		{"bytes", []byte("body"), []byte("body")},
		{"true", true, int64(1)},
		{"false", false, int64(0)},
		{"whole float (a JSON number)", float64(560), int64(560)},
		{"fraction", 0.5, 0.5},
		{"json.Number whole", json.Number("9007199254740993"), int64(9007199254740993)},
		{"json.Number fraction", json.Number("1.25"), 1.25},
		{"time in UTC text", at, "2026-11-21T23:30:15.123Z"},
		{"HLC", stamp, stamp.String()},
		{"*time.Time", &at, "2026-11-21T23:30:15.123Z"},
		{"nil *time.Time", (*time.Time)(nil), nil},
		{"*string", &name, "Flat white"},
		{"nil *string", (*string)(nil), nil},
		{"*int64", &n64, int64(-1250)},
		{"nil *int64", (*int64)(nil), nil},
		{"*int", &n, int64(3)},
		{"nil *int", (*int)(nil), nil},
		{"*bool", &yes, int64(1)},
		{"nil *bool", (*bool)(nil), nil},
		{"list", []string{"b", "a"}, `["b","a"]`},
		{"decoded list", []any{"x", json.Number("2")}, `["x",2]`},
		{"map with sorted keys", map[string]any{"b": 1, "a": 2}, `{"a":2,"b":1}`},
		{"struct", struct {
			Name  string `json:"name"`
			Price int64  `json:"price"`
		}{"Oat", 70}, `{"name":"Oat","price":70}`},
	}
	for _, c := range cases {
		if got := columnValue(c.in); !reflect.DeepEqual(got, c.want) {
			t.Errorf("%s: columnValue(%#v) = %#v (%T), want %#v (%T)", c.name, c.in, got, got, c.want, c.want)
		}
	}
}

func TestColumnValuePanicsOnWhatJSONCannotEncode(t *testing.T) {
	defer func() {
		if recover() == nil {
			t.Fatal("columnValue of a channel did not panic")
		}
	}()
	columnValue(make(chan int))
}

// TestSameStoredComparesStoredForms: an update that sets what the column
// already holds changes nothing, whatever Go type it comes in.
func TestSameStoredComparesStoredForms(t *testing.T) {
	at := time.Date(2026, 11, 22, 9, 30, 0, 0, time.UTC)
	empty, name := "", "Latte"
	for _, c := range []struct {
		old, new any
		same     bool
	}{
		{int64(3), 3, true},
		{true, int64(1), true},
		{at, &at, true},
		{at, at.Add(time.Millisecond), false},
		{"Latte", &name, true},
		{nil, (*string)(nil), true},
		{nil, &empty, false}, // NULL is not the empty text
		{"", nil, false},
		{[]string{"a"}, []string{"a"}, true},
		{[]string{"a"}, []string{"a", "b"}, false},
	} {
		if got := sameStored(c.old, c.new); got != c.same {
			t.Errorf("sameStored(%#v, %#v) = %v, want %v", c.old, c.new, got, c.same)
		}
	}
}

// TestCanonicalRendersAScannedColumnForTheDigest: what the digest hashes
// for each kind of value a column scans as.
func TestCanonicalRendersAScannedColumnForTheDigest(t *testing.T) {
	for _, c := range []struct {
		in   any
		want string
	}{
		{nil, "\x00null"},
		{"", ""},
		{"null", "null"},
		{int64(42), "42"},
		{1.5, "1.5"},
		{"Flat white", "Flat white"},
		{`{"b": 1, "a": [2, 3]}`, `{"a":[2,3],"b":1}`},
		{[]byte(`[ {"y":1,"x":2} ]`), `[{"x":2,"y":1}]`},
		{`{not json`, `{not json`},
	} {
		if got := canonical(c.in); got != c.want {
			t.Errorf("canonical(%#v) = %q, want %q", c.in, got, c.want)
		}
	}
}
