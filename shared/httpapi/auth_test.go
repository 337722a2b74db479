package httpapi_test

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"kassa.dev/shared/kassa"
)

func TestLoginShapeToTheLetter(t *testing.T) {
	tn := MustStartNode(t, kassa.NodeEdge, nil)
	o := tn.MustOrg("Shape Cafe")
	r := tn.Do("POST", "/api/v1/auth/login", "", map[string]any{"email": o.OwnerEmail, "password": testPassword})
	if r.Status != 200 || !strings.HasPrefix(r.Header.Get("Content-Type"), "application/json") {
		t.Fatalf("login: %d %s", r.Status, r.Body)
	}
	var body map[string]map[string]any
	if err := json.Unmarshal(r.Body, &body); err != nil || len(body) != 1 {
		t.Fatalf("body must be an object with one key data: %s", r.Body)
	}
	d := body["data"]
	keys := []string{}
	for k := range d {
		keys = append(keys, k)
	}
	if len(d) != 4 || d["accessToken"] == nil || d["refreshToken"] == nil || d["expiresIn"] != float64(900) || d["user"] == nil {
		t.Fatalf("data keys %v: %s", keys, r.Body)
	}
	u := d["user"].(map[string]any)
	if len(u) != 3 || u["email"] != o.OwnerEmail || u["orgId"] != o.ID || !kassa.ValidID(u["id"].(string)) {
		t.Fatalf("user %v", u)
	}
	// The access token is a JWT whose claims carry sub, orgId, role and the issuing node.
	parts := strings.Split(d["accessToken"].(string), ".")
	if len(parts) != 3 {
		t.Fatalf("access token is not a JWT")
	}
	raw, _ := base64.RawURLEncoding.DecodeString(parts[1])
	var claims map[string]any
	json.Unmarshal(raw, &claims)
	if claims["sub"] != u["id"] || claims["orgId"] != o.ID || claims["role"] != "owner" ||
		!strings.HasPrefix(claims["iss"].(string), "edge:") || claims["exp"].(float64)-claims["iat"].(float64) != 900 {
		t.Fatalf("claims %v", claims)
	}
}

func TestLoginFailures(t *testing.T) {
	tn := MustStartNode(t, kassa.NodeEdge, nil)
	o := tn.MustOrg("Guess Cafe")
	cases := []struct {
		name   string
		body   any
		status int
		kind   string
	}{
		{"wrong password", map[string]any{"email": o.OwnerEmail, "password": "nope"}, 401, "unauthorized"},
		{"unknown e-mail", map[string]any{"email": "nobody@x.test", "password": "nope"}, 401, "unauthorized"},
		{"missing password", map[string]any{"email": o.OwnerEmail}, 422, "validation"},
		{"malformed JSON", `{"email":`, 400, "bad-request"},
		{"wrong type", map[string]any{"email": 7, "password": "x"}, 422, "validation"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			mustProblem(t, tn.Do("POST", "/api/v1/auth/login", "", c.body), c.status, c.kind)
		})
	}
	// Failed logins no longer lock the account (login_lockout_test.go has
	// the lockout by account and address): the right password works.
	if r := tn.Do("POST", "/api/v1/auth/login", "", map[string]any{"email": o.OwnerEmail, "password": testPassword}); r.Status != 200 {
		t.Fatalf("login after failures: %d %s", r.Status, r.Body)
	}
}

func TestRefreshRotatesAndReuseRevokesTheSession(t *testing.T) {
	tn := MustStartNode(t, kassa.NodeEdge, nil)
	o := tn.MustOrg("Rotate Cafe")
	first := tn.MustLogin(o.OwnerEmail, testPassword)
	r := tn.Do("POST", "/api/v1/auth/refresh", "", map[string]any{"refreshToken": first["refreshToken"]})
	if r.Status != 200 {
		t.Fatalf("refresh: %d %s", r.Status, r.Body)
	}
	second := r.Data()
	if second["refreshToken"] == first["refreshToken"] || second["accessToken"] == nil || second["expiresIn"] != float64(900) {
		t.Fatalf("refresh did not rotate: %s", r.Body)
	}
	if tn.Do("GET", "/api/v1/auth/me", second["accessToken"].(string), nil).Status != 200 {
		t.Fatal("new access token refused")
	}
	// The old refresh token is refused, and its reuse revokes the session:
	// the new tokens stop working too.
	mustProblem(t, tn.Do("POST", "/api/v1/auth/refresh", "", map[string]any{"refreshToken": first["refreshToken"]}), 401, "unauthorized")
	mustProblem(t, tn.Do("POST", "/api/v1/auth/refresh", "", map[string]any{"refreshToken": second["refreshToken"]}), 401, "unauthorized")
	mustProblem(t, tn.Do("GET", "/api/v1/auth/me", second["accessToken"].(string), nil), 401, "unauthorized")
	// Another session of the same user is untouched.
	if tn.Do("GET", "/api/v1/auth/me", o.Owner, nil).Status != 200 {
		t.Fatal("an unrelated session was revoked")
	}
	// An access token is no refresh token.
	mustProblem(t, tn.Do("POST", "/api/v1/auth/refresh", "", map[string]any{"refreshToken": o.Owner}), 401, "unauthorized")
	mustProblem(t, tn.Do("POST", "/api/v1/auth/refresh", "", map[string]any{}), 422, "validation")
}

func TestLogoutRevokesAccessAndRefresh(t *testing.T) {
	tn := MustStartNode(t, kassa.NodeHub, nil)
	o := tn.MustOrg("Logout Cafe")
	l := tn.MustLogin(o.OwnerEmail, testPassword)
	access := l["accessToken"].(string)
	if r := tn.Do("POST", "/api/v1/auth/logout", access, nil); r.Status != 204 || len(r.Body) != 0 {
		t.Fatalf("logout: %d %s", r.Status, r.Body)
	}
	r := tn.Do("GET", "/api/v1/auth/me", access, nil)
	mustProblem(t, r, 401, "unauthorized")
	if !strings.HasPrefix(r.Header.Get("WWW-Authenticate"), "Bearer") {
		t.Fatalf("401 without WWW-Authenticate: %v", r.Header)
	}
	mustProblem(t, tn.Do("POST", "/api/v1/auth/refresh", "", map[string]any{"refreshToken": l["refreshToken"]}), 401, "unauthorized")
}

func TestAccessTokenExpiresAfter900Seconds(t *testing.T) {
	tn := MustStartNode(t, kassa.NodeEdge, nil)
	o := tn.MustOrg("Expiry Cafe")
	tn.Clock.Advance(899 * time.Second)
	me := tn.Do("GET", "/api/v1/auth/me", o.Owner, nil)
	if me.Status != 200 || me.Data()["email"] != o.OwnerEmail || me.Data()["role"] != "owner" || me.Data()["org_id"] != o.ID {
		t.Fatalf("me before expiry: %d %s", me.Status, me.Body)
	}
	tn.Clock.Advance(2 * time.Second)
	mustProblem(t, tn.Do("GET", "/api/v1/auth/me", o.Owner, nil), 401, "unauthorized")
}

func TestBearerTokenChecks(t *testing.T) {
	tn := MustStartNode(t, kassa.NodeEdge, nil)
	o := tn.MustOrg("Bearer Cafe")
	other := MustStartNode(t, kassa.NodeEdge, nil).MustOrg("Bearer Cafe") // same org name, another node's key
	for name, tok := range map[string]string{
		"missing":          "",
		"garbage":          "not-a-jwt",
		"tampered":         o.Owner[:len(o.Owner)-2] + "xx",
		"another node key": other.Owner,
	} {
		t.Run(name, func(t *testing.T) {
			mustProblem(t, tn.Do("GET", "/api/v1/catalog/products", tok, nil), 401, "unauthorized")
		})
	}
}

func TestRolesMapToScopes(t *testing.T) {
	tn := MustStartNode(t, kassa.NodeEdge, nil)
	o := tn.MustOrg("Roles Cafe")
	kitchen := tn.MustUser(o, "k@roles.test", kassa.RoleKitchen)
	cashier := tn.MustUser(o, "c@roles.test", kassa.RoleCashier)
	manager := tn.MustUser(o, "m@roles.test", kassa.RoleManager)
	product := map[string]any{"name": "Tea", "sku": "T-1", "base_price": 400}
	mustProblem(t, tn.Do("POST", "/api/v1/catalog/products", cashier, product), 403, "forbidden")
	mustProblem(t, tn.Do("POST", "/api/v1/catalog/products", kitchen, product), 403, "forbidden")
	if r := tn.Do("POST", "/api/v1/catalog/products", manager, product); r.Status != 201 {
		t.Fatalf("manager create: %d %s", r.Status, r.Body)
	}
	if r := tn.Do("GET", "/api/v1/catalog/products", cashier, nil); r.Status != 200 || len(r.List()) != 1 {
		t.Fatalf("cashier read: %d %s", r.Status, r.Body)
	}
	loc := map[string]any{"name": "Shop 2", "timezone": "Australia/Sydney"}
	mustProblem(t, tn.Do("POST", "/api/v1/locations", manager, loc), 403, "forbidden")
	if r := tn.Do("POST", "/api/v1/locations", o.Owner, loc); r.Status != 201 || r.Data()["currency"] != "AUD" {
		t.Fatalf("owner create location: %d %s", r.Status, r.Body)
	}
	mustProblem(t, tn.Do("POST", "/api/v1/users", manager, map[string]any{"email": "x@roles.test", "role": "cashier", "password": testPassword}), 403, "forbidden")
	if r := tn.Do("GET", "/api/v1/locations", cashier, nil); r.Status != 200 || len(r.List()) != 1 {
		t.Fatalf("cashier lists locations: %d %s", r.Status, r.Body)
	}
}

// TestAddingAUserDoesNotRevealAnotherOrgsEmail: e-mails sign in alone, so
// they are unique on the node; an owner who adds a user with an address
// another org's staff use gets exactly the answer an address of its own
// org gets, a 422 on email that names neither, and nothing is stored
// (issue 21, L2).
func TestAddingAUserDoesNotRevealAnotherOrgsEmail(t *testing.T) {
	tn := MustStartNode(t, kassa.NodeHub, nil)
	a, b := tn.MustOrg("Reveal A"), tn.MustOrg("Reveal B")
	tn.MustUser(a, "staff@a.test", kassa.RoleCashier)
	tn.MustUser(b, "staff@b.test", kassa.RoleCashier)
	body := func(email string) map[string]any {
		return map[string]any{"email": email, "role": "cashier", "password": testPassword, "name": "New"}
	}
	answer := func(email string) string {
		t.Helper()
		p := mustProblem(t, tn.Do("POST", "/api/v1/users", a.Owner, body(email)), 422, "validation")
		return fmt.Sprint(p["title"], p["detail"], p["errors"])
	}
	before := tn.outboxLen()
	own, other, otherOwner := answer("staff@a.test"), answer("STAFF@b.test"), answer(b.OwnerEmail)
	if own != other || own != otherOwner {
		t.Fatalf("answers differ:\nown org:     %s\nother org:   %s\nother owner: %s", own, other, otherOwner)
	}
	if strings.Contains(other, "exist") || strings.Contains(other, "b.test") || strings.Contains(other, "org") {
		t.Fatalf("the answer says where the address is: %s", other)
	}
	malformed := mustProblem(t, tn.Do("POST", "/api/v1/users", a.Owner, body("not-an-address")), 422, "validation")
	if !strings.Contains(fmt.Sprint(malformed["errors"]), "field:email") {
		t.Fatalf("a malformed address: %v", malformed["errors"])
	}
	if n := tn.outboxLen(); n != before {
		t.Fatalf("refused users wrote %d change records", n-before)
	}
	tn.MustLogin("staff@b.test", testPassword)
}
