package main

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"golang.org/x/oauth2"

	"kassa.dev/hub/hubnode"
	"kassa.dev/shared/demo"
	"kassa.dev/shared/node/nodetest"
	"kassa.dev/shared/pgtest"
	"kassa.dev/web/webtest"
)

// TestMain runs the package's tests and then stops its throwaway
// PostgreSQL, if KASSA_TEST_STORE=postgres started one (pgtest.HubArgs).
func TestMain(m *testing.M) { os.Exit(pgtest.Main(m)) }

// TestConsentPageInChromium is the partner's whole flow with the standard
// client, golang.org/x/oauth2, against a real hub (the binary's own Run,
// demo org): the owner registers an app whose redirect URI is a test
// server on 127.0.0.1; AuthCodeURL sends headless Chromium to the consent
// page, where the owner signs in and approves; the browser lands on the
// app's server with a code and the state; Exchange turns the code into a
// token that reads the catalog. A second run denies and lands with
// access_denied. Screenshots of the sign-in and consent pages go to
// web/testdata/output/.
func TestConsentPageInChromium(t *testing.T) {
	chromium := webtest.ChromiumPath(t)
	p := nodetest.Start(t, hubnode.Run, map[string]string{"KASSA_LOG_LEVEL": "WARN"},
		append([]string{"--demo", "--http-addr", "127.0.0.1:0", "--data-dir", t.TempDir(), "--leaf-port", "-1"}, pgtest.HubArgs(t)...)...)
	owner := p.Login(t, "owner@demo.test", demo.Password)

	// The partner's server: its callback hands what it got to the test.
	landed := make(chan url.Values, 1)
	app := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/callback" {
			http.NotFound(w, r)
			return
		}
		select {
		case landed <- r.URL.Query():
		default:
		}
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		w.Write([]byte(`<!doctype html><title>Acme</title><h1 id="back">Back at Acme</h1>`))
	}))
	t.Cleanup(app.Close)

	var reg struct {
		Data struct {
			ClientID     string `json:"client_id"`
			ClientSecret string `json:"client_secret"`
		} `json:"data"`
	}
	if st := p.Call(t, "POST", "/api/v1/oauth/apps", owner, map[string]any{"name": "Acme Loyalty",
		"redirect_uris": []string{app.URL + "/callback"}, "scopes": []string{"catalog:read", "orders:read", "orders:write"}}, &reg); st != 201 {
		t.Fatalf("register the app: %d", st)
	}
	var meta struct {
		AuthorizationEndpoint string `json:"authorization_endpoint"`
		TokenEndpoint         string `json:"token_endpoint"`
	}
	if st := p.Call(t, "GET", "/.well-known/oauth-authorization-server", "", nil, &meta); st != 200 {
		t.Fatalf("authorization server metadata: %d", st)
	}
	conf := &oauth2.Config{ClientID: reg.Data.ClientID, ClientSecret: reg.Data.ClientSecret,
		Endpoint:    oauth2.Endpoint{AuthURL: meta.AuthorizationEndpoint, TokenURL: meta.TokenEndpoint},
		RedirectURL: app.URL + "/callback", Scopes: []string{"catalog:read", "orders:write"}}

	b := webtest.Start(t, chromium, 1100, 900)
	out := filepath.Join("..", "web", "testdata", "output")
	if err := os.MkdirAll(out, 0o755); err != nil {
		t.Fatal(err)
	}
	screenshot := func(name string) {
		t.Helper()
		png, err := chromedp.Run(b.Ctx, chromedp.CaptureScreenshot())
		if err != nil {
			t.Fatalf("screenshot %s: %v", name, err)
		}
		if err := os.WriteFile(filepath.Join(out, name), png, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	// authorize runs the page up to the decision and clicks button.
	authorize := func(button string, shots bool, opts ...oauth2.AuthCodeOption) url.Values {
		t.Helper()
		state := randomState(t)
		b.Run("open the consent page", chromedp.Navigate(conf.AuthCodeURL(state, opts...)), chromedp.WaitVisible("#signin"))
		if shots {
			screenshot("consent-signin.png")
		}
		b.Run("sign in", chromedp.SendKeys("#email", "owner@demo.test"), chromedp.SendKeys("#password", demo.Password),
			chromedp.Click("#signin-btn"))
		b.Within(10*time.Second, "the consent form", chromedp.WaitVisible("#decide"))
		appName, err := chromedp.Run(b.Ctx, chromedp.Text("#app-name"))
		if err != nil {
			t.Fatal(err)
		}
		granted, err := chromedp.Run(b.Ctx, chromedp.Text("#granted"))
		if err != nil {
			t.Fatal(err)
		}
		if appName != "Acme Loyalty" || !containsAll(granted, "See products, categories, modifiers and price lists",
			"Create orders, change their status and start refunds") {
			t.Fatalf("the consent page shows app %q granting %q", appName, granted)
		}
		if shots {
			screenshot("consent.png")
		}
		b.Run("decide", chromedp.Click(button))
		b.Within(10*time.Second, "back at the app", chromedp.WaitVisible("#back"))
		var got url.Values
		select {
		case got = <-landed:
		case <-time.After(10 * time.Second): // a deadline, not a pause: the page is already back
			t.Fatal("the browser reached the app's page but its callback saw nothing")
		}
		if got.Get("state") != state {
			t.Fatalf("state came back as %q, want %q", got.Get("state"), state)
		}
		return got
	}

	// With PKCE (S256): the challenge rides through sign-in and consent.
	verifier := oauth2.GenerateVerifier()
	got := authorize("#approve", true, oauth2.S256ChallengeOption(verifier))
	if got.Get("code") == "" || got.Has("error") {
		t.Fatalf("approve landed with %v", got)
	}
	ctx := context.Background()
	if _, err := conf.Exchange(ctx, got.Get("code")); err == nil {
		t.Fatal("a code requested with a challenge was exchanged without its verifier")
	}
	tok, err := conf.Exchange(ctx, got.Get("code"), oauth2.VerifierOption(verifier))
	if err != nil {
		t.Fatalf("exchange the code: %v", err)
	}
	if tok.Extra("scope") != "catalog:read orders:write" || tok.RefreshToken == "" || tok.TokenType != "Bearer" {
		t.Fatalf("token: scope %v, type %q, refresh token %t", tok.Extra("scope"), tok.TokenType, tok.RefreshToken != "")
	}
	res, err := conf.Client(ctx, tok).Get(p.URL + "/api/v1/catalog/products?limit=2")
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode != 200 {
		t.Fatalf("GET products with the app's token: %d", res.StatusCode)
	}

	got = authorize("#deny", false)
	if got.Get("error") != "access_denied" || got.Has("code") {
		t.Fatalf("deny landed with %v", got)
	}
	if errs := b.JSErrors(); len(errs) > 0 {
		t.Fatalf("JavaScript errors: %v", errs)
	}
}

func randomState(t *testing.T) string {
	b := make([]byte, 12)
	if _, err := rand.Read(b); err != nil {
		t.Fatal(err)
	}
	return "st " + hex.EncodeToString(b) + "/+&="
}

func containsAll(s string, parts ...string) bool {
	for _, p := range parts {
		if !strings.Contains(s, p) {
			return false
		}
	}
	return true
}
