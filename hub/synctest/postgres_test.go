package synctest

import (
	"testing"

	"kassa.dev/shared/pgtest"
)

// TestAHubOnPostgreSQLRoundTripsWithAnEdge: a hub started with --store on
// a throwaway PostgreSQL (the demo seeded there) enrols an edge, which
// pulls the demo from the hub's log; a sale at the edge reaches the hub;
// a product made at the hub reaches the edge and is sold there.
func TestAHubOnPostgreSQLRoundTripsWithAnEdge(t *testing.T) {
	e := startPair(t, "--store", pgtest.Start(t).DSN)
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("the hub's output:\n%s\nthe edge's:\n%s\nits status: %v", e.hub.Output(), e.edge.Output(), e.status(t, e.edge, e.edgeTok))
		}
	})
	e.roundTrip(t)
}
