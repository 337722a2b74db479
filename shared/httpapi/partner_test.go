package httpapi_test

import (
	"context"
	"fmt"
	"net/url"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"kassa.dev/shared/kassa"
	"kassa.dev/shared/node"
	"kassa.dev/shared/pgtest"
)

// operatorToken is the test hub's --operator-token.
const operatorToken = "operator-token-of-the-test-hub-0123456789"

// partnerApps registers real partner apps at the hub and holds their
// client_credentials access tokens: an app's actor has an org, a client
// id and scopes, and no user.
type partnerApps struct {
	tn  *testNode
	ids map[string]string // app name → client id
}

// app registers an app of o with the scopes (o's owner registers it) and
// returns a client_credentials access token of it.
func (p *partnerApps) app(o *testOrg, name string, scopes ...kassa.Scope) string {
	p.tn.t.Helper()
	app := p.tn.mustApp(o, scopes...)
	r := p.tn.form("/api/v1/oauth/token", url.Values{"grant_type": {"client_credentials"}}, app.ID, app.Secret)
	tok, _ := r.JSON()["access_token"].(string)
	if r.Status != 200 || tok == "" {
		p.tn.t.Fatalf("client_credentials for %s: %d %s", name, r.Status, r.Body)
	}
	p.ids[name] = app.ID
	return tok
}

// MustStartPartnerHub starts a hub with the operator token and a way to
// register partner apps; tweak may change its config further.
func MustStartPartnerHub(t testing.TB, tweak func(*node.Config)) (*testNode, *partnerApps) {
	t.Helper()
	tn := MustStartNode(t, kassa.NodeHub, func(c *node.Config) {
		c.OperatorToken = operatorToken
		if tweak != nil {
			tweak(c)
		}
	})
	return tn, &partnerApps{tn: tn, ids: map[string]string{}}
}

// tenantBody is a valid POST /partners/tenants body for name.
func tenantBody(name string) map[string]any {
	email := strings.ToLower(strings.ReplaceAll(name, " ", "")) + "@tenant.test"
	return map[string]any{"name": name, "currency": "NZD",
		"owner":    map[string]any{"email": email, "name": name + " owner", "password": testPassword},
		"location": map[string]any{"name": name + " Main St", "timezone": "Pacific/Auckland", "address": "1 Main St"}}
}

// MustTenant creates a tenant over HTTP with token and logs its owner in.
func (tn *testNode) MustTenant(token, name string) *testOrg {
	tn.t.Helper()
	body := tenantBody(name)
	r := tn.Do("POST", "/api/v1/partners/tenants", token, body)
	if r.Status != 201 {
		tn.t.Fatalf("create tenant %s: %d %s", name, r.Status, r.Body)
	}
	email := body["owner"].(map[string]any)["email"].(string)
	return &testOrg{ID: r.Data()["id"].(string), OwnerEmail: email, Owner: tn.MustLogin(email, testPassword)["accessToken"].(string)}
}

// TestTenantByOperatorOwnerWorksAtOnce creates a tenant with the operator
// token: 201 with Location, the org, its owner (no password) and its
// location in the org's currency; the owner logs in at once and sees that
// location.
func TestTenantByOperatorOwnerWorksAtOnce(t *testing.T) {
	tn, _ := MustStartPartnerHub(t, nil)
	r := tn.Do("POST", "/api/v1/partners/tenants", operatorToken, tenantBody("Kiwi Bakery"))
	if r.Status != 201 {
		t.Fatalf("create: %d %s", r.Status, r.Body)
	}
	d := r.Data()
	org, owner, loc := d["org"].(map[string]any), d["owner"].(map[string]any), d["location"].(map[string]any)
	if d["id"] != org["id"] || org["name"] != "Kiwi Bakery" || org["currency"] != "NZD" || d["created_by"] != "operator" ||
		d["rate_limit"] != nil || r.Header.Get("Location") != "/api/v1/partners/tenants/"+d["id"].(string) {
		t.Fatalf("tenant: %s %v", r.Body, r.Header)
	}
	if owner["email"] != "kiwibakery@tenant.test" || owner["role"] != "owner" || owner["org_id"] != org["id"] ||
		strings.Contains(string(r.Body), "password") || strings.Contains(string(r.Body), testPassword) {
		t.Fatalf("owner: %s", r.Body)
	}
	if loc["currency"] != "NZD" || loc["timezone"] != "Pacific/Auckland" || loc["org_id"] != org["id"] {
		t.Fatalf("location: %s", r.Body)
	}
	tok := tn.MustLogin("kiwibakery@tenant.test", testPassword)["accessToken"].(string)
	locs := tn.Do("GET", "/api/v1/locations", tok, nil).List()
	if len(locs) != 1 || locs[0].(map[string]any)["id"] != loc["id"] {
		t.Fatalf("the owner's locations: %v", locs)
	}
	if me := tn.Do("GET", "/api/v1/auth/me", tok, nil).Data(); me["id"] != owner["id"] {
		t.Fatalf("me: %v", me)
	}
}

// TestTenantBadBodyStoresNothing: invalid fields are one 422 naming each
// (nested as owner.email), an unknown field is 422, a taken owner e-mail
// is 409, and none of them leaves a row behind (the org of the 409 is
// rolled back with it: its name is free afterwards).
func TestTenantBadBodyStoresNothing(t *testing.T) {
	tn, _ := MustStartPartnerHub(t, nil)
	before := tn.outboxLen()
	p := mustProblem(t, tn.Do("POST", "/api/v1/partners/tenants", operatorToken, map[string]any{
		"name": "", "currency": "dollars", "owner": map[string]any{"email": "not-an-email", "password": "short"},
		"location": map[string]any{"name": "", "timezone": "Mars/Olympus"}}), 422, "validation")
	var fields []string
	for _, f := range p["errors"].([]any) {
		fields = append(fields, f.(map[string]any)["field"].(string))
	}
	if got := strings.Join(fields, ","); got != "name,currency,owner.name,owner.email,owner.password,location.name,location.timezone" {
		t.Fatalf("fields %s: %v", got, p)
	}
	body := tenantBody("Second Cafe")
	body["owner"].(map[string]any)["role"] = "manager"
	mustProblem(t, tn.Do("POST", "/api/v1/partners/tenants", operatorToken, body), 422, "validation")
	mustProblem(t, tn.Do("POST", "/api/v1/partners/tenants", operatorToken, "{"), 400, "bad-request")

	tn.MustOrg("First Cafe") // owner firstcafe@owner.test
	before = tn.outboxLen()
	dup := tenantBody("Dup Cafe")
	dup["owner"].(map[string]any)["email"] = "firstcafe@owner.test"
	if p := mustProblem(t, tn.Do("POST", "/api/v1/partners/tenants", operatorToken, dup), 422, "validation"); fmt.Sprint(p["errors"]) != "[map[field:owner.email message:cannot be used for a new user: give another address]]" {
		t.Fatalf("a taken owner e-mail: %v", p["errors"])
	}
	if n := tn.outboxLen(); n != before {
		t.Fatalf("refused tenants wrote %d change records", n-before)
	}
	if r := tn.Do("POST", "/api/v1/partners/tenants", operatorToken, tenantBody("Dup Cafe")); r.Status != 201 {
		t.Fatalf("the name of a refused tenant is taken: %d %s", r.Status, r.Body)
	}
	mustProblem(t, tn.Do("POST", "/api/v1/partners/tenants", operatorToken, tenantBody("Dup Cafe")), 409, "conflict")
}

// TestTenantCallers: only a token with partners:write (no role grants it)
// or the operator token may create tenants; a partner lists and reads only
// the tenants its app created; only the operator sets rate limits.
func TestTenantCallers(t *testing.T) {
	tn, apps := MustStartPartnerHub(t, nil)
	reseller := tn.MustOrg("Reseller")
	appA := apps.app(reseller, "client-a", kassa.ScopePartnersWrite)
	appB := apps.app(reseller, "client-b", kassa.ScopePartnersWrite)
	noScope := apps.app(reseller, "client-c", kassa.ScopeCatalogRead)
	post := func(tok, name string) *resp { return tn.Do("POST", "/api/v1/partners/tenants", tok, tenantBody(name)) }

	mustProblem(t, post("", "Nobody"), 401, "unauthorized")
	mustProblem(t, post(operatorToken+"x", "Wrong operator"), 401, "unauthorized")
	if p := mustProblem(t, post(reseller.Owner, "Owner JWT"), 403, "forbidden"); !strings.Contains(p["detail"].(string), "partners:write") {
		t.Fatalf("detail: %v", p)
	}
	mustProblem(t, post(noScope, "No scope"), 403, "forbidden")

	a := post(appA, "Tenant A")
	if a.Status != 201 || a.Data()["created_by"] != apps.ids["client-a"] {
		t.Fatalf("partner create: %d %s", a.Status, a.Body)
	}
	idA := a.Data()["id"].(string)
	tn.MustTenant(appB, "Tenant B")
	tn.MustTenant(operatorToken, "Tenant Op")

	names := func(tok string) string {
		var out []string
		for _, v := range tn.Do("GET", "/api/v1/partners/tenants", tok, nil).List() {
			out = append(out, v.(map[string]any)["org"].(map[string]any)["name"].(string))
		}
		return strings.Join(out, ",")
	}
	if got := names(appA); got != "Tenant A" {
		t.Fatalf("app A lists %q", got)
	}
	if got := names(appB); got != "Tenant B" {
		t.Fatalf("app B lists %q", got)
	}
	if got := names(operatorToken); strings.Count(got, ",") != 3 || !strings.Contains(got, "Reseller") {
		t.Fatalf("the operator lists %q", got)
	}
	if r := tn.Do("GET", "/api/v1/partners/tenants/"+idA, appA, nil); r.Status != 200 || r.Data()["owner"].(map[string]any)["email"] != "tenanta@tenant.test" {
		t.Fatalf("app A reads its tenant: %d %s", r.Status, r.Body)
	}
	mustProblem(t, tn.Do("GET", "/api/v1/partners/tenants/"+idA, appB, nil), 404, "not-found")

	limit := map[string]any{"per_minute": 6000, "burst": 9000}
	mustProblem(t, tn.Do("PUT", "/api/v1/partners/tenants/"+idA+"/rate-limit", appA, limit), 403, "forbidden")
	mustProblem(t, tn.Do("PUT", "/api/v1/partners/tenants/"+idA+"/rate-limit", reseller.Owner, limit), 403, "forbidden")
	if r := tn.Do("GET", "/api/v1/partners/tenants/"+idA, appA, nil); r.Data()["rate_limit"] != nil {
		t.Fatalf("a refused rate limit was stored: %s", r.Body)
	}
}

// TestOperatorPathOffWithoutFlag: without --operator-token no bearer
// token is the operator's, not even an empty one.
func TestOperatorPathOffWithoutFlag(t *testing.T) {
	tn, _ := MustStartPartnerHub(t, func(c *node.Config) { c.OperatorToken = "" })
	mustProblem(t, tn.Do("POST", "/api/v1/partners/tenants", operatorToken, tenantBody("Nope")), 401, "unauthorized")
	mustProblem(t, tn.Do("POST", "/api/v1/partners/tenants", "", tenantBody("Nope"), "Authorization", "Bearer "), 401, "unauthorized")
}

// TestOrgRateLimitPerOrgSurvivesRestart: the operator gives an org its own
// limit; that org's answers carry it (errors after authentication too),
// its burst ends in 429 with Retry-After while another org is untouched,
// OAuth and first-party tokens of the org share its bucket, the clock
// refills it, and the limit holds after a restart until the operator
// removes it.
func TestOrgRateLimitPerOrgSurvivesRestart(t *testing.T) {
	dir := t.TempDir()
	tweak := func(c *node.Config) { c.DataDir = dir; c.RatePerMinute, c.RateBurst = 600, 900 }
	tn, apps := MustStartPartnerHub(t, tweak)
	busy := tn.MustTenant(operatorToken, "Busy Shop")
	quiet := tn.MustTenant(operatorToken, "Quiet Shop")
	app := apps.app(busy, "busy-app", kassa.ScopeCatalogRead)

	r := tn.Do("PUT", "/api/v1/partners/tenants/"+busy.ID+"/rate-limit", operatorToken, map[string]any{"per_minute": 60, "burst": 4})
	if r.Status != 200 || r.Data()["rate_limit"].(map[string]any)["burst"] != float64(4) {
		t.Fatalf("set limit: %d %s", r.Status, r.Body)
	}
	mustProblem(t, tn.Do("PUT", "/api/v1/partners/tenants/"+busy.ID+"/rate-limit", operatorToken, map[string]any{"per_minute": 0, "burst": 4}), 422, "validation")
	mustProblem(t, tn.Do("PUT", "/api/v1/partners/tenants/"+uuid.NewString()+"/rate-limit", operatorToken, map[string]any{"per_minute": 60, "burst": 4}), 404, "not-found")

	headers := func(r *resp, limit, remaining string) {
		t.Helper()
		if r.Header.Get("X-RateLimit-Limit") != limit || r.Header.Get("X-RateLimit-Remaining") != remaining {
			t.Fatalf("%d: limit %q remaining %q, want %s %s: %s", r.Status, r.Header.Get("X-RateLimit-Limit"),
				r.Header.Get("X-RateLimit-Remaining"), limit, remaining, r.Body)
		}
	}
	// Four tokens: a 200, a 404, a 422 and a 403 (OAuth, lacking the
	// scope), all counted in one bucket and all carrying the headers.
	headers(tn.Do("GET", "/api/v1/locations", busy.Owner, nil), "60", "3")
	headers(tn.Do("GET", "/api/v1/catalog/products/"+uuid.NewString(), app, nil), "60", "2")
	headers(tn.Do("POST", "/api/v1/catalog/products", busy.Owner, map[string]any{"name": ""}), "60", "1")
	headers(tn.Do("POST", "/api/v1/catalog/products", app, map[string]any{"name": "x"}), "60", "0")
	for _, tok := range []string{busy.Owner, app} {
		over := tn.Do("GET", "/api/v1/locations", tok, nil)
		mustProblem(t, over, 429, "rate-limited")
		headers(over, "60", "0")
		if s, _ := strconv.Atoi(over.Header.Get("Retry-After")); s < 1 {
			t.Fatalf("Retry-After %q", over.Header.Get("Retry-After"))
		}
	}
	headers(tn.Do("GET", "/api/v1/locations", quiet.Owner, nil), "600", "899")
	tn.Clock.Advance(time.Second)
	headers(tn.Do("GET", "/api/v1/locations", app, nil), "60", "0")

	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := tn.N.Shutdown(ctx); err != nil {
		t.Fatal(err)
	}
	tn, _ = MustStartPartnerHub(t, tweak)
	busy.Owner = tn.MustLogin(busy.OwnerEmail, testPassword)["accessToken"].(string)
	// On PostgreSQL the bucket is the database's, by its clock: it is not
	// refilled by the test's clock and carries over the restart, so only
	// the limit is the stored one's (docs/postgres.md).
	limitOnly := func(r *resp, limit string) {
		t.Helper()
		if r.Header.Get("X-RateLimit-Limit") != limit {
			t.Fatalf("%d: limit %q, want %s: %s", r.Status, r.Header.Get("X-RateLimit-Limit"), limit, r.Body)
		}
	}
	if pgtest.OnPostgres() {
		limitOnly(tn.Do("GET", "/api/v1/locations", busy.Owner, nil), "60")
	} else {
		headers(tn.Do("GET", "/api/v1/locations", busy.Owner, nil), "60", "3")
	}
	if r := tn.Do("DELETE", "/api/v1/partners/tenants/"+busy.ID+"/rate-limit", operatorToken, nil); r.Status != 204 {
		t.Fatalf("delete limit: %d %s", r.Status, r.Body)
	}
	if pgtest.OnPostgres() {
		limitOnly(tn.Do("GET", "/api/v1/locations", busy.Owner, nil), "600")
	} else {
		headers(tn.Do("GET", "/api/v1/locations", busy.Owner, nil), "600", "2")
	}
	if r := tn.Do("GET", "/api/v1/partners/tenants/"+busy.ID, operatorToken, nil); r.Data()["rate_limit"] != nil {
		t.Fatalf("removed limit still stored: %s", r.Body)
	}
}

// TestTenantCurrencyIsISO4217AndNameNotBlank: a tenant's currency must be
// the ISO 4217 code of a currency in use (golang.org/x/text/currency), not
// any three capitals, and its name (and its owner's and location's) must
// not be blank; each is a 422 naming the field that stores nothing (issue
// 21, N4 and N5). A location added later is held to the same currencies.
func TestTenantCurrencyIsISO4217AndNameNotBlank(t *testing.T) {
	tn, _ := MustStartPartnerHub(t, nil)
	before := tn.outboxLen()
	for _, c := range []struct {
		name  string
		mut   func(b map[string]any)
		field string
	}{
		{"an unknown code", func(b map[string]any) { b["currency"] = "ZZZ" }, "currency"},
		{"no currency", func(b map[string]any) { b["currency"] = "XXX" }, "currency"},
		{"the testing code", func(b map[string]any) { b["currency"] = "XTS" }, "currency"},
		{"gold", func(b map[string]any) { b["currency"] = "XAU" }, "currency"},
		{"a withdrawn currency", func(b map[string]any) { b["currency"] = "DEM" }, "currency"},
		{"lower case", func(b map[string]any) { b["currency"] = "nzd" }, "currency"},
		{"the location's", func(b map[string]any) { b["location"].(map[string]any)["currency"] = "ABC" }, "location.currency"},
		{"a blank name", func(b map[string]any) { b["name"] = "   " }, "name"},
		{"a name of tabs and newlines", func(b map[string]any) { b["name"] = "\t\n" }, "name"},
		{"a blank owner name", func(b map[string]any) { b["owner"].(map[string]any)["name"] = "  " }, "owner.name"},
		{"a blank location name", func(b map[string]any) { b["location"].(map[string]any)["name"] = " " }, "location.name"},
	} {
		t.Run(c.name, func(t *testing.T) {
			b := tenantBody("Blank " + c.name)
			c.mut(b)
			p := mustProblem(t, tn.Do("POST", "/api/v1/partners/tenants", operatorToken, b), 422, "validation")
			errs := p["errors"].([]any)
			if len(errs) != 1 || errs[0].(map[string]any)["field"] != c.field {
				t.Fatalf("errors %v, want one naming %s", errs, c.field)
			}
		})
	}
	if n := tn.outboxLen(); n != before {
		t.Fatalf("refused tenants wrote %d change records", n-before)
	}
	if l := tn.Do("GET", "/api/v1/partners/tenants", operatorToken, nil).List(); len(l) != 0 {
		t.Fatalf("refused tenants were stored: %v", l)
	}
	for _, cur := range []string{"JPY", "KWD", "XAF", "CHF"} {
		b := tenantBody("Tenant in " + cur)
		b["currency"] = cur
		if r := tn.Do("POST", "/api/v1/partners/tenants", operatorToken, b); r.Status != 201 || r.Data()["org"].(map[string]any)["currency"] != cur {
			t.Fatalf("a tenant in %s: %d %s", cur, r.Status, r.Body)
		}
	}
	o := tn.MustTenant(operatorToken, "Later Stores")
	loc := map[string]any{"name": "Second", "timezone": "Pacific/Auckland", "currency": "QQQ"}
	if p := mustProblem(t, tn.Do("POST", "/api/v1/locations", o.Owner, loc), 422, "validation"); !strings.Contains(fmt.Sprint(p["errors"]), "field:currency") {
		t.Fatalf("a location in QQQ: %v", p["errors"])
	}
}
