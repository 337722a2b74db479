package httpapi_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"reflect"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"kassa.dev/shared/eventbus"
	"kassa.dev/shared/kassa"
	"kassa.dev/shared/node"
)

// The order API through HTTP over a real store: pricing from the catalog
// (price lists, modifiers, discounts, tax) to the minor unit, numbers,
// list filters, the life of an order (cancel, complete, refund) with its
// stock movements, loyalty points and events, forbidden transitions, org
// isolation, bad input on every body, and concurrent completes and refunds.
// payment_test.go and settings_test.go share the fixture of this file.

// ordNoSuchID is a well-formed id that names no row.
const ordNoSuchID = "0190a6c4-0000-7000-8000-0000000fedcb"

// ordFixture is a node with one org, two UTC locations (A and B) and the
// tokens of its staff.
type ordFixture struct {
	t                *testing.T
	tn               *testNode
	org              *testOrg
	manager, cashier string
	locA, locB       string
}

func newOrdFixture(t *testing.T, tweak func(*node.Config)) *ordFixture {
	t.Helper()
	tn := MustStartNode(t, kassa.NodeEdge, tweak)
	return ordFixtureOn(t, tn)
}

// ordFixtureOn provisions the org of the fixture on a started node.
func ordFixtureOn(t *testing.T, tn *testNode) *ordFixture {
	t.Helper()
	f := &ordFixture{t: t, tn: tn, org: tn.MustOrg("Order Cafe")}
	f.manager = tn.MustUser(f.org, "m@order.test", kassa.RoleManager)
	f.cashier = tn.MustUser(f.org, "c@order.test", kassa.RoleCashier)
	f.locA = f.create("/locations", map[string]any{"name": "Shop A", "timezone": "UTC"})
	f.locB = f.create("/locations", map[string]any{"name": "Shop B", "timezone": "UTC"})
	return f
}

// do sends a request below /api/v1; token "" is the owner's.
func (f *ordFixture) do(method, path, token string, body any) *resp {
	f.t.Helper()
	if token == "" {
		token = f.org.Owner
	}
	return f.tn.Do(method, "/api/v1"+path, token, body)
}

// must requires status with a JSON body and returns the response.
func (f *ordFixture) must(r *resp, status int) *resp {
	f.t.Helper()
	if r.Status != status {
		f.t.Fatalf("status %d, want %d: %s", r.Status, status, r.Body)
	}
	if !strings.HasPrefix(r.Header.Get("Content-Type"), "application/json") {
		f.t.Fatalf("content type %q: %s", r.Header.Get("Content-Type"), r.Body)
	}
	return r
}

// create posts body as the owner, requires 201 and returns the new id.
func (f *ordFixture) create(path string, body any) string {
	f.t.Helper()
	d := f.must(f.do("POST", path, "", body), 201).Data()
	id, _ := d["id"].(string)
	if !kassa.ValidID(id) {
		f.t.Fatalf("POST %s: no id in %v", path, d)
	}
	return id
}

// product creates an active product.
func (f *ordFixture) product(name, sku string, price int64) string {
	f.t.Helper()
	return f.create("/catalog/products", map[string]any{"name": name, "sku": sku, "base_price": price})
}

// ordOpt is an option of a modifier group to create.
type ordOpt struct {
	name string
	adj  int64
	def  bool
}

// group creates a modifier group offered on products and returns its id and
// its option ids by name.
func (f *ordFixture) group(name string, required bool, minSel, maxSel int, opts []ordOpt, products ...string) (string, map[string]string) {
	f.t.Helper()
	var in []any
	for _, o := range opts {
		in = append(in, map[string]any{"name": o.name, "price_adjustment": o.adj, "is_default": o.def})
	}
	d := f.must(f.do("POST", "/catalog/modifiers/groups", "", map[string]any{"name": name, "required": required,
		"min_selections": minSel, "max_selections": maxSel, "options": in, "product_ids": products}), 201).Data()
	ids := map[string]string{}
	for _, o := range d["options"].([]any) {
		m := o.(map[string]any)
		ids[m["name"].(string)] = m["id"].(string)
	}
	return d["id"].(string), ids
}

// order creates an order as the owner and returns it.
func (f *ordFixture) order(body map[string]any) map[string]any {
	f.t.Helper()
	return f.must(f.do("POST", "/orders", "", body), 201).Data()
}

// simpleOrder creates an order of qty units of one product at loc.
func (f *ordFixture) simpleOrder(loc, product string, qty int64) map[string]any {
	f.t.Helper()
	return f.order(map[string]any{"location_id": loc, "line_items": []any{map[string]any{"product_id": product, "quantity": qty}}})
}

// get reads an order.
func (f *ordFixture) get(id string) map[string]any {
	f.t.Helper()
	return f.must(f.do("GET", "/orders/"+id, "", nil), 200).Data()
}

// payCash takes a captured cash payment and returns it.
func (f *ordFixture) payCash(orderID string, amount int64) map[string]any {
	f.t.Helper()
	p := f.must(f.do("POST", "/payments/initiate", "", map[string]any{"order_id": orderID, "amount": amount, "method": "cash"}), 201).Data()
	if p["status"] != "captured" {
		f.t.Fatalf("cash payment: %v", p)
	}
	return p
}

// payCard sends a card payment and returns the answer.
func (f *ordFixture) payCard(orderID string, amount int64, card string, capture bool) *resp {
	f.t.Helper()
	return f.do("POST", "/payments/initiate", "", map[string]any{"order_id": orderID, "amount": amount, "method": "card",
		"card_number": card, "capture": capture})
}

// complete completes an order as the owner, requiring 200.
func (f *ordFixture) complete(id string) map[string]any {
	f.t.Helper()
	return f.must(f.do("POST", "/orders/"+id+"/complete", "", nil), 200).Data()
}

// paidOrder creates an order of qty units of product at loc and pays it in cash.
func (f *ordFixture) paidOrder(loc, product string, qty int64) map[string]any {
	f.t.Helper()
	o := f.simpleOrder(loc, product, qty)
	f.payCash(o["id"].(string), ordNum(o["total"]))
	return f.get(o["id"].(string))
}

// soldOrder is a paidOrder, completed.
func (f *ordFixture) soldOrder(loc, product string, qty int64) map[string]any {
	f.t.Helper()
	o := f.paidOrder(loc, product, qty)
	return f.complete(o["id"].(string))
}

// receive puts qty units of product into stock at loc.
func (f *ordFixture) receive(loc, product string, qty int64) {
	f.t.Helper()
	f.must(f.do("POST", "/inventory/stock/adjust", "", map[string]any{"location_id": loc, "product_id": product,
		"reason": "received", "quantity": qty}), 200)
}

// onHand reads one stock level; 0 when the product never had stock there.
func (f *ordFixture) onHand(loc, product string) int64 {
	f.t.Helper()
	r := f.must(f.do("GET", "/inventory/stock?location_id="+loc+"&product_id="+product, "", nil), 200)
	switch l := r.List(); len(l) {
	case 0:
		return 0
	case 1:
		return ordNum(l[0].(map[string]any)["on_hand"])
	default:
		f.t.Fatalf("two levels of one product at one location: %s", r.Body)
		return 0
	}
}

// movements lists the org's movements of a ref type.
func (f *ordFixture) movements(refType string) []map[string]any {
	f.t.Helper()
	r := f.must(f.do("GET", "/inventory/movements?limit=200&ref_type="+refType, "", nil), 200)
	var out []map[string]any
	for _, it := range r.List() {
		out = append(out, it.(map[string]any))
	}
	return out
}

// settings patches the org's settings as the owner.
func (f *ordFixture) settings(patch map[string]any) map[string]any {
	f.t.Helper()
	return f.must(f.do("PATCH", "/settings", "", patch), 200).Data()
}

// customer creates a customer.
func (f *ordFixture) customer(first string) string {
	f.t.Helper()
	return f.create("/customers", map[string]any{"first_name": first})
}

// refused requires a problem of status and kind, naming field when given,
// and no change record written since before.
func (f *ordFixture) refused(t *testing.T, r *resp, status int, kind, field string, before int) map[string]any {
	t.Helper()
	p := mustProblem(t, r, status, kind)
	if field != "" && !slices.Contains(ordFields(p), field) {
		t.Fatalf("problem does not name field %s: %s", field, r.Body)
	}
	if after := f.tn.outboxLen(); after != before {
		t.Fatalf("a refused request wrote %d change records: %s", after-before, r.Body)
	}
	return p
}

// ordFields lists the fields named in a problem's errors.
func ordFields(p map[string]any) []string {
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

// ordNum reads a JSON number as int64; it fails loudly on anything else.
func ordNum(v any) int64 {
	f, ok := v.(float64)
	if !ok {
		panic(fmt.Sprintf("not a number: %#v", v))
	}
	return int64(f)
}

// ordWant checks fields of a decoded object.
func ordWant(t *testing.T, got map[string]any, want map[string]any) {
	t.Helper()
	for k, w := range want {
		if !reflect.DeepEqual(got[k], w) {
			t.Errorf("%s = %#v, want %#v", k, got[k], w)
		}
	}
}

// ordLines returns the line items of an order.
func ordLines(o map[string]any) []map[string]any {
	var out []map[string]any
	for _, l := range o["line_items"].([]any) {
		out = append(out, l.(map[string]any))
	}
	return out
}

// ordItems returns the objects of a list field (payments, refunds, history).
func ordItems(o map[string]any, field string) []map[string]any {
	var out []map[string]any
	list, _ := o[field].([]any)
	for _, it := range list {
		out = append(out, it.(map[string]any))
	}
	return out
}

// ordHistory returns the statuses of an order's history.
func ordHistory(o map[string]any) []string {
	var out []string
	for _, h := range ordItems(o, "history") {
		out = append(out, h["status"].(string))
	}
	return out
}

// ordIDs returns the ids of a list answer.
func ordIDs(r *resp) []string {
	out := []string{}
	for _, it := range r.List() {
		out = append(out, it.(map[string]any)["id"].(string))
	}
	return out
}

// ordEvents subscribes to the node's events whose type starts with prefix.
func ordEvents(t *testing.T, tn *testNode, prefix string) *eventbus.Subscription {
	sub := tn.N.Bus.Subscribe(256, func(e kassa.Event) bool { return strings.HasPrefix(e.Type, prefix) })
	t.Cleanup(sub.Close)
	return sub
}

// ordNext returns the next event, which must be of type typ, failing after a deadline.
func ordNext(t *testing.T, sub *eventbus.Subscription, typ string) map[string]any {
	t.Helper()
	select {
	case e := <-sub.C:
		if e.Type != typ {
			t.Fatalf("event %s, want %s: %+v", e.Type, typ, e.Data)
		}
		b, err := json.Marshal(e.Data)
		if err != nil {
			t.Fatal(err)
		}
		var m map[string]any
		if err := json.Unmarshal(b, &m); err != nil {
			t.Fatal(err)
		}
		return m
	case <-time.After(5 * time.Second):
		t.Fatalf("no %s event within 5 s", typ)
		return nil
	}
}

// ordNone checks that no event is waiting. Events are published when the
// transaction commits, before the service answers, so once the answer is
// in, every event of that request is in the channel.
func ordNone(t *testing.T, sub *eventbus.Subscription, after string) {
	t.Helper()
	select {
	case e := <-sub.C:
		t.Fatalf("after %s: unexpected event %s %+v", after, e.Type, e.Data)
	default:
	}
}

// ordRawDo is a request that is safe to send from any goroutine: it
// reports errors instead of failing the test.
func ordRawDo(tn *testNode, method, path, token string, body any) (int, []byte, error) {
	var rd io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			return 0, nil, err
		}
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequest(method, tn.URL+"/api/v1"+path, rd)
	if err != nil {
		return 0, nil, err
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	req.Header.Set("Authorization", "Bearer "+token)
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0, nil, err
	}
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	return res.StatusCode, b, err
}

// ordRace sends the requests at the same moment, one goroutine each, and
// returns their statuses and bodies in request order.
func ordRace(t *testing.T, tn *testNode, token string, reqs [][2]string, body any) ([]int, [][]byte) {
	t.Helper()
	statuses, bodies, errs := make([]int, len(reqs)), make([][]byte, len(reqs)), make([]error, len(reqs))
	start := make(chan struct{})
	var wg sync.WaitGroup
	for i, rq := range reqs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			statuses[i], bodies[i], errs[i] = ordRawDo(tn, rq[0], rq[1], token, body)
		}()
	}
	close(start)
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Fatalf("%s %s: %v", reqs[i][0], reqs[i][1], err)
		}
	}
	return statuses, bodies
}

// ordCount counts statuses equal to s.
func ordCount(statuses []int, s int) int {
	n := 0
	for _, x := range statuses {
		if x == s {
			n++
		}
	}
	return n
}

func TestOrderCreatePricesFromTheCatalog(t *testing.T) {
	f := newOrdFixture(t, nil)
	latte := f.product("Latte", "LAT-1", 450)
	muffin := f.product("Muffin", "MUF-1", 380)
	archived := f.product("Old scone", "SCO-1", 300)
	f.must(f.do("DELETE", "/catalog/products/"+archived, "", nil), 200)
	_, size := f.group("Size", true, 1, 1, []ordOpt{{"Regular", 0, true}, {"Large", 100, false}}, latte)
	milkID, milk := f.group("Milk", false, 0, 1, []ordOpt{{"Oat", 60, false}, {"Soy", 50, false}, {"Skim", -20, false}}, latte)
	_, warm := f.group("Warm up", false, 0, 1, []ordOpt{{"Warmed", 0, false}}, muffin)
	bagel := f.product("Bagel", "BAG-1", 300)
	_, spread := f.group("Spread", true, 1, 1, []ordOpt{{"Butter", 0, false}, {"Jam", 30, false}}, bagel)
	// A price list for shop A only: the muffin costs 3.00 there.
	f.create("/catalog/price-lists", map[string]any{"name": "Shop A", "location_ids": []string{f.locA},
		"prices": []any{map[string]any{"product_id": muffin, "price": 300}}})
	// Lists for shop B that do not apply: inactive, not yet started, ended.
	now := f.tn.Clock.Now()
	f.create("/catalog/price-lists", map[string]any{"name": "Off", "location_ids": []string{f.locB}, "is_active": false,
		"prices": []any{map[string]any{"product_id": latte, "price": 100}}})
	f.create("/catalog/price-lists", map[string]any{"name": "Soon", "location_ids": []string{f.locB},
		"starts_at": now.Add(time.Hour).Format(time.RFC3339), "prices": []any{map[string]any{"product_id": muffin, "price": 1}}})
	f.create("/catalog/price-lists", map[string]any{"name": "Over", "location_ids": []string{f.locB},
		"starts_at": now.Add(-2 * time.Hour).Format(time.RFC3339), "ends_at": now.Add(-time.Hour).Format(time.RFC3339),
		"prices": []any{map[string]any{"product_id": latte, "price": 2}}})
	ann := f.customer("Ann")

	other := f.tn.MustOrg("Rival Bakery")
	rivalLoc := f.tn.Do("POST", "/api/v1/locations", other.Owner, map[string]any{"name": "Rival", "timezone": "UTC"}).Data()["id"].(string)
	rivalProduct := f.tn.Do("POST", "/api/v1/catalog/products", other.Owner, map[string]any{"name": "Rival bun", "sku": "RB-1", "base_price": 100}).Data()["id"].(string)
	rivalCustomer := f.tn.Do("POST", "/api/v1/customers", other.Owner, map[string]any{"first_name": "Rita"}).Data()["id"].(string)

	line := func(product string, qty int64, opts ...string) map[string]any {
		if opts == nil {
			opts = []string{}
		}
		return map[string]any{"product_id": product, "quantity": qty, "modifier_option_ids": opts}
	}
	body := func(loc string, lines ...map[string]any) map[string]any {
		return map[string]any{"location_id": loc, "line_items": lines}
	}
	type wantLine struct {
		productID string
		unitPrice int64
		modifiers []string // option names
		total     int64
	}
	cases := []struct {
		name   string
		body   map[string]any
		status int
		field  string
		lines  []wantLine
		total  int64
	}{
		{name: "base price with the required group's default", body: body(f.locA, line(latte, 2)), status: 201,
			lines: []wantLine{{latte, 450, []string{"Regular"}, 900}}, total: 900},
		{name: "chosen options add their price adjustments", body: body(f.locA, line(latte, 1, milk["Oat"], size["Large"])), status: 201,
			lines: []wantLine{{latte, 450, []string{"Large", "Oat"}, 610}}, total: 610},
		{name: "the price list of shop A", body: body(f.locA, line(muffin, 2, warm["Warmed"])), status: 201,
			lines: []wantLine{{muffin, 300, []string{"Warmed"}, 600}}, total: 600},
		{name: "no price list at shop B", body: body(f.locB, line(muffin, 2), line(latte, 1, size["Large"])), status: 201,
			lines: []wantLine{{muffin, 380, nil, 760}, {latte, 450, []string{"Large"}, 550}}, total: 1310},
		{name: "a negative price adjustment", body: body(f.locA, line(latte, 2, milk["Skim"])), status: 201,
			lines: []wantLine{{latte, 450, []string{"Regular", "Skim"}, 860}}, total: 860},
		{name: "a required group without a default needs a choice", body: body(f.locA, line(bagel, 1)), status: 422,
			field: "line_items[0].modifier_option_ids"},
		{name: "a required group's choice", body: body(f.locB, line(bagel, 1, spread["Jam"])), status: 201,
			lines: []wantLine{{bagel, 300, []string{"Jam"}, 330}}, total: 330},
		{name: "too many choices in a group", body: body(f.locA, line(latte, 1, size["Regular"], size["Large"])), status: 422,
			field: "line_items[0].modifier_option_ids"},
		{name: "an option of a group the product does not offer", body: body(f.locA, line(muffin, 1), line(latte, 1, warm["Warmed"])), status: 422,
			field: "line_items[1].modifier_option_ids"},
		{name: "an option that does not exist", body: body(f.locA, line(latte, 1, ordNoSuchID)), status: 422,
			field: "line_items[0].modifier_option_ids"},
		{name: "an unknown product", body: body(f.locA, line(latte, 1), line(ordNoSuchID, 1)), status: 422, field: "line_items[1].product_id"},
		{name: "an archived product", body: body(f.locA, line(archived, 1)), status: 422, field: "line_items[0].product_id"},
		{name: "another org's product", body: body(f.locA, line(muffin, 1), line(latte, 1), line(rivalProduct, 1)), status: 422,
			field: "line_items[2].product_id"},
		{name: "an unknown location", body: body(ordNoSuchID, line(latte, 1)), status: 422, field: "location_id"},
		{name: "another org's location", body: body(rivalLoc, line(latte, 1)), status: 422, field: "location_id"},
		{name: "another org's customer", body: map[string]any{"location_id": f.locA, "customer_id": rivalCustomer,
			"line_items": []any{line(latte, 1)}}, status: 422, field: "customer_id"},
		{name: "an unknown customer", body: map[string]any{"location_id": f.locA, "customer_id": ordNoSuchID,
			"line_items": []any{line(latte, 1)}}, status: 422, field: "customer_id"},
		{name: "a customer of the org", body: map[string]any{"location_id": f.locA, "customer_id": ann, "channel": "online",
			"notes": "Ring twice", "line_items": []any{line(latte, 1)}}, status: 201,
			lines: []wantLine{{latte, 450, []string{"Regular"}, 450}}, total: 450},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			before := f.tn.outboxLen()
			r := f.do("POST", "/orders", "", tc.body)
			if tc.status != 201 {
				f.refused(t, r, tc.status, "validation", tc.field, before)
				return
			}
			if r.Status != 201 {
				t.Fatalf("status %d: %s", r.Status, r.Body)
			}
			o := r.Data()
			if loc := r.Header.Get("Location"); loc != "/api/v1/orders/"+o["id"].(string) {
				t.Errorf("Location %q", loc)
			}
			ordWant(t, o, map[string]any{"status": "open", "location_id": tc.body["location_id"], "currency": "AUD",
				"paid_total": 0.0, "refunded_total": 0.0, "kitchen_status": "new", "completed_at": nil, "total": float64(tc.total),
				"subtotal": float64(tc.total), "discount_total": 0.0, "tax_inclusive": true, "tax_rate_bps": 1000.0})
			if c, ok := tc.body["customer_id"]; ok {
				ordWant(t, o, map[string]any{"customer_id": c, "channel": "online", "notes": "Ring twice"})
			} else {
				ordWant(t, o, map[string]any{"customer_id": nil, "channel": "pos", "notes": ""})
			}
			lines := ordLines(o)
			if len(lines) != len(tc.lines) {
				t.Fatalf("%d lines, want %d: %s", len(lines), len(tc.lines), r.Body)
			}
			for i, w := range tc.lines {
				l := lines[i]
				ordWant(t, l, map[string]any{"product_id": w.productID, "unit_price": float64(w.unitPrice), "total": float64(w.total),
					"discount": 0.0, "refunded_quantity": 0.0})
				if !kassa.ValidID(l["id"].(string)) || l["name"] == "" || l["sku"] == "" {
					t.Errorf("line %d: id, name or sku missing: %v", i, l)
				}
				var names []string
				for _, m := range l["modifiers"].([]any) {
					mm := m.(map[string]any)
					names = append(names, mm["name"].(string))
					if !kassa.ValidID(mm["option_id"].(string)) {
						t.Errorf("modifier without option_id: %v", mm)
					}
				}
				slices.Sort(names)
				if !slices.Equal(names, w.modifiers) {
					t.Errorf("line %d modifiers %v, want %v", i, names, w.modifiers)
				}
			}
			if h := ordHistory(o); !slices.Equal(h, []string{"open"}) {
				t.Errorf("history %v", h)
			}
			if got := f.get(o["id"].(string)); got["total"] != o["total"] || got["number"] != o["number"] {
				t.Errorf("GET differs from the create answer: %v", got)
			}
		})
	}
	t.Run("a newer list for every location wins", func(t *testing.T) {
		f.create("/catalog/price-lists", map[string]any{"name": "Everywhere",
			"prices": []any{map[string]any{"product_id": muffin, "price": 350}, map[string]any{"product_id": latte, "price": 400}}})
		a := f.order(body(f.locA, line(muffin, 1)))
		b := f.order(body(f.locB, line(latte, 1)))
		if ordLines(a)[0]["unit_price"] != 350.0 || ordLines(b)[0]["unit_price"] != 400.0 {
			t.Fatalf("unit prices %v at A, %v at B", ordLines(a)[0]["unit_price"], ordLines(b)[0]["unit_price"])
		}
	})
	t.Run("modifier price adjustments are priced at order time", func(t *testing.T) {
		soy := func(o map[string]any) float64 {
			for _, m := range ordLines(o)[0]["modifiers"].([]any) {
				if mm := m.(map[string]any); mm["name"] == "Soy" {
					return mm["price_adjustment"].(float64)
				}
			}
			t.Fatalf("no soy on %v", o)
			return 0
		}
		before := f.order(body(f.locA, line(latte, 1, milk["Soy"])))
		if soy(before) != 50 || before["total"] != 450.0 { // 4.00 on the list for every location
			t.Fatalf("order %v", before)
		}
		f.must(f.do("PATCH", "/catalog/modifiers/groups/"+milkID, "", map[string]any{"options": []any{
			map[string]any{"id": milk["Oat"], "name": "Oat", "price_adjustment": 60},
			map[string]any{"id": milk["Soy"], "name": "Soy", "price_adjustment": 80},
			map[string]any{"id": milk["Skim"], "name": "Skim", "price_adjustment": -20},
		}}), 200)
		after := f.order(body(f.locA, line(latte, 1, milk["Soy"])))
		if soy(after) != 80 || after["total"] != 480.0 {
			t.Fatalf("order after the change %v", after)
		}
		if again := f.get(before["id"].(string)); soy(again) != 50 || again["total"] != 450.0 {
			t.Fatalf("the change repriced an existing order: %v", again)
		}
	})
}

func TestOrderNumbersArePerLocationAndIncreasing(t *testing.T) {
	f := newOrdFixture(t, nil)
	p := f.product("Tea", "TEA-1", 300)
	format := regexp.MustCompile(`^[0-9A-F]{6}-(\d{5})$`)
	seq := func(o map[string]any) int {
		m := format.FindStringSubmatch(o["number"].(string))
		if m == nil {
			t.Fatalf("number %q does not match %s", o["number"], format)
		}
		n, err := strconv.Atoi(m[1])
		if err != nil {
			t.Fatal(err)
		}
		return n
	}
	var a, b []int
	for range 3 {
		a = append(a, seq(f.simpleOrder(f.locA, p, 1)))
	}
	for range 2 {
		b = append(b, seq(f.simpleOrder(f.locB, p, 1)))
	}
	a = append(a, seq(f.simpleOrder(f.locA, p, 1)))
	if !slices.Equal(a, []int{1, 2, 3, 4}) || !slices.Equal(b, []int{1, 2}) {
		t.Fatalf("numbers at A %v, at B %v", a, b)
	}

	// Concurrent terminals at one location never share a number.
	reqs := make([][2]string, 12)
	for i := range reqs {
		reqs[i] = [2]string{"POST", "/orders"}
	}
	statuses, bodies := ordRace(t, f.tn, f.org.Owner, reqs, map[string]any{"location_id": f.locA,
		"line_items": []any{map[string]any{"product_id": p, "quantity": 1}}})
	seen := map[string]bool{}
	for i, s := range statuses {
		if s != 201 {
			t.Fatalf("concurrent create %d: %d %s", i, s, bodies[i])
		}
		var env struct {
			Data struct{ Number string } `json:"data"`
		}
		json.Unmarshal(bodies[i], &env)
		if seen[env.Data.Number] {
			t.Fatalf("number %s given twice", env.Data.Number)
		}
		seen[env.Data.Number] = true
	}
	f.simpleOrder(f.locA, p, 1)
	var all []int
	for _, it := range f.must(f.do("GET", "/orders?limit=200&location_id="+f.locA, "", nil), 200).List() {
		all = append(all, seq(it.(map[string]any)))
	}
	slices.Sort(all)
	if want := []int{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17}; !slices.Equal(all, want) {
		t.Fatalf("the 17 orders at A have the numbers %v, want 1-17 each once", all)
	}
}

func TestOrderMoneyToTheMinorUnit(t *testing.T) {
	f := newOrdFixture(t, nil)
	a := f.product("Sandwich", "SAN-1", 1100)
	b := f.product("Espresso", "ESP-1", 250)
	c := f.product("Cookie", "COO-1", 334)
	_, shot := f.group("Extra", false, 0, 1, []ordOpt{{"Extra shot", 55, false}}, b)

	// The worked example, by hand:
	//   A: 3 × 11.00 = 3300; 12.5 % = 412.5 → 413 (half up); left 2887
	//   B: (2.50 + 0.55) × 2 = 610; 1.00 off; left 510
	//   C: 334; left 334
	// The order's 10.00 off is split over 3731 by largest remainder:
	//   A 1000×2887/3731 = 773.79, B 136.69, C 89.52 → floors 773+136+89 = 998;
	//   the 2 left go to the largest remainders, A (.79) and B (.69):
	//   774, 137, 89 (rounding each share would give 774+137+90 = 1001).
	// Line discounts 1187, 237, 89 = 1513; nets 2113, 373, 245 = 2731 of a 4244 subtotal.
	//   Inclusive 10 %: tax = net/11 half up: 192.09 → 192, 33.91 → 34, 22.27 → 22 = 248; total 2731.
	//   Exclusive 10 %: tax = net/10 half up: 211.3 → 211, 37.3 → 37, 24.5 → 25 = 273; totals 2324, 410, 270 = 3004.
	worked := map[string]any{"location_id": f.locA, "discount": map[string]any{"type": "amount", "value": 1000},
		"line_items": []any{
			map[string]any{"product_id": a, "quantity": 3, "discount": map[string]any{"type": "percent", "value": 1250}},
			map[string]any{"product_id": b, "quantity": 2, "modifier_option_ids": []string{shot["Extra shot"]},
				"discount": map[string]any{"type": "amount", "value": 100}},
			map[string]any{"product_id": c, "quantity": 1},
		}}
	type money struct{ discount, tax, total int64 }
	cases := []struct {
		name                           string
		settings                       map[string]any
		body                           map[string]any
		lines                          []money
		subtotal, discount, tax, total int64
		inclusive                      bool
	}{
		{name: "inclusive 10 %", settings: map[string]any{"tax_inclusive": true, "tax_rate_bps": 1000}, body: worked, inclusive: true,
			lines:    []money{{1187, 192, 2113}, {237, 34, 373}, {89, 22, 245}},
			subtotal: 4244, discount: 1513, tax: 248, total: 2731},
		{name: "exclusive 10 %", settings: map[string]any{"tax_inclusive": false}, body: worked,
			lines:    []money{{1187, 211, 2324}, {237, 37, 410}, {89, 25, 270}},
			subtotal: 4244, discount: 1513, tax: 273, total: 3004},
		// 5 × 3.34 = 1670; 12.5 % = 208.75 → 209; net 1461; tax 1461/11 = 132.82 → 133.
		{name: "an order percent discount, inclusive", settings: map[string]any{"tax_inclusive": true}, inclusive: true,
			body: map[string]any{"location_id": f.locA, "discount": map[string]any{"type": "percent", "value": 1250},
				"line_items": []any{map[string]any{"product_id": c, "quantity": 5}}},
			lines: []money{{209, 133, 1461}}, subtotal: 1670, discount: 209, tax: 133, total: 1461},
		// An amount discount is capped at its line; the other line is taxed alone: 610/10 = 61.
		{name: "a line discount above the line, exclusive", settings: map[string]any{"tax_inclusive": false},
			body: map[string]any{"location_id": f.locA, "line_items": []any{
				map[string]any{"product_id": c, "quantity": 1, "discount": map[string]any{"type": "amount", "value": 99999}},
				map[string]any{"product_id": b, "quantity": 2, "modifier_option_ids": []string{shot["Extra shot"]}},
			}},
			lines: []money{{334, 0, 0}, {0, 61, 671}}, subtotal: 944, discount: 334, tax: 61, total: 671},
		// 8.25 % exclusive on 3.34: 27.555 → 28.
		{name: "another rate", settings: map[string]any{"tax_inclusive": false, "tax_rate_bps": 825},
			body:  map[string]any{"location_id": f.locA, "line_items": []any{map[string]any{"product_id": c, "quantity": 1}}},
			lines: []money{{0, 28, 362}}, subtotal: 334, discount: 0, tax: 28, total: 362},
	}
	var first map[string]any
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			f.settings(tc.settings)
			o := f.order(tc.body)
			if first == nil {
				first = o
			}
			ordWant(t, o, map[string]any{"subtotal": float64(tc.subtotal), "discount_total": float64(tc.discount),
				"tax_total": float64(tc.tax), "total": float64(tc.total), "tax_inclusive": tc.inclusive})
			lines := ordLines(o)
			if len(lines) != len(tc.lines) {
				t.Fatalf("%d lines", len(lines))
			}
			var sumTotal, sumTax, sumDiscount int64
			for i, w := range tc.lines {
				got := money{ordNum(lines[i]["discount"]), ordNum(lines[i]["tax"]), ordNum(lines[i]["total"])}
				if got != w {
					t.Errorf("line %d: discount, tax, total %v, want %v", i, got, w)
				}
				sumTotal += got.total
				sumTax += got.tax
				sumDiscount += got.discount
			}
			if sumTotal != ordNum(o["total"]) || sumTax != ordNum(o["tax_total"]) || sumDiscount != ordNum(o["discount_total"]) {
				t.Errorf("the order does not equal the sum of its lines: %v", o)
			}
		})
	}
	t.Run("a settings change does not reprice an existing order", func(t *testing.T) {
		got := f.get(first["id"].(string))
		ordWant(t, got, map[string]any{"total": 2731.0, "tax_total": 248.0, "tax_inclusive": true, "tax_rate_bps": 1000.0})
	})
}

func TestOrderListFilters(t *testing.T) {
	f := newOrdFixture(t, nil)
	p := f.product("Tea", "TEA-1", 300)
	ann, bob := f.customer("Ann"), f.customer("Bob")
	t0 := f.tn.Clock.Now().Truncate(time.Millisecond) // stored times keep milliseconds
	o1 := f.order(map[string]any{"location_id": f.locA, "customer_id": ann, "line_items": []any{map[string]any{"product_id": p, "quantity": 1}}})
	f.tn.Clock.Advance(2 * time.Minute)
	o2 := f.soldOrder(f.locA, p, 2)
	f.tn.Clock.Advance(2 * time.Minute)
	o3 := f.order(map[string]any{"location_id": f.locB, "customer_id": ann, "line_items": []any{map[string]any{"product_id": p, "quantity": 1}}})
	f.must(f.do("PATCH", "/orders/"+o3["id"].(string), "", map[string]any{"status": "cancelled"}), 200)
	id1, id2, id3 := o1["id"].(string), o2["id"].(string), o3["id"].(string)
	at := func(d time.Duration) string { return url.QueryEscape(t0.Add(d).Format(time.RFC3339Nano)) }

	cases := []struct {
		name  string
		query string
		want  []string
	}{
		{"all", "", []string{id1, id2, id3}},
		{"open", "?status=open", []string{id1}},
		{"completed", "?status=completed", []string{id2}},
		{"cancelled", "?status=cancelled", []string{id3}},
		{"refunded", "?status=refunded", []string{}},
		{"location A", "?location_id=" + f.locA, []string{id1, id2}},
		{"location B and cancelled", "?location_id=" + f.locB + "&status=cancelled", []string{id3}},
		{"location B and open", "?location_id=" + f.locB + "&status=open", []string{}},
		{"an unknown location", "?location_id=" + ordNoSuchID, []string{}},
		{"customer", "?customer_id=" + ann, []string{id1, id3}},
		{"a customer without orders", "?customer_id=" + bob, []string{}},
		{"created after (inclusive)", "?created_after=" + at(time.Minute), []string{id2, id3}},
		{"created after the first, to the millisecond", "?created_after=" + at(0), []string{id1, id2, id3}},
		{"created before (exclusive)", "?created_before=" + at(2*time.Minute), []string{id1}},
		{"created between", "?created_after=" + at(time.Minute) + "&created_before=" + at(3*time.Minute), []string{id2}},
		{"created after in another zone", "?created_after=" + url.QueryEscape(t0.Add(3*time.Minute).In(time.FixedZone("x", 10*3600)).Format(time.RFC3339Nano)),
			[]string{id3}},
		{"a page", "?limit=2", []string{id1, id2}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r := f.must(f.do("GET", "/orders"+tc.query, "", nil), 200)
			if got := ordIDs(r); !slices.Equal(got, tc.want) {
				t.Fatalf("ids %v, want %v", got, tc.want)
			}
			for _, it := range r.List() {
				if o := it.(map[string]any); len(ordLines(o)) == 0 || len(ordHistory(o)) == 0 {
					t.Fatalf("a listed order lacks its lines or history: %v", o)
				}
			}
		})
	}
	t.Run("the cursor continues", func(t *testing.T) {
		r := f.must(f.do("GET", "/orders?limit=2", "", nil), 200)
		cur, _ := r.JSON()["next_cursor"].(string)
		if r.JSON()["has_more"] != true || cur == "" {
			t.Fatalf("first page: %s", r.Body)
		}
		r = f.must(f.do("GET", "/orders?limit=2&cursor="+url.QueryEscape(cur), "", nil), 200)
		if got := ordIDs(r); !slices.Equal(got, []string{id3}) || r.JSON()["next_cursor"] != nil {
			t.Fatalf("second page: %s", r.Body)
		}
	})
	t.Run("the customer's orders", func(t *testing.T) {
		r := f.must(f.do("GET", "/customers/"+ann+"/orders", "", nil), 200)
		if got := ordIDs(r); !slices.Equal(got, []string{id1, id3}) {
			t.Fatalf("ids %v", got)
		}
		r = f.must(f.do("GET", "/customers/"+bob+"/orders", "", nil), 200)
		if got := ordIDs(r); len(got) != 0 {
			t.Fatalf("bob's orders %v", got)
		}
		mustProblem(t, f.do("GET", "/customers/"+ordNoSuchID+"/orders", "", nil), 404, "not-found")
	})
	for _, q := range []string{"?status=paid", "?status=OPEN", "?created_after=yesterday", "?created_before=2024-01-01",
		"?created_after=2024-01-01T00:00:00", "?location_id=abc", "?customer_id=42", "?limit=0", "?limit=201", "?cursor=bogus"} {
		t.Run("bad query "+q, func(t *testing.T) {
			mustProblem(t, f.do("GET", "/orders"+q, "", nil), 400, "bad-request")
		})
	}
}

func TestOrderPatchNotesAndCustomer(t *testing.T) {
	f := newOrdFixture(t, nil)
	p := f.product("Tea", "TEA-1", 300)
	ann := f.customer("Ann")
	rival := f.tn.MustOrg("Rival Tea")
	rivalCustomer := f.tn.Do("POST", "/api/v1/customers", rival.Owner, map[string]any{"first_name": "Rita"}).Data()["id"].(string)
	o := f.simpleOrder(f.locA, p, 1)
	id := o["id"].(string)
	path := "/orders/" + id
	cases := []struct {
		name   string
		token  string
		body   any
		status int
		field  string
		want   map[string]any
	}{
		{name: "notes", body: map[string]any{"notes": "Extra hot"}, status: 200, want: map[string]any{"notes": "Extra hot", "customer_id": nil}},
		{name: "customer by a cashier", token: f.cashier, body: map[string]any{"customer_id": ann}, status: 200,
			want: map[string]any{"notes": "Extra hot", "customer_id": ann}},
		{name: "another org's customer", body: map[string]any{"customer_id": rivalCustomer}, status: 422, field: "customer_id"},
		{name: "an unknown customer", body: map[string]any{"customer_id": ordNoSuchID}, status: 422, field: "customer_id"},
		{name: "clear the customer", body: map[string]any{"customer_id": nil}, status: 200, want: map[string]any{"customer_id": nil}},
		{name: "an empty patch", body: map[string]any{}, status: 200, want: map[string]any{"notes": "Extra hot", "status": "open"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			before := f.tn.outboxLen()
			r := f.do("PATCH", path, tc.token, tc.body)
			if tc.status != 200 {
				f.refused(t, r, tc.status, "validation", tc.field, before)
				return
			}
			got := f.must(r, 200).Data()
			ordWant(t, got, tc.want)
			ordWant(t, f.get(id), tc.want)
		})
	}
	if f.get(id)["total"] != o["total"] {
		t.Fatal("a patch changed the total")
	}
}

func TestOrderCancel(t *testing.T) {
	f := newOrdFixture(t, nil)
	p := f.product("Tea", "TEA-1", 500)
	cancel := map[string]any{"status": "cancelled"}

	t.Run("an open order", func(t *testing.T) {
		o := f.simpleOrder(f.locA, p, 1)
		got := f.must(f.do("PATCH", "/orders/"+o["id"].(string), f.cashier, cancel), 200).Data()
		if got["status"] != "cancelled" || !slices.Equal(ordHistory(got), []string{"open", "cancelled"}) {
			t.Fatalf("cancelled order %v", got)
		}
		if h := ordItems(got, "history"); h[1]["actor"] == nil {
			t.Fatalf("history without actor: %v", h)
		}
	})
	t.Run("with a captured payment, 409 until it is voided", func(t *testing.T) {
		o := f.simpleOrder(f.locA, p, 1)
		id := o["id"].(string)
		pay := f.payCash(id, 200)
		before := f.tn.outboxLen()
		f.refused(t, f.do("PATCH", "/orders/"+id, "", cancel), 409, "conflict", "", before)
		if got := f.get(id); got["status"] != "open" || got["paid_total"] != 200.0 {
			t.Fatalf("after a refused cancel: %v", got)
		}
		v := f.must(f.do("POST", "/payments/"+pay["id"].(string)+"/void", "", nil), 200).Data()
		if v["status"] != "voided" || f.get(id)["paid_total"] != 0.0 {
			t.Fatalf("void: %v", v)
		}
		if got := f.must(f.do("PATCH", "/orders/"+id, "", cancel), 200).Data(); got["status"] != "cancelled" {
			t.Fatalf("cancel after the void: %v", got)
		}
	})
	t.Run("voids open authorizations", func(t *testing.T) {
		o := f.simpleOrder(f.locA, p, 1)
		id := o["id"].(string)
		auth := f.must(f.payCard(id, 500, "4242424242424242", false), 201).Data()
		if auth["status"] != "authorized" {
			t.Fatalf("authorization: %v", auth)
		}
		got := f.must(f.do("PATCH", "/orders/"+id, "", cancel), 200).Data()
		if got["status"] != "cancelled" || ordItems(got, "payments")[0]["status"] != "voided" {
			t.Fatalf("cancel with an authorization: %v", got)
		}
	})
	t.Run("not after complete", func(t *testing.T) {
		o := f.soldOrder(f.locA, p, 1)
		before := f.tn.outboxLen()
		f.refused(t, f.do("PATCH", "/orders/"+o["id"].(string), "", cancel), 409, "conflict", "", before)
		if f.get(o["id"].(string))["status"] != "completed" {
			t.Fatal("a refused cancel changed the status")
		}
	})
}

// A cancel refused because of a captured payment must not have voided the
// order's other (authorized) payments on its way to the refusal.
func TestOrderRefusedCancelLeavesAuthorizationsAlone(t *testing.T) {
	f := newOrdFixture(t, nil)
	p := f.product("Tea", "TEA-1", 500)
	o := f.simpleOrder(f.locA, p, 1)
	id := o["id"].(string)
	f.payCash(id, 100)
	auth := f.must(f.payCard(id, 400, "4242424242424242", false), 201).Data()
	before := f.tn.outboxLen()
	mustProblem(t, f.do("PATCH", "/orders/"+id, "", map[string]any{"status": "cancelled"}), 409, "conflict")
	status := ""
	for _, pm := range ordItems(f.get(id), "payments") {
		if pm["id"] == auth["id"] {
			status = pm["status"].(string)
		}
	}
	if status != "authorized" {
		t.Errorf("the refused cancel left the authorization %s, want authorized", status)
	}
	if after := f.tn.outboxLen(); after != before {
		t.Errorf("the refused cancel wrote %d change records", after-before)
	}
	if status == "authorized" {
		// The authorization is still good: capture it and complete.
		f.must(f.do("POST", "/payments/"+auth["id"].(string)+"/capture", "", nil), 200)
		f.complete(id)
	}
}

func TestOrderCompleteMovesStockAndEarnsPoints(t *testing.T) {
	f := newOrdFixture(t, nil)
	latte, muffin := f.product("Latte", "LAT-1", 450), f.product("Muffin", "MUF-1", 380)
	f.receive(f.locA, latte, 10)
	f.receive(f.locA, muffin, 10)
	f.create("/loyalty/programs", map[string]any{"name": "Club", "points_per_unit": 10, "redemption_value": 5, "tiers": []any{}})
	ann := f.customer("Ann")
	f.create("/loyalty/accounts", map[string]any{"customer_id": ann})

	o := f.order(map[string]any{"location_id": f.locA, "customer_id": ann, "line_items": []any{
		map[string]any{"product_id": latte, "quantity": 3}, map[string]any{"product_id": muffin, "quantity": 2}}})
	id := o["id"].(string)
	if o["total"] != 2110.0 {
		t.Fatalf("total %v", o["total"])
	}
	t.Run("needs full payment", func(t *testing.T) {
		f.payCash(id, 2000)
		before := f.tn.outboxLen()
		f.refused(t, f.do("POST", "/orders/"+id+"/complete", "", nil), 409, "conflict", "", before)
		if f.onHand(f.locA, latte) != 10 || f.get(id)["status"] != "open" {
			t.Fatal("a refused complete moved stock or status")
		}
		// An authorization does not count as paid.
		f.must(f.payCard(id, 110, "4242424242424242", false), 201)
		before = f.tn.outboxLen()
		f.refused(t, f.do("POST", "/orders/"+id+"/complete", "", nil), 409, "conflict", "", before)
	})
	var done map[string]any
	t.Run("completes", func(t *testing.T) {
		for _, pm := range ordItems(f.get(id), "payments") {
			if pm["status"] == "authorized" {
				f.must(f.do("POST", "/payments/"+pm["id"].(string)+"/capture", "", nil), 200)
			}
		}
		done = f.must(f.do("POST", "/orders/"+id+"/complete", f.cashier, nil), 200).Data()
		ordWant(t, done, map[string]any{"status": "completed", "paid_total": 2110.0, "loyalty_points_earned": 211.0})
		if done["completed_at"] == nil || !slices.Equal(ordHistory(done), []string{"open", "completed"}) {
			t.Fatalf("completed order %v", done)
		}
	})
	t.Run("stock went down by the quantities", func(t *testing.T) {
		if a, b := f.onHand(f.locA, latte), f.onHand(f.locA, muffin); a != 7 || b != 8 {
			t.Fatalf("on hand %d, %d; want 7, 8", a, b)
		}
		ms := f.movements("order")
		if len(ms) != 2 {
			t.Fatalf("%d order movements", len(ms))
		}
		deltas := map[string]float64{}
		for _, m := range ms {
			if m["ref_id"] != id || m["reason"] != "sale" || m["location_id"] != f.locA || m["ref_type"] != "order" {
				t.Fatalf("movement %v", m)
			}
			deltas[m["product_id"].(string)] = m["delta"].(float64)
		}
		if deltas[latte] != -3 || deltas[muffin] != -2 {
			t.Fatalf("deltas %v", deltas)
		}
	})
	t.Run("points are on the account", func(t *testing.T) {
		acct := f.must(f.do("GET", "/loyalty/accounts/customer/"+ann, "", nil), 200).Data()
		ordWant(t, acct, map[string]any{"points_balance": 211.0, "lifetime_points": 211.0})
	})
	t.Run("no customer, no points", func(t *testing.T) {
		o := f.soldOrder(f.locA, latte, 1)
		if o["loyalty_points_earned"] != 0.0 || f.onHand(f.locA, latte) != 6 {
			t.Fatalf("order without customer: %v", o)
		}
	})
}

func TestOrderRefundByLinesAmountAndInFull(t *testing.T) {
	f := newOrdFixture(t, nil)
	mocha, muffin := f.product("Mocha", "MOC-1", 450), f.product("Muffin", "MUF-1", 380)
	_, syrup := f.group("Syrup", false, 0, 1, []ordOpt{{"Hazelnut", 70, false}}, mocha)
	f.receive(f.locA, mocha, 10)
	f.receive(f.locA, muffin, 10)
	// Mocha with hazelnut: (4.50 + 0.70) × 3 = 1560, less 2.00 = 1360; muffins 2 × 3.80 = 760.
	o := f.order(map[string]any{"location_id": f.locA, "line_items": []any{
		map[string]any{"product_id": mocha, "quantity": 3, "modifier_option_ids": []string{syrup["Hazelnut"]},
			"discount": map[string]any{"type": "amount", "value": 200}},
		map[string]any{"product_id": muffin, "quantity": 2}}})
	id := o["id"].(string)
	lines := ordLines(o)
	mochaLine, muffinLine := lines[0]["id"].(string), lines[1]["id"].(string)
	if lines[0]["total"] != 1360.0 || o["total"] != 2120.0 {
		t.Fatalf("order %v", o)
	}
	pay := f.payCash(id, 2120)
	f.complete(id)
	refund := "/orders/" + id + "/refund"
	lineRefund := func(line string, qty int64, restock bool) map[string]any {
		return map[string]any{"line_items": []any{map[string]any{"line_item_id": line, "quantity": qty}}, "reason": "spilt", "restock": restock}
	}
	steps := []struct {
		name     string
		token    string
		body     any
		status   int
		kind     string
		field    string
		refunded int64 // the order's refunded_total after the step
		last     int64 // the amount of the step's refund
		state    string
		mocha    int64 // on hand after the step
		muffin   int64
	}{
		// RefundShare of 1360 over 3 units: 453.33 → 453, then 906.67 → 907 (454), then 1360 (453).
		{name: "one unit of the modified line, restocked", body: lineRefund(mochaLine, 1, true), status: 200,
			refunded: 453, last: 453, state: "partially_refunded", mocha: 8, muffin: 8},
		{name: "another unit, not restocked", token: f.cashier, body: lineRefund(mochaLine, 1, false), status: 200,
			refunded: 907, last: 454, state: "partially_refunded", mocha: 8, muffin: 8},
		{name: "more units than are left", body: lineRefund(mochaLine, 2, true), status: 422, kind: "validation",
			field: "line_items[0].quantity", refunded: 907, state: "partially_refunded", mocha: 8, muffin: 8},
		{name: "more than was paid", body: map[string]any{"amount": 1214}, status: 422, kind: "validation", field: "amount",
			refunded: 907, state: "partially_refunded", mocha: 8, muffin: 8},
		{name: "the last unit: the line adds up to its total", body: lineRefund(mochaLine, 1, true), status: 200,
			refunded: 1360, last: 453, state: "partially_refunded", mocha: 9, muffin: 8},
		{name: "a refunded line again", body: lineRefund(mochaLine, 1, true), status: 422, kind: "validation",
			field: "line_items[0].quantity", refunded: 1360, state: "partially_refunded", mocha: 9, muffin: 8},
		{name: "by amount", body: map[string]any{"amount": 100, "reason": "goodwill"}, status: 200,
			refunded: 1460, last: 100, state: "partially_refunded", mocha: 9, muffin: 8},
		{name: "the rest, restocked", body: map[string]any{"restock": true}, status: 200,
			refunded: 2120, last: 660, state: "refunded", mocha: 9, muffin: 10},
		{name: "nothing is left", body: nil, status: 409, kind: "conflict", refunded: 2120, state: "refunded", mocha: 9, muffin: 10},
	}
	nRefunds := 0
	for _, st := range steps {
		t.Run(st.name, func(t *testing.T) {
			before := f.tn.outboxLen()
			r := f.do("POST", refund, st.token, st.body)
			if st.kind != "" {
				f.refused(t, r, st.status, st.kind, st.field, before)
			} else {
				f.must(r, st.status)
				nRefunds++
			}
			got := f.get(id)
			ordWant(t, got, map[string]any{"refunded_total": float64(st.refunded), "status": st.state, "total": 2120.0})
			refunds := ordItems(got, "refunds")
			if len(refunds) != nRefunds {
				t.Fatalf("%d refunds, want %d", len(refunds), nRefunds)
			}
			if st.kind == "" {
				if last := refunds[len(refunds)-1]; ordNum(last["amount"]) != st.last {
					t.Fatalf("refund amount %v, want %d", last["amount"], st.last)
				}
			}
			var sum int64
			for _, rf := range refunds {
				sum += ordNum(rf["amount"])
			}
			if sum != st.refunded {
				t.Fatalf("refunds sum to %d, the order says %d", sum, st.refunded)
			}
			if a, b := f.onHand(f.locA, mocha), f.onHand(f.locA, muffin); a != st.mocha || b != st.muffin {
				t.Fatalf("on hand %d, %d; want %d, %d", a, b, st.mocha, st.muffin)
			}
		})
	}
	t.Run("the order and its payment at the end", func(t *testing.T) {
		got := f.get(id)
		if h := ordHistory(got); !slices.Equal(h, []string{"open", "completed", "partially_refunded", "refunded"}) {
			t.Fatalf("history %v", h)
		}
		ls := ordLines(got)
		if ls[0]["refunded_quantity"] != 3.0 || ls[1]["refunded_quantity"] != 2.0 {
			t.Fatalf("refunded quantities %v, %v", ls[0]["refunded_quantity"], ls[1]["refunded_quantity"])
		}
		pm := ordItems(got, "payments")[0]
		ordWant(t, pm, map[string]any{"id": pay["id"], "status": "refunded", "refunded_amount": 2120.0})
		first := ordItems(got, "refunds")[0]
		rl := first["line_items"].([]any)[0].(map[string]any)
		ordWant(t, rl, map[string]any{"line_item_id": mochaLine, "quantity": 1.0, "amount": 453.0})
		ordWant(t, first, map[string]any{"reason": "spilt", "restock": true})
		last := ordItems(got, "refunds")[4]
		var restocked []string
		for _, l := range last["line_items"].([]any) {
			restocked = append(restocked, l.(map[string]any)["line_item_id"].(string))
		}
		if !slices.Equal(restocked, []string{muffinLine}) {
			t.Fatalf("the full refund's lines %v, want only the muffins", restocked)
		}
		ms := f.movements("refund")
		var deltas []float64
		for _, m := range ms {
			if m["reason"] != "refund" {
				t.Fatalf("movement %v", m)
			}
			deltas = append(deltas, m["delta"].(float64))
		}
		if !slices.Equal(deltas, []float64{1, 1, 2}) {
			t.Fatalf("refund movements %v", deltas)
		}
	})
}

func TestOrderFullRefundThroughEveryPayment(t *testing.T) {
	f := newOrdFixture(t, nil)
	p := f.product("Cake", "CAK-1", 1060)
	o := f.simpleOrder(f.locA, p, 2)
	id := o["id"].(string)
	card := f.must(f.payCard(id, 1000, "4242424242424242", true), 201).Data()
	cash := f.payCash(id, 1120)
	f.complete(id)
	got := f.must(f.do("POST", "/orders/"+id+"/refund", f.manager, nil), 200).Data()
	ordWant(t, got, map[string]any{"status": "refunded", "refunded_total": 2120.0, "total": 2120.0})
	refunds := ordItems(got, "refunds")
	if len(refunds) != 1 || refunds[0]["amount"] != 2120.0 {
		t.Fatalf("refunds %v", refunds)
	}
	byPayment := map[string]float64{}
	for _, rp := range refunds[0]["payments"].([]any) {
		m := rp.(map[string]any)
		byPayment[m["payment_id"].(string)] = m["amount"].(float64)
		if m["processor_ref"] == "" {
			t.Fatalf("refund without processor ref: %v", m)
		}
	}
	if byPayment[card["id"].(string)] != 1000 || byPayment[cash["id"].(string)] != 1120 {
		t.Fatalf("refund by payment %v", byPayment)
	}
	r := f.must(f.do("GET", "/payments?order_id="+id, "", nil), 200)
	for _, it := range r.List() {
		pm := it.(map[string]any)
		if pm["status"] != "refunded" || pm["refunded_amount"] != pm["amount"] {
			t.Fatalf("payment after the full refund: %v", pm)
		}
	}
	if len(r.List()) != 2 {
		t.Fatalf("%d payments", len(r.List()))
	}
}

func TestOrderRefundLimitsAndStates(t *testing.T) {
	f := newOrdFixture(t, nil)
	p := f.product("Hamper", "HAM-1", 6000)
	o := f.soldOrder(f.locA, p, 1)
	id := o["id"].(string)
	refund := "/orders/" + id + "/refund"
	cases := []struct {
		name     string
		token    string
		body     any
		status   int
		kind     string
		refunded float64
	}{
		{name: "a cashier above the refund limit", token: f.cashier, body: map[string]any{"amount": 5001}, status: 403, kind: "forbidden"},
		{name: "a cashier refunding in full above the limit", token: f.cashier, body: nil, status: 403, kind: "forbidden"},
		{name: "a cashier at the limit", token: f.cashier, body: map[string]any{"amount": 5000}, status: 200, refunded: 5000},
		{name: "more than is left", token: f.manager, body: map[string]any{"amount": 1001}, status: 422, kind: "validation", refunded: 5000},
		{name: "a manager", token: f.manager, body: map[string]any{"amount": 1000}, status: 200, refunded: 6000},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			before := f.tn.outboxLen()
			r := f.do("POST", refund, tc.token, tc.body)
			if tc.kind != "" {
				f.refused(t, r, tc.status, tc.kind, "", before)
			} else {
				f.must(r, tc.status)
			}
			if got := f.get(id)["refunded_total"]; got != tc.refunded {
				t.Fatalf("refunded_total %v, want %v", got, tc.refunded)
			}
		})
	}
	t.Run("a raised limit lets the cashier refund more", func(t *testing.T) {
		o := f.soldOrder(f.locA, p, 1)
		f.settings(map[string]any{"refund_limit": 6000})
		got := f.must(f.do("POST", "/orders/"+o["id"].(string)+"/refund", f.cashier, nil), 200).Data()
		if got["status"] != "refunded" {
			t.Fatalf("order %v", got)
		}
	})
	t.Run("an open order cannot be refunded", func(t *testing.T) {
		o := f.paidOrder(f.locA, p, 1)
		before := f.tn.outboxLen()
		f.refused(t, f.do("POST", "/orders/"+o["id"].(string)+"/refund", "", map[string]any{"amount": 1}), 409, "conflict", "", before)
	})
}

func TestOrderEvents(t *testing.T) {
	f := newOrdFixture(t, nil)
	p := f.product("Tea", "TEA-1", 500)
	sub := ordEvents(t, f.tn, "order.")
	o := f.simpleOrder(f.locA, p, 2)
	id := o["id"].(string)
	d := ordNext(t, sub, kassa.EventOrderCreated)
	ordWant(t, d, map[string]any{"id": id, "number": o["number"], "status": "open", "total": 1000.0})
	if len(d["line_items"].([]any)) != 1 {
		t.Fatalf("order.created without lines: %v", d)
	}
	f.payCash(id, 1000)
	ordNone(t, sub, "a payment")
	f.complete(id)
	ordWant(t, ordNext(t, sub, kassa.EventOrderCompleted), map[string]any{"id": id, "status": "completed", "paid_total": 1000.0})
	f.must(f.do("POST", "/orders/"+id+"/refund", "", map[string]any{"amount": 300}), 200)
	// order.refunded carries the order; its refund is the last of refunds.
	lastRefund := func(d map[string]any) float64 {
		rs := d["refunds"].([]any)
		return rs[len(rs)-1].(map[string]any)["amount"].(float64)
	}
	d = ordNext(t, sub, kassa.EventOrderRefunded)
	ordWant(t, d, map[string]any{"id": id, "status": "partially_refunded", "refunded_total": 300.0})
	if lastRefund(d) != 300 {
		t.Fatalf("order.refunded %v", d)
	}
	f.must(f.do("POST", "/orders/"+id+"/refund", "", nil), 200)
	d = ordNext(t, sub, kassa.EventOrderRefunded)
	if lastRefund(d) != 700 || d["status"] != "refunded" {
		t.Fatalf("order.refunded %v", d)
	}
	// Refused requests publish nothing.
	f.do("POST", "/orders/"+id+"/refund", "", nil)
	f.do("POST", "/orders/"+id+"/complete", "", nil)
	f.do("POST", "/orders", "", map[string]any{"location_id": f.locA, "line_items": []any{}})
	ordNone(t, sub, "refused requests")
}

func TestOrderForbiddenTransitions(t *testing.T) {
	f := newOrdFixture(t, nil)
	p := f.product("Tea", "TEA-1", 500)
	open := f.simpleOrder(f.locA, p, 1)["id"].(string)
	paid := f.paidOrder(f.locA, p, 1)["id"].(string)
	completed := f.soldOrder(f.locA, p, 1)["id"].(string)
	cancelled := f.simpleOrder(f.locA, p, 1)["id"].(string)
	f.must(f.do("PATCH", "/orders/"+cancelled, "", map[string]any{"status": "cancelled"}), 200)
	partial := f.soldOrder(f.locA, p, 1)["id"].(string)
	f.must(f.do("POST", "/orders/"+partial+"/refund", "", map[string]any{"amount": 100}), 200)
	refunded := f.soldOrder(f.locA, p, 1)["id"].(string)
	f.must(f.do("POST", "/orders/"+refunded+"/refund", "", nil), 200)
	cancel := map[string]any{"status": "cancelled"}
	pay := func(id string) map[string]any { return map[string]any{"order_id": id, "amount": 1, "method": "cash"} }

	cases := []struct {
		name, id, method, path string
		body                   any
	}{
		{"complete an unpaid order", open, "POST", "/complete", nil},
		{"complete twice", completed, "POST", "/complete", nil},
		{"complete a cancelled order", cancelled, "POST", "/complete", nil},
		{"complete a partially refunded order", partial, "POST", "/complete", nil},
		{"complete a refunded order", refunded, "POST", "/complete", nil},
		{"cancel a completed order", completed, "PATCH", "", cancel},
		{"cancel a partially refunded order", partial, "PATCH", "", cancel},
		{"cancel a refunded order", refunded, "PATCH", "", cancel},
		{"cancel a paid order", paid, "PATCH", "", cancel},
		{"refund an open order", open, "POST", "/refund", nil},
		{"refund a paid open order", paid, "POST", "/refund", map[string]any{"amount": 100}},
		{"refund a cancelled order", cancelled, "POST", "/refund", nil},
		{"refund a refunded order", refunded, "POST", "/refund", map[string]any{"amount": 1}},
		{"pay a completed order", completed, "POST", "payment", nil},
		{"pay a cancelled order", cancelled, "POST", "payment", nil},
		{"pay a refunded order", refunded, "POST", "payment", nil},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			was := f.get(tc.id)
			before := f.tn.outboxLen()
			var r *resp
			if tc.path == "payment" {
				r = f.do("POST", "/payments/initiate", "", pay(tc.id))
			} else {
				r = f.do(tc.method, "/orders/"+tc.id+tc.path, "", tc.body)
			}
			f.refused(t, r, 409, "conflict", "", before)
			now := f.get(tc.id)
			for _, k := range []string{"status", "paid_total", "refunded_total", "updated_at"} {
				if now[k] != was[k] {
					t.Fatalf("%s moved from %v to %v", k, was[k], now[k])
				}
			}
		})
	}
}

func TestOrderOrgIsolation(t *testing.T) {
	f := newOrdFixture(t, nil)
	p := f.product("Tea", "TEA-1", 500)
	ann := f.customer("Ann")
	open := f.order(map[string]any{"location_id": f.locA, "customer_id": ann, "line_items": []any{map[string]any{"product_id": p, "quantity": 1}}})
	sold := f.soldOrder(f.locA, p, 1)
	rival := f.tn.MustOrg("Rival Tea")
	rivalLoc := f.tn.Do("POST", "/api/v1/locations", rival.Owner, map[string]any{"name": "Rival", "timezone": "UTC"}).Data()["id"].(string)
	rivalProduct := f.tn.Do("POST", "/api/v1/catalog/products", rival.Owner, map[string]any{"name": "Rival tea", "sku": "TEA-1", "base_price": 400}).Data()["id"].(string)
	rivalOrder := f.tn.Do("POST", "/api/v1/orders", rival.Owner, map[string]any{"location_id": rivalLoc,
		"line_items": []any{map[string]any{"product_id": rivalProduct, "quantity": 1}}}).Data()["id"].(string)
	do := func(method, path string, body any) *resp { return f.tn.Do(method, "/api/v1"+path, rival.Owner, body) }

	for _, id := range []string{open["id"].(string), sold["id"].(string)} {
		for _, rq := range []struct {
			method, path string
			body         any
		}{
			{"GET", "/orders/" + id, nil},
			{"PATCH", "/orders/" + id, map[string]any{"notes": "mine now"}},
			{"PATCH", "/orders/" + id, map[string]any{"status": "cancelled"}},
			{"POST", "/orders/" + id + "/complete", nil},
			{"POST", "/orders/" + id + "/refund", nil},
			{"POST", "/orders/" + id + "/refund", map[string]any{"amount": 1}},
		} {
			t.Run(rq.method+" "+rq.path, func(t *testing.T) {
				before := f.tn.outboxLen()
				f.refused(t, do(rq.method, rq.path, rq.body), 404, "not-found", "", before)
			})
		}
	}
	t.Run("lists never leak", func(t *testing.T) {
		for _, q := range []string{"", "?location_id=" + f.locA, "?status=completed"} {
			r := do("GET", "/orders"+q, nil)
			if r.Status != 200 {
				t.Fatalf("%s: %d %s", q, r.Status, r.Body)
			}
			want := []string{}
			if q != "?location_id="+f.locA && q != "?status=completed" {
				want = []string{rivalOrder}
			}
			if got := ordIDs(r); !slices.Equal(got, want) {
				t.Fatalf("rival sees %v with %q", got, q)
			}
		}
		mustProblem(t, do("GET", "/customers/"+ann+"/orders", nil), 404, "not-found")
		r := do("GET", "/orders?customer_id="+ann, nil)
		if r.Status == 200 && len(r.List()) != 0 {
			t.Fatalf("rival sees ann's orders: %s", r.Body)
		}
	})
	t.Run("the org's own view is whole", func(t *testing.T) {
		if got := ordIDs(f.must(f.do("GET", "/orders", "", nil), 200)); !slices.Equal(got, []string{open["id"].(string), sold["id"].(string)}) {
			t.Fatalf("own orders %v", got)
		}
		mustProblem(t, f.do("GET", "/orders/"+rivalOrder, "", nil), 404, "not-found")
		mustProblem(t, f.do("GET", "/orders/not-an-id", "", nil), 404, "not-found")
	})
	t.Run("another org's catalog cannot be ordered", func(t *testing.T) {
		before := f.tn.outboxLen()
		f.refused(t, do("POST", "/orders", map[string]any{"location_id": f.locA,
			"line_items": []any{map[string]any{"product_id": rivalProduct, "quantity": 1}}}), 422, "validation", "location_id", before)
		f.refused(t, do("POST", "/orders", map[string]any{"location_id": rivalLoc,
			"line_items": []any{map[string]any{"product_id": p, "quantity": 1}}}), 422, "validation", "line_items[0].product_id", before)
		f.refused(t, do("POST", "/orders", map[string]any{"location_id": rivalLoc, "customer_id": ann,
			"line_items": []any{map[string]any{"product_id": rivalProduct, "quantity": 1}}}), 422, "validation", "customer_id", before)
	})
	if got := f.get(open["id"].(string)); got["notes"] != "" || got["status"] != "open" {
		t.Fatalf("the rival changed the order: %v", got)
	}
}

func TestOrderBadInput(t *testing.T) {
	f := newOrdFixture(t, nil)
	p := f.product("Tea", "TEA-1", 500)
	o := f.simpleOrder(f.locA, p, 2)
	id := o["id"].(string)
	sold := f.soldOrder(f.locA, p, 2)
	soldID := sold["id"].(string)
	soldLine := ordLines(sold)[0]["id"].(string)
	line := func(extra map[string]any) map[string]any {
		l := map[string]any{"product_id": p, "quantity": 1}
		for k, v := range extra {
			l[k] = v
		}
		return l
	}
	create := func(extra map[string]any, lines ...map[string]any) map[string]any {
		if lines == nil {
			lines = []map[string]any{line(nil)}
		}
		b := map[string]any{"location_id": f.locA, "line_items": lines}
		for k, v := range extra {
			if v == nil {
				delete(b, k)
			} else {
				b[k] = v
			}
		}
		return b
	}
	many := make([]map[string]any, 101)
	for i := range many {
		many[i] = line(nil)
	}
	long := strings.Repeat("x", 2001)
	refundLine := func(lid any, qty any) map[string]any {
		return map[string]any{"line_items": []any{map[string]any{"line_item_id": lid, "quantity": qty}}}
	}
	cases := []struct {
		name, method, path string
		body               any
		status             int
		field              string
	}{
		{"create: malformed JSON", "POST", "/orders", `{"location_id":`, 400, ""},
		{"create: empty body", "POST", "/orders", "", 400, ""},
		{"create: an array", "POST", "/orders", `[]`, 400, ""},
		{"create: a string", "POST", "/orders", `"order"`, 400, ""},
		{"create: trailing data", "POST", "/orders", `{"location_id":"x"} {}`, 400, ""},
		{"create: unknown field", "POST", "/orders", create(map[string]any{"total": 1}), 422, "total"},
		{"create: a client price", "POST", "/orders", create(nil, line(map[string]any{"unit_price": 1})), 422, ""},
		{"create: location of the wrong type", "POST", "/orders", create(map[string]any{"location_id": 5}), 422, "location_id"},
		{"create: no location", "POST", "/orders", create(map[string]any{"location_id": nil}), 422, "location_id"},
		{"create: no lines", "POST", "/orders", create(map[string]any{"line_items": []any{}}), 422, "line_items"},
		{"create: lines missing", "POST", "/orders", create(map[string]any{"line_items": nil}), 422, "line_items"},
		{"create: 101 lines", "POST", "/orders", create(nil, many...), 422, "line_items"},
		{"create: quantity 0", "POST", "/orders", create(nil, line(nil), line(map[string]any{"quantity": 0})), 422, "line_items[1].quantity"},
		{"create: negative quantity", "POST", "/orders", create(nil, line(map[string]any{"quantity": -1})), 422, "line_items[0].quantity"},
		{"create: quantity above 10000", "POST", "/orders", create(nil, line(map[string]any{"quantity": 10001})), 422, "line_items[0].quantity"},
		{"create: fractional quantity", "POST", "/orders", create(nil, line(map[string]any{"quantity": 1.5})), 422, ""},
		{"create: quantity as a string", "POST", "/orders", create(nil, line(map[string]any{"quantity": "1"})), 422, ""},
		{"create: no product", "POST", "/orders", create(nil, line(map[string]any{"product_id": ""})), 422, "line_items[0].product_id"},
		{"create: product not an id", "POST", "/orders", create(nil, line(map[string]any{"product_id": "tea"})), 422, "line_items[0].product_id"},
		{"create: option not an id", "POST", "/orders", create(nil, line(map[string]any{"modifier_option_ids": []string{"oat"}})), 422,
			"line_items[0].modifier_option_ids"},
		{"create: discount type", "POST", "/orders", create(map[string]any{"discount": map[string]any{"type": "free", "value": 1}}), 422, "discount.type"},
		{"create: percent above 100", "POST", "/orders", create(map[string]any{"discount": map[string]any{"type": "percent", "value": 10001}}), 422,
			"discount.value"},
		{"create: negative amount", "POST", "/orders", create(nil, line(map[string]any{"discount": map[string]any{"type": "amount", "value": -1}})), 422,
			"line_items[0].discount.value"},
		{"create: channel", "POST", "/orders", create(map[string]any{"channel": "fax"}), 422, "channel"},
		{"create: notes too long", "POST", "/orders", create(map[string]any{"notes": long}), 422, "notes"},
		{"create: customer not an id", "POST", "/orders", create(map[string]any{"customer_id": "ann"}), 422, "customer_id"},
		{"create: status", "POST", "/orders", create(map[string]any{"status": "completed"}), 422, "status"},

		{"patch: malformed JSON", "PATCH", "/orders/" + id, `{"notes":`, 400, ""},
		{"patch: empty body", "PATCH", "/orders/" + id, "", 400, ""},
		{"patch: an array", "PATCH", "/orders/" + id, `[{"notes":"x"}]`, 400, ""},
		{"patch: unknown field", "PATCH", "/orders/" + id, map[string]any{"total": 0}, 422, "total"},
		{"patch: status completed", "PATCH", "/orders/" + id, map[string]any{"status": "completed"}, 422, "status"},
		{"patch: status open", "PATCH", "/orders/" + id, map[string]any{"status": "open"}, 422, "status"},
		{"patch: status null", "PATCH", "/orders/" + id, map[string]any{"status": nil}, 422, "status"},
		{"patch: notes null", "PATCH", "/orders/" + id, map[string]any{"notes": nil}, 422, "notes"},
		{"patch: notes too long", "PATCH", "/orders/" + id, map[string]any{"notes": long}, 422, "notes"},
		{"patch: notes of the wrong type", "PATCH", "/orders/" + id, map[string]any{"notes": 7}, 422, "notes"},
		{"patch: customer not an id", "PATCH", "/orders/" + id, map[string]any{"customer_id": "ann"}, 422, "customer_id"},
		{"patch: a bad field with a cancel", "PATCH", "/orders/" + id, map[string]any{"status": "cancelled", "notes": long}, 422, "notes"},

		{"refund: malformed JSON", "POST", "/orders/" + soldID + "/refund", `{"amount":`, 400, ""},
		{"refund: an array", "POST", "/orders/" + soldID + "/refund", `[]`, 400, ""},
		{"refund: unknown field", "POST", "/orders/" + soldID + "/refund", map[string]any{"everything": true}, 422, "everything"},
		{"refund: amount 0", "POST", "/orders/" + soldID + "/refund", map[string]any{"amount": 0}, 422, "amount"},
		{"refund: negative amount", "POST", "/orders/" + soldID + "/refund", map[string]any{"amount": -5}, 422, "amount"},
		{"refund: amount as a string", "POST", "/orders/" + soldID + "/refund", map[string]any{"amount": "5"}, 422, "amount"},
		{"refund: amount and lines", "POST", "/orders/" + soldID + "/refund", map[string]any{"amount": 5,
			"line_items": []any{map[string]any{"line_item_id": soldLine, "quantity": 1}}}, 422, "amount"},
		{"refund: line not an id", "POST", "/orders/" + soldID + "/refund", refundLine("first", 1), 422, "line_items[0].line_item_id"},
		{"refund: unknown line", "POST", "/orders/" + soldID + "/refund", refundLine(ordNoSuchID, 1), 422, "line_items[0].line_item_id"},
		{"refund: another order's line", "POST", "/orders/" + soldID + "/refund", refundLine(ordLines(o)[0]["id"], 1), 422,
			"line_items[0].line_item_id"},
		{"refund: quantity 0", "POST", "/orders/" + soldID + "/refund", refundLine(soldLine, 0), 422, "line_items[0].quantity"},
		{"refund: quantity above the line", "POST", "/orders/" + soldID + "/refund", refundLine(soldLine, 3), 422, "line_items[0].quantity"},
		{"refund: one line twice", "POST", "/orders/" + soldID + "/refund", map[string]any{"line_items": []any{
			map[string]any{"line_item_id": soldLine, "quantity": 1}, map[string]any{"line_item_id": soldLine, "quantity": 1}}}, 422,
			"line_items[1].line_item_id"},
		{"refund: reason too long", "POST", "/orders/" + soldID + "/refund", map[string]any{"reason": strings.Repeat("r", 501)}, 422, "reason"},
		{"refund: restock of the wrong type", "POST", "/orders/" + soldID + "/refund", map[string]any{"restock": "yes"}, 422, "restock"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			before := f.tn.outboxLen()
			r := f.do(tc.method, tc.path, "", tc.body)
			kind := "validation"
			if tc.status == 400 {
				kind = "bad-request"
			}
			f.refused(t, r, tc.status, kind, tc.field, before)
		})
	}
	ordWant(t, f.get(id), map[string]any{"notes": "", "status": "open", "total": 1000.0})
	ordWant(t, f.get(soldID), map[string]any{"refunded_total": 0.0, "status": "completed"})
	if n := len(f.must(f.do("GET", "/orders", "", nil), 200).List()); n != 2 {
		t.Fatalf("%d orders after the bad creates", n)
	}
}

// Completes racing for the last units of stock: with negative stock
// refused exactly the stock's worth succeed; allowed, all do.
func TestOrderConcurrentCompletesAndStock(t *testing.T) {
	for _, tc := range []struct {
		name          string
		allowNegative bool
		ok, conflict  int
		onHand        int64
	}{
		{"negative stock refused", false, 5, 3, 0},
		{"negative stock allowed", true, 8, 0, -3},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newOrdFixture(t, nil)
			p := f.product("Croissant", "CRO-1", 400)
			f.settings(map[string]any{"allow_negative_stock": tc.allowNegative})
			f.receive(f.locA, p, 5)
			reqs := make([][2]string, 8)
			ids := make([]string, 8)
			for i := range reqs {
				ids[i] = f.paidOrder(f.locA, p, 1)["id"].(string)
				reqs[i] = [2]string{"POST", "/orders/" + ids[i] + "/complete"}
			}
			statuses, bodies := ordRace(t, f.tn, f.org.Owner, reqs, nil)
			if ordCount(statuses, 200) != tc.ok || ordCount(statuses, 409) != tc.conflict {
				t.Fatalf("statuses %v, want %d × 200 and %d × 409", statuses, tc.ok, tc.conflict)
			}
			completed := 0
			for i, s := range statuses {
				st := f.get(ids[i])["status"]
				if s == 409 {
					if !strings.Contains(string(bodies[i]), "/problems/conflict") || st != "open" {
						t.Fatalf("a refused complete: %s, order %v", bodies[i], st)
					}
				} else if st == "completed" {
					completed++
				}
			}
			if completed != tc.ok {
				t.Fatalf("%d orders completed", completed)
			}
			if got := f.onHand(f.locA, p); got != tc.onHand {
				t.Fatalf("on hand %d, want %d", got, tc.onHand)
			}
			if n := len(f.movements("order")); n != tc.ok {
				t.Fatalf("%d sale movements", n)
			}
		})
	}
}

// Two terminals acting on one order at the same moment: one wins, the
// other gets 409, and stock moves once.
func TestOrderConcurrentActionsOnOneOrder(t *testing.T) {
	f := newOrdFixture(t, nil)
	p := f.product("Bagel", "BAG-1", 350)
	f.receive(f.locA, p, 100)
	for round := range 5 {
		t.Run(fmt.Sprintf("complete twice, round %d", round), func(t *testing.T) {
			o := f.paidOrder(f.locA, p, 2)
			id := o["id"].(string)
			stock := f.onHand(f.locA, p)
			path := "/orders/" + id + "/complete"
			statuses, bodies := ordRace(t, f.tn, f.org.Owner, [][2]string{{"POST", path}, {"POST", path}}, nil)
			if ordCount(statuses, 200) != 1 || ordCount(statuses, 409) != 1 {
				t.Fatalf("statuses %v: %s / %s", statuses, bodies[0], bodies[1])
			}
			if got := f.onHand(f.locA, p); got != stock-2 {
				t.Fatalf("on hand %d, want %d", got, stock-2)
			}
			if h := ordHistory(f.get(id)); !slices.Equal(h, []string{"open", "completed"}) {
				t.Fatalf("history %v", h)
			}
		})
		t.Run(fmt.Sprintf("refund in full twice, round %d", round), func(t *testing.T) {
			o := f.soldOrder(f.locA, p, 3)
			id := o["id"].(string)
			stock := f.onHand(f.locA, p)
			path := "/orders/" + id + "/refund"
			statuses, bodies := ordRace(t, f.tn, f.org.Owner, [][2]string{{"POST", path}, {"POST", path}}, map[string]any{"restock": true})
			if ordCount(statuses, 200) != 1 || ordCount(statuses, 409) != 1 {
				t.Fatalf("statuses %v: %s / %s", statuses, bodies[0], bodies[1])
			}
			got := f.get(id)
			ordWant(t, got, map[string]any{"status": "refunded", "refunded_total": got["total"]})
			if n := len(ordItems(got, "refunds")); n != 1 {
				t.Fatalf("%d refunds", n)
			}
			pm := ordItems(got, "payments")[0]
			if pm["refunded_amount"] != pm["amount"] || pm["status"] != "refunded" {
				t.Fatalf("payment %v", pm)
			}
			if s := f.onHand(f.locA, p); s != stock+3 {
				t.Fatalf("on hand %d, want %d", s, stock+3)
			}
		})
	}
}

// A complete refused for one line's stock moves none of the others.
func TestOrderCompleteIsAllOrNothing(t *testing.T) {
	f := newOrdFixture(t, nil)
	beans, milk := f.product("Beans", "BEA-1", 1500), f.product("Milk", "MIL-1", 300)
	f.settings(map[string]any{"allow_negative_stock": false})
	f.receive(f.locA, beans, 5)
	o := f.order(map[string]any{"location_id": f.locA, "line_items": []any{
		map[string]any{"product_id": beans, "quantity": 2}, map[string]any{"product_id": milk, "quantity": 1}}})
	id := o["id"].(string)
	f.payCash(id, ordNum(o["total"]))
	before := f.tn.outboxLen()
	f.refused(t, f.do("POST", "/orders/"+id+"/complete", "", nil), 409, "conflict", "", before)
	if b, m := f.onHand(f.locA, beans), f.onHand(f.locA, milk); b != 5 || m != 0 {
		t.Fatalf("on hand %d, %d after a refused complete; want 5, 0", b, m)
	}
	if ms := f.movements("order"); len(ms) != 0 {
		t.Fatalf("a refused complete left movements %v", ms)
	}
	if got := f.get(id); got["status"] != "open" || got["completed_at"] != nil {
		t.Fatalf("order %v", got)
	}
	f.receive(f.locA, milk, 1)
	f.complete(id)
	if b, m := f.onHand(f.locA, beans), f.onHand(f.locA, milk); b != 3 || m != 0 {
		t.Fatalf("on hand %d, %d; want 3, 0", b, m)
	}
}

func TestOrderScopes(t *testing.T) {
	f := newOrdFixture(t, nil)
	p := f.product("Tea", "TEA-1", 500)
	kitchen := f.tn.MustUser(f.org, "k@order.test", kassa.RoleKitchen)
	o := f.simpleOrder(f.locA, p, 1)
	id := o["id"].(string)
	for _, rq := range []struct {
		method, path string
		body         any
	}{
		{"GET", "/orders", nil},
		{"GET", "/orders/" + id, nil},
		{"POST", "/orders", map[string]any{"location_id": f.locA, "line_items": []any{map[string]any{"product_id": p, "quantity": 1}}}},
		{"PATCH", "/orders/" + id, map[string]any{"notes": "x"}},
		{"POST", "/orders/" + id + "/complete", nil},
		{"POST", "/orders/" + id + "/refund", nil},
		{"GET", "/payments", nil},
		{"POST", "/payments/initiate", map[string]any{"order_id": id, "amount": 500, "method": "cash"}},
		{"GET", "/payments/settlements", nil},
	} {
		t.Run("kitchen "+rq.method+" "+rq.path, func(t *testing.T) {
			before := f.tn.outboxLen()
			f.refused(t, f.do(rq.method, rq.path, kitchen, rq.body), 403, "forbidden", "", before)
		})
	}
	t.Run("a cashier sells", func(t *testing.T) {
		r := f.do("POST", "/orders", f.cashier, map[string]any{"location_id": f.locA, "line_items": []any{map[string]any{"product_id": p, "quantity": 2}}})
		c := f.must(r, 201).Data()
		f.must(f.do("POST", "/payments/initiate", f.cashier, map[string]any{"order_id": c["id"], "amount": 1000, "method": "cash"}), 201)
		f.must(f.do("POST", "/orders/"+c["id"].(string)+"/complete", f.cashier, nil), 200)
		f.must(f.do("GET", "/orders/"+c["id"].(string), f.cashier, nil), 200)
		f.must(f.do("GET", "/payments/settlements", f.cashier, nil), 200)
	})
	t.Run("without a token", func(t *testing.T) {
		mustProblem(t, f.tn.Do("GET", "/api/v1/orders", "", nil), 401, "unauthorized")
		mustProblem(t, f.tn.Do("POST", "/api/v1/orders/"+id+"/complete", "", nil), 401, "unauthorized")
	})
}
