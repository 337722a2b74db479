package kassa_test

import (
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// storeImports walks the Go files below root/dir (skipping hidden, data
// and testdata folders and the folders skip names, relative to root) and
// calls found for each import of the store (kassa.dev/shared/sqlite...)
// in a file that keep accepts. It returns how many files it parsed.
func storeImports(t *testing.T, root, dir string, skip []string, keep func(rel string) bool, found func(rel, imp string)) int {
	t.Helper()
	checked := 0
	err := filepath.WalkDir(filepath.Join(root, dir), func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, path)
		if d.IsDir() {
			if rel != dir && (strings.HasPrefix(d.Name(), ".") || d.Name() == "testdata" || d.Name() == "data" || d.Name() == "bin") ||
				slices.Contains(skip, rel) {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") || !keep(rel) {
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
				found(rel, p)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return checked
}

// TestBinariesImportNodeNotTheStore: the edge and hub binaries are flags,
// NATS wiring and a list of jobs; what touches the store lives in
// shared/node, so a second store backend changes node, not the binaries.
func TestBinariesImportNodeNotTheStore(t *testing.T) {
	root := filepath.Join("..", "..")
	checked := 0
	for _, mod := range []string{"edge", "hub"} {
		// Here only the binaries' code; their tests fall under
		// TestOnlyTheNodeImportsTheStore.
		checked += storeImports(t, root, mod, nil,
			func(rel string) bool { return !strings.HasSuffix(rel, "_test.go") },
			func(rel, imp string) {
				t.Errorf("%s imports %s: edge and hub import shared/node, not the store", rel, imp)
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
	skip := []string{filepath.Join("shared", "sqlite"), filepath.Join("shared", "node")}
	checked := storeImports(t, root, ".", skip, func(string) bool { return true }, func(rel, imp string) {
		t.Errorf("%s imports %s: only shared/node holds the store; use a service or a node method", rel, imp)
	})
	if checked < 100 {
		t.Fatalf("checked only %d Go files; walk is broken", checked)
	}
}
