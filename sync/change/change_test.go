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
