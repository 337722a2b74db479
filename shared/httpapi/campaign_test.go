package httpapi_test

import (
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"kassa.dev/shared/kassa"
)

// campaignShop is an org on a node with a location, a category and two products.
type campaignShop struct {
	tn                            *testNode
	org                           *testOrg
	loc, pastries, coffee, pastry string
}

func mustCampaignShop(t *testing.T, kind string) *campaignShop {
	t.Helper()
	tn := MustStartNode(t, kind, nil)
	s := &campaignShop{tn: tn, org: tn.MustOrg("Campaign Cafe")}
	s.loc = s.create(t, "/locations", map[string]any{"name": "Main St", "timezone": "Australia/Sydney"})
	s.pastries = s.create(t, "/catalog/categories", map[string]any{"name": "Pastries"})
	s.coffee = s.create(t, "/catalog/products", map[string]any{"name": "Flat white", "sku": "FW", "base_price": 450})
	s.pastry = s.create(t, "/catalog/products", map[string]any{"name": "Croissant", "sku": "CR", "base_price": 400, "category_id": s.pastries})
	return s
}

func (s *campaignShop) create(t *testing.T, path string, body any) string {
	t.Helper()
	r := s.tn.Do("POST", "/api/v1"+path, s.org.Owner, body)
	if r.Status != 201 {
		t.Fatalf("POST %s: %d %s", path, r.Status, r.Body)
	}
	return r.Data()["id"].(string)
}

// launch creates a campaign and launches it.
func (s *campaignShop) launch(t *testing.T, body map[string]any) string {
	t.Helper()
	id := s.create(t, "/campaigns", body)
	if r := s.tn.Do("POST", "/api/v1/campaigns/"+id+"/launch", s.org.Owner, nil); r.Status != 200 {
		t.Fatalf("launch: %d %s", r.Status, r.Body)
	}
	return id
}

func (s *campaignShop) pastryCampaign(extra map[string]any) map[string]any {
	b := map[string]any{"name": "10 % off pastries", "type": "discount", "location_ids": []string{s.loc},
		"rules": []any{map[string]any{"type": "category_discount", "discount_type": "percent", "value": 1000, "category_ids": []string{s.pastries}}}}
	for k, v := range extra {
		b[k] = v
	}
	return b
}

func TestCampaignLifecycle(t *testing.T) {
	for _, kind := range []string{kassa.NodeHub, kassa.NodeEdge} {
		t.Run(kind, func(t *testing.T) {
			s := mustCampaignShop(t, kind)
			tn, owner := s.tn, s.org.Owner
			r := tn.Do("POST", "/api/v1/campaigns", owner, s.pastryCampaign(map[string]any{"voucher_code": "freecoffee"}))
			if r.Status != 201 || r.Data()["status"] != "draft" || r.Data()["voucher_code"] != "FREECOFFEE" || r.Header.Get("Location") == "" {
				t.Fatalf("create: %d %s", r.Status, r.Body)
			}
			id := r.Data()["id"].(string)
			// A draft's rules change freely.
			if r = tn.Do("PATCH", "/api/v1/campaigns/"+id, owner, map[string]any{"usage_limit": 100}); r.Status != 200 || r.Data()["usage_limit"] != float64(100) {
				t.Fatalf("patch a draft: %d %s", r.Status, r.Body)
			}
			// PATCH cannot launch; launch does, once.
			mustProblem(t, tn.Do("PATCH", "/api/v1/campaigns/"+id, owner, map[string]any{"status": "active"}), 409, "conflict")
			if r = tn.Do("POST", "/api/v1/campaigns/"+id+"/launch", owner, nil); r.Status != 200 || r.Data()["status"] != "active" {
				t.Fatalf("launch: %d %s", r.Status, r.Body)
			}
			mustProblem(t, tn.Do("POST", "/api/v1/campaigns/"+id+"/launch", owner, nil), 409, "conflict")
			// Running: the rules are locked until paused; the name is not.
			rules := []any{map[string]any{"type": "order_discount", "discount_type": "amount", "value": 100}}
			mustProblem(t, tn.Do("PATCH", "/api/v1/campaigns/"+id, owner, map[string]any{"rules": rules}), 409, "conflict")
			if r = tn.Do("PATCH", "/api/v1/campaigns/"+id, owner, map[string]any{"name": "Pastry week"}); r.Status != 200 || r.Data()["name"] != "Pastry week" {
				t.Fatalf("rename: %d %s", r.Status, r.Body)
			}
			if r = tn.Do("PATCH", "/api/v1/campaigns/"+id, owner, map[string]any{"status": "paused", "rules": rules}); r.Status != 200 ||
				r.Data()["status"] != "paused" || len(r.Data()["rules"].([]any)) != 1 || r.Data()["rules"].([]any)[0].(map[string]any)["type"] != "order_discount" {
				t.Fatalf("pause and edit: %d %s", r.Status, r.Body)
			}
			for _, step := range []struct {
				status string
				want   int
			}{{"active", 200}, {"ended", 200}, {"active", 409}} {
				r = tn.Do("PATCH", "/api/v1/campaigns/"+id, owner, map[string]any{"status": step.status})
				if r.Status != step.want {
					t.Fatalf("→ %s: %d %s", step.status, r.Status, r.Body)
				}
			}
			// A launch with starts_at ahead is scheduled, and active once the clock gets there.
			future := s.create(t, "/campaigns", s.pastryCampaign(map[string]any{"starts_at": tn.Clock.Now().Add(5 * time.Minute)}))
			if r = tn.Do("POST", "/api/v1/campaigns/"+future+"/launch", owner, map[string]any{}); r.Data()["status"] != "scheduled" {
				t.Fatalf("launch ahead: %s", r.Body)
			}
			tn.Clock.Advance(6 * time.Minute) // within the access token's life
			if r = tn.Do("GET", "/api/v1/campaigns/"+future, owner, nil); r.Data()["status"] != "active" {
				t.Fatalf("past its start: %s", r.Body)
			}
			if l := tn.Do("GET", "/api/v1/campaigns", owner, nil).List(); len(l) != 2 {
				t.Fatalf("list: %v", l)
			}
			// No redemptions: zeros, never a 500; /stats is the same.
			for _, path := range []string{"/analytics", "/stats"} {
				r = tn.Do("GET", "/api/v1/campaigns/"+future+path, owner, nil)
				d := r.Data()
				if r.Status != 200 || d["redemptions"] != float64(0) || d["discount_given"] != float64(0) || d["revenue"] != float64(0) ||
					len(d["by_day"].([]any)) != 0 || d["currency"] != "AUD" {
					t.Fatalf("%s: %d %s", path, r.Status, r.Body)
				}
			}
		})
	}
}

func TestCampaignBadInputIs422AndStoresNothing(t *testing.T) {
	s := mustCampaignShop(t, kassa.NodeHub)
	other := mustCampaignShop(t, kassa.NodeHub) // another org's product, on another node: unknown here
	for _, c := range []struct {
		field string
		body  map[string]any
	}{
		{"type", map[string]any{"type": "sale"}},
		{"rules", map[string]any{"rules": []any{}}},
		{"rules[0].value", map[string]any{"rules": []any{map[string]any{"type": "order_discount", "discount_type": "percent", "value": 20000}}}},
		{"rules[0].get_quantity", map[string]any{"rules": []any{map[string]any{"type": "buy_x_get_y", "discount_type": "percent", "value": 10000,
			"product_ids": []string{s.coffee}, "buy_quantity": 2}}}},
		{"rules", map[string]any{"rules": []any{map[string]any{"type": "product_discount", "discount_type": "percent", "value": 1000,
			"product_ids": []string{other.coffee}}}}},
		{"rules[0].discount_type", map[string]any{"rules": []any{map[string]any{"type": "order_discount", "discount_type": "half", "value": 100}}}},
		{"rules[0].discount_type", map[string]any{"rules": []any{map[string]any{"type": "category_discount", "value": 100,
			"category_ids": []string{s.pastries}}}}},
		{"voucher_code", map[string]any{"voucher_code": "a b"}},
		{"schedule.from", map[string]any{"schedule": map[string]any{"from": "7am", "to": "09:00"}}},
		{"ends_at", map[string]any{"starts_at": "2026-05-02T00:00:00Z", "ends_at": "2026-05-01T00:00:00Z"}},
		{"location_ids", map[string]any{"location_ids": []string{other.loc}}},
	} {
		p := mustProblem(t, s.tn.Do("POST", "/api/v1/campaigns", s.org.Owner, s.pastryCampaign(c.body)), 422, "validation")
		if errs, _ := p["errors"].([]any); len(errs) == 0 || errs[0].(map[string]any)["field"] != c.field {
			t.Errorf("%s: %v", c.field, p["errors"])
		}
	}
	// An unknown field is refused too, by name.
	p := mustProblem(t, s.tn.Do("POST", "/api/v1/campaigns", s.org.Owner, s.pastryCampaign(map[string]any{"discount": 5})), 422, "validation")
	if errs, _ := p["errors"].([]any); len(errs) == 0 || errs[0].(map[string]any)["field"] != "discount" {
		t.Errorf("unknown field: %v", p["errors"])
	}
	if l := s.tn.Do("GET", "/api/v1/campaigns", s.org.Owner, nil).List(); len(l) != 0 {
		t.Fatalf("stored: %v", l)
	}
	// A second live campaign cannot take the same code.
	s.create(t, "/campaigns", s.pastryCampaign(map[string]any{"voucher_code": "FREECOFFEE"}))
	mustProblem(t, s.tn.Do("POST", "/api/v1/campaigns", s.org.Owner, s.pastryCampaign(map[string]any{"voucher_code": "freecoffee"})), 422, "validation")
}

func TestCampaignScopes(t *testing.T) {
	s := mustCampaignShop(t, kassa.NodeHub)
	id := s.create(t, "/campaigns", s.pastryCampaign(nil))
	cashier := s.tn.MustUser(s.org, "cashier@cafe.test", kassa.RoleCashier)
	for _, c := range []struct {
		method, path string
		want         int
	}{
		{"GET", "/campaigns", 200}, {"GET", "/campaigns/" + id, 200},
		{"POST", "/campaigns", 403}, {"PATCH", "/campaigns/" + id, 403}, {"POST", "/campaigns/" + id + "/launch", 403},
		{"GET", "/campaigns/" + id + "/analytics", 403},
	} {
		var body any
		if c.method != "GET" {
			body = s.pastryCampaign(nil)
			if c.method == "PATCH" {
				body = map[string]any{"name": "x"}
			}
		}
		if r := s.tn.Do(c.method, "/api/v1"+c.path, cashier, body); r.Status != c.want {
			t.Errorf("cashier %s %s: %d, want %d", c.method, c.path, r.Status, c.want)
		}
	}
	if r := s.tn.Do("GET", fmt.Sprintf("/api/v1/campaigns/%s", id), s.org.Owner, nil); r.Data()["status"] != "draft" {
		t.Fatalf("the cashier changed it: %s", r.Body)
	}
}

// TestOrdersArePricedWithCampaigns: at either node, an order gets every
// automatic campaign that applies and the voucher it gives, shows the
// discount per line and per campaign, earns multiplied points, and the
// campaign's analytics count it; a voucher no campaign has, or one used
// up, is 422 and stores nothing.
func TestOrdersArePricedWithCampaigns(t *testing.T) {
	for _, kind := range []string{kassa.NodeHub, kassa.NodeEdge} {
		t.Run(kind, func(t *testing.T) {
			s := mustCampaignShop(t, kind)
			tn, owner := s.tn, s.org.Owner
			launch := func(body map[string]any) string { return s.launch(t, body) }
			pastry := launch(s.pastryCampaign(nil))
			voucher := launch(map[string]any{"name": "Free coffee", "type": "offer", "voucher_code": "FREECOFFEE", "usage_limit": 1,
				"rules": []any{map[string]any{"type": "product_discount", "discount_type": "percent", "value": 10000, "product_ids": []string{s.coffee}}}})
			double := launch(map[string]any{"name": "Double points", "type": "promotion",
				"rules": []any{map[string]any{"type": "points_multiplier", "value": 20000}}})
			// A campaign at another location and a draft give nothing here.
			elsewhere := s.create(t, "/locations", map[string]any{"name": "Back St", "timezone": "UTC"})
			launch(map[string]any{"name": "Elsewhere", "type": "discount", "location_ids": []string{elsewhere},
				"rules": []any{map[string]any{"type": "order_discount", "discount_type": "percent", "value": 5000}}})
			s.create(t, "/campaigns", map[string]any{"name": "Draft", "type": "discount",
				"rules": []any{map[string]any{"type": "order_discount", "discount_type": "percent", "value": 5000}}})

			s.create(t, "/loyalty/programs", map[string]any{"name": "Beans", "points_per_unit": 1, "redemption_value": 1})
			cust := s.create(t, "/customers", map[string]any{"first_name": "Ann", "email": "ann@cafe.test"})
			s.create(t, "/loyalty/accounts", map[string]any{"customer_id": cust})
			order := func(code any) *resp {
				return tn.Do("POST", "/api/v1/orders", owner, map[string]any{"location_id": s.loc, "customer_id": cust, "voucher_code": code,
					"line_items": []any{map[string]any{"product_id": s.coffee, "quantity": 1}, map[string]any{"product_id": s.pastry, "quantity": 2}}})
			}
			p := mustProblem(t, order("NOSUCHCODE"), 422, "validation")
			if errs, _ := p["errors"].([]any); len(errs) == 0 || errs[0].(map[string]any)["field"] != "voucher_code" {
				t.Fatalf("unknown voucher: %v", p["errors"])
			}
			r := order("freecoffee")
			if r.Status != 201 {
				t.Fatalf("order: %d %s", r.Status, r.Body)
			}
			o := r.Data()
			lines := o["line_items"].([]any)
			coffee, pastries := lines[0].(map[string]any), lines[1].(map[string]any)
			if coffee["discount"] != float64(450) || pastries["discount"] != float64(80) || o["discount_total"] != float64(530) || o["voucher_code"] != "FREECOFFEE" {
				t.Fatalf("discounts: %s", r.Body)
			}
			part := func(l map[string]any) map[string]any { return l["campaign_discounts"].([]any)[0].(map[string]any) }
			if part(coffee)["campaign_id"] != voucher || part(pastries)["campaign_id"] != pastry || part(pastries)["amount"] != float64(80) {
				t.Fatalf("line parts: %s", r.Body)
			}
			gave := map[string]map[string]any{}
			for _, c := range o["campaigns"].([]any) {
				gave[c.(map[string]any)["campaign_id"].(string)] = c.(map[string]any)
			}
			if len(gave) != 3 || gave[voucher]["amount"] != float64(450) || gave[pastry]["amount"] != float64(80) ||
				gave[double]["points_multiplier"] != float64(20000) || gave[double]["amount"] != float64(0) {
				t.Fatalf("campaigns: %v", o["campaigns"])
			}
			// GET shows what the create answered.
			if g := tn.Do("GET", "/api/v1/orders/"+o["id"].(string), owner, nil).Data(); fmt.Sprint(g["campaigns"], g["line_items"].([]any)[0].(map[string]any)["campaign_discounts"]) !=
				fmt.Sprint(o["campaigns"], coffee["campaign_discounts"]) {
				t.Fatalf("GET differs: %v", g)
			}
			total := o["total"].(float64)
			if r := tn.Do("POST", "/api/v1/payments/initiate", owner, map[string]any{"order_id": o["id"], "amount": total, "method": "cash"}); r.Status != 201 && r.Status != 200 {
				t.Fatalf("pay: %d %s", r.Status, r.Body)
			}
			done := tn.Do("POST", "/api/v1/orders/"+o["id"].(string)+"/complete", owner, nil)
			if want := 2 * float64(int64(total)/100); done.Status != 200 || done.Data()["loyalty_points_earned"] != want {
				t.Fatalf("complete: want %v points: %d %s", want, done.Status, done.Body)
			}
			st := tn.Do("GET", "/api/v1/campaigns/"+voucher+"/analytics", owner, nil).Data()
			byLoc := st["by_location"].([]any)
			if st["redemptions"] != float64(1) || st["orders"] != float64(1) || st["discount_given"] != float64(450) || st["revenue"] != total ||
				len(byLoc) != 1 || byLoc[0].(map[string]any)["key"] != s.loc || len(st["by_day"].([]any)) != 1 {
				t.Fatalf("analytics: %v", st)
			}
			// The voucher's one use is spent; the automatic campaigns still apply.
			mustProblem(t, order("FREECOFFEE"), 422, "validation")
			if again := order(nil).Data(); again["discount_total"] != float64(80) {
				t.Fatalf("without the voucher: %v", again)
			}
			// Paused, it stops pricing at once; resumed, it prices again.
			for _, step := range []struct {
				status string
				want   float64
			}{{"paused", 0}, {"active", 80}} {
				if r := tn.Do("PATCH", "/api/v1/campaigns/"+pastry, owner, map[string]any{"status": step.status}); r.Status != 200 {
					t.Fatalf("%s: %d %s", step.status, r.Status, r.Body)
				}
				if got := order(nil).Data()["discount_total"]; got != step.want {
					t.Fatalf("%s: discount %v, want %v", step.status, got, step.want)
				}
			}
		})
	}
}

// TestConcurrentOrdersTakeTheLastUseOnce sends many orders at once for a
// campaign with one use left: its limits are checked in the order's unit
// of work, so exactly one order gets it. A voucher's losers are a 422 on
// voucher_code with nothing stored; an automatic campaign's are priced
// without it.
func TestConcurrentOrdersTakeTheLastUseOnce(t *testing.T) {
	s := mustCampaignShop(t, kassa.NodeEdge)
	tn, owner := s.tn, s.org.Owner
	launch := func(body map[string]any) string { return s.launch(t, body) }
	free := []any{map[string]any{"type": "product_discount", "discount_type": "percent", "value": 10000, "product_ids": []string{s.coffee}}}
	ann := s.create(t, "/customers", map[string]any{"first_name": "Ann", "email": "ann@cafe.test"})
	const n = 12
	race := func(code any, customer any) []*resp {
		out := make([]*resp, n)
		var wg sync.WaitGroup
		start := make(chan struct{})
		for i := range out {
			wg.Add(1)
			go func() {
				defer wg.Done()
				<-start
				out[i] = tn.Do("POST", "/api/v1/orders", owner, map[string]any{"location_id": s.loc, "voucher_code": code, "customer_id": customer,
					"line_items": []any{map[string]any{"product_id": s.coffee, "quantity": 1}}})
			}()
		}
		close(start)
		wg.Wait()
		return out
	}
	orders := func() int { return len(tn.Do("GET", "/api/v1/orders?limit=100", owner, nil).List()) }
	for _, c := range []struct {
		name     string
		campaign map[string]any
		code     any
	}{
		{"usage_limit voucher", map[string]any{"name": "Last coffee", "type": "offer", "voucher_code": "LASTONE", "usage_limit": 1, "rules": free}, "LASTONE"},
		{"per_customer_limit voucher", map[string]any{"name": "One each", "type": "offer", "voucher_code": "ONEEACH", "per_customer_limit": 1, "rules": free}, "ONEEACH"},
		{"usage_limit automatic", map[string]any{"name": "First free", "type": "offer", "usage_limit": 1, "rules": free}, nil},
	} {
		t.Run(c.name, func(t *testing.T) {
			id := launch(c.campaign)
			before := orders()
			won, lost := 0, 0
			for _, r := range race(c.code, ann) {
				switch {
				case r.Status == 201 && r.Data()["discount_total"] == float64(450):
					won++
				case c.code == nil && r.Status == 201 && r.Data()["discount_total"] == float64(0):
					lost++
				case c.code != nil && r.Status == 422:
					if p := mustProblem(t, r, 422, "validation"); p["errors"].([]any)[0].(map[string]any)["field"] != "voucher_code" {
						t.Fatalf("loser's problem: %v", p)
					}
					lost++
				default:
					t.Fatalf("unexpected answer: %d %s", r.Status, r.Body)
				}
			}
			st := tn.Do("GET", "/api/v1/campaigns/"+id+"/analytics", owner, nil).Data()
			stored := orders() - before
			if won != 1 || lost != n-1 || st["redemptions"] != float64(1) || (c.code != nil && stored != 1) || (c.code == nil && stored != n) {
				t.Fatalf("won %d, lost %d, redemptions %v, orders stored %d: want exactly one use", won, lost, st["redemptions"], stored)
			}
			// End it so it does not price the next case's orders.
			if r := tn.Do("PATCH", "/api/v1/campaigns/"+id, owner, map[string]any{"status": "ended"}); r.Status != 200 {
				t.Fatalf("end: %d %s", r.Status, r.Body)
			}
		})
	}
}

// TestCampaignAnalyticsCountRefunds: a refund of an order that used a
// campaign shows in its analytics as refunded and net revenue (totals,
// per day and per location), while revenue and discount stay as sold.
func TestCampaignAnalyticsCountRefunds(t *testing.T) {
	s := mustCampaignShop(t, kassa.NodeHub)
	tn, owner := s.tn, s.org.Owner
	id := s.launch(t, s.pastryCampaign(nil))
	r := tn.Do("POST", "/api/v1/orders", owner, map[string]any{"location_id": s.loc,
		"line_items": []any{map[string]any{"product_id": s.pastry, "quantity": 2}}})
	if r.Status != 201 || r.Data()["discount_total"] != float64(80) {
		t.Fatalf("order: %d %s", r.Status, r.Body)
	}
	oid, total := r.Data()["id"].(string), r.Data()["total"].(float64)
	for _, step := range []struct{ path, body string }{{"/payments/initiate", "pay"}, {"/orders/" + oid + "/complete", ""}, {"/orders/" + oid + "/refund", "refund"}} {
		var body any
		switch step.body {
		case "pay":
			body = map[string]any{"order_id": oid, "amount": total, "method": "cash"}
		case "refund":
			body = map[string]any{"amount": 300, "reason": "stale"}
		}
		if r := tn.Do("POST", "/api/v1"+step.path, owner, body); r.Status != 200 && r.Status != 201 {
			t.Fatalf("%s: %d %s", step.path, r.Status, r.Body)
		}
	}
	st := tn.Do("GET", "/api/v1/campaigns/"+id+"/analytics", owner, nil).Data()
	want := fmt.Sprint(total, 300, total-300, 80)
	if got := fmt.Sprint(st["revenue"], st["refunded"], st["net_revenue"], st["discount_given"]); got != want {
		t.Fatalf("revenue, refunded, net, discount = %s, want %s (%v)", got, want, st)
	}
	for _, part := range []string{"by_day", "by_location"} {
		p := st[part].([]any)[0].(map[string]any)
		if got := fmt.Sprint(p["revenue"], p["refunded"], p["net_revenue"], p["discount_given"]); got != want {
			t.Fatalf("%s: %s, want %s", part, got, want)
		}
	}
}

// TestCampaignListFiltersByStatus: ?status= lists the campaigns in that
// state as they are shown — a scheduled campaign counts as active once the
// clock passes starts_at, and as ended once it passes ends_at — and an
// unknown status is a 400.
func TestCampaignListFiltersByStatus(t *testing.T) {
	s := mustCampaignShop(t, kassa.NodeHub)
	tn, owner := s.tn, s.org.Owner
	now := tn.Clock.Now()
	made := map[string]string{}
	for _, c := range []struct {
		name  string
		extra map[string]any
		then  []string // launch, then PATCH statuses
	}{
		{"draft", nil, nil},
		{"active", nil, []string{"launch"}},
		{"paused", nil, []string{"launch", "paused"}},
		{"ended", nil, []string{"launch", "ended"}},
		{"scheduled", map[string]any{"starts_at": now.Add(2 * time.Minute).Format(time.RFC3339)}, []string{"launch"}},
		{"runs out", map[string]any{"ends_at": now.Add(4 * time.Minute).Format(time.RFC3339)}, []string{"launch"}},
	} {
		id := s.create(t, "/campaigns", s.pastryCampaign(c.extra))
		made[id] = c.name
		for _, step := range c.then {
			r := tn.Do("PATCH", "/api/v1/campaigns/"+id, owner, map[string]any{"status": step})
			if step == "launch" {
				r = tn.Do("POST", "/api/v1/campaigns/"+id+"/launch", owner, nil)
			}
			if r.Status != 200 {
				t.Fatalf("%s %s: %d %s", c.name, step, r.Status, r.Body)
			}
		}
	}
	listed := func(status string) string {
		t.Helper()
		r := tn.Do("GET", "/api/v1/campaigns?status="+status, owner, nil)
		if r.Status != 200 {
			t.Fatalf("list %s: %d %s", status, r.Status, r.Body)
		}
		var names []string
		for _, c := range r.List() {
			if c.(map[string]any)["status"] != status {
				t.Fatalf("?status=%s listed %v", status, c)
			}
			names = append(names, made[c.(map[string]any)["id"].(string)])
		}
		slices.Sort(names)
		return strings.Join(names, ",")
	}
	for status, want := range map[string]string{"draft": "draft", "scheduled": "scheduled", "active": "active,runs out", "paused": "paused", "ended": "ended"} {
		if got := listed(status); got != want {
			t.Errorf("?status=%s: %s, want %s", status, got, want)
		}
	}
	tn.Clock.Advance(3 * time.Minute) // past starts_at
	if got := listed("active"); got != "active,runs out,scheduled" {
		t.Errorf("after starts_at: active %s", got)
	}
	tn.Clock.Advance(2 * time.Minute) // past ends_at
	if got := listed("ended"); got != "ended,runs out" {
		t.Errorf("after ends_at: ended %s", got)
	}
	mustProblem(t, tn.Do("GET", "/api/v1/campaigns?status=running", owner, nil), 400, "bad-request")
}
