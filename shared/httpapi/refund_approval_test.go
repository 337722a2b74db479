package httpapi_test

import (
	"strings"
	"testing"

	"kassa.dev/shared/kassa"
)

// TestARefundAboveTheLimitRecordsWhoApproved (issue 26, the till's
// manager approval): a cashier's refund above the org's refund_limit is
// 403 alone; with approval_token, a manager's or owner's sign-in of the
// org, it is the cashier's refund (actor) and records the manager as
// approved_by. A cashier's token approves nothing (403); a token that is
// not a sign-in, or is another org's manager's, is 422 naming
// approval_token; each refused try changes nothing. Within the limit an
// approval is not recorded.
func TestARefundAboveTheLimitRecordsWhoApproved(t *testing.T) {
	f := newOrdFixture(t, nil) // refund_limit 5000
	other := f.tn.MustOrg("Elsewhere")
	elsewhere := f.tn.MustUser(other, "m@elsewhere.test", kassa.RoleManager)
	cashier2 := f.tn.MustUser(f.org, "c2@order.test", kassa.RoleCashier)
	idOf := func(token string) string {
		return f.must(f.do("GET", "/auth/me", token, nil), 200).Data()["id"].(string)
	}
	hamper := f.product("Hamper", "HAM-1", 6000)
	order := f.soldOrder(f.locA, hamper, 1)["id"].(string)
	refund := func(approval string) map[string]any {
		return map[string]any{"reason": "faulty", "approval_token": approval}
	}
	for _, bad := range []struct {
		name, token string
		status      int
		kind, field string
	}{
		{"no approval", "", 403, "forbidden", ""},
		{"a cashier's", cashier2, 403, "forbidden", ""},
		{"not a sign-in", "not-a-token", 422, "validation", "approval_token"},
		{"another org's manager", elsewhere, 422, "validation", "approval_token"},
		{"too long", strings.Repeat("x", 5000), 422, "validation", "approval_token"},
	} {
		t.Run(bad.name, func(t *testing.T) {
			before := f.tn.outboxLen()
			p := f.refused(t, f.limDo(t, "POST", "/orders/"+order+"/refund", f.cashier, refund(bad.token)), bad.status, bad.kind, bad.field, before)
			if bad.token != "" && strings.Contains(p["detail"].(string)+strings.Join(ordFields(p), ""), bad.token) {
				t.Fatalf("the problem echoes the token: %v", p)
			}
			if got := f.get(order)["refunded_total"]; got != 0.0 {
				t.Fatalf("refunded_total %v after a refused refund", got)
			}
		})
	}
	o := f.must(f.limDo(t, "POST", "/orders/"+order+"/refund", f.cashier, refund(f.manager)), 200).Data()
	r := o["refunds"].([]any)[0].(map[string]any)
	if r["actor"] != idOf(f.cashier) || r["approved_by"] != idOf(f.manager) || o["refunded_total"] != 6000.0 {
		t.Fatalf("the approved refund: actor %v, approved_by %v, refunded %v", r["actor"], r["approved_by"], o["refunded_total"])
	}

	// Within the limit the approval is not needed, and not recorded.
	box := f.product("Box", "BOX-1", 2000)
	small := f.soldOrder(f.locA, box, 1)["id"].(string)
	o = f.must(f.limDo(t, "POST", "/orders/"+small+"/refund", f.cashier, refund(f.manager)), 200).Data()
	if r := o["refunds"].([]any)[0].(map[string]any); r["approved_by"] != nil || r["actor"] != idOf(f.cashier) {
		t.Fatalf("a refund within the limit: actor %v, approved_by %v", r["actor"], r["approved_by"])
	}
}
