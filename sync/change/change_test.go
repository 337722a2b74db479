package change

import (
	"encoding/json"
	"reflect"
	"testing"
)

// TestRawFieldsAreSentAsTheFields: a record read with its fields left as
// stored (RawFields, an edge's push) is received as the same record as
// one whose fields were decoded first.
func TestRawFieldsAreSentAsTheFields(t *testing.T) {
	c := Change{ID: "c1", OrgID: "o1", Entity: "order", EntityID: "r1", Op: OpInsert, Origin: "n1",
		Fields: map[string]any{"total": float64(1970), "notes": "<b>&</b>", "data": `{"id":"x"}`}}
	decoded, err := json.Marshal(c)
	if err != nil {
		t.Fatal(err)
	}
	raw := c
	raw.Fields = nil
	if raw.RawFields, err = json.Marshal(c.Fields); err != nil {
		t.Fatal(err)
	}
	sent, err := json.Marshal(raw)
	if err != nil {
		t.Fatal(err)
	}
	var got, want Change
	if err := json.Unmarshal(sent, &got); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(decoded, &want); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, want) || !reflect.DeepEqual(got.Fields, c.Fields) || got.RawFields != nil {
		t.Fatalf("received %+v, want %+v", got, want)
	}
}

// TestAppendJSONIsReceivedAsMarshalJSON: a record encoded field by field
// (an edge's push) is received as the same record as one encoding/json
// encoded, with raw or decoded fields, optional fields set or not, and
// strings JSON must escape.
func TestAppendJSONIsReceivedAsMarshalJSON(t *testing.T) {
	fields := map[string]any{"total": float64(1970), "notes": "<b>&</b>\n\"é\"", "data": `{"id":"x"}`, "gone": nil}
	raw, _ := json.Marshal(fields)
	for _, c := range []Change{
		{ID: "c1", OrgID: "o1", Entity: "order", EntityID: "r1", Op: OpInsert, Origin: "n1", Fields: fields},
		{ID: "c2", OrgID: "o1", LocationID: "l\"1", Entity: "order", EntityID: "r<1>", Op: OpUpdate, Origin: "n1", Actor: "u\\1\x01", RawFields: raw},
	} {
		c.HLC.Wall, c.HLC.Logical = 1764288000123, 7
		want, err := json.Marshal(c)
		if err != nil {
			t.Fatal(err)
		}
		got, err := c.AppendJSON([]byte("x"))
		if err != nil || got[0] != 'x' {
			t.Fatalf("AppendJSON: %q, %v", got, err)
		}
		var g, w Change
		if err := json.Unmarshal(got[1:], &g); err != nil {
			t.Fatalf("%s: %v", got[1:], err)
		}
		if err := json.Unmarshal(want, &w); err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(g, w) || !reflect.DeepEqual(g.Fields, fields) {
			t.Fatalf("received %+v from %s, want %+v", g, got[1:], w)
		}
	}
}
