package httpapi_test

import (
	"bytes"
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"golang.org/x/oauth2"
	"golang.org/x/oauth2/clientcredentials"

	"kassa.dev/shared/kassa"
	"kassa.dev/shared/node/nodetest"
)

// The hub's OAuth 2.0 authorization server, driven with golang.org/x/oauth2
// as a partner would, and by hand where an attack needs a request no
// library sends.

type testApp struct{ ID, Secret string }

const partnerRedirect = "https://partner.example/oauth/cb"

// mustApp registers an app of o with the given scopes.
func (tn *testNode) mustApp(o *testOrg, scopes ...kassa.Scope) testApp {
	tn.t.Helper()
	r := tn.Do("POST", "/api/v1/oauth/apps", o.Owner, map[string]any{"name": "Ledger", "redirect_uris": []string{partnerRedirect, "http://127.0.0.1:9/cb"}, "scopes": scopes})
	if r.Status != 201 {
		tn.t.Fatalf("register app: %d %s", r.Status, r.Body)
	}
	d := r.Data()
	return testApp{ID: d["client_id"].(string), Secret: d["client_secret"].(string)}
}

// approve is the consent page's call: o's owner approves app for scopes.
func (tn *testNode) approve(o *testOrg, app testApp, redirect string, scopes ...kassa.Scope) string {
	tn.t.Helper()
	ctx := context.Background()
	a, err := tn.N.Services.Auth.Authenticate(ctx, o.Owner)
	if err != nil {
		tn.t.Fatal(err)
	}
	code, _, err := tn.N.Services.OAuth.Approve(kassa.WithActor(ctx, a), app.ID, redirect, scopes, kassa.CodeChallenge{})
	if err != nil {
		tn.t.Fatal(err)
	}
	return code
}

func (tn *testNode) oauthConfig(app testApp, style oauth2.AuthStyle) *oauth2.Config {
	return &oauth2.Config{ClientID: app.ID, ClientSecret: app.Secret, RedirectURL: partnerRedirect,
		Endpoint: oauth2.Endpoint{AuthURL: tn.URL + "/oauth/authorize", TokenURL: tn.URL + "/api/v1/oauth/token", AuthStyle: style}}
}

// form posts a form to an OAuth endpoint, with HTTP Basic when basic holds
// an id and a secret.
func (tn *testNode) form(path string, v url.Values, basic ...string) *resp {
	tn.t.Helper()
	req, _ := http.NewRequest("POST", tn.URL+path, strings.NewReader(v.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	if len(basic) == 2 {
		req.SetBasicAuth(url.QueryEscape(basic[0]), url.QueryEscape(basic[1]))
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		tn.t.Fatal(err)
	}
	defer res.Body.Close()
	var b bytes.Buffer
	b.ReadFrom(res.Body)
	return &resp{Status: res.StatusCode, Header: res.Header, Body: b.Bytes()}
}

// oauthError returns the RFC 6749 error code of a failed exchange.
func oauthError(t testing.TB, err error) string {
	t.Helper()
	var re *oauth2.RetrieveError
	if !errors.As(err, &re) {
		t.Fatalf("want an OAuth error answer, got %v", err)
	}
	return re.ErrorCode
}

func mustOAuthError(t testing.TB, r *resp, status int, code string) {
	t.Helper()
	if r.Status != status || r.JSON()["error"] != code || r.JSON()["error_description"] == "" {
		t.Fatalf("%d %s, want %d %s", r.Status, r.Body, status, code)
	}
	if r.Header.Get("Cache-Control") != "no-store" {
		t.Fatalf("OAuth error without Cache-Control: no-store: %v", r.Header)
	}
}

func TestOAuthClientCredentialsWithStandardClient(t *testing.T) {
	tn := MustStartNode(t, kassa.NodeHub, nil)
	o := tn.MustOrg("Partner Org")
	app := tn.mustApp(o, kassa.ScopeCatalogRead, kassa.ScopeOrdersRead)
	ctx := context.Background()

	cc := &clientcredentials.Config{ClientID: app.ID, ClientSecret: app.Secret, TokenURL: tn.URL + "/api/v1/oauth/token"}
	tok, err := cc.Token(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if !kassa.IsOpaqueToken(tok.AccessToken) || tok.RefreshToken != "" || tok.TokenType != "Bearer" || tok.Extra("expires_in") != float64(900) ||
		tok.Extra("scope") != "catalog:read orders:read" {
		t.Fatalf("token %+v scope %v: want a 64-hex Bearer token for 900 s, no refresh token, the app's scopes", tok, tok.Extra("scope"))
	}
	// A business GET with the token through the library's client.
	res, err := cc.Client(ctx).Get(tn.URL + "/api/v1/catalog/products")
	if err != nil || res.StatusCode != 200 {
		t.Fatalf("GET products with a client_credentials token: %v %v", res.Status, err)
	}
	res.Body.Close()
	p := mustProblem(t, tn.Do("POST", "/api/v1/catalog/products", tok.AccessToken, map[string]any{"name": "X", "sku": "X-1", "base_price": 1}), 403, "forbidden")
	if !strings.Contains(p["detail"].(string), "catalog:write") {
		t.Errorf("403 does not name the scope: %v", p["detail"])
	}
	// Narrowed on request; a scope the app did not register is refused.
	cc.Scopes = []string{"catalog:read"}
	narrow, err := cc.Token(ctx)
	if err != nil || narrow.Extra("scope") != "catalog:read" {
		t.Fatalf("narrowed token: %v %v", narrow, err)
	}
	mustProblem(t, tn.Do("GET", "/api/v1/orders", narrow.AccessToken, nil), 403, "forbidden")
	cc.Scopes = []string{"catalog:read", "catalog:write"}
	if _, err := cc.Token(ctx); oauthError(t, err) != kassa.OAuthInvalidScope {
		t.Errorf("escalation to an unregistered scope: %v", err)
	}
	// The token acts for the app's org: another org's rows are not found.
	other := tn.MustOrg("Other Org")
	loc := tn.Do("POST", "/api/v1/locations", other.Owner, map[string]any{"name": "Elsewhere", "timezone": "UTC"})
	if loc.Status != 201 {
		t.Fatal(loc.Status, string(loc.Body))
	}
	mustProblem(t, tn.Do("GET", "/api/v1/locations/"+loc.Data()["id"].(string), tok.AccessToken, nil), 404, "not-found")
	// Expired after 900 s on the node's clock.
	tn.Clock.Advance(kassa.OAuthAccessTTL)
	mustProblem(t, tn.Do("GET", "/api/v1/catalog/products", tok.AccessToken, nil), 401, "unauthorized")
}

func TestOAuthAuthorizationCodeRefreshesAndReuseRevokesTheFamily(t *testing.T) {
	tn := MustStartNode(t, kassa.NodeHub, nil)
	dev := tn.MustOrg("Developer")
	merchant := tn.MustOrg("Merchant")
	app := tn.mustApp(dev, kassa.ScopeOrdersRead, kassa.ScopeCatalogRead, kassa.ScopeCatalogWrite)
	conf := tn.oauthConfig(app, oauth2.AuthStyleAutoDetect)
	ctx := context.Background()

	code := tn.approve(merchant, app, partnerRedirect, kassa.ScopeOrdersRead, kassa.ScopeCatalogRead)
	tok, err := conf.Exchange(ctx, code)
	if err != nil {
		t.Fatal(err)
	}
	if !kassa.IsOpaqueToken(tok.AccessToken) || !kassa.IsOpaqueToken(tok.RefreshToken) || tok.Extra("scope") != "orders:read catalog:read" {
		t.Fatalf("token %+v, scope %v", tok, tok.Extra("scope"))
	}
	me := tn.Do("GET", "/api/v1/auth/me", tok.AccessToken, nil)
	if me.Status != 200 || me.Data()["org_id"] != merchant.ID {
		t.Fatalf("the token does not act for the merchant's owner: %d %s", me.Status, me.Body)
	}
	if r := tn.Do("GET", "/api/v1/orders", tok.AccessToken, nil); r.Status != 200 {
		t.Fatalf("GET orders: %d %s", r.Status, r.Body)
	}

	// 900 s later the access token is refused; the TokenSource refreshes.
	tn.Clock.Advance(kassa.OAuthAccessTTL + time.Second)
	mustProblem(t, tn.Do("GET", "/api/v1/orders", tok.AccessToken, nil), 401, "unauthorized")
	src := conf.TokenSource(ctx, &oauth2.Token{AccessToken: tok.AccessToken, RefreshToken: tok.RefreshToken, Expiry: time.Unix(1, 0)})
	res, err := oauth2.NewClient(ctx, src).Get(tn.URL + "/api/v1/orders")
	if err != nil || res.StatusCode != 200 {
		t.Fatalf("GET with a refreshing token source: %v %v", res, err)
	}
	res.Body.Close()
	fresh, err := src.Token()
	if err != nil || fresh.RefreshToken == tok.RefreshToken || fresh.AccessToken == tok.AccessToken {
		t.Fatalf("refresh did not rotate: %v", err)
	}
	// A narrower scope may be asked on refresh, a wider one not.
	r := tn.form("/api/v1/oauth/token", url.Values{"grant_type": {"refresh_token"}, "refresh_token": {fresh.RefreshToken},
		"scope": {"orders:read catalog:write"}}, app.ID, app.Secret)
	mustOAuthError(t, r, 400, kassa.OAuthInvalidScope)

	// The rotated refresh token presented again: invalid_grant, and the
	// whole family (the fresh pair too) is revoked.
	_, err = conf.TokenSource(ctx, &oauth2.Token{RefreshToken: tok.RefreshToken, Expiry: time.Unix(1, 0)}).Token()
	if oauthError(t, err) != kassa.OAuthInvalidGrant {
		t.Fatalf("reuse: %v", err)
	}
	mustProblem(t, tn.Do("GET", "/api/v1/orders", fresh.AccessToken, nil), 401, "unauthorized")
	_, err = conf.TokenSource(ctx, &oauth2.Token{RefreshToken: fresh.RefreshToken, Expiry: time.Unix(1, 0)}).Token()
	if oauthError(t, err) != kassa.OAuthInvalidGrant {
		t.Fatalf("refresh after the family was revoked: %v", err)
	}
}

func TestOAuthCodeAttacks(t *testing.T) {
	tn := MustStartNode(t, kassa.NodeHub, nil)
	dev := tn.MustOrg("Developer")
	merchant := tn.MustOrg("Merchant")
	app := tn.mustApp(dev, kassa.ScopeOrdersRead)
	thief := tn.mustApp(dev, kassa.ScopeOrdersRead)
	ctx := context.Background()
	conf := tn.oauthConfig(app, oauth2.AuthStyleInParams)

	t.Run("another client's code", func(t *testing.T) {
		code := tn.approve(merchant, app, partnerRedirect, kassa.ScopeOrdersRead)
		if _, err := tn.oauthConfig(thief, oauth2.AuthStyleInParams).Exchange(ctx, code); oauthError(t, err) != kassa.OAuthInvalidGrant {
			t.Fatalf("thief: %v", err)
		}
		if _, err := conf.Exchange(ctx, code); err != nil {
			t.Fatalf("the code's own client after a thief tried it: %v", err)
		}
	})
	t.Run("redirect_uri differs at exchange", func(t *testing.T) {
		code := tn.approve(merchant, app, partnerRedirect, kassa.ScopeOrdersRead)
		for _, uri := range []string{"", partnerRedirect + "/", "http://127.0.0.1:9/cb"} {
			r := tn.form("/api/v1/oauth/token", url.Values{"grant_type": {"authorization_code"}, "code": {code}, "redirect_uri": {uri},
				"client_id": {app.ID}, "client_secret": {app.Secret}})
			want := kassa.OAuthInvalidGrant
			if uri == "" {
				want = kassa.OAuthInvalidRequest
			}
			mustOAuthError(t, r, 400, want)
		}
	})
	t.Run("replay revokes what the code issued", func(t *testing.T) {
		code := tn.approve(merchant, app, partnerRedirect, kassa.ScopeOrdersRead)
		tok, err := conf.Exchange(ctx, code)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := conf.Exchange(ctx, code); oauthError(t, err) != kassa.OAuthInvalidGrant {
			t.Fatalf("replay: %v", err)
		}
		mustProblem(t, tn.Do("GET", "/api/v1/orders", tok.AccessToken, nil), 401, "unauthorized")
		if _, err := conf.TokenSource(ctx, &oauth2.Token{RefreshToken: tok.RefreshToken, Expiry: time.Unix(1, 0)}).Token(); oauthError(t, err) != kassa.OAuthInvalidGrant {
			t.Fatalf("refresh after replay: %v", err)
		}
	})
	t.Run("expired after 10 minutes", func(t *testing.T) {
		code := tn.approve(merchant, app, partnerRedirect, kassa.ScopeOrdersRead)
		tn.Clock.Advance(kassa.OAuthCodeTTL)
		if _, err := conf.Exchange(ctx, code); oauthError(t, err) != kassa.OAuthInvalidGrant {
			t.Fatalf("expired code: %v", err)
		}
	})
	t.Run("garbage", func(t *testing.T) {
		for _, v := range []url.Values{
			{"grant_type": {"authorization_code"}, "code": {"nope"}, "redirect_uri": {partnerRedirect}},
			{"grant_type": {"refresh_token"}, "refresh_token": {strings.Repeat("a", 64)}},
		} {
			v.Set("client_id", app.ID)
			v.Set("client_secret", app.Secret)
			mustOAuthError(t, tn.form("/api/v1/oauth/token", v), 400, kassa.OAuthInvalidGrant)
		}
		mustOAuthError(t, tn.form("/api/v1/oauth/token", url.Values{"grant_type": {"password"}, "client_id": {app.ID}, "client_secret": {app.Secret}}),
			400, kassa.OAuthUnsupportedGrantType)
		mustOAuthError(t, tn.form("/api/v1/oauth/token", url.Values{"grant_type": {"client_credentials", "client_credentials"}, "client_id": {app.ID}, "client_secret": {app.Secret}}),
			400, kassa.OAuthInvalidRequest)
		r := tn.Do("POST", "/api/v1/oauth/token", "", strings.Repeat("x", 10<<10))
		if r.Status != 413 && r.Status != 400 {
			t.Errorf("oversize body: %d", r.Status)
		}
	})
}

func TestOAuthClientAuthentication(t *testing.T) {
	tn := MustStartNode(t, kassa.NodeHub, nil)
	o := tn.MustOrg("Partner Org")
	app := tn.mustApp(o, kassa.ScopeCatalogRead)
	grant := url.Values{"grant_type": {"client_credentials"}}

	// Basic (the library's default) and body both work; the spec's JSON too.
	for _, style := range []oauth2.AuthStyle{oauth2.AuthStyleInHeader, oauth2.AuthStyleInParams} {
		cc := &clientcredentials.Config{ClientID: app.ID, ClientSecret: app.Secret, TokenURL: tn.URL + "/api/v1/oauth/token", AuthStyle: style}
		if _, err := cc.Token(context.Background()); err != nil {
			t.Fatalf("auth style %d: %v", style, err)
		}
	}
	r := tn.Do("POST", "/api/v1/oauth/token", "", map[string]any{"grant_type": "client_credentials", "client_id": app.ID, "client_secret": app.Secret})
	if r.Status != 200 || r.Header.Get("Cache-Control") != "no-store" || !kassa.IsOpaqueToken(r.JSON()["access_token"].(string)) {
		t.Fatalf("JSON body: %d %s %v", r.Status, r.Body, r.Header)
	}
	// Both at once is invalid_request.
	both := url.Values{"grant_type": {"client_credentials"}, "client_id": {app.ID}, "client_secret": {app.Secret}}
	mustOAuthError(t, tn.form("/api/v1/oauth/token", both, app.ID, app.Secret), 400, kassa.OAuthInvalidRequest)
	// A wrong secret: 401 invalid_client, with WWW-Authenticate over Basic.
	r = tn.form("/api/v1/oauth/token", grant, app.ID, "wrong")
	mustOAuthError(t, r, 401, kassa.OAuthInvalidClient)
	if !strings.HasPrefix(r.Header.Get("WWW-Authenticate"), "Basic ") {
		t.Errorf("invalid_client over Basic without WWW-Authenticate: %v", r.Header)
	}
	body := url.Values{"grant_type": {"client_credentials"}, "client_id": {app.ID}, "client_secret": {app.Secret + "0"}}
	mustOAuthError(t, tn.form("/api/v1/oauth/token", body), 401, kassa.OAuthInvalidClient)
	unknown := url.Values{"grant_type": {"client_credentials"}, "client_id": {"0190aaaa-0000-7000-8000-000000000000"}, "client_secret": {app.Secret}}
	mustOAuthError(t, tn.form("/api/v1/oauth/token", unknown), 401, kassa.OAuthInvalidClient)
	// A rotated secret: the old one stops at once.
	rot := tn.Do("POST", "/api/v1/oauth/apps/"+app.ID+"/rotate-secret", o.Owner, nil)
	if rot.Status != 200 || rot.Data()["client_secret"] == app.Secret {
		t.Fatalf("rotate: %d %s", rot.Status, rot.Body)
	}
	mustOAuthError(t, tn.form("/api/v1/oauth/token", grant, app.ID, app.Secret), 401, kassa.OAuthInvalidClient)
	if r := tn.form("/api/v1/oauth/token", grant, app.ID, rot.Data()["client_secret"].(string)); r.Status != 200 {
		t.Fatalf("new secret: %d %s", r.Status, r.Body)
	}
}

func TestOAuthRevokeAndIntrospect(t *testing.T) {
	tn := MustStartNode(t, kassa.NodeHub, nil)
	dev := tn.MustOrg("Developer")
	merchant := tn.MustOrg("Merchant")
	app := tn.mustApp(dev, kassa.ScopeOrdersRead)
	other := tn.mustApp(dev, kassa.ScopeOrdersRead)
	conf := tn.oauthConfig(app, oauth2.AuthStyleInHeader)
	ctx := context.Background()
	tok, err := conf.Exchange(ctx, tn.approve(merchant, app, partnerRedirect, kassa.ScopeOrdersRead))
	if err != nil {
		t.Fatal(err)
	}
	introspect := func(who testApp, token string) map[string]any {
		t.Helper()
		r := tn.form("/api/v1/oauth/introspect", url.Values{"token": {token}}, who.ID, who.Secret)
		if r.Status != 200 {
			t.Fatalf("introspect: %d %s", r.Status, r.Body)
		}
		return r.JSON()
	}
	in := introspect(app, tok.AccessToken)
	if in["active"] != true || in["scope"] != "orders:read" || in["client_id"] != app.ID || in["org_id"] != merchant.ID ||
		in["token_type"] != "Bearer" || in["exp"] == nil || in["sub"] == nil {
		t.Fatalf("own token: %v", in)
	}
	// RFC 7662 2.2: token_type is RFC 6749's (Bearer); a refresh token has none.
	if in := introspect(app, tok.RefreshToken); in["active"] != true || in["token_type"] != nil || in["client_id"] != app.ID {
		t.Fatalf("own refresh token: %v", in)
	}
	if in := introspect(other, tok.AccessToken); len(in) != 1 || in["active"] != false {
		t.Fatalf("another client's token: %v", in)
	}
	// GET works too (the spec allows it); the token never reaches a log.
	q := tn.Do("GET", "/api/v1/oauth/introspect?"+url.Values{"token": {tok.AccessToken}, "client_id": {app.ID}, "client_secret": {app.Secret}}.Encode(), "", nil)
	if q.Status != 200 || q.JSON()["active"] != true {
		t.Fatalf("GET introspect: %d %s", q.Status, q.Body)
	}

	// Revoking the access token: refused at once.
	if r := tn.form("/api/v1/oauth/revoke", url.Values{"token": {tok.AccessToken}}, app.ID, app.Secret); r.Status != 200 {
		t.Fatalf("revoke: %d %s", r.Status, r.Body)
	}
	mustProblem(t, tn.Do("GET", "/api/v1/orders", tok.AccessToken, nil), 401, "unauthorized")
	if in := introspect(app, tok.AccessToken); in["active"] != false {
		t.Fatalf("revoked token introspected active: %v", in)
	}
	// Revoking a refresh token kills the access tokens derived from it.
	fresh, err := conf.TokenSource(ctx, &oauth2.Token{RefreshToken: tok.RefreshToken, Expiry: time.Unix(1, 0)}).Token()
	if err != nil {
		t.Fatal(err)
	}
	// Another client cannot revoke it (200, nothing happens).
	if r := tn.form("/api/v1/oauth/revoke", url.Values{"token": {fresh.RefreshToken}}, other.ID, other.Secret); r.Status != 200 {
		t.Fatalf("revoke by another client: %d", r.Status)
	}
	if r := tn.Do("GET", "/api/v1/orders", fresh.AccessToken, nil); r.Status != 200 {
		t.Fatalf("another client's revoke took effect: %d", r.Status)
	}
	if r := tn.form("/api/v1/oauth/revoke", url.Values{"token": {fresh.RefreshToken}, "token_type_hint": {"refresh_token"}}, app.ID, app.Secret); r.Status != 200 {
		t.Fatalf("revoke refresh: %d %s", r.Status, r.Body)
	}
	mustProblem(t, tn.Do("GET", "/api/v1/orders", fresh.AccessToken, nil), 401, "unauthorized")
	if _, err := conf.TokenSource(ctx, &oauth2.Token{RefreshToken: fresh.RefreshToken, Expiry: time.Unix(1, 0)}).Token(); oauthError(t, err) != kassa.OAuthInvalidGrant {
		t.Fatalf("refresh after its revocation: %v", err)
	}
	// Unknown and malformed tokens: 200 all the same; a bad client is not.
	for _, tk := range []string{strings.Repeat("f", 64), "not-a-token"} {
		if r := tn.form("/api/v1/oauth/revoke", url.Values{"token": {tk}}, app.ID, app.Secret); r.Status != 200 {
			t.Errorf("revoke %q: %d", tk, r.Status)
		}
	}
	mustOAuthError(t, tn.form("/api/v1/oauth/revoke", url.Values{"token": {fresh.AccessToken}}, app.ID, "wrong"), 401, kassa.OAuthInvalidClient)
}

func TestOAuthDisconnect(t *testing.T) {
	tn := MustStartNode(t, kassa.NodeHub, nil)
	dev := tn.MustOrg("Developer")
	merchant := tn.MustOrg("Merchant")
	app := tn.mustApp(dev, kassa.ScopeOrdersRead, kassa.ScopeCatalogRead)
	conf := tn.oauthConfig(app, oauth2.AuthStyleInHeader)
	ctx := context.Background()
	tok, err := conf.Exchange(ctx, tn.approve(merchant, app, partnerRedirect, kassa.ScopeOrdersRead))
	if err != nil {
		t.Fatal(err)
	}
	l := tn.Do("GET", "/api/v1/oauth/connections", merchant.Owner, nil)
	if l.Status != 200 || len(l.List()) != 1 {
		t.Fatalf("connections: %d %s", l.Status, l.Body)
	}
	c := l.List()[0].(map[string]any)
	if c["client_id"] != app.ID || c["name"] != "Ledger" || c["approved_by"] == "" {
		t.Fatalf("connection %v", c)
	}
	if l := tn.Do("GET", "/api/v1/oauth/connections", dev.Owner, nil); len(l.List()) != 0 {
		t.Fatalf("the developer's org lists the merchant's connection: %s", l.Body)
	}
	mustProblem(t, tn.Do("DELETE", "/api/v1/oauth/connections/"+app.ID, dev.Owner, nil), 404, "not-found")
	if r := tn.Do("DELETE", "/api/v1/oauth/connections/"+app.ID, merchant.Owner, nil); r.Status != 204 {
		t.Fatalf("disconnect: %d %s", r.Status, r.Body)
	}
	mustProblem(t, tn.Do("GET", "/api/v1/orders", tok.AccessToken, nil), 401, "unauthorized")
	if _, err := conf.TokenSource(ctx, &oauth2.Token{RefreshToken: tok.RefreshToken, Expiry: time.Unix(1, 0)}).Token(); oauthError(t, err) != kassa.OAuthInvalidGrant {
		t.Fatalf("refresh after disconnect: %v", err)
	}
	if l := tn.Do("GET", "/api/v1/oauth/connections", merchant.Owner, nil); len(l.List()) != 0 {
		t.Fatalf("still connected: %s", l.Body)
	}
	mustProblem(t, tn.Do("DELETE", "/api/v1/oauth/connections/"+app.ID, merchant.Owner, nil), 404, "not-found")
}

func TestOAuthAppsCRUDAndCrossOrg(t *testing.T) {
	tn := MustStartNode(t, kassa.NodeHub, nil)
	o := tn.MustOrg("Developer")
	other := tn.MustOrg("Other")
	manager := tn.MustUser(o, "manager@dev.test", kassa.RoleManager)
	body := map[string]any{"name": "Ledger", "redirect_uris": []string{partnerRedirect}, "scopes": []string{"orders:read", "partners:write"}}

	mustProblem(t, tn.Do("POST", "/api/v1/oauth/apps", manager, body), 403, "forbidden")
	bad := mustProblem(t, tn.Do("POST", "/api/v1/oauth/apps", o.Owner, map[string]any{"name": "x", "redirect_uris": []string{"http://evil.example/cb"}, "scopes": []string{"orders:read"}}), 422, "validation")
	if !strings.Contains(fmt.Sprint(bad["errors"]), "redirect_uris") {
		t.Errorf("validation problem does not name redirect_uris: %v", bad)
	}
	cr := tn.Do("POST", "/api/v1/oauth/apps", o.Owner, body, "Idempotency-Key", "app-1")
	if cr.Status != 201 || cr.Header.Get("Location") == "" || !kassa.IsOpaqueToken(cr.Data()["client_secret"].(string)) {
		t.Fatalf("create: %d %s", cr.Status, cr.Body)
	}
	id := cr.Data()["client_id"].(string)
	// The secret is shown once: never by a read, never replayed.
	// (A retry with the key is 409 naming the app: TestOAuthAppRetryWithTheSameKeyNeverMakesASecondApp.)
	if again := tn.Do("POST", "/api/v1/oauth/apps", o.Owner, body, "Idempotency-Key", "app-1"); again.Status != 409 ||
		strings.Contains(string(again.Body), cr.Data()["client_secret"].(string)) {
		t.Fatalf("the create answer with its secret was replayed: %s", again.Body)
	}
	if r := tn.Do("POST", "/api/v1/oauth/apps", o.Owner, body, "Idempotency-Key", "app-2"); r.Status != 201 {
		t.Fatalf("second app: %d %s", r.Status, r.Body)
	}
	got := tn.Do("GET", "/api/v1/oauth/apps/"+id, o.Owner, nil)
	if got.Status != 200 || got.Data()["client_secret"] != nil || got.Data()["name"] != "Ledger" {
		t.Fatalf("read: %d %s", got.Status, got.Body)
	}
	if l := tn.Do("GET", "/api/v1/oauth/apps?limit=1", o.Owner, nil); l.Status != 200 || len(l.List()) != 1 || l.JSON()["has_more"] != true {
		t.Fatalf("list: %d %s", l.Status, l.Body)
	}
	up := tn.Do("PATCH", "/api/v1/oauth/apps/"+id, o.Owner, map[string]any{"name": "Ledger 2", "redirect_uris": []string{"http://localhost:3000/cb"}})
	if up.Status != 200 || up.Data()["name"] != "Ledger 2" || up.Data()["redirect_uris"].([]any)[0] != "http://localhost:3000/cb" {
		t.Fatalf("update: %d %s", up.Status, up.Body)
	}
	mustProblem(t, tn.Do("PATCH", "/api/v1/oauth/apps/"+id, o.Owner, map[string]any{"scopes": []string{"root"}}), 422, "validation")
	// Another org's owner sees none of it.
	for _, r := range []*resp{
		tn.Do("GET", "/api/v1/oauth/apps/"+id, other.Owner, nil),
		tn.Do("PATCH", "/api/v1/oauth/apps/"+id, other.Owner, map[string]any{"name": "mine"}),
		tn.Do("DELETE", "/api/v1/oauth/apps/"+id, other.Owner, nil),
		tn.Do("POST", "/api/v1/oauth/apps/"+id+"/rotate-secret", other.Owner, nil),
	} {
		mustProblem(t, r, 404, "not-found")
	}
	if l := tn.Do("GET", "/api/v1/oauth/apps", other.Owner, nil); len(l.List()) != 0 {
		t.Fatalf("another org lists the app: %s", l.Body)
	}
	// An app's token cannot manage apps.
	tok := tn.form("/api/v1/oauth/token", url.Values{"grant_type": {"client_credentials"}}, id, cr.Data()["client_secret"].(string)).JSON()["access_token"].(string)
	mustProblem(t, tn.Do("GET", "/api/v1/oauth/apps", tok, nil), 403, "forbidden")
	// Delete: 204, its tokens stop, then 404.
	if r := tn.Do("DELETE", "/api/v1/oauth/apps/"+id, o.Owner, nil); r.Status != 204 {
		t.Fatalf("delete: %d %s", r.Status, r.Body)
	}
	mustProblem(t, tn.Do("GET", "/api/v1/auth/me", tok, nil), 401, "unauthorized")
	mustProblem(t, tn.Do("GET", "/api/v1/oauth/apps/"+id, o.Owner, nil), 404, "not-found")
}

func TestOAuthMetadataAndHubOnly(t *testing.T) {
	tn := MustStartNode(t, kassa.NodeHub, nil)
	r := tn.Do("GET", "/.well-known/oauth-authorization-server", "", nil)
	m := r.JSON()
	if r.Status != 200 || m["issuer"] != tn.URL || m["token_endpoint"] != tn.URL+"/api/v1/oauth/token" ||
		m["authorization_endpoint"] != tn.URL+"/oauth/authorize" || m["revocation_endpoint"] != tn.URL+"/api/v1/oauth/revoke" ||
		m["introspection_endpoint"] != tn.URL+"/api/v1/oauth/introspect" || fmt.Sprint(m["code_challenge_methods_supported"]) != "[S256]" {
		t.Fatalf("metadata: %d %s", r.Status, r.Body)
	}
	if fmt.Sprint(m["response_types_supported"]) != "[code]" || fmt.Sprint(m["token_endpoint_auth_methods_supported"]) != "[client_secret_basic client_secret_post none]" ||
		!strings.Contains(fmt.Sprint(m["scopes_supported"]), "partners:write") || !strings.Contains(fmt.Sprint(m["grant_types_supported"]), "client_credentials") {
		t.Fatalf("metadata lists: %s", r.Body)
	}
	// The edge is no authorization server: no routes; it checks only the
	// hub's tokens it has synced, so an unknown 64-hex token is refused.
	edge := MustStartNode(t, kassa.NodeEdge, nil)
	o := edge.MustOrg("Store")
	if r := edge.Do("POST", "/api/v1/oauth/token", "", "grant_type=client_credentials", "Content-Type", "application/x-www-form-urlencoded"); r.Status != 404 {
		t.Fatalf("edge token endpoint: %d", r.Status)
	}
	mustProblem(t, edge.Do("GET", "/api/v1/oauth/apps", o.Owner, nil), 404, "not-found")
	mustProblem(t, edge.Do("GET", "/api/v1/orders", strings.Repeat("a", 64), nil), 401, "unauthorized")
}

func TestOAuthSecretsNeverLogged(t *testing.T) {
	var logs nodetest.SyncBuffer
	tn := MustStartNodeLog(t, kassa.NodeHub, nil, slog.New(slog.NewJSONHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug})))
	dev := tn.MustOrg("Developer")
	merchant := tn.MustOrg("Merchant")
	app := tn.mustApp(dev, kassa.ScopeOrdersRead)
	conf := tn.oauthConfig(app, oauth2.AuthStyleInParams)
	ctx := context.Background()
	code := tn.approve(merchant, app, partnerRedirect, kassa.ScopeOrdersRead)
	tok, err := conf.Exchange(ctx, code)
	if err != nil {
		t.Fatal(err)
	}
	conf.Exchange(ctx, code) // a replay, refused
	tn.Do("GET", "/api/v1/orders", tok.AccessToken, nil)
	tn.Do("GET", "/api/v1/oauth/introspect?"+url.Values{"token": {tok.AccessToken}, "client_id": {app.ID}, "client_secret": {app.Secret}}.Encode(), "", nil)
	tn.form("/api/v1/oauth/revoke", url.Values{"token": {tok.RefreshToken}}, app.ID, app.Secret)
	tn.form("/api/v1/oauth/token", url.Values{"grant_type": {"client_credentials"}}, app.ID, "wrong-"+app.Secret)
	basic := base64.StdEncoding.EncodeToString([]byte(app.ID + ":" + app.Secret))
	out := logs.String()
	if !strings.Contains(out, "/api/v1/oauth/token") {
		t.Fatalf("the access log did not record the token endpoint:\n%s", out)
	}
	for name, secret := range map[string]string{"client secret": app.Secret, "code": code, "access token": tok.AccessToken,
		"refresh token": tok.RefreshToken, "basic credentials": basic} {
		if strings.Contains(out, secret) {
			t.Errorf("the node's log holds the %s", name)
		}
	}
}
