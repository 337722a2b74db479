package synctest

import (
	"maps"
	"strings"
	"testing"
	"time"

	"kassa.dev/shared/demo"
	"kassa.dev/shared/node"
	"kassa.dev/sync/change"
	"kassa.dev/sync/wait"
)

// staffPassword is the password of the cashiers these tests add.
const staffPassword = "temp cashier 1"

// addCashier adds a cashier of location with a manager's token at p.
func addCashier(t *testing.T, e *env, tok, email, location string) string {
	t.Helper()
	var u oneResp
	if st := e.edge.Call(t, "POST", "/api/v1/users", tok, map[string]any{"email": email, "name": "Temp " + email, "role": "cashier",
		"password": staffPassword, "location_ids": []string{location}}, &u); st != 201 {
		t.Fatalf("add a cashier at the edge: %d %v", st, u)
	}
	return u.Data["id"].(string)
}

// waitPushed waits until the edge is linked and has nothing left to push.
func waitPushed(t *testing.T, e *env) {
	t.Helper()
	wait.For(t, 30*time.Second, "the edge to push everything", func() bool {
		st := e.status(t, e.edge, e.edgeMgr)
		return st["connected"] == true && st["pending_up"] == float64(0)
	})
}

// noQuarantine fails on any record the hub quarantined.
func noQuarantine(t *testing.T, e *env) {
	t.Helper()
	var cs listResp
	e.hub.Call(t, "GET", "/api/v1/sync/conflicts?limit=200", e.hubTok, nil, &cs)
	for _, c := range cs.Data {
		if c["kind"] == "quarantined" {
			t.Errorf("the hub quarantined an honest edge's record: %v", c)
		}
	}
}

// TestAStoreManagerAddsACashierDuringAnOutage (issue 26): with the link
// down, the store's manager adds a temporary cashier, who signs in by
// password and PIN and sells; the hub admits it all when the link is
// back, and the cashier signs in there. Staff changes the hub alone
// makes stay 409 at the store. A deactivation at the store ends the
// cashier's sessions there at once and at the hub once it arrives; a
// reactivation brings no old session back.
func TestAStoreManagerAddsACashierDuringAnOutage(t *testing.T) {
	e := MustStartPair(t)
	owner := e.edge.Login(t, "owner@demo.test", demo.Password)
	e.proxy.cut()
	wait.For(t, 10*time.Second, "the edge to see the link down", func() bool { return e.status(t, e.edge, e.edgeMgr)["connected"] == false })

	id := addCashier(t, e, e.edgeMgr, "temp@demo.test", e.location)
	if st := e.edge.Call(t, "PUT", "/api/v1/users/"+id+"/pin", e.edgeMgr, map[string]any{"pin": "4321"}, nil); st != 200 {
		t.Fatalf("the manager sets the cashier's PIN offline: %d", st)
	}
	var signIn oneResp
	if st := e.edge.Call(t, "POST", "/api/v1/auth/pin", "", map[string]any{"user_id": id, "pin": "4321"}, &signIn); st != 200 {
		t.Fatalf("the cashier signs in by PIN offline: %d %v", st, signIn)
	}
	tok := signIn.Data["accessToken"].(string)
	product := e.products(t, e.edge, tok)[0]["id"].(string)
	var order oneResp
	if st := e.edge.Call(t, "POST", "/api/v1/orders", tok, map[string]any{"location_id": e.location,
		"line_items": []any{map[string]any{"product_id": product, "quantity": 1}}}, &order); st != 201 {
		t.Fatalf("the temporary cashier sells offline: %d %v", st, order)
	}
	// What only the hub changes stays 409 at the store, saying so; what
	// no manager may do is 403 here as everywhere.
	var p map[string]any
	if st := e.edge.Call(t, "POST", "/api/v1/users", owner, map[string]any{"email": "cook@demo.test", "role": "kitchen",
		"password": staffPassword}, &p); st != 409 || !strings.Contains(p["detail"].(string), "hub") {
		t.Errorf("the owner adds a cook at the store: %d %v, want 409 naming the hub", st, p)
	}
	if st := e.edge.Call(t, "PATCH", "/api/v1/users/"+id, e.edgeMgr, map[string]any{"role": "manager"}, nil); st != 403 {
		t.Errorf("the manager promotes the cashier at the store: %d, want 403", st)
	}

	e.proxy.restore()
	waitPushed(t, e)
	noQuarantine(t, e)
	var atHub, sold oneResp
	if st := e.hub.Call(t, "GET", "/api/v1/users/"+id, e.hubTok, nil, &atHub); st != 200 || atHub.Data["role"] != "cashier" || atHub.Data["has_pin"] != true {
		t.Fatalf("the cashier at the hub: %d %v", st, atHub)
	}
	if st := e.hub.Call(t, "GET", "/api/v1/orders/"+order.Data["id"].(string), e.hubTok, nil, &sold); st != 200 || sold.Data["created_by"] != id {
		t.Errorf("the temporary cashier's sale at the hub: %d %v", st, sold.Data["created_by"])
	}
	hubTok := e.hub.Login(t, "temp@demo.test", staffPassword)

	// Deactivated at the store: gone there at once, at the hub after sync.
	if st := e.edge.Call(t, "POST", "/api/v1/users/"+id+"/deactivate", e.edgeMgr, nil, nil); st != 200 {
		t.Fatalf("deactivate at the store: %d", st)
	}
	if st := e.edge.Call(t, "GET", "/api/v1/auth/me", tok, nil, nil); st != 401 {
		t.Errorf("the cashier's store session after deactivation: %d", st)
	}
	wait.For(t, 20*time.Second, "the hub to honour the deactivation", func() bool {
		return e.hub.Call(t, "GET", "/api/v1/auth/me", hubTok, nil, nil) == 401
	})
	if st := e.hub.Call(t, "POST", "/api/v1/auth/login", "", map[string]any{"email": "temp@demo.test", "password": staffPassword}, nil); st != 401 {
		t.Errorf("the deactivated cashier signs in at the hub: %d", st)
	}
	if st := e.edge.Call(t, "POST", "/api/v1/users/"+id+"/reactivate", e.edgeMgr, nil, nil); st != 200 {
		t.Fatalf("reactivate at the store: %d", st)
	}
	e.hub.WaitLogin(t, 20*time.Second, "temp@demo.test", staffPassword)
	if st := e.hub.Call(t, "GET", "/api/v1/auth/me", hubTok, nil, nil); st != 401 {
		t.Errorf("a session from before the deactivation works again at the hub: %d", st)
	}
	waitPushed(t, e)
	noQuarantine(t, e)
}

// TestForgedStaffChangesAreRefused (issue 26): a compromised store pushes
// user records derived from what a real store wrote when its manager
// added a cashier offline. The hub admits the honest copy and a cashier's
// own PIN, and refuses a role above cashier, a cashier of another
// location, an actor who manages no staff here (a cashier, a manager of
// another location), a cashier promoting itself, a costlier hash and an
// e-mail in use; the real store's own records are all admitted.
func TestForgedStaffChangesAreRefused(t *testing.T) {
	e := MustStartPair(t)
	var other, m2 oneResp
	if st := e.hub.Call(t, "POST", "/api/v1/locations", e.hubTok, map[string]any{"name": "Second store", "timezone": "Australia/Sydney"}, &other); st != 201 {
		t.Fatalf("second location: %d %v", st, other)
	}
	otherLoc := other.Data["id"].(string)
	if st := e.hub.Call(t, "POST", "/api/v1/users", e.hubTok, map[string]any{"email": "m2@demo.test", "role": "manager", "password": staffPassword,
		"location_ids": []string{otherLoc}}, &m2); st != 201 {
		t.Fatalf("a manager of the second store: %d %v", st, m2)
	}
	cashierID := hubState{e: e, tok: e.hub.Login(t, "cashier@demo.test", demo.Password)}.get(t, "/api/v1/auth/me")["id"].(string)
	managerID := hubState{e: e, tok: e.hub.Login(t, "manager@demo.test", demo.Password)}.get(t, "/api/v1/auth/me")["id"].(string)

	// What a real store writes: its manager adds a cashier offline and
	// gives them a PIN.
	e.proxy.cut()
	wait.For(t, 10*time.Second, "the edge to see the link down", func() bool { return e.status(t, e.edge, e.edgeMgr)["connected"] == false })
	real := addCashier(t, e, e.edgeMgr, "real@demo.test", e.location)
	if st := e.edge.Call(t, "PUT", "/api/v1/users/"+real+"/pin", e.edgeMgr, map[string]any{"pin": "2580"}, nil); st != 200 {
		t.Fatalf("PIN: %d", st)
	}
	written, err := node.ReadChanges(t.Context(), e.edgeDir, "user", real)
	if err != nil || len(written) != 2 || written[0].Op != change.OpInsert || written[0].Actor != managerID {
		t.Fatalf("the store's user records: %v %v", written, err)
	}
	insert, pin := written[0], written[1]

	f := e.mustForge(t, e.location)
	// derived copies the store's insert as a new user (its own id and
	// e-mail), with changes, made by actor.
	derived := func(actor string, set map[string]any) change.Change {
		id := newID()
		fields := maps.Clone(insert.Fields)
		fields["id"], fields["email"] = id, id[:8]+"@forged.test"
		maps.Copy(fields, set)
		return f.change("user", id, change.OpInsert, "", actor, fields)
	}
	honest := derived(managerID, nil)
	ownPIN := f.change("user", honest.EntityID, change.OpUpdate, "", honest.EntityID, maps.Clone(pin.Fields))
	ownPIN.HLC.Wall = honest.HLC.Wall + 1 // after the insert, as the store stamps it
	promote := f.change("user", honest.EntityID, change.OpUpdate, "", honest.EntityID, map[string]any{"role": "manager", "updated_at": pin.Fields["updated_at"]})
	costly := strings.Replace(insert.Fields["password_hash"].(string), "m=", "m=9", 1)
	cases := []struct {
		name   string
		change change.Change
		reason string
	}{
		{"a role above cashier", derived(managerID, map[string]any{"role": "manager"}), "refused_actor"},
		{"a cashier of another location", derived(managerID, map[string]any{"location_ids": `["` + otherLoc + `"]`}), "refused_actor"},
		{"a cashier of every location", derived(managerID, map[string]any{"location_ids": `[]`}), "refused_actor"},
		{"added by a cashier", derived(cashierID, nil), "refused_actor"},
		{"added by a manager of another location", derived(m2.Data["id"].(string), nil), "refused_actor"},
		{"the cashier promoting itself", promote, "refused_actor"},
		{"the cashier setting the manager's PIN", f.change("user", managerID, change.OpUpdate, "", honest.EntityID, maps.Clone(pin.Fields)), "refused_actor"},
		{"a hash costlier than the hub's", derived(managerID, map[string]any{"password_hash": costly}), "refused_value"},
		{"an e-mail in use", derived(managerID, map[string]any{"email": "owner@demo.test"}), "refused_value"},
	}
	batch := []change.Change{honest, ownPIN}
	for _, c := range cases {
		batch = append(batch, c.change)
	}
	rep := f.push(t, batch...)
	if rep.Error != "" || rep.Applied != 2 {
		t.Fatalf("the push: %+v, want the honest copy and its PIN applied", rep)
	}
	hub := hubState{e: e, tok: e.hubTok}
	byChange := map[string]map[string]any{}
	for _, c := range hub.list(t, "/api/v1/sync/conflicts?limit=200") {
		if c["kind"] == "quarantined" {
			byChange[c["remote"].(map[string]any)["id"].(string)] = c
		}
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			q, ok := byChange[c.change.ID]
			if !ok {
				t.Fatalf("not quarantined")
			}
			if got := q["local"].(map[string]any)["reason"]; got != c.reason {
				t.Errorf("reason = %v, want %s (%v)", got, c.reason, q["local"].(map[string]any)["error"])
			}
		})
	}
	if u := hub.get(t, "/api/v1/users/"+honest.EntityID); u["role"] != "cashier" || u["has_pin"] != true {
		t.Errorf("the honest copy at the hub: %v", u)
	}
	if u := hub.get(t, "/api/v1/users/"+managerID); u["has_pin"] != false {
		t.Errorf("the forged PIN of the manager: %v", u)
	}
	var users listResp
	e.hub.Call(t, "GET", "/api/v1/users?role=manager", e.hubTok, nil, &users)
	if len(users.Data) != 2 {
		t.Errorf("managers at the hub: %v", users.Data)
	}
	// The real store's records are admitted when its link is back.
	e.proxy.restore()
	waitPushed(t, e)
	if u := hub.get(t, "/api/v1/users/"+real); u["role"] != "cashier" || u["has_pin"] != true {
		t.Errorf("the store's cashier at the hub: %v", u)
	}
	var cs listResp
	e.hub.Call(t, "GET", "/api/v1/sync/conflicts?limit=200", e.hubTok, nil, &cs)
	if len(cs.Data) != len(cases) {
		t.Errorf("%d conflicts, want the %d forged records alone", len(cs.Data), len(cases))
	}
}
