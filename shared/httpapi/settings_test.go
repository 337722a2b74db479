package httpapi_test

import (
	"reflect"
	"testing"

	"kassa.dev/shared/kassa"
	"kassa.dev/sync/change"
)

// The org settings through HTTP over a real store: the defaults, owner-only
// changes with their one change record of entity "org", refused values,
// and the payment method configuration. The fixture is ordFixture of
// order_test.go.

// setDefaults are a new org's settings as the API shows them.
var setDefaults = map[string]any{
	"tax_rate_bps": 1000.0, "tax_inclusive": true, "refund_limit": 5000.0, "allow_negative_stock": true,
	"offline_card_limit": 10000.0, "offline_card_daily_limit": 100000.0, "gift_card_offline_limit": 0.0,
	"layby_min_deposit_bps": 1000.0, "layby_term_days": 56.0, "layby_termination_charge": 0.0, "tax_categories": []any{},
	"tip_max_percent": 100.0,
	"discount_limits": map[string]any{"manager": 10000.0, "cashier": 0.0, "partner": 10000.0},
	"payment_methods": []any{
		map[string]any{"method": "cash", "enabled": true}, map[string]any{"method": "card", "enabled": true},
		map[string]any{"method": "gift_card", "enabled": false}, map[string]any{"method": "external", "enabled": false},
		map[string]any{"method": "loyalty_points", "enabled": false}, map[string]any{"method": "store_credit", "enabled": true},
	},
}

// setOrgChanges returns the change records of the fixture's org row.
func (f *ordFixture) setOrgChanges() []change.Change {
	f.t.Helper()
	return f.tn.changes("org", f.org.ID)
}

// setWith returns a copy of the defaults with some settings replaced.
func setWith(changes map[string]any) map[string]any {
	out := map[string]any{}
	for k, v := range setDefaults {
		out[k] = v
	}
	for k, v := range changes {
		out[k] = v
	}
	return out
}

func TestSettingsDefaults(t *testing.T) {
	f := newOrdFixture(t, nil)
	for name, token := range map[string]string{"owner": "", "manager": f.manager, "cashier": f.cashier} {
		t.Run(name, func(t *testing.T) {
			got := f.must(f.do("GET", "/settings", token, nil), 200).Data()
			if !reflect.DeepEqual(got, setDefaults) {
				t.Fatalf("settings %v, want %v", got, setDefaults)
			}
		})
	}
	t.Run("without a token", func(t *testing.T) {
		mustProblem(t, f.tn.Do("GET", "/api/v1/settings", "", nil), 401, "unauthorized")
	})
}

func TestSettingsPatch(t *testing.T) {
	f := newOrdFixture(t, nil)
	want := setWith(nil)
	cases := []struct {
		name    string
		token   string
		body    any
		status  int
		kind    string
		field   string
		changes map[string]any // settings changed by a 200
		records int            // change records of the org written
	}{
		{name: "the tax rate", body: map[string]any{"tax_rate_bps": 825}, status: 200,
			changes: map[string]any{"tax_rate_bps": 825.0}, records: 1},
		{name: "everything at once", body: map[string]any{"tax_rate_bps": 1500, "tax_inclusive": false, "refund_limit": 20000,
			"allow_negative_stock": false, "offline_card_limit": 5000, "offline_card_daily_limit": 50000}, status: 200,
			changes: map[string]any{"tax_rate_bps": 1500.0, "tax_inclusive": false, "refund_limit": 20000.0,
				"allow_negative_stock": false, "offline_card_limit": 5000.0, "offline_card_daily_limit": 50000.0}, records: 1},
		{name: "the bounds", body: map[string]any{"tax_rate_bps": 0, "refund_limit": 0, "offline_card_limit": 1000000000000}, status: 200,
			changes: map[string]any{"tax_rate_bps": 0.0, "refund_limit": 0.0, "offline_card_limit": 1e12}, records: 1},
		{name: "nothing changes", body: map[string]any{"tax_rate_bps": 0, "tax_inclusive": false}, status: 200, records: 0},
		{name: "an empty patch", body: map[string]any{}, status: 200, records: 0},
		{name: "back to inclusive", body: map[string]any{"tax_inclusive": true, "allow_negative_stock": true}, status: 200,
			changes: map[string]any{"tax_inclusive": true, "allow_negative_stock": true}, records: 1},
		{name: "by a manager", token: "manager", body: map[string]any{"tax_rate_bps": 1000}, status: 403, kind: "forbidden"},
		{name: "by a cashier", token: "cashier", body: map[string]any{"refund_limit": 1000000}, status: 403, kind: "forbidden"},
		{name: "a negative tax rate", body: map[string]any{"tax_rate_bps": -1}, status: 422, kind: "validation", field: "tax_rate_bps"},
		{name: "a tax rate above 50 %", body: map[string]any{"tax_rate_bps": 5001}, status: 422, kind: "validation", field: "tax_rate_bps"},
		{name: "a null tax rate", body: map[string]any{"tax_rate_bps": nil}, status: 422, kind: "validation", field: "tax_rate_bps"},
		{name: "a fractional tax rate", body: map[string]any{"tax_rate_bps": 10.5}, status: 422, kind: "validation", field: "tax_rate_bps"},
		{name: "a tax rate as a string", body: map[string]any{"tax_rate_bps": "1000"}, status: 422, kind: "validation", field: "tax_rate_bps"},
		{name: "a null tax mode", body: map[string]any{"tax_inclusive": nil}, status: 422, kind: "validation", field: "tax_inclusive"},
		{name: "a tax mode as a string", body: map[string]any{"tax_inclusive": "yes"}, status: 422, kind: "validation", field: "tax_inclusive"},
		{name: "a negative refund limit", body: map[string]any{"refund_limit": -1}, status: 422, kind: "validation", field: "refund_limit"},
		{name: "a refund limit above 10^12", body: map[string]any{"refund_limit": 1000000000001}, status: 422, kind: "validation", field: "refund_limit"},
		{name: "a null refund limit", body: map[string]any{"refund_limit": nil}, status: 422, kind: "validation", field: "refund_limit"},
		{name: "a null stock rule", body: map[string]any{"allow_negative_stock": nil}, status: 422, kind: "validation", field: "allow_negative_stock"},
		{name: "a stock rule as a number", body: map[string]any{"allow_negative_stock": 1}, status: 422, kind: "validation", field: "allow_negative_stock"},
		{name: "a negative offline limit", body: map[string]any{"offline_card_limit": -5}, status: 422, kind: "validation", field: "offline_card_limit"},
		{name: "a null daily limit", body: map[string]any{"offline_card_daily_limit": nil}, status: 422, kind: "validation", field: "offline_card_daily_limit"},
		{name: "a gift card offline allowance", body: map[string]any{"gift_card_offline_limit": 20000}, status: 200,
			changes: map[string]any{"gift_card_offline_limit": 20000.0}, records: 1},
		{name: "a negative gift card offline allowance", body: map[string]any{"gift_card_offline_limit": -1}, status: 422, kind: "validation", field: "gift_card_offline_limit"},
		{name: "a null gift card offline allowance", body: map[string]any{"gift_card_offline_limit": nil}, status: 422, kind: "validation", field: "gift_card_offline_limit"},
		{name: "the lay-by terms", body: map[string]any{"layby_min_deposit_bps": 2000, "layby_term_days": 90, "layby_termination_charge": 1500}, status: 200,
			changes: map[string]any{"layby_min_deposit_bps": 2000.0, "layby_term_days": 90.0, "layby_termination_charge": 1500.0}, records: 1},
		{name: "a lay-by term of no days", body: map[string]any{"layby_term_days": 0}, status: 422, kind: "validation", field: "layby_term_days"},
		{name: "a lay-by deposit above 100 %", body: map[string]any{"layby_min_deposit_bps": 10001}, status: 422, kind: "validation", field: "layby_min_deposit_bps"},
		{name: "tax categories", body: map[string]any{"tax_categories": []any{map[string]any{"id": "gst-free", "name": "GST-free", "rate_bps": 0}}}, status: 200,
			changes: map[string]any{"tax_categories": []any{map[string]any{"id": "gst-free", "name": "GST-free", "rate_bps": 0.0}}}, records: 1},
		{name: "null tax categories", body: map[string]any{"tax_categories": nil}, status: 422, kind: "validation", field: "tax_categories"},
		{name: "a tax category above 50 %", body: map[string]any{"tax_categories": []any{map[string]any{"id": "lux", "name": "Luxury", "rate_bps": 5001}}},
			status: 422, kind: "validation", field: "tax_categories"},
		{name: "a tax category without a key", body: map[string]any{"tax_categories": []any{map[string]any{"id": "Lux Goods", "name": "Luxury", "rate_bps": 100}}},
			status: 422, kind: "validation", field: "tax_categories"},
		{name: "tips up to 20 %", body: map[string]any{"tip_max_percent": 20}, status: 200, changes: map[string]any{"tip_max_percent": 20.0}, records: 1},
		{name: "tips above 1000 %", body: map[string]any{"tip_max_percent": 1001}, status: 422, kind: "validation", field: "tip_max_percent"},
		{name: "a negative termination charge", body: map[string]any{"layby_termination_charge": -1}, status: 422, kind: "validation", field: "layby_termination_charge"},
		{name: "one bad field spoils the patch", body: map[string]any{"tax_rate_bps": 700, "refund_limit": -1}, status: 422, kind: "validation", field: "refund_limit"},
		{name: "an unknown field", body: map[string]any{"currency": "EUR"}, status: 422, kind: "validation", field: "currency"},
		{name: "payment methods are not patched here", body: map[string]any{"payment_methods": []any{}}, status: 422, kind: "validation", field: "payment_methods"},
		{name: "malformed JSON", body: `{"tax_rate_bps":`, status: 400, kind: "bad-request"},
		{name: "an empty body", body: "", status: 400, kind: "bad-request"},
		{name: "an array", body: `[{"tax_rate_bps":1}]`, status: 400, kind: "bad-request"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			token := map[string]string{"": "", "manager": f.manager, "cashier": f.cashier}[tc.token]
			before, beforeOrg := f.tn.outboxLen(), len(f.setOrgChanges())
			r := f.do("PATCH", "/settings", token, tc.body)
			if tc.kind != "" {
				f.refused(t, r, tc.status, tc.kind, tc.field, before)
			} else {
				for k, v := range tc.changes {
					want[k] = v
				}
				if got := f.must(r, 200).Data(); !reflect.DeepEqual(got, want) {
					t.Fatalf("answer %v, want %v", got, want)
				}
				cs := f.setOrgChanges()
				if len(cs)-beforeOrg != tc.records || f.tn.outboxLen()-before != tc.records {
					t.Fatalf("%d change records of the org (%d in all), want %d", len(cs)-beforeOrg, f.tn.outboxLen()-before, tc.records)
				}
				if tc.records == 1 {
					c := cs[len(cs)-1]
					if c.Entity != "org" || c.EntityID != f.org.ID || c.OrgID != f.org.ID || c.Op != change.OpUpdate || c.LocationID != "" {
						t.Fatalf("change record %+v", c)
					}
					st, _ := c.Fields["settings"].(map[string]any)
					for k, v := range tc.changes {
						if !reflect.DeepEqual(st[k], v) {
							t.Fatalf("the change record's settings.%s = %v, want %v: %v", k, st[k], v, c.Fields)
						}
					}
				}
			}
			if got := f.must(f.do("GET", "/settings", f.cashier, nil), 200).Data(); !reflect.DeepEqual(got, want) {
				t.Fatalf("GET %v, want %v", got, want)
			}
		})
	}
}

func TestSettingsPaymentMethods(t *testing.T) {
	f := newOrdFixture(t, nil)
	kitchen := f.tn.MustUser(f.org, "k@order.test", kassa.RoleKitchen)
	methods := func(cash, card, gift, ext bool) map[string]any {
		return map[string]any{"methods": []any{
			map[string]any{"method": "cash", "enabled": cash}, map[string]any{"method": "card", "enabled": card},
			map[string]any{"method": "gift_card", "enabled": gift}, map[string]any{"method": "external", "enabled": ext},
			map[string]any{"method": "loyalty_points", "enabled": false}, map[string]any{"method": "store_credit", "enabled": true},
		}}
	}
	entry := func(method any, enabled any) map[string]any {
		return map[string]any{"method": method, "enabled": enabled}
	}
	put := func(entries ...any) map[string]any { return map[string]any{"methods": entries} }
	want := methods(true, true, false, false)
	t.Run("the defaults", func(t *testing.T) {
		for _, token := range []string{"", f.manager, f.cashier} {
			if got := f.must(f.do("GET", "/payments/methods", token, nil), 200).Data(); !reflect.DeepEqual(got, want) {
				t.Fatalf("methods %v", got)
			}
		}
		mustProblem(t, f.do("GET", "/payments/methods", kitchen, nil), 403, "forbidden")
	})
	cases := []struct {
		name    string
		token   string
		body    any
		status  int
		kind    string
		field   string
		want    map[string]any // after a 200
		records int
	}{
		{name: "enable gift cards", body: put(entry("gift_card", true)), status: 200, want: methods(true, true, true, false), records: 1},
		{name: "several at once, in any order", body: put(entry("external", true), entry("cash", false)), status: 200,
			want: methods(false, true, true, true), records: 1},
		{name: "nothing changes", body: put(entry("external", true)), status: 200, want: methods(false, true, true, true), records: 0},
		{name: "an empty list", body: put(), status: 200, want: methods(false, true, true, true), records: 0},
		{name: "cash back on", body: put(entry("cash", true), entry("gift_card", false)), status: 200, want: methods(true, true, false, true), records: 1},
		{name: "by a manager", token: f.manager, body: put(entry("card", false)), status: 403, kind: "forbidden"},
		{name: "by a cashier", token: f.cashier, body: put(entry("card", false)), status: 403, kind: "forbidden"},
		{name: "by the kitchen", token: kitchen, body: put(entry("card", false)), status: 403, kind: "forbidden"},
		{name: "an unknown method", body: put(entry("cheque", true)), status: 422, kind: "validation", field: "methods"},
		{name: "no method", body: put(map[string]any{"enabled": true}), status: 422, kind: "validation", field: "methods"},
		{name: "a method twice", body: put(entry("card", true), entry("card", false)), status: 422, kind: "validation", field: "methods"},
		{name: "enabled as a string", body: put(entry("card", "no")), status: 422, kind: "validation"},
		{name: "an unknown field in an entry", body: put(map[string]any{"method": "card", "enabled": true, "fee": 1}), status: 422, kind: "validation"},
		{name: "methods not a list", body: map[string]any{"methods": "card"}, status: 422, kind: "validation", field: "methods"},
		{name: "an unknown field", body: map[string]any{"methods": []any{}, "default": "cash"}, status: 422, kind: "validation", field: "default"},
		{name: "malformed JSON", body: `{"methods":[`, status: 400, kind: "bad-request"},
		{name: "an empty body", body: "", status: 400, kind: "bad-request"},
		{name: "a bare list", body: `[{"method":"card","enabled":true}]`, status: 400, kind: "bad-request"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			before, beforeOrg := f.tn.outboxLen(), len(f.setOrgChanges())
			r := f.do("PUT", "/payments/methods", tc.token, tc.body)
			if tc.kind != "" {
				f.refused(t, r, tc.status, tc.kind, tc.field, before)
			} else {
				want = tc.want
				if got := f.must(r, 200).Data(); !reflect.DeepEqual(got, want) {
					t.Fatalf("answer %v, want %v", got, want)
				}
				if n := len(f.setOrgChanges()) - beforeOrg; n != tc.records || f.tn.outboxLen()-before != tc.records {
					t.Fatalf("%d change records of the org, want %d", n, tc.records)
				}
			}
			if got := f.must(f.do("GET", "/payments/methods", f.cashier, nil), 200).Data(); !reflect.DeepEqual(got, want) {
				t.Fatalf("GET %v, want %v", got, want)
			}
			if got := f.must(f.do("GET", "/settings", "", nil), 200).Data()["payment_methods"]; !reflect.DeepEqual(got, want["methods"]) {
				t.Fatalf("settings payment_methods %v, want %v", got, want["methods"])
			}
		})
	}
	t.Run("a method change leaves the other settings", func(t *testing.T) {
		got := f.must(f.do("GET", "/settings", "", nil), 200).Data()
		for k, v := range setDefaults {
			if k != "payment_methods" && !reflect.DeepEqual(got[k], v) {
				t.Fatalf("%s = %v, want %v", k, got[k], v)
			}
		}
	})
}
