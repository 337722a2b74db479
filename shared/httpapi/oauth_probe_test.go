package httpapi_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"net/url"
	"strconv"
	"strings"
	"testing"
	"time"

	"golang.org/x/oauth2"

	"kassa.dev/shared/httpapi"
	"kassa.dev/shared/kassa"
	"kassa.dev/shared/node"
)

// The probe's findings on the authorization server (issue 21): PKCE,
// metadata from a configured URL, the token endpoint's throttle, and
// Idempotency-Key on the secret-bearing app registration.

func TestOAuthAppRetryWithTheSameKeyNeverMakesASecondApp(t *testing.T) {
	tn := MustStartNode(t, kassa.NodeHub, nil)
	o := tn.MustOrg("Developer")
	body := map[string]any{"name": "Ledger", "redirect_uris": []string{partnerRedirect}, "scopes": []string{"orders:read"}}
	first := tn.Do("POST", "/api/v1/oauth/apps", o.Owner, body, "Idempotency-Key", "app-1")
	if first.Status != 201 || first.Data()["client_secret"] == nil {
		t.Fatalf("first: %d %s", first.Status, first.Body)
	}
	id := first.Data()["client_id"].(string)
	// The answer was lost; the partner retries with the same key.
	for range 2 {
		again := tn.Do("POST", "/api/v1/oauth/apps", o.Owner, body, "Idempotency-Key", "app-1")
		p := mustProblem(t, again, 409, "conflict")
		if !strings.Contains(p["detail"].(string), "/api/v1/oauth/apps/"+id) || strings.Contains(string(again.Body), "client_secret") {
			t.Fatalf("retry: %d %v %s", again.Status, again.Header, again.Body)
		}
	}
	if l := tn.Do("GET", "/api/v1/oauth/apps", o.Owner, nil).List(); len(l) != 1 {
		t.Fatalf("apps after retries: %d, want 1", len(l))
	}
	// The same key with another body is 422, as everywhere; a new key registers.
	body["name"] = "Other"
	mustProblem(t, tn.Do("POST", "/api/v1/oauth/apps", o.Owner, body, "Idempotency-Key", "app-1"), 422, "validation")
	if r := tn.Do("POST", "/api/v1/oauth/apps", o.Owner, body, "Idempotency-Key", "app-2"); r.Status != 201 {
		t.Fatalf("new key: %d %s", r.Status, r.Body)
	}
	// A retried rotation rotates once: the secret of the first answer stays valid.
	rot := tn.Do("POST", "/api/v1/oauth/apps/"+id+"/rotate-secret", o.Owner, nil, "Idempotency-Key", "rot-1")
	if rot.Status != 200 {
		t.Fatalf("rotate: %d %s", rot.Status, rot.Body)
	}
	mustProblem(t, tn.Do("POST", "/api/v1/oauth/apps/"+id+"/rotate-secret", o.Owner, nil, "Idempotency-Key", "rot-1"), 409, "conflict")
	secret := rot.Data()["client_secret"].(string)
	if r := tn.form("/api/v1/oauth/token", map[string][]string{"grant_type": {"client_credentials"}}, id, secret); r.Status != 200 {
		t.Fatalf("the first rotation's secret after a retry: %d %s", r.Status, r.Body)
	}
}

// pkceCode runs the consent page for q as the org's owner and returns the
// code it redirects with.
func (h *consentHub) pkceCode(t *testing.T, q url.Values) string {
	t.Helper()
	b := h.browser(t)
	page := b.signIn(q, h.org.OwnerEmail, h.passwd)
	v := redirected(t, b.post(form(t, page, q, "action", "approve")), q.Get("redirect_uri"))
	if !kassa.IsOpaqueToken(v.Get("code")) {
		t.Fatalf("no code: %v", v)
	}
	return v.Get("code")
}

// authorizeError opens the consent page for q and returns the error it
// redirects to the app with.
func (h *consentHub) authorizeError(t *testing.T, q url.Values) url.Values {
	t.Helper()
	return redirected(t, h.browser(t).get(q), q.Get("redirect_uri"))
}

func TestOAuthPKCEWithAConfidentialClient(t *testing.T) {
	h := mustConsentHub(t)
	ctx := context.Background()
	conf := &oauth2.Config{ClientID: h.app.ClientID, ClientSecret: h.app.ClientSecret, RedirectURL: consentCB,
		Endpoint: oauth2.Endpoint{AuthURL: h.URL + "/oauth/authorize", TokenURL: h.URL + "/api/v1/oauth/token", AuthStyle: oauth2.AuthStyleInHeader}}
	verifier := oauth2.GenerateVerifier()
	// The library's own authorization URL carries the S256 challenge.
	authURL, _ := url.Parse(conf.AuthCodeURL("st", oauth2.S256ChallengeOption(verifier)))
	q := authURL.Query()
	q.Set("scope", "orders:read")
	if q.Get("code_challenge_method") != "S256" {
		t.Fatalf("the library sent %v", q)
	}
	code := h.pkceCode(t, q)
	// Enforced: without the verifier, or with another one, the code is refused
	// (and stays usable by the holder of the verifier).
	if _, err := conf.Exchange(ctx, code); oauthError(t, err) != kassa.OAuthInvalidGrant {
		t.Fatalf("exchange without code_verifier: %v", err)
	}
	if _, err := conf.Exchange(ctx, code, oauth2.VerifierOption(oauth2.GenerateVerifier())); oauthError(t, err) != kassa.OAuthInvalidGrant {
		t.Fatalf("exchange with another code_verifier: %v", err)
	}
	tok, err := conf.Exchange(ctx, code, oauth2.VerifierOption(verifier))
	if err != nil || tok.Extra("scope") != "orders:read" {
		t.Fatalf("exchange with the verifier: %v %v", tok, err)
	}
	// A code requested without a challenge refuses a verifier (a downgrade)
	// and is still exchanged without one: PKCE stays optional for confidential apps.
	plainQ := h.authorizeQuery("orders:read", "s2")
	code = h.pkceCode(t, plainQ)
	if _, err := conf.Exchange(ctx, code, oauth2.VerifierOption(verifier)); oauthError(t, err) != kassa.OAuthInvalidGrant {
		t.Fatalf("verifier for a code without a challenge: %v", err)
	}
	if _, err := conf.Exchange(ctx, code); err != nil {
		t.Fatalf("a code without a challenge: %v", err)
	}
	// plain is refused, and so is a challenge without its method (RFC 7636: plain).
	for _, tc := range []struct{ challenge, method string }{
		{verifier, "plain"}, {oauth2.S256ChallengeFromVerifier(verifier), ""}, {"", "S256"}, {"short", "S256"},
	} {
		bad := h.authorizeQuery("orders:read", "s3")
		bad.Set("code_challenge", tc.challenge)
		bad.Set("code_challenge_method", tc.method)
		if v := h.authorizeError(t, bad); v.Get("error") != kassa.OAuthInvalidRequest || v.Get("state") != "s3" || v.Get("code") != "" {
			t.Errorf("challenge %q method %q: redirected with %v, want invalid_request", tc.challenge, tc.method, v)
		}
	}
	m := h.Do("GET", "/.well-known/oauth-authorization-server", "", nil).JSON()
	if fmt.Sprint(m["code_challenge_methods_supported"]) != "[S256]" || !strings.Contains(fmt.Sprint(m["token_endpoint_auth_methods_supported"]), "none") {
		t.Fatalf("metadata: %v", m)
	}
}

func TestOAuthPublicClientsMustUsePKCE(t *testing.T) {
	h := mustConsentHub(t)
	ctx := context.Background()
	r := h.Do("POST", "/api/v1/oauth/apps", h.org.Owner, map[string]any{"name": "Till app", "client_type": "public",
		"redirect_uris": []string{"http://127.0.0.1:7777/cb"}, "scopes": []string{"orders:read"}})
	if r.Status != 201 || r.Data()["client_type"] != "public" || r.Data()["client_secret"] != nil {
		t.Fatalf("register a public app: %d %s", r.Status, r.Body)
	}
	id := r.Data()["client_id"].(string)
	conf := &oauth2.Config{ClientID: id, RedirectURL: "http://127.0.0.1:7777/cb",
		Endpoint: oauth2.Endpoint{AuthURL: h.URL + "/oauth/authorize", TokenURL: h.URL + "/api/v1/oauth/token", AuthStyle: oauth2.AuthStyleInParams}}
	q := url.Values{"response_type": {"code"}, "client_id": {id}, "redirect_uri": {conf.RedirectURL}, "scope": {"orders:read"}, "state": {"p1"}}
	// Required: without a challenge the page sends the app back with invalid_request.
	if v := h.authorizeError(t, q); v.Get("error") != kassa.OAuthInvalidRequest || !strings.Contains(v.Get("error_description"), "code_challenge") {
		t.Fatalf("public client without PKCE: %v", v)
	}
	verifier := oauth2.GenerateVerifier()
	q.Set("code_challenge", oauth2.S256ChallengeFromVerifier(verifier))
	q.Set("code_challenge_method", "S256")
	tok, err := conf.Exchange(ctx, h.pkceCode(t, q), oauth2.VerifierOption(verifier))
	if err != nil || tok.RefreshToken == "" {
		t.Fatalf("public exchange with the verifier: %v %v", tok, err)
	}
	if res := h.Do("GET", "/api/v1/orders", tok.AccessToken, nil); res.Status != 200 {
		t.Fatalf("the public client's token: %d", res.Status)
	}
	// It refreshes with its client_id alone; the rotation rules hold.
	fresh, err := conf.TokenSource(ctx, &oauth2.Token{RefreshToken: tok.RefreshToken, Expiry: time.Unix(1, 0)}).Token()
	if err != nil || fresh.AccessToken == tok.AccessToken {
		t.Fatalf("public refresh: %v", err)
	}
	// No secret: no client_credentials, a sent secret is refused, no
	// introspection, no rotation.
	mustOAuthError(t, h.form("/api/v1/oauth/token", url.Values{"grant_type": {"client_credentials"}, "client_id": {id}}), 400, kassa.OAuthUnauthorizedClient)
	mustOAuthError(t, h.form("/api/v1/oauth/token", url.Values{"grant_type": {"refresh_token"}, "refresh_token": {fresh.RefreshToken}}, id, "guess"), 401, kassa.OAuthInvalidClient)
	mustOAuthError(t, h.form("/api/v1/oauth/introspect", url.Values{"token": {fresh.AccessToken}, "client_id": {id}}), 401, kassa.OAuthInvalidClient)
	mustProblem(t, h.Do("POST", "/api/v1/oauth/apps/"+id+"/rotate-secret", h.org.Owner, nil), 409, "conflict")
	// It revokes with its client_id alone (RFC 7009 2.1).
	if r := h.form("/api/v1/oauth/revoke", url.Values{"token": {fresh.AccessToken}, "client_id": {id}}); r.Status != 200 {
		t.Fatalf("public revoke: %d %s", r.Status, r.Body)
	}
	mustProblem(t, h.Do("GET", "/api/v1/orders", fresh.AccessToken, nil), 401, "unauthorized")
	// A confidential app still needs its secret.
	mustOAuthError(t, h.form("/api/v1/oauth/token", url.Values{"grant_type": {"client_credentials"}, "client_id": {h.app.ClientID}}), 401, kassa.OAuthInvalidClient)
	mustProblem(t, h.Do("POST", "/api/v1/oauth/apps", h.org.Owner, map[string]any{"name": "X", "client_type": "native",
		"redirect_uris": []string{"http://127.0.0.1:7777/cb"}, "scopes": []string{"orders:read"}}), 422, "validation")
}

// metadataWithHost reads the RFC 8414 metadata with a forged Host header.
func (tn *testNode) metadataWithHost(host string) map[string]any {
	tn.t.Helper()
	req, _ := http.NewRequest("GET", tn.URL+"/.well-known/oauth-authorization-server", nil)
	req.Host = host
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		tn.t.Fatal(err)
	}
	defer res.Body.Close()
	var m map[string]any
	if res.StatusCode != 200 || json.NewDecoder(res.Body).Decode(&m) != nil {
		tn.t.Fatalf("metadata: %d", res.StatusCode)
	}
	return m
}

func TestOAuthMetadataNamesThePublicURLNeverTheHostHeader(t *testing.T) {
	// Configured: the issuer and every endpoint are under the public URL,
	// whatever Host the request names.
	tn := MustStartNode(t, kassa.NodeHub, func(c *node.Config) { c.PublicURL = "https://pos.example.com/kassa" })
	m := tn.metadataWithHost("evil.example")
	const pub = "https://pos.example.com/kassa"
	if m["issuer"] != pub || m["token_endpoint"] != pub+"/api/v1/oauth/token" || m["authorization_endpoint"] != pub+"/oauth/authorize" ||
		m["revocation_endpoint"] != pub+"/api/v1/oauth/revoke" || m["introspection_endpoint"] != pub+"/api/v1/oauth/introspect" ||
		m["service_documentation"] != pub+"/api/v1/openapi.json" {
		t.Fatalf("configured metadata: %v", m)
	}
	// Unset: the listen address, still not the Host header.
	plain := MustStartNode(t, kassa.NodeHub, nil)
	if m := plain.metadataWithHost("evil.example"); m["issuer"] != plain.URL || m["token_endpoint"] != plain.URL+"/api/v1/oauth/token" {
		t.Fatalf("metadata without a public URL: %v, want the listen address %s", m, plain.URL)
	}
	for _, bad := range []string{"pos.example.com", "ftp://pos.example.com", "https://u:p@pos.example.com", "https://pos.example.com/?a=1", "https://pos.example.com/#x", "https://"} {
		if _, err := httpapi.ParsePublicURL(bad); err == nil {
			t.Errorf("public URL %q accepted", bad)
		}
	}
}

// tokenFrom calls the token endpoint as the client address from (through
// a trusted proxy) with HTTP Basic id:secret.
func (tn *testNode) tokenFrom(from string, v url.Values, id, secret string) *resp {
	tn.t.Helper()
	req, _ := http.NewRequest("POST", tn.URL+"/api/v1/oauth/token", strings.NewReader(v.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("X-Forwarded-For", from)
	if id != "" {
		req.SetBasicAuth(url.QueryEscape(id), url.QueryEscape(secret))
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		tn.t.Fatal(err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	return &resp{Status: res.StatusCode, Header: res.Header, Body: b}
}

func mustRateHeaders(t *testing.T, r *resp, remaining string) {
	t.Helper()
	if r.Header.Get("X-RateLimit-Limit") != "60" || r.Header.Get("X-RateLimit-Remaining") != remaining {
		t.Fatalf("%d %s: X-RateLimit-Limit %q Remaining %q, want 60 and %s", r.Status, r.Body,
			r.Header.Get("X-RateLimit-Limit"), r.Header.Get("X-RateLimit-Remaining"), remaining)
	}
}

func mustThrottled(t *testing.T, r *resp) {
	t.Helper()
	mustOAuthError(t, r, 429, kassa.OAuthTemporarilyUnavailable)
	if s, err := strconv.Atoi(r.Header.Get("Retry-After")); err != nil || s < 1 || s > 60 {
		t.Fatalf("429 without a Retry-After of 1-60 s: %v", r.Header)
	}
	mustRateHeaders(t, r, "0")
}

func TestOAuthTokenEndpointIsThrottledPerClientAndAddress(t *testing.T) {
	tn := MustStartNode(t, kassa.NodeHub, func(c *node.Config) {
		c.TokenRate = httpapi.TokenRate{ClientPerMinute: 60, ClientBurst: 3, AddrPerMinute: 60, AddrBurst: 5}
		c.TrustedProxies = []netip.Prefix{netip.MustParsePrefix("127.0.0.1/32")}
	})
	o := tn.MustOrg("Developer")
	a, b := tn.mustApp(o, kassa.ScopeOrdersRead), tn.mustApp(o, kassa.ScopeOrdersRead)
	cc := url.Values{"grant_type": {"client_credentials"}}
	// One client: its burst of 3, then 429 with Retry-After; headers on every answer.
	for i, left := range []string{"2", "1", "0"} {
		r := tn.tokenFrom("203.0.113.1", cc, a.ID, a.Secret)
		if r.Status != 200 {
			t.Fatalf("call %d: %d %s", i, r.Status, r.Body)
		}
		mustRateHeaders(t, r, left)
	}
	mustThrottled(t, tn.tokenFrom("203.0.113.1", cc, a.ID, a.Secret))
	// Per client: from another address too.
	mustThrottled(t, tn.tokenFrom("203.0.113.2", cc, a.ID, a.Secret))
	// Failed authentications do not spend a client's budget (anyone knows a
	// client_id), but they do spend the address's.
	for _, left := range []string{"3", "2", "1"} {
		r := tn.tokenFrom("203.0.113.2", cc, b.ID, "wrong")
		mustOAuthError(t, r, 401, kassa.OAuthInvalidClient)
		mustRateHeaders(t, r, left)
	}
	if r := tn.tokenFrom("203.0.113.2", cc, b.ID, b.Secret); r.Status != 200 {
		t.Fatalf("b after others' failures under its id: %d %s", r.Status, r.Body)
	}
	// Per address: that address has spent its burst of 5, whoever asks.
	mustThrottled(t, tn.tokenFrom("203.0.113.2", cc, b.ID, b.Secret))
	mustThrottled(t, tn.tokenFrom("203.0.113.2", url.Values{"grant_type": {"password"}}, "", ""))
	if r := tn.tokenFrom("203.0.113.3", cc, b.ID, b.Secret); r.Status != 200 {
		t.Fatalf("b from a fresh address: %d %s", r.Status, r.Body)
	}
	// The buckets refill.
	tn.Clock.Advance(time.Minute)
	if r := tn.tokenFrom("203.0.113.1", cc, a.ID, a.Secret); r.Status != 200 {
		t.Fatalf("a after a minute: %d %s", r.Status, r.Body)
	}
}

func TestMetricsCanNeedATokenOrMoveOffTheAPI(t *testing.T) {
	const token = "a-metrics-token-for-the-scraper"
	tn := MustStartNode(t, kassa.NodeEdge, func(c *node.Config) { c.MetricsToken = token })
	mustProblem(t, tn.Do("GET", "/metrics", "", nil), 401, "unauthorized")
	mustProblem(t, tn.Do("GET", "/metrics", "not-the-token", nil), 401, "unauthorized")
	if r := tn.Do("GET", "/metrics", token, nil); r.Status != 200 || !strings.Contains(string(r.Body), "kassa_http_requests_total") {
		t.Fatalf("scrape with the token: %d", r.Status)
	}
	// Apart: the API listener has no /metrics; MetricsHandler serves it,
	// behind the token as well.
	apart := MustStartNode(t, kassa.NodeEdge, func(c *node.Config) { c.MetricsApart, c.MetricsToken = true, token })
	if r := apart.Do("GET", "/metrics", token, nil); r.Status != 404 {
		t.Fatalf("/metrics on the API listener with --metrics-addr: %d", r.Status)
	}
	srv := httptest.NewServer(apart.N.HTTP.MetricsHandler())
	defer srv.Close()
	scrape := func(tok string) int {
		req, _ := http.NewRequest("GET", srv.URL+"/metrics", nil)
		if tok != "" {
			req.Header.Set("Authorization", "Bearer "+tok)
		}
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		return res.StatusCode
	}
	if scrape("") != 401 || scrape("wrong") != 401 || scrape(token) != 200 {
		t.Fatal("the metrics listener does not require its token")
	}
}
