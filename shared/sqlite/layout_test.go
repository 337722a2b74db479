package sqlite

import (
	"os/exec"
	"strings"
	"testing"
)

// TestStoreImportsNoHTTPOrAssembly keeps the store below the HTTP layer
// and the node assembly: they depend on it, never the reverse. It lists
// every package the store builds on, directly or not.
func TestStoreImportsNoHTTPOrAssembly(t *testing.T) {
	forbidden := []string{"github.com/gofiber/", "github.com/valyala/fasthttp", "kassa.dev/shared/httpapi", "kassa.dev/shared/node"}
	goTool, err := exec.LookPath("go")
	if err != nil {
		t.Fatalf("the go command is needed to list the store's imports: %v", err)
	}
	out, err := exec.Command(goTool, "list", "-deps", "-f", "{{.ImportPath}}", ".").CombinedOutput()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, out)
	}
	deps := strings.Fields(string(out))
	if len(deps) < 20 {
		t.Fatalf("go list found only %d packages; the listing is broken", len(deps))
	}
	for _, dep := range deps {
		for _, f := range forbidden {
			if dep == strings.TrimSuffix(f, "/") || strings.HasPrefix(dep, f) || strings.HasPrefix(dep, f+"/") {
				t.Errorf("the store depends on %s: package sqlite may import no HTTP or node package", dep)
			}
		}
	}
}
