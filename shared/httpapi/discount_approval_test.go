package httpapi_test

import (
	"testing"

	"kassa.dev/shared/kassa"
)

// TestADiscountAboveTheLimitRecordsWhoApproved (issue 26, the till's
// manager approval, as refunds in session 11): a cashier's order with a
// manual discount above the cashier's discount_limits is 403 alone; with
// approval_token, a manager's sign-in of the org, it is the cashier's
// order (created_by) and records the manager as approved_by, the quote
// too. A cashier's token approves nothing (403), a token that is not a
// sign-in is 422 naming approval_token, and each changes nothing. Within
// the limit an approval is not recorded.
func TestADiscountAboveTheLimitRecordsWhoApproved(t *testing.T) {
	f := newOrdFixture(t, nil) // cashiers: no manual discount
	cashier2 := f.tn.MustUser(f.org, "c2@order.test", kassa.RoleCashier)
	idOf := func(token string) string {
		return f.must(f.do("GET", "/auth/me", token, nil), 200).Data()["id"].(string)
	}
	tea := f.product("Tea", "TEA-1", 1000)
	body := func(approval string, bps int) map[string]any {
		return map[string]any{"location_id": f.locA, "line_items": []any{map[string]any{"product_id": tea, "quantity": 1}},
			"discount": map[string]any{"type": "percent", "value": bps}, "approval_token": approval}
	}
	f.refused(t, f.do("POST", "/orders", f.cashier, body("", 1000)), 403, "forbidden", "", f.tn.outboxLen())
	f.refused(t, f.do("POST", "/orders", f.cashier, body(cashier2, 1000)), 403, "forbidden", "", f.tn.outboxLen())
	f.refused(t, f.do("POST", "/orders", f.cashier, body("not-a-token", 1000)), 422, "validation", "approval_token", f.tn.outboxLen())
	mustProblem(t, f.do("POST", "/orders/quote", f.cashier, body("", 1000)), 403, "forbidden")

	q := f.must(f.do("POST", "/orders/quote", f.cashier, body(f.manager, 1000)), 200).Data()
	o := f.must(f.do("POST", "/orders", f.cashier, body(f.manager, 1000)), 201).Data()
	if o["created_by"] != idOf(f.cashier) || o["approved_by"] != idOf(f.manager) || o["total"] != 900.0 || q["approved_by"] != idOf(f.manager) {
		t.Fatalf("the approved order: created_by %v, approved_by %v, total %v; quote approved_by %v", o["created_by"], o["approved_by"], o["total"], q["approved_by"])
	}
	if got := f.get(o["id"].(string))["approved_by"]; got != idOf(f.manager) {
		t.Fatalf("approved_by read back: %v", got)
	}
	// Within the limit (none given) the approval is not recorded.
	plain := f.must(f.do("POST", "/orders", f.cashier, body(f.manager, 0)), 201).Data()
	if plain["approved_by"] != nil {
		t.Fatalf("an approval recorded where none was needed: %v", plain["approved_by"])
	}
}
