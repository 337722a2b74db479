package httpapi_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"kassa.dev/shared/kassa"
	"kassa.dev/shared/node"
	"kassa.dev/sync/change"
	"kassa.dev/sync/wait"
)

// Cross-org isolation, black-box (issue 12): org A holds one of every
// resource; org B's owner calls every /api/v1 route that takes an id, as
// the node's own OpenAPI document lists them, with A's ids, and must get
// 404 — never 403 or 200 — with nothing of A changed; B's lists never
// show A's rows. A route with an id this test has no fixture for fails
// it, so a new route is covered the day it is added.

// isoFixture is org A's resources and org B's tokens.
type isoFixture struct {
	tn   *testNode
	a, b *testOrg
	ids  map[string]string // path prefix (up to the id) → A's id
	aIDs []string          // every id of A, for the list check
	// queries are the query strings of list routes that need one, with
	// A's values: B's call must not find A's row by them either.
	queries  map[string]string
	partnerB string // on the hub: a partner app that did not create A
	// byBody are calls that name A's ids in their body, not their path
	// (returns, exchanges): B's must be refused with status, changing
	// nothing of A.
	byBody []isoBodyCall
}

// isoBodyCall is a POST naming A's ids in its body.
type isoBodyCall struct {
	path   string
	body   map[string]any
	status int
}

// isoCreate posts body as A's owner and returns the new id.
func (f *isoFixture) isoCreate(t *testing.T, path string, body any) string {
	t.Helper()
	r := f.tn.Do("POST", "/api/v1"+path, f.a.Owner, body)
	if r.Status != 201 && r.Status != 200 {
		t.Fatalf("setup POST %s: %d %s", path, r.Status, r.Body)
	}
	id, _ := r.Data()["id"].(string)
	return id
}

func newIsoFixture(t *testing.T, kind string) *isoFixture {
	f := &isoFixture{ids: map[string]string{}, queries: map[string]string{}}
	if kind == kassa.NodeHub {
		var apps *partnerApps
		f.tn, apps = MustStartPartnerHub(t, func(c *node.Config) {
			c.Extend = func(n *node.Node) error {
				// The hub's own services besides the common ones.
				n.Services.Enrolment = n.EnrolmentService(func() string { return "nats-leaf://127.0.0.1:7422" }, nil)
				n.Services.Sync = n.HubSync(node.NewEdgeBook())
				return nil
			}
		})
		reseller := f.tn.MustOrg("Reseller")
		partnerA := apps.app(reseller, "partner-a", kassa.ScopePartnersWrite)
		f.partnerB = apps.app(reseller, "partner-b", kassa.ScopePartnersWrite)
		f.a = f.tn.MustTenant(partnerA, "Org A")
		f.b = f.tn.MustTenant(f.partnerB, "Org B")
		f.ids["/partners/tenants/"] = f.a.ID
		// An app of A's, connected to A by a client_credentials grant.
		apps.app(f.a, "app-of-a", kassa.ScopeCatalogRead)
		f.ids["/oauth/apps/"] = apps.ids["app-of-a"]
		f.ids["/oauth/connections/"] = apps.ids["app-of-a"]
	} else {
		f.tn = MustStartNode(t, kind, nil)
		f.a, f.b = f.tn.MustOrg("Org A"), f.tn.MustOrg("Org B")
	}
	loc := f.isoCreate(t, "/locations", map[string]any{"name": "A Main St", "timezone": "Australia/Sydney"})
	loc2 := f.isoCreate(t, "/locations", map[string]any{"name": "A Back St", "timezone": "Australia/Sydney"})
	cat := f.isoCreate(t, "/catalog/categories", map[string]any{"name": "A coffee"})
	prod := f.isoCreate(t, "/catalog/products", map[string]any{"name": "A latte", "sku": "A-LAT", "base_price": 500, "category_id": cat})
	group := f.isoCreate(t, "/catalog/modifiers/groups", map[string]any{"name": "A milk",
		"options": []any{map[string]any{"name": "Oat", "price_adjustment": 50}}, "product_ids": []string{prod}})
	prices := f.isoCreate(t, "/catalog/price-lists", map[string]any{"name": "A happy hour", "location_ids": []string{loc},
		"prices": []any{map[string]any{"product_id": prod, "price": 400}}})
	campaign := f.isoCreate(t, "/campaigns", map[string]any{"name": "A pastries", "type": "discount", "location_ids": []string{loc},
		"rules": []any{map[string]any{"type": "product_discount", "discount_type": "percent", "value": 1000, "product_ids": []string{prod}}}})
	cust := f.isoCreate(t, "/customers", map[string]any{"first_name": "Ann", "email": "ann@a.test"})
	program := f.isoCreate(t, "/loyalty/programs", map[string]any{"name": "A beans", "points_per_unit": 1, "redemption_value": 10})
	account := f.isoCreate(t, "/loyalty/accounts", map[string]any{"customer_id": cust})
	f.isoCreate(t, "/inventory/stock/adjust", map[string]any{"location_id": loc, "product_id": prod, "reason": "received", "quantity": 100})
	transfer := f.isoCreate(t, "/inventory/transfers", map[string]any{"from_location_id": loc, "to_location_id": loc2,
		"lines": []any{map[string]any{"product_id": prod, "quantity": 2}}})
	order := f.isoCreate(t, "/orders", map[string]any{"location_id": loc, "customer_id": cust,
		"line_items": []any{map[string]any{"product_id": prod, "quantity": 1}}})
	total := f.tn.Do("GET", "/api/v1/orders/"+order, f.a.Owner, nil).Data()["total"]
	payment := f.isoCreate(t, "/payments/initiate", map[string]any{"order_id": order, "amount": total, "method": "card",
		"card_number": "4242 4242 4242 4242", "capture": false})
	gift := f.tn.Do("POST", "/api/v1/gift-cards", f.a.Owner, map[string]any{"initial_amount": 5000})
	if gift.Status != 201 {
		t.Fatalf("setup POST /gift-cards: %d %s", gift.Status, gift.Body)
	}
	giftCode := gift.Data()["code"].(string)
	register := f.isoCreate(t, "/registers", map[string]any{"location_id": loc, "name": "A's till"})
	// A second order of A's, paid and completed at a till (with a printer
	// that is off, so nothing changes it later): it has a receipt.
	if r := f.tn.Do("PUT", "/api/v1/registers/"+register+"/printer", f.a.Owner, map[string]any{"host": "127.0.0.1", "enabled": false}); r.Status != 200 {
		t.Fatalf("setup PUT /registers/{id}/printer: %d %s", r.Status, r.Body)
	}
	sold := f.isoCreate(t, "/orders", map[string]any{"location_id": loc, "line_items": []any{map[string]any{"product_id": prod, "quantity": 1}}})
	f.isoCreate(t, "/payments/initiate", map[string]any{"order_id": sold, "amount": total, "method": "cash", "tip": 1})
	tip := f.tn.Do("GET", "/api/v1/tips?order_id="+sold, f.a.Owner, nil).List()[0].(map[string]any)["id"].(string)
	if r := f.tn.Do("POST", "/api/v1/orders/"+sold+"/complete", f.a.Owner, map[string]any{"register_id": register}); r.Status != 200 {
		t.Fatalf("setup complete: %d %s", r.Status, r.Body)
	}
	f.ids["receipt:"] = sold // the routes /orders/{id}/receipt* (expand)
	layby := f.isoCreate(t, "/laybys", map[string]any{"location_id": loc, "customer_id": cust,
		"line_items": []any{map[string]any{"product_id": prod, "quantity": 2}}, "deposit": map[string]any{"method": "cash", "amount": 200}})
	f.queries["/gift-cards/lookup"] = "code=" + giftCode
	// A's customer holds store credit (a return without receipt); B names
	// A's order, store, customer and product in returns and exchanges.
	f.isoCreate(t, "/returns", map[string]any{"location_id": loc, "customer_id": cust, "line_items": []any{map[string]any{"product_id": prod, "quantity": 1}}})
	soldLine := f.tn.Do("GET", "/api/v1/orders/"+sold, f.a.Owner, nil).Data()["line_items"].([]any)[0].(map[string]any)["id"]
	back := []any{map[string]any{"line_item_id": soldLine, "quantity": 1}}
	f.byBody = []isoBodyCall{
		{"/returns", map[string]any{"order_id": sold, "line_items": back}, 404},
		{"/returns", map[string]any{"order_id": sold, "line_items": back, "refund_to": "store_credit", "customer_id": cust}, 404},
		{"/exchanges", map[string]any{"order_id": sold, "customer_id": cust, "return_lines": back,
			"line_items": []any{map[string]any{"product_id": prod, "quantity": 1}}}, 404},
		{"/returns", map[string]any{"location_id": loc, "customer_id": cust, "line_items": []any{map[string]any{"product_id": prod, "quantity": 1}}}, 422},
	}
	closed := f.isoCreate(t, "/drawers", map[string]any{"register_id": register, "float": map[string]any{"amount": 1000}})
	zReport := f.isoCreate(t, "/drawers/"+closed+"/close", map[string]any{"count": map[string]any{"amount": 1000}})
	drawer := f.isoCreate(t, "/drawers", map[string]any{"register_id": register, "float": map[string]any{"amount": 2000}})
	cashier := f.isoCreate(t, "/users", map[string]any{"email": "cashier@a.test", "role": "cashier", "password": testPassword,
		"location_ids": []string{loc}})
	f.ids["/users/"] = cashier
	wait.For(t, 10*time.Second, "A's kitchen ticket", func() bool {
		return strings.Contains(string(f.tn.Do("GET", "/api/v1/kds/tickets?location_id="+loc, f.a.Owner, nil).Body), order)
	})
	for prefix, id := range map[string]string{
		"/locations/": loc, "/catalog/categories/": cat, "/catalog/products/": prod, "/catalog/modifiers/groups/": group,
		"/catalog/price-lists/": prices, "/customers/": cust, "/loyalty/programs/": program, "/loyalty/accounts/": account,
		"/loyalty/accounts/customer/": cust, "/inventory/transfers/": transfer, "/orders/": order, "/payments/": payment,
		"/kds/tickets/": order, "/campaigns/": campaign, "/gift-cards/": gift.Data()["id"].(string),
		"/registers/": register, "/drawers/": drawer, "/z-reports/": zReport, "/laybys/": layby, "/tips/": tip,
	} {
		f.ids[prefix] = id
	}
	if kind == kassa.NodeHub {
		enrol := f.tn.Do("POST", "/api/v1/locations/"+loc+"/enrolment", f.a.Owner, map[string]any{})
		claim := f.tn.Do("POST", "/api/v1/sync/enrol", "", map[string]any{"token": enrol.Data()["token"]})
		if claim.Status != 200 && claim.Status != 201 {
			t.Fatalf("enrol an edge of A: %d %s / %d %s", enrol.Status, enrol.Body, claim.Status, claim.Body)
		}
		f.ids["/sync/nodes/"] = claim.Data()["node_id"].(string)
		// A quarantined record of A's edge: a customer made by nobody.
		now := time.Now().UTC().Format(time.RFC3339Nano)
		if _, err := f.tn.N.IngestFrom(context.Background(), f.a.ID, loc, f.ids["/sync/nodes/"], []change.Change{{ID: f.tn.N.NewID(),
			OrgID: f.a.ID, Entity: "customer", EntityID: f.tn.N.NewID(), Op: change.OpInsert, Origin: f.ids["/sync/nodes/"],
			Actor: f.tn.N.NewID(), HLC: f.tn.N.Stamp(), Fields: map[string]any{"first_name": "Q", "created_at": now, "updated_at": now}}}); err != nil {
			t.Fatal(err)
		}
		conflicts := f.tn.Do("GET", "/api/v1/sync/conflicts", f.a.Owner, nil).List()
		if len(conflicts) != 1 {
			t.Fatalf("A's quarantined record: %v", conflicts)
		}
		f.ids["/sync/conflicts/"] = conflicts[0].(map[string]any)["id"].(string)
		// A webhook endpoint of A's with one attempt in its log.
		hook := httptest.NewServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {}))
		t.Cleanup(hook.Close)
		f.ids["/webhooks/"] = f.isoCreate(t, "/webhooks", map[string]any{"url": hook.URL, "events": []string{"*"}})
		ping := f.tn.Do("POST", "/api/v1/webhooks/"+f.ids["/webhooks/"]+"/test", f.a.Owner, nil)
		f.ids["/webhooks/{id}/logs/"], _ = ping.Data()["deliveryId"].(string)
		// An automation rule of A's that tags A's customer, run once by hand.
		f.ids["/automations/"] = f.isoCreate(t, "/automations", map[string]any{"name": "A tags",
			"trigger": map[string]any{"type": "manual"},
			"actions": []any{map[string]any{"type": "tag_customer", "params": map[string]any{"customer_id": cust, "tag": "a"}}}})
		f.tn.Do("POST", "/api/v1/automations/trigger", f.a.Owner, map[string]any{"event": "customer.created", "rule_id": f.ids["/automations/"]})
	}
	for _, id := range f.ids {
		f.aIDs = append(f.aIDs, id)
	}
	f.aIDs = append(f.aIDs, f.a.ID, loc2, giftCode)
	return f
}

// isoBodies are valid bodies of the routes with an id that take one, so
// that B's calls fail on the id, not on the body.
var isoBodies = map[string]any{
	"PATCH /catalog/categories/{id}":            map[string]any{"name": "B was here"},
	"PATCH /catalog/products/{id}":              map[string]any{"name": "B was here"},
	"PATCH /catalog/modifiers/groups/{id}":      map[string]any{"name": "B was here"},
	"PATCH /catalog/price-lists/{id}":           map[string]any{"name": "B was here"},
	"PATCH /customers/{id}":                     map[string]any{"first_name": "B was here"},
	"PATCH /orders/{id}":                        map[string]any{"notes": "B was here"},
	"POST /laybys/{id}/payments":                map[string]any{"method": "cash", "amount": 100},
	"POST /laybys/{id}/cancel":                  map[string]any{"by": "store"},
	"PATCH /oauth/apps/{id}":                    map[string]any{"name": "B was here"},
	"POST /oauth/apps/{id}/rotate-secret":       map[string]any{},
	"POST /orders/{id}/refund":                  map[string]any{"amount": 100, "reason": "B was here"},
	"POST /loyalty/accounts/{accountId}/earn":   map[string]any{"points": 10, "reason": "B was here"},
	"POST /loyalty/accounts/{accountId}/redeem": map[string]any{"points": 1, "reason": "B was here"},
	"POST /kds/tickets/{id}/bump":               map[string]any{"kitchen_status": "served"},
	"POST /kds/tickets/{id}/recall":             map[string]any{"kitchen_status": "new"},
	"PUT /partners/tenants/{id}/rate-limit":     map[string]any{"per_minute": 1, "burst": 1},
	"POST /inventory/transfers/{id}/cancel":     map[string]any{},
	"POST /inventory/transfers/{id}/receive":    map[string]any{},
	"POST /locations/{id}/enrolment":            map[string]any{},
	"POST /payments/{id}/capture":               map[string]any{},
	"POST /payments/{id}/void":                  map[string]any{},
	"DELETE /partners/tenants/{id}/rate-limit":  nil,
	"PATCH /webhooks/{id}":                      map[string]any{"description": "B was here"},
	"PATCH /automations/{id}":                   map[string]any{"name": "B was here"},
	"PATCH /campaigns/{id}":                     map[string]any{"name": "B was here"},
	"POST /campaigns/{id}/launch":               map[string]any{},
	"POST /sync/conflicts/{id}/resolve":         map[string]any{"note": "B was here"},
	"PATCH /locations/{id}":                     map[string]any{"name": "B was here"},
	"PATCH /registers/{id}":                     map[string]any{"name": "B was here"},
	"PATCH /users/{id}":                         map[string]any{"name": "B was here"},
	"POST /users/{id}/password":                 map[string]any{"password": "B was here!"},
	"PUT /users/{id}/pin":                       map[string]any{"pin": "1234"},
	"POST /drawers/{id}/paid-in":                map[string]any{"amount": 100, "reason": "B was here"},
	"POST /drawers/{id}/paid-out":               map[string]any{"amount": 100, "reason": "B was here"},
	"POST /drawers/{id}/no-sale":                map[string]any{"reason": "B was here"},
	"POST /drawers/{id}/close":                  map[string]any{"count": map[string]any{"amount": 0}},
	"POST /orders/{id}/complete":                map[string]any{"register_id": "till-b"},
	"POST /orders/{id}/receipt/print":           map[string]any{},
	"POST /orders/{id}/receipt/email":           map[string]any{"email": "b@b.test"},
	"PUT /registers/{id}/printer":               map[string]any{"host": "127.0.0.1"},
}

// isoNot404 are the routes with an id whose answer to B is not 404, and
// why: neither reveals whether the id exists.
var isoNot404 = map[string]int{
	// Only the operator sets rate limits: any other caller is 403 for
	// every id alike.
	"PUT /partners/tenants/{id}/rate-limit":    403,
	"DELETE /partners/tenants/{id}/rate-limit": 403,
}

var isoParam = regexp.MustCompile(`\{([A-Za-z]+)\}`)

type isoRoute struct{ method, path string } // path below /api/v1, with {params}

// routes returns every operation of the node's OpenAPI document.
func (f *isoFixture) routes(t *testing.T) (withID, lists []isoRoute, hasBody map[isoRoute]bool) {
	t.Helper()
	r := f.tn.Do("GET", "/api/v1/openapi.json", "", nil)
	var doc struct {
		Paths map[string]map[string]map[string]any `json:"paths"`
	}
	if err := json.Unmarshal(r.Body, &doc); err != nil || len(doc.Paths) < 20 {
		t.Fatalf("openapi: %v %s", err, r.Body[:min(len(r.Body), 200)])
	}
	hasBody = map[isoRoute]bool{}
	for p, ops := range doc.Paths {
		for m, op := range ops {
			rt := isoRoute{strings.ToUpper(m), strings.TrimPrefix(p, "/api/v1")}
			hasBody[rt] = op["requestBody"] != nil
			switch {
			case isoParam.MatchString(p):
				withID = append(withID, rt)
			case rt.method == "GET" && rt.path != "/kds/stream" && rt.path != "/openapi.json" &&
				!strings.HasSuffix(rt.path, "/ws"): // WebSocket feeds answer a plain GET with 400
				lists = append(lists, rt)
			}
		}
	}
	less := func(a, b isoRoute) int { return strings.Compare(a.path+a.method, b.path+b.method) }
	slices.SortFunc(withID, less)
	slices.SortFunc(lists, less)
	return withID, lists, hasBody
}

// expand fills a route's parameters with A's ids; ok is false when the
// fixture has none for it.
func (f *isoFixture) expand(path string) (string, bool) {
	ok := true
	out := isoParam.ReplaceAllStringFunc(path, func(m string) string {
		prefix := path[:strings.Index(path, m)]
		if strings.HasPrefix(path, "/orders/{id}/receipt") {
			prefix = "receipt:" // a completed order's
		}
		switch m {
		case "{accountId}":
			prefix = "/loyalty/accounts/"
		case "{customerId}":
			prefix = "/loyalty/accounts/customer/"
		}
		id, found := f.ids[prefix]
		ok = ok && found
		return id
	})
	return out, ok
}

// stateOfA is everything of A a call could change, as A's owner reads it:
// every route with an id, every list, and the node's outbox.
func (f *isoFixture) stateOfA(t *testing.T, withID, lists []isoRoute) string {
	t.Helper()
	var b strings.Builder
	fmt.Fprintf(&b, "outbox=%d\n", f.tn.outboxLen())
	for _, rt := range append(slices.Clone(withID), lists...) {
		if rt.method != "GET" || strings.HasPrefix(rt.path, "/kds/") || rt.path == "/sync/status" {
			continue // the board and the link status carry the time
		}
		path, _ := f.expand(rt.path)
		tok := f.a.Owner
		if strings.HasPrefix(rt.path, "/partners/") {
			tok = operatorToken // sees A's tenant record and rate limit
		}
		q := "?limit=200"
		if extra, ok := f.queries[rt.path]; ok {
			q += "&" + extra
		}
		r := f.tn.Do("GET", "/api/v1"+path+q, tok, nil)
		fmt.Fprintf(&b, "%s %d %s\n", path, r.Status, r.Body)
	}
	return b.String()
}

func testCrossOrgIsolation(t *testing.T, kind string) {
	f := newIsoFixture(t, kind)
	withID, lists, hasBody := f.routes(t)
	if len(withID) < 25 {
		t.Fatalf("only %d routes with an id in the OpenAPI document", len(withID))
	}
	before := f.stateOfA(t, withID, lists)
	for _, rt := range withID {
		key := rt.method + " " + rt.path
		t.Run(key, func(t *testing.T) {
			path, ok := f.expand(rt.path)
			if !ok {
				t.Fatalf("no id of A for %s: give the fixture one of this resource", rt.path)
			}
			var body any
			if hasBody[rt] {
				body = isoBodies[key]
				if body == nil {
					t.Fatalf("no body for %s in isoBodies: give it a valid one", key)
				}
			}
			tok := f.b.Owner
			if strings.HasPrefix(rt.path, "/partners/") {
				tok = f.partnerB // B's owner lacks partners:write: 403 before any id
			}
			want := 404
			if s, ok := isoNot404[key]; ok {
				want = s
			}
			r := f.tn.Do(rt.method, "/api/v1"+path, tok, body)
			if r.Status != want {
				t.Fatalf("B got %d, want %d: %s", r.Status, want, r.Body)
			}
			if r.Status == 404 && r.Header.Get("Content-Type") != "application/problem+json" {
				t.Fatalf("404 is not a problem: %s", r.Body)
			}
		})
	}
	query := "?location_id=" + f.ids["/locations/"] + "&customer_id=" + f.ids["/customers/"] + "&product_id=" + f.ids["/catalog/products/"]
	for _, rt := range lists {
		for _, q := range []string{"", query} {
			if extra, ok := f.queries[rt.path]; ok {
				q = "?" + extra + "&" + strings.TrimPrefix(q, "?")
			}
			tok := f.b.Owner
			if strings.HasPrefix(rt.path, "/partners/") {
				tok = f.partnerB
			}
			r := f.tn.Do("GET", "/api/v1"+rt.path+q, tok, nil)
			if _, ok := f.queries[rt.path]; ok && r.Status != 404 {
				t.Errorf("B's GET %s%s: %d, want 404: %s", rt.path, q, r.Status, r.Body)
			}
			for _, id := range f.aIDs {
				if r.Status < 300 && strings.Contains(string(r.Body), id) {
					t.Errorf("B's GET %s%s shows A's %s: %s", rt.path, q, id, r.Body)
				}
			}
		}
	}
	for _, call := range f.byBody {
		if r := f.tn.Do("POST", "/api/v1"+call.path, f.b.Owner, call.body); r.Status != call.status {
			t.Errorf("B's POST %s naming A's ids %v: %d, want %d: %s", call.path, call.body, r.Status, call.status, r.Body)
		}
	}
	after := strings.Split(f.stateOfA(t, withID, lists), "\n")
	for i, line := range strings.Split(before, "\n") {
		if i >= len(after) || after[i] != line {
			t.Errorf("B's calls changed A:\nbefore: %s\nafter:  %s", line, after[min(i, len(after)-1)])
		}
	}
}

// TestCrossOrgIsolationHub runs the walk at a hub, where org B is a
// tenant created over HTTP by another partner app than A's.
func TestCrossOrgIsolationHub(t *testing.T) { testCrossOrgIsolation(t, kassa.NodeHub) }

// TestCrossOrgIsolationEdge runs it at an edge (two orgs on one store:
// not how edges run, but the same routes and services).
func TestCrossOrgIsolationEdge(t *testing.T) { testCrossOrgIsolation(t, kassa.NodeEdge) }
