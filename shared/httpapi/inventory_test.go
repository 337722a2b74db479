package httpapi_test

import (
	"database/sql"
	"fmt"
	"net/url"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	_ "github.com/mattn/go-sqlite3"

	"kassa.dev/shared/eventbus"
	"kassa.dev/shared/kassa"
	"kassa.dev/sync/change"
)

// The inventory API through HTTP over a real store: stock levels as the
// sum of append-only movements, adjustments with reason codes, the movement
// audit trail, transfers and their transitions, the inventory events, org
// isolation, scopes and bad input on every body.

// invNoSuchID is a well-formed id that names no row.
const invNoSuchID = "0190a6c4-0000-7000-8000-00000000abcd"

// invFixture is a node with one org, two locations (A and B), two products
// and the tokens of its staff.
type invFixture struct {
	t                  *testing.T
	tn                 *testNode
	org                *testOrg
	ownerID            string
	manager, cashier   string
	managerID          string
	locA, locB, p1, p2 string
}

func newInvFixture(t *testing.T) *invFixture {
	t.Helper()
	tn := MustStartNode(t, kassa.NodeEdge, nil)
	f := &invFixture{t: t, tn: tn, org: tn.MustOrg("Stock Cafe")}
	f.manager = tn.MustUser(f.org, "m@stock.test", kassa.RoleManager)
	f.cashier = tn.MustUser(f.org, "c@stock.test", kassa.RoleCashier)
	f.ownerID = f.me(f.org.Owner)
	f.managerID = f.me(f.manager)
	f.locA = f.create(f.org.Owner, "/locations", map[string]any{"name": "Shop A", "timezone": "Australia/Sydney"})
	f.locB = f.create(f.org.Owner, "/locations", map[string]any{"name": "Shop B", "timezone": "Australia/Sydney"})
	f.p1 = f.create(f.org.Owner, "/catalog/products", map[string]any{"name": "Coffee beans 1kg", "sku": "BEANS-1", "base_price": 3500})
	f.p2 = f.create(f.org.Owner, "/catalog/products", map[string]any{"name": "Oat milk 1l", "sku": "OAT-1", "base_price": 450})
	return f
}

// me returns the user id of a token.
func (f *invFixture) me(token string) string {
	f.t.Helper()
	r := f.tn.Do("GET", "/api/v1/auth/me", token, nil)
	if r.Status != 200 {
		f.t.Fatalf("me: %d %s", r.Status, r.Body)
	}
	return r.Data()["id"].(string)
}

// create posts body below /api/v1, requires 201 and returns the new id.
func (f *invFixture) create(token, path string, body any) string {
	f.t.Helper()
	r := f.tn.Do("POST", "/api/v1"+path, token, body)
	if r.Status != 201 {
		f.t.Fatalf("POST %s: %d %s", path, r.Status, r.Body)
	}
	id, _ := r.Data()["id"].(string)
	if !kassa.ValidID(id) {
		f.t.Fatalf("POST %s: no id in %s", path, r.Body)
	}
	return id
}

// do sends a request below /api/v1.
func (f *invFixture) do(method, path, token string, body any, headers ...string) *resp {
	f.t.Helper()
	return f.tn.Do(method, "/api/v1"+path, token, body, headers...)
}

// must requires status and returns the response.
func (f *invFixture) must(r *resp, status int) *resp {
	f.t.Helper()
	if r.Status != status {
		f.t.Fatalf("status %d, want %d: %s", r.Status, status, r.Body)
	}
	if !strings.HasPrefix(r.Header.Get("Content-Type"), "application/json") {
		f.t.Fatalf("content type %q: %s", r.Header.Get("Content-Type"), r.Body)
	}
	return r
}

// adjust posts an adjustment as the owner and returns the stock level.
func (f *invFixture) adjust(body map[string]any) map[string]any {
	f.t.Helper()
	return f.must(f.do("POST", "/inventory/stock/adjust", f.org.Owner, body), 200).Data()
}

// onHand reads one level's on-hand through the stock list; 0 when the
// product never had stock at the location.
func (f *invFixture) onHand(loc, prod string) int64 {
	f.t.Helper()
	r := f.must(f.do("GET", "/inventory/stock?location_id="+loc+"&product_id="+prod, f.org.Owner, nil), 200)
	switch l := r.List(); len(l) {
	case 0:
		return 0
	case 1:
		return int64(l[0].(map[string]any)["on_hand"].(float64))
	default:
		f.t.Fatalf("two levels of one product at one location: %s", r.Body)
		return 0
	}
}

// wantStock checks the on-hand of p1 and p2 at A and B: {A/p1, A/p2, B/p1, B/p2}.
func (f *invFixture) wantStock(step string, want [4]int64) {
	f.t.Helper()
	got := [4]int64{f.onHand(f.locA, f.p1), f.onHand(f.locA, f.p2), f.onHand(f.locB, f.p1), f.onHand(f.locB, f.p2)}
	if got != want {
		f.t.Fatalf("%s: on-hand A/p1, A/p2, B/p1, B/p2 = %v, want %v", step, got, want)
	}
}

// all pages through a list below /api/v1 with a small page size and
// returns every item, checking the envelope of each page.
func (f *invFixture) all(token, path string) []map[string]any {
	f.t.Helper()
	sep := "?"
	if strings.Contains(path, "?") {
		sep = "&"
	}
	var out []map[string]any
	cursor := ""
	for pages := 0; ; pages++ {
		if pages > 100 {
			f.t.Fatalf("%s: paging does not end", path)
		}
		q := path + sep + "limit=3"
		if cursor != "" {
			q += "&cursor=" + url.QueryEscape(cursor)
		}
		r := f.must(f.do("GET", q, token, nil), 200)
		env := r.JSON()
		for _, it := range r.List() {
			out = append(out, it.(map[string]any))
		}
		next, present := env["next_cursor"]
		if !present {
			f.t.Fatalf("%s: next_cursor missing: %s", q, r.Body)
		}
		if env["has_more"] != true {
			if next != nil {
				f.t.Fatalf("%s: last page with next_cursor %v", q, next)
			}
			return out
		}
		if cursor, _ = next.(string); cursor == "" || len(r.List()) != 3 {
			f.t.Fatalf("%s: has_more without a full page and a cursor: %s", q, r.Body)
		}
	}
}

// movements lists the org's movements matching query, oldest first.
func (f *invFixture) movements(query string) []map[string]any {
	f.t.Helper()
	return f.all(f.org.Owner, "/inventory/movements"+query)
}

// checkOutbox asserts the change capture of inventory: every movement left
// exactly one insert record of entity stock_movement naming its location,
// and no stock level record carries on_hand (it is derived, not replicated).
func (f *invFixture) checkOutbox() {
	f.t.Helper()
	ms := f.movements("")
	if len(ms) == 0 {
		f.t.Fatal("no movements to check")
	}
	for _, m := range ms {
		cs := f.tn.changes("stock_movement", m["id"].(string))
		if len(cs) != 1 || cs[0].Op != change.OpInsert || cs[0].LocationID != m["location_id"] || cs[0].OrgID != f.org.ID {
			f.t.Fatalf("movement %v: change records %+v", m, cs)
		}
		if cs[0].Fields["delta"] != m["delta"] || cs[0].Fields["reason"] != m["reason"] {
			f.t.Fatalf("movement %v: change fields %v", m, cs[0].Fields)
		}
	}
	for _, l := range f.all(f.org.Owner, "/inventory/stock") {
		cs := f.tn.changes("stock_level", l["id"].(string))
		if len(cs) == 0 || cs[0].Op != change.OpInsert {
			f.t.Fatalf("level %v: change records %+v", l, cs)
		}
		for _, c := range cs {
			if _, ok := c.Fields["on_hand"]; ok || c.LocationID != l["location_id"] {
				f.t.Fatalf("level %v: change record %+v carries on_hand or misses the location", l, c)
			}
		}
	}
}

// invNum reads a JSON number as int64.
func invNum(v any) int64 {
	n, _ := v.(float64)
	return int64(n)
}

func TestInventoryAdjustReasonsAndCount(t *testing.T) {
	f := newInvFixture(t)
	type scenario struct {
		name      string
		body      map[string]any
		wantOn    int64
		wantRP    int64
		wantDelta int64 // 0: no movement is recorded
	}
	a := func(reason string, qty int64, extra ...any) map[string]any {
		b := map[string]any{"location_id": f.locA, "product_id": f.p1, "reason": reason, "quantity": qty}
		for i := 0; i+1 < len(extra); i += 2 {
			b[extra[i].(string)] = extra[i+1]
		}
		return b
	}
	scenarios := []scenario{
		{"received adds", a("received", 10, "note", "delivery 42"), 10, 0, 10},
		{"damaged takes a positive quantity off", a("damaged", 2), 8, 0, -2},
		{"theft takes a negative quantity as given", a("theft", -1), 7, 0, -1},
		{"wastage", a("wastage", 1), 6, 0, -1},
		{"return adds", a("return", 3), 9, 0, 3},
		{"correction down", a("correction", -4), 5, 0, -4},
		{"correction up", a("correction", 2), 7, 0, 2},
		{"count sets the absolute on-hand", a("count", 12), 12, 0, 5},
		{"a matching count records nothing", a("count", 12), 12, 0, 0},
		{"a matching count may set the reorder point", a("count", 12, "reorder_point", 4), 12, 4, 0},
		{"count down", a("count", 3), 3, 4, -9},
		{"count to zero", a("count", 0), 0, 4, -3},
		{"negative stock is allowed by default", a("correction", -2), -2, 4, -2},
		{"count from below zero", a("count", 1), 1, 4, 3},
		{"reorder point with a movement", a("received", 1, "reorder_point", 0), 2, 0, 1},
	}
	var levelID string
	for _, sc := range scenarios {
		t.Run(sc.name, func(t *testing.T) {
			outbox := f.tn.outboxLen()
			before := f.movements("")
			l := f.adjust(sc.body)
			if invNum(l["on_hand"]) != sc.wantOn || invNum(l["reorder_point"]) != sc.wantRP ||
				l["location_id"] != f.locA || l["product_id"] != f.p1 || l["org_id"] != f.org.ID {
				t.Fatalf("level %v, want on_hand %d reorder_point %d", l, sc.wantOn, sc.wantRP)
			}
			if levelID == "" {
				levelID = l["id"].(string)
			} else if l["id"] != levelID {
				t.Fatalf("level id changed from %s to %v", levelID, l["id"])
			}
			if f.onHand(f.locA, f.p1) != sc.wantOn {
				t.Fatalf("stock list disagrees with the adjust answer")
			}
			after := f.movements("")
			if sc.wantDelta == 0 {
				if len(after) != len(before) {
					t.Fatalf("a zero change recorded a movement: %v", after[len(after)-1])
				}
				rpChanges := 0
				if _, ok := sc.body["reorder_point"]; ok {
					rpChanges = 1
				}
				if got := f.tn.outboxLen() - outbox; got != rpChanges {
					t.Fatalf("outbox grew by %d, want %d", got, rpChanges)
				}
				return
			}
			if len(after) != len(before)+1 {
				t.Fatalf("%d movements, want %d", len(after), len(before)+1)
			}
			m := after[len(after)-1]
			if invNum(m["delta"]) != sc.wantDelta || m["reason"] != sc.body["reason"] || m["ref_type"] != "adjustment" ||
				m["ref_id"] != nil || m["actor"] != f.ownerID || m["origin"] != f.tn.N.NodeID() {
				t.Fatalf("movement %v, want delta %d reason %v by %s", m, sc.wantDelta, sc.body["reason"], f.ownerID)
			}
			if note, _ := sc.body["note"].(string); m["note"] != note {
				t.Fatalf("movement note %v, want %q", m["note"], note)
			}
			// On-hand is the sum of the movements.
			var sum int64
			for _, m := range after {
				sum += invNum(m["delta"])
			}
			if sum != sc.wantOn {
				t.Fatalf("sum of movements %d, on-hand %d", sum, sc.wantOn)
			}
		})
	}
	t.Run("a count of a product never stocked establishes its level", func(t *testing.T) {
		l := f.adjust(map[string]any{"location_id": f.locB, "product_id": f.p2, "reason": "count", "quantity": 0})
		if invNum(l["on_hand"]) != 0 || l["location_id"] != f.locB || !kassa.ValidID(l["id"].(string)) {
			t.Fatalf("level %v", l)
		}
		if n := len(f.movements("?location_id=" + f.locB)); n != 0 {
			t.Fatalf("%d movements at B", n)
		}
		if n := len(f.all(f.org.Owner, "/inventory/stock?location_id="+f.locB)); n != 1 {
			t.Fatalf("%d levels at B, want 1", n)
		}
	})
	t.Run("every movement has one change record with its location", func(t *testing.T) { f.checkOutbox() })
}

func TestInventoryIdempotentAdjust(t *testing.T) {
	f := newInvFixture(t)
	body := map[string]any{"location_id": f.locA, "product_id": f.p1, "reason": "received", "quantity": 5}
	first := f.must(f.do("POST", "/inventory/stock/adjust", f.org.Owner, body, "Idempotency-Key", "adj-1"), 200)
	again := f.must(f.do("POST", "/inventory/stock/adjust", f.org.Owner, body, "Idempotency-Key", "adj-1"), 200)
	if again.Header.Get("Idempotent-Replayed") != "true" || string(again.Body) != string(first.Body) {
		t.Fatalf("not replayed: %s", again.Body)
	}
	if n := len(f.movements("")); n != 1 || f.onHand(f.locA, f.p1) != 5 {
		t.Fatalf("%d movements, on-hand %d after a replay", n, f.onHand(f.locA, f.p1))
	}
}

func TestInventoryStockListsAndLowStock(t *testing.T) {
	f := newInvFixture(t)
	set := func(loc, prod string, on, rp int64) string {
		return f.adjust(map[string]any{"location_id": loc, "product_id": prod, "reason": "count", "quantity": on, "reorder_point": rp})["id"].(string)
	}
	aP1 := set(f.locA, f.p1, 3, 5)  // low
	aP2 := set(f.locA, f.p2, 10, 5) // above
	bP1 := set(f.locB, f.p1, 0, 0)  // no reorder point: never low
	bP2 := set(f.locB, f.p2, 5, 5)  // at the reorder point: low
	ids := func(items []map[string]any) []string {
		out := []string{}
		for _, it := range items {
			out = append(out, it["id"].(string))
		}
		return out
	}
	cases := []struct {
		name, path string
		want       []string
	}{
		{"all", "/inventory/stock", []string{aP1, aP2, bP1, bP2}},
		{"by location", "/inventory/stock?location_id=" + f.locA, []string{aP1, aP2}},
		{"by product", "/inventory/stock?product_id=" + f.p1, []string{aP1, bP1}},
		{"by both", "/inventory/stock?location_id=" + f.locB + "&product_id=" + f.p2, []string{bP2}},
		{"unknown location", "/inventory/stock?location_id=" + invNoSuchID, []string{}},
		{"low stock", "/inventory/stock/low-stock", []string{aP1, bP2}},
		{"low stock by location", "/inventory/stock/low-stock?location_id=" + f.locB, []string{bP2}},
		{"low stock by product", "/inventory/stock/low-stock?product_id=" + f.p2, []string{bP2}},
		{"low stock by both, none", "/inventory/stock/low-stock?location_id=" + f.locA + "&product_id=" + f.p2, []string{}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			// Levels list in id order; a level's id is derived from its
			// location and product (the same on every node), not from time.
			want := slices.Sorted(slices.Values(c.want))
			if got := ids(f.all(f.org.Owner, c.path)); !slices.Equal(got, want) {
				t.Fatalf("ids %v, want %v", got, want)
			}
			// A cashier may read stock.
			if r := f.do("GET", c.path, f.cashier, nil); r.Status != 200 {
				t.Fatalf("cashier: %d %s", r.Status, r.Body)
			}
		})
	}
	t.Run("a level leaves the low-stock list when restocked", func(t *testing.T) {
		f.adjust(map[string]any{"location_id": f.locA, "product_id": f.p1, "reason": "received", "quantity": 3})
		if got := ids(f.all(f.org.Owner, "/inventory/stock/low-stock")); !slices.Equal(got, []string{bP2}) {
			t.Fatalf("low stock %v", got)
		}
	})
	t.Run("page envelope", func(t *testing.T) {
		r := f.must(f.do("GET", "/inventory/stock?limit=4", f.org.Owner, nil), 200)
		if env := r.JSON(); env["has_more"] != false || env["next_cursor"] != nil || len(r.List()) != 4 {
			t.Fatalf("exact multiple of the page size: %s", r.Body)
		}
		r = f.must(f.do("GET", "/inventory/stock?limit=2", f.org.Owner, nil), 200)
		if env := r.JSON(); env["has_more"] != true || env["next_cursor"] == nil {
			t.Fatalf("first page: %s", r.Body)
		}
	})
}

func TestInventoryMovementsAuditTrail(t *testing.T) {
	f := newInvFixture(t)
	f.adjust(map[string]any{"location_id": f.locA, "product_id": f.p1, "reason": "received", "quantity": 20, "note": "PO 7"})
	f.must(f.do("POST", "/inventory/stock/adjust", f.manager,
		map[string]any{"location_id": f.locA, "product_id": f.p1, "reason": "damaged", "quantity": 2, "note": "dropped"}), 200)
	f.adjust(map[string]any{"location_id": f.locB, "product_id": f.p2, "reason": "received", "quantity": 6})
	tr := f.create(f.manager, "/inventory/transfers", map[string]any{"from_location_id": f.locA, "to_location_id": f.locB,
		"lines": []any{map[string]any{"product_id": f.p1, "quantity": 4}}})
	f.must(f.do("POST", "/inventory/transfers/"+tr+"/receive", f.org.Owner, nil), 200)

	type mv struct {
		loc, prod, reason, refType, refID, actor, note string
		delta                                          int64
	}
	all := []mv{
		{f.locA, f.p1, "received", "adjustment", "", f.ownerID, "PO 7", 20},
		{f.locA, f.p1, "damaged", "adjustment", "", f.managerID, "dropped", -2},
		{f.locB, f.p2, "received", "adjustment", "", f.ownerID, "", 6},
		{f.locA, f.p1, "transfer_out", "transfer", tr, f.managerID, "", -4},
		{f.locB, f.p1, "transfer_in", "transfer", tr, f.ownerID, "", 4},
	}
	pick := func(keep func(mv) bool) []mv {
		var out []mv
		for _, m := range all {
			if keep(m) {
				out = append(out, m)
			}
		}
		return out
	}
	cases := []struct {
		name, query string
		want        []mv
	}{
		{"all, oldest first", "", all},
		{"by location", "?location_id=" + f.locA, pick(func(m mv) bool { return m.loc == f.locA })},
		{"by product", "?product_id=" + f.p1, pick(func(m mv) bool { return m.prod == f.p1 })},
		{"by ref_type transfer", "?ref_type=transfer", pick(func(m mv) bool { return m.refType == "transfer" })},
		{"by ref_type adjustment and location", "?ref_type=adjustment&location_id=" + f.locB, pick(func(m mv) bool { return m.refType == "adjustment" && m.loc == f.locB })},
		{"by ref_type order, none yet", "?ref_type=order", nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got := f.movements(c.query)
			if len(got) != len(c.want) {
				t.Fatalf("%d movements, want %d: %v", len(got), len(c.want), got)
			}
			for i, m := range got {
				w := c.want[i]
				refID, _ := m["ref_id"].(string)
				if m["location_id"] != w.loc || m["product_id"] != w.prod || m["reason"] != w.reason || m["ref_type"] != w.refType ||
					refID != w.refID || m["actor"] != w.actor || m["note"] != w.note || invNum(m["delta"]) != w.delta {
					t.Fatalf("movement %d: %v, want %+v", i, m, w)
				}
				if at, err := time.Parse(time.RFC3339, m["created_at"].(string)); err != nil || at.IsZero() {
					t.Fatalf("created_at %v", m["created_at"])
				}
				if i > 0 && m["id"].(string) <= got[i-1]["id"].(string) {
					t.Fatalf("movements not in id order")
				}
			}
		})
	}
	t.Run("cashiers read the trail", func(t *testing.T) {
		f.must(f.do("GET", "/inventory/movements", f.cashier, nil), 200)
	})
	t.Run("every movement has one change record with its location", func(t *testing.T) { f.checkOutbox() })
}

func TestInventoryTransferLifecycle(t *testing.T) {
	f := newInvFixture(t)
	f.adjust(map[string]any{"location_id": f.locA, "product_id": f.p1, "reason": "received", "quantity": 10})
	f.adjust(map[string]any{"location_id": f.locA, "product_id": f.p2, "reason": "received", "quantity": 5})
	f.wantStock("start", [4]int64{10, 5, 0, 0})

	// Create: in transit, the stock leaves A at once.
	r := f.must(f.do("POST", "/inventory/transfers", f.org.Owner, map[string]any{
		"from_location_id": f.locA, "to_location_id": f.locB, "notes": "weekly top-up",
		"lines": []any{map[string]any{"product_id": f.p1, "quantity": 4}, map[string]any{"product_id": f.p2, "quantity": 5}},
	}), 201)
	t1 := r.Data()
	id1 := t1["id"].(string)
	if r.Header.Get("Location") != "/api/v1/inventory/transfers/"+id1 {
		t.Fatalf("Location %q", r.Header.Get("Location"))
	}
	lines, _ := t1["lines"].([]any)
	if t1["status"] != "in_transit" || t1["from_location_id"] != f.locA || t1["to_location_id"] != f.locB || t1["notes"] != "weekly top-up" ||
		t1["org_id"] != f.org.ID || t1["received_at"] != nil || t1["cancelled_at"] != nil || len(lines) != 2 ||
		lines[0].(map[string]any)["product_id"] != f.p1 || invNum(lines[0].(map[string]any)["quantity"]) != 4 {
		t.Fatalf("created transfer %v", t1)
	}
	f.wantStock("created", [4]int64{6, 0, 0, 0})
	got := f.must(f.do("GET", "/inventory/transfers/"+id1, f.cashier, nil), 200).Data()
	if fmt.Sprint(got) != fmt.Sprint(t1) {
		t.Fatalf("read %v, want %v", got, t1)
	}
	// A transfer is an org-wide record (both locations' edges need it): its
	// change record names no location.
	if cs := f.tn.changes("transfer", id1); len(cs) != 1 || cs[0].LocationID != "" {
		t.Fatalf("transfer change records %+v", cs)
	}

	// Receive: the stock enters B.
	f.tn.Clock.Advance(time.Minute)
	rec := f.must(f.do("POST", "/inventory/transfers/"+id1+"/receive", f.org.Owner, nil), 200).Data()
	if rec["status"] != "received" || rec["received_at"] == nil || rec["cancelled_at"] != nil || rec["updated_at"] == t1["updated_at"] {
		t.Fatalf("received transfer %v", rec)
	}
	f.wantStock("received", [4]int64{6, 0, 4, 5})
	if cs := f.tn.changes("transfer", id1); len(cs) != 2 || cs[1].LocationID != "" || cs[1].Fields["status"] != "received" {
		t.Fatalf("transfer change records %+v", cs)
	}

	// A second transfer, cancelled: the stock returns to A.
	id2 := f.create(f.manager, "/inventory/transfers", map[string]any{"from_location_id": f.locB, "to_location_id": f.locA,
		"lines": []any{map[string]any{"product_id": f.p2, "quantity": 2}}})
	f.wantStock("second created", [4]int64{6, 0, 4, 3})
	can := f.must(f.do("POST", "/inventory/transfers/"+id2+"/cancel", f.manager, "{}"), 200).Data()
	if can["status"] != "cancelled" || can["cancelled_at"] == nil || can["received_at"] != nil {
		t.Fatalf("cancelled transfer %v", can)
	}
	f.wantStock("second cancelled", [4]int64{6, 0, 4, 5})
	back := f.movements("?ref_type=transfer&location_id=" + f.locB + "&product_id=" + f.p2)
	if last := back[len(back)-1]; last["reason"] != "correction" || last["note"] != "transfer cancelled" || last["ref_id"] != id2 || invNum(last["delta"]) != 2 {
		t.Fatalf("cancel movement %v", last)
	}

	// Forbidden transitions change nothing.
	outbox := f.tn.outboxLen()
	for _, c := range []struct{ name, id, action string }{
		{"receive twice", id1, "receive"},
		{"cancel after receive", id1, "cancel"},
		{"receive after cancel", id2, "receive"},
		{"cancel twice", id2, "cancel"},
	} {
		t.Run(c.name, func(t *testing.T) {
			p := mustProblem(t, f.do("POST", "/inventory/transfers/"+c.id+"/"+c.action, f.org.Owner, nil), 409, "conflict")
			if !strings.Contains(p["detail"].(string), "in transit") {
				t.Fatalf("detail %v", p["detail"])
			}
		})
	}
	f.wantStock("after refused transitions", [4]int64{6, 0, 4, 5})
	if f.tn.outboxLen() != outbox {
		t.Fatal("a refused transition wrote change records")
	}

	// The list, oldest first, with lines.
	ts := f.all(f.cashier, "/inventory/transfers")
	if len(ts) != 2 || ts[0]["id"] != id1 || ts[1]["id"] != id2 || ts[0]["status"] != "received" || ts[1]["status"] != "cancelled" ||
		len(ts[0]["lines"].([]any)) != 2 {
		t.Fatalf("transfers %v", ts)
	}
	mustProblem(t, f.do("GET", "/inventory/transfers/"+invNoSuchID, f.org.Owner, nil), 404, "not-found")
	f.checkOutbox()
}

// invEvents subscribes to the node's inventory events.
func invEvents(t *testing.T, tn *testNode) *eventbus.Subscription {
	sub := tn.N.Bus.Subscribe(64, func(e kassa.Event) bool { return strings.HasPrefix(e.Type, "inventory.") })
	t.Cleanup(sub.Close)
	return sub
}

// invNext returns the next event, failing after a deadline.
func invNext(t *testing.T, sub *eventbus.Subscription) kassa.Event {
	t.Helper()
	select {
	case e := <-sub.C:
		return e
	case <-time.After(5 * time.Second):
		t.Fatal("no event within 5 s")
		return kassa.Event{}
	}
}

// invNone checks that no event is waiting. Events are published when the
// transaction commits, before the service returns, so once the HTTP answer
// is in, every event of that request is in the channel.
func invNone(t *testing.T, sub *eventbus.Subscription, after string) {
	t.Helper()
	select {
	case e := <-sub.C:
		t.Fatalf("after %s: unexpected event %s %+v", after, e.Type, e.Data)
	default:
	}
}

func TestInventoryEvents(t *testing.T) {
	f := newInvFixture(t)
	sub := invEvents(t, f.tn)
	adj := func(reason string, qty int64, extra ...any) {
		t.Helper()
		b := map[string]any{"location_id": f.locA, "product_id": f.p1, "reason": reason, "quantity": qty}
		for i := 0; i+1 < len(extra); i += 2 {
			b[extra[i].(string)] = extra[i+1]
		}
		f.adjust(b)
	}
	wantLevel := func(e kassa.Event, typ string, onHand int64) {
		t.Helper()
		l, ok := e.Data.(kassa.StockLevel)
		if e.Type != typ || !ok || e.OrgID != f.org.ID || e.LocationID != f.locA || !kassa.ValidID(e.ID) || e.OccurredAt.IsZero() ||
			l.OnHand != onHand || l.ProductID != f.p1 || l.LocationID != f.locA || l.ReorderPoint != 5 {
			t.Fatalf("event %s %+v, want %s with on-hand %d", e.Type, e, typ, onHand)
		}
	}
	steps := []struct {
		name  string
		do    func()
		check func()
	}{
		{"stocking up raises nothing", func() { adj("received", 8, "reorder_point", 5) }, nil},
		{"crossing the reorder point", func() { adj("damaged", 3) }, func() { wantLevel(invNext(t, sub), kassa.EventInventoryLowStock, 5) }},
		{"already below: no second low-stock", func() { adj("wastage", 1) }, nil},
		{"reaching zero", func() { adj("theft", 4) }, func() { wantLevel(invNext(t, sub), kassa.EventInventoryStockout, 0) }},
		{"going further below zero: no second stockout", func() { adj("correction", -1) }, nil},
		{"restock above the reorder point", func() { adj("count", 9) }, nil},
		{"straight to zero raises both", func() { adj("count", 0) }, func() {
			wantLevel(invNext(t, sub), kassa.EventInventoryLowStock, 0)
			wantLevel(invNext(t, sub), kassa.EventInventoryStockout, 0)
		}},
		{"raising the reorder point above on-hand is no crossing", func() { adj("received", 3, "reorder_point", 10) }, nil},
	}
	for _, s := range steps {
		s.do()
		if s.check != nil {
			s.check()
		}
		invNone(t, sub, s.name)
	}

	// A transfer: moving stock out of A crosses nothing here (no reorder
	// point at A for p2); receiving it completes the transfer.
	f.adjust(map[string]any{"location_id": f.locA, "product_id": f.p2, "reason": "received", "quantity": 2})
	id := f.create(f.org.Owner, "/inventory/transfers", map[string]any{"from_location_id": f.locA, "to_location_id": f.locB,
		"lines": []any{map[string]any{"product_id": f.p2, "quantity": 2}}})
	if e := invNext(t, sub); e.Type != kassa.EventInventoryStockout || e.LocationID != f.locA || e.Data.(kassa.StockLevel).ProductID != f.p2 {
		t.Fatalf("transfer out to zero: %+v", e)
	}
	invNone(t, sub, "transfer created")
	f.must(f.do("POST", "/inventory/transfers/"+id+"/receive", f.org.Owner, nil), 200)
	e := invNext(t, sub)
	tr, ok := e.Data.(kassa.Transfer)
	if e.Type != kassa.EventInventoryTransferDone || !ok || e.OrgID != f.org.ID || e.LocationID != f.locB ||
		tr.ID != id || tr.Status != kassa.TransferReceived || tr.ReceivedAt == nil || len(tr.Lines) != 1 {
		t.Fatalf("transfer completed event %+v", e)
	}
	invNone(t, sub, "transfer received")
	// A cancelled transfer completes nothing.
	id2 := f.create(f.org.Owner, "/inventory/transfers", map[string]any{"from_location_id": f.locB, "to_location_id": f.locA,
		"lines": []any{map[string]any{"product_id": f.p2, "quantity": 1}}})
	f.must(f.do("POST", "/inventory/transfers/"+id2+"/cancel", f.org.Owner, nil), 200)
	invNone(t, sub, "transfer cancelled")
}

func TestInventoryOrgIsolation(t *testing.T) {
	f := newInvFixture(t)
	f.adjust(map[string]any{"location_id": f.locA, "product_id": f.p1, "reason": "received", "quantity": 10, "reorder_point": 20})
	tr := f.create(f.org.Owner, "/inventory/transfers", map[string]any{"from_location_id": f.locA, "to_location_id": f.locB,
		"lines": []any{map[string]any{"product_id": f.p1, "quantity": 1}}})
	other := f.tn.MustOrg("Other Cafe")
	otherLoc := f.create(other.Owner, "/locations", map[string]any{"name": "Elsewhere", "timezone": "Europe/Berlin"})
	otherProd := f.create(other.Owner, "/catalog/products", map[string]any{"name": "Tea", "sku": "TEA-1", "base_price": 300})
	outbox := f.tn.outboxLen()

	for _, path := range []string{
		"/inventory/stock", "/inventory/stock?location_id=" + f.locA, "/inventory/stock?product_id=" + f.p1,
		"/inventory/stock/low-stock", "/inventory/movements", "/inventory/movements?location_id=" + f.locA,
		"/inventory/transfers",
	} {
		t.Run("list "+path, func(t *testing.T) {
			if l := f.all(other.Owner, path); len(l) != 0 {
				t.Fatalf("another org sees %v", l)
			}
		})
	}
	for _, c := range []struct {
		name, method, path string
		body               any
		status             int
		kind, field        string
	}{
		{"read a transfer", "GET", "/inventory/transfers/" + tr, nil, 404, "not-found", ""},
		{"receive a transfer", "POST", "/inventory/transfers/" + tr + "/receive", nil, 404, "not-found", ""},
		{"cancel a transfer", "POST", "/inventory/transfers/" + tr + "/cancel", nil, 404, "not-found", ""},
		{"adjust at its location", "POST", "/inventory/stock/adjust", map[string]any{"location_id": f.locA, "product_id": otherProd,
			"reason": "received", "quantity": 1}, 422, "validation", "location_id"},
		{"adjust its product", "POST", "/inventory/stock/adjust", map[string]any{"location_id": otherLoc, "product_id": f.p1,
			"reason": "received", "quantity": 1}, 422, "validation", "product_id"},
		{"transfer from its location", "POST", "/inventory/transfers", map[string]any{"from_location_id": f.locA, "to_location_id": otherLoc,
			"lines": []any{map[string]any{"product_id": otherProd, "quantity": 1}}}, 422, "validation", "from_location_id"},
		{"transfer its product", "POST", "/inventory/transfers", map[string]any{"from_location_id": otherLoc, "to_location_id": f.locB,
			"lines": []any{map[string]any{"product_id": f.p1, "quantity": 1}}}, 422, "validation", "lines"},
	} {
		t.Run(c.name, func(t *testing.T) {
			p := mustProblem(t, f.do(c.method, c.path, other.Owner, c.body), c.status, c.kind)
			if c.field != "" && !slices.Contains(invFields(p), c.field) {
				t.Fatalf("problem does not name %s: %v", c.field, p)
			}
		})
	}
	if f.tn.outboxLen() != outbox {
		t.Fatal("refused requests of another org wrote change records")
	}
	// The first org's data is untouched.
	if got := f.must(f.do("GET", "/inventory/transfers/"+tr, f.org.Owner, nil), 200).Data(); got["status"] != "in_transit" {
		t.Fatalf("transfer %v", got)
	}
	f.wantStock("after the other org", [4]int64{9, 0, 0, 0})
}

// invFields lists the fields named in a problem's errors.
func invFields(p map[string]any) []string {
	var out []string
	errs, _ := p["errors"].([]any)
	for _, e := range errs {
		if m, ok := e.(map[string]any); ok {
			s, _ := m["field"].(string)
			out = append(out, s)
		}
	}
	return out
}

func TestInventoryScopes(t *testing.T) {
	f := newInvFixture(t)
	f.adjust(map[string]any{"location_id": f.locA, "product_id": f.p1, "reason": "received", "quantity": 10})
	tr := f.create(f.org.Owner, "/inventory/transfers", map[string]any{"from_location_id": f.locA, "to_location_id": f.locB,
		"lines": []any{map[string]any{"product_id": f.p1, "quantity": 1}}})
	kitchen := f.tn.MustUser(f.org, "k@stock.test", kassa.RoleKitchen)
	adjust := map[string]any{"location_id": f.locA, "product_id": f.p1, "reason": "damaged", "quantity": 1}
	transfer := map[string]any{"from_location_id": f.locA, "to_location_id": f.locB, "lines": []any{map[string]any{"product_id": f.p1, "quantity": 1}}}
	outbox := f.tn.outboxLen()
	for _, c := range []struct {
		name, method, path, token string
		body                      any
		status                    int
	}{
		{"cashier adjusts", "POST", "/inventory/stock/adjust", f.cashier, adjust, 403},
		{"cashier creates a transfer", "POST", "/inventory/transfers", f.cashier, transfer, 403},
		{"cashier receives", "POST", "/inventory/transfers/" + tr + "/receive", f.cashier, nil, 403},
		{"cashier cancels", "POST", "/inventory/transfers/" + tr + "/cancel", f.cashier, nil, 403},
		{"kitchen reads stock", "GET", "/inventory/stock", kitchen, nil, 403},
		{"kitchen reads movements", "GET", "/inventory/movements", kitchen, nil, 403},
		{"kitchen reads transfers", "GET", "/inventory/transfers/" + tr, kitchen, nil, 403},
		{"no token", "GET", "/inventory/stock", "", nil, 401},
		{"no token adjusts", "POST", "/inventory/stock/adjust", "", adjust, 401},
	} {
		t.Run(c.name, func(t *testing.T) {
			kind := map[int]string{401: "unauthorized", 403: "forbidden"}[c.status]
			mustProblem(t, f.do(c.method, c.path, c.token, c.body), c.status, kind)
		})
	}
	if f.tn.outboxLen() != outbox {
		t.Fatal("refused requests wrote change records")
	}
	f.wantStock("after refused requests", [4]int64{9, 0, 0, 0})
	// A manager may do all of it.
	f.must(f.do("POST", "/inventory/stock/adjust", f.manager, adjust), 200)
	f.must(f.do("POST", "/inventory/transfers/"+tr+"/cancel", f.manager, nil), 200)
	f.wantStock("manager", [4]int64{9, 0, 0, 0})
}

// invState is everything a bad request could have changed, byte for byte.
func (f *invFixture) state() string {
	f.t.Helper()
	var b strings.Builder
	fmt.Fprintf(&b, "outbox=%d\n", f.tn.outboxLen())
	for _, p := range []string{"/inventory/stock", "/inventory/movements", "/inventory/transfers"} {
		r := f.must(f.do("GET", p+"?limit=200", f.org.Owner, nil), 200)
		b.WriteString(p + " ")
		b.Write(r.Body)
		b.WriteString("\n")
	}
	return b.String()
}

func TestInventoryBadInput(t *testing.T) {
	f := newInvFixture(t)
	f.adjust(map[string]any{"location_id": f.locA, "product_id": f.p1, "reason": "received", "quantity": 10})
	tr := f.create(f.org.Owner, "/inventory/transfers", map[string]any{"from_location_id": f.locA, "to_location_id": f.locB,
		"lines": []any{map[string]any{"product_id": f.p1, "quantity": 1}}})
	adj := func(kv ...any) map[string]any {
		b := map[string]any{"location_id": f.locA, "product_id": f.p1, "reason": "received", "quantity": 1}
		for i := 0; i+1 < len(kv); i += 2 {
			if kv[i+1] == nil {
				delete(b, kv[i].(string))
			} else {
				b[kv[i].(string)] = kv[i+1]
			}
		}
		return b
	}
	line := func(prod string, qty any) map[string]any { return map[string]any{"product_id": prod, "quantity": qty} }
	xfer := func(kv ...any) map[string]any {
		b := map[string]any{"from_location_id": f.locA, "to_location_id": f.locB, "lines": []any{line(f.p1, 1)}}
		for i := 0; i+1 < len(kv); i += 2 {
			if kv[i+1] == nil {
				delete(b, kv[i].(string))
			} else {
				b[kv[i].(string)] = kv[i+1]
			}
		}
		return b
	}
	many := make([]any, 201)
	for i := range many {
		many[i] = line(invNoSuchID, 1)
	}
	long := strings.Repeat("x", 501)
	const adjustPath, transfersPath = "/inventory/stock/adjust", "/inventory/transfers"
	receive := "/inventory/transfers/" + tr + "/receive"
	cases := []struct {
		name, method, path string
		body               any
		status             int
		kind, field        string
	}{
		// adjust: the body's form
		{"adjust: no body", "POST", adjustPath, nil, 400, "bad-request", ""},
		{"adjust: malformed JSON", "POST", adjustPath, `{"reason":`, 400, "bad-request", ""},
		{"adjust: not an object", "POST", adjustPath, `[1,2]`, 400, "bad-request", ""},
		{"adjust: trailing data", "POST", adjustPath, `{"reason":"count"} {}`, 400, "bad-request", ""},
		{"adjust: unknown field", "POST", adjustPath, adj("delta", 3), 422, "validation", "delta"},
		{"adjust: on_hand is not writable", "POST", adjustPath, adj("on_hand", 3), 422, "validation", "on_hand"},
		{"adjust: quantity not an integer", "POST", adjustPath, adj("quantity", 1.5), 422, "validation", "quantity"},
		{"adjust: quantity a string", "POST", adjustPath, adj("quantity", "3"), 422, "validation", "quantity"},
		{"adjust: reason a number", "POST", adjustPath, adj("reason", 1), 422, "validation", "reason"},
		{"adjust: reorder_point a string", "POST", adjustPath, adj("reorder_point", "5"), 422, "validation", "reorder_point"},
		// adjust: the fields
		{"adjust: empty object", "POST", adjustPath, `{}`, 422, "validation", "location_id"},
		{"adjust: missing location", "POST", adjustPath, adj("location_id", nil), 422, "validation", "location_id"},
		{"adjust: malformed location", "POST", adjustPath, adj("location_id", "shop-a"), 422, "validation", "location_id"},
		{"adjust: unknown location", "POST", adjustPath, adj("location_id", invNoSuchID), 422, "validation", "location_id"},
		{"adjust: missing product", "POST", adjustPath, adj("product_id", nil), 422, "validation", "product_id"},
		{"adjust: unknown product", "POST", adjustPath, adj("product_id", invNoSuchID), 422, "validation", "product_id"},
		{"adjust: a location as product", "POST", adjustPath, adj("product_id", f.locB), 422, "validation", "product_id"},
		{"adjust: missing reason", "POST", adjustPath, adj("reason", nil), 422, "validation", "reason"},
		{"adjust: unknown reason", "POST", adjustPath, adj("reason", "stolen"), 422, "validation", "reason"},
		{"adjust: a reason only sales write", "POST", adjustPath, adj("reason", "sale"), 422, "validation", "reason"},
		{"adjust: a transfer reason", "POST", adjustPath, adj("reason", "transfer_in"), 422, "validation", "reason"},
		{"adjust: reason in capitals", "POST", adjustPath, adj("reason", "RECEIVED"), 422, "validation", "reason"},
		{"adjust: received without quantity", "POST", adjustPath, adj("quantity", nil), 422, "validation", "quantity"},
		{"adjust: received negative", "POST", adjustPath, adj("quantity", -2), 422, "validation", "quantity"},
		{"adjust: return zero", "POST", adjustPath, adj("reason", "return", "quantity", 0), 422, "validation", "quantity"},
		{"adjust: damaged zero", "POST", adjustPath, adj("reason", "damaged", "quantity", 0), 422, "validation", "quantity"},
		{"adjust: theft zero", "POST", adjustPath, adj("reason", "theft", "quantity", 0), 422, "validation", "quantity"},
		{"adjust: wastage too large", "POST", adjustPath, adj("reason", "wastage", "quantity", 2_000_000_000), 422, "validation", "quantity"},
		{"adjust: correction zero", "POST", adjustPath, adj("reason", "correction", "quantity", 0), 422, "validation", "quantity"},
		{"adjust: correction too large", "POST", adjustPath, adj("reason", "correction", "quantity", -1_000_000_001), 422, "validation", "quantity"},
		{"adjust: count negative", "POST", adjustPath, adj("reason", "count", "quantity", -1), 422, "validation", "quantity"},
		{"adjust: quantity beyond int64", "POST", adjustPath, `{"location_id":"` + f.locA + `","product_id":"` + f.p1 + `","reason":"received","quantity":99999999999999999999}`, 422, "validation", "quantity"},
		{"adjust: negative reorder point", "POST", adjustPath, adj("reorder_point", -1), 422, "validation", "reorder_point"},
		{"adjust: reorder point too large", "POST", adjustPath, adj("reorder_point", 1_000_000_001), 422, "validation", "reorder_point"},
		{"adjust: note too long", "POST", adjustPath, adj("note", long), 422, "validation", "note"},
		{"adjust: note with control characters", "POST", adjustPath, adj("note", "a\x00b"), 422, "validation", "note"},
		{"adjust: note a number", "POST", adjustPath, adj("note", 5), 422, "validation", "note"},
		// transfers: the body's form
		{"transfer: no body", "POST", transfersPath, nil, 400, "bad-request", ""},
		{"transfer: malformed JSON", "POST", transfersPath, `{"lines":[`, 400, "bad-request", ""},
		{"transfer: not an object", "POST", transfersPath, `"transfer"`, 400, "bad-request", ""},
		{"transfer: unknown field", "POST", transfersPath, xfer("status", "received"), 422, "validation", "status"},
		{"transfer: unknown line field", "POST", transfersPath, xfer("lines", []any{map[string]any{"product_id": f.p1, "quantity": 1, "price": 3}}), 422, "validation", "price"},
		{"transfer: lines an object", "POST", transfersPath, xfer("lines", map[string]any{"product_id": f.p1}), 422, "validation", "lines"},
		{"transfer: quantity a string", "POST", transfersPath, xfer("lines", []any{line(f.p1, "1")}), 422, "validation", "lines.quantity"},
		// transfers: the fields
		{"transfer: empty object", "POST", transfersPath, `{}`, 422, "validation", "from_location_id"},
		{"transfer: missing from", "POST", transfersPath, xfer("from_location_id", nil), 422, "validation", "from_location_id"},
		{"transfer: missing to", "POST", transfersPath, xfer("to_location_id", nil), 422, "validation", "to_location_id"},
		{"transfer: malformed to", "POST", transfersPath, xfer("to_location_id", "B"), 422, "validation", "to_location_id"},
		{"transfer: unknown from", "POST", transfersPath, xfer("from_location_id", invNoSuchID), 422, "validation", "from_location_id"},
		{"transfer: unknown to", "POST", transfersPath, xfer("to_location_id", invNoSuchID), 422, "validation", "to_location_id"},
		{"transfer: to itself", "POST", transfersPath, xfer("to_location_id", f.locA), 422, "validation", "to_location_id"},
		{"transfer: no lines", "POST", transfersPath, xfer("lines", nil), 422, "validation", "lines"},
		{"transfer: empty lines", "POST", transfersPath, xfer("lines", []any{}), 422, "validation", "lines"},
		{"transfer: 201 lines", "POST", transfersPath, xfer("lines", many), 422, "validation", "lines"},
		{"transfer: zero quantity", "POST", transfersPath, xfer("lines", []any{line(f.p1, 0)}), 422, "validation", "lines"},
		{"transfer: negative quantity", "POST", transfersPath, xfer("lines", []any{line(f.p1, -3)}), 422, "validation", "lines"},
		{"transfer: missing quantity", "POST", transfersPath, xfer("lines", []any{map[string]any{"product_id": f.p1}}), 422, "validation", "lines"},
		{"transfer: missing product", "POST", transfersPath, xfer("lines", []any{map[string]any{"quantity": 1}}), 422, "validation", "lines"},
		{"transfer: unknown product", "POST", transfersPath, xfer("lines", []any{line(f.p1, 1), line(invNoSuchID, 1)}), 422, "validation", "lines"},
		{"transfer: duplicate product", "POST", transfersPath, xfer("lines", []any{line(f.p1, 1), line(f.p1, 2)}), 422, "validation", "lines"},
		{"transfer: notes too long", "POST", transfersPath, xfer("notes", strings.Repeat("n", 2001)), 422, "validation", "notes"},
		// receive and cancel take no body
		{"receive: malformed JSON", "POST", receive, `{`, 400, "bad-request", ""},
		{"receive: not an object", "POST", receive, `[]`, 400, "bad-request", ""},
		{"receive: a field", "POST", receive, map[string]any{"status": "received"}, 422, "validation", "status"},
		{"cancel: a field", "POST", "/inventory/transfers/" + tr + "/cancel", map[string]any{"reason": "x"}, 422, "validation", "reason"},
		// paths
		{"transfer: id not a uuid", "GET", "/inventory/transfers/not-an-id", nil, 404, "not-found", ""},
		{"transfer: no such id", "GET", "/inventory/transfers/" + invNoSuchID, nil, 404, "not-found", ""},
		{"receive: id not a uuid", "POST", "/inventory/transfers/xyz/receive", nil, 404, "not-found", ""},
		{"receive: no such id", "POST", "/inventory/transfers/" + invNoSuchID + "/receive", nil, 404, "not-found", ""},
		{"cancel: no such id", "POST", "/inventory/transfers/" + invNoSuchID + "/cancel", nil, 404, "not-found", ""},
		{"no such inventory route", "GET", "/inventory/stock/" + f.p1, nil, 404, "not-found", ""},
		// queries
		{"stock: limit 0", "GET", "/inventory/stock?limit=0", nil, 400, "bad-request", ""},
		{"stock: limit 201", "GET", "/inventory/stock?limit=201", nil, 400, "bad-request", ""},
		{"stock: bad cursor", "GET", "/inventory/stock?cursor=bm9wZQ", nil, 400, "bad-request", ""},
		{"stock: bad location_id", "GET", "/inventory/stock?location_id=A", nil, 400, "bad-request", ""},
		{"low stock: bad product_id", "GET", "/inventory/stock/low-stock?product_id=1", nil, 400, "bad-request", ""},
		{"low stock: limit a word", "GET", "/inventory/stock/low-stock?limit=ten", nil, 400, "bad-request", ""},
		{"movements: bad ref_type", "GET", "/inventory/movements?ref_type=sale", nil, 400, "bad-request", ""},
		{"movements: bad product_id", "GET", "/inventory/movements?product_id=p1", nil, 400, "bad-request", ""},
		{"movements: bad cursor", "GET", "/inventory/movements?cursor=!!!", nil, 400, "bad-request", ""},
		{"transfers: bad limit", "GET", "/inventory/transfers?limit=-1", nil, 400, "bad-request", ""},
	}
	before := f.state()
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := f.do(c.method, c.path, f.org.Owner, c.body)
			p := mustProblem(t, r, c.status, c.kind)
			if c.field != "" && !slices.Contains(invFields(p), c.field) {
				t.Fatalf("problem does not name field %s: %s", c.field, r.Body)
			}
			for _, leak := range []string{"sqlite", "select ", "panic", ".go:"} {
				if strings.Contains(strings.ToLower(string(r.Body)), leak) {
					t.Fatalf("problem leaks %q: %s", leak, r.Body)
				}
			}
			if after := f.state(); after != before {
				t.Fatalf("a bad request changed the store:\nbefore %s\nafter  %s", before, after)
			}
		})
	}
	// The transfer is still in transit, and the valid empty bodies of the
	// actions work.
	f.must(f.do("POST", receive, f.org.Owner, " "), 200)
}

// invForbidNegativeStock turns the org's allow_negative_stock setting off by
// writing the org row's settings JSON, the store the settings service reads
// (sqlite.orgSettings).
func invForbidNegativeStock(t *testing.T, tn *testNode, orgID string) {
	t.Helper()
	db, err := sql.Open("sqlite3", "file:"+filepath.Join(tn.N.Config.DataDir, "kassa.db")+"?_busy_timeout=10000")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if _, err := db.Exec(`UPDATE orgs SET settings = json_set(settings, '$.allow_negative_stock', json('false')) WHERE id = ?`, orgID); err != nil {
		t.Fatal(err)
	}
}

func TestInventoryNegativeStockForbidden(t *testing.T) {
	f := newInvFixture(t)
	f.adjust(map[string]any{"location_id": f.locA, "product_id": f.p1, "reason": "received", "quantity": 3})
	invForbidNegativeStock(t, f.tn, f.org.ID)
	outbox := f.tn.outboxLen()
	for _, c := range []struct {
		name, path string
		body       map[string]any
	}{
		{"theft beyond on-hand", "/inventory/stock/adjust", map[string]any{"location_id": f.locA, "product_id": f.p1, "reason": "theft", "quantity": 4}},
		{"correction below zero", "/inventory/stock/adjust", map[string]any{"location_id": f.locA, "product_id": f.p1, "reason": "correction", "quantity": -5}},
		{"damaged where there is none", "/inventory/stock/adjust", map[string]any{"location_id": f.locB, "product_id": f.p2, "reason": "damaged", "quantity": 1}},
		{"transfer more than on-hand", "/inventory/transfers", map[string]any{"from_location_id": f.locA, "to_location_id": f.locB,
			"lines": []any{map[string]any{"product_id": f.p1, "quantity": 2}, map[string]any{"product_id": f.p2, "quantity": 1}}}},
	} {
		t.Run(c.name, func(t *testing.T) {
			p := mustProblem(t, f.do("POST", c.path, f.org.Owner, c.body), 409, "conflict")
			if d := p["detail"].(string); !strings.Contains(d, "Coffee beans") && !strings.Contains(d, "Oat milk") {
				t.Fatalf("detail does not name the product: %s", d)
			}
		})
	}
	if f.tn.outboxLen() != outbox {
		t.Fatal("refused movements wrote change records")
	}
	if ts := f.all(f.org.Owner, "/inventory/transfers"); len(ts) != 0 {
		t.Fatalf("a refused transfer was stored: %v", ts)
	}
	f.wantStock("after refusals", [4]int64{3, 0, 0, 0})
	// Down to exactly zero is fine; a count is never negative.
	f.adjust(map[string]any{"location_id": f.locA, "product_id": f.p1, "reason": "wastage", "quantity": 3})
	f.adjust(map[string]any{"location_id": f.locA, "product_id": f.p1, "reason": "count", "quantity": 2})
	f.wantStock("after allowed movements", [4]int64{2, 0, 0, 0})
}

func TestInventoryOpenAPI(t *testing.T) {
	tn := MustStartNode(t, kassa.NodeHub, nil)
	r := tn.Do("GET", "/api/v1/openapi.json", "", nil)
	paths, _ := r.JSON()["paths"].(map[string]any)
	for p, methods := range map[string][]string{
		"/api/v1/inventory/stock":                  {"get"},
		"/api/v1/inventory/stock/low-stock":        {"get"},
		"/api/v1/inventory/stock/adjust":           {"post"},
		"/api/v1/inventory/movements":              {"get"},
		"/api/v1/inventory/transfers":              {"get", "post"},
		"/api/v1/inventory/transfers/{id}":         {"get"},
		"/api/v1/inventory/transfers/{id}/receive": {"post"},
		"/api/v1/inventory/transfers/{id}/cancel":  {"post"},
	} {
		ops, _ := paths[p].(map[string]any)
		for _, m := range methods {
			op, _ := ops[m].(map[string]any)
			if op == nil || op["summary"] == "" || op["x-required-scope"] == nil {
				t.Errorf("%s %s not documented: %v", m, p, ops)
			}
		}
	}
}
