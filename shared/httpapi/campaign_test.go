package httpapi_test

import (
	"fmt"
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
