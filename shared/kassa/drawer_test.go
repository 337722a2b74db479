package kassa

import (
	"reflect"
	"testing"
)

func TestCashCountTotal(t *testing.T) {
	decimals := map[string]int{"AUD": 2, "CHF": 2, "JPY": 0}
	n := func(v int64) *int64 { return &v }
	good := []struct {
		cur  string
		c    CashCount
		want int64
	}{
		{"AUD", CashCount{Denominations: []DenominationCount{{5000, 2}, {200, 3}, {5, 1}}}, 10605},
		{"AUD", CashCount{Denominations: []DenominationCount{{1000, 1}}, Amount: n(1000)}, 1000},
		{"JPY", CashCount{Amount: n(25000)}, 25000},
		{"CHF", CashCount{Denominations: []DenominationCount{{1000, 4}}}, 4000}, // no table: any positive value
	}
	for _, c := range good {
		got, err := c.c.Total(CashCurrency{Code: c.cur, Decimals: decimals[c.cur]}, "float.")
		if err != nil || got != c.want {
			t.Errorf("%s %+v: %d, %v; want %d", c.cur, c.c, got, err, c.want)
		}
	}
	bad := []struct {
		cur   string
		c     CashCount
		field string
	}{
		{"AUD", CashCount{Denominations: []DenominationCount{{5000, -1}}}, "float.denominations[0].count"},
		{"AUD", CashCount{Denominations: []DenominationCount{{300, 1}}}, "float.denominations[0].value"},
		{"AUD", CashCount{Denominations: []DenominationCount{{1000, 1}, {1000, 2}}}, "float.denominations[1].value"},
		{"AUD", CashCount{Amount: n(-5)}, "float.amount"},
		{"AUD", CashCount{Amount: n(1 << 50)}, "float.amount"},
		{"AUD", CashCount{Denominations: []DenominationCount{{10000, 100000}, {5000, 100000}}}, "float.denominations"},
		{"AUD", CashCount{Denominations: []DenominationCount{{1000, 1}}, Amount: n(900)}, "float.amount"},
		{"AUD", CashCount{}, "float.denominations"},
		{"JPY", CashCount{Amount: n(1_000_001)}, "float.amount"}, // JPY has no decimals: a million yen is the most
	}
	for _, c := range bad {
		_, err := c.c.Total(CashCurrency{Code: c.cur, Decimals: decimals[c.cur]}, "float.")
		var e *Error
		if !asError(err, &e) || e.Fields[0].Field != c.field {
			t.Errorf("%s %+v: %v, want an error naming %s", c.cur, c.c, err, c.field)
		}
	}
}

func TestTallySumsEveryEntryOnce(t *testing.T) {
	n := func(v int64) *int64 { return &v }
	entries := []DrawerEntry{
		{Type: DrawerFloat, Method: PaymentCash, Amount: 20000},
		{Type: DrawerSale, Method: PaymentCash, Amount: 1250, Tendered: n(2000), Change: n(750)},
		{Type: DrawerSale, Method: PaymentCard, Amount: 4000},
		{Type: DrawerSale, Method: PaymentCash, Amount: 800},
		{Type: DrawerRefund, Method: PaymentCash, Amount: -500},
		{Type: DrawerPaidOut, Method: PaymentCash, Amount: -1500, Reason: "milk"},
		{Type: DrawerPaidIn, Method: PaymentCash, Amount: 1000, Reason: "change from bank"},
		{Type: DrawerNoSale, Method: PaymentCash},
	}
	got := Tally(entries)
	want := DrawerTotals{Float: 20000, CashSales: 2050, CashTendered: 2800, ChangeGiven: 750, CashRefunds: 500,
		PaidIn: 1000, PaidOut: 1500, Expected: 20000 + 2050 - 500 + 1000 - 1500, Sales: 3, Refunds: 1, NoSales: 1}
	tenders := got.Tenders
	got.Tenders = nil
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("tally = %+v, want %+v", got, want)
	}
	if len(tenders) != 2 || tenders[0] != (TenderTotal{Method: PaymentCard, Count: 1, Sales: 4000, Net: 4000}) ||
		tenders[1] != (TenderTotal{Method: PaymentCash, Count: 2, Sales: 2050, Refunds: 500, Net: 1550}) {
		t.Fatalf("tenders = %+v", tenders)
	}
}
