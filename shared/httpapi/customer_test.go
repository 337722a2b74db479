package httpapi_test

import (
	"encoding/json"
	"fmt"
	"net/url"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"kassa.dev/shared/eventbus"
	"kassa.dev/shared/kassa"
	"kassa.dev/sync/change"
)

// The customer and loyalty APIs through HTTP, as tables of scenarios that
// run in order against one node (later scenarios build on the rows earlier
// ones wrote). A scenario that must fail also must change nothing: the
// runner checks that the outbox did not grow.

// custNoSuchID is a well-formed id that names no row.
const custNoSuchID = "0190a6c4-0000-7000-8000-000000000000"

// custFixture is a node, an org, the ids of the rows a test made (by name,
// usable as {name} in paths and bodies) and the org's events.
type custFixture struct {
	t      *testing.T
	tn     *testNode
	org    *testOrg
	ids    map[string]string
	events *eventbus.Subscription
}

func newCustFixture(t *testing.T) *custFixture {
	t.Helper()
	tn := MustStartNode(t, kassa.NodeEdge, nil)
	f := &custFixture{t: t, tn: tn, org: tn.MustOrg("Customer Cafe"), ids: map[string]string{"nosuch": custNoSuchID}}
	f.events = tn.N.Bus.Subscribe(1000, func(e kassa.Event) bool { return e.OrgID == f.org.ID })
	t.Cleanup(f.events.Close)
	return f
}

var custPlaceholder = regexp.MustCompile(`\{[a-z][a-z0-9_]*\}`)

func (f *custFixture) expand(s string) string {
	f.t.Helper()
	for k, v := range f.ids {
		s = strings.ReplaceAll(s, "{"+k+"}", v)
	}
	if m := custPlaceholder.FindString(s); m != "" {
		f.t.Fatalf("unknown fixture %s in %s", m, s)
	}
	return s
}

// do sends a request with {name} fixtures expanded; token "" is the owner.
// A string body is sent raw, any other value as JSON.
func (f *custFixture) do(method, path, token string, body any, headers ...string) *resp {
	f.t.Helper()
	if token == "" {
		token = f.org.Owner
	}
	var raw any
	switch b := body.(type) {
	case nil:
	case string:
		raw = f.expand(b)
	default:
		j, err := json.Marshal(b)
		if err != nil {
			f.t.Fatal(err)
		}
		raw = []byte(f.expand(string(j)))
	}
	return f.tn.Do(method, "/api/v1"+f.expand(path), token, raw, headers...)
}

// create posts body, requires 201 and records the new id as key.
func (f *custFixture) create(path, key string, body any) map[string]any {
	f.t.Helper()
	r := f.do("POST", path, "", body)
	if r.Status != 201 {
		f.t.Fatalf("create %s at %s: %d %s", key, path, r.Status, r.Body)
	}
	d := r.Data()
	f.ids[key] = d["id"].(string)
	return d
}

// get reads one resource as the owner and requires 200.
func (f *custFixture) get(path string) map[string]any {
	f.t.Helper()
	r := f.do("GET", path, "", nil)
	if r.Status != 200 {
		f.t.Fatalf("GET %s: %d %s", path, r.Status, r.Body)
	}
	return r.Data()
}

// drain returns the org's events published since the last drain. Events
// are published before the response is written, so none is in flight.
func (f *custFixture) drain() []kassa.Event {
	var out []kassa.Event
	for {
		select {
		case e := <-f.events.C:
			out = append(out, e)
		default:
			return out
		}
	}
}

// eventData renders an event's data as JSON the way a webhook carries it.
func eventData(t *testing.T, e kassa.Event) map[string]any {
	t.Helper()
	b, err := json.Marshal(e.Data)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	json.Unmarshal(b, &m)
	return m
}

// lastChange returns the newest change record of a row.
func (f *custFixture) lastChange(entity, key string) change.Change {
	f.t.Helper()
	cs := f.tn.changes(entity, f.ids[key])
	if len(cs) == 0 {
		f.t.Fatalf("no change records of %s %s", entity, key)
	}
	return cs[len(cs)-1]
}

type custScenario struct {
	name         string
	method, path string
	token        string // "" is the owner
	body         any    // string raw, func() any called first, else JSON; {name} expanded
	headers      []string
	want         int
	kind         string // for a problem
	field        string // for a validation problem: a field its errors must name
	check        func(t *testing.T, r *resp)
}

// run sends the scenarios in order. Every problem answer must leave the
// outbox as it was.
func (f *custFixture) run(scenarios []custScenario) {
	f.t.Helper()
	for _, sc := range scenarios {
		f.t.Run(sc.name, func(t *testing.T) {
			body := sc.body
			if fn, ok := body.(func() any); ok {
				body = fn()
			}
			before := f.tn.outboxLen()
			r := f.do(sc.method, sc.path, sc.token, body, sc.headers...)
			if sc.kind != "" {
				p := mustProblem(t, r, sc.want, sc.kind)
				if sc.field != "" && !slices.Contains(custFields(p), sc.field) {
					t.Fatalf("problem does not name field %s: %s", sc.field, r.Body)
				}
				if after := f.tn.outboxLen(); after != before {
					t.Fatalf("a refused request wrote %d change records", after-before)
				}
			} else if r.Status != sc.want {
				t.Fatalf("%s %s: status %d, want %d: %s", sc.method, sc.path, r.Status, sc.want, r.Body)
			}
			if sc.check != nil {
				sc.check(t, r)
			}
		})
	}
}

// custFields lists the fields named in a problem's errors.
func custFields(p map[string]any) []string {
	var out []string
	errs, _ := p["errors"].([]any)
	for _, e := range errs {
		m, _ := e.(map[string]any)
		if s, ok := m["field"].(string); ok {
			out = append(out, s)
		}
	}
	return out
}

// wantIDs checks the ids of a list answer, has_more, and a JSON null
// next_cursor when there is no further page.
func (f *custFixture) wantIDs(t *testing.T, r *resp, hasMore bool, keys ...string) {
	t.Helper()
	want := []string{}
	for _, k := range keys {
		want = append(want, f.ids[k])
	}
	got := []string{}
	for _, it := range r.List() {
		got = append(got, it.(map[string]any)["id"].(string))
	}
	if !slices.Equal(got, want) {
		t.Fatalf("ids %v, want %v (%v): %s", got, want, keys, r.Body)
	}
	env := r.JSON()
	if env["has_more"] != hasMore {
		t.Fatalf("has_more %v, want %v: %s", env["has_more"], hasMore, r.Body)
	}
	cur, present := env["next_cursor"]
	if !present || (hasMore && cur == nil) || (!hasMore && cur != nil) {
		t.Fatalf("next_cursor %v with has_more %v: %s", cur, hasMore, r.Body)
	}
}

func wantFields(t *testing.T, got map[string]any, want map[string]any) {
	t.Helper()
	for k, w := range want {
		if !reflect.DeepEqual(got[k], w) {
			t.Errorf("%s = %#v, want %#v", k, got[k], w)
		}
	}
}

func TestCustomersAPI(t *testing.T) {
	f := newCustFixture(t)
	today := time.Now().UTC().Format(time.DateOnly)
	var next string
	f.run([]custScenario{
		{name: "create with every field", method: "POST", path: "/customers", want: 201,
			body: map[string]any{"first_name": "Ann", "last_name": "Lee", "email": "  Ann.Lee@Example.COM ", "phone": "+61 (0)412-345 678",
				"birthday": "1990-02-28", "preferences": map[string]any{"milk": "oat", "sugar": 0, "seat": map[string]any{"window": true}},
				"loyalty_member_id": "M-1", "tags": []string{"vip"}, "notes": "likes the window"},
			check: func(t *testing.T, r *resp) {
				d := r.Data()
				f.ids["ann"] = d["id"].(string)
				if r.Header.Get("Location") != "/api/v1/customers/"+f.ids["ann"] || d["org_id"] != f.org.ID {
					t.Fatalf("location %q: %s", r.Header.Get("Location"), r.Body)
				}
				wantFields(t, d, map[string]any{"first_name": "Ann", "last_name": "Lee", "email": "ann.lee@example.com",
					"phone": "+61 (0)412-345 678", "birthday": "1990-02-28", "loyalty_member_id": "M-1", "tags": []any{"vip"},
					"notes": "likes the window", "preferences": map[string]any{"milk": "oat", "sugar": float64(0), "seat": map[string]any{"window": true}}})
				if len(d) != 14 || d["store_credit"] != float64(0) { // the 14th: store_credit (docs/returns.md)
					t.Errorf("customer has %d fields: %s", len(d), r.Body)
				}
				c := f.lastChange("customer", "ann")
				if c.Op != change.OpInsert || c.Fields["email"] != "ann.lee@example.com" || c.OrgID != f.org.ID || c.LocationID != "" {
					t.Errorf("insert record %+v", c)
				}
				ev := f.drain()
				if len(ev) != 1 || ev[0].Type != kassa.EventCustomerCreated || eventData(t, ev[0])["id"] != f.ids["ann"] ||
					eventData(t, ev[0])["email"] != "ann.lee@example.com" {
					t.Errorf("events %+v", ev)
				}
			}},
		{name: "create with a phone only", method: "POST", path: "/customers", body: map[string]any{"phone": " 0400 000 000 "}, want: 201,
			check: func(t *testing.T, r *resp) {
				d := r.Data()
				f.ids["bob"] = d["id"].(string)
				f.drain()
				wantFields(t, d, map[string]any{"first_name": "", "last_name": "", "email": nil, "phone": "0400 000 000", "birthday": nil,
					"preferences": map[string]any{}, "tags": []any{}, "loyalty_member_id": nil, "notes": ""})
			}},
		{name: "create with a birthday of today", method: "POST", path: "/customers", want: 201,
			body:  map[string]any{"first_name": "Cy", "last_name": "Ames", "email": "cy@example.com", "birthday": today},
			check: func(t *testing.T, r *resp) { f.ids["cy"] = r.Data()["id"].(string); f.drain() }},
		{name: "an e-mail taken in the org is 409, whatever its case", method: "POST", path: "/customers",
			body: map[string]any{"first_name": "Other", "email": "ANN.LEE@example.com"}, want: 409, kind: "conflict"},

		{name: "list in creation order", method: "GET", path: "/customers", want: 200,
			check: func(t *testing.T, r *resp) { f.wantIDs(t, r, false, "ann", "bob", "cy") }},
		{name: "page 1", method: "GET", path: "/customers?limit=2", want: 200, check: func(t *testing.T, r *resp) {
			f.wantIDs(t, r, true, "ann", "bob")
			next = r.JSON()["next_cursor"].(string)
		}},
		{name: "page 2", method: "GET", path: "/customers?limit=2", want: 200, check: func(t *testing.T, r *resp) {
			r = f.do("GET", "/customers?limit=2&cursor="+next, "", nil)
			f.wantIDs(t, r, false, "cy")
		}},
		{name: "exact page size ends with a null cursor", method: "GET", path: "/customers?limit=3", want: 200,
			check: func(t *testing.T, r *resp) { f.wantIDs(t, r, false, "ann", "bob", "cy") }},
		{name: "bad limit", method: "GET", path: "/customers?limit=0", want: 400, kind: "bad-request"},
		{name: "bad cursor", method: "GET", path: "/customers?cursor=nope", want: 400, kind: "bad-request"},
		{name: "q too long", method: "GET", path: "/customers?q=" + strings.Repeat("a", 201), want: 400, kind: "bad-request"},

		{name: "q: last name, any case", method: "GET", path: "/customers?q=LEE", want: 200,
			check: func(t *testing.T, r *resp) { f.wantIDs(t, r, false, "ann") }},
		{name: "q: full name", method: "GET", path: "/customers?q=cy%20ames", want: 200,
			check: func(t *testing.T, r *resp) { f.wantIDs(t, r, false, "cy") }},
		{name: "q: e-mail part", method: "GET", path: "/customers?q=EXAMPLE.com", want: 200,
			check: func(t *testing.T, r *resp) { f.wantIDs(t, r, false, "ann", "cy") }},
		{name: "q: phone as written", method: "GET", path: "/customers?q=412-345", want: 200,
			check: func(t *testing.T, r *resp) { f.wantIDs(t, r, false, "ann") }},
		{name: "q: phone digits alone", method: "GET", path: "/customers?q=0400000", want: 200,
			check: func(t *testing.T, r *resp) { f.wantIDs(t, r, false, "bob") }},
		{name: "a name beyond ASCII", method: "POST", path: "/customers", body: map[string]any{"first_name": "Zoë", "last_name": "Ørsted"}, want: 201,
			check: func(t *testing.T, r *resp) { f.ids["zoe"] = r.Data()["id"].(string); f.drain() }},
		{name: "q: case-insensitive beyond ASCII", method: "GET", path: "/customers?q=" + url.QueryEscape("ZOË ØR"), want: 200,
			check: func(t *testing.T, r *resp) { f.wantIDs(t, r, false, "zoe") }},
		{name: "q: control characters", method: "GET", path: "/customers?q=a%00b", want: 400, kind: "bad-request"},
		{name: "q: LIKE wildcards are literal", method: "GET", path: "/customers?q=%25", want: 200,
			check: func(t *testing.T, r *resp) { f.wantIDs(t, r, false) }},
		{name: "q: underscore is literal", method: "GET", path: "/customers?q=a_n", want: 200,
			check: func(t *testing.T, r *resp) { f.wantIDs(t, r, false) }},
		{name: "email: exact, normalized", method: "GET", path: "/customers?email=%20ANN.LEE@EXAMPLE.COM", want: 200,
			check: func(t *testing.T, r *resp) { f.wantIDs(t, r, false, "ann") }},
		{name: "email: no substring match", method: "GET", path: "/customers?email=lee@example.com", want: 200,
			check: func(t *testing.T, r *resp) { f.wantIDs(t, r, false) }},
		{name: "email: not an address", method: "GET", path: "/customers?email=ann", want: 400, kind: "bad-request"},
		{name: "q and email together", method: "GET", path: "/customers?q=ann&email=cy@example.com", want: 200,
			check: func(t *testing.T, r *resp) { f.wantIDs(t, r, false) }},

		{name: "read", method: "GET", path: "/customers/{ann}", want: 200,
			check: func(t *testing.T, r *resp) {
				wantFields(t, r.Data(), map[string]any{"id": f.ids["ann"], "email": "ann.lee@example.com"})
			}},
		{name: "read unknown", method: "GET", path: "/customers/{nosuch}", want: 404, kind: "not-found"},
		{name: "read malformed id", method: "GET", path: "/customers/not-an-id", want: 404, kind: "not-found"},

		{name: "update preferences, birthday, member id", method: "PATCH", path: "/customers/{ann}", want: 200,
			body: map[string]any{"preferences": map[string]any{"milk": "soy"}, "birthday": "1991-03-01", "loyalty_member_id": "M-2", "first_name": "Ann"},
			check: func(t *testing.T, r *resp) {
				wantFields(t, r.Data(), map[string]any{"preferences": map[string]any{"milk": "soy"}, "birthday": "1991-03-01",
					"loyalty_member_id": "M-2", "first_name": "Ann", "email": "ann.lee@example.com", "tags": []any{"vip"}})
				c := f.lastChange("customer", "ann")
				keys := slices.Sorted(func(yield func(string) bool) {
					for k := range c.Fields {
						if !yield(k) {
							return
						}
					}
				})
				if c.Op != change.OpUpdate || !slices.Equal(keys, []string{"birthday", "loyalty_member_id", "preferences", "updated_at"}) {
					t.Errorf("update record carries %v, want only the changed columns", keys)
				}
				ev := f.drain()
				if len(ev) != 1 || ev[0].Type != kassa.EventCustomerUpdated || eventData(t, ev[0])["loyalty_member_id"] != "M-2" {
					t.Errorf("events %+v", ev)
				}
			}},
		{name: "an update that changes nothing writes nothing", method: "PATCH", path: "/customers/{ann}", want: 200,
			body: map[string]any{"last_name": "Lee", "email": "Ann.Lee@example.com"},
			check: func(t *testing.T, r *resp) {
				if n := len(f.tn.changes("customer", f.ids["ann"])); n != 2 {
					t.Errorf("%d change records, want 2", n)
				}
				if ev := f.drain(); len(ev) != 0 {
					t.Errorf("events %+v", ev)
				}
			}},
		{name: "update to a taken e-mail", method: "PATCH", path: "/customers/{ann}", body: map[string]any{"email": "CY@example.com"}, want: 409, kind: "conflict"},
		{name: "null first_name", method: "PATCH", path: "/customers/{ann}", body: map[string]any{"first_name": nil}, want: 422, kind: "validation", field: "first_name"},
		{name: "clearing the last contact", method: "PATCH", path: "/customers/{bob}", body: map[string]any{"phone": nil}, want: 422, kind: "validation", field: "phone"},
		{name: "null clears e-mail, tags and preferences", method: "PATCH", path: "/customers/{ann}", want: 200,
			body: map[string]any{"email": nil, "tags": nil, "preferences": nil},
			check: func(t *testing.T, r *resp) {
				wantFields(t, r.Data(), map[string]any{"email": nil, "tags": []any{}, "preferences": map[string]any{}})
				f.drain()
			}},
		{name: "update unknown", method: "PATCH", path: "/customers/{nosuch}", body: map[string]any{"notes": "x"}, want: 404, kind: "not-found"},

		{name: "delete", method: "DELETE", path: "/customers/{cy}", want: 204, check: func(t *testing.T, r *resp) {
			if len(r.Body) != 0 {
				t.Errorf("204 with a body: %s", r.Body)
			}
			c := f.lastChange("customer", "cy")
			if c.Op != change.OpUpdate || c.Fields["deleted_at"] == nil {
				t.Fatalf("tombstone record %+v", c)
			}
			wantFields(t, c.Fields, map[string]any{"first_name": "", "last_name": "", "email": nil, "phone": nil, "birthday": nil,
				"preferences": map[string]any{}, "notes": "", "tags": []any{}, "loyalty_member_id": nil})
			for _, k := range []string{"first_name", "last_name", "email", "phone", "birthday", "preferences", "notes", "tags", "loyalty_member_id"} {
				if _, ok := c.Fields[k]; !ok {
					t.Errorf("tombstone does not erase %s", k)
				}
			}
			ev := f.drain()
			if len(ev) != 1 || ev[0].Type != kassa.EventCustomerUpdated || eventData(t, ev[0])["deleted"] != true ||
				eventData(t, ev[0])["email"] != nil || eventData(t, ev[0])["first_name"] != "" {
				t.Errorf("events %+v", ev)
			}
		}},
		{name: "a deleted customer is not found", method: "GET", path: "/customers/{cy}", want: 404, kind: "not-found"},
		{name: "nor updated", method: "PATCH", path: "/customers/{cy}", body: map[string]any{"notes": "x"}, want: 404, kind: "not-found"},
		{name: "nor deleted again", method: "DELETE", path: "/customers/{cy}", want: 404, kind: "not-found"},
		{name: "nor listed", method: "GET", path: "/customers", want: 200, check: func(t *testing.T, r *resp) { f.wantIDs(t, r, false, "ann", "bob", "zoe") }},
		{name: "nor found by its old e-mail", method: "GET", path: "/customers?email=cy@example.com", want: 200,
			check: func(t *testing.T, r *resp) { f.wantIDs(t, r, false) }},
		{name: "its e-mail is free again", method: "POST", path: "/customers", body: map[string]any{"first_name": "Cy", "email": "Cy@Example.com"}, want: 201,
			check: func(t *testing.T, r *resp) {
				f.ids["cy2"] = r.Data()["id"].(string)
				r = f.do("GET", "/customers?q=cy", "", nil)
				f.wantIDs(t, r, false, "cy2")
			}},
		{name: "delete unknown", method: "DELETE", path: "/customers/{nosuch}", want: 404, kind: "not-found"},
	})
}

func TestCustomerScopes(t *testing.T) {
	f := newCustFixture(t)
	kitchen := f.tn.MustUser(f.org, "k@cust.test", kassa.RoleKitchen)
	cashier := f.tn.MustUser(f.org, "c@cust.test", kassa.RoleCashier)
	f.create("/customers", "ann", map[string]any{"first_name": "Ann"})
	f.run([]custScenario{
		{name: "kitchen cannot list", method: "GET", path: "/customers", token: kitchen, want: 403, kind: "forbidden"},
		{name: "kitchen cannot create", method: "POST", path: "/customers", token: kitchen, body: map[string]any{"first_name": "X"}, want: 403, kind: "forbidden"},
		{name: "kitchen cannot delete", method: "DELETE", path: "/customers/{ann}", token: kitchen, want: 403, kind: "forbidden"},
		{name: "kitchen cannot read rewards", method: "GET", path: "/customers/{ann}/rewards", token: kitchen, want: 403, kind: "forbidden"},
		{name: "cashier creates", method: "POST", path: "/customers", token: cashier, body: map[string]any{"first_name": "X"}, want: 201},
		{name: "no token", method: "GET", path: "/customers", token: "-", want: 401, kind: "unauthorized"},
	})
}

// TestCustomerBadInput throws bad bodies at POST and PATCH: each is a 4xx
// problem naming the field, and nothing changes.
func TestCustomerBadInput(t *testing.T) {
	f := newCustFixture(t)
	f.create("/customers", "ann", map[string]any{"first_name": "Ann", "email": "ann@example.com"})
	future := time.Now().UTC().AddDate(0, 0, 2).Format(time.DateOnly)
	long := strings.Repeat("x", 101)
	bigPrefs := map[string]any{"blob": strings.Repeat("p", 8<<10)}
	type bad struct {
		name   string
		body   any
		status int
		field  string
	}
	common := []bad{
		{"malformed JSON", `{"first_name":`, 400, ""},
		{"empty body", "", 400, ""},
		{"array body", `[]`, 400, ""},
		{"trailing data", `{"first_name":"A"} {}`, 400, ""},
		{"unknown field", map[string]any{"first_name": "A", "nickname": "x"}, 422, "nickname"},
		{"wrong type: first_name", map[string]any{"first_name": 7}, 422, "first_name"},
		{"wrong type: preferences array", map[string]any{"first_name": "A", "preferences": []string{"x"}}, 422, "preferences"},
		{"wrong type: preferences string", map[string]any{"first_name": "A", "preferences": "oat"}, 422, "preferences"},
		{"wrong type: tags", map[string]any{"first_name": "A", "tags": "vip"}, 422, "tags"},
		{"email not an address", map[string]any{"email": "ann@"}, 422, "email"},
		{"email empty", map[string]any{"first_name": "A", "email": ""}, 422, "email"},
		{"phone letters", map[string]any{"phone": "call me"}, 422, "phone"},
		{"phone too short", map[string]any{"phone": "12"}, 422, "phone"},
		{"phone too long", map[string]any{"phone": strings.Repeat("1", 33)}, 422, "phone"},
		{"phone without digits", map[string]any{"first_name": "A", "phone": "+-()"}, 422, "phone"},
		{"birthday format", map[string]any{"first_name": "A", "birthday": "28/02/1990"}, 422, "birthday"},
		{"birthday not a date", map[string]any{"first_name": "A", "birthday": "1990-02-30"}, 422, "birthday"},
		{"birthday with time", map[string]any{"first_name": "A", "birthday": "1990-02-28T00:00:00Z"}, 422, "birthday"},
		{"birthday in the future", map[string]any{"first_name": "A", "birthday": future}, 422, "birthday"},
		{"preferences above 8 KiB", map[string]any{"first_name": "A", "preferences": bigPrefs}, 422, "preferences"},
		{"first_name too long", map[string]any{"first_name": long}, 422, "first_name"},
		{"last_name control character", map[string]any{"last_name": "Lee\u0007"}, 422, "last_name"},
		{"tags empty entry", map[string]any{"first_name": "A", "tags": []string{""}}, 422, "tags"},
		{"loyalty_member_id empty", map[string]any{"first_name": "A", "loyalty_member_id": ""}, 422, "loyalty_member_id"},
		{"notes too long", map[string]any{"first_name": "A", "notes": strings.Repeat("n", 2001)}, 422, "notes"},
	}
	cases := map[string][]bad{
		"POST /customers": append(slices.Clone(common),
			bad{"no name, e-mail or phone", map[string]any{"notes": "who?"}, 422, "first_name"},
			bad{"nothing at all", map[string]any{}, 422, "first_name"}),
		"PATCH /customers/{ann}": append(slices.Clone(common),
			bad{"null last_name", map[string]any{"last_name": nil}, 422, "last_name"},
			bad{"null notes", map[string]any{"notes": nil}, 422, "notes"},
			bad{"clearing every contact", map[string]any{"first_name": "", "email": nil}, 422, "email"}),
	}
	state := func() string {
		return fmt.Sprintf("%d %s %s", f.tn.outboxLen(), f.do("GET", "/customers", "", nil).Body, f.do("GET", "/customers/{ann}", "", nil).Body)
	}
	before := state()
	for route, list := range cases {
		method, path, _ := strings.Cut(route, " ")
		for _, c := range list {
			t.Run(route+": "+c.name, func(t *testing.T) {
				r := f.do(method, path, "", c.body)
				kind := "validation"
				if c.status == 400 {
					kind = "bad-request"
				}
				p := mustProblem(t, r, c.status, kind)
				if c.field != "" && !slices.Contains(custFields(p), c.field) {
					t.Fatalf("problem does not name %s: %s", c.field, r.Body)
				}
			})
		}
	}
	if after := state(); after != before {
		t.Fatalf("bad input changed the store:\nbefore %s\nafter  %s", before, after)
	}
}
