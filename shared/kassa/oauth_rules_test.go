package kassa_test

import (
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"kassa.dev/shared/kassa"
)

func TestRedirectURIsAppsMayRegister(t *testing.T) {
	for _, tc := range []struct {
		uri string
		ok  bool
	}{
		{"https://partner.example/cb", true},
		{"https://partner.example:8443/oauth/cb?app=1", true},
		{"http://127.0.0.1:5000/cb", true},
		{"http://[::1]/cb", true},
		{"http://localhost:8080/cb", true},
		{"http://partner.example/cb", false},          // plain http off loopback
		{"https://partner.example/cb#frag", false},    // fragment
		{"https://partner.example/cb#", false},        // empty fragment
		{"/cb", false},                                // relative
		{"https:///cb", false},                        // no host
		{"javascript:alert(1)", false},                // not a URL of a site
		{"https://user:pw@partner.example/cb", false}, // user info
		{"ftp://partner.example/cb", false},
		{"https://partner.example/" + strings.Repeat("a", 2000), false},
		{"", false},
	} {
		if got := kassa.ValidRedirectURI(tc.uri); got != tc.ok {
			t.Errorf("ValidRedirectURI(%.60q) = %v, want %v", tc.uri, got, tc.ok)
		}
	}
}

func TestRedirectURIMatchIsByteForByte(t *testing.T) {
	reg := []string{"https://partner.example/cb"}
	for _, uri := range []string{
		"https://partner.example/cb/", "https://partner.example/cb/x", "https://partner.example/c",
		"https://PARTNER.example/cb", "https://partner.example/CB", "https://partner.example/cb?x=1",
		"https://partner.example/cb#f", "https://partner.example:443/cb", "https://partner.example/%63b",
	} {
		if kassa.RedirectURIRegistered(reg, uri) {
			t.Errorf("%q matched %q", uri, reg[0])
		}
	}
	if !kassa.RedirectURIRegistered(reg, reg[0]) {
		t.Error("the registered URI itself did not match")
	}
}

func fieldsOf(err error) []string {
	var ke *kassa.Error
	if !errors.As(err, &ke) {
		return nil
	}
	var out []string
	for _, f := range ke.Fields {
		out = append(out, f.Field)
	}
	return out
}

func TestOAuthAppValidation(t *testing.T) {
	good := kassa.OAuthAppCreate{Name: "Ledger sync", RedirectURIs: []string{"https://p.example/cb"},
		Scopes: []kassa.Scope{kassa.ScopeOrdersRead, kassa.ScopePartnersWrite}}
	if err := good.Validate(); err != nil {
		t.Fatalf("valid app refused: %v", err)
	}
	many := make([]string, 11)
	for i := range many {
		many[i] = "https://p.example/cb"
	}
	for _, tc := range []struct {
		name  string
		in    kassa.OAuthAppCreate
		field string
	}{
		{"no name", kassa.OAuthAppCreate{RedirectURIs: good.RedirectURIs, Scopes: good.Scopes}, "name"},
		{"long name", kassa.OAuthAppCreate{Name: strings.Repeat("n", 201), RedirectURIs: good.RedirectURIs, Scopes: good.Scopes}, "name"},
		{"no uris", kassa.OAuthAppCreate{Name: "a", Scopes: good.Scopes}, "redirect_uris"},
		{"11 uris", kassa.OAuthAppCreate{Name: "a", RedirectURIs: many, Scopes: good.Scopes}, "redirect_uris"},
		{"http uri", kassa.OAuthAppCreate{Name: "a", RedirectURIs: []string{"http://p.example/cb"}, Scopes: good.Scopes}, "redirect_uris"},
		{"no scopes", kassa.OAuthAppCreate{Name: "a", RedirectURIs: good.RedirectURIs}, "scopes"},
		{"unknown scope", kassa.OAuthAppCreate{Name: "a", RedirectURIs: good.RedirectURIs, Scopes: []kassa.Scope{"admin"}}, "scopes"},
	} {
		if got := fieldsOf(tc.in.Validate()); !slices.Equal(got, []string{tc.field}) {
			t.Errorf("%s: invalid fields %v, want [%s]", tc.name, got, tc.field)
		}
	}
	up := kassa.OAuthAppUpdate{Name: kassa.Opt[string]{Set: true, Null: true}, Scopes: kassa.Some([]kassa.Scope{"nope"})}
	if got := fieldsOf(up.Validate()); !slices.Contains(got, "name") || !slices.Contains(got, "scopes") {
		t.Errorf("update: invalid fields %v, want name and scopes", got)
	}
	if err := (&kassa.OAuthAppUpdate{RedirectURIs: kassa.Some([]string{"http://localhost/cb"})}).Validate(); err != nil {
		t.Errorf("update with a loopback URI refused: %v", err)
	}
}

func TestParseScopes(t *testing.T) {
	got, err := kassa.ParseScopes(" orders:read  catalog:read orders:read ")
	if err != nil || !slices.Equal(got, []kassa.Scope{kassa.ScopeOrdersRead, kassa.ScopeCatalogRead}) {
		t.Fatalf("ParseScopes = %v, %v", got, err)
	}
	if got, err := kassa.ParseScopes(""); err != nil || got != nil {
		t.Fatalf("empty: %v, %v", got, err)
	}
	_, err = kassa.ParseScopes("orders:read orders:admin")
	var oe *kassa.OAuthError
	if !errors.As(err, &oe) || oe.Code != kassa.OAuthInvalidScope || oe.Status != 400 {
		t.Fatalf("unknown scope: %v", err)
	}
}

func TestGrantedAndNarrowedScopes(t *testing.T) {
	requested := []kassa.Scope{kassa.ScopeOrdersRead, kassa.ScopeCatalogWrite, kassa.ScopeReportsRead, kassa.ScopePartnersWrite}
	registered := []kassa.Scope{kassa.ScopeOrdersRead, kassa.ScopeCatalogWrite, kassa.ScopePartnersWrite}
	got := kassa.GrantedScopes(requested, registered, kassa.RoleScopes(kassa.RoleCashier))
	if !slices.Equal(got, []kassa.Scope{kassa.ScopeOrdersRead}) {
		t.Errorf("a cashier's consent granted %v, want only orders:read", got)
	}
	if got := kassa.GrantedScopes(requested, registered, kassa.RoleScopes(kassa.RoleOwner)); slices.Contains(got, kassa.ScopePartnersWrite) {
		t.Errorf("a role granted partners:write: %v", got)
	}
	if got := kassa.GrantedScopes([]kassa.Scope{kassa.ScopeReportsRead}, registered, kassa.RoleScopes(kassa.RoleOwner)); got != nil {
		t.Errorf("unregistered scope granted: %v", got)
	}
	granted := []kassa.Scope{kassa.ScopeOrdersRead, kassa.ScopeCatalogRead}
	if n, err := kassa.NarrowScopes(nil, granted); err != nil || !slices.Equal(n, granted) {
		t.Errorf("no scope asked: %v, %v", n, err)
	}
	if n, err := kassa.NarrowScopes([]kassa.Scope{kassa.ScopeCatalogRead}, granted); err != nil || !slices.Equal(n, []kassa.Scope{kassa.ScopeCatalogRead}) {
		t.Errorf("narrower: %v, %v", n, err)
	}
	var oe *kassa.OAuthError
	if _, err := kassa.NarrowScopes([]kassa.Scope{kassa.ScopeCatalogRead, kassa.ScopeCatalogWrite}, granted); !errors.As(err, &oe) || oe.Code != kassa.OAuthInvalidScope {
		t.Errorf("wider scope on refresh: %v, want invalid_scope", err)
	}
}

// TestTokenStateMachine is spec part 3 for codes, access and refresh
// tokens, at chosen instants.
func TestTokenStateMachine(t *testing.T) {
	issued := time.Date(2026, 11, 23, 12, 0, 0, 0, time.UTC)
	code := kassa.CodeState{ExpiresAt: issued.Add(kassa.OAuthCodeTTL)}
	for _, tc := range []struct {
		name string
		got  kassa.OAuthDecision
		want kassa.OAuthDecision
	}{
		{"code, first use within 10 min", code.Exchange(issued.Add(9*time.Minute + 59*time.Second)), kassa.OAuthAllow},
		{"code, 10 min elapsed", code.Exchange(issued.Add(kassa.OAuthCodeTTL)), kassa.OAuthRefuse},
		{"code, any later use", kassa.CodeState{ExpiresAt: code.ExpiresAt, Consumed: true}.Exchange(issued.Add(time.Second)), kassa.OAuthRefuseAndRevoke},
		{"code, later use after expiry", kassa.CodeState{ExpiresAt: code.ExpiresAt, Consumed: true}.Exchange(issued.Add(time.Hour)), kassa.OAuthRefuseAndRevoke},
		{"refresh, unused", kassa.RefreshState{}.Refresh(), kassa.OAuthAllow},
		{"refresh, used again", kassa.RefreshState{Used: true}.Refresh(), kassa.OAuthRefuseAndRevoke},
		{"refresh, revoked", kassa.RefreshState{Revoked: true}.Refresh(), kassa.OAuthRefuse},
	} {
		if tc.got != tc.want {
			t.Errorf("%s: decision %d, want %d", tc.name, tc.got, tc.want)
		}
	}
	access := kassa.AccessState{ExpiresAt: issued.Add(kassa.OAuthAccessTTL)}
	if !access.Active(issued.Add(899 * time.Second)) {
		t.Error("access token inactive before 900 s")
	}
	if access.Active(issued.Add(900 * time.Second)) {
		t.Error("access token active after 900 s")
	}
	if (kassa.AccessState{ExpiresAt: access.ExpiresAt, Revoked: true}).Active(issued) {
		t.Error("revoked access token active")
	}
}

func TestOpaqueTokenShape(t *testing.T) {
	if !kassa.IsOpaqueToken(strings.Repeat("0a", 32)) {
		t.Error("64 lower hex refused")
	}
	for _, s := range []string{strings.Repeat("0A", 32), strings.Repeat("a", 63), strings.Repeat("a", 65), "eyJhbGciOi.x.y"} {
		if kassa.IsOpaqueToken(s) {
			t.Errorf("%q taken for an opaque token", s)
		}
	}
}
