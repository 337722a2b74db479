package kassa_test

import (
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// TestBinariesImportNodeNotTheStore: the edge and hub binaries are flags,
// NATS wiring and a list of jobs; what touches the store lives in
// shared/node, so a second store backend changes node, not the binaries.
func TestBinariesImportNodeNotTheStore(t *testing.T) {
	root := filepath.Join("..", "..")
	checked := 0
	for _, mod := range []string{"edge", "hub"} {
		filepath.WalkDir(filepath.Join(root, mod), func(path string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			if d.IsDir() && (strings.HasPrefix(d.Name(), ".") || d.Name() == "testdata" || d.Name() == "data") {
				return filepath.SkipDir
			}
			// Tests may open a store to inspect it after the fact (the event
			// log after kill -9); the rule is about the binaries' code.
			if d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
				return nil
			}
			af, err := parser.ParseFile(token.NewFileSet(), path, nil, parser.ImportsOnly)
			if err != nil {
				t.Fatal(err)
			}
			checked++
			for _, imp := range af.Imports {
				p, _ := strconv.Unquote(imp.Path.Value)
				if p == "kassa.dev/shared/sqlite" || strings.HasPrefix(p, "kassa.dev/shared/sqlite/") {
					t.Errorf("%s imports %s: edge and hub import shared/node, not the store", path, p)
				}
			}
			return nil
		})
	}
	if checked < 5 {
		t.Fatalf("checked only %d files of edge and hub; walk is broken", checked)
	}
}
