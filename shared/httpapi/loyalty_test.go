package httpapi_test

import (
	"bytes"
	"fmt"
	"net/http"
	"reflect"
	"slices"
	"strings"
	"sync"
	"testing"

	"kassa.dev/shared/kassa"
	"kassa.dev/shared/node"
	"kassa.dev/sync/change"
)

// account reads an account as the owner.
func (f *custFixture) account(key string) map[string]any {
	f.t.Helper()
	return f.get("/loyalty/accounts/{" + key + "}")
}

// ledger returns the points and balance_after of an account's transactions.
func (f *custFixture) ledger(t *testing.T, key string) (points, after []float64) {
	t.Helper()
	r := f.do("GET", "/loyalty/accounts/{"+key+"}/transactions?limit=200", "", nil)
	if r.Status != 200 {
		t.Fatalf("transactions: %d %s", r.Status, r.Body)
	}
	for _, it := range r.List() {
		m := it.(map[string]any)
		points = append(points, m["points"].(float64))
		after = append(after, m["balance_after"].(float64))
	}
	return points, after
}

func changedKeys(c change.Change) []string {
	var keys []string
	for k := range c.Fields {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

func TestLoyaltyLedger(t *testing.T) {
	f := newCustFixture(t)
	f.create("/customers", "ann", map[string]any{"first_name": "Ann", "email": "ann@example.com"})
	f.create("/customers", "bob", map[string]any{"first_name": "Bob"})
	f.drain()
	wantAccount := func(t *testing.T, key string, balance, lifetime float64, tier any) {
		t.Helper()
		wantFields(t, f.account(key), map[string]any{"points_balance": balance, "lifetime_points": lifetime, "tier": tier})
	}
	f.run([]custScenario{
		{name: "enrol before any program", method: "POST", path: "/loyalty/accounts", body: map[string]any{"customer_id": "{ann}"},
			want: 422, kind: "validation", field: "program_id"},
		{name: "create a program", method: "POST", path: "/loyalty/programs", want: 201,
			body: map[string]any{"name": "Coffee Club", "points_per_unit": 10, "redemption_value": 5,
				"tiers": []any{map[string]any{"name": "Gold", "min_lifetime_points": 500}, map[string]any{"name": "Silver", "min_lifetime_points": 100},
					map[string]any{"name": "Member", "min_lifetime_points": 0}}},
			check: func(t *testing.T, r *resp) {
				d := r.Data()
				f.ids["club"] = d["id"].(string)
				if r.Header.Get("Location") != "/api/v1/loyalty/programs/"+f.ids["club"] {
					t.Errorf("location %q", r.Header.Get("Location"))
				}
				wantFields(t, d, map[string]any{"name": "Coffee Club", "points_per_unit": float64(10), "redemption_value": float64(5),
					"is_active": true, "org_id": f.org.ID, "tiers": []any{
						map[string]any{"name": "Member", "min_lifetime_points": float64(0)},
						map[string]any{"name": "Silver", "min_lifetime_points": float64(100)},
						map[string]any{"name": "Gold", "min_lifetime_points": float64(500)}}})
			}},
		{name: "list programs", method: "GET", path: "/loyalty/programs", want: 200,
			check: func(t *testing.T, r *resp) { f.wantIDs(t, r, false, "club") }},
		{name: "read a program", method: "GET", path: "/loyalty/programs/{club}", want: 200,
			check: func(t *testing.T, r *resp) { wantFields(t, r.Data(), map[string]any{"id": f.ids["club"]}) }},
		{name: "read an unknown program", method: "GET", path: "/loyalty/programs/{nosuch}", want: 404, kind: "not-found"},

		{name: "enrol into the only active program", method: "POST", path: "/loyalty/accounts", body: map[string]any{"customer_id": "{ann}"}, want: 201,
			check: func(t *testing.T, r *resp) {
				d := r.Data()
				f.ids["acct"] = d["id"].(string)
				if r.Header.Get("Location") != "/api/v1/loyalty/accounts/"+f.ids["acct"] {
					t.Errorf("location %q", r.Header.Get("Location"))
				}
				wantFields(t, d, map[string]any{"program_id": f.ids["club"], "customer_id": f.ids["ann"], "points_balance": float64(0),
					"lifetime_points": float64(0), "tier": "Member", "org_id": f.org.ID})
			}},
		{name: "a second enrolment in the program", method: "POST", path: "/loyalty/accounts",
			body: map[string]any{"customer_id": "{ann}", "program_id": "{club}"}, want: 409, kind: "conflict"},
		{name: "enrol an unknown customer", method: "POST", path: "/loyalty/accounts", body: map[string]any{"customer_id": "{nosuch}"},
			want: 422, kind: "validation", field: "customer_id"},
		{name: "enrol into an unknown program", method: "POST", path: "/loyalty/accounts",
			body: map[string]any{"customer_id": "{bob}", "program_id": "{nosuch}"}, want: 422, kind: "validation", field: "program_id"},

		{name: "read the account", method: "GET", path: "/loyalty/accounts/{acct}", want: 200,
			check: func(t *testing.T, r *resp) { wantFields(t, r.Data(), map[string]any{"id": f.ids["acct"]}) }},
		{name: "look up by customer", method: "GET", path: "/loyalty/accounts/customer/{ann}", want: 200,
			check: func(t *testing.T, r *resp) { wantFields(t, r.Data(), map[string]any{"id": f.ids["acct"]}) }},
		{name: "rewards answers as the lookup, deprecated", method: "GET", path: "/customers/{ann}/rewards", want: 200,
			check: func(t *testing.T, r *resp) {
				lookup := f.do("GET", "/loyalty/accounts/customer/{ann}", "", nil)
				if !bytes.Equal(r.Body, lookup.Body) {
					t.Errorf("rewards %s, lookup %s", r.Body, lookup.Body)
				}
				if r.Header.Get("Deprecation") != "true" ||
					r.Header.Get("Link") != `</api/v1/loyalty/accounts/customer/`+f.ids["ann"]+`>; rel="successor-version"` {
					t.Errorf("headers %v", r.Header)
				}
			}},
		{name: "look up a customer without an account", method: "GET", path: "/loyalty/accounts/customer/{bob}", want: 404, kind: "not-found"},
		{name: "rewards of a customer without an account", method: "GET", path: "/customers/{bob}/rewards", want: 404, kind: "not-found",
			check: func(t *testing.T, r *resp) {
				if r.Header.Get("Deprecation") != "true" || r.Header.Get("Link") == "" {
					t.Errorf("a 404 of the deprecated route lacks its headers: %v", r.Header)
				}
			}},
		{name: "look up a malformed customer id", method: "GET", path: "/loyalty/accounts/customer/nope", want: 404, kind: "not-found"},

		{name: "earn points", method: "POST", path: "/loyalty/accounts/{acct}/earn", body: map[string]any{"points": 40, "reason": "welcome"}, want: 201,
			check: func(t *testing.T, r *resp) {
				d := r.Data()
				wantFields(t, d, map[string]any{"account_id": f.ids["acct"], "type": "earn", "points": float64(40), "balance_after": float64(40),
					"reason": "welcome", "order_id": nil, "org_id": f.org.ID})
				if o, _ := d["origin"].(string); o == "" {
					t.Errorf("transaction without origin: %s", r.Body)
				}
				wantAccount(t, "acct", 40, 40, "Member")
				ev := f.drain()
				if len(ev) != 1 || ev[0].Type != kassa.EventLoyaltyPointsEarned {
					t.Fatalf("events %+v", ev)
				}
				if got := eventData(t, ev[0]); !reflect.DeepEqual(got, d) {
					t.Errorf("loyalty.points_earned data %v, want the transaction %v", got, d)
				}
				c := f.lastChange("loyalty_account", "acct")
				if got := changedKeys(c); !slices.Equal(got, []string{"lifetime_points", "points_balance", "updated_at"}) {
					t.Errorf("account update record carries %v", got)
				}
			}},
		{name: "earn for an amount spent, moving up a tier", method: "POST", path: "/loyalty/accounts/{acct}/earn",
			body: map[string]any{"amount": 1234, "order_id": "{nosuch}"}, want: 201,
			check: func(t *testing.T, r *resp) {
				wantFields(t, r.Data(), map[string]any{"points": float64(123), "balance_after": float64(163), "order_id": f.ids["nosuch"]})
				wantAccount(t, "acct", 163, 163, "Silver")
				ev := f.drain()
				if len(ev) != 2 || ev[0].Type != kassa.EventLoyaltyPointsEarned || ev[1].Type != kassa.EventLoyaltyTierChanged {
					t.Fatalf("events %+v", ev)
				}
				wantFields(t, eventData(t, ev[1]), map[string]any{"id": f.ids["acct"], "customer_id": f.ids["ann"], "tier": "Silver",
					"lifetime_points": float64(163), "points_balance": float64(163)})
				if got := changedKeys(f.lastChange("loyalty_account", "acct")); !slices.Contains(got, "tier") {
					t.Errorf("account update record carries %v, without the tier", got)
				}
			}},
		{name: "an amount worth no points", method: "POST", path: "/loyalty/accounts/{acct}/earn", body: map[string]any{"amount": 9},
			want: 422, kind: "validation", field: "amount"},
		{name: "redeem beyond the balance", method: "POST", path: "/loyalty/accounts/{acct}/redeem", body: map[string]any{"points": 164},
			want: 409, kind: "conflict", check: func(t *testing.T, r *resp) { wantAccount(t, "acct", 163, 163, "Silver") }},
		{name: "redeem", method: "POST", path: "/loyalty/accounts/{acct}/redeem", body: map[string]any{"points": 63, "reason": "free coffee"}, want: 201,
			check: func(t *testing.T, r *resp) {
				wantFields(t, r.Data(), map[string]any{"type": "redeem", "points": float64(-63), "balance_after": float64(100)})
				wantAccount(t, "acct", 100, 163, "Silver")
				if ev := f.drain(); len(ev) != 0 {
					t.Errorf("redeem emitted %+v", ev)
				}
				if got := changedKeys(f.lastChange("loyalty_account", "acct")); !slices.Equal(got, []string{"points_balance", "updated_at"}) {
					t.Errorf("account update record carries %v", got)
				}
			}},
		{name: "earn to the top tier", method: "POST", path: "/loyalty/accounts/{acct}/earn", body: map[string]any{"points": 400}, want: 201,
			check: func(t *testing.T, r *resp) {
				wantAccount(t, "acct", 500, 563, "Gold")
				ev := f.drain()
				if len(ev) != 2 || ev[1].Type != kassa.EventLoyaltyTierChanged || eventData(t, ev[1])["tier"] != "Gold" {
					t.Errorf("events %+v", ev)
				}
			}},
		{name: "redeem the whole balance", method: "POST", path: "/loyalty/accounts/{acct}/redeem", body: map[string]any{"points": 500}, want: 201,
			check: func(t *testing.T, r *resp) { wantAccount(t, "acct", 0, 563, "Gold") }},
		{name: "redeem from nothing", method: "POST", path: "/loyalty/accounts/{acct}/redeem", body: map[string]any{"points": 1}, want: 409, kind: "conflict"},
		{name: "transactions, oldest first, with balance_after", method: "GET", path: "/loyalty/accounts/{acct}/transactions", want: 200,
			check: func(t *testing.T, r *resp) {
				points, after := f.ledger(t, "acct")
				if !slices.Equal(points, []float64{40, 123, -63, 400, -500}) || !slices.Equal(after, []float64{40, 163, 100, 500, 0}) {
					t.Errorf("points %v, balance_after %v", points, after)
				}
				if n := len(f.tn.changes("points_transaction", "")); n != 5 {
					t.Errorf("%d points_transaction records, want 5", n)
				}
			}},
		{name: "transactions paged", method: "GET", path: "/loyalty/accounts/{acct}/transactions?limit=3", want: 200,
			check: func(t *testing.T, r *resp) {
				env := r.JSON()
				if len(r.List()) != 3 || env["has_more"] != true || env["next_cursor"] == nil {
					t.Fatalf("page 1 %s", r.Body)
				}
				r = f.do("GET", "/loyalty/accounts/{acct}/transactions?limit=3&cursor="+env["next_cursor"].(string), "", nil)
				if len(r.List()) != 2 || r.JSON()["has_more"] != false || r.JSON()["next_cursor"] != nil {
					t.Fatalf("page 2 %s", r.Body)
				}
			}},
		{name: "transactions of an unknown account", method: "GET", path: "/loyalty/accounts/{nosuch}/transactions", want: 404, kind: "not-found"},
		{name: "transactions, bad limit", method: "GET", path: "/loyalty/accounts/{acct}/transactions?limit=201", want: 400, kind: "bad-request"},
		{name: "earn into an unknown account", method: "POST", path: "/loyalty/accounts/{nosuch}/earn", body: map[string]any{"points": 1}, want: 404, kind: "not-found"},
		{name: "redeem from a malformed account id", method: "POST", path: "/loyalty/accounts/nope/redeem", body: map[string]any{"points": 1}, want: 404, kind: "not-found"},
		{name: "read an unknown account", method: "GET", path: "/loyalty/accounts/{nosuch}", want: 404, kind: "not-found"},

		{name: "a second active program", method: "POST", path: "/loyalty/programs", body: map[string]any{"name": "Tea Club", "points_per_unit": 1}, want: 201,
			check: func(t *testing.T, r *resp) { f.ids["tea"] = r.Data()["id"].(string) }},
		{name: "enrol without a program among two active ones", method: "POST", path: "/loyalty/accounts", body: map[string]any{"customer_id": "{bob}"},
			want: 422, kind: "validation", field: "program_id"},
		{name: "an inactive program", method: "POST", path: "/loyalty/programs", body: map[string]any{"name": "Old Club", "is_active": false}, want: 201,
			check: func(t *testing.T, r *resp) {
				f.ids["old"] = r.Data()["id"].(string)
				wantFields(t, r.Data(), map[string]any{"is_active": false, "tiers": []any{}, "points_per_unit": float64(0)})
			}},
		{name: "enrol into an inactive program", method: "POST", path: "/loyalty/accounts",
			body: map[string]any{"customer_id": "{bob}", "program_id": "{old}"}, want: 409, kind: "conflict"},
		{name: "enrol into a named program", method: "POST", path: "/loyalty/accounts",
			body: map[string]any{"customer_id": "{bob}", "program_id": "{tea}"}, want: 201,
			check: func(t *testing.T, r *resp) {
				f.ids["bobacct"] = r.Data()["id"].(string)
				wantFields(t, r.Data(), map[string]any{"program_id": f.ids["tea"], "tier": nil})
			}},
		{name: "programs listed in creation order", method: "GET", path: "/loyalty/programs?limit=2", want: 200,
			check: func(t *testing.T, r *resp) { f.wantIDs(t, r, true, "club", "tea") }},

		{name: "delete a member", method: "DELETE", path: "/customers/{ann}", want: 204},
		{name: "the lookup no longer finds the deleted customer", method: "GET", path: "/loyalty/accounts/customer/{ann}", want: 404, kind: "not-found"},
		{name: "a deleted customer cannot enrol", method: "POST", path: "/loyalty/accounts",
			body: map[string]any{"customer_id": "{ann}", "program_id": "{tea}"}, want: 422, kind: "validation", field: "customer_id"},
	})
}

// TestLoyaltyConcurrentRedeem races eight redemptions of 10 points against a
// balance of 50: exactly five succeed, and the balance ends at zero.
func TestLoyaltyConcurrentRedeem(t *testing.T) {
	f := newCustFixture(t)
	f.create("/customers", "ann", map[string]any{"first_name": "Ann"})
	f.create("/loyalty/programs", "club", map[string]any{"name": "Club", "points_per_unit": 1})
	f.create("/loyalty/accounts", "acct", map[string]any{"customer_id": f.ids["ann"]})
	if r := f.do("POST", "/loyalty/accounts/{acct}/earn", "", map[string]any{"points": 50}); r.Status != 201 {
		t.Fatalf("earn: %d %s", r.Status, r.Body)
	}
	url := f.tn.URL + "/api/v1/loyalty/accounts/" + f.ids["acct"] + "/redeem"
	start := make(chan struct{})
	statuses := make(chan int, 8)
	var wg sync.WaitGroup
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			req, _ := http.NewRequest("POST", url, strings.NewReader(`{"points": 10}`))
			req.Header.Set("Authorization", "Bearer "+f.org.Owner)
			req.Header.Set("Content-Type", "application/json")
			<-start
			res, err := http.DefaultClient.Do(req)
			if err != nil {
				statuses <- 0
				return
			}
			res.Body.Close()
			statuses <- res.StatusCode
		}()
	}
	close(start)
	wg.Wait()
	close(statuses)
	count := map[int]int{}
	for s := range statuses {
		count[s]++
	}
	if count[201] != 5 || count[409] != 3 {
		t.Fatalf("statuses %v, want 5×201 and 3×409", count)
	}
	wantFields(t, f.account("acct"), map[string]any{"points_balance": float64(0), "lifetime_points": float64(50)})
	points, after := f.ledger(t, "acct")
	if !slices.Equal(points, []float64{50, -10, -10, -10, -10, -10}) || !slices.Equal(after, []float64{50, 40, 30, 20, 10, 0}) {
		t.Fatalf("points %v, balance_after %v", points, after)
	}
}

// TestLoyaltyBadInput throws bad bodies at every loyalty POST: each is a
// 4xx problem, and nothing changes.
func TestLoyaltyBadInput(t *testing.T) {
	f := newCustFixture(t)
	f.create("/customers", "ann", map[string]any{"first_name": "Ann"})
	f.create("/loyalty/programs", "club", map[string]any{"name": "Club", "points_per_unit": 1})
	f.create("/loyalty/accounts", "acct", map[string]any{"customer_id": f.ids["ann"]})
	if r := f.do("POST", "/loyalty/accounts/{acct}/earn", "", map[string]any{"points": 50}); r.Status != 201 {
		t.Fatalf("earn: %d %s", r.Status, r.Body)
	}
	tier := func(name string, min any) map[string]any {
		return map[string]any{"name": name, "min_lifetime_points": min}
	}
	type bad struct {
		name   string
		body   any
		status int
		field  string
	}
	common := []bad{
		{"malformed JSON", `{"points":`, 400, ""},
		{"empty body", "", 400, ""},
		{"array body", `[1]`, 400, ""},
		{"trailing data", `{} []`, 400, ""},
		{"unknown field", map[string]any{"bogus": 1}, 422, "bogus"},
	}
	cases := map[string][]bad{
		"/loyalty/programs": append(slices.Clone(common),
			bad{"name missing", map[string]any{"points_per_unit": 1}, 422, "name"},
			bad{"name wrong type", map[string]any{"name": 5}, 422, "name"},
			bad{"points_per_unit negative", map[string]any{"name": "X", "points_per_unit": -1}, 422, "points_per_unit"},
			bad{"points_per_unit fractional", map[string]any{"name": "X", "points_per_unit": 1.5}, 422, "points_per_unit"},
			bad{"points_per_unit huge", map[string]any{"name": "X", "points_per_unit": 1_000_001}, 422, "points_per_unit"},
			bad{"redemption_value negative", map[string]any{"name": "X", "redemption_value": -5}, 422, "redemption_value"},
			bad{"tiers not a list", map[string]any{"name": "X", "tiers": "gold"}, 422, "tiers"},
			bad{"tier unknown field", map[string]any{"name": "X", "tiers": []any{map[string]any{"name": "G", "min": 1}}}, 422, "min"},
			bad{"tier name missing", map[string]any{"name": "X", "tiers": []any{tier("", 10)}}, 422, "tiers.name"},
			bad{"tier names repeated", map[string]any{"name": "X", "tiers": []any{tier("Gold", 10), tier("gold", 20)}}, 422, "tiers.name"},
			bad{"tier thresholds repeated", map[string]any{"name": "X", "tiers": []any{tier("Gold", 10), tier("Silver", 10)}}, 422, "tiers.min_lifetime_points"},
			bad{"tier threshold negative", map[string]any{"name": "X", "tiers": []any{tier("Gold", -1)}}, 422, "tiers.min_lifetime_points"},
			bad{"is_active wrong type", map[string]any{"name": "X", "is_active": "yes"}, 422, "is_active"}),
		"/loyalty/accounts": append(slices.Clone(common),
			bad{"customer_id missing", map[string]any{}, 422, "customer_id"},
			bad{"customer_id not an id", map[string]any{"customer_id": "ann"}, 422, "customer_id"},
			bad{"customer_id wrong type", map[string]any{"customer_id": 7}, 422, "customer_id"},
			bad{"program_id not an id", map[string]any{"customer_id": f.ids["ann"], "program_id": "club"}, 422, "program_id"}),
		"/loyalty/accounts/{acct}/earn": append(slices.Clone(common),
			bad{"neither points nor amount", map[string]any{"reason": "x"}, 422, "points"},
			bad{"zero points", map[string]any{"points": 0}, 422, "points"},
			bad{"negative points", map[string]any{"points": -5}, 422, "points"},
			bad{"points and amount", map[string]any{"points": 5, "amount": 500}, 422, "amount"},
			bad{"negative amount", map[string]any{"amount": -500}, 422, "amount"},
			bad{"points as text", map[string]any{"points": "10"}, 422, "points"},
			bad{"fractional points", map[string]any{"points": 2.5}, 422, "points"},
			bad{"order_id not an id", map[string]any{"points": 5, "order_id": "42"}, 422, "order_id"},
			bad{"reason too long", map[string]any{"points": 5, "reason": strings.Repeat("r", 201)}, 422, "reason"}),
		"/loyalty/accounts/{acct}/redeem": append(slices.Clone(common),
			bad{"points missing", map[string]any{}, 422, "points"},
			bad{"negative points", map[string]any{"points": -5}, 422, "points"},
			bad{"amount", map[string]any{"amount": 500}, 422, "amount"},
			bad{"points as text", map[string]any{"points": "10"}, 422, "points"},
			bad{"reason control character", map[string]any{"points": 5, "reason": "a\u0000b"}, 422, "reason"}),
	}
	state := func() string {
		var b strings.Builder
		fmt.Fprintf(&b, "%d\n", f.tn.outboxLen())
		for _, p := range []string{"/loyalty/programs", "/loyalty/accounts/{acct}", "/loyalty/accounts/{acct}/transactions", "/customers"} {
			b.Write(f.do("GET", p, "", nil).Body)
			b.WriteString("\n")
		}
		return b.String()
	}
	before := state()
	for path, list := range cases {
		for _, c := range list {
			t.Run(path+": "+c.name, func(t *testing.T) {
				r := f.do("POST", path, "", c.body)
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

// TestCustomersAndLoyaltyOrgIsolation: another org sees none of an org's
// customers, programs, accounts or transactions, and can touch none of them.
func TestCustomersAndLoyaltyOrgIsolation(t *testing.T) {
	f := newCustFixture(t)
	f.create("/customers", "ann", map[string]any{"first_name": "Ann", "email": "ann@example.com", "phone": "0400 111 222"})
	f.create("/loyalty/programs", "club", map[string]any{"name": "Club", "points_per_unit": 1})
	f.create("/loyalty/accounts", "acct", map[string]any{"customer_id": f.ids["ann"]})
	if r := f.do("POST", "/loyalty/accounts/{acct}/earn", "", map[string]any{"points": 50}); r.Status != 201 {
		t.Fatalf("earn: %d %s", r.Status, r.Body)
	}
	other := f.tn.MustOrg("Other Cafe").Owner
	empty := func(t *testing.T, r *resp) {
		if len(r.List()) != 0 || r.JSON()["has_more"] != false {
			t.Errorf("another org's list leaks: %s", r.Body)
		}
	}
	f.run([]custScenario{
		{name: "read a customer", method: "GET", path: "/customers/{ann}", token: other, want: 404, kind: "not-found"},
		{name: "update a customer", method: "PATCH", path: "/customers/{ann}", token: other, body: map[string]any{"notes": "x"}, want: 404, kind: "not-found"},
		{name: "delete a customer", method: "DELETE", path: "/customers/{ann}", token: other, want: 404, kind: "not-found"},
		{name: "list customers", method: "GET", path: "/customers", token: other, want: 200, check: empty},
		{name: "search by name", method: "GET", path: "/customers?q=ann", token: other, want: 200, check: empty},
		{name: "search by phone digits", method: "GET", path: "/customers?q=0400111", token: other, want: 200, check: empty},
		{name: "filter by e-mail", method: "GET", path: "/customers?email=ann@example.com", token: other, want: 200, check: empty},
		{name: "rewards", method: "GET", path: "/customers/{ann}/rewards", token: other, want: 404, kind: "not-found"},
		{name: "list programs", method: "GET", path: "/loyalty/programs", token: other, want: 200, check: empty},
		{name: "read a program", method: "GET", path: "/loyalty/programs/{club}", token: other, want: 404, kind: "not-found"},
		{name: "read an account", method: "GET", path: "/loyalty/accounts/{acct}", token: other, want: 404, kind: "not-found"},
		{name: "look up by customer", method: "GET", path: "/loyalty/accounts/customer/{ann}", token: other, want: 404, kind: "not-found"},
		{name: "earn", method: "POST", path: "/loyalty/accounts/{acct}/earn", token: other, body: map[string]any{"points": 5}, want: 404, kind: "not-found"},
		{name: "redeem", method: "POST", path: "/loyalty/accounts/{acct}/redeem", token: other, body: map[string]any{"points": 5}, want: 404, kind: "not-found"},
		{name: "transactions", method: "GET", path: "/loyalty/accounts/{acct}/transactions", token: other, want: 404, kind: "not-found"},
		{name: "enrol the other org's customer", method: "POST", path: "/loyalty/accounts", token: other,
			body: map[string]any{"customer_id": "{ann}"}, want: 422, kind: "validation", field: "customer_id"},
		{name: "enrol into the other org's program", method: "POST", path: "/loyalty/accounts", token: other,
			body: map[string]any{"customer_id": "{ann}", "program_id": "{club}"}, want: 422, kind: "validation", field: "program_id"},
		{name: "the same e-mail in another org", method: "POST", path: "/customers", token: other,
			body: map[string]any{"first_name": "Ann", "email": "ANN@example.com"}, want: 201},
		{name: "the first org is untouched", method: "GET", path: "/loyalty/accounts/{acct}", want: 200, check: func(t *testing.T, r *resp) {
			wantFields(t, r.Data(), map[string]any{"points_balance": float64(50)})
			wantFields(t, f.get("/customers/{ann}"), map[string]any{"first_name": "Ann", "notes": ""})
			if r := f.do("GET", "/customers", "", nil); len(r.List()) != 1 {
				t.Errorf("the other org's customer shows up: %s", r.Body)
			}
		}},
	})
}

// TestOpenAPIDocumentsCustomersAndLoyalty: the routes and their decisions
// reach the OpenAPI document.
func TestOpenAPIDocumentsCustomersAndLoyalty(t *testing.T) {
	tn := MustStartNode(t, kassa.NodeEdge, nil)
	r := tn.Do("GET", "/api/v1/openapi.json", "", nil)
	if r.Status != 200 {
		t.Fatalf("openapi: %d", r.Status)
	}
	paths, _ := r.JSON()["paths"].(map[string]any)
	for p, methods := range map[string][]string{
		"/api/v1/customers":                                 {"get", "post"},
		"/api/v1/customers/{id}":                            {"get", "patch", "delete"},
		"/api/v1/customers/{id}/rewards":                    {"get"},
		"/api/v1/loyalty/programs":                          {"get", "post"},
		"/api/v1/loyalty/accounts":                          {"post"},
		"/api/v1/loyalty/accounts/{id}":                     {"get"},
		"/api/v1/loyalty/accounts/customer/{customerId}":    {"get"},
		"/api/v1/loyalty/accounts/{accountId}/earn":         {"post"},
		"/api/v1/loyalty/accounts/{accountId}/redeem":       {"post"},
		"/api/v1/loyalty/accounts/{accountId}/transactions": {"get"},
	} {
		ops, _ := paths[p].(map[string]any)
		for _, m := range methods {
			op, _ := ops[m].(map[string]any)
			if s, _ := op["summary"].(string); s == "" {
				t.Errorf("%s %s is not documented", m, p)
			}
		}
	}
	del := paths["/api/v1/customers/{id}"].(map[string]any)["delete"].(map[string]any)
	if _, ok := del["responses"].(map[string]any)["204"]; !ok {
		t.Errorf("DELETE /customers/{id} does not document 204: %v", del["responses"])
	}
}

// TestLoyaltyPointsPayPartOfAnOrderAtEveryNode: at the hub, a connected
// edge and an edge without its uplink, a customer with 50 points worth
// 10 each pays 300 of a 1000 order with 30 of them and the rest in cash;
// the order is paid, the points are debited, and a full refund gives
// them back. A points payment for an order without a customer, of an
// amount that is not a whole number of points, or beyond the customer's
// points is a 422 naming the field that stores nothing.
func TestLoyaltyPointsPayPartOfAnOrderAtEveryNode(t *testing.T) {
	for _, at := range []struct {
		name  string
		node  string
		tweak func(*node.Config)
	}{
		{"hub", kassa.NodeHub, nil},
		{"edge", kassa.NodeEdge, nil},
		{"offline edge", kassa.NodeEdge, func(c *node.Config) { c.Offline = func() bool { return true } }},
	} {
		t.Run(at.name, func(t *testing.T) {
			f := ordFixtureOn(t, MustStartNode(t, at.node, at.tweak))
			f.must(f.do("PUT", "/payments/methods", "", map[string]any{"methods": []any{map[string]any{"method": "cash", "enabled": true},
				map[string]any{"method": "loyalty_points", "enabled": true}}}), 200)
			f.create("/loyalty/programs", map[string]any{"name": "Beans", "points_per_unit": 1, "redemption_value": 10})
			cust := f.customer("Ann")
			acct := f.create("/loyalty/accounts", map[string]any{"customer_id": cust})
			f.must(f.do("POST", "/loyalty/accounts/"+acct+"/earn", "", map[string]any{"points": 50}), 201)
			product := f.product("Latte", "PTS-LAT", 1000)
			line := []any{map[string]any{"product_id": product, "quantity": 1}}
			o := f.order(map[string]any{"location_id": f.locA, "customer_id": cust, "line_items": line})
			oid, total := o["id"].(string), ordNum(o["total"])
			anon := f.order(map[string]any{"location_id": f.locA, "line_items": line})
			points := func(orderID string, amount int64) *resp {
				return f.do("POST", "/payments/initiate", f.cashier, map[string]any{"order_id": orderID, "amount": amount, "method": "loyalty_points"})
			}
			for _, sc := range []struct {
				name, order, field string
				amount             int64
			}{
				{"an order without a customer", anon["id"].(string), "customer_id", 300},
				{"not a whole number of points", oid, "amount", 305},
				{"beyond the customer's points", oid, "amount", 510},
			} {
				before := f.tn.outboxLen()
				f.refused(t, points(sc.order, sc.amount), 422, "validation", sc.field, before)
			}
			balance := func() int64 {
				return ordNum(f.must(f.do("GET", "/loyalty/accounts/"+acct, "", nil), 200).Data()["points_balance"])
			}
			p := f.must(points(oid, 300), 201).Data()
			ordWant(t, p, map[string]any{"method": "loyalty_points", "status": "captured", "amount": 300.0})
			if b := balance(); b != 20 {
				t.Fatalf("after paying 300 with points: %d points, want 20", b)
			}
			f.payCash(oid, total-300)
			ordWant(t, f.get(oid), map[string]any{"paid_total": float64(total)})
			if got := f.payList("", "?method=loyalty_points"); len(got) != 1 || got[0]["id"] != p["id"] {
				t.Fatalf("payments by method loyalty_points: %v", got)
			}
			f.complete(oid)
			earned := ordNum(f.get(oid)["loyalty_points_earned"])
			f.must(f.do("POST", "/orders/"+oid+"/refund", f.manager, nil), 200)
			if b := balance(); b != 50+earned {
				t.Fatalf("after a full refund: %d points, want the 30 back: %d", b, 50+earned)
			}
			txns := f.must(f.do("GET", "/loyalty/accounts/"+acct+"/transactions", "", nil), 200).List()
			last := txns[len(txns)-1].(map[string]any)
			ordWant(t, last, map[string]any{"type": "refund", "points": 30.0, "payment_id": p["id"], "order_id": oid})
		})
	}
}
