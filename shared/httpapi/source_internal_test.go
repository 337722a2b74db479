package httpapi

import (
	"io/fs"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"kassa.dev/shared/kassa"
)

// TestTheEmbeddedSourceIsEveryNonTestFile: the OpenAPI document's
// descriptions come from the embedded source, which leaves the tests out
// by its patterns; a file the patterns miss would lose its descriptions.
func TestTheEmbeddedSourceIsEveryNonTestFile(t *testing.T) {
	for dir, fsys := range map[string]fs.FS{".": source, filepath.Join("..", "kassa"): kassa.Source} {
		checkEmbeddedSource(t, dir, fsys)
	}
}

// checkEmbeddedSource fails t unless fsys holds exactly the Go files of
// dir that are not tests.
func checkEmbeddedSource(t *testing.T, dir string, fsys fs.FS) {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(dir, "*.go"))
	if err != nil {
		t.Fatal(err)
	}
	var want []string
	for _, f := range files {
		if !strings.HasSuffix(f, "_test.go") {
			want = append(want, filepath.Base(f))
		}
	}
	got, err := fs.Glob(fsys, "*.go")
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range want {
		if !slices.Contains(got, name) {
			t.Errorf("%s/%s is not embedded: add a //go:embed pattern that matches it", dir, name)
		}
	}
	for _, name := range got {
		if strings.HasSuffix(name, "_test.go") {
			t.Errorf("%s/%s is a test, embedded in the binary", dir, name)
		}
	}
	if len(want) == 0 {
		t.Fatalf("no Go files in %s", dir)
	}
}
