package kassa

import (
	"encoding/json"
	"testing"
)

// TestOptToMergesOnlyWhatTheUpdateNamed: a field absent from a PATCH body
// keeps the stored value; a present one replaces it, null with the zero.
func TestOptToMergesOnlyWhatTheUpdateNamed(t *testing.T) {
	for _, tc := range []struct {
		body string
		want string
	}{
		{`{}`, "stored"},
		{`{"name": "new"}`, "new"},
		{`{"name": null}`, ""},
	} {
		var in struct {
			Name Opt[string] `json:"name"`
		}
		if err := json.Unmarshal([]byte(tc.body), &in); err != nil {
			t.Fatal(err)
		}
		got := "stored"
		in.Name.To(&got)
		if got != tc.want {
			t.Errorf("%s: %q, want %q", tc.body, got, tc.want)
		}
	}
}
