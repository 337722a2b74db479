package httpapi_test

import (
	"strings"
	"testing"

	"github.com/alexedwards/argon2id"

	"kassa.dev/shared/kassa"
	"kassa.dev/shared/password"
)

// TestHubRehashesAnOldHashOnLogin: a user whose hash was made with the old
// parameters (64 MiB) logs in at the hub; the hub stores a hash made with
// the current ones, as a replicated change (so the edges get it), and the
// password still works.
func TestHubRehashesAnOldHashOnLogin(t *testing.T) {
	tn := MustStartNode(t, kassa.NodeHub, nil)
	o := tn.MustOrg("Rehash Cafe")
	current := password.Params
	password.Params = &argon2id.Params{Memory: 64 * 1024, Iterations: 1, Parallelism: 2, SaltLength: 16, KeyLength: 32}
	r := tn.Do("POST", "/api/v1/users", o.Owner, map[string]any{"email": "old@rehash.test", "role": "cashier", "password": testPassword})
	password.Params = current
	if r.Status != 201 {
		t.Fatalf("create user: %d %s", r.Status, r.Body)
	}
	id := r.Data()["id"].(string)
	hashes := func() []string {
		var hs []string
		for _, c := range tn.changes("user", id) {
			if h, ok := c.Fields["password_hash"].(string); ok {
				hs = append(hs, h)
			}
		}
		return hs
	}
	if hs := hashes(); len(hs) != 1 || !strings.HasPrefix(hs[0], "$argon2id$v=19$m=65536,t=1,p=2$") {
		t.Fatalf("hashes before login: %v", hs)
	}
	tn.MustLogin("old@rehash.test", testPassword)
	hs := hashes()
	if len(hs) != 2 || !strings.HasPrefix(hs[1], "$argon2id$v=19$m=19456,t=2,p=1$") {
		t.Fatalf("hashes after login: %v", hs)
	}
	tn.MustLogin("old@rehash.test", testPassword)
	if len(hashes()) != 2 {
		t.Fatal("a current hash was rehashed again")
	}
}
