package sqlite

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"kassa.dev/shared/sqlite/engine"
)

// TestTheEngineNamesNoNoun fails when the engine (package engine,
// docs/store.md: the writer and its units, change capture, the outbox and
// event log, apply and merge, admission, digests, formats and the
// registry) imports this package or names a registered noun: its handle
// (an ent* var), or its table in a statement or other text. What a noun
// is and does is registered in its own file here. The event log (EntEvent,
// events) is the engine's own.
func TestTheEngineNamesNoNoun(t *testing.T) {
	engineFiles, err := filepath.Glob("engine/*.go")
	if err != nil || len(engineFiles) == 0 {
		t.Fatalf("no engine files: %v", err)
	}
	handles := nounHandles(t)
	tables := map[string]bool{}
	for _, n := range nouns {
		if n != engine.EntEvent {
			tables[n.Table] = true
		}
	}
	word := regexp.MustCompile(`[a-z_]+`)
	// Text is SQL, or a bare name; prose (a refusal's reason) may say
	// "other locations".
	sqlish := regexp.MustCompile(`\b(SELECT|INSERT|UPDATE|DELETE|FROM|JOIN|INTO)\b|^"[a-z_]+"$`)
	for _, name := range engineFiles {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(token.NewFileSet(), name, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		for _, imp := range f.Imports {
			if imp.Path.Value == `"kassa.dev/shared/sqlite"` {
				t.Errorf("%s imports the store's nouns (shared/sqlite): the engine reaches a noun only through the registry", name)
			}
		}
		ast.Inspect(f, func(n ast.Node) bool {
			switch x := n.(type) {
			case *ast.Ident:
				if handles[x.Name] {
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
	if len(out) != len(nouns)-1 { // the event log is the engine's (engine.EntEvent)
		t.Fatalf("found %d noun handles for %d registered nouns besides the event log: declare each as var entX = new(noun)", len(out), len(nouns)-1)
	}
	return out
}

func isIdent(e ast.Expr, name string) bool {
	id, ok := e.(*ast.Ident)
	return ok && id.Name == name
}
