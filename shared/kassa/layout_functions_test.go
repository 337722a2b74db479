package kassa_test

import (
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"strings"
	"testing"
)

// maxFunctionLines is the longest a function of the domain or the store
// may be (STYLE.md: service methods open one unit, call small helpers,
// commit; never over 60 lines), counted from its func line to its closing
// brace.
const maxFunctionLines = 60

// TestNoFunctionOfTheDomainOrStoreIsOverSixtyLines fails when a function
// (or method) of shared/kassa, shared/sqlite or shared/sqlite/engine,
// tests left out, is longer than maxFunctionLines: split it into begin,
// small helpers and commit.
func TestNoFunctionOfTheDomainOrStoreIsOverSixtyLines(t *testing.T) {
	checked := 0
	for _, dir := range []string{".", filepath.Join("..", "sqlite"), filepath.Join("..", "sqlite", "engine")} {
		files, err := filepath.Glob(filepath.Join(dir, "*.go"))
		if err != nil {
			t.Fatal(err)
		}
		for _, path := range files {
			if strings.HasSuffix(path, "_test.go") {
				continue
			}
			fset := token.NewFileSet()
			f, err := parser.ParseFile(fset, path, nil, 0)
			if err != nil {
				t.Fatal(err)
			}
			for _, d := range f.Decls {
				fn, ok := d.(*ast.FuncDecl)
				if !ok || fn.Body == nil {
					continue
				}
				checked++
				if n := fset.Position(fn.End()).Line - fset.Position(fn.Pos()).Line + 1; n > maxFunctionLines {
					t.Errorf("%s: %s is %d lines, over %d: begin, call small helpers, commit", path, fn.Name.Name, n, maxFunctionLines)
				}
			}
		}
	}
	if checked == 0 {
		t.Fatal("no functions found: run from shared/kassa")
	}
}
