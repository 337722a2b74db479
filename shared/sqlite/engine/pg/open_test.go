package pg_test

import (
	"context"
	"encoding/json"
	"testing"

	"kassa.dev/shared/pgtest"
	"kassa.dev/shared/sqlite"
	"kassa.dev/shared/sqlite/engine/pg"
)

// TestTheStoreOpensOnPostgreSQLAndKeepsItsNode: sqlite.Open on a
// postgres:// name (the hub's --store) migrates the database (the
// backend's and the nouns' migrations) and opens the store on it; opened
// again, it is the same node.
func TestTheStoreOpensOnPostgreSQLAndKeepsItsNode(t *testing.T) {
	pg.Register(sqlite.PostgresMigrations)
	ctx := context.Background()
	dsn := pgtest.Start(t).DSN
	db, err := sqlite.Open(ctx, dsn, sqlite.Options{Hub: true})
	if err != nil {
		t.Fatal(err)
	}
	node := db.NodeID
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	db, err = sqlite.Open(ctx, dsn, sqlite.Options{Hub: true})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if node == "" || db.NodeID != node {
		t.Fatalf("reopened on PostgreSQL the store is node %q, was %q", db.NodeID, node)
	}
}

// TestAWritersPlanMadeOnAYoungTableFindsRowsByKeyAsItGrows: a statement
// the writer prepared while a table was young (a new hub, an org's first
// catch-up: 300 rows, analyzed) and runs by its generic plan (from its
// sixth call) still finds its rows by key once the table holds thousands,
// before the next ANALYZE has looked at it (autovacuum is off for the
// table here, as it is in effect for the first seconds of a burst). With
// the planner's defaults the plan made on the young table scanned the
// table whole at every call (docs/postgres.md, "Plans made on young
// tables").
func TestAWritersPlanMadeOnAYoungTableFindsRowsByKeyAsItGrows(t *testing.T) {
	db := openHubs(t, 1)[0]
	ctx := context.Background()
	c, err := db.Writer.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	for _, q := range []string{
		`ALTER TABLE applied_changes SET (autovacuum_enabled = false)`,
		`INSERT INTO applied_changes (id, origin, applied_at) SELECT 'y' || i, 'edge', '2026-11-28T10:00:00.000Z' FROM generate_series(1, 300) i`,
		`ANALYZE applied_changes`,
		`PREPARE by_id(text, text) AS SELECT id FROM applied_changes WHERE id IN ($1, $2)`,
		`EXECUTE by_id('a', 'b')`, `EXECUTE by_id('a', 'b')`, `EXECUTE by_id('a', 'b')`,
		`EXECUTE by_id('a', 'b')`, `EXECUTE by_id('a', 'b')`, `EXECUTE by_id('a', 'b')`,
		`INSERT INTO applied_changes (id, origin, applied_at) SELECT 'c' || i, 'edge', '2026-11-28T10:00:00.000Z' FROM generate_series(1, 5000) i`,
	} {
		if _, err := c.ExecContext(ctx, q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	var plan string
	if err := c.QueryRowContext(ctx, `EXPLAIN (ANALYZE, FORMAT JSON) EXECUTE by_id('c17', 'c4000')`).Scan(&plan); err != nil {
		t.Fatal(err)
	}
	var nodes []struct{ Plan planNode }
	if err := json.Unmarshal([]byte(plan), &nodes); err != nil || len(nodes) != 1 {
		t.Fatalf("the plan: %v\n%s", err, plan)
	}
	if n := nodes[0].Plan.rowsOf("applied_changes"); n > 2 {
		t.Fatalf("finding 2 of 5,300 rows by key read %.0f:\n%s", n, plan)
	}
}
