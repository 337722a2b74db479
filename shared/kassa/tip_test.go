package kassa

import "testing"

// TestTipBoundAndShape: a tip is at most tip_max_percent of the amount
// (half up), 0 turns tips off, and its shape is checked with the payment:
// cash or card, captured at once, covered by the cash handed over.
func TestTipBoundAndShape(t *testing.T) {
	st := DefaultSettings()
	for _, c := range []struct {
		amount, tip int64
		pct         int
		ok          bool
	}{{450, 450, 100, true}, {450, 451, 100, false}, {450, 90, 20, true}, {450, 91, 20, false}, {5, 1, 10, true}, {450, 1, 0, false}, {450, 0, 0, true}} {
		st.TipMaxPercent = c.pct
		err := CheckTip(&PaymentInitiate{Amount: c.amount, Tip: c.tip}, &st)
		if (err == nil) != c.ok || err != nil && ErrorKind(err) != EInvalid {
			t.Errorf("tip %d on %d at %d %%: %v", c.tip, c.amount, c.pct, err)
		}
	}
	no := false
	tendered := int64(500)
	for _, in := range []PaymentInitiate{
		{OrderID: "01900000-0000-7000-8000-000000000001", Amount: 450, Method: PaymentCash, Tip: -1},
		{OrderID: "01900000-0000-7000-8000-000000000001", Amount: 450, Method: PaymentExternal, Tip: 10},
		{OrderID: "01900000-0000-7000-8000-000000000001", Amount: 450, Method: PaymentCard, CardNumber: "4242424242424242", Capture: &no, Tip: 10},
		{OrderID: "01900000-0000-7000-8000-000000000001", Amount: 450, Method: PaymentCash, Tendered: &tendered, Tip: 100},
	} {
		if err := in.Validate(); err == nil {
			t.Errorf("%+v validated", in)
		}
	}
}

// TestTallyKeepsTipsApart: cash tips are in the expected cash, card tips
// are not, tips given back come out of it; sales are untouched.
func TestTallyKeepsTipsApart(t *testing.T) {
	tendered, change := int64(2000), int64(865)
	tt := Tally([]DrawerEntry{
		{Type: DrawerFloat, Method: PaymentCash, Amount: 10000},
		{Type: DrawerSale, Method: PaymentCash, Amount: 1000, Tendered: &tendered, Change: &change},
		{Type: DrawerTip, Method: PaymentCash, Amount: 135},
		{Type: DrawerSale, Method: PaymentCard, Amount: 450},
		{Type: DrawerTip, Method: PaymentCard, Amount: 45},
		{Type: DrawerTipRefund, Method: PaymentCash, Amount: -135},
	})
	if tt.Expected != 10000+1000 || tt.CashSales != 1000 || tt.Tips != 180 || tt.CashTips != 135 || tt.TipsRefunded != 135 ||
		tt.CashTipsRefunded != 135 || tt.CashTendered-tt.ChangeGiven != 1000+135 {
		t.Fatalf("tally %+v", tt)
	}
	if plain := Tally([]DrawerEntry{{Type: DrawerFloat, Method: PaymentCash, Amount: 100}}); plain.Tips != 0 || plain.Expected != 100 {
		t.Fatalf("a drawer without tips: %+v", plain)
	}
}
