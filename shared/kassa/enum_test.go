package kassa_test

import (
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"slices"
	"strconv"
	"testing"

	"kassa.dev/shared/kassa"
)

// TestEnumsListEveryConstantOfTheirType: a constant added to a named
// string type with an enum (a new Role, Scope, PaymentMethod…) reaches the
// OpenAPI document's enum, so clients generated from it accept the value.
func TestEnumsListEveryConstantOfTheirType(t *testing.T) {
	files, _ := filepath.Glob("*.go")
	fset := token.NewFileSet()
	seen := 0
	for _, f := range files {
		af, err := parser.ParseFile(fset, f, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range af.Decls {
			gd, ok := d.(*ast.GenDecl)
			if !ok || gd.Tok != token.CONST {
				continue
			}
			for _, spec := range gd.Specs {
				vs := spec.(*ast.ValueSpec)
				typ, ok := vs.Type.(*ast.Ident)
				if !ok || kassa.Enums[typ.Name] == nil {
					continue
				}
				for i, v := range vs.Values {
					lit, ok := v.(*ast.BasicLit)
					if !ok || lit.Kind != token.STRING {
						continue
					}
					val, _ := strconv.Unquote(lit.Value)
					seen++
					if !slices.Contains(kassa.Enums[typ.Name], val) {
						t.Errorf("%s: %s %s = %q is not in kassa.Enums[%q]", f, vs.Names[i], typ.Name, val, typ.Name)
					}
				}
			}
		}
	}
	if seen < 20 {
		t.Fatalf("found only %d typed constants; the scan is broken", seen)
	}
}
