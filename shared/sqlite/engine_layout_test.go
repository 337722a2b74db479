package sqlite

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"regexp"
	"strings"
	"testing"
)

// engineFiles are the store's engine (docs/store.md): the writer and its
// units, change capture, the outbox and event log, apply and merge,
// admission, digests, formats and the registry. They name no noun: what a
// noun is and does is registered in its own file.
var engineFiles = []string{"tx.go", "apply.go", "trust.go", "sync.go", "format.go", "db.go", "outbox.go", "registry.go"}

// TestTheEngineNamesNoNoun fails when an engine file names a registered
// noun: its handle (an ent* var), or its table in a statement or other
// text. The event log (entEvent, events) is the engine's own.
func TestTheEngineNamesNoNoun(t *testing.T) {
	handles := nounHandles(t)
	tables := map[string]bool{}
	for _, n := range nouns {
		if n != entEvent {
			tables[n.table] = true
		}
	}
	word := regexp.MustCompile(`[a-z_]+`)
	// Text is SQL, or a bare name; prose (a refusal's reason) may say
	// "other locations".
	sqlish := regexp.MustCompile(`\b(SELECT|INSERT|UPDATE|DELETE|FROM|JOIN|INTO)\b|^"[a-z_]+"$`)
	for _, name := range engineFiles {
		f, err := parser.ParseFile(token.NewFileSet(), name, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		ast.Inspect(f, func(n ast.Node) bool {
			switch x := n.(type) {
			case *ast.Ident:
				if handles[x.Name] && x.Name != "entEvent" {
					t.Errorf("%s names the noun %s: move what it does for it into the noun's file, behind a hook of the registry", name, x.Name)
				}
			case *ast.BasicLit:
				if x.Kind != token.STRING || !sqlish.MatchString(x.Value) {
					break
				}
				for _, w := range word.FindAllString(x.Value, -1) {
					if tables[w] {
						t.Errorf("%s names the table %s in %s: move it into its noun's file, behind a hook of the registry", name, w, x.Value)
					}
				}
			}
			return true
		})
	}
}

// nounHandles are the package's ent* vars that hold a registered noun
// (var entX = new(noun)).
func nounHandles(t *testing.T) map[string]bool {
	t.Helper()
	out := map[string]bool{}
	entries, err := os.ReadDir(".")
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if !strings.HasSuffix(e.Name(), ".go") || strings.HasSuffix(e.Name(), "_test.go") {
			continue
		}
		f, err := parser.ParseFile(token.NewFileSet(), e.Name(), nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range f.Decls {
			g, ok := d.(*ast.GenDecl)
			if !ok || g.Tok != token.VAR {
				continue
			}
			for _, s := range g.Specs {
				for i, v := range s.(*ast.ValueSpec).Values {
					if c, ok := v.(*ast.CallExpr); ok && len(c.Args) == 1 && isIdent(c.Fun, "new") && isIdent(c.Args[0], "noun") {
						out[s.(*ast.ValueSpec).Names[i].Name] = true
					}
				}
			}
		}
	}
	if len(out) != len(nouns) {
		t.Fatalf("found %d noun handles for %d registered nouns: declare each as var entX = new(noun)", len(out), len(nouns))
	}
	return out
}

func isIdent(e ast.Expr, name string) bool {
	id, ok := e.(*ast.Ident)
	return ok && id.Name == name
}
