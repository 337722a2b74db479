package clienttest

import (
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"kassa.dev/edge/edgenode"
	"kassa.dev/hub/hubnode"
	"kassa.dev/shared/node/nodetest"
	"kassa.dev/shared/pgtest"
)

// TestMain runs the package's tests and then stops its throwaway
// PostgreSQL, if KASSA_TEST_STORE=postgres started one (pgtest.HubArgs).
func TestMain(m *testing.M) { os.Exit(pgtest.Main(m)) }

var update = flag.Bool("update", false, "rewrite openapi/*.json from running nodes and regenerate the client")

// startHub runs the hub binary's main with the demo org, on free ports.
func startHub(t *testing.T) *nodetest.Proc {
	t.Helper()
	return nodetest.Start(t, hubnode.Run, nil, append([]string{"--http-addr", "127.0.0.1:0", "--leaf-port", "-1",
		"--data-dir", t.TempDir(), "--demo"}, pgtest.HubArgs(t)...)...)
}

// TestOpenAPISnapshotsAreCurrent: openapi/hub.json and openapi/edge.json,
// which make openapi-lint lints and the client is generated from, are
// exactly what a hub and an edge serve. After a change to the API, run
// make openapi-client (go test -run Snapshot -update, then go generate).
func TestOpenAPISnapshotsAreCurrent(t *testing.T) {
	for _, n := range []struct {
		name string
		proc func(t *testing.T) *nodetest.Proc
	}{
		{"hub", startHub},
		{"edge", func(t *testing.T) *nodetest.Proc {
			return nodetest.Start(t, edgenode.Run, nil, "--http-addr", "127.0.0.1:0", "--data-dir", t.TempDir(), "--demo")
		}},
	} {
		t.Run(n.name, func(t *testing.T) {
			var doc json.RawMessage
			if st := n.proc(t).Call(t, "GET", "/api/v1/openapi.json", "", nil, &doc); st != 200 {
				t.Fatalf("openapi.json: %d", st)
			}
			var pretty bytes.Buffer
			if err := json.Indent(&pretty, doc, "", "  "); err != nil {
				t.Fatal(err)
			}
			pretty.WriteByte('\n')
			file := filepath.Join("openapi", n.name+".json")
			if *update {
				if err := os.WriteFile(file, pretty.Bytes(), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			old, err := os.ReadFile(file)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(old, pretty.Bytes()) {
				t.Errorf("%s is not the document a %s serves; run make openapi-client", file, n.name)
			}
		})
	}
}

// TestGeneratedClientIsCurrent: kassaclient/client.gen.go is what
// oapi-codegen makes of openapi/hub.json.
func TestGeneratedClientIsCurrent(t *testing.T) {
	if *update {
		t.Skip("-update rewrites the snapshots; go generate ./kassaclient then")
	}
	// go tool -n builds oapi-codegen (the module's tool directive) and
	// names the binary; it runs in a temp dir, where the config's output
	// lands.
	bin, err := exec.Command("go", "tool", "-n", "oapi-codegen").Output()
	if err != nil {
		t.Fatalf("go tool -n oapi-codegen: %v", err)
	}
	tmp := t.TempDir()
	abs := func(p string) string { a, _ := filepath.Abs(p); return a }
	cmd := exec.Command(strings.TrimSpace(string(bin)), "-config", abs("kassaclient/oapi-codegen.yaml"), abs("openapi/hub.json"))
	cmd.Dir = tmp
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("oapi-codegen: %v\n%s", err, b)
	}
	out := filepath.Join(tmp, "client.gen.go")
	want, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	have, err := os.ReadFile(filepath.Join("kassaclient", "client.gen.go"))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(have, want) {
		t.Errorf("kassaclient/client.gen.go is stale; run make openapi-client")
	}
}
