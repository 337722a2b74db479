package httpapi_test

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"kassa.dev/shared/kassa"
)

// staffWorld is an org with two locations, a manager of the first and a
// cashier the manager added there.
type staffWorld struct {
	tn                    *testNode
	o                     *testOrg
	ownerID, loc1, loc2   string
	mgr, mgrID            string
	cashier, cashierID    string
	cashierEmail, mgrMail string
}

func newStaffWorld(t *testing.T, kind string) *staffWorld {
	t.Helper()
	tn := MustStartNode(t, kind, nil)
	w := &staffWorld{tn: tn, o: tn.MustOrg("Staff " + kind), cashierEmail: "casey@staff.test", mgrMail: "mia@staff.test"}
	w.ownerID = tn.Do("GET", "/api/v1/auth/me", w.o.Owner, nil).Data()["id"].(string)
	for i, name := range []string{"Main St", "Back St"} {
		r := tn.Do("POST", "/api/v1/locations", w.o.Owner, map[string]any{"name": name, "timezone": "Australia/Sydney"})
		if r.Status != 201 {
			t.Fatalf("location: %d %s", r.Status, r.Body)
		}
		*[]*string{&w.loc1, &w.loc2}[i] = r.Data()["id"].(string)
	}
	w.mgrID = w.create(t, w.o.Owner, w.mgrMail, "manager", []string{w.loc1})
	w.mgr = tn.MustLogin(w.mgrMail, testPassword)["accessToken"].(string)
	w.cashierID = w.create(t, w.mgr, w.cashierEmail, "cashier", []string{w.loc1})
	w.cashier = tn.MustLogin(w.cashierEmail, testPassword)["accessToken"].(string)
	return w
}

func (w *staffWorld) create(t *testing.T, tok, email, role string, locs []string) string {
	t.Helper()
	r := w.tn.Do("POST", "/api/v1/users", tok, map[string]any{"email": email, "name": role + " " + email, "role": role,
		"password": testPassword, "location_ids": locs})
	if r.Status != 201 {
		t.Fatalf("create %s %s: %d %s", role, email, r.Status, r.Body)
	}
	return r.Data()["id"].(string)
}

func ids(l []any) []string {
	var out []string
	for _, x := range l {
		out = append(out, x.(map[string]any)["id"].(string))
	}
	return out
}

// TestStaffAreManagedByTheRoleRules: an owner manages everyone but their
// own role and status; a manager adds, lists, edits, deactivates and
// reactivates cashiers of the manager's locations, and nobody else; a
// cashier reads only themselves. At both kinds of node (not enrolled).
func TestStaffAreManagedByTheRoleRules(t *testing.T) {
	for _, kind := range []string{kassa.NodeHub, kassa.NodeEdge} {
		t.Run(kind, func(t *testing.T) {
			w := newStaffWorld(t, kind)
			tn := w.tn
			c := tn.Do("GET", "/api/v1/users/"+w.cashierID, w.mgr, nil).Data()
			if c["role"] != "cashier" || fmt.Sprint(c["location_ids"]) != "["+w.loc1+"]" || c["is_active"] != true || c["has_pin"] != false {
				t.Fatalf("the manager's cashier: %v", c)
			}
			// A manager adds only cashiers of the manager's locations.
			for what, body := range map[string]map[string]any{
				"a manager":                     {"email": "m2@staff.test", "role": "manager", "password": testPassword, "location_ids": []string{w.loc1}},
				"a cashier of another location": {"email": "c2@staff.test", "role": "cashier", "password": testPassword, "location_ids": []string{w.loc2}},
				"a cashier of every location":   {"email": "c3@staff.test", "role": "cashier", "password": testPassword},
			} {
				if r := tn.Do("POST", "/api/v1/users", w.mgr, body); r.Status != 403 {
					t.Errorf("the manager adds %s: %d %s", what, r.Status, r.Body)
				}
			}
			// Lists: the owner and managers; filters by location, role, status.
			all := ids(tn.Do("GET", "/api/v1/users", w.mgr, nil).List())
			if len(all) != 3 || !slices.Contains(all, w.cashierID) || !slices.Contains(all, w.ownerID) {
				t.Errorf("the manager's list: %v", all)
			}
			other := w.create(t, w.o.Owner, "back@staff.test", "cashier", []string{w.loc2})
			atMain := ids(tn.Do("GET", "/api/v1/users?location_id="+w.loc1, w.mgr, nil).List())
			if len(atMain) != 3 || slices.Contains(atMain, other) {
				t.Errorf("staff of Main St (the owner works everywhere): %v", atMain)
			}
			if l := ids(tn.Do("GET", "/api/v1/users?role=cashier&location_id="+w.loc2, w.o.Owner, nil).List()); len(l) != 1 || l[0] != other {
				t.Errorf("cashiers of Back St: %v", l)
			}
			mustProblem(t, tn.Do("GET", "/api/v1/users", w.cashier, nil), 403, "forbidden")
			mustProblem(t, tn.Do("GET", "/api/v1/users/"+w.mgrID, w.cashier, nil), 403, "forbidden")
			if r := tn.Do("GET", "/api/v1/users/"+w.cashierID, w.cashier, nil); r.Status != 200 {
				t.Errorf("a cashier reads themselves: %d %s", r.Status, r.Body)
			}
			// Edits: the manager renames their cashier, not another
			// location's, and promotes nobody.
			if r := tn.Do("PATCH", "/api/v1/users/"+w.cashierID, w.mgr, map[string]any{"name": "Casey K"}); r.Status != 200 || r.Data()["name"] != "Casey K" {
				t.Errorf("rename: %d %s", r.Status, r.Body)
			}
			mustProblem(t, tn.Do("PATCH", "/api/v1/users/"+w.cashierID, w.mgr, map[string]any{"role": "manager"}), 403, "forbidden")
			mustProblem(t, tn.Do("PATCH", "/api/v1/users/"+w.cashierID, w.mgr, map[string]any{"location_ids": []string{w.loc2}}), 403, "forbidden")
			mustProblem(t, tn.Do("POST", "/api/v1/users/"+other+"/deactivate", w.mgr, nil), 403, "forbidden")
			mustProblem(t, tn.Do("PATCH", "/api/v1/users/"+w.mgrID, w.mgr, map[string]any{"name": "Boss"}), 403, "forbidden")
			mustProblem(t, tn.Do("PATCH", "/api/v1/users/"+w.ownerID, w.cashier, map[string]any{"name": "Me"}), 403, "forbidden")
			// The owner moves the cashier and keeps their own role and status.
			if r := tn.Do("PATCH", "/api/v1/users/"+other, w.o.Owner, map[string]any{"location_ids": []string{w.loc1, w.loc2}, "role": "kitchen"}); r.Status != 200 {
				t.Errorf("the owner edits: %d %s", r.Status, r.Body)
			}
			mustProblem(t, tn.Do("PATCH", "/api/v1/users/"+w.ownerID, w.o.Owner, map[string]any{"role": "manager"}), 403, "forbidden")
			mustProblem(t, tn.Do("POST", "/api/v1/users/"+w.ownerID+"/deactivate", w.o.Owner, nil), 403, "forbidden")
			// Deactivation ends the cashier's sessions at once; reactivation
			// lets them sign in again, with new sessions only.
			refresh := tn.MustLogin(w.cashierEmail, testPassword)["refreshToken"]
			if r := tn.Do("POST", "/api/v1/users/"+w.cashierID+"/deactivate", w.mgr, nil); r.Status != 200 || r.Data()["is_active"] != false {
				t.Fatalf("deactivate: %d %s", r.Status, r.Body)
			}
			mustProblem(t, tn.Do("GET", "/api/v1/auth/me", w.cashier, nil), 401, "unauthorized")
			mustProblem(t, tn.Do("POST", "/api/v1/auth/login", "", map[string]any{"email": w.cashierEmail, "password": testPassword}), 401, "unauthorized")
			if l := ids(tn.Do("GET", "/api/v1/users?status=inactive", w.mgr, nil).List()); len(l) != 1 || l[0] != w.cashierID {
				t.Errorf("inactive staff: %v", l)
			}
			if r := tn.Do("POST", "/api/v1/users/"+w.cashierID+"/reactivate", w.mgr, nil); r.Status != 200 || r.Data()["is_active"] != true {
				t.Fatalf("reactivate: %d %s", r.Status, r.Body)
			}
			mustProblem(t, tn.Do("GET", "/api/v1/auth/me", w.cashier, nil), 401, "unauthorized")
			mustProblem(t, tn.Do("POST", "/api/v1/auth/refresh", "", map[string]any{"refreshToken": refresh}), 401, "unauthorized")
			tn.MustLogin(w.cashierEmail, testPassword)
			// A password reset: the old password and sessions stop working.
			session := tn.MustLogin(w.cashierEmail, testPassword)["accessToken"].(string)
			if r := tn.Do("POST", "/api/v1/users/"+w.cashierID+"/password", w.mgr, map[string]any{"password": "new horse battery"}); r.Status != 200 {
				t.Fatalf("reset: %d %s", r.Status, r.Body)
			}
			mustProblem(t, tn.Do("GET", "/api/v1/auth/me", session, nil), 401, "unauthorized")
			mustProblem(t, tn.Do("POST", "/api/v1/auth/login", "", map[string]any{"email": w.cashierEmail, "password": testPassword}), 401, "unauthorized")
			tn.MustLogin(w.cashierEmail, "new horse battery")
		})
	}
}

// TestBadStaffInputIsRefusedAndChangesNothing: every new body's bad field
// is a 422 naming it, and the account stays as it was.
func TestBadStaffInputIsRefusedAndChangesNothing(t *testing.T) {
	w := newStaffWorld(t, kassa.NodeHub)
	tn := w.tn
	foreign := tn.MustOrg("Elsewhere")
	elsewhere := tn.Do("POST", "/api/v1/locations", foreign.Owner, map[string]any{"name": "Theirs", "timezone": "UTC"}).Data()["id"].(string)
	before := string(tn.Do("GET", "/api/v1/users/"+w.cashierID, w.o.Owner, nil).Body)
	user := "/api/v1/users/" + w.cashierID
	for _, c := range []struct {
		method, path string
		body         any
		field        string
	}{
		{"PATCH", user, map[string]any{"role": "boss"}, "role"},
		{"PATCH", user, map[string]any{"role": nil}, "role"},
		{"PATCH", user, map[string]any{"name": nil}, "name"},
		{"PATCH", user, map[string]any{"name": strings.Repeat("n", 201)}, "name"},
		{"PATCH", user, map[string]any{"location_ids": []string{"main"}}, "location_ids"},
		{"PATCH", user, map[string]any{"location_ids": []string{w.loc1, w.loc1}}, "location_ids"},
		{"PATCH", user, map[string]any{"location_ids": []string{elsewhere}}, "location_ids"},
		{"POST", "/api/v1/users", map[string]any{"email": "x@staff.test", "role": "cashier", "password": testPassword, "location_ids": []string{elsewhere}}, "location_ids"},
		{"POST", user + "/password", map[string]any{"password": "short"}, "password"},
		{"PUT", user + "/pin", map[string]any{"pin": "12a4"}, "pin"},
		{"PUT", user + "/pin", map[string]any{"pin": "123"}, "pin"},
		{"PUT", user + "/pin", map[string]any{"pin": "123456789"}, "pin"},
		{"POST", "/api/v1/auth/pin", map[string]any{"user_id": w.cashierID, "pin": "12 4"}, "pin"},
		{"POST", "/api/v1/auth/pin", map[string]any{"user_id": "casey", "pin": "1234"}, "user_id"},
	} {
		p := mustProblem(t, tn.Do(c.method, c.path, w.o.Owner, c.body), 422, "validation")
		if !strings.Contains(fmt.Sprint(p["errors"]), c.field) {
			t.Errorf("%s %s %v: the problem does not name %s: %v", c.method, c.path, c.body, c.field, p)
		}
	}
	for q, want := range map[string]int{"role=boss": 400, "status=gone": 400, "location_id=main": 400} {
		if r := tn.Do("GET", "/api/v1/users?"+q, w.o.Owner, nil); r.Status != want {
			t.Errorf("GET /users?%s: %d", q, r.Status)
		}
	}
	if after := string(tn.Do("GET", "/api/v1/users/"+w.cashierID, w.o.Owner, nil).Body); after != before {
		t.Errorf("bad input changed the cashier:\n%s\n%s", before, after)
	}
	if r := tn.Do("POST", "/api/v1/auth/login", "", map[string]any{"email": "x@staff.test", "password": testPassword}); r.Status != 401 {
		t.Errorf("a refused user was stored: %d", r.Status)
	}
}

// TestPINSignInIsBounded: a PIN signs its user in (the login result of
// /auth/login); wrong PINs lock the user for the client address like
// wrong passwords, and after kassa.PINMaxFailures in a row the PIN stops
// working at the node until the password signs in. The PIN is stored and
// replicated only as a hash.
func TestPINSignInIsBounded(t *testing.T) {
	w := newStaffWorld(t, kassa.NodeEdge)
	tn := w.tn
	pin := func(p string) *resp {
		return tn.Do("POST", "/api/v1/auth/pin", "", map[string]any{"user_id": w.cashierID, "pin": p})
	}
	mustProblem(t, pin("1234"), 401, "unauthorized") // no PIN yet
	if r := tn.Do("PUT", "/api/v1/users/"+w.cashierID+"/pin", w.mgr, map[string]any{"pin": "2468"}); r.Status != 200 || r.Data()["has_pin"] != true {
		t.Fatalf("the manager sets a PIN: %d %s", r.Status, r.Body)
	}
	// Everybody sets their own PIN; nobody another's unless they manage them.
	if r := tn.Do("PUT", "/api/v1/users/"+w.cashierID+"/pin", w.cashier, map[string]any{"pin": "1357"}); r.Status != 200 {
		t.Fatalf("the cashier sets their own PIN: %d %s", r.Status, r.Body)
	}
	mustProblem(t, tn.Do("PUT", "/api/v1/users/"+w.mgrID+"/pin", w.cashier, map[string]any{"pin": "1111"}), 403, "forbidden")
	for _, c := range tn.changes("user", w.cashierID) {
		if h, ok := c.Fields["pin_hash"].(string); ok && (strings.Contains(h, "1357") || strings.Contains(h, "2468") || !strings.HasPrefix(h, "$argon2id$")) {
			t.Errorf("the PIN is replicated as %q", h)
		}
	}
	r := pin("1357")
	if r.Status != 200 || r.Data()["user"].(map[string]any)["id"] != w.cashierID {
		t.Fatalf("PIN sign-in: %d %s", r.Status, r.Body)
	}
	if me := tn.Do("GET", "/api/v1/auth/me", r.Data()["accessToken"].(string), nil); me.Status != 200 {
		t.Fatalf("the PIN's token: %d", me.Status)
	}
	// Wrong PINs: free ones, then locked for this address, doubling.
	for i := 1; i < kassa.LockoutFreeFailures; i++ {
		mustProblem(t, pin("0000"), 401, "unauthorized")
	}
	mustProblem(t, pin("0000"), 429, "rate-limited")
	mustProblem(t, pin("1357"), 429, "rate-limited") // the right PIN waits too
	for i := kassa.LockoutFreeFailures + 1; i < kassa.PINMaxFailures; i++ {
		tn.Clock.Advance(kassa.LockoutMaxDelay)
		mustProblem(t, pin("0000"), 429, "rate-limited")
	}
	// The last wrong PIN the node allows: the PIN stops working.
	tn.Clock.Advance(kassa.LockoutMaxDelay)
	p := mustProblem(t, pin("0000"), 401, "unauthorized")
	if !strings.Contains(p["detail"].(string), "locked") {
		t.Errorf("the last wrong PIN: %v", p)
	}
	tn.Clock.Advance(time.Hour)
	if p := mustProblem(t, pin("1357"), 401, "unauthorized"); !strings.Contains(p["detail"].(string), "password") {
		t.Errorf("the right PIN after the bound: %v", p)
	}
	// The password signs in and ends the PIN lockout.
	tn.MustLogin(w.cashierEmail, testPassword)
	if r := pin("1357"); r.Status != 200 {
		t.Fatalf("the PIN after a password sign-in: %d %s", r.Status, r.Body)
	}
	// An unknown user, a cleared PIN and a deactivated user get the same answer.
	w.mgr = tn.MustLogin(w.mgrMail, testPassword)["accessToken"].(string) // the clock moved on
	unknown := mustProblem(t, tn.Do("POST", "/api/v1/auth/pin", "", map[string]any{"user_id": w.mgrID, "pin": "1357"}), 401, "unauthorized")
	if r := tn.Do("DELETE", "/api/v1/users/"+w.cashierID+"/pin", w.mgr, nil); r.Status != 200 || r.Data()["has_pin"] != false {
		t.Fatalf("clear the PIN: %d %s", r.Status, r.Body)
	}
	if p := mustProblem(t, pin("1357"), 401, "unauthorized"); p["detail"] != unknown["detail"] {
		t.Errorf("a cleared PIN: %v, an unknown user: %v", p, unknown)
	}
	tn.Do("PUT", "/api/v1/users/"+w.cashierID+"/pin", w.mgr, map[string]any{"pin": "1357"})
	tn.Do("POST", "/api/v1/users/"+w.cashierID+"/deactivate", w.mgr, nil)
	if p := mustProblem(t, pin("1357"), 401, "unauthorized"); p["detail"] != unknown["detail"] {
		t.Errorf("a deactivated user's PIN: %v", p)
	}
}
