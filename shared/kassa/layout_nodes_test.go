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

// TestOnlyTheNodeImportsTheStore: shared/node is the one package that
// holds the store (Node.db is unexported); everything else — the demo
// seed, the API's tests, the money forwarding, the binaries and their
// tests — reaches it through services or the node's narrow methods. So a
// second store backend changes node and sqlite, nothing else. Test files
// count too; only sqlite's own and node's (node/nodetest included) may.
func TestOnlyTheNodeImportsTheStore(t *testing.T) {
	root := filepath.Join("..", "..")
	allowed := []string{filepath.Join("shared", "sqlite"), filepath.Join("shared", "node")}
	checked := 0
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, path)
		if d.IsDir() {
			if rel != "." && (strings.HasPrefix(d.Name(), ".") || d.Name() == "testdata" || d.Name() == "data" || d.Name() == "bin") {
				return filepath.SkipDir
			}
			for _, a := range allowed {
				if rel == a {
					return filepath.SkipDir
				}
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") {
			return nil
		}
		af, err := parser.ParseFile(token.NewFileSet(), path, nil, parser.ImportsOnly)
		if err != nil {
			return err
		}
		checked++
		for _, imp := range af.Imports {
			p, _ := strconv.Unquote(imp.Path.Value)
			if p == "kassa.dev/shared/sqlite" || strings.HasPrefix(p, "kassa.dev/shared/sqlite/") {
				t.Errorf("%s imports %s: only shared/node holds the store; use a service or a node method", rel, p)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if checked < 100 {
		t.Fatalf("checked only %d Go files; walk is broken", checked)
	}
}
