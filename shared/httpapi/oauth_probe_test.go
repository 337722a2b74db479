package httpapi_test

import (
	"strings"
	"testing"

	"kassa.dev/shared/kassa"
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
		if !strings.Contains(p["detail"].(string), id) || again.Header.Get("Location") != "/api/v1/oauth/apps/"+id ||
			again.Header.Get("Idempotent-Replayed") != "true" || strings.Contains(string(again.Body), "client_secret") {
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
