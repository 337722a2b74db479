package edgenode

import (
	"testing"

	"kassa.dev/shared/demo"
	"kassa.dev/shared/node/nodetest"
)

type list struct {
	Data       []map[string]any `json:"data"`
	NextCursor *string          `json:"next_cursor"`
}

// TestEdgeBinaryDemoStartRestart runs the edge's main as a shell would:
// with --demo it seeds the demo org and serves the catalog; stopped and
// started again on the same data directory without --demo, it keeps
// everything and seeds nothing twice.
func TestEdgeBinaryDemoStartRestart(t *testing.T) {
	dir := t.TempDir()
	args := []string{"--http-addr", "127.0.0.1:0", "--data-dir", dir}
	var env map[string]string
	p := nodetest.Start(t, Run, env, append(args, "--demo")...)
	tok := p.Login(t, "cashier@demo.test", demo.Password)
	var products list
	if st := p.Call(t, "GET", "/api/v1/catalog/products?limit=200", tok, nil, &products); st != 200 || len(products.Data) != 15 {
		t.Fatalf("demo catalog: status %d, %d products", st, len(products.Data))
	}
	var ready map[string]any
	if st := p.Call(t, "GET", "/readyz", "", nil, &ready); st != 200 {
		t.Fatalf("readyz %d", st)
	}
	p.Stop(t)

	p = nodetest.Start(t, Run, env, args...)
	tok = p.Login(t, "owner@demo.test", demo.Password)
	if st := p.Call(t, "GET", "/api/v1/catalog/products?limit=200", tok, nil, &products); st != 200 || len(products.Data) != 15 {
		t.Fatalf("after restart: status %d, %d products", st, len(products.Data))
	}
	var groups list
	if p.Call(t, "GET", "/api/v1/catalog/modifiers/groups", tok, nil, &groups); len(groups.Data) != 1 || groups.Data[0]["name"] != "Milk" {
		t.Fatalf("modifier groups after restart: %v", groups.Data)
	}
}

// TestEdgeRefusesBadConfiguration checks that a bad flag value stops the
// binary with an error instead of starting half-configured.
func TestEdgeRefusesBadConfiguration(t *testing.T) {
	err := Run(t.Context(), []string{"--data-dir", t.TempDir()}, func(k string) string {
		return map[string]string{"KASSA_BODY_LIMIT": "lots"}[k]
	}, nil, discard{})
	if err == nil {
		t.Fatal("edge started with KASSA_BODY_LIMIT=lots")
	}
}

type discard struct{}

func (discard) Write(p []byte) (int, error) { return len(p), nil }
