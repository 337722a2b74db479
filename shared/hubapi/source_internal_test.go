package hubapi

import (
	"io/fs"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestTheEmbeddedSourceIsEveryNonTestFile: the OpenAPI document describes
// the hub's routes from this package's embedded source, whose patterns
// leave its tests out (shared/httpapi's test of the same name checks the
// shared packages').
func TestTheEmbeddedSourceIsEveryNonTestFile(t *testing.T) {
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	got, _ := fs.Glob(source, "*.go")
	var want []string
	for _, f := range files {
		if !strings.HasSuffix(f, "_test.go") {
			want = append(want, f)
		}
	}
	if !slices.Equal(got, want) {
		t.Errorf("embedded %v, want every non-test file %v: add a //go:embed pattern that matches the missing ones", got, want)
	}
}
