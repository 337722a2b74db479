package pg_test

import (
	"context"
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
