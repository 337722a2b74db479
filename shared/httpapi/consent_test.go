package httpapi_test

import (
	"context"
	"html"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"kassa.dev/shared/kassa"
	"kassa.dev/shared/node"
)

// The consent page's tests drive /oauth/authorize of a real hub (SQLite
// file, the real authorization server, the real page from web/hubpages/oauth)
// over HTTP with a cookie jar, as a browser without JavaScript would. The
// end-to-end run in Chromium with golang.org/x/oauth2 is hub/consent_browser_test.go.

const (
	consentCB      = "https://app.example/cb"
	consentCBQuery = "https://app.example/cb2?tenant=7"
)

// consentHub is a hub with an org, its staff and a registered app.
type consentHub struct {
	*testNode
	org    *testOrg
	app    *kassa.OAuthAppSecret
	other  *kassa.OAuthAppSecret // another app, with its own redirect URI
	passwd string
}

func mustConsentHub(t *testing.T, tweak ...func(*node.Config)) *consentHub {
	t.Helper()
	tn := MustStartNode(t, kassa.NodeHub, func(c *node.Config) {
		c.ConsentPage = os.DirFS(filepath.Join("..", "..", "web", "hubpages", "oauth"))
		for _, f := range tweak {
			f(c)
		}
	})
	org := tn.MustOrg("Consent Cafe")
	ctx := tn.ownerCtx(org)
	app, err := tn.N.Services.OAuth.CreateApp(ctx, &kassa.OAuthAppCreate{Name: "Acme <Loyalty>",
		RedirectURIs: []string{consentCB, consentCBQuery},
		Scopes:       []kassa.Scope{kassa.ScopeOrdersRead, kassa.ScopeOrdersWrite, kassa.ScopeCatalogWrite, kassa.ScopeReportsRead}})
	if err != nil {
		t.Fatal(err)
	}
	other, err := tn.N.Services.OAuth.CreateApp(ctx, &kassa.OAuthAppCreate{Name: "Other",
		RedirectURIs: []string{"https://other.example/cb"}, Scopes: []kassa.Scope{kassa.ScopeOrdersRead}})
	if err != nil {
		t.Fatal(err)
	}
	for _, u := range []struct {
		email string
		role  kassa.Role
	}{{"cashier@consent.test", kassa.RoleCashier}, {"kitchen@consent.test", kassa.RoleKitchen}} {
		tn.MustUser(org, u.email, u.role)
	}
	return &consentHub{testNode: tn, org: org, app: app, other: other, passwd: testPassword}
}

// ownerCtx acts as the org's owner, for calls of the services.
func (tn *testNode) ownerCtx(o *testOrg) context.Context {
	tn.t.Helper()
	a, err := tn.N.Services.Auth.Authenticate(context.Background(), o.Owner)
	if err != nil {
		tn.t.Fatal(err)
	}
	return kassa.WithActor(context.Background(), a)
}

// authorizeQuery is a well-formed authorization request of the hub's app.
func (h *consentHub) authorizeQuery(scope, state string) url.Values {
	return url.Values{"response_type": {"code"}, "client_id": {h.app.ClientID}, "redirect_uri": {consentCB},
		"scope": {scope}, "state": {state}}
}

// browser is a cookie-keeping HTTP client that does not follow redirects.
type browser struct {
	t   *testing.T
	url string
	c   *http.Client
}

func (tn *testNode) browser(t *testing.T) *browser {
	jar, _ := cookiejar.New(nil)
	return &browser{t: t, url: tn.URL, c: &http.Client{Jar: jar,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}}
}

func (b *browser) do(req *http.Request) *resp {
	b.t.Helper()
	res, err := b.c.Do(req)
	if err != nil {
		b.t.Fatal(err)
	}
	defer res.Body.Close()
	body, _ := io.ReadAll(res.Body)
	return &resp{Status: res.StatusCode, Header: res.Header, Body: body}
}

// get opens /oauth/authorize with the query (a raw string or url.Values).
func (b *browser) get(q any) *resp {
	b.t.Helper()
	raw, ok := q.(string)
	if !ok {
		raw = q.(url.Values).Encode()
	}
	req, _ := http.NewRequest("GET", b.url+"/oauth/authorize?"+raw, nil)
	return b.do(req)
}

// post submits the page's form.
func (b *browser) post(form url.Values) *resp {
	b.t.Helper()
	req, _ := http.NewRequest("POST", b.url+"/oauth/authorize", strings.NewReader(form.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	return b.do(req)
}

var csrfField = regexp.MustCompile(`name="csrf_token" value="([^"]*)"`)

// form returns the hidden fields of the page's form plus extra pairs.
func form(t *testing.T, page *resp, q url.Values, extra ...string) url.Values {
	t.Helper()
	m := csrfField.FindSubmatch(page.Body)
	if m == nil {
		t.Fatalf("no CSRF token in the page (%d): %s", page.Status, page.Body)
	}
	f := url.Values{}
	for k, v := range q {
		f[k] = v
	}
	f.Set("csrf_token", html.UnescapeString(string(m[1])))
	for i := 0; i+1 < len(extra); i += 2 {
		f.Set(extra[i], extra[i+1])
	}
	return f
}

// signIn opens the authorization request, signs in on the page and
// returns the consent page it leads to.
func (b *browser) signIn(q url.Values, email, password string) *resp {
	b.t.Helper()
	page := b.get(q)
	if page.Status != 200 || !strings.Contains(string(page.Body), `id="signin"`) {
		b.t.Fatalf("want the sign-in form, got %d: %s", page.Status, page.Body)
	}
	r := b.post(form(b.t, page, q, "action", "signin", "email", email, "password", password))
	if r.Status != http.StatusSeeOther {
		b.t.Fatalf("sign in: %d %s", r.Status, r.Body)
	}
	loc, _ := url.Parse(r.Header.Get("Location"))
	if loc.Path != "/oauth/authorize" || loc.Host != "" {
		b.t.Fatalf("after sign-in, sent to %q", r.Header.Get("Location"))
	}
	page = b.get(loc.RawQuery)
	if page.Status != 200 || !strings.Contains(string(page.Body), `id="decide"`) {
		b.t.Fatalf("want the consent form, got %d: %s", page.Status, page.Body)
	}
	return page
}

// redirected checks that r sends the browser to the registered URI and
// returns the parameters it adds.
func redirected(t *testing.T, r *resp, registered string) url.Values {
	t.Helper()
	if r.Status != http.StatusFound {
		t.Fatalf("status %d, want 302: %s", r.Status, r.Body)
	}
	loc := r.Header.Get("Location")
	rest, ok := strings.CutPrefix(loc, registered)
	if !ok || (rest[0] != '?' && rest[0] != '&') {
		t.Fatalf("redirected to %q, want %q with parameters", loc, registered)
	}
	v, err := url.ParseQuery(rest[1:])
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// mustErrorPage checks an HTML error page that does not redirect.
func mustErrorPage(t *testing.T, r *resp, status int) {
	t.Helper()
	if r.Status != status {
		t.Fatalf("status %d, want %d: %s", r.Status, status, r.Body)
	}
	if loc := r.Header.Get("Location"); loc != "" {
		t.Fatalf("an error page redirects to %q", loc)
	}
	if ct := r.Header.Get("Content-Type"); !strings.HasPrefix(ct, "text/html") {
		t.Fatalf("Content-Type %q, want an HTML page", ct)
	}
	if !strings.Contains(string(r.Body), `id="problem"`) {
		t.Fatalf("no error message on the page: %s", r.Body)
	}
}

// TestConsentRedirectURIAttacksShowAnErrorPage: an unknown client or a
// redirect_uri that is not byte for byte a registered one gets an error
// page and no redirect, before and after signing in, on GET and on the
// form's POST (hidden fields altered after the page was served).
func TestConsentRedirectURIAttacksShowAnErrorPage(t *testing.T) {
	h := mustConsentHub(t)
	attacks := []struct{ name, client, uri string }{
		{"prefix", h.app.ClientID, "https://app.example/c"},
		{"longer", h.app.ClientID, consentCB + "x"},
		{"host case", h.app.ClientID, "https://APP.example/cb"},
		{"path case", h.app.ClientID, "https://app.example/CB"},
		{"extra path", h.app.ClientID, consentCB + "/evil"},
		{"trailing slash", h.app.ClientID, consentCB + "/"},
		{"extra query", h.app.ClientID, consentCB + "?next=https://evil.example"},
		{"query of another registered URI", h.app.ClientID, "https://app.example/cb2?tenant=8"},
		{"fragment", h.app.ClientID, consentCB + "#x"},
		{"another host", h.app.ClientID, "https://evil.example/cb"},
		{"http instead of https", h.app.ClientID, "http://app.example/cb"},
		{"another app's URI", h.app.ClientID, "https://other.example/cb"},
		{"unknown client", "00000000-0000-7000-8000-000000000000", consentCB},
		{"garbage client", "x", consentCB},
		{"missing redirect_uri", h.app.ClientID, ""},
		{"missing client", "", consentCB},
	}
	signedIn := h.browser(t)
	page := signedIn.signIn(h.authorizeQuery("orders:read", "s1"), h.org.OwnerEmail, h.passwd)
	for _, a := range attacks {
		t.Run(a.name, func(t *testing.T) {
			q := h.authorizeQuery("orders:read", "s1")
			q.Set("client_id", a.client)
			q.Set("redirect_uri", a.uri)
			mustErrorPage(t, h.browser(t).get(q), 400)
			mustErrorPage(t, signedIn.get(q), 400)
			// The consent form's hidden fields altered: refused as well.
			mustErrorPage(t, signedIn.post(form(t, page, q, "action", "approve")), 400)
			mustErrorPage(t, signedIn.post(form(t, page, q, "action", "deny")), 400)
		})
	}
	t.Run("repeated redirect_uri", func(t *testing.T) {
		raw := h.authorizeQuery("orders:read", "s1").Encode() + "&redirect_uri=" + url.QueryEscape("https://evil.example/cb")
		mustErrorPage(t, h.browser(t).get(raw), 400)
	})
	// The untouched form still works: nothing above used up the session.
	redirected(t, signedIn.post(form(t, page, h.authorizeQuery("orders:read", "s1"), "action", "approve")), consentCB)
}

// TestConsentOtherErrorsRedirectWithState: once client and redirect URI
// are good, other errors go back to the app with an RFC 6749 code and the
// state unchanged.
func TestConsentOtherErrorsRedirectWithState(t *testing.T) {
	h := mustConsentHub(t)
	b := h.browser(t)
	const state = "st&te=1 ü/+%"
	for _, tc := range []struct {
		name, key, value, code string
	}{
		{"response_type token", "response_type", "token", kassa.OAuthUnsupportedResponseType},
		{"no response_type", "response_type", "", kassa.OAuthInvalidRequest},
		{"unknown scope", "scope", "orders:read orders:delete", kassa.OAuthInvalidScope},
		{"no scope", "scope", "", kassa.OAuthInvalidScope},
	} {
		t.Run(tc.name, func(t *testing.T) {
			q := h.authorizeQuery("orders:read", state)
			q.Set(tc.key, tc.value)
			v := redirected(t, b.get(q), consentCB)
			if v.Get("error") != tc.code || v.Get("state") != state || v.Get("code") != "" {
				t.Fatalf("redirected with %v, want error=%s and the state", v, tc.code)
			}
		})
	}
	q := h.authorizeQuery("orders:read", "")
	v := redirected(t, b.get(q), consentCB)
	if v.Get("error") != kassa.OAuthInvalidRequest || v.Has("state") {
		t.Fatalf("without state: redirected with %v, want invalid_request", v)
	}
}

// TestConsentApproveReturnsCodeAndState: signing in and approving sends
// the browser to the exact registered URI (its own query kept) with a
// code and the state unchanged, odd characters and all; the code buys a
// token of the granted scopes, once.
func TestConsentApproveReturnsCodeAndState(t *testing.T) {
	h := mustConsentHub(t)
	for _, tc := range []struct{ uri, state string }{
		{consentCB, `a b&c=d/é+%20?#x'"<>` + "\u2028"},
		{consentCBQuery, "plain"},
	} {
		q := h.authorizeQuery("orders:read orders:write", tc.state)
		q.Set("redirect_uri", tc.uri)
		b := h.browser(t)
		page := b.signIn(q, h.org.OwnerEmail, h.passwd)
		body := string(page.Body)
		for _, want := range []string{"Acme &lt;Loyalty&gt;", "Consent Cafe", "Create orders, change their status and start refunds",
			"See orders and their line items", h.org.OwnerEmail, "app.example"} {
			if !strings.Contains(body, want) {
				t.Errorf("the consent page lacks %q", want)
			}
		}
		r := b.post(form(t, page, q, "action", "approve"))
		v := redirected(t, r, tc.uri)
		if v.Get("state") != tc.state || !kassa.IsOpaqueToken(v.Get("code")) || len(v) != 2 {
			t.Fatalf("redirected with %v, want a code and state %q", v, tc.state)
		}
		if tc.uri == consentCBQuery && !strings.HasPrefix(r.Header.Get("Location"), consentCBQuery+"&") {
			t.Fatalf("the registered query is not kept: %s", r.Header.Get("Location"))
		}
		tok, err := h.N.Services.OAuth.Token(context.Background(), &kassa.TokenRequest{GrantType: "authorization_code",
			Code: v.Get("code"), RedirectURI: tc.uri, ClientID: h.app.ClientID, ClientSecret: h.app.ClientSecret})
		if err != nil || tok.Scope != "orders:read orders:write" {
			t.Fatalf("exchange the code: %+v %v", tok, err)
		}
		// The decision ended the sign-in: the same request asks to sign in again.
		if again := b.get(q); !strings.Contains(string(again.Body), `id="signin"`) {
			t.Fatalf("after approving, the page is still signed in: %s", again.Body)
		}
	}
}

// TestConsentDeny: deny sends the browser back with access_denied and the
// state, and no code.
func TestConsentDeny(t *testing.T) {
	h := mustConsentHub(t)
	q := h.authorizeQuery("orders:read", "keep me")
	b := h.browser(t)
	page := b.signIn(q, h.org.OwnerEmail, h.passwd)
	v := redirected(t, b.post(form(t, page, q, "action", "deny")), consentCB)
	if v.Get("error") != kassa.OAuthAccessDenied || v.Get("state") != "keep me" || v.Has("code") {
		t.Fatalf("deny redirected with %v", v)
	}
}

// TestConsentRefusesForgedForms: the approve form is refused (403 page, no
// redirect, no code) without its CSRF token, with the token of another
// browser's session, with the sign-in form's token, without the cookie,
// and with a scope widened after the page was served.
func TestConsentRefusesForgedForms(t *testing.T) {
	h := mustConsentHub(t)
	q := h.authorizeQuery("orders:read", "s")
	victim, attacker := h.browser(t), h.browser(t)
	page := victim.signIn(q, h.org.OwnerEmail, h.passwd)
	attackerPage := attacker.signIn(q, h.org.OwnerEmail, h.passwd)
	signInPage := h.browser(t).get(q)

	noToken := form(t, page, q, "action", "approve")
	noToken.Del("csrf_token")
	wider := form(t, page, q, "action", "approve")
	wider.Set("scope", "orders:read orders:write")
	cookieless := h.browser(t)
	for name, f := range map[string]url.Values{
		"no token":               noToken,
		"empty token":            form(t, page, q, "action", "approve", "csrf_token", ""),
		"another session's":      form(t, attackerPage, q, "action", "approve"),
		"the sign-in form's":     form(t, signInPage, q, "action", "approve"),
		"scope widened":          wider,
		"another session's deny": form(t, attackerPage, q, "action", "deny"),
	} {
		t.Run(name, func(t *testing.T) { mustErrorPage(t, victim.post(f), 403) })
	}
	t.Run("no cookie", func(t *testing.T) { mustErrorPage(t, cookieless.post(form(t, page, q, "action", "approve")), 403) })
	// The victim's own form still works.
	redirected(t, victim.post(form(t, page, q, "action", "approve")), consentCB)
}

// TestConsentHeaders: every answer of the consent flow forbids framing,
// caching and referrers; the page runs no script; the cookie is HttpOnly
// and SameSite=Lax and holds no token.
func TestConsentHeaders(t *testing.T) {
	h := mustConsentHub(t)
	q := h.authorizeQuery("orders:read", "s")
	b := h.browser(t)
	signIn := b.get(q)
	cookie := signIn.Header.Get("Set-Cookie")
	for _, want := range []string{"kassa_consent=", "httponly", "samesite=lax", "path=/oauth"} {
		if !strings.Contains(strings.ToLower(cookie), want) {
			t.Errorf("cookie %q lacks %s", cookie, want)
		}
	}
	login := b.post(form(t, signIn, q, "action", "signin", "email", h.org.OwnerEmail, "password", h.passwd))
	if c := login.Header.Get("Set-Cookie"); strings.Contains(c, "eyJ") || strings.Contains(c, strings.Split(cookie, ";")[0]) {
		t.Errorf("the signed-in cookie %q holds a token or keeps the anonymous id", c)
	}
	consentPage := b.get(strings.SplitN(login.Header.Get("Location"), "?", 2)[1])
	bad := h.authorizeQuery("orders:read", "s")
	bad.Set("redirect_uri", "https://evil.example/")
	answers := map[string]*resp{
		"sign-in page":   signIn,
		"sign-in post":   login,
		"consent page":   consentPage,
		"error page":     h.browser(t).get(bad),
		"approve":        b.post(form(t, consentPage, h.authorizeQuery("orders:read", "s"), "action", "approve")),
		"error redirect": b.get(url.Values{"client_id": {h.app.ClientID}, "redirect_uri": {consentCB}, "state": {"s"}}),
	}
	for name, r := range answers {
		hd := r.Header
		csp := hd.Get("Content-Security-Policy")
		if hd.Get("X-Frame-Options") != "DENY" || !strings.Contains(csp, "frame-ancestors 'none'") ||
			!strings.Contains(csp, "default-src 'none'") || strings.Contains(csp, "script-src") ||
			hd.Get("Cache-Control") != "no-store" || hd.Get("Referrer-Policy") != "no-referrer" {
			t.Errorf("%s: headers %v", name, hd)
		}
	}
	if csp := consentPage.Header.Get("Content-Security-Policy"); !strings.Contains(csp, "form-action 'self' https://app.example") {
		t.Errorf("the consent page's CSP %q does not let its form reach the app", csp)
	}
	if strings.Contains(string(consentPage.Body), "<script") {
		t.Errorf("the consent page has a script")
	}
}

// TestConsentGrantsByRole: the page lists the requested scopes and marks
// what is granted — requested ∩ registered ∩ the user's role — and the
// code carries exactly that; a kitchen user can only deny.
func TestConsentGrantsByRole(t *testing.T) {
	h := mustConsentHub(t)
	const scope = "orders:read orders:write catalog:write reports:read webhooks:write"
	granted := regexp.MustCompile(`<ul id="granted"[^>]*>((?s).*?)</ul>`)
	scopeOf := regexp.MustCompile(`data-scope="([^"]+)"`)
	for _, tc := range []struct {
		email string
		want  string
	}{
		{h.org.OwnerEmail, "orders:read orders:write catalog:write reports:read"},
		{"cashier@consent.test", "orders:read orders:write"},
	} {
		t.Run(tc.email, func(t *testing.T) {
			q := h.authorizeQuery(scope, "s")
			b := h.browser(t)
			page := b.signIn(q, tc.email, h.passwd)
			m := granted.FindSubmatch(page.Body)
			if m == nil {
				t.Fatalf("no granted list: %s", page.Body)
			}
			var shown []string
			for _, s := range scopeOf.FindAllSubmatch(m[1], -1) {
				shown = append(shown, string(s[1]))
			}
			if strings.Join(shown, " ") != tc.want {
				t.Fatalf("the page grants %q, want %q", shown, tc.want)
			}
			if !strings.Contains(string(page.Body), "Register and manage webhook subscriptions <span class=\"note\">(the app did not register it)") {
				t.Errorf("webhooks:write is not shown as unregistered")
			}
			if role := strings.Contains(string(page.Body), "(your role (cashier) cannot grant it)"); role != (tc.email != h.org.OwnerEmail) {
				t.Errorf("the page says the role withholds a scope: %t", role)
			}
			v := redirected(t, b.post(form(t, page, q, "action", "approve")), consentCB)
			tok, err := h.N.Services.OAuth.Token(context.Background(), &kassa.TokenRequest{GrantType: "authorization_code",
				Code: v.Get("code"), RedirectURI: consentCB, ClientID: h.app.ClientID, ClientSecret: h.app.ClientSecret})
			if err != nil || tok.Scope != tc.want {
				t.Fatalf("token %+v %v, want scope %q", tok, err, tc.want)
			}
		})
	}
	t.Run("kitchen", func(t *testing.T) {
		q := h.authorizeQuery(scope, "s")
		b := h.browser(t)
		page := b.signIn(q, "kitchen@consent.test", h.passwd)
		body := string(page.Body)
		if !strings.Contains(body, `id="nothing"`) || strings.Contains(body, `id="approve"`) || !strings.Contains(body, `id="deny"`) {
			t.Fatalf("a kitchen user is offered to approve: %s", body)
		}
		r := b.post(form(t, page, q, "action", "approve"))
		if r.Status != 400 || r.Header.Get("Location") != "" {
			t.Fatalf("approving with nothing to grant: %d %v", r.Status, r.Header)
		}
		v := redirected(t, b.post(form(t, page, q, "action", "deny")), consentCB)
		if v.Get("error") != kassa.OAuthAccessDenied {
			t.Fatalf("deny: %v", v)
		}
	})
}

// TestConsentSignIn: wrong credentials show the form again with a message
// (HTML, not a JSON problem) and sign nobody in; a sign-in lasts ten
// minutes.
func TestConsentSignIn(t *testing.T) {
	h := mustConsentHub(t)
	q := h.authorizeQuery("orders:read", "s")
	b := h.browser(t)
	page := b.get(q)
	r := b.post(form(t, page, q, "action", "signin", "email", h.org.OwnerEmail, "password", "wrong password"))
	if r.Status != 200 || !strings.HasPrefix(r.Header.Get("Content-Type"), "text/html") ||
		!strings.Contains(string(r.Body), "Wrong e-mail or password") || !strings.Contains(string(r.Body), `id="signin"`) {
		t.Fatalf("wrong password: %d %s", r.Status, r.Body)
	}
	if !strings.Contains(string(r.Body), `value="`+h.org.OwnerEmail+`"`) || strings.Contains(string(r.Body), "wrong password") {
		t.Errorf("the form again should keep the e-mail and drop the password")
	}
	if again := b.get(q); !strings.Contains(string(again.Body), `id="signin"`) {
		t.Fatalf("signed in with a wrong password")
	}
	b.signIn(q, h.org.OwnerEmail, h.passwd)
	h.Clock.Advance(11 * time.Minute)
	if again := b.get(q); !strings.Contains(string(again.Body), `id="signin"`) {
		t.Fatalf("the sign-in outlived ten minutes: %s", again.Body)
	}
}

// TestConsentSignInIsThrottled: the page's sign-in goes through the
// first-party login's per-address throttle; when it is exhausted the form
// comes back as a 429 page with Retry-After, and the password is not tried.
func TestConsentSignInIsThrottled(t *testing.T) {
	// The hub's own set-up logs in three times (owner, cashier, kitchen);
	// the page gets one attempt more.
	h := mustConsentHub(t, func(c *node.Config) { c.LoginIPPerMinute, c.LoginIPBurst = 1, 4 })
	q := h.authorizeQuery("orders:read", "s")
	b := h.browser(t)
	page := b.get(q)
	r := b.post(form(t, page, q, "action", "signin", "email", h.org.OwnerEmail, "password", "wrong password"))
	if r.Status != 200 || !strings.Contains(string(r.Body), "Wrong e-mail or password") {
		t.Fatalf("first attempt: %d %s", r.Status, r.Body)
	}
	r = b.post(form(t, page, q, "action", "signin", "email", h.org.OwnerEmail, "password", h.passwd))
	if r.Status != 429 || r.Header.Get("Retry-After") == "" || !strings.HasPrefix(r.Header.Get("Content-Type"), "text/html") ||
		!strings.Contains(string(r.Body), "Too many sign-in attempts") || !strings.Contains(string(r.Body), `id="signin"`) {
		t.Fatalf("throttled attempt: %d %v %s", r.Status, r.Header, r.Body)
	}
}
