package kassa_test

import (
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// TestDomainImportsOnlyTheStandardLibrary keeps the domain free of Fiber,
// SQLite and NATS: those packages depend on it, never the reverse. Its
// tests too: a rule of the domain is tested without a database or a
// server (they may import the package itself, as kassa_test).
func TestDomainImportsOnlyTheStandardLibrary(t *testing.T) {
	files, _ := filepath.Glob("*.go")
	if len(files) < 10 {
		t.Fatalf("found only %d files; the glob is broken", len(files))
	}
	fset := token.NewFileSet()
	for _, f := range files {
		af, err := parser.ParseFile(fset, f, nil, parser.ImportsOnly)
		if err != nil {
			t.Fatal(err)
		}
		for _, imp := range af.Imports {
			path, _ := strconv.Unquote(imp.Path.Value)
			if strings.HasSuffix(f, "_test.go") && path == "kassa.dev/shared/kassa" {
				continue
			}
			if first, _, _ := strings.Cut(path, "/"); strings.Contains(first, ".") {
				t.Errorf("%s imports %s: the domain package and its tests may import only the standard library", f, path)
			}
		}
	}
}

// TestEveryPackageHasADocComment walks all modules of the repository and
// fails for a package whose files carry no package doc comment.
func TestEveryPackageHasADocComment(t *testing.T) {
	root := filepath.Join("..", "..")
	if _, err := os.Stat(filepath.Join(root, "go.work")); err != nil {
		t.Fatalf("repository root not found from %s: %v", root, err)
	}
	dirs := map[string]bool{}
	filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (strings.HasPrefix(d.Name(), ".") || d.Name() == "testdata" || d.Name() == "node_modules" || d.Name() == "data" || d.Name() == "bin") && path != root {
			return filepath.SkipDir
		}
		if !d.IsDir() && strings.HasSuffix(path, ".go") && !strings.HasSuffix(path, "_test.go") {
			dirs[filepath.Dir(path)] = dirs[filepath.Dir(path)] || hasDoc(t, path)
		}
		return nil
	})
	if len(dirs) < 10 {
		t.Fatalf("found only %d packages; walk is broken", len(dirs))
	}
	for dir, ok := range dirs {
		if !ok {
			t.Errorf("package in %s has no doc comment", dir)
		}
	}
}

func hasDoc(t *testing.T, path string) bool {
	af, err := parser.ParseFile(token.NewFileSet(), path, nil, parser.PackageClauseOnly|parser.ParseComments)
	if err != nil {
		t.Fatal(err)
	}
	return af.Doc != nil && strings.HasPrefix(af.Doc.Text(), "Package "+af.Name.Name) || af.Doc != nil && af.Name.Name == "main"
}
