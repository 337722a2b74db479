package hubnode

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"

	"kassa.dev/shared/demo"
	"kassa.dev/shared/node/nodetest"
	"kassa.dev/shared/pgtest"
)

// TestADumpRestoredIntoAYoungerClusterIsRefusedWithWhatToDo
// (docs/postgres.md, "Backups and restores on PostgreSQL"): the hub's log is keyed by
// PostgreSQL transaction ids; a dump loaded into a cluster that has not
// reached them would collide with the cluster's next transactions. The
// restore says so and how to fix it instead of leaving a hub that fails
// on its first writes.
func TestADumpRestoredIntoAYoungerClusterIsRefusedWithWhatToDo(t *testing.T) {
	old := pgtest.Start(t)
	burnTransactions(t, old.DSN, 2000) // an older cluster: its ids well past a new one's
	p := nodetest.Start(t, Run, nil, "--demo", "--http-addr", "127.0.0.1:0", "--data-dir", t.TempDir(), "--leaf-port", "-1", "--store", old.DSN)
	tok := p.Login(t, "owner@demo.test", demo.Password)
	if st := p.Call(t, "POST", "/api/v1/customers", tok, map[string]any{"first_name": "Before", "email": "before@example.com"}, nil); st != 201 {
		t.Fatalf("create customer: %d", st)
	}
	p.Stop(t)
	dump := filepath.Join(t.TempDir(), "hub.dump")
	var out strings.Builder
	if err := Commands["backup"](t.Context(), []string{"--store", old.DSN, "--out", dump}, noEnv, &out); err != nil {
		t.Fatal(err)
	}
	young := pgtest.Start(t)
	into := strings.Replace(young.DSN, "/postgres?", "/restored?", 1)
	err := Commands["restore"](t.Context(), []string{"--store", into, dump}, noEnv, &out)
	if err == nil || !strings.Contains(err.Error(), "pg_resetwal --epoch") {
		t.Fatalf("restore into a younger cluster: %v", err)
	}
}

// burnTransactions makes n transactions on the server at dsn.
func burnTransactions(t *testing.T, dsn string, n int) {
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	for range n {
		if _, err := conn.Exec(ctx, `SELECT pg_current_xact_id()`); err != nil {
			t.Fatal(err)
		}
	}
}

func noEnv(string) string { return "" }
