package main

import (
	"os/exec"
	"slices"
	"strings"
	"testing"
)

// hubOnly are the packages only the hub links: its own routes (OAuth
// server, consent page, webhooks, automations, the ops page and feed),
// its webhook sender and automation engine, its two pages, and what only
// those use (outbound HTTP to partners, the cron parser).
var hubOnly = []string{
	"kassa.dev/shared/hubapi",
	"kassa.dev/shared/node/hubonly",
	"kassa.dev/web/hubpages",
	"kassa.dev/shared/egress",
	"github.com/robfig/cron/v3",
	// The hub's PostgreSQL backend and its driver (--store postgres://…).
	"kassa.dev/shared/sqlite/engine/pg",
	"github.com/jackc/pgx/v5",
	"github.com/jackc/pgx/v5/stdlib",
}

// deps lists every package the main package in dir builds on.
func deps(t *testing.T, dir string) []string {
	t.Helper()
	goTool, err := exec.LookPath("go")
	if err != nil {
		t.Fatalf("the go command is needed to list the imports: %v", err)
	}
	cmd := exec.Command(goTool, "list", "-deps", "-f", "{{.ImportPath}}", ".")
	cmd.Dir = dir
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("go list in %s: %v\n%s", dir, err, out)
	}
	ds := strings.Fields(string(out))
	if len(ds) < 50 {
		t.Fatalf("go list found only %d packages in %s; the listing is broken", len(ds), dir)
	}
	return ds
}

// TestTheEdgeBinaryLinksNoHubOnlyCode: the hub's own code never ships in
// the edge binary. The hub's main adds it as a node.Part; the edge's never
// imports it (README, "Where things are"). The hub's listing must hold
// each package, so a renamed one fails here instead of passing unseen.
func TestTheEdgeBinaryLinksNoHubOnlyCode(t *testing.T) {
	edge, hub := deps(t, "."), deps(t, "../hub")
	for _, p := range hubOnly {
		if slices.Contains(edge, p) {
			t.Errorf("the edge binary imports %s, which only the hub needs", p)
		}
		if !slices.Contains(hub, p) {
			t.Errorf("the hub binary no longer imports %s: update hubOnly", p)
		}
	}
}
