package httpapi_test

import (
	"context"
	"testing"
	"time"

	"kassa.dev/shared/kassa"
	"kassa.dev/sync/change"
	"kassa.dev/sync/hlc"
)

// applyUserChange changes a user row as a replicated change from the hub
// does at an edge (the way a role change or deactivation reaches a store).
func (tn *testNode) applyUserChange(orgID, userID string, fields map[string]any) {
	tn.t.Helper()
	c := change.Change{ID: tn.N.NewID(), OrgID: orgID, Entity: "user", EntityID: userID, Op: change.OpUpdate,
		Fields: fields, HLC: hlc.Timestamp{Wall: tn.Clock.Now().Add(time.Second).UnixMilli()}, Origin: "hub-of-this-test"}
	if err := tn.N.ApplyRemote(context.Background(), []change.Change{c}); err != nil {
		tn.t.Fatal(err)
	}
}

func TestDemotedOwnerLosesOwnerRightsOnTheNextRequest(t *testing.T) {
	tn := MustStartNode(t, kassa.NodeEdge, nil)
	o := tn.MustOrg("Demote Cafe")
	second := tn.MustUser(o, "second@demote.test", kassa.RoleOwner)
	me := tn.Do("GET", "/api/v1/auth/me", second, nil)
	if me.Status != 200 {
		t.Fatalf("me: %d %s", me.Status, me.Body)
	}
	loc := map[string]any{"name": "Shop 2", "timezone": "Australia/Sydney"}
	if r := tn.Do("POST", "/api/v1/locations", second, loc); r.Status != 201 {
		t.Fatalf("owner creates a location: %d %s", r.Status, r.Body)
	}
	tn.applyUserChange(o.ID, me.Data()["id"].(string), map[string]any{"role": "manager"})
	// The same access token, whose claim still says owner, is refused
	// owner-only routes at once, and keeps the manager's rights.
	mustProblem(t, tn.Do("POST", "/api/v1/locations", second, loc), 403, "forbidden")
	mustProblem(t, tn.Do("POST", "/api/v1/users", second, map[string]any{"email": "x@demote.test", "role": "cashier", "password": testPassword}), 403, "forbidden")
	if r := tn.Do("POST", "/api/v1/catalog/products", second, map[string]any{"name": "Tea", "sku": "T-1", "base_price": 400}); r.Status != 201 {
		t.Fatalf("manager rights after demotion: %d %s", r.Status, r.Body)
	}
	// Promotion takes effect at once too.
	tn.Clock.Advance(2 * time.Second)
	tn.applyUserChange(o.ID, me.Data()["id"].(string), map[string]any{"role": "owner"})
	if r := tn.Do("POST", "/api/v1/locations", second, map[string]any{"name": "Shop 3", "timezone": "Australia/Sydney"}); r.Status != 201 {
		t.Fatalf("owner again: %d %s", r.Status, r.Body)
	}
}

func TestDeactivatedUsersTokenIsRefusedOnTheNextRequest(t *testing.T) {
	tn := MustStartNode(t, kassa.NodeEdge, nil)
	o := tn.MustOrg("Deactivate Cafe")
	cashier := tn.MustUser(o, "c@deactivate.test", kassa.RoleCashier)
	me := tn.Do("GET", "/api/v1/auth/me", cashier, nil)
	if me.Status != 200 {
		t.Fatalf("me: %d %s", me.Status, me.Body)
	}
	tn.applyUserChange(o.ID, me.Data()["id"].(string), map[string]any{"is_active": false})
	mustProblem(t, tn.Do("GET", "/api/v1/auth/me", cashier, nil), 401, "unauthorized")
	mustProblem(t, tn.Do("GET", "/api/v1/catalog/products", cashier, nil), 401, "unauthorized")
	mustProblem(t, tn.Do("POST", "/api/v1/auth/login", "", map[string]any{"email": "c@deactivate.test", "password": testPassword}), 401, "unauthorized")
	// The owner's session is untouched.
	if r := tn.Do("GET", "/api/v1/catalog/products", o.Owner, nil); r.Status != 200 {
		t.Fatalf("owner: %d %s", r.Status, r.Body)
	}
}
