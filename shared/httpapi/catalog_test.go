package httpapi_test

import (
	"encoding/base64"
	"encoding/json"
	"net/url"
	"reflect"
	"regexp"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"kassa.dev/shared/kassa"
	"kassa.dev/sync/change"
)

// The catalog API through HTTP, scenario by scenario (in the style of
// PocketBase's ApiScenario): each scenario names a request, the status it
// must get and what else to check of the answer. Scenarios of one table run
// in order against one node and may build on the rows earlier ones wrote.

// catNoSuchID is a well-formed id that names no row.
const catNoSuchID = "0190a6c4-0000-7000-8000-000000000000"

// catFixture is a node plus the ids of the rows a test made, by name.
// Paths and bodies may name a row as {name}; it is replaced by its id when
// the request is sent.
type catFixture struct {
	t   *testing.T
	tn  *testNode
	ids map[string]string
}

func newCatFixture(t *testing.T) *catFixture {
	return &catFixture{t: t, tn: MustStartNode(t, kassa.NodeEdge, nil), ids: map[string]string{"nosuch": catNoSuchID}}
}

var catPlaceholder = regexp.MustCompile(`\{[a-z][a-z0-9_]*\}`)

func (f *catFixture) expand(s string) string {
	f.t.Helper()
	for k, v := range f.ids {
		s = strings.ReplaceAll(s, "{"+k+"}", v)
	}
	if m := catPlaceholder.FindString(s); m != "" {
		f.t.Fatalf("unknown fixture %s in %s", m, s)
	}
	return s
}

// do sends a request with the fixtures of path and body expanded. A string
// body is sent as it is (after expansion); any other value as JSON.
func (f *catFixture) do(method, path, token string, body any, headers ...string) *resp {
	f.t.Helper()
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
	return f.tn.Do(method, f.expand(path), token, raw, headers...)
}

// create posts body to path, requires 201 and records the new id as key.
func (f *catFixture) create(token, path, key string, body any) map[string]any {
	f.t.Helper()
	r := f.do("POST", path, token, body)
	if r.Status != 201 {
		f.t.Fatalf("create %s at %s: %d %s", key, path, r.Status, r.Body)
	}
	d := r.Data()
	f.ids[key] = d["id"].(string)
	return d
}

// get reads one resource and requires 200.
func (f *catFixture) get(token, path string) map[string]any {
	f.t.Helper()
	r := f.do("GET", path, token, nil)
	if r.Status != 200 {
		f.t.Fatalf("GET %s: %d %s", path, r.Status, r.Body)
	}
	return r.Data()
}

// catScenario is one request of a table and what its answer must be.
type catScenario struct {
	name       string
	before     func() // runs before the request, e.g. to move the clock
	method     string
	path       string
	token      string
	body       any // a string is sent raw, a func() any is called first; {name} fixtures are expanded
	headers    []string
	wantStatus int
	wantKind   string // for a problem: its kind
	wantField  string // for a validation problem: a field its errors must name
	check      func(t *testing.T, r *resp)
}

func (f *catFixture) run(scenarios []catScenario) {
	f.t.Helper()
	for _, sc := range scenarios {
		f.t.Run(sc.name, func(t *testing.T) {
			if sc.before != nil {
				sc.before()
			}
			body := sc.body
			if fn, ok := body.(func() any); ok {
				body = fn()
			}
			r := f.do(sc.method, sc.path, sc.token, body, sc.headers...)
			if sc.wantKind != "" {
				p := mustProblem(t, r, sc.wantStatus, sc.wantKind)
				if sc.wantField != "" && !slices.Contains(catProblemFields(p), sc.wantField) {
					t.Fatalf("problem does not name field %s: %s", sc.wantField, r.Body)
				}
			} else {
				if r.Status != sc.wantStatus {
					t.Fatalf("%s %s: status %d, want %d: %s", sc.method, sc.path, r.Status, sc.wantStatus, r.Body)
				}
				if len(r.Body) > 0 && !strings.HasPrefix(r.Header.Get("Content-Type"), "application/json") {
					t.Fatalf("content type %q", r.Header.Get("Content-Type"))
				}
			}
			if sc.check != nil {
				sc.check(t, r)
			}
		})
	}
}

// catProblemFields lists the fields named in a problem's errors.
func catProblemFields(p map[string]any) []string {
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

// catIDs lists the ids of a list answer, in order.
func catIDs(r *resp) []string {
	out := []string{}
	for _, it := range r.List() {
		m, _ := it.(map[string]any)
		s, _ := m["id"].(string)
		out = append(out, s)
	}
	return out
}

// catStrings converts a JSON array to strings.
func catStrings(v any) []string {
	a, ok := v.([]any)
	if !ok {
		return nil
	}
	out := make([]string, 0, len(a))
	for _, x := range a {
		s, _ := x.(string)
		out = append(out, s)
	}
	return out
}

// catWantList checks a list envelope: the ids, has_more and, when there is
// no further page, a JSON null next_cursor.
func (f *catFixture) wantList(t *testing.T, r *resp, hasMore bool, keys ...string) {
	t.Helper()
	want := []string{}
	for _, k := range keys {
		want = append(want, f.ids[k])
	}
	env := r.JSON()
	if got := catIDs(r); !slices.Equal(got, want) {
		t.Fatalf("ids %v, want %v (%v): %s", got, want, keys, r.Body)
	}
	if env["has_more"] != hasMore {
		t.Fatalf("has_more %v, want %v: %s", env["has_more"], hasMore, r.Body)
	}
	cur, present := env["next_cursor"]
	if !present {
		t.Fatalf("next_cursor missing: %s", r.Body)
	}
	if hasMore {
		if s, _ := cur.(string); s == "" {
			t.Fatalf("has_more without next_cursor: %s", r.Body)
		}
	} else if cur != nil {
		t.Fatalf("next_cursor %v on the last page, want null", cur)
	}
}

// catTime parses an RFC 3339 UTC time field.
func catTime(t *testing.T, v any) time.Time {
	t.Helper()
	s, _ := v.(string)
	ts, err := time.Parse(time.RFC3339, s)
	if err != nil || !strings.HasSuffix(s, "Z") {
		t.Fatalf("time %q is not RFC 3339 UTC: %v", s, err)
	}
	return ts
}

func catWantFields(t *testing.T, d map[string]any, want map[string]any) {
	t.Helper()
	for k, v := range want {
		got, ok := d[k]
		if !ok {
			t.Fatalf("field %s missing in %v", k, d)
		}
		if !reflect.DeepEqual(got, v) {
			t.Fatalf("field %s = %#v, want %#v", k, got, v)
		}
	}
}

func TestCatalogProductsAPI(t *testing.T) {
	f := newCatFixture(t)
	tn := f.tn
	o := tn.MustOrg("Products Cafe")
	cashier := tn.MustUser(o, "cashier@products.test", kassa.RoleCashier)
	f.create(o.Owner, "/api/v1/catalog/categories", "drinks", map[string]any{"name": "Drinks"})
	f.create(o.Owner, "/api/v1/catalog/categories", "food", map[string]any{"name": "Food"})
	f.create(o.Owner, "/api/v1/catalog/modifiers/groups", "milk", map[string]any{"name": "Milk",
		"options": []any{map[string]any{"name": "Full cream"}, map[string]any{"name": "Oat", "price_adjustment": 60}}})
	var flatWhite map[string]any // as created

	f.run([]catScenario{
		{name: "create a product", method: "POST", path: "/api/v1/catalog/products", token: o.Owner, wantStatus: 201,
			body: map[string]any{"name": "Flat White", "sku": "FW-1", "base_price": 450, "category_id": "{drinks}",
				"barcodes": []string{"9300000000011"}, "tags": []string{"coffee", "hot"}, "modifier_group_ids": []string{"{milk}"}},
			check: func(t *testing.T, r *resp) {
				d := r.Data()
				id, _ := d["id"].(string)
				if !kassa.ValidID(id) {
					t.Fatalf("id %q", id)
				}
				f.ids["fw"] = id
				flatWhite = d
				if loc := r.Header.Get("Location"); loc != "/api/v1/catalog/products/"+id {
					t.Fatalf("Location %q", loc)
				}
				catWantFields(t, d, map[string]any{"org_id": o.ID, "name": "Flat White", "description": nil, "sku": "FW-1",
					"base_price": float64(450), "category_id": f.ids["drinks"], "barcodes": []any{"9300000000011"},
					"tags": []any{"coffee", "hot"}, "modifier_group_ids": []any{f.ids["milk"]}, "is_active": true})
				if c, u := catTime(t, d["created_at"]), catTime(t, d["updated_at"]); !c.Equal(u) || time.Since(c) > time.Minute {
					t.Fatalf("created_at %v updated_at %v", c, u)
				}
			}},
		{name: "create with only the required fields", method: "POST", path: "/api/v1/catalog/products", token: o.Owner, wantStatus: 201,
			body: map[string]any{"name": "Croissant", "sku": "CR-1", "base_price": 500},
			check: func(t *testing.T, r *resp) {
				d := r.Data()
				f.ids["cr"] = d["id"].(string)
				catWantFields(t, d, map[string]any{"barcodes": []any{}, "tags": []any{}, "modifier_group_ids": []any{},
					"category_id": nil, "description": nil, "is_active": true})
			}},
		{name: "create inactive with a description", method: "POST", path: "/api/v1/catalog/products", token: o.Owner, wantStatus: 201,
			body: map[string]any{"name": "Iced Tea", "sku": "BEV-77", "base_price": 380, "is_active": false, "description": "Peach",
				"category_id": "{drinks}", "barcodes": []string{"9300000000028", "9300000000035"}},
			check: func(t *testing.T, r *resp) {
				d := r.Data()
				f.ids["tea"] = d["id"].(string)
				catWantFields(t, d, map[string]any{"is_active": false, "description": "Peach"})
			}},
		{name: "create in another category", method: "POST", path: "/api/v1/catalog/products", token: o.Owner, wantStatus: 201,
			body: map[string]any{"name": "Banana Bread", "sku": "FOOD_2", "base_price": 0, "category_id": "{food}"},
			check: func(t *testing.T, r *resp) {
				f.ids["bb"] = r.Data()["id"].(string)
				catWantFields(t, r.Data(), map[string]any{"base_price": float64(0)})
			}},

		{name: "create without required fields", method: "POST", path: "/api/v1/catalog/products", token: o.Owner,
			body: map[string]any{"description": "nothing else"}, wantStatus: 422, wantKind: "validation", wantField: "name",
			check: func(t *testing.T, r *resp) {
				fields := catProblemFields(r.JSON())
				for _, want := range []string{"name", "sku", "base_price"} {
					if !slices.Contains(fields, want) {
						t.Fatalf("errors %v lack %s", fields, want)
					}
				}
			}},
		{name: "create with a duplicate sku", method: "POST", path: "/api/v1/catalog/products", token: o.Owner,
			body: map[string]any{"name": "Other", "sku": "FW-1", "base_price": 1}, wantStatus: 409, wantKind: "conflict"},
		{name: "create with an unknown category", method: "POST", path: "/api/v1/catalog/products", token: o.Owner,
			body:       map[string]any{"name": "Other", "sku": "X-1", "base_price": 1, "category_id": "{nosuch}"},
			wantStatus: 422, wantKind: "validation", wantField: "category_id"},
		{name: "create with an unknown modifier group", method: "POST", path: "/api/v1/catalog/products", token: o.Owner,
			body:       map[string]any{"name": "Other", "sku": "X-1", "base_price": 1, "modifier_group_ids": []string{"{nosuch}"}},
			wantStatus: 422, wantKind: "validation", wantField: "modifier_group_ids"},
		{name: "create with a malformed category id", method: "POST", path: "/api/v1/catalog/products", token: o.Owner,
			body:       map[string]any{"name": "Other", "sku": "X-1", "base_price": 1, "category_id": "drinks"},
			wantStatus: 422, wantKind: "validation", wantField: "category_id"},
		{name: "create with a negative price", method: "POST", path: "/api/v1/catalog/products", token: o.Owner,
			body: map[string]any{"name": "Other", "sku": "X-1", "base_price": -1}, wantStatus: 422, wantKind: "validation", wantField: "base_price"},
		{name: "create with a fractional price", method: "POST", path: "/api/v1/catalog/products", token: o.Owner,
			body: `{"name":"Other","sku":"X-1","base_price":4.5}`, wantStatus: 422, wantKind: "validation", wantField: "base_price"},
		{name: "create with a bad sku", method: "POST", path: "/api/v1/catalog/products", token: o.Owner,
			body: map[string]any{"name": "Other", "sku": "-bad sku", "base_price": 1}, wantStatus: 422, wantKind: "validation", wantField: "sku"},
		{name: "create with an unknown field", method: "POST", path: "/api/v1/catalog/products", token: o.Owner,
			body: map[string]any{"name": "Other", "sku": "X-1", "base_price": 1, "price": 1}, wantStatus: 422, wantKind: "validation", wantField: "price"},
		{name: "create with malformed JSON", method: "POST", path: "/api/v1/catalog/products", token: o.Owner,
			body: `{"name": "Other",`, wantStatus: 400, wantKind: "bad-request"},
		{name: "create without a body", method: "POST", path: "/api/v1/catalog/products", token: o.Owner,
			wantStatus: 400, wantKind: "bad-request"},
		{name: "create by a cashier", method: "POST", path: "/api/v1/catalog/products", token: cashier,
			body: map[string]any{"name": "Other", "sku": "X-1", "base_price": 1}, wantStatus: 403, wantKind: "forbidden"},
		{name: "create without a token", method: "POST", path: "/api/v1/catalog/products",
			body: map[string]any{"name": "Other", "sku": "X-1", "base_price": 1}, wantStatus: 401, wantKind: "unauthorized"},

		{name: "get a product", method: "GET", path: "/api/v1/catalog/products/{fw}", token: o.Owner, wantStatus: 200,
			check: func(t *testing.T, r *resp) {
				if !reflect.DeepEqual(r.Data(), flatWhite) {
					t.Fatalf("GET %v\nwant the created %v", r.Data(), flatWhite)
				}
			}},
		{name: "get by a cashier", method: "GET", path: "/api/v1/catalog/products/{fw}", token: cashier, wantStatus: 200},
		{name: "get an unknown id", method: "GET", path: "/api/v1/catalog/products/{nosuch}", token: o.Owner, wantStatus: 404, wantKind: "not-found"},
		{name: "get a malformed id", method: "GET", path: "/api/v1/catalog/products/not-an-id", token: o.Owner, wantStatus: 404, wantKind: "not-found"},

		{name: "list all", method: "GET", path: "/api/v1/catalog/products", token: cashier, wantStatus: 200,
			check: func(t *testing.T, r *resp) { f.wantList(t, r, false, "fw", "cr", "tea", "bb") }},
		{name: "list by category", method: "GET", path: "/api/v1/catalog/products?category_id={drinks}", token: o.Owner, wantStatus: 200,
			check: func(t *testing.T, r *resp) { f.wantList(t, r, false, "fw", "tea") }},
		{name: "list by an unknown category", method: "GET", path: "/api/v1/catalog/products?category_id={nosuch}", token: o.Owner, wantStatus: 200,
			check: func(t *testing.T, r *resp) { f.wantList(t, r, false) }},
		{name: "list by a malformed category", method: "GET", path: "/api/v1/catalog/products?category_id=drinks", token: o.Owner,
			wantStatus: 400, wantKind: "bad-request"},
		{name: "list active", method: "GET", path: "/api/v1/catalog/products?is_active=true", token: o.Owner, wantStatus: 200,
			check: func(t *testing.T, r *resp) { f.wantList(t, r, false, "fw", "cr", "bb") }},
		{name: "list inactive", method: "GET", path: "/api/v1/catalog/products?is_active=false", token: o.Owner, wantStatus: 200,
			check: func(t *testing.T, r *resp) { f.wantList(t, r, false, "tea") }},
		{name: "list with a bad is_active", method: "GET", path: "/api/v1/catalog/products?is_active=yes", token: o.Owner,
			wantStatus: 400, wantKind: "bad-request"},
		{name: "list by category and active", method: "GET", path: "/api/v1/catalog/products?category_id={drinks}&is_active=true", token: o.Owner,
			wantStatus: 200, check: func(t *testing.T, r *resp) { f.wantList(t, r, false, "fw") }},
		{name: "q matches a name, case-insensitively", method: "GET", path: "/api/v1/catalog/products?q=FLAT", token: o.Owner, wantStatus: 200,
			check: func(t *testing.T, r *resp) { f.wantList(t, r, false, "fw") }},
		{name: "q matches a name substring", method: "GET", path: "/api/v1/catalog/products?q=read", token: o.Owner, wantStatus: 200,
			check: func(t *testing.T, r *resp) { f.wantList(t, r, false, "bb") }},
		{name: "q matches a sku substring", method: "GET", path: "/api/v1/catalog/products?q=bev-7", token: o.Owner, wantStatus: 200,
			check: func(t *testing.T, r *resp) { f.wantList(t, r, false, "tea") }},
		{name: "q matches an exact barcode", method: "GET", path: "/api/v1/catalog/products?q=9300000000035", token: o.Owner, wantStatus: 200,
			check: func(t *testing.T, r *resp) { f.wantList(t, r, false, "tea") }},
		{name: "q does not match part of a barcode", method: "GET", path: "/api/v1/catalog/products?q=930000000003", token: o.Owner, wantStatus: 200,
			check: func(t *testing.T, r *resp) { f.wantList(t, r, false) }},
		{name: "q treats LIKE wildcards literally", method: "GET", path: "/api/v1/catalog/products?q=%25", token: o.Owner, wantStatus: 200,
			check: func(t *testing.T, r *resp) { f.wantList(t, r, false) }},
		{name: "q treats underscore literally", method: "GET", path: "/api/v1/catalog/products?q=_", token: o.Owner, wantStatus: 200,
			check: func(t *testing.T, r *resp) { f.wantList(t, r, false, "bb") }},
		{name: "q with filters", method: "GET", path: "/api/v1/catalog/products?q=t&category_id={drinks}&is_active=false", token: o.Owner, wantStatus: 200,
			check: func(t *testing.T, r *resp) { f.wantList(t, r, false, "tea") }},

		{name: "patch two fields", before: func() { tn.Clock.Advance(time.Second) }, method: "PATCH", path: "/api/v1/catalog/products/{fw}",
			token: o.Owner, body: map[string]any{"name": "Flat White Large", "base_price": 520}, wantStatus: 200,
			check: func(t *testing.T, r *resp) {
				d := r.Data()
				catWantFields(t, d, map[string]any{"name": "Flat White Large", "base_price": float64(520), "sku": "FW-1",
					"barcodes": []any{"9300000000011"}, "tags": []any{"coffee", "hot"}, "category_id": f.ids["drinks"],
					"modifier_group_ids": []any{f.ids["milk"]}, "is_active": true, "created_at": flatWhite["created_at"]})
				if u := catTime(t, d["updated_at"]); !u.After(catTime(t, d["created_at"])) {
					t.Fatalf("updated_at %v not after created_at", u)
				}
			}},
		{name: "patch clears the category and sets a description", method: "PATCH", path: "/api/v1/catalog/products/{fw}", token: o.Owner,
			body: map[string]any{"category_id": nil, "description": "Double shot"}, wantStatus: 200,
			check: func(t *testing.T, r *resp) {
				catWantFields(t, r.Data(), map[string]any{"category_id": nil, "description": "Double shot", "name": "Flat White Large"})
			}},
		{name: "patch clears the description", method: "PATCH", path: "/api/v1/catalog/products/{fw}", token: o.Owner,
			body: map[string]any{"description": nil}, wantStatus: 200,
			check: func(t *testing.T, r *resp) { catWantFields(t, r.Data(), map[string]any{"description": nil}) }},
		{name: "patch sets a category, tags and the active flag", method: "PATCH", path: "/api/v1/catalog/products/{cr}", token: o.Owner,
			body: map[string]any{"category_id": "{food}", "tags": []string{"pastry"}, "is_active": false}, wantStatus: 200,
			check: func(t *testing.T, r *resp) {
				catWantFields(t, r.Data(), map[string]any{"category_id": f.ids["food"], "tags": []any{"pastry"}, "is_active": false})
			}},
		{name: "patch back to active", method: "PATCH", path: "/api/v1/catalog/products/{cr}", token: o.Owner,
			body: map[string]any{"is_active": true}, wantStatus: 200,
			check: func(t *testing.T, r *resp) { catWantFields(t, r.Data(), map[string]any{"is_active": true}) }},
		{name: "patch the changed product is what GET shows", method: "GET", path: "/api/v1/catalog/products/{fw}", token: o.Owner, wantStatus: 200,
			check: func(t *testing.T, r *resp) {
				catWantFields(t, r.Data(), map[string]any{"name": "Flat White Large", "base_price": float64(520), "category_id": nil, "description": nil})
			}},
		{name: "patch with an empty object changes nothing", method: "PATCH", path: "/api/v1/catalog/products/{fw}", token: o.Owner,
			body: map[string]any{}, wantStatus: 200,
			check: func(t *testing.T, r *resp) { catWantFields(t, r.Data(), map[string]any{"name": "Flat White Large"}) }},
		{name: "patch sku is refused", method: "PATCH", path: "/api/v1/catalog/products/{fw}", token: o.Owner,
			body: map[string]any{"sku": "FW-2"}, wantStatus: 422, wantKind: "validation", wantField: "sku"},
		{name: "patch barcodes is refused", method: "PATCH", path: "/api/v1/catalog/products/{fw}", token: o.Owner,
			body: map[string]any{"barcodes": []string{"1"}}, wantStatus: 422, wantKind: "validation", wantField: "barcodes"},
		{name: "patch sku with other fields changes nothing", method: "PATCH", path: "/api/v1/catalog/products/{fw}", token: o.Owner,
			body: map[string]any{"sku": "FW-2", "name": "Renamed"}, wantStatus: 422, wantKind: "validation", wantField: "sku",
			check: func(t *testing.T, r *resp) {
				if d := f.get(o.Owner, "/api/v1/catalog/products/{fw}"); d["name"] != "Flat White Large" || d["sku"] != "FW-1" {
					t.Fatalf("a refused patch changed the product: %v", d)
				}
			}},
		{name: "patch name null is refused", method: "PATCH", path: "/api/v1/catalog/products/{fw}", token: o.Owner,
			body: map[string]any{"name": nil}, wantStatus: 422, wantKind: "validation", wantField: "name"},
		{name: "patch base_price null is refused", method: "PATCH", path: "/api/v1/catalog/products/{fw}", token: o.Owner,
			body: map[string]any{"base_price": nil}, wantStatus: 422, wantKind: "validation", wantField: "base_price"},
		{name: "patch a negative price", method: "PATCH", path: "/api/v1/catalog/products/{fw}", token: o.Owner,
			body: map[string]any{"base_price": -5}, wantStatus: 422, wantKind: "validation", wantField: "base_price"},
		{name: "patch a price of the wrong type", method: "PATCH", path: "/api/v1/catalog/products/{fw}", token: o.Owner,
			body: map[string]any{"base_price": "520"}, wantStatus: 422, wantKind: "validation", wantField: "base_price"},
		{name: "patch an unknown category", method: "PATCH", path: "/api/v1/catalog/products/{fw}", token: o.Owner,
			body: map[string]any{"category_id": "{nosuch}"}, wantStatus: 422, wantKind: "validation", wantField: "category_id"},
		{name: "patch an unknown field", method: "PATCH", path: "/api/v1/catalog/products/{fw}", token: o.Owner,
			body: map[string]any{"colour": "red"}, wantStatus: 422, wantKind: "validation", wantField: "colour"},
		{name: "patch with a JSON array body", method: "PATCH", path: "/api/v1/catalog/products/{fw}", token: o.Owner,
			body: `[]`, wantStatus: 400, wantKind: "bad-request"},
		{name: "patch with a JSON string body", method: "PATCH", path: "/api/v1/catalog/products/{fw}", token: o.Owner,
			body: `"name"`, wantStatus: 400, wantKind: "bad-request"},
		// A body must be a JSON object (decode); null is no object either,
		// and must not pass as an empty patch.
		{name: "patch with a JSON null body", method: "PATCH", path: "/api/v1/catalog/products/{fw}", token: o.Owner,
			body: `null`, wantStatus: 400, wantKind: "bad-request"},
		{name: "create with a JSON null body", method: "POST", path: "/api/v1/catalog/products", token: o.Owner,
			body: `null`, wantStatus: 400, wantKind: "bad-request"},
		{name: "patch an unknown product", method: "PATCH", path: "/api/v1/catalog/products/{nosuch}", token: o.Owner,
			body: map[string]any{"name": "x"}, wantStatus: 404, wantKind: "not-found"},
		{name: "patch by a cashier", method: "PATCH", path: "/api/v1/catalog/products/{fw}", token: cashier,
			body: map[string]any{"name": "x"}, wantStatus: 403, wantKind: "forbidden"},

		{name: "delete archives", method: "DELETE", path: "/api/v1/catalog/products/{cr}", token: o.Owner, wantStatus: 200,
			check: func(t *testing.T, r *resp) {
				catWantFields(t, r.Data(), map[string]any{"id": f.ids["cr"], "is_active": false, "name": "Croissant", "sku": "CR-1"})
			}},
		{name: "an archived product is still readable", method: "GET", path: "/api/v1/catalog/products/{cr}", token: o.Owner, wantStatus: 200,
			check: func(t *testing.T, r *resp) {
				catWantFields(t, r.Data(), map[string]any{"is_active": false, "sku": "CR-1"})
			}},
		{name: "an archived product is listed as inactive", method: "GET", path: "/api/v1/catalog/products?is_active=false", token: o.Owner, wantStatus: 200,
			check: func(t *testing.T, r *resp) { f.wantList(t, r, false, "cr", "tea") }},
		{name: "an archived product keeps its sku", method: "POST", path: "/api/v1/catalog/products", token: o.Owner,
			body: map[string]any{"name": "Croissant 2", "sku": "CR-1", "base_price": 1}, wantStatus: 409, wantKind: "conflict"},
		{name: "delete again", method: "DELETE", path: "/api/v1/catalog/products/{cr}", token: o.Owner, wantStatus: 200,
			check: func(t *testing.T, r *resp) { catWantFields(t, r.Data(), map[string]any{"is_active": false}) }},
		{name: "delete an unknown product", method: "DELETE", path: "/api/v1/catalog/products/{nosuch}", token: o.Owner, wantStatus: 404, wantKind: "not-found"},
		{name: "delete by a cashier", method: "DELETE", path: "/api/v1/catalog/products/{fw}", token: cashier, wantStatus: 403, wantKind: "forbidden"},
		{name: "list without a token", method: "GET", path: "/api/v1/catalog/products", wantStatus: 401, wantKind: "unauthorized"},
	})
}

func TestCatalogCategoriesAPI(t *testing.T) {
	f := newCatFixture(t)
	o := f.tn.MustOrg("Categories Cafe")
	var drinks map[string]any
	f.run([]catScenario{
		{name: "create a category", method: "POST", path: "/api/v1/catalog/categories", token: o.Owner, wantStatus: 201,
			body: map[string]any{"name": "Drinks", "sort_order": 1},
			check: func(t *testing.T, r *resp) {
				d := r.Data()
				f.ids["drinks"] = d["id"].(string)
				drinks = d
				if loc := r.Header.Get("Location"); loc != "/api/v1/catalog/categories/"+f.ids["drinks"] {
					t.Fatalf("Location %q", loc)
				}
				catWantFields(t, d, map[string]any{"org_id": o.ID, "name": "Drinks", "description": nil, "parent_id": nil,
					"sort_order": float64(1), "is_active": true})
				catTime(t, d["created_at"])
				catTime(t, d["updated_at"])
			}},
		{name: "create a child", method: "POST", path: "/api/v1/catalog/categories", token: o.Owner, wantStatus: 201,
			body: map[string]any{"name": "Coffee", "parent_id": "{drinks}", "description": "Hot"},
			check: func(t *testing.T, r *resp) {
				f.ids["coffee"] = r.Data()["id"].(string)
				catWantFields(t, r.Data(), map[string]any{"parent_id": f.ids["drinks"], "description": "Hot", "sort_order": float64(0)})
			}},
		{name: "create a grandchild", method: "POST", path: "/api/v1/catalog/categories", token: o.Owner, wantStatus: 201,
			body:  map[string]any{"name": "Espresso", "parent_id": "{coffee}", "is_active": false},
			check: func(t *testing.T, r *resp) { f.ids["espresso"] = r.Data()["id"].(string) }},
		{name: "create with an unknown parent", method: "POST", path: "/api/v1/catalog/categories", token: o.Owner,
			body: map[string]any{"name": "Orphan", "parent_id": "{nosuch}"}, wantStatus: 422, wantKind: "validation", wantField: "parent_id"},
		{name: "create without a name", method: "POST", path: "/api/v1/catalog/categories", token: o.Owner,
			body: map[string]any{"sort_order": 2}, wantStatus: 422, wantKind: "validation", wantField: "name"},
		{name: "get", method: "GET", path: "/api/v1/catalog/categories/{drinks}", token: o.Owner, wantStatus: 200,
			check: func(t *testing.T, r *resp) {
				if !reflect.DeepEqual(r.Data(), drinks) {
					t.Fatalf("GET %v, want %v", r.Data(), drinks)
				}
			}},
		{name: "get an unknown id", method: "GET", path: "/api/v1/catalog/categories/{nosuch}", token: o.Owner, wantStatus: 404, wantKind: "not-found"},
		{name: "list", method: "GET", path: "/api/v1/catalog/categories", token: o.Owner, wantStatus: 200,
			check: func(t *testing.T, r *resp) { f.wantList(t, r, false, "drinks", "coffee", "espresso") }},
		{name: "list children", method: "GET", path: "/api/v1/catalog/categories?parent_id={drinks}", token: o.Owner, wantStatus: 200,
			check: func(t *testing.T, r *resp) { f.wantList(t, r, false, "coffee") }},
		{name: "list inactive", method: "GET", path: "/api/v1/catalog/categories?is_active=false", token: o.Owner, wantStatus: 200,
			check: func(t *testing.T, r *resp) { f.wantList(t, r, false, "espresso") }},
		{name: "list with a malformed parent", method: "GET", path: "/api/v1/catalog/categories?parent_id=x", token: o.Owner, wantStatus: 400, wantKind: "bad-request"},
		{name: "patch a parent that makes a cycle", method: "PATCH", path: "/api/v1/catalog/categories/{drinks}", token: o.Owner,
			body: map[string]any{"parent_id": "{espresso}"}, wantStatus: 409, wantKind: "conflict"},
		{name: "patch itself as parent", method: "PATCH", path: "/api/v1/catalog/categories/{coffee}", token: o.Owner,
			body: map[string]any{"parent_id": "{coffee}"}, wantStatus: 409, wantKind: "conflict"},
		{name: "a refused cycle changed nothing", method: "GET", path: "/api/v1/catalog/categories/{drinks}", token: o.Owner, wantStatus: 200,
			check: func(t *testing.T, r *resp) { catWantFields(t, r.Data(), map[string]any{"parent_id": nil}) }},
		{name: "patch an unknown parent", method: "PATCH", path: "/api/v1/catalog/categories/{coffee}", token: o.Owner,
			body: map[string]any{"parent_id": "{nosuch}"}, wantStatus: 422, wantKind: "validation", wantField: "parent_id"},
		{name: "patch name and sort order", method: "PATCH", path: "/api/v1/catalog/categories/{coffee}", token: o.Owner,
			body: map[string]any{"name": "Coffees", "sort_order": 5}, wantStatus: 200,
			check: func(t *testing.T, r *resp) {
				catWantFields(t, r.Data(), map[string]any{"name": "Coffees", "sort_order": float64(5), "parent_id": f.ids["drinks"], "description": "Hot"})
			}},
		{name: "patch parent null moves to the top", method: "PATCH", path: "/api/v1/catalog/categories/{espresso}", token: o.Owner,
			body: map[string]any{"parent_id": nil, "is_active": true}, wantStatus: 200,
			check: func(t *testing.T, r *resp) {
				catWantFields(t, r.Data(), map[string]any{"parent_id": nil, "is_active": true})
			}},
		{name: "patch description null", method: "PATCH", path: "/api/v1/catalog/categories/{coffee}", token: o.Owner,
			body: map[string]any{"description": nil}, wantStatus: 200,
			check: func(t *testing.T, r *resp) { catWantFields(t, r.Data(), map[string]any{"description": nil}) }},
		{name: "a former descendant may now be the parent", method: "PATCH", path: "/api/v1/catalog/categories/{drinks}", token: o.Owner,
			body: map[string]any{"parent_id": "{espresso}"}, wantStatus: 200,
			check: func(t *testing.T, r *resp) {
				catWantFields(t, r.Data(), map[string]any{"parent_id": f.ids["espresso"]})
			}},
		{name: "patch name null", method: "PATCH", path: "/api/v1/catalog/categories/{coffee}", token: o.Owner,
			body: map[string]any{"name": nil}, wantStatus: 422, wantKind: "validation", wantField: "name"},
		{name: "patch an unknown category", method: "PATCH", path: "/api/v1/catalog/categories/{nosuch}", token: o.Owner,
			body: map[string]any{"name": "x"}, wantStatus: 404, wantKind: "not-found"},
	})
}

func TestCatalogModifierGroupsAPI(t *testing.T) {
	f := newCatFixture(t)
	o := f.tn.MustOrg("Modifiers Cafe")
	for i, k := range []string{"p1", "p2", "p3"} {
		f.create(o.Owner, "/api/v1/catalog/products", k, map[string]any{"name": "Product " + k, "sku": "SKU-" + k, "base_price": 100 * (i + 1)})
	}
	productGroups := func(t *testing.T, key string, want ...string) {
		t.Helper()
		d := f.get(o.Owner, "/api/v1/catalog/products/{"+key+"}")
		ids := []string{}
		for _, w := range want {
			ids = append(ids, f.ids[w])
		}
		if got := catStrings(d["modifier_group_ids"]); !slices.Equal(got, ids) {
			t.Fatalf("product %s modifier_group_ids %v, want %v (%v)", key, got, ids, want)
		}
	}
	groupProducts := func(t *testing.T, d map[string]any, want ...string) {
		t.Helper()
		ids := []string{}
		for _, w := range want {
			ids = append(ids, f.ids[w])
		}
		if got := catStrings(d["product_ids"]); !slices.Equal(got, ids) {
			t.Fatalf("product_ids %v, want %v (%v)", got, ids, want)
		}
	}
	var oatID string
	f.run([]catScenario{
		{name: "create a group with products", method: "POST", path: "/api/v1/catalog/modifiers/groups", token: o.Owner, wantStatus: 201,
			body: map[string]any{"name": "Milk", "product_ids": []string{"{p1}", "{p2}"}, "options": []any{
				map[string]any{"name": "Full cream", "is_default": true},
				map[string]any{"name": "Oat", "price_adjustment": 60},
				map[string]any{"name": "Skim", "price_adjustment": -10},
			}},
			check: func(t *testing.T, r *resp) {
				d := r.Data()
				f.ids["milk"] = d["id"].(string)
				if loc := r.Header.Get("Location"); loc != "/api/v1/catalog/modifiers/groups/"+f.ids["milk"] {
					t.Fatalf("Location %q", loc)
				}
				catWantFields(t, d, map[string]any{"org_id": o.ID, "name": "Milk", "required": false,
					"min_selections": float64(0), "max_selections": float64(3)})
				groupProducts(t, d, "p1", "p2")
				opts, _ := d["options"].([]any)
				if len(opts) != 3 {
					t.Fatalf("options %v", d["options"])
				}
				for i, want := range []map[string]any{
					{"name": "Full cream", "price_adjustment": float64(0), "is_default": true},
					{"name": "Oat", "price_adjustment": float64(60), "is_default": false},
					{"name": "Skim", "price_adjustment": float64(-10), "is_default": false},
				} {
					opt := opts[i].(map[string]any)
					catWantFields(t, opt, want)
					if id, _ := opt["id"].(string); !kassa.ValidID(id) {
						t.Fatalf("option id %q", id)
					}
				}
				oatID = opts[1].(map[string]any)["id"].(string)
				catTime(t, d["created_at"])
			}},
		{name: "the linked products show the group", method: "GET", path: "/api/v1/catalog/products/{p1}", token: o.Owner, wantStatus: 200,
			check: func(t *testing.T, r *resp) {
				productGroups(t, "p1", "milk")
				productGroups(t, "p2", "milk")
				productGroups(t, "p3")
			}},
		{name: "create a required group", method: "POST", path: "/api/v1/catalog/modifiers/groups", token: o.Owner, wantStatus: 201,
			body: map[string]any{"name": "Size", "required": true, "min_selections": 1, "max_selections": 1, "product_ids": []string{"{p1}"},
				"options": []any{map[string]any{"name": "Regular"}, map[string]any{"name": "Large", "price_adjustment": 80}}},
			check: func(t *testing.T, r *resp) {
				f.ids["size"] = r.Data()["id"].(string)
				catWantFields(t, r.Data(), map[string]any{"required": true, "min_selections": float64(1), "max_selections": float64(1)})
				productGroups(t, "p1", "milk", "size")
			}},
		{name: "a product created with a group is linked both ways", method: "POST", path: "/api/v1/catalog/products", token: o.Owner, wantStatus: 201,
			body: map[string]any{"name": "Mocha", "sku": "MOCHA", "base_price": 550, "modifier_group_ids": []string{"{size}"}},
			check: func(t *testing.T, r *resp) {
				f.ids["mocha"] = r.Data()["id"].(string)
				groupProducts(t, f.get(o.Owner, "/api/v1/catalog/modifiers/groups/{size}"), "p1", "mocha")
			}},
		{name: "create required with no minimum", method: "POST", path: "/api/v1/catalog/modifiers/groups", token: o.Owner,
			body:       map[string]any{"name": "Bad", "required": true, "options": []any{map[string]any{"name": "A"}}},
			wantStatus: 422, wantKind: "validation", wantField: "min_selections"},
		{name: "create without options", method: "POST", path: "/api/v1/catalog/modifiers/groups", token: o.Owner,
			body: map[string]any{"name": "Bad"}, wantStatus: 422, wantKind: "validation", wantField: "options"},
		{name: "create with max above the options", method: "POST", path: "/api/v1/catalog/modifiers/groups", token: o.Owner,
			body:       map[string]any{"name": "Bad", "max_selections": 2, "options": []any{map[string]any{"name": "A"}}},
			wantStatus: 422, wantKind: "validation", wantField: "max_selections"},
		{name: "create with an unknown product", method: "POST", path: "/api/v1/catalog/modifiers/groups", token: o.Owner,
			body:       map[string]any{"name": "Bad", "product_ids": []string{"{p1}", "{nosuch}"}, "options": []any{map[string]any{"name": "A"}}},
			wantStatus: 422, wantKind: "validation", wantField: "product_ids",
			check: func(t *testing.T, r *resp) { productGroups(t, "p1", "milk", "size") }},
		{name: "create without a name", method: "POST", path: "/api/v1/catalog/modifiers/groups", token: o.Owner,
			body: map[string]any{"options": []any{map[string]any{"name": "A"}}}, wantStatus: 422, wantKind: "validation", wantField: "name"},
		{name: "get", method: "GET", path: "/api/v1/catalog/modifiers/groups/{milk}", token: o.Owner, wantStatus: 200,
			check: func(t *testing.T, r *resp) {
				catWantFields(t, r.Data(), map[string]any{"id": f.ids["milk"], "name": "Milk"})
				groupProducts(t, r.Data(), "p1", "p2")
			}},
		{name: "get an unknown id", method: "GET", path: "/api/v1/catalog/modifiers/groups/{nosuch}", token: o.Owner, wantStatus: 404, wantKind: "not-found"},
		{name: "list", method: "GET", path: "/api/v1/catalog/modifiers/groups", token: o.Owner, wantStatus: 200,
			check: func(t *testing.T, r *resp) {
				f.wantList(t, r, false, "milk", "size")
				groupProducts(t, r.List()[0].(map[string]any), "p1", "p2")
				groupProducts(t, r.List()[1].(map[string]any), "p1", "mocha")
			}},
		{name: "list by product", method: "GET", path: "/api/v1/catalog/modifiers/groups?product_id={p1}", token: o.Owner, wantStatus: 200,
			check: func(t *testing.T, r *resp) { f.wantList(t, r, false, "milk", "size") }},
		{name: "list by another product", method: "GET", path: "/api/v1/catalog/modifiers/groups?product_id={p2}", token: o.Owner, wantStatus: 200,
			check: func(t *testing.T, r *resp) { f.wantList(t, r, false, "milk") }},
		{name: "list by a product without groups", method: "GET", path: "/api/v1/catalog/modifiers/groups?product_id={p3}", token: o.Owner, wantStatus: 200,
			check: func(t *testing.T, r *resp) { f.wantList(t, r, false) }},
		{name: "list by a malformed product", method: "GET", path: "/api/v1/catalog/modifiers/groups?product_id=p1", token: o.Owner,
			wantStatus: 400, wantKind: "bad-request"},
		{name: "patch product_ids moves the links", method: "PATCH", path: "/api/v1/catalog/modifiers/groups/{milk}", token: o.Owner,
			body: map[string]any{"product_ids": []string{"{p2}", "{p3}"}}, wantStatus: 200,
			check: func(t *testing.T, r *resp) {
				groupProducts(t, r.Data(), "p2", "p3")
				productGroups(t, "p1", "size")
				productGroups(t, "p2", "milk")
				productGroups(t, "p3", "milk")
			}},
		{name: "list by product after the move", method: "GET", path: "/api/v1/catalog/modifiers/groups?product_id={p1}", token: o.Owner, wantStatus: 200,
			check: func(t *testing.T, r *resp) { f.wantList(t, r, false, "size") }},
		{name: "patch the name only", method: "PATCH", path: "/api/v1/catalog/modifiers/groups/{milk}", token: o.Owner,
			body: map[string]any{"name": "Milk choice"}, wantStatus: 200,
			check: func(t *testing.T, r *resp) {
				catWantFields(t, r.Data(), map[string]any{"name": "Milk choice", "max_selections": float64(3)})
				groupProducts(t, r.Data(), "p2", "p3")
				if opts, _ := r.Data()["options"].([]any); len(opts) != 3 {
					t.Fatalf("options %v", opts)
				}
			}},
		{name: "patch options keeps a listed id", method: "PATCH", path: "/api/v1/catalog/modifiers/groups/{milk}", token: o.Owner,
			body: func() any {
				return map[string]any{"max_selections": 2, "options": []any{
					map[string]any{"id": oatID, "name": "Oat", "price_adjustment": 70},
					map[string]any{"name": "Almond", "price_adjustment": 70},
				}}
			}, wantStatus: 200,
			check: func(t *testing.T, r *resp) {
				opts, _ := r.Data()["options"].([]any)
				if len(opts) != 2 || opts[0].(map[string]any)["id"] != oatID || opts[0].(map[string]any)["price_adjustment"] != float64(70) ||
					opts[1].(map[string]any)["name"] != "Almond" || opts[1].(map[string]any)["id"] == oatID {
					t.Fatalf("options %v", opts)
				}
				catWantFields(t, r.Data(), map[string]any{"max_selections": float64(2)})
			}},
		{name: "patch max_selections above the options", method: "PATCH", path: "/api/v1/catalog/modifiers/groups/{milk}", token: o.Owner,
			body: map[string]any{"max_selections": 5}, wantStatus: 422, wantKind: "validation", wantField: "max_selections"},
		{name: "patch an unknown product", method: "PATCH", path: "/api/v1/catalog/modifiers/groups/{milk}", token: o.Owner,
			body: map[string]any{"product_ids": []string{"{nosuch}"}}, wantStatus: 422, wantKind: "validation", wantField: "product_ids",
			check: func(t *testing.T, r *resp) {
				productGroups(t, "p2", "milk")
				productGroups(t, "p3", "milk")
			}},
		{name: "patch name null", method: "PATCH", path: "/api/v1/catalog/modifiers/groups/{milk}", token: o.Owner,
			body: map[string]any{"name": nil}, wantStatus: 422, wantKind: "validation", wantField: "name"},
		{name: "patch an unknown group", method: "PATCH", path: "/api/v1/catalog/modifiers/groups/{nosuch}", token: o.Owner,
			body: map[string]any{"name": "x"}, wantStatus: 404, wantKind: "not-found"},
		{name: "patch product_ids empty unlinks all", method: "PATCH", path: "/api/v1/catalog/modifiers/groups/{milk}", token: o.Owner,
			body: map[string]any{"product_ids": []string{}}, wantStatus: 200,
			check: func(t *testing.T, r *resp) {
				groupProducts(t, r.Data())
				productGroups(t, "p2")
				productGroups(t, "p3")
			}},
		{name: "a product patch links a group", method: "PATCH", path: "/api/v1/catalog/products/{p3}", token: o.Owner,
			body: map[string]any{"modifier_group_ids": []string{"{milk}", "{size}"}}, wantStatus: 200,
			check: func(t *testing.T, r *resp) {
				groupProducts(t, f.get(o.Owner, "/api/v1/catalog/modifiers/groups/{milk}"), "p3")
				groupProducts(t, f.get(o.Owner, "/api/v1/catalog/modifiers/groups/{size}"), "p1", "p3", "mocha")
			}},

		// Option ids are ids: order lines will name an option by its id alone,
		// so one id must never belong to two groups. A patch may keep the
		// group's own option ids ("keep an option's id to keep it"), not take
		// over another group's; a create may not reuse one either. Both are
		// 422 naming options, and the other group's option stays unique.
		{name: "a patch cannot take over another group's option id", method: "PATCH", path: "/api/v1/catalog/modifiers/groups/{size}", token: o.Owner,
			body: func() any {
				return map[string]any{"options": []any{map[string]any{"id": oatID, "name": "Oat size"}, map[string]any{"name": "Large"}}}
			}, wantStatus: 422, wantKind: "validation", wantField: "options",
			check: func(t *testing.T, r *resp) { catWantUniqueOption(t, f, o.Owner, oatID) }},
		{name: "a create cannot reuse another group's option id", method: "POST", path: "/api/v1/catalog/modifiers/groups", token: o.Owner,
			body: func() any {
				return map[string]any{"name": "Copy", "options": []any{map[string]any{"id": oatID, "name": "Oat copy"}}}
			}, wantStatus: 422, wantKind: "validation", wantField: "options",
			check: func(t *testing.T, r *resp) { catWantUniqueOption(t, f, o.Owner, oatID) }},
	})
}

// catWantUniqueOption checks that exactly one modifier group of the org has
// an option with this id.
func catWantUniqueOption(t *testing.T, f *catFixture, token, optionID string) {
	t.Helper()
	r := f.do("GET", "/api/v1/catalog/modifiers/groups?limit=200", token, nil)
	holders := []string{}
	for _, g := range r.List() {
		gm, _ := g.(map[string]any)
		opts, _ := gm["options"].([]any)
		for _, o := range opts {
			if om, _ := o.(map[string]any); om["id"] == optionID {
				holders = append(holders, gm["name"].(string))
			}
		}
	}
	if len(holders) != 1 {
		t.Fatalf("option id %s belongs to %d groups %v, want exactly 1", optionID, len(holders), holders)
	}
}

func TestCatalogPriceListsAndLocationsAPI(t *testing.T) {
	f := newCatFixture(t)
	o := f.tn.MustOrg("Prices Cafe")
	cashier := f.tn.MustUser(o, "cashier@prices.test", kassa.RoleCashier)
	f.create(o.Owner, "/api/v1/locations", "city", map[string]any{"name": "City", "timezone": "Australia/Sydney", "address": "1 George St"})
	f.create(o.Owner, "/api/v1/locations", "airport", map[string]any{"name": "Airport", "timezone": "Australia/Brisbane", "currency": "NZD"})
	f.create(o.Owner, "/api/v1/catalog/products", "p1", map[string]any{"name": "Latte", "sku": "L", "base_price": 450})
	f.create(o.Owner, "/api/v1/catalog/products", "p2", map[string]any{"name": "Muffin", "sku": "M", "base_price": 400})
	f.run([]catScenario{
		{name: "list locations", method: "GET", path: "/api/v1/locations", token: cashier, wantStatus: 200,
			check: func(t *testing.T, r *resp) { f.wantList(t, r, false, "city", "airport") }},
		{name: "get a location", method: "GET", path: "/api/v1/locations/{city}", token: cashier, wantStatus: 200,
			check: func(t *testing.T, r *resp) {
				catWantFields(t, r.Data(), map[string]any{"id": f.ids["city"], "org_id": o.ID, "name": "City",
					"timezone": "Australia/Sydney", "address": "1 George St", "currency": "AUD"})
				catTime(t, r.Data()["created_at"])
				catTime(t, r.Data()["updated_at"])
			}},
		{name: "get a location with its own currency", method: "GET", path: "/api/v1/locations/{airport}", token: o.Owner, wantStatus: 200,
			check: func(t *testing.T, r *resp) {
				catWantFields(t, r.Data(), map[string]any{"currency": "NZD", "address": ""})
			}},
		{name: "get an unknown location", method: "GET", path: "/api/v1/locations/{nosuch}", token: o.Owner, wantStatus: 404, wantKind: "not-found"},
		{name: "locations need a token", method: "GET", path: "/api/v1/locations", wantStatus: 401, wantKind: "unauthorized"},

		{name: "create a price list", method: "POST", path: "/api/v1/catalog/price-lists", token: o.Owner, wantStatus: 201,
			body: map[string]any{"name": "Happy hour", "location_ids": []string{"{city}"}, "prices": []any{map[string]any{"product_id": "{p1}", "price": 300}},
				"starts_at": "2030-01-01T08:00:00Z", "ends_at": "2030-01-01T10:00:00.5Z"},
			check: func(t *testing.T, r *resp) {
				d := r.Data()
				f.ids["hh"] = d["id"].(string)
				if loc := r.Header.Get("Location"); loc != "/api/v1/catalog/price-lists/"+f.ids["hh"] {
					t.Fatalf("Location %q", loc)
				}
				catWantFields(t, d, map[string]any{"org_id": o.ID, "name": "Happy hour", "location_ids": []any{f.ids["city"]},
					"prices": []any{map[string]any{"product_id": f.ids["p1"], "price": float64(300)}}, "is_active": true})
				if !catTime(t, d["starts_at"]).Equal(time.Date(2030, 1, 1, 8, 0, 0, 0, time.UTC)) ||
					!catTime(t, d["ends_at"]).Equal(time.Date(2030, 1, 1, 10, 0, 0, 5e8, time.UTC)) {
					t.Fatalf("window %v-%v", d["starts_at"], d["ends_at"])
				}
				catTime(t, d["created_at"])
			}},
		{name: "create an open-ended list", method: "POST", path: "/api/v1/catalog/price-lists", token: o.Owner, wantStatus: 201,
			body: map[string]any{"name": "Airport", "location_ids": []string{"{airport}"}, "is_active": false,
				"prices": []any{map[string]any{"product_id": "{p1}", "price": 600}, map[string]any{"product_id": "{p2}", "price": 700}}},
			check: func(t *testing.T, r *resp) {
				f.ids["apt"] = r.Data()["id"].(string)
				catWantFields(t, r.Data(), map[string]any{"starts_at": nil, "ends_at": nil, "is_active": false})
			}},
		{name: "create with an unknown location", method: "POST", path: "/api/v1/catalog/price-lists", token: o.Owner,
			body: map[string]any{"name": "Bad", "location_ids": []string{"{nosuch}"}}, wantStatus: 422, wantKind: "validation", wantField: "location_ids"},
		{name: "create with an unknown product", method: "POST", path: "/api/v1/catalog/price-lists", token: o.Owner,
			body:       map[string]any{"name": "Bad", "prices": []any{map[string]any{"product_id": "{nosuch}", "price": 1}}},
			wantStatus: 422, wantKind: "validation", wantField: "prices"},
		{name: "create with a product twice", method: "POST", path: "/api/v1/catalog/price-lists", token: o.Owner,
			body: map[string]any{"name": "Bad", "prices": []any{map[string]any{"product_id": "{p1}", "price": 1},
				map[string]any{"product_id": "{p1}", "price": 2}}},
			wantStatus: 422, wantKind: "validation", wantField: "prices"},
		{name: "create with a negative price", method: "POST", path: "/api/v1/catalog/price-lists", token: o.Owner,
			body:       map[string]any{"name": "Bad", "prices": []any{map[string]any{"product_id": "{p1}", "price": -1}}},
			wantStatus: 422, wantKind: "validation", wantField: "prices"},
		{name: "create ending before it starts", method: "POST", path: "/api/v1/catalog/price-lists", token: o.Owner,
			body:       map[string]any{"name": "Bad", "starts_at": "2030-01-02T00:00:00Z", "ends_at": "2030-01-01T00:00:00Z"},
			wantStatus: 422, wantKind: "validation", wantField: "ends_at"},
		{name: "create without a name", method: "POST", path: "/api/v1/catalog/price-lists", token: o.Owner,
			body: map[string]any{"location_ids": []string{}}, wantStatus: 422, wantKind: "validation", wantField: "name"},
		{name: "create by a cashier", method: "POST", path: "/api/v1/catalog/price-lists", token: cashier,
			body: map[string]any{"name": "Nope"}, wantStatus: 403, wantKind: "forbidden"},
		{name: "get", method: "GET", path: "/api/v1/catalog/price-lists/{hh}", token: cashier, wantStatus: 200,
			check: func(t *testing.T, r *resp) {
				catWantFields(t, r.Data(), map[string]any{"id": f.ids["hh"], "name": "Happy hour"})
			}},
		{name: "get an unknown id", method: "GET", path: "/api/v1/catalog/price-lists/{nosuch}", token: o.Owner, wantStatus: 404, wantKind: "not-found"},
		{name: "list", method: "GET", path: "/api/v1/catalog/price-lists", token: o.Owner, wantStatus: 200,
			check: func(t *testing.T, r *resp) { f.wantList(t, r, false, "hh", "apt") }},
		{name: "list by location", method: "GET", path: "/api/v1/catalog/price-lists?location_id={city}", token: o.Owner, wantStatus: 200,
			check: func(t *testing.T, r *resp) { f.wantList(t, r, false, "hh") }},
		{name: "list by the other location", method: "GET", path: "/api/v1/catalog/price-lists?location_id={airport}", token: o.Owner, wantStatus: 200,
			check: func(t *testing.T, r *resp) { f.wantList(t, r, false, "apt") }},
		{name: "list by a malformed location", method: "GET", path: "/api/v1/catalog/price-lists?location_id=city", token: o.Owner,
			wantStatus: 400, wantKind: "bad-request"},
		{name: "patch the locations", method: "PATCH", path: "/api/v1/catalog/price-lists/{hh}", token: o.Owner,
			body: map[string]any{"location_ids": []string{"{city}", "{airport}"}}, wantStatus: 200,
			check: func(t *testing.T, r *resp) {
				catWantFields(t, r.Data(), map[string]any{"location_ids": []any{f.ids["city"], f.ids["airport"]},
					"prices": []any{map[string]any{"product_id": f.ids["p1"], "price": float64(300)}}, "name": "Happy hour"})
			}},
		{name: "list by location after the patch", method: "GET", path: "/api/v1/catalog/price-lists?location_id={airport}", token: o.Owner, wantStatus: 200,
			check: func(t *testing.T, r *resp) { f.wantList(t, r, false, "hh", "apt") }},
		{name: "patch prices replaces them", method: "PATCH", path: "/api/v1/catalog/price-lists/{hh}", token: o.Owner,
			body: map[string]any{"prices": []any{map[string]any{"product_id": "{p2}", "price": 250}}}, wantStatus: 200,
			check: func(t *testing.T, r *resp) {
				catWantFields(t, r.Data(), map[string]any{"prices": []any{map[string]any{"product_id": f.ids["p2"], "price": float64(250)}}})
			}},
		{name: "patch an unknown location", method: "PATCH", path: "/api/v1/catalog/price-lists/{hh}", token: o.Owner,
			body: map[string]any{"location_ids": []string{"{nosuch}"}}, wantStatus: 422, wantKind: "validation", wantField: "location_ids"},
		{name: "patch an unknown product", method: "PATCH", path: "/api/v1/catalog/price-lists/{hh}", token: o.Owner,
			body:       map[string]any{"prices": []any{map[string]any{"product_id": "{nosuch}", "price": 1}}},
			wantStatus: 422, wantKind: "validation", wantField: "prices"},
		{name: "patch the end before the start", method: "PATCH", path: "/api/v1/catalog/price-lists/{hh}", token: o.Owner,
			body: map[string]any{"ends_at": "2029-12-31T00:00:00Z"}, wantStatus: 422, wantKind: "validation", wantField: "ends_at"},
		{name: "refused patches changed nothing", method: "GET", path: "/api/v1/catalog/price-lists/{hh}", token: o.Owner, wantStatus: 200,
			check: func(t *testing.T, r *resp) {
				catWantFields(t, r.Data(), map[string]any{"location_ids": []any{f.ids["city"], f.ids["airport"]}, "ends_at": "2030-01-01T10:00:00.5Z"})
			}},
		{name: "patch the end null and deactivate", method: "PATCH", path: "/api/v1/catalog/price-lists/{hh}", token: o.Owner,
			body: map[string]any{"ends_at": nil, "is_active": false, "name": "Early bird"}, wantStatus: 200,
			check: func(t *testing.T, r *resp) {
				catWantFields(t, r.Data(), map[string]any{"ends_at": nil, "is_active": false, "name": "Early bird", "starts_at": "2030-01-01T08:00:00Z"})
			}},
		{name: "patch an unknown list", method: "PATCH", path: "/api/v1/catalog/price-lists/{nosuch}", token: o.Owner,
			body: map[string]any{"name": "x"}, wantStatus: 404, wantKind: "not-found"},
		{name: "patch by a cashier", method: "PATCH", path: "/api/v1/catalog/price-lists/{hh}", token: cashier,
			body: map[string]any{"name": "x"}, wantStatus: 403, wantKind: "forbidden"},
	})
}

func TestCatalogPagingEdgeCases(t *testing.T) {
	f := newCatFixture(t)
	o := f.tn.MustOrg("Paging Cafe")
	keys := []string{"a", "b", "c", "d"}
	for i, k := range keys {
		f.create(o.Owner, "/api/v1/catalog/products", k, map[string]any{"name": "Item " + k, "sku": "P-" + k, "base_price": i, "is_active": i != 1})
	}
	f.run([]catScenario{
		{name: "page 1 of 2", method: "GET", path: "/api/v1/catalog/products?limit=2", token: o.Owner, wantStatus: 200,
			check: func(t *testing.T, r *resp) {
				f.wantList(t, r, true, "a", "b")
				f.ids["cursor1"], _ = r.JSON()["next_cursor"].(string)
			}},
		{name: "page 2 of 2 is the last, an exact multiple", method: "GET", path: "/api/v1/catalog/products?limit=2&cursor={cursor1}", token: o.Owner,
			wantStatus: 200,
			check: func(t *testing.T, r *resp) {
				f.wantList(t, r, false, "c", "d")
				if !strings.Contains(string(r.Body), `"next_cursor":null`) {
					t.Fatalf("next_cursor is not JSON null: %s", r.Body)
				}
			}},
		{name: "default limit returns all four with no cursor", method: "GET", path: "/api/v1/catalog/products", token: o.Owner, wantStatus: 200,
			check: func(t *testing.T, r *resp) { f.wantList(t, r, false, "a", "b", "c", "d") }},
		{name: "limit equal to the count", method: "GET", path: "/api/v1/catalog/products?limit=4", token: o.Owner, wantStatus: 200,
			check: func(t *testing.T, r *resp) { f.wantList(t, r, false, "a", "b", "c", "d") }},
		{name: "limit 3 leaves one", method: "GET", path: "/api/v1/catalog/products?limit=3", token: o.Owner, wantStatus: 200,
			check: func(t *testing.T, r *resp) { f.wantList(t, r, true, "a", "b", "c") }},
		{name: "limit 200", method: "GET", path: "/api/v1/catalog/products?limit=200", token: o.Owner, wantStatus: 200,
			check: func(t *testing.T, r *resp) { f.wantList(t, r, false, "a", "b", "c", "d") }},
		{name: "limit 1", method: "GET", path: "/api/v1/catalog/products?limit=1", token: o.Owner, wantStatus: 200,
			check: func(t *testing.T, r *resp) { f.wantList(t, r, true, "a") }},
		{name: "limit 0", method: "GET", path: "/api/v1/catalog/products?limit=0", token: o.Owner, wantStatus: 400, wantKind: "bad-request"},
		{name: "limit 201", method: "GET", path: "/api/v1/catalog/products?limit=201", token: o.Owner, wantStatus: 400, wantKind: "bad-request"},
		{name: "limit -1", method: "GET", path: "/api/v1/catalog/products?limit=-1", token: o.Owner, wantStatus: 400, wantKind: "bad-request"},
		{name: "limit abc", method: "GET", path: "/api/v1/catalog/products?limit=abc", token: o.Owner, wantStatus: 400, wantKind: "bad-request"},
		{name: "limit 2.5", method: "GET", path: "/api/v1/catalog/products?limit=2.5", token: o.Owner, wantStatus: 400, wantKind: "bad-request"},
		{name: "cursor garbage", method: "GET", path: "/api/v1/catalog/products?cursor=garbage", token: o.Owner, wantStatus: 400, wantKind: "bad-request"},
		{name: "cursor base64 of no id", method: "GET", path: "/api/v1/catalog/products?cursor=" + base64.RawURLEncoding.EncodeToString([]byte("v1:nope")),
			token: o.Owner, wantStatus: 400, wantKind: "bad-request"},
		{name: "cursor too long", method: "GET", path: "/api/v1/catalog/products?cursor=" + strings.Repeat("A", 600), token: o.Owner,
			wantStatus: 400, wantKind: "bad-request"},
		{name: "categories limit 0", method: "GET", path: "/api/v1/catalog/categories?limit=0", token: o.Owner, wantStatus: 400, wantKind: "bad-request"},
		{name: "categories bad cursor", method: "GET", path: "/api/v1/catalog/categories?cursor=garbage", token: o.Owner, wantStatus: 400, wantKind: "bad-request"},
		{name: "modifier groups limit 201", method: "GET", path: "/api/v1/catalog/modifiers/groups?limit=201", token: o.Owner, wantStatus: 400, wantKind: "bad-request"},
		{name: "modifier groups bad cursor", method: "GET", path: "/api/v1/catalog/modifiers/groups?cursor=garbage", token: o.Owner, wantStatus: 400, wantKind: "bad-request"},
		{name: "price lists limit abc", method: "GET", path: "/api/v1/catalog/price-lists?limit=abc", token: o.Owner, wantStatus: 400, wantKind: "bad-request"},
		{name: "price lists bad cursor", method: "GET", path: "/api/v1/catalog/price-lists?cursor=garbage", token: o.Owner, wantStatus: 400, wantKind: "bad-request"},
		{name: "locations limit -1", method: "GET", path: "/api/v1/locations?limit=-1", token: o.Owner, wantStatus: 400, wantKind: "bad-request"},
		{name: "locations bad cursor", method: "GET", path: "/api/v1/locations?cursor=garbage", token: o.Owner, wantStatus: 400, wantKind: "bad-request"},
		{name: "empty lists have a null cursor", method: "GET", path: "/api/v1/catalog/categories?limit=1", token: o.Owner, wantStatus: 200,
			check: func(t *testing.T, r *resp) { f.wantList(t, r, false) }},
	})

	// Walking every page of every size returns every product exactly once,
	// in creation order; so does a walk with a filter.
	walk := func(t *testing.T, query string, limit int) []string {
		t.Helper()
		var got []string
		cur := ""
		for pages := 0; ; pages++ {
			if pages > 10 {
				t.Fatal("the walk does not end")
			}
			path := "/api/v1/catalog/products?" + query + "&limit=" + string(rune('0'+limit))
			if cur != "" {
				path += "&cursor=" + cur
			}
			r := f.tn.Do("GET", path, o.Owner, nil)
			if r.Status != 200 {
				t.Fatalf("GET %s: %d %s", path, r.Status, r.Body)
			}
			env := r.JSON()
			page := catIDs(r)
			if len(page) > limit || (env["has_more"] == true && len(page) != limit) {
				t.Fatalf("page of %d with limit %d: %s", len(page), limit, r.Body)
			}
			got = append(got, page...)
			if env["has_more"] != true {
				if env["next_cursor"] != nil {
					t.Fatalf("last page with a cursor: %s", r.Body)
				}
				return got
			}
			cur, _ = env["next_cursor"].(string)
		}
	}
	all := []string{f.ids["a"], f.ids["b"], f.ids["c"], f.ids["d"]}
	active := []string{f.ids["a"], f.ids["c"], f.ids["d"]}
	for limit := 1; limit <= 5; limit++ {
		if got := walk(t, "", limit); !slices.Equal(got, all) {
			t.Fatalf("walk with limit %d: %v, want %v", limit, got, all)
		}
		if got := walk(t, "is_active=true", limit); !slices.Equal(got, active) {
			t.Fatalf("walk of active products with limit %d: %v, want %v", limit, got, active)
		}
	}
}

func TestCatalogOrgIsolation(t *testing.T) {
	f := newCatFixture(t)
	tn := f.tn
	a := tn.MustOrg("Alpha Cafe")
	b := tn.MustOrg("Beta Cafe")
	f.create(a.Owner, "/api/v1/locations", "aloc", map[string]any{"name": "Alpha St", "timezone": "Australia/Perth"})
	f.create(a.Owner, "/api/v1/catalog/categories", "acat", map[string]any{"name": "Alpha drinks"})
	f.create(a.Owner, "/api/v1/catalog/products", "aprod", map[string]any{"name": "Alpha latte", "sku": "SHARED-1", "base_price": 450,
		"category_id": "{acat}", "barcodes": []string{"111"}})
	f.create(a.Owner, "/api/v1/catalog/modifiers/groups", "agroup", map[string]any{"name": "Alpha milk", "product_ids": []string{"{aprod}"},
		"options": []any{map[string]any{"name": "Oat"}}})
	f.create(a.Owner, "/api/v1/catalog/price-lists", "aprice", map[string]any{"name": "Alpha prices", "location_ids": []string{"{aloc}"},
		"prices": []any{map[string]any{"product_id": "{aprod}", "price": 400}}})
	f.create(b.Owner, "/api/v1/catalog/categories", "bcat", map[string]any{"name": "Beta drinks"})

	aPaths := map[string]string{
		"product":        "/api/v1/catalog/products/{aprod}",
		"category":       "/api/v1/catalog/categories/{acat}",
		"modifier group": "/api/v1/catalog/modifiers/groups/{agroup}",
		"price list":     "/api/v1/catalog/price-lists/{aprice}",
		"location":       "/api/v1/locations/{aloc}",
	}
	before := map[string]map[string]any{}
	for name, p := range aPaths {
		before[name] = f.get(a.Owner, p)
	}
	outbox := tn.outboxLen()

	var scenarios []catScenario
	for _, name := range slices.Sorted(func(yield func(string) bool) {
		for k := range aPaths {
			if !yield(k) {
				return
			}
		}
	}) {
		p := aPaths[name]
		// Only products have DELETE: for the others the route's method
		// does not exist, 405 for any id (it reveals nothing of A's row).
		refused := func(has bool) (int, string) {
			if has {
				return 404, "not-found"
			}
			return 405, "method-not-allowed"
		}
		patchStatus, patchKind := refused(true)
		deleteStatus, deleteKind := refused(name == "product")
		scenarios = append(scenarios,
			catScenario{name: "B cannot GET A's " + name, method: "GET", path: p, token: b.Owner, wantStatus: 404, wantKind: "not-found"},
			// A valid body, so that only the org can be the reason to refuse.
			catScenario{name: "B cannot PATCH A's " + name, method: "PATCH", path: p, token: b.Owner, body: map[string]any{"name": "Hijacked"},
				wantStatus: patchStatus, wantKind: patchKind},
			catScenario{name: "B cannot DELETE A's " + name, method: "DELETE", path: p, token: b.Owner, wantStatus: deleteStatus, wantKind: deleteKind},
		)
	}
	scenarios = append(scenarios,
		catScenario{name: "B's product list is empty", method: "GET", path: "/api/v1/catalog/products", token: b.Owner, wantStatus: 200,
			check: func(t *testing.T, r *resp) { f.wantList(t, r, false) }},
		catScenario{name: "B's product list by A's category", method: "GET", path: "/api/v1/catalog/products?category_id={acat}", token: b.Owner, wantStatus: 200,
			check: func(t *testing.T, r *resp) { f.wantList(t, r, false) }},
		catScenario{name: "B's product search by A's barcode and sku", method: "GET", path: "/api/v1/catalog/products?q=111", token: b.Owner, wantStatus: 200,
			check: func(t *testing.T, r *resp) { f.wantList(t, r, false) }},
		catScenario{name: "B's category list has only B's", method: "GET", path: "/api/v1/catalog/categories", token: b.Owner, wantStatus: 200,
			check: func(t *testing.T, r *resp) { f.wantList(t, r, false, "bcat") }},
		catScenario{name: "B's category list by A's parent", method: "GET", path: "/api/v1/catalog/categories?parent_id={acat}", token: b.Owner, wantStatus: 200,
			check: func(t *testing.T, r *resp) { f.wantList(t, r, false) }},
		catScenario{name: "B's modifier group list is empty", method: "GET", path: "/api/v1/catalog/modifiers/groups", token: b.Owner, wantStatus: 200,
			check: func(t *testing.T, r *resp) { f.wantList(t, r, false) }},
		catScenario{name: "B's modifier groups of A's product", method: "GET", path: "/api/v1/catalog/modifiers/groups?product_id={aprod}", token: b.Owner, wantStatus: 200,
			check: func(t *testing.T, r *resp) { f.wantList(t, r, false) }},
		catScenario{name: "B's price list list is empty", method: "GET", path: "/api/v1/catalog/price-lists", token: b.Owner, wantStatus: 200,
			check: func(t *testing.T, r *resp) { f.wantList(t, r, false) }},
		catScenario{name: "B's price lists at A's location", method: "GET", path: "/api/v1/catalog/price-lists?location_id={aloc}", token: b.Owner, wantStatus: 200,
			check: func(t *testing.T, r *resp) { f.wantList(t, r, false) }},
		catScenario{name: "B's location list is empty", method: "GET", path: "/api/v1/locations", token: b.Owner, wantStatus: 200,
			check: func(t *testing.T, r *resp) { f.wantList(t, r, false) }},
		catScenario{name: "B cannot file a product under A's category", method: "POST", path: "/api/v1/catalog/products", token: b.Owner,
			body:       map[string]any{"name": "Beta latte", "sku": "B-1", "base_price": 400, "category_id": "{acat}"},
			wantStatus: 422, wantKind: "validation", wantField: "category_id"},
		catScenario{name: "B cannot give a product A's modifier group", method: "POST", path: "/api/v1/catalog/products", token: b.Owner,
			body:       map[string]any{"name": "Beta latte", "sku": "B-1", "base_price": 400, "modifier_group_ids": []string{"{agroup}"}},
			wantStatus: 422, wantKind: "validation", wantField: "modifier_group_ids"},
		catScenario{name: "B cannot nest a category under A's", method: "POST", path: "/api/v1/catalog/categories", token: b.Owner,
			body: map[string]any{"name": "Beta sub", "parent_id": "{acat}"}, wantStatus: 422, wantKind: "validation", wantField: "parent_id"},
		catScenario{name: "B cannot move its category under A's", method: "PATCH", path: "/api/v1/catalog/categories/{bcat}", token: b.Owner,
			body: map[string]any{"parent_id": "{acat}"}, wantStatus: 422, wantKind: "validation", wantField: "parent_id"},
		catScenario{name: "B cannot link A's product to a group", method: "POST", path: "/api/v1/catalog/modifiers/groups", token: b.Owner,
			body:       map[string]any{"name": "Beta milk", "product_ids": []string{"{aprod}"}, "options": []any{map[string]any{"name": "Soy"}}},
			wantStatus: 422, wantKind: "validation", wantField: "product_ids"},
		catScenario{name: "B cannot price at A's location", method: "POST", path: "/api/v1/catalog/price-lists", token: b.Owner,
			body: map[string]any{"name": "Beta prices", "location_ids": []string{"{aloc}"}}, wantStatus: 422, wantKind: "validation", wantField: "location_ids"},
		catScenario{name: "B cannot price A's product", method: "POST", path: "/api/v1/catalog/price-lists", token: b.Owner,
			body:       map[string]any{"name": "Beta prices", "prices": []any{map[string]any{"product_id": "{aprod}", "price": 1}}},
			wantStatus: 422, wantKind: "validation", wantField: "prices"},
		catScenario{name: "refused writes left no change records", method: "GET", path: "/api/v1/catalog/products", token: b.Owner, wantStatus: 200,
			check: func(t *testing.T, r *resp) {
				if n := tn.outboxLen(); n != outbox {
					t.Fatalf("outbox grew from %d to %d on refused cross-org writes", outbox, n)
				}
			}},
		catScenario{name: "B may use the same sku as A", method: "POST", path: "/api/v1/catalog/products", token: b.Owner,
			body: map[string]any{"name": "Beta latte", "sku": "SHARED-1", "base_price": 420, "barcodes": []string{"111"}}, wantStatus: 201,
			check: func(t *testing.T, r *resp) {
				f.ids["bprod"] = r.Data()["id"].(string)
				catWantFields(t, r.Data(), map[string]any{"org_id": b.ID, "sku": "SHARED-1"})
			}},
		catScenario{name: "B finds only its own product by the shared sku", method: "GET", path: "/api/v1/catalog/products?q=SHARED-1", token: b.Owner, wantStatus: 200,
			check: func(t *testing.T, r *resp) { f.wantList(t, r, false, "bprod") }},
		catScenario{name: "A finds only its own product by the shared barcode", method: "GET", path: "/api/v1/catalog/products?q=111", token: a.Owner, wantStatus: 200,
			check: func(t *testing.T, r *resp) { f.wantList(t, r, false, "aprod") }},
		catScenario{name: "A still may not reuse its sku", method: "POST", path: "/api/v1/catalog/products", token: a.Owner,
			body: map[string]any{"name": "Again", "sku": "SHARED-1", "base_price": 1}, wantStatus: 409, wantKind: "conflict"},
		catScenario{name: "A cannot see B's product", method: "GET", path: "/api/v1/catalog/products/{bprod}", token: a.Owner, wantStatus: 404, wantKind: "not-found"},
	)
	f.run(scenarios)

	// A's rows are exactly as they were.
	for name, p := range aPaths {
		if after := f.get(a.Owner, p); !reflect.DeepEqual(after, before[name]) {
			t.Errorf("A's %s changed:\nbefore %v\nafter  %v", name, before[name], after)
		}
	}
	if r := tn.Do("GET", "/api/v1/catalog/products", a.Owner, nil); !slices.Equal(catIDs(r), []string{f.ids["aprod"]}) {
		t.Errorf("A's product list: %s", r.Body)
	}
}

// catChangeKeys lists the field names of a change record, sorted.
func catChangeKeys(c change.Change) []string {
	keys := make([]string, 0, len(c.Fields))
	for k := range c.Fields {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

func TestCatalogChangeCapture(t *testing.T) {
	f := newCatFixture(t)
	tn := f.tn
	o := tn.MustOrg("Changes Cafe")
	nodeID := tn.N.NodeID()

	// changesOf checks every record of a row and returns them.
	changesOf := func(t *testing.T, entity, key string, want int) []change.Change {
		t.Helper()
		cs := tn.changes(entity, f.ids[key])
		if len(cs) != want {
			t.Fatalf("%s %s has %d change records, want %d: %+v", entity, key, len(cs), want, cs)
		}
		for i, c := range cs {
			if err := c.Validate(); err != nil {
				t.Fatal(err)
			}
			if c.OrgID != o.ID || c.Origin != nodeID || c.Entity != entity || c.EntityID != f.ids[key] {
				t.Fatalf("record %+v", c)
			}
			if i > 0 && cs[i-1].HLC.Compare(c.HLC) >= 0 {
				t.Fatalf("records out of HLC order: %v then %v", cs[i-1].HLC, c.HLC)
			}
		}
		return cs
	}
	// grew checks that a scenario added exactly n records in all.
	var mark int
	markOutbox := func() { mark = tn.outboxLen() }
	grew := func(t *testing.T, n int) {
		t.Helper()
		if got := tn.outboxLen() - mark; got != n {
			t.Fatalf("outbox grew by %d, want %d", got, n)
		}
	}

	f.run([]catScenario{
		{name: "create a category", before: markOutbox, method: "POST", path: "/api/v1/catalog/categories", token: o.Owner,
			body: map[string]any{"name": "Drinks"}, wantStatus: 201,
			check: func(t *testing.T, r *resp) {
				f.ids["cat"] = r.Data()["id"].(string)
				grew(t, 1)
				cs := changesOf(t, "category", "cat", 1)
				if cs[0].Op != change.OpInsert || cs[0].Fields["name"] != "Drinks" {
					t.Fatalf("record %+v", cs[0])
				}
			}},
		{name: "create a product", before: markOutbox, method: "POST", path: "/api/v1/catalog/products", token: o.Owner,
			body: map[string]any{"name": "Latte", "sku": "LAT-1", "base_price": 450, "category_id": "{cat}"}, wantStatus: 201,
			check: func(t *testing.T, r *resp) {
				f.ids["p1"] = r.Data()["id"].(string)
				grew(t, 2) // the product's record and its event's
				c := changesOf(t, "product", "p1", 1)[0]
				if c.Op != change.OpInsert || c.Fields["sku"] != "LAT-1" || c.Fields["base_price"] != float64(450) ||
					c.Fields["name"] != "Latte" || c.Fields["is_active"] != true || c.Fields["category_id"] != f.ids["cat"] {
					t.Fatalf("insert record %+v", c)
				}
				if c.Fields["created_at"] != r.Data()["created_at"] && !catTime(t, c.Fields["created_at"]).Equal(catTime(t, r.Data()["created_at"])) {
					t.Fatalf("record created_at %v, product %v", c.Fields["created_at"], r.Data()["created_at"])
				}
			}},
		{name: "create a second product", before: markOutbox, method: "POST", path: "/api/v1/catalog/products", token: o.Owner,
			body: map[string]any{"name": "Mocha", "sku": "MOC-1", "base_price": 500}, wantStatus: 201,
			check: func(t *testing.T, r *resp) {
				f.ids["p2"] = r.Data()["id"].(string)
				grew(t, 2) // the product's record and its event's
				changesOf(t, "product", "p2", 1)
			}},
		{name: "create with an idempotency key", before: markOutbox, method: "POST", path: "/api/v1/catalog/products", token: o.Owner,
			headers: []string{"Idempotency-Key", "cc-create-3"},
			body:    map[string]any{"name": "Chai", "sku": "CHAI-1", "base_price": 400}, wantStatus: 201,
			check: func(t *testing.T, r *resp) {
				f.ids["p3"] = r.Data()["id"].(string)
				grew(t, 2) // the product's record and its event's
			}},
		{name: "a replayed create writes nothing", before: markOutbox, method: "POST", path: "/api/v1/catalog/products", token: o.Owner,
			headers: []string{"Idempotency-Key", "cc-create-3"},
			body:    map[string]any{"name": "Chai", "sku": "CHAI-1", "base_price": 400}, wantStatus: 201,
			check: func(t *testing.T, r *resp) {
				if r.Header.Get("Idempotent-Replayed") != "true" || r.Data()["id"] != f.ids["p3"] {
					t.Fatalf("not a replay: %v %s", r.Header, r.Body)
				}
				grew(t, 0)
				changesOf(t, "product", "p3", 1)
			}},
		{name: "patch two fields", before: func() { markOutbox(); tn.Clock.Advance(time.Second) }, method: "PATCH", path: "/api/v1/catalog/products/{p1}",
			token: o.Owner, body: map[string]any{"name": "Latte grande", "base_price": 520, "sku_note": nil}, wantStatus: 422, wantKind: "validation",
			check: func(t *testing.T, r *resp) { grew(t, 0) }},
		{name: "patch two fields, for real", before: markOutbox, method: "PATCH", path: "/api/v1/catalog/products/{p1}",
			token: o.Owner, body: map[string]any{"name": "Latte grande", "base_price": 520, "tags": []string{}, "category_id": "{cat}"}, wantStatus: 200,
			check: func(t *testing.T, r *resp) {
				grew(t, 2) // the product's record and its event's
				c := changesOf(t, "product", "p1", 2)[1]
				if c.Op != change.OpUpdate || !slices.Equal(catChangeKeys(c), []string{"base_price", "name", "updated_at"}) ||
					c.Fields["name"] != "Latte grande" || c.Fields["base_price"] != float64(520) {
					t.Fatalf("update record %+v (fields %v)", c, catChangeKeys(c))
				}
				if !catTime(t, c.Fields["updated_at"]).Equal(catTime(t, r.Data()["updated_at"])) {
					t.Fatalf("record updated_at %v, product %v", c.Fields["updated_at"], r.Data()["updated_at"])
				}
			}},
		{name: "a patch that changes nothing writes nothing", before: func() { markOutbox(); tn.Clock.Advance(time.Second) },
			method: "PATCH", path: "/api/v1/catalog/products/{p1}", token: o.Owner,
			body:       map[string]any{"name": "Latte grande", "base_price": 520, "category_id": "{cat}", "description": nil, "is_active": true},
			wantStatus: 200,
			check: func(t *testing.T, r *resp) {
				grew(t, 0)
				changesOf(t, "product", "p1", 2)
				if last := tn.changes("product", f.ids["p1"])[1]; !catTime(t, r.Data()["updated_at"]).Equal(catTime(t, last.Fields["updated_at"])) {
					t.Fatalf("a no-op patch moved updated_at to %v", r.Data()["updated_at"])
				}
			}},
		{name: "an empty patch writes nothing", before: markOutbox, method: "PATCH", path: "/api/v1/catalog/products/{p1}", token: o.Owner,
			body: map[string]any{}, wantStatus: 200, check: func(t *testing.T, r *resp) { grew(t, 0) }},
		{name: "clearing the category is one record", before: markOutbox, method: "PATCH", path: "/api/v1/catalog/products/{p1}", token: o.Owner,
			body: map[string]any{"category_id": nil}, wantStatus: 200,
			check: func(t *testing.T, r *resp) {
				grew(t, 2) // the product's record and its event's
				c := changesOf(t, "product", "p1", 3)[2]
				if v, ok := c.Fields["category_id"]; !ok || v != nil || !slices.Equal(catChangeKeys(c), []string{"category_id", "updated_at"}) {
					t.Fatalf("record %+v", c)
				}
			}},
		{name: "archive is one record", before: markOutbox, method: "DELETE", path: "/api/v1/catalog/products/{p1}", token: o.Owner, wantStatus: 200,
			check: func(t *testing.T, r *resp) {
				grew(t, 2) // the product's record and its event's
				c := changesOf(t, "product", "p1", 4)[3]
				if c.Op != change.OpUpdate || c.Fields["is_active"] != false || !slices.Equal(catChangeKeys(c), []string{"is_active", "updated_at"}) {
					t.Fatalf("archive record %+v", c)
				}
			}},
		{name: "archiving again writes nothing", before: markOutbox, method: "DELETE", path: "/api/v1/catalog/products/{p1}", token: o.Owner, wantStatus: 200,
			check: func(t *testing.T, r *resp) { grew(t, 0) }},
		{name: "a group with two products is three records", before: markOutbox, method: "POST", path: "/api/v1/catalog/modifiers/groups", token: o.Owner,
			body: map[string]any{"name": "Milk", "product_ids": []string{"{p1}", "{p2}"}, "options": []any{map[string]any{"name": "Oat"}}}, wantStatus: 201,
			check: func(t *testing.T, r *resp) {
				f.ids["g"] = r.Data()["id"].(string)
				grew(t, 3)
				g := changesOf(t, "modifier_group", "g", 1)[0]
				if g.Op != change.OpInsert || g.Fields["name"] != "Milk" {
					t.Fatalf("group record %+v", g)
				}
				for _, k := range []string{"p1", "p2"} {
					cs := tn.changes("product", f.ids[k])
					c := cs[len(cs)-1]
					if c.Op != change.OpUpdate || !slices.Equal(catChangeKeys(c), []string{"modifier_group_ids", "updated_at"}) ||
						!slices.Equal(catStrings(c.Fields["modifier_group_ids"]), []string{f.ids["g"]}) {
						t.Fatalf("product %s link record %+v", k, c)
					}
				}
				changesOf(t, "product", "p1", 5)
				changesOf(t, "product", "p2", 2)
				changesOf(t, "product", "p3", 1)
			}},
		{name: "moving a group's links writes only the products that change", before: markOutbox, method: "PATCH",
			path: "/api/v1/catalog/modifiers/groups/{g}", token: o.Owner, body: map[string]any{"product_ids": []string{"{p2}", "{p3}"}}, wantStatus: 200,
			check: func(t *testing.T, r *resp) {
				grew(t, 2)
				changesOf(t, "modifier_group", "g", 1)
				changesOf(t, "product", "p1", 6)
				changesOf(t, "product", "p2", 2)
				changesOf(t, "product", "p3", 2)
				if c := tn.changes("product", f.ids["p1"])[5]; len(catStrings(c.Fields["modifier_group_ids"])) != 0 {
					t.Fatalf("unlink record %+v", c)
				}
			}},
		{name: "renaming a group is one group record", before: markOutbox, method: "PATCH", path: "/api/v1/catalog/modifiers/groups/{g}", token: o.Owner,
			body: map[string]any{"name": "Milks", "product_ids": []string{"{p3}", "{p2}"}}, wantStatus: 200,
			check: func(t *testing.T, r *resp) {
				grew(t, 1)
				c := changesOf(t, "modifier_group", "g", 2)[1]
				if !slices.Equal(catChangeKeys(c), []string{"name", "updated_at"}) {
					t.Fatalf("group record %+v", c)
				}
			}},
		{name: "create a location", before: markOutbox, method: "POST", path: "/api/v1/locations", token: o.Owner,
			body: map[string]any{"name": "Shop", "timezone": "Australia/Sydney"}, wantStatus: 201,
			check: func(t *testing.T, r *resp) {
				f.ids["loc"] = r.Data()["id"].(string)
				grew(t, 1)
				if c := changesOf(t, "location", "loc", 1)[0]; c.Op != change.OpInsert || c.Fields["currency"] != "AUD" {
					t.Fatalf("location record %+v", c)
				}
			}},
		{name: "create a price list", before: markOutbox, method: "POST", path: "/api/v1/catalog/price-lists", token: o.Owner,
			body:       map[string]any{"name": "Happy hour", "location_ids": []string{"{loc}"}, "prices": []any{map[string]any{"product_id": "{p2}", "price": 300}}},
			wantStatus: 201,
			check: func(t *testing.T, r *resp) {
				f.ids["pl"] = r.Data()["id"].(string)
				grew(t, 1)
				if c := changesOf(t, "price_list", "pl", 1)[0]; c.Op != change.OpInsert || !slices.Equal(catStrings(c.Fields["location_ids"]), []string{f.ids["loc"]}) {
					t.Fatalf("price list record %+v", c)
				}
			}},
		{name: "patch a price list", before: markOutbox, method: "PATCH", path: "/api/v1/catalog/price-lists/{pl}", token: o.Owner,
			body: map[string]any{"is_active": false, "name": "Happy hour"}, wantStatus: 200,
			check: func(t *testing.T, r *resp) {
				grew(t, 1)
				if c := changesOf(t, "price_list", "pl", 2)[1]; !slices.Equal(catChangeKeys(c), []string{"is_active", "updated_at"}) {
					t.Fatalf("price list record %+v", c)
				}
			}},
		{name: "patch a category", before: markOutbox, method: "PATCH", path: "/api/v1/catalog/categories/{cat}", token: o.Owner,
			body: map[string]any{"sort_order": 3, "name": "Drinks"}, wantStatus: 200,
			check: func(t *testing.T, r *resp) {
				grew(t, 1)
				if c := changesOf(t, "category", "cat", 2)[1]; !slices.Equal(catChangeKeys(c), []string{"sort_order", "updated_at"}) {
					t.Fatalf("category record %+v", c)
				}
			}},

		// Failed writes leave the outbox as it was.
		{name: "duplicate sku", before: markOutbox, method: "POST", path: "/api/v1/catalog/products", token: o.Owner,
			body: map[string]any{"name": "Latte again", "sku": "LAT-1", "base_price": 1}, wantStatus: 409, wantKind: "conflict",
			check: func(t *testing.T, r *resp) { grew(t, 0) }},
		{name: "unknown category", before: markOutbox, method: "POST", path: "/api/v1/catalog/products", token: o.Owner,
			body: map[string]any{"name": "X", "sku": "X-1", "base_price": 1, "category_id": "{nosuch}"}, wantStatus: 422, wantKind: "validation",
			check: func(t *testing.T, r *resp) { grew(t, 0) }},
		{name: "refused product patch", before: markOutbox, method: "PATCH", path: "/api/v1/catalog/products/{p2}", token: o.Owner,
			body: map[string]any{"name": "Renamed", "category_id": "{nosuch}"}, wantStatus: 422, wantKind: "validation",
			check: func(t *testing.T, r *resp) { grew(t, 0) }},
		{name: "sku patch", before: markOutbox, method: "PATCH", path: "/api/v1/catalog/products/{p2}", token: o.Owner,
			body: map[string]any{"name": "Renamed", "sku": "NEW"}, wantStatus: 422, wantKind: "validation",
			check: func(t *testing.T, r *resp) { grew(t, 0) }},
		{name: "a group with an unknown product", before: markOutbox, method: "POST", path: "/api/v1/catalog/modifiers/groups", token: o.Owner,
			body:       map[string]any{"name": "Size", "product_ids": []string{"{p2}", "{nosuch}"}, "options": []any{map[string]any{"name": "L"}}},
			wantStatus: 422, wantKind: "validation", check: func(t *testing.T, r *resp) { grew(t, 0) }},
		{name: "a group link to an unknown product", before: markOutbox, method: "PATCH", path: "/api/v1/catalog/modifiers/groups/{g}", token: o.Owner,
			body:       map[string]any{"name": "Renamed", "product_ids": []string{"{p1}", "{nosuch}"}},
			wantStatus: 422, wantKind: "validation", check: func(t *testing.T, r *resp) { grew(t, 0) }},
		{name: "an invalid merged group", before: markOutbox, method: "PATCH", path: "/api/v1/catalog/modifiers/groups/{g}", token: o.Owner,
			body:       map[string]any{"name": "Renamed", "max_selections": 9},
			wantStatus: 422, wantKind: "validation", check: func(t *testing.T, r *resp) { grew(t, 0) }},
		{name: "a category cycle", before: func() {
			markOutbox()
			f.create(o.Owner, "/api/v1/catalog/categories", "child", map[string]any{"name": "Child", "parent_id": "{cat}"})
			mark++ // the child's own insert record
		}, method: "PATCH", path: "/api/v1/catalog/categories/{cat}", token: o.Owner,
			body: map[string]any{"name": "Renamed", "parent_id": "{child}"}, wantStatus: 409, wantKind: "conflict",
			check: func(t *testing.T, r *resp) { grew(t, 0) }},
		{name: "a price list with an unknown product", before: markOutbox, method: "POST", path: "/api/v1/catalog/price-lists", token: o.Owner,
			body:       map[string]any{"name": "Bad", "prices": []any{map[string]any{"product_id": "{nosuch}", "price": 1}}},
			wantStatus: 422, wantKind: "validation", check: func(t *testing.T, r *resp) { grew(t, 0) }},
		{name: "a price list patch with an unknown location", before: markOutbox, method: "PATCH", path: "/api/v1/catalog/price-lists/{pl}", token: o.Owner,
			body:       map[string]any{"name": "Renamed", "location_ids": []string{"{nosuch}"}},
			wantStatus: 422, wantKind: "validation", check: func(t *testing.T, r *resp) { grew(t, 0) }},
		{name: "a forbidden write", before: markOutbox, method: "POST", path: "/api/v1/catalog/products", token: "",
			body: map[string]any{"name": "X", "sku": "X-2", "base_price": 1}, wantStatus: 401, wantKind: "unauthorized",
			check: func(t *testing.T, r *resp) { grew(t, 0) }},
	})
}

func TestCatalogOpenAPIListsEveryRoute(t *testing.T) {
	for _, kind := range []string{kassa.NodeEdge, kassa.NodeHub} {
		t.Run(kind, func(t *testing.T) {
			tn := MustStartNode(t, kind, nil)
			r := tn.Do("GET", "/api/v1/openapi.json", "", nil)
			if r.Status != 200 || !strings.HasPrefix(r.Header.Get("Content-Type"), "application/json") {
				t.Fatalf("openapi.json: %d %s", r.Status, r.Body)
			}
			doc := r.JSON()
			if doc["openapi"] != "3.1.0" {
				t.Fatalf("openapi %v", doc["openapi"])
			}
			paths, _ := doc["paths"].(map[string]any)
			if len(paths) == 0 {
				t.Fatalf("no paths: %s", r.Body)
			}
			param := regexp.MustCompile(`:([A-Za-z_][A-Za-z0-9_]*)`)
			seen := map[string]bool{}
			routes := 0
			for _, rt := range tn.N.HTTP.App().GetRoutes(true) {
				if rt.Method == "HEAD" || rt.Method == "USE" || !strings.HasPrefix(rt.Path, "/api/v1/") {
					continue
				}
				p := param.ReplaceAllString(rt.Path, "{$1}")
				op := strings.ToLower(rt.Method)
				if seen[op+" "+p] {
					continue
				}
				seen[op+" "+p] = true
				routes++
				item, _ := paths[p].(map[string]any)
				if item[op] == nil {
					t.Errorf("route %s %s is not in the OpenAPI document as %s %s", rt.Method, rt.Path, op, p)
				}
			}
			for _, want := range []string{
				"get /api/v1/catalog/products", "post /api/v1/catalog/products", "get /api/v1/catalog/products/{id}",
				"patch /api/v1/catalog/products/{id}", "delete /api/v1/catalog/products/{id}",
				"get /api/v1/catalog/categories", "post /api/v1/catalog/categories", "get /api/v1/catalog/categories/{id}",
				"patch /api/v1/catalog/categories/{id}", "get /api/v1/catalog/modifiers/groups", "post /api/v1/catalog/modifiers/groups",
				"get /api/v1/catalog/modifiers/groups/{id}", "patch /api/v1/catalog/modifiers/groups/{id}",
				"get /api/v1/catalog/price-lists", "post /api/v1/catalog/price-lists", "get /api/v1/catalog/price-lists/{id}",
				"patch /api/v1/catalog/price-lists/{id}", "get /api/v1/locations", "get /api/v1/locations/{id}", "get /api/v1/openapi.json",
			} {
				if !seen[want] {
					t.Errorf("the app has no route %s", want)
				}
			}
			// The document has no operation the app does not serve.
			ops := 0
			for p, item := range paths {
				for method, op := range item.(map[string]any) {
					ops++
					if !seen[method+" "+p] {
						t.Errorf("the document lists %s %s, which the app does not serve", method, p)
					}
					o, _ := op.(map[string]any)
					if method != "post" {
						continue
					}
					// POSTs that need a token document Idempotency-Key; public ones say security [].
					sec, hasSec := o["security"].([]any)
					public := hasSec && len(sec) == 0
					hasKey := false
					params, _ := o["parameters"].([]any)
					for _, prm := range params {
						pm, _ := prm.(map[string]any)
						if pm["name"] == "Idempotency-Key" && pm["in"] == "header" {
							hasKey = true
						}
					}
					if !public && !hasKey {
						t.Errorf("POST %s needs a token but does not document Idempotency-Key", p)
					}
				}
			}
			if ops != routes {
				t.Errorf("the document has %d operations, the app %d routes", ops, routes)
			}
			// Catalog writes name their scope; list operations document paging.
			for _, p := range []string{"/api/v1/catalog/products", "/api/v1/catalog/categories", "/api/v1/catalog/modifiers/groups", "/api/v1/catalog/price-lists", "/api/v1/locations"} {
				get := paths[p].(map[string]any)["get"].(map[string]any)
				names := []string{}
				params, _ := get["parameters"].([]any)
				for _, prm := range params {
					names = append(names, prm.(map[string]any)["name"].(string))
				}
				if !slices.Contains(names, "limit") || !slices.Contains(names, "cursor") {
					t.Errorf("GET %s documents %v, not limit and cursor", p, names)
				}
			}
			post := paths["/api/v1/catalog/products"].(map[string]any)["post"].(map[string]any)
			if post["x-required-scope"] == nil || post["requestBody"] == nil {
				t.Errorf("POST /catalog/products: %v", post)
			}
			if op := paths["/api/v1/openapi.json"].(map[string]any)["get"].(map[string]any); !reflect.DeepEqual(op["security"], []any{}) {
				t.Errorf("openapi.json is public but documents security %v", op["security"])
			}
		})
	}
}

// q is documented as a case-insensitive substring of name or sku; that must
// hold for names beyond ASCII too, and a query spelled exactly as the name
// must always find it.
func TestCatalogProductSearchBeyondASCII(t *testing.T) {
	f := newCatFixture(t)
	o := f.tn.MustOrg("Unicode Cafe")
	f.create(o.Owner, "/api/v1/catalog/products", "brulee", map[string]any{"name": "CRÈME BRÛLÉE", "sku": "CB-1", "base_price": 900})
	f.create(o.Owner, "/api/v1/catalog/products", "fraiche", map[string]any{"name": "Crème fraîche", "sku": "CF-1", "base_price": 300})
	var scenarios []catScenario
	for _, c := range []struct {
		q    string
		want []string
	}{
		{"CRÈME BRÛLÉE", []string{"brulee"}}, // the exact name
		{"BRÛLÉE", []string{"brulee"}},
		{"brûlée", []string{"brulee"}},
		{"Crème", []string{"brulee", "fraiche"}},
		{"crème", []string{"brulee", "fraiche"}},
		{"CRÈME", []string{"brulee", "fraiche"}},
		{"FRAÎCHE", []string{"fraiche"}},
		{"fraîche", []string{"fraiche"}},
	} {
		want := c.want
		scenarios = append(scenarios, catScenario{name: "q=" + c.q, method: "GET", path: "/api/v1/catalog/products?q=" + url.QueryEscape(c.q),
			token: o.Owner, wantStatus: 200, check: func(t *testing.T, r *resp) { f.wantList(t, r, false, want...) }})
	}
	f.run(scenarios)
}

// The OpenAPI document must describe the bodies the API accepts: PATCH
// fields whose null clears them (product description and category_id,
// category description and parent_id, price list starts_at and ends_at)
// must allow null, and the required fields of a product (spec 2.3: name,
// sku, base_price) must be marked required.
func TestCatalogOpenAPISchemasMatchTheBodies(t *testing.T) {
	tn := MustStartNode(t, kassa.NodeEdge, nil)
	r := tn.Do("GET", "/api/v1/openapi.json", "", nil)
	if r.Status != 200 {
		t.Fatalf("openapi.json: %d", r.Status)
	}
	var doc struct {
		Components struct {
			Schemas map[string]struct {
				Required   []string                   `json:"required"`
				Properties map[string]json.RawMessage `json:"properties"`
			} `json:"schemas"`
		} `json:"components"`
	}
	if err := json.Unmarshal(r.Body, &doc); err != nil {
		t.Fatal(err)
	}
	allowsNull := func(raw json.RawMessage) bool {
		var s struct {
			Type  any   `json:"type"`
			OneOf []any `json:"oneOf"`
			AnyOf []any `json:"anyOf"`
		}
		json.Unmarshal(raw, &s)
		if ts, ok := s.Type.([]any); ok && slices.Contains(ts, any("null")) {
			return true
		}
		for _, alt := range append(s.OneOf, s.AnyOf...) {
			if m, _ := alt.(map[string]any); m["type"] == "null" {
				return true
			}
		}
		return false
	}
	for schema, fields := range map[string][]string{
		"ProductUpdate":   {"description", "category_id"},
		"CategoryUpdate":  {"description", "parent_id"},
		"PriceListUpdate": {"starts_at", "ends_at"},
	} {
		for _, field := range fields {
			t.Run(schema+"."+field+" is nullable", func(t *testing.T) {
				raw, ok := doc.Components.Schemas[schema].Properties[field]
				if !ok {
					t.Fatalf("%s has no property %s", schema, field)
				}
				if !allowsNull(raw) {
					t.Errorf("%s.%s is documented as %s, but PATCH accepts null to clear it", schema, field, raw)
				}
			})
		}
	}
	t.Run("ProductCreate required fields", func(t *testing.T) {
		req := doc.Components.Schemas["ProductCreate"].Required
		for _, f := range []string{"name", "sku", "base_price"} {
			if !slices.Contains(req, f) {
				t.Errorf("ProductCreate required %v lacks %s", req, f)
			}
		}
	})
}
