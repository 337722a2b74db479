package synctest

import (
	"testing"
	"time"

	"kassa.dev/sync/wait"
)

// TestAnEdgeAcceptsHubOAuthTokensOfflineAndRefusesRevokedOnes: an in-store
// partner app keeps working while the internet is down. The hub replicates
// the hashes of its org's access tokens to the org's edges; the edge
// accepts one with the hub stopped, and refuses one once its revocation
// at the hub has synced.
func TestAnEdgeAcceptsHubOAuthTokensOfflineAndRefusesRevokedOnes(t *testing.T) {
	e := MustStartPair(t)
	var app oneResp
	if st := e.hub.Call(t, "POST", "/api/v1/oauth/apps", e.hubTok, map[string]any{"name": "Shelf labels",
		"redirect_uris": []string{"https://shelf.example/cb"}, "scopes": []string{"catalog:read"}}, &app); st != 201 {
		t.Fatalf("register app at the hub: %d %v", st, app)
	}
	client := map[string]any{"client_id": app.Data["client_id"], "client_secret": app.Data["client_secret"]}
	token := func() string {
		t.Helper()
		var tok map[string]any
		body := map[string]any{"grant_type": "client_credentials"}
		for k, v := range client {
			body[k] = v
		}
		if st := e.hub.Call(t, "POST", "/api/v1/oauth/token", "", body, &tok); st != 200 {
			t.Fatalf("token at the hub: %d %v", st, tok)
		}
		return tok["access_token"].(string)
	}
	get := func(tok string) int { return e.edge.Call(t, "GET", "/api/v1/catalog/products?limit=1", tok, nil, nil) }
	kept, revoked := token(), token()
	for _, tok := range []string{kept, revoked} {
		wait.For(t, 20*time.Second, "the hub's access token accepted at the edge", func() bool { return get(tok) == 200 })
	}
	revoke := map[string]any{"token": revoked}
	for k, v := range client {
		revoke[k] = v
	}
	if st := e.hub.Call(t, "POST", "/api/v1/oauth/revoke", "", revoke, nil); st != 200 {
		t.Fatalf("revoke at the hub: %d", st)
	}
	if st := e.hub.Call(t, "GET", "/api/v1/catalog/products?limit=1", revoked, nil, nil); st != 401 {
		t.Fatalf("the hub accepts a token it revoked: %d", st)
	}
	wait.For(t, 20*time.Second, "the revocation synced to the edge", func() bool { return get(revoked) == 401 })

	// The hub goes away: the edge still answers the partner's kept token.
	e.proxy.cut()
	e.hub.Stop(t)
	wait.For(t, 10*time.Second, "the edge to see the link down", func() bool { return e.status(t, e.edge, e.edgeMgr)["connected"] == false })
	if st := get(kept); st != 200 {
		t.Fatalf("the edge refused a live hub token with the hub down: %d", st)
	}
	if st := get(revoked); st != 401 {
		t.Fatalf("the edge accepted a revoked token with the hub down: %d", st)
	}
}
