package sqlite

import (
	"context"
	"testing"
	"time"

	"kassa.dev/shared/kassa"
)

// TestOAuthSweepDeletesOnlyWhatCannotBeUsed: after the sweep, expired
// access tokens, old codes and spent client_credentials families are
// gone from the hub's tables, while a live token still authenticates, a
// family's current refresh token still refreshes, and a refresh token
// rotated within the retention still revokes its family when replayed.
func TestOAuthSweepDeletesOnlyWhatCannotBeUsed(t *testing.T) {
	hub := mustNode(t)
	w := seed(t, hub)
	oauth := NewOAuthService(hub.db)
	now := time.Date(2026, 11, 1, 9, 0, 0, 0, time.UTC)
	hub.db.Now = func() time.Time { return now }
	ctx := context.Background()
	app, err := oauth.CreateApp(w.ctx, &kassa.OAuthAppCreate{Name: "Ledger", RedirectURIs: []string{"https://p.example/cb"},
		Scopes: []kassa.Scope{kassa.ScopeCatalogRead}})
	if err != nil {
		t.Fatal(err)
	}
	client := func(in kassa.TokenRequest) *kassa.TokenResponse {
		t.Helper()
		in.ClientID, in.ClientSecret = app.ClientID, app.ClientSecret
		res, err := oauth.Token(ctx, &in)
		if err != nil {
			t.Fatalf("%s: %v", in.GrantType, err)
		}
		return res
	}
	count := func(table string) int {
		t.Helper()
		var n int
		if err := hub.db.Reader.QueryRow(`SELECT count(*) FROM ` + table).Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n
	}
	// A client_credentials token and an authorization_code family that
	// refreshed once; a code never exchanged.
	client(kassa.TokenRequest{GrantType: kassa.GrantClientCredentials})
	code, _, err := oauth.Approve(w.ctx, app.ClientID, "https://p.example/cb", []kassa.Scope{kassa.ScopeCatalogRead}, kassa.CodeChallenge{})
	if err != nil {
		t.Fatal(err)
	}
	first := client(kassa.TokenRequest{GrantType: kassa.GrantAuthorizationCode, Code: code, RedirectURI: "https://p.example/cb"})
	second := client(kassa.TokenRequest{GrantType: kassa.GrantRefreshToken, RefreshToken: first.RefreshToken})
	if _, _, err := oauth.Approve(w.ctx, app.ClientID, "https://p.example/cb", []kassa.Scope{kassa.ScopeCatalogRead}, kassa.CodeChallenge{}); err != nil {
		t.Fatal(err)
	}

	now = now.Add(25 * time.Hour)
	live := client(kassa.TokenRequest{GrantType: kassa.GrantClientCredentials})
	n, err := oauth.Sweep(ctx)
	if err != nil {
		t.Fatal(err)
	}
	// Gone: both codes, three expired access tokens with their copies, the
	// spent client_credentials family.
	if n != 2+3+3+1 {
		t.Errorf("swept %d rows, want 9", n)
	}
	if c := count("oauth_codes"); c != 0 {
		t.Errorf("%d codes left", c)
	}
	if a, cp := count("oauth_tokens WHERE kind = 'access'"), count("oauth_access"); a != 1 || cp != 1 {
		t.Errorf("access tokens left %d, copies %d; want only the live one", a, cp)
	}
	if _, err := oauth.Authenticate(ctx, live.AccessToken); err != nil {
		t.Errorf("the live token after the sweep: %v", err)
	}
	third := client(kassa.TokenRequest{GrantType: kassa.GrantRefreshToken, RefreshToken: second.RefreshToken})

	// The rotated first refresh token is kept 30 days: replayed, it still
	// revokes the family, the newest pair included.
	in := kassa.TokenRequest{GrantType: kassa.GrantRefreshToken, RefreshToken: first.RefreshToken, ClientID: app.ClientID, ClientSecret: app.ClientSecret}
	if _, err := oauth.Token(ctx, &in); err == nil {
		t.Fatal("a reused refresh token was accepted")
	}
	if _, err := oauth.Authenticate(ctx, third.AccessToken); err == nil {
		t.Error("the family survived the replay of a rotated refresh token")
	}
	// 31 days on, the revoked family is deleted whole.
	now = now.Add(31 * 24 * time.Hour)
	if _, err := oauth.Sweep(ctx); err != nil {
		t.Fatal(err)
	}
	if g, tk := count("oauth_grants"), count("oauth_tokens"); g != 0 || tk != 0 {
		t.Errorf("after 31 days: %d grants, %d tokens left", g, tk)
	}
}
