package httpapi_test

import (
	"bufio"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"net"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"kassa.dev/shared/kassa"
)

// The tests of this file throw bad input at every body, query and path of
// the catalog, locations and users routes. Every bad request must be a 4xx
// problem, never a 5xx, and must change nothing in the store.

// biFixture is a node with one org holding one of every resource, so that
// PATCH routes have something to (not) change.
type biFixture struct {
	tn                                                    *testNode
	org                                                   *testOrg
	locationID, categoryID, productID, groupID, priceList string
	// seen collects every response, for the loop assertions at the end.
	seen []biSeen
}

type biSeen struct {
	what string
	r    *resp
}

// biCreate posts body to path and returns the id of the created resource.
func (f *biFixture) biCreate(t *testing.T, path string, body any) string {
	t.Helper()
	r := f.tn.Do("POST", "/api/v1"+path, f.org.Owner, body)
	if r.Status != 201 {
		t.Fatalf("setup POST %s: %d %s", path, r.Status, r.Body)
	}
	id, _ := r.Data()["id"].(string)
	if !kassa.ValidID(id) {
		t.Fatalf("setup POST %s: no id in %s", path, r.Body)
	}
	return id
}

func newBIFixture(t *testing.T) *biFixture {
	t.Helper()
	tn := MustStartNode(t, kassa.NodeEdge, nil)
	f := &biFixture{tn: tn, org: tn.MustOrg("Bad Input Cafe")}
	f.locationID = f.biCreate(t, "/locations", map[string]any{"name": "Main St", "timezone": "Australia/Sydney"})
	f.categoryID = f.biCreate(t, "/catalog/categories", map[string]any{"name": "Coffee"})
	f.productID = f.biCreate(t, "/catalog/products", map[string]any{"name": "Flat white", "sku": "FW-1", "base_price": 450,
		"category_id": f.categoryID, "tags": []string{"hot"}, "barcodes": []string{"9300000000001"}})
	f.biCreate(t, "/catalog/products", map[string]any{"name": "Long black", "sku": "LB-1", "base_price": 400})
	f.groupID = f.biCreate(t, "/catalog/modifiers/groups", map[string]any{"name": "Milk",
		"options": []any{map[string]any{"name": "Oat", "price_adjustment": 50}}, "product_ids": []string{f.productID}})
	f.priceList = f.biCreate(t, "/catalog/price-lists", map[string]any{"name": "Happy hour",
		"location_ids": []string{f.locationID}, "prices": []any{map[string]any{"product_id": f.productID, "price": 300}}})
	return f
}

// do sends a request as the owner and records the response.
func (f *biFixture) do(what, method, path string, body any, headers ...string) *resp {
	r := f.tn.Do(method, path, f.org.Owner, body, headers...)
	f.seen = append(f.seen, biSeen{what: what + ": " + method + " " + path, r: r})
	return r
}

// state is everything a bad request could have changed: the outbox and
// every list of the org, byte for byte.
func (f *biFixture) state(t *testing.T) string {
	t.Helper()
	var b strings.Builder
	fmt.Fprintf(&b, "outbox=%d\n", f.tn.outboxLen())
	for _, p := range []string{"/catalog/products", "/catalog/categories", "/catalog/modifiers/groups", "/catalog/price-lists", "/locations"} {
		r := f.tn.Do("GET", "/api/v1"+p+"?limit=200", f.org.Owner, nil)
		if r.Status != 200 {
			t.Fatalf("state: GET %s: %d %s", p, r.Status, r.Body)
		}
		b.WriteString(p + " ")
		b.Write(r.Body)
		b.WriteString("\n")
	}
	return b.String()
}

// checkLoop asserts what holds for every response seen: no 5xx, an
// X-Request-Id on each (CONTRACT.md), and no internals in error bodies.
func (f *biFixture) checkLoop(t *testing.T) {
	t.Helper()
	if len(f.seen) == 0 {
		t.Fatal("no responses recorded")
	}
	for _, s := range f.seen {
		if s.r.Status >= 500 {
			t.Errorf("%s: server error %d %s", s.what, s.r.Status, s.r.Body)
		}
		if s.r.Header.Get("X-Request-Id") == "" {
			t.Errorf("%s: %d response without X-Request-Id", s.what, s.r.Status)
		}
		if s.r.Status >= 400 {
			low := strings.ToLower(string(s.r.Body))
			for _, leak := range []string{"sqlite", "select ", "goroutine", "panic", ".go:"} {
				if strings.Contains(low, leak) {
					t.Errorf("%s: error body leaks %q: %s", s.what, leak, s.r.Body)
				}
			}
		}
	}
}

// biRawDo sends one request over its own connection and reads the answer.
// A server refusing a body over its limit answers 413 without reading the
// body and closes the connection; net/http's client may then report the
// failed write of the body instead of the response, so this writes the
// request in the background, ignores write errors and reads the response.
func biRawDo(t *testing.T, tn *testNode, method, path, token, body string) *resp {
	t.Helper()
	u, err := url.Parse(tn.URL)
	if err != nil {
		t.Fatal(err)
	}
	conn, err := net.DialTimeout("tcp", u.Host, 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	conn.SetDeadline(time.Now().Add(10 * time.Second))
	var req strings.Builder
	fmt.Fprintf(&req, "%s %s HTTP/1.1\r\nHost: %s\r\nContent-Type: application/json\r\nContent-Length: %d\r\nConnection: close\r\n",
		method, path, u.Host, len(body))
	if token != "" {
		fmt.Fprintf(&req, "Authorization: Bearer %s\r\n", token)
	}
	req.WriteString("\r\n")
	req.WriteString(body)
	raw := req.String()
	go io.WriteString(conn, raw) // the server may stop reading and reset: ignore
	res, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil {
		t.Fatalf("%s %s: reading the response: %v", method, path, err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	return &resp{Status: res.StatusCode, Header: res.Header, Body: b}
}

// biCase is one bad request and the problem it must get. Status 0 means a
// wrong method: 404 or 405, whichever the router answers, as a problem.
type biCase struct {
	name    string
	method  string
	path    string // below /api/v1 unless it starts with /api/ or is absolute
	body    any
	headers []string
	status  int
	kind    string
	field   string // for validation problems: a field the errors array must name
	raw     bool   // send over a raw connection (see biRawDo)
}

// mustBadProblem checks a problem document, more strictly than mustProblem:
// the request id must be there, and match the header.
func mustBadProblem(t *testing.T, r *resp, status int, kind string) map[string]any {
	t.Helper()
	p := mustProblem(t, r, status, kind)
	if id := r.Header.Get("X-Request-Id"); id == "" || p["request_id"] != id {
		t.Errorf("problem without a request id: header %q, body %s", id, r.Body)
	}
	return p
}

// problemNames reports whether the errors array of p names field (or a
// member of it, such as options.price_adjustment for options).
func problemNames(p map[string]any, field string) bool {
	errs, _ := p["errors"].([]any)
	for _, e := range errs {
		m, _ := e.(map[string]any)
		f, _ := m["field"].(string)
		msg, _ := m["message"].(string)
		if msg != "" && (f == field || strings.HasPrefix(f, field+".") || strings.HasPrefix(f, field+"[")) {
			return true
		}
	}
	return false
}

func (f *biFixture) run(t *testing.T, cases []biCase) {
	t.Helper()
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			before := f.state(t)
			path := c.path
			if !strings.HasPrefix(path, "/api/") {
				path = "/api/v1" + path
			}
			var r *resp
			if c.raw {
				r = biRawDo(t, f.tn, c.method, path, f.org.Owner, c.body.(string))
				f.seen = append(f.seen, biSeen{what: c.name + ": " + c.method + " " + path, r: r})
			} else {
				r = f.do(c.name, c.method, path, c.body, c.headers...)
			}
			if r.Status >= 500 {
				t.Fatalf("server error: %d %s", r.Status, r.Body)
			}
			switch {
			case c.status == 0:
				if r.Status != 404 && r.Status != 405 {
					t.Fatalf("wrong method: status %d, want 404 or 405: %s", r.Status, r.Body)
				}
				typ, _ := r.JSON()["type"].(string)
				kind, ok := strings.CutPrefix(typ, "https://kassa.test/problems/")
				if !ok || (r.Status == 404 && kind != "not-found") {
					t.Fatalf("wrong method: %d of type %q: %s", r.Status, typ, r.Body)
				}
				mustBadProblem(t, r, r.Status, kind)
			default:
				p := mustBadProblem(t, r, c.status, c.kind)
				if c.field != "" && !problemNames(p, c.field) {
					t.Fatalf("the problem's errors do not name %q: %s", c.field, r.Body)
				}
				if c.status == 422 && c.field == "" {
					if errs, _ := p["errors"].([]any); len(errs) == 0 {
						t.Fatalf("validation problem without errors: %s", r.Body)
					}
				}
			}
			if after := f.state(t); after != before {
				t.Fatalf("the bad request changed the store:\nbefore %s\nafter  %s", before, after)
			}
		})
	}
}

// biField is a body field and a value for it.
type biField struct {
	field string
	value any
}

// biBodyRoute describes a route with a JSON body.
type biBodyRoute struct {
	method, path string
	// base is a body the route accepts (POST) or a real change (PATCH);
	// each case breaks it in one way.
	base    map[string]any
	wrong   []biField // JSON values of the wrong type: 422 naming the field
	invalid []biField // well-typed values that break a rule: 422 naming the field
	text    []string  // text fields: overlong and control characters are 422
	// conflict are well-typed values that the current state forbids: 409.
	conflict []biField
	// unique, when set, gives each case its own value of a field that must
	// be unique (sku, email), so that a case wrongly accepted does not turn
	// the later ones into conflicts.
	unique func(n int) (field string, value any)
}

func biWith(base map[string]any, field string, value any) map[string]any {
	m := maps.Clone(base)
	m[field] = value
	return m
}

func biJSON(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return string(b)
}

// cases derives the bad requests of one body route.
func (br biBodyRoute) cases() []biCase {
	pre := br.method + " " + br.path + "/"
	base := biJSON(br.base)
	n := 0
	with := func(field string, value any) map[string]any {
		m := biWith(br.base, field, value)
		if br.unique != nil {
			n++
			if f, v := br.unique(n); f != field {
				m[f] = v
			}
		}
		return m
	}
	bad := func(name string, body any, status int, kind string) biCase {
		return biCase{name: pre + name, method: br.method, path: br.path, body: body, status: status, kind: kind}
	}
	cs := []biCase{
		bad("malformed JSON/truncated", `{"name":`, 400, "bad-request"),
		bad("malformed JSON/unterminated", base[:len(base)-1], 400, "bad-request"),
		bad("malformed JSON/unquoted key", `{name: "x"}`, 400, "bad-request"),
		bad("malformed JSON/trailing comma", strings.TrimSuffix(base, "}")+`,}`, 400, "bad-request"),
		bad("malformed JSON/single quotes", `{'name': 'x'}`, 400, "bad-request"),
		bad("malformed JSON/raw control character in a string", `{"name":"Te`+"\x01"+`a"}`, 400, "bad-request"),
		bad("malformed JSON/deeply nested", strings.Repeat("[", 20000)+strings.Repeat("]", 20000), 400, "bad-request"),
		bad("empty body/none", nil, 400, "bad-request"),
		bad("empty body/zero bytes", "", 400, "bad-request"),
		bad("empty body/whitespace", " \n\t ", 400, "bad-request"),
		bad("not an object/empty array", `[]`, 400, "bad-request"),
		bad("not an object/array of the object", "["+base+"]", 400, "bad-request"),
		bad("not an object/string", `"x"`, 400, "bad-request"),
		bad("not an object/number", `7`, 400, "bad-request"),
		bad("not an object/true", `true`, 400, "bad-request"),
		bad("not an object/null", `null`, 400, "bad-request"),
		bad("trailing garbage/word", base+" garbage", 400, "bad-request"),
		bad("trailing garbage/second object", base+base, 400, "bad-request"),
		bad("trailing garbage/bracket", base+"]", 400, "bad-request"),
		bad("trailing garbage/brace", base+"}", 400, "bad-request"),
	}
	oversize := bad("oversize body", `{"name":"`+strings.Repeat("x", 70<<10)+`"}`, 413, "payload-too-large")
	oversize.raw = true
	cs = append(cs, oversize)
	unknown := []biField{{"colour", "red"}, {"id", "0190a0a0-0000-7000-8000-000000000001"}, {"org_id", "0190a0a0-0000-7000-8000-000000000002"}, {"created_at", "2024-01-01T00:00:00Z"}}
	for _, u := range unknown {
		c := bad("unknown field/"+u.field, with(u.field, u.value), 422, "validation")
		c.field = u.field
		cs = append(cs, c)
	}
	for _, w := range br.wrong {
		c := bad(fmt.Sprintf("wrong type/%s=%s", w.field, biJSON(w.value)), with(w.field, w.value), 422, "validation")
		c.field = w.field
		cs = append(cs, c)
	}
	for _, v := range br.invalid {
		c := bad(fmt.Sprintf("invalid/%s=%.60s", v.field, biJSON(v.value)), with(v.field, v.value), 422, "validation")
		c.field = v.field
		cs = append(cs, c)
	}
	for _, v := range br.conflict {
		cs = append(cs, bad(fmt.Sprintf("conflict/%s=%s", v.field, biJSON(v.value)), with(v.field, v.value), 409, "conflict"))
	}
	for _, field := range br.text {
		for name, s := range map[string]string{
			"10000 characters": strings.Repeat("x", 10000),
			"NUL":              "Te\x00a",
			"BEL":              "Tea\x07",
			"ESC sequence":     "\x1b[31mTea",
			"DEL":              "Tea\x7f",
			"C1 control (CSI)": "\u009b31mTea",
		} {
			c := bad(field+"/"+name, with(field, s), 422, "validation")
			c.field = field
			cs = append(cs, c)
		}
	}
	return cs
}

// bodyRoutes lists every POST and PATCH body of the catalog, locations and
// users routes with its bad values.
func (f *biFixture) bodyRoutes() []biBodyRoute {
	const noSuchID = "0190a0a0-0000-7000-8000-0000000000ff"
	huge := json.Number("1000000000001")
	product := map[string]any{"name": "Cortado", "sku": "CO-1", "base_price": 420}
	option := func(name string, adj any) map[string]any {
		return map[string]any{"name": name, "price_adjustment": adj}
	}
	price := func(id string, p any) []any { return []any{map[string]any{"product_id": id, "price": p}} }
	return []biBodyRoute{
		{
			method: "POST", path: "/catalog/products", base: product,
			wrong: []biField{
				{"base_price", "4.50"}, {"base_price", 4.5}, {"base_price", true}, {"name", 7}, {"name", []string{"x"}},
				{"tags", "x"}, {"tags", []int{1}}, {"is_active", "yes"}, {"is_active", 1}, {"sku", 123},
				{"barcodes", "9300000000001"}, {"description", false}, {"category_id", 7}, {"modifier_group_ids", "x"},
			},
			invalid: []biField{
				{"base_price", -1}, {"base_price", huge}, {"base_price", json.Number("1e30")},
				{"base_price", json.Number("99999999999999999999")}, {"base_price", json.Number("-9223372036854775808")},
				{"base_price", nil}, {"name", ""}, {"sku", ""}, {"sku", "has space"}, {"sku", "'; DROP TABLE products; --"},
				{"sku", strings.Repeat("S", 65)}, {"sku", "FW-1\x00"}, {"category_id", "abc"}, {"category_id", noSuchID},
				{"modifier_group_ids", []string{"abc"}}, {"modifier_group_ids", []string{noSuchID}}, {"tags", []string{""}},
				{"tags", make([]string, 101)}, {"barcodes", []string{strings.Repeat("9", 65)}},
				{"description", strings.Repeat("d", 2001)},
			},
			text:     []string{"name", "description"},
			conflict: []biField{{"sku", "FW-1"}},
			unique:   func(n int) (string, any) { return "sku", fmt.Sprintf("CO-%d", n) },
		},
		{
			method: "POST", path: "/catalog/markdowns", base: map[string]any{"name": "Sale", "type": "percent", "value": 1000,
				"product_ids": []string{f.productID}, "starts_at": "2026-01-01T00:00:00Z", "ends_at": "2026-02-01T00:00:00Z"},
			wrong: []biField{{"name", 7}, {"value", "ten"}, {"value", 4.5}, {"product_ids", "x"}, {"starts_at", 5}, {"is_active", "yes"}},
			invalid: []biField{
				{"type", "raise"}, {"type", ""}, {"value", 0}, {"value", 10001}, {"value", nil}, {"name", ""},
				{"product_ids", []string{noSuchID}}, {"product_ids", []string{"abc"}}, {"category_ids", []string{noSuchID}},
				{"ends_at", "2025-12-01T00:00:00Z"}, {"starts_at", nil},
			},
			text: []string{"name"},
		},
		{
			method: "PATCH", path: "/catalog/products/" + f.productID, base: map[string]any{"name": "Renamed"},
			wrong: []biField{
				{"base_price", "4.50"}, {"base_price", 4.5}, {"name", 7}, {"tags", "x"}, {"is_active", "yes"},
				{"category_id", 7}, {"modifier_group_ids", "x"}, {"description", 5},
			},
			invalid: []biField{
				{"base_price", -1}, {"base_price", huge}, {"base_price", json.Number("1e30")}, {"base_price", nil},
				{"name", ""}, {"name", nil}, {"is_active", nil}, {"sku", "NEW-1"}, {"barcodes", []string{"1"}},
				{"category_id", "abc"}, {"category_id", noSuchID}, {"modifier_group_ids", []string{noSuchID}},
				{"tags", []string{""}},
			},
			text: []string{"name", "description"},
		},
		{
			method: "POST", path: "/catalog/categories", base: map[string]any{"name": "Tea"},
			wrong: []biField{
				{"name", 7}, {"sort_order", "1"}, {"sort_order", 1.5}, {"is_active", "yes"}, {"parent_id", 7},
				{"description", []string{}},
			},
			invalid: []biField{
				{"name", ""}, {"sort_order", 2_000_000}, {"sort_order", json.Number("99999999999999999999")},
				{"parent_id", "abc"}, {"parent_id", noSuchID},
			},
			text: []string{"name", "description"},
		},
		{
			method: "PATCH", path: "/catalog/categories/" + f.categoryID, base: map[string]any{"name": "Renamed"},
			wrong: []biField{{"name", 7}, {"sort_order", "1"}, {"is_active", "yes"}, {"parent_id", 7}},
			invalid: []biField{
				{"name", ""}, {"name", nil}, {"sort_order", -2_000_000}, {"sort_order", nil}, {"is_active", nil},
				{"parent_id", "abc"}, {"parent_id", noSuchID},
			},
			text:     []string{"name", "description"},
			conflict: []biField{{"parent_id", f.categoryID}},
		},
		{
			method: "POST", path: "/catalog/modifiers/groups",
			base: map[string]any{"name": "Size", "options": []any{option("Small", 0), option("Large", 80)}},
			wrong: []biField{
				{"name", 7}, {"required", "yes"}, {"min_selections", "1"}, {"max_selections", 1.5}, {"options", "x"},
				{"options", []any{option("Small", "0.50")}}, {"options", []any{option("Small", 0.5)}},
				{"options", []any{map[string]any{"name": 7}}}, {"product_ids", "x"},
			},
			invalid: []biField{
				{"name", ""}, {"options", []any{}}, {"options", nil}, {"options", []any{option("Small", huge)}},
				{"options", []any{option("Small", json.Number("-1000000000001"))}}, {"options", []any{option("", 0)}},
				{"options", []any{option("Nul\x00", 0)}}, {"options", []any{map[string]any{"id": "abc", "name": "Small"}}},
				{"min_selections", -1}, {"max_selections", 5}, {"max_selections", 0},
				{"product_ids", []string{"abc"}}, {"product_ids", []string{noSuchID}},
			},
			text: []string{"name"},
		},
		{
			method: "PATCH", path: "/catalog/modifiers/groups/" + f.groupID, base: map[string]any{"name": "Renamed"},
			wrong: []biField{
				{"name", 7}, {"required", "yes"}, {"min_selections", "1"}, {"options", "x"},
				{"options", []any{option("Oat", "0.50")}},
			},
			invalid: []biField{
				{"name", ""}, {"name", nil}, {"required", nil}, {"options", nil}, {"options", []any{}},
				{"options", []any{option("Oat", huge)}}, {"max_selections", 0}, {"min_selections", 5},
				{"product_ids", []string{"abc"}}, {"product_ids", []string{noSuchID}},
			},
			text: []string{"name"},
		},
		{
			method: "POST", path: "/catalog/price-lists",
			base: map[string]any{"name": "Early bird", "location_ids": []string{f.locationID}, "prices": price(f.productID, 350)},
			wrong: []biField{
				{"name", 7}, {"location_ids", "x"}, {"prices", map[string]any{"x": 1}}, {"prices", price(f.productID, "3.50")},
				{"prices", price(f.productID, 3.5)}, {"is_active", "yes"}, {"starts_at", 5}, {"starts_at", "yesterday"},
				{"ends_at", "2025-13-45T00:00:00Z"},
			},
			invalid: []biField{
				{"name", ""}, {"prices", price(f.productID, -1)}, {"prices", price(f.productID, huge)},
				{"prices", price("abc", 100)}, {"prices", price(noSuchID, 100)},
				{"prices", append(price(f.productID, 1), price(f.productID, 2)...)},
				{"location_ids", []string{"abc"}}, {"location_ids", []string{noSuchID}},
			},
			text: []string{"name"},
		},
		{
			method: "PATCH", path: "/catalog/price-lists/" + f.priceList, base: map[string]any{"name": "Renamed"},
			wrong: []biField{
				{"name", 7}, {"prices", price(f.productID, "3.50")}, {"is_active", "yes"}, {"starts_at", "yesterday"},
			},
			invalid: []biField{
				{"name", ""}, {"name", nil}, {"is_active", nil}, {"prices", price(f.productID, -1)},
				{"prices", price(f.productID, huge)}, {"location_ids", []string{noSuchID}},
			},
			text: []string{"name"},
		},
		{
			method: "POST", path: "/locations", base: map[string]any{"name": "Shop 2", "timezone": "Australia/Sydney"},
			wrong: []biField{{"name", 7}, {"timezone", 5}, {"address", []string{"1 Main St"}}, {"currency", 1}},
			invalid: []biField{
				{"name", ""}, {"timezone", ""}, {"timezone", "Mars/Olympus_Mons"}, {"timezone", "Local"},
				{"currency", "dollars"}, {"currency", "aud"},
			},
			text: []string{"name", "address"},
		},
		{
			method: "POST", path: "/users",
			base:  map[string]any{"email": "new@badinput.test", "name": "New", "role": "cashier", "password": testPassword},
			wrong: []biField{{"email", 7}, {"role", 5}, {"password", 12345678}, {"name", true}},
			invalid: []biField{
				{"role", "superuser"}, {"role", "OWNER"}, {"role", ""}, {"email", "not-an-email"},
				{"email", "New <new@badinput.test>"}, {"password", "short"}, {"password", strings.Repeat("p", 257)},
				// A taken e-mail is 422 like any other, never saying where (docs/tenants.md).
				{"email", "badinputcafe@owner.test"},
			},
			text:   []string{"name"},
			unique: func(n int) (string, any) { return "email", fmt.Sprintf("new%d@badinput.test", n) },
		},
	}
}

func TestBadBodiesAreRefusedAndChangeNothing(t *testing.T) {
	f := newBIFixture(t)
	var cases []biCase
	for _, br := range f.bodyRoutes() {
		cases = append(cases, br.cases()...)
	}
	f.run(t, cases)
	f.checkLoop(t)
}

func TestBadQueriesAreRefused(t *testing.T) {
	f := newBIFixture(t)
	lists := []string{"/catalog/products", "/catalog/categories", "/catalog/modifiers/groups", "/catalog/price-lists", "/locations"}
	random := make([]byte, 24)
	rand.Read(random)
	cursors := map[string]string{
		"random base64":              base64.StdEncoding.EncodeToString(random),
		"random base64url":           base64.RawURLEncoding.EncodeToString(random),
		"v1 and a non-uuid":          base64.RawURLEncoding.EncodeToString([]byte("v1:not-a-uuid")),
		"v1 and an upper-case uuid":  base64.RawURLEncoding.EncodeToString([]byte("v1:" + strings.ToUpper(f.productID))),
		"v2 and a uuid":              base64.RawURLEncoding.EncodeToString([]byte("v2:" + f.productID)),
		"v1 and a uuid with a tail":  base64.RawURLEncoding.EncodeToString([]byte("v1:" + f.productID + "' OR 1=1 --")),
		"bare uuid":                  f.productID,
		"600 characters":             strings.Repeat("A", 600),
		"SQL":                        "'; DROP TABLE products; --",
		"NUL":                        "\x00",
		"padded base64url of v1 id":  base64.URLEncoding.EncodeToString([]byte("v1:" + f.productID + "x")),
		"v1 prefix and nothing else": base64.RawURLEncoding.EncodeToString([]byte("v1:")),
	}
	var cases []biCase
	for _, l := range lists {
		for _, limit := range []string{"1000000", "0", "-1", "201", "abc", "1.5", "1e2", " 5", "0x10", "99999999999999999999"} {
			cases = append(cases, biCase{name: "GET " + l + "/limit=" + limit, method: "GET",
				path: l + "?limit=" + url.QueryEscape(limit), status: 400, kind: "bad-request"})
		}
		for name, c := range cursors {
			cases = append(cases, biCase{name: "GET " + l + "/cursor " + name, method: "GET",
				path: l + "?cursor=" + url.QueryEscape(c), status: 400, kind: "bad-request"})
		}
	}
	for _, q := range []string{
		"/catalog/products?is_active=maybe", "/catalog/products?is_active=1", "/catalog/products?is_active=TRUE",
		"/catalog/products?is_active=yes", "/catalog/categories?is_active=maybe", "/catalog/categories?is_active=0",
		"/catalog/products?category_id=abc", "/catalog/products?category_id=" + url.QueryEscape("' OR 1=1 --"),
		"/catalog/products?category_id=" + strings.ToUpper(f.categoryID), "/catalog/categories?parent_id=abc",
		"/catalog/modifiers/groups?product_id=abc", "/catalog/price-lists?location_id=abc",
		"/catalog/products?q=" + strings.Repeat("q", 201),
	} {
		cases = append(cases, biCase{name: "GET " + q, method: "GET", path: q, status: 400, kind: "bad-request"})
	}
	f.run(t, cases)

	// SQL-looking and wildcard searches are plain text: 200, no rows, and
	// the products are all still there.
	before := f.state(t)
	for _, q := range []string{"'; DROP TABLE products; --", "' OR '1'='1", `" OR ""="`, "%", "_", "%%", `\`, "FW-1' --",
		"\x00", "\x00Flat", "zzz\x00", "\x01"} {
		t.Run(fmt.Sprintf("GET /catalog/products/q=%q", q), func(t *testing.T) {
			r := f.do("q", "GET", "/api/v1/catalog/products?q="+url.QueryEscape(q), nil)
			if strings.ContainsFunc(q, func(r rune) bool { return r < 0x20 }) && r.Status == 400 {
				// No name holds a control character: refusing such a search is fine too.
				mustBadProblem(t, r, 400, "bad-request")
				return
			}
			if r.Status != 200 || len(r.List()) != 0 || r.JSON()["has_more"] != false || r.JSON()["next_cursor"] != nil {
				t.Fatalf("q=%q: want 200 without rows (no name or sku contains it): %d %s", q, r.Status, r.Body)
			}
		})
	}
	if after := f.state(t); after != before {
		t.Fatalf("searches changed the store:\nbefore %s\nafter  %s", before, after)
	}
	if r := f.do("list", "GET", "/api/v1/catalog/products", nil); r.Status != 200 || len(r.List()) != 2 {
		t.Fatalf("products after the searches: %d %s", r.Status, r.Body)
	}
	f.checkLoop(t)
}

func TestBadPathsAndMethodsAreProblems(t *testing.T) {
	f := newBIFixture(t)
	const noSuchID = "0190a0a0-0000-7000-8000-0000000000ff"
	var cases []biCase
	notFound := func(method, path string, body any) {
		cases = append(cases, biCase{name: method + " " + path, method: method, path: path, body: body, status: 404, kind: "not-found"})
	}
	ids := map[string]string{
		"/catalog/products":         f.productID,
		"/catalog/categories":       f.categoryID,
		"/catalog/modifiers/groups": f.groupID,
		"/catalog/price-lists":      f.priceList,
		"/locations":                f.locationID,
	}
	for base, id := range ids {
		methods := []string{"GET", "PATCH"}
		switch base {
		case "/catalog/products":
			methods = append(methods, "DELETE")
		case "/locations":
			methods = []string{"GET"}
		}
		for _, m := range methods {
			var body any
			if m == "PATCH" {
				body = map[string]any{"name": "Renamed"}
			}
			for _, bad := range []string{
				"abc", "..%2F..", "%2e%2e", "..%2F..%2Flocations", strings.ToUpper(id), id + "x", id[:len(id)-1],
				noSuchID, url.PathEscape("' OR '1'='1"), url.PathEscape("'; DROP TABLE products; --"), "%00",
				strings.Repeat("a", 600), "00000000-0000-0000-0000-000000000000",
			} {
				notFound(m, base+"/"+bad, body)
			}
		}
	}
	for _, p := range []string{
		"/nope", "/catalog", "/catalog/widgets", "/catalog/products/" + f.productID + "/nope", "/catalog/modifiers",
		"/catalog/modifiers/options", "/api/v2/catalog/products", "/api/catalog/products", "/API/V1/catalog/products/x",
		"/users/" + noSuchID,
	} {
		notFound("GET", p, nil)
	}
	notFound("POST", "/catalog/widgets", map[string]any{"name": "x"})
	for _, mp := range [][2]string{
		{"PUT", "/catalog/products"}, {"DELETE", "/catalog/products"}, {"PATCH", "/catalog/products"},
		{"PUT", "/catalog/products/" + f.productID}, {"POST", "/catalog/products/" + f.productID},
		{"DELETE", "/catalog/categories/" + f.categoryID}, {"PUT", "/catalog/categories/" + f.categoryID},
		{"DELETE", "/catalog/modifiers/groups/" + f.groupID}, {"DELETE", "/catalog/price-lists/" + f.priceList},
		{"DELETE", "/locations/" + f.locationID}, {"PUT", "/locations"},
		{"PUT", "/users"}, {"PATCH", "/users"}, {"DELETE", "/users"}, {"GET", "/auth/login"}, {"PUT", "/auth/me"},
	} {
		cases = append(cases, biCase{name: "wrong method " + mp[0] + " " + mp[1], method: mp[0], path: mp[1],
			body: map[string]any{"name": "Renamed"}})
	}
	f.run(t, cases)
	f.checkLoop(t)
}

// Authentication comes before the body is read: a bad body without a token
// is 401, not 400 or 422.
func TestBadBodyWithoutTokenIsUnauthorized(t *testing.T) {
	f := newBIFixture(t)
	before := f.state(t)
	for _, p := range []string{"/catalog/products", "/catalog/categories", "/locations", "/users"} {
		r := f.tn.Do("POST", "/api/v1"+p, "", `{"name":`)
		f.seen = append(f.seen, biSeen{what: "POST " + p + " without token", r: r})
		mustBadProblem(t, r, 401, "unauthorized")
	}
	if after := f.state(t); after != before {
		t.Fatal("an unauthenticated request changed the store")
	}
	f.checkLoop(t)
}

// SQL-looking text is data: stored and read back verbatim, searchable, and
// harmless to the products table.
func TestSQLLookingStringsAreStoredVerbatim(t *testing.T) {
	f := newBIFixture(t)
	inj := []string{
		"'; DROP TABLE products; --",
		`Robert'); DELETE FROM products WHERE ('1'='1`,
		`" OR ""="`,
		"1' UNION SELECT password_hash FROM users --",
		"100% _real_ \\ coffee",
	}
	for i, s := range inj {
		t.Run(fmt.Sprintf("product %d", i), func(t *testing.T) {
			outbox := f.tn.outboxLen()
			sku := fmt.Sprintf("INJ-%d", i)
			r := f.do("create", "POST", "/api/v1/catalog/products", map[string]any{"name": s, "sku": sku, "base_price": 100,
				"description": s, "tags": []string{s}, "barcodes": []string{fmt.Sprintf("b%d%s", i, s)}})
			if r.Status != 201 {
				t.Fatalf("create: %d %s", r.Status, r.Body)
			}
			d := r.Data()
			id, _ := d["id"].(string)
			if d["name"] != s || d["description"] != s || d["sku"] != sku {
				t.Fatalf("create answered %s", r.Body)
			}
			if got := f.tn.outboxLen(); got != outbox+2 {
				t.Fatalf("outbox %d, want %d", got, outbox+2) // the product and its product.created event
			}
			g := f.do("read", "GET", "/api/v1/catalog/products/"+id, nil)
			gd := g.Data()
			if g.Status != 200 || gd["name"] != s || gd["description"] != s ||
				fmt.Sprint(gd["tags"]) != fmt.Sprint([]any{s}) || fmt.Sprint(gd["barcodes"]) != fmt.Sprint([]any{fmt.Sprintf("b%d%s", i, s)}) {
				t.Fatalf("read back: %d %s", g.Status, g.Body)
			}
			// The exact text finds it (substring of the name, and the exact barcode), and only it.
			for _, q := range []string{s, fmt.Sprintf("b%d%s", i, s)} {
				l := f.do("search", "GET", "/api/v1/catalog/products?q="+url.QueryEscape(q), nil)
				if l.Status != 200 || len(l.List()) != 1 || l.List()[0].(map[string]any)["id"] != id {
					t.Fatalf("q=%q: %d %s", q, l.Status, l.Body)
				}
			}
			// PATCH with the text as the name: stored verbatim too.
			p := f.do("patch", "PATCH", "/api/v1/catalog/products/"+id, map[string]any{"name": s + " v2"})
			if p.Status != 200 || p.Data()["name"] != s+" v2" {
				t.Fatalf("patch: %d %s", p.Status, p.Body)
			}
		})
	}
	// Other resources keep such names verbatim as well.
	for _, c := range []struct{ path, field string }{
		{"/catalog/categories", "name"}, {"/locations", "name"}, {"/locations", "address"},
		{"/catalog/modifiers/groups", "name"}, {"/catalog/price-lists", "name"},
	} {
		body := map[string]any{"name": "x", "timezone": "Australia/Sydney"}
		switch c.path {
		case "/catalog/categories", "/catalog/price-lists":
			delete(body, "timezone")
		case "/catalog/modifiers/groups":
			delete(body, "timezone")
			body["options"] = []any{map[string]any{"name": inj[0]}}
		}
		body[c.field] = inj[0]
		r := f.do("create", "POST", "/api/v1"+c.path, body)
		if r.Status != 201 {
			t.Fatalf("POST %s: %d %s", c.path, r.Status, r.Body)
		}
		g := f.do("read", "GET", r.Header.Get("Location"), nil)
		if g.Status != 200 || g.Data()[c.field] != inj[0] {
			t.Fatalf("GET %s: %d %s", r.Header.Get("Location"), g.Status, g.Body)
		}
	}
	if r := f.do("user", "POST", "/api/v1/users", map[string]any{"email": "inj@badinput.test", "role": "cashier",
		"password": testPassword, "name": inj[0]}); r.Status != 201 || r.Data()["name"] != inj[0] {
		t.Fatalf("user with an SQL-looking name: %d %s", r.Status, r.Body)
	}
	// An SQL-looking sku is refused by the sku charset, and changes nothing.
	before := f.state(t)
	r := f.do("sku", "POST", "/api/v1/catalog/products", map[string]any{"name": "x", "sku": inj[0], "base_price": 1})
	if p := mustBadProblem(t, r, 422, "validation"); !problemNames(p, "sku") {
		t.Fatalf("errors do not name sku: %s", r.Body)
	}
	if f.state(t) != before {
		t.Fatal("a refused sku changed the store")
	}
	// The products table is intact: the two of the fixture and the five above.
	l := f.do("list", "GET", "/api/v1/catalog/products?limit=200", nil)
	if l.Status != 200 || len(l.List()) != 2+len(inj) {
		t.Fatalf("products: %d %s", l.Status, l.Body)
	}
	f.checkLoop(t)
}
