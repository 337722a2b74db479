package kassa

import (
	"math"
	"strings"
	"testing"
)

func TestCheckDiscountByRole(t *testing.T) {
	owner := &Actor{Role: RoleOwner, UserID: "o"}
	manager := &Actor{Role: RoleManager, UserID: "m"}
	cashier := &Actor{Role: RoleCashier, UserID: "c"}
	kitchen := &Actor{Role: RoleKitchen, UserID: "k"}
	partner := &Actor{ClientID: "app"}
	def := DefaultDiscountLimits()
	tenPct := DiscountLimits{Manager: 2500, Cashier: 1000, Partner: 0}
	cases := []struct {
		name             string
		a                *Actor
		limits           DiscountLimits
		gross, discount  int64
		allowed          bool
		setting, percent string // named in the refusal
	}{
		{"an owner gives it all away", owner, DiscountLimits{}, 5000, 5000, true, "", ""},
		{"a manager by default", manager, def, 5000, 5000, true, "", ""},
		{"a partner app by default", partner, def, 5000, 5000, true, "", ""},
		{"a cashier by default: none", cashier, def, 5000, 1, false, "discount_limits.cashier", "0.02 %"},
		{"a cashier giving nothing", cashier, def, 5000, 0, true, "", ""},
		{"a cashier at the limit", cashier, tenPct, 5000, 500, true, "", ""},
		{"a cashier one unit above", cashier, tenPct, 5000, 501, false, "discount_limits.cashier", "10.02 %"},
		{"a cashier 100 % off", cashier, tenPct, 5000, 5000, false, "discount_limits.cashier", "100.00 %"},
		{"a manager above a lowered limit", manager, tenPct, 10_000, 2501, false, "discount_limits.manager", "25.01 %"},
		{"a partner app with none allowed", partner, tenPct, 10_000, 1, false, "discount_limits.partner", "0.01 %"},
		{"kitchen staff", kitchen, def, 10_000, 1, false, "discount_limits", ""},
		{"at the money limits", cashier, tenPct, MaxOrderTotal, MaxOrderTotal / 10, true, "", ""},
		{"beyond int64 products", cashier, tenPct, math.MaxInt64, math.MaxInt64/10 + 1, false, "discount_limits.cashier", ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			err := CheckDiscount(c.a, c.limits, c.gross, c.discount)
			if c.allowed {
				if err != nil {
					t.Fatalf("refused: %v", err)
				}
				return
			}
			if ErrorKind(err) != EForbidden {
				t.Fatalf("got %v, want EForbidden", err)
			}
			if !strings.Contains(err.Error(), c.setting) || !strings.Contains(err.Error(), c.percent) {
				t.Fatalf("%q does not name %s and %s", err, c.setting, c.percent)
			}
		})
	}
}

func TestCheckRefundIsCumulativePerOrder(t *testing.T) {
	cashier := &Actor{Role: RoleCashier, UserID: "c"}
	cases := []struct {
		name             string
		a                *Actor
		refunded, amount int64
		allowed          bool
	}{
		{"a cashier's first refund within the limit", cashier, 0, 3000, true},
		{"a cashier's second refund crossing the limit", cashier, 3000, 3000, false},
		{"a cashier's refund up to the limit exactly", cashier, 3000, 2000, true},
		{"a cashier after a manager refunded beyond the limit", cashier, 6000, 1, false},
		{"a single refund above the limit", cashier, 0, 5001, false},
		{"a manager", &Actor{Role: RoleManager}, 4000, 50_000, true},
		{"an owner", &Actor{Role: RoleOwner}, 4000, 50_000, true},
		{"a partner app", &Actor{ClientID: "app"}, 4000, 50_000, true},
		{"sums that would overflow", cashier, math.MaxInt64, math.MaxInt64, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			err := CheckRefund(c.a, 5000, c.refunded, c.amount)
			if c.allowed != (err == nil) {
				t.Fatalf("CheckRefund(%d, %d): %v, want allowed %v", c.refunded, c.amount, err, c.allowed)
			}
			if err != nil && (ErrorKind(err) != EForbidden || !strings.Contains(err.Error(), "refund_limit")) {
				t.Fatalf("%v: want EForbidden naming refund_limit", err)
			}
		})
	}
}

func TestSettingsUpdateOfDiscountLimits(t *testing.T) {
	st := DefaultSettings()
	in := SettingsUpdate{DiscountLimits: &DiscountLimitsUpdate{Cashier: Some(1500)}}
	if err := in.Validate(); err != nil {
		t.Fatal(err)
	}
	in.Apply(&st)
	if st.DiscountLimits != (DiscountLimits{Manager: 10000, Cashier: 1500, Partner: 10000}) {
		t.Fatalf("limits %+v", st.DiscountLimits)
	}
	for _, bad := range []DiscountLimitsUpdate{{Cashier: Some(10001)}, {Manager: Some(-1)}, {Partner: Opt[int]{Set: true, Null: true}}} {
		in := SettingsUpdate{DiscountLimits: &bad}
		if ErrorKind(in.Validate()) != EInvalid {
			t.Fatalf("%+v accepted", bad)
		}
	}
}
