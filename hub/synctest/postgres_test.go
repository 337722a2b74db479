package synctest

import (
	"testing"

	"kassa.dev/hub/hubnode"
	"kassa.dev/shared/demo"
	"kassa.dev/shared/node/nodetest"
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

// startHubsOnOneDatabase starts n hubs, each with its own data directory
// and the same throwaway PostgreSQL, one after the other (the first seeds
// the demo, the others find it), with args added to each.
func startHubsOnOneDatabase(t *testing.T, n int, args ...string) []*nodetest.Proc {
	t.Helper()
	dsn := pgtest.Start(t).DSN
	hubs := make([]*nodetest.Proc, n)
	for i := range hubs {
		hubs[i] = nodetest.Start(t, hubnode.Run, nil, append([]string{"--demo", "--http-addr", "127.0.0.1:0",
			"--data-dir", t.TempDir(), "--leaf-port", "-1", "--store", dsn}, args...)...)
	}
	return hubs
}

// TestTwoHubsOnOnePostgreSQLCountAnOrgsRequestsAndFailedLoginsOnce: two
// hubs behind a load balancer share one database. An org's requests split
// across them meet the org's limit (a burst of 10, refilled at one a
// minute) once, not twice; wrong passwords split across them lock the
// account after the free failures, at both hubs.
func TestTwoHubsOnOnePostgreSQLCountAnOrgsRequestsAndFailedLoginsOnce(t *testing.T) {
	hubs := startHubsOnOneDatabase(t, 2, "--rate-per-minute", "1", "--rate-burst", "10")
	tok := hubs[0].Login(t, "owner@demo.test", demo.Password)
	allowed, limited := 0, 0
	for i := range 20 {
		switch st := hubs[i%2].Call(t, "GET", "/api/v1/locations", tok, nil, nil); st {
		case 200:
			allowed++
		case 429:
			limited++
		default:
			t.Fatalf("request %d at hub %d: status %d", i, i%2, st)
		}
	}
	// One token may come back while the requests run (one a minute).
	if allowed < 10 || allowed > 11 {
		t.Fatalf("the org's limit is 10 at once across the hubs: %d requests allowed, %d limited", allowed, limited)
	}

	email := "manager@demo.test"
	for i := range 6 {
		st := hubs[i%2].Call(t, "POST", "/api/v1/auth/login", "", map[string]string{"email": email, "password": "wrong-" + demo.Password}, nil)
		if st != 401 && st != 429 {
			t.Fatalf("wrong password %d at hub %d: status %d", i, i%2, st)
		}
	}
	for i, h := range hubs {
		if st := h.Call(t, "POST", "/api/v1/auth/login", "", map[string]string{"email": email, "password": demo.Password}, nil); st != 429 {
			t.Fatalf("after 6 wrong passwords split across the hubs, the right one at hub %d: status %d, want 429 (locked)", i, st)
		}
	}
}
