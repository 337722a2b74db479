package engine

import (
	"encoding/json"
	"fmt"
	"time"

	"kassa.dev/sync/hlc"
)

// columnValue converts a Go value to what its column stores. It is the one
// converter of the store: for a service's field on its way into a row
// (writeRow, filters), for a value decoded from a change record's JSON on
// its way into a row (apply), and for a scanned column on its way into a
// digest (canonical).
//
//   - nil and nil pointers → NULL; other pointers → what they point to
//   - booleans → 0/1 (int64); int → int64
//   - a whole float64 or json.Number → int64, another → float64
//     (JSON numbers decode as floats or json.Number)
//   - time.Time → text in TimeFormat (UTC); an HLC timestamp → its text
//   - string, int64, []byte → as they are
//   - anything else (slices, maps, structs) → JSON text
//
// It panics on a value encoding/json cannot encode: that is a programming
// error, not input.
func ColumnValue(v any) any {
	switch x := v.(type) {
	case nil, string, int64, []byte:
		return x
	case int:
		return int64(x)
	case bool:
		if x {
			return int64(1)
		}
		return int64(0)
	case float64:
		if x == float64(int64(x)) {
			return int64(x)
		}
		return x
	case json.Number:
		if n, err := x.Int64(); err == nil {
			return n
		}
		f, _ := x.Float64()
		return f
	case time.Time:
		return FmtTime(x)
	case hlc.Timestamp:
		return x.String()
	case *time.Time:
		return pointee(x)
	case *string:
		return pointee(x)
	case *int64:
		return pointee(x)
	case *int:
		return pointee(x)
	case *bool:
		return pointee(x)
	default:
		b, err := json.Marshal(x)
		if err != nil {
			panic(fmt.Sprintf("sqlite: column value %T: %v", v, err))
		}
		return string(b)
	}
}

// pointee is columnValue of what p points to, or NULL for a nil p.
func pointee[T any](p *T) any {
	if p == nil {
		return nil
	}
	return ColumnValue(*p)
}

// sameStored reports whether two values are stored alike: an update that
// sets a column to new when it holds old changes nothing.
func SameStored(old, new any) bool {
	o, n := ColumnValue(old), ColumnValue(new)
	return (o == nil) == (n == nil) && fmt.Sprint(o) == fmt.Sprint(n)
}

// canonical renders a column value for a digest, so that two nodes holding
// the same row render it alike: NULL as a marker no text can be, JSON text
// re-encoded with sorted keys, everything else as columnValue stores it.
func Canonical(v any) string {
	switch x := ColumnValue(v).(type) {
	case nil:
		return "\x00null"
	case []byte:
		return canonicalText(string(x))
	case string:
		return canonicalText(x)
	default:
		return fmt.Sprint(x)
	}
}

// canonicalText re-encodes s when it is a JSON object or list.
func canonicalText(s string) string {
	if len(s) > 0 && (s[0] == '{' || s[0] == '[') {
		var j any
		if json.Unmarshal([]byte(s), &j) == nil {
			b, _ := json.Marshal(j)
			return string(b)
		}
	}
	return s
}

// nullString stores "" as NULL.
func NullString(s string) any {
	if s == "" {
		return nil
	}
	return s
}

// decodeJSON unmarshals a JSON column into v.
func DecodeJSON(s string, v any) error {
	if s == "" {
		return nil
	}
	return json.Unmarshal([]byte(s), v)
}
