package kassa

import (
	"errors"
	"math"
	"slices"
	"testing"
)

func mustPrice(t *testing.T, lines []PricedLine, od *Discount, taxBps int, inclusive bool) OrderPrice {
	t.Helper()
	p, err := Price(lines, od, taxBps, inclusive)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func TestPriceInclusiveTaxWithDiscounts(t *testing.T) {
	// Two flat whites with oat (480 + 70) and a croissant (450); 10 % off the
	// croissant, then 1.00 off the order; 10 % GST included.
	p := mustPrice(t, []PricedLine{
		{Unit: 550, Quantity: 2},
		{Unit: 450, Quantity: 1, Discount: &Discount{Type: "percent", Value: 1000}},
	}, &Discount{Type: "amount", Value: 100}, 1000, true)
	// croissant: 45 off → 405 left; order 1.00 over 1100 and 405: 73 and 27 (73.09, 26.91)
	if p.Lines[0].Discount != 73 || p.Lines[1].Discount != 45+27 {
		t.Fatalf("discounts %+v", p.Lines)
	}
	if p.Subtotal != 1550 || p.DiscountTotal != 145 || p.Total != 1405 {
		t.Fatalf("totals %+v", p)
	}
	// tax contained: 1027/11 = 93.36 → 93; 378/11 = 34.36 → 34
	if p.Lines[0].Tax != 93 || p.Lines[1].Tax != 34 || p.TaxTotal != 127 {
		t.Fatalf("tax %+v", p.Lines)
	}
}

func TestPriceExclusiveTaxRoundsHalfUpPerLine(t *testing.T) {
	p := mustPrice(t, []PricedLine{{Unit: 125, Quantity: 1}, {Unit: 5, Quantity: 1}}, nil, 1000, false)
	// 12.5 → 13, 0.5 → 1
	if p.Lines[0].Tax != 13 || p.Lines[1].Tax != 1 || p.Total != 125+13+5+1 {
		t.Fatalf("%+v", p)
	}
}

func TestDiscountsNeverExceedTheGross(t *testing.T) {
	p := mustPrice(t, []PricedLine{{Unit: 300, Quantity: 1, Discount: &Discount{Type: "amount", Value: 999}}}, &Discount{Type: "amount", Value: 50}, 1000, true)
	if p.Total != 0 || p.Lines[0].Discount != 300 || p.TaxTotal != 0 {
		t.Fatalf("%+v", p)
	}
}

func TestAllocateSumsExactly(t *testing.T) {
	for _, c := range []struct {
		amount  int64
		weights []int64
	}{{2, []int64{1, 1, 1}}, {7, []int64{5, 0, 5}}, {1, []int64{3, 3}}, {999, []int64{1000, 1, 1}}} {
		var sum int64
		for i, p := range allocate(c.amount, c.weights) {
			if p > c.weights[i] {
				t.Fatalf("part %d above weight %d", p, c.weights[i])
			}
			sum += p
		}
		if sum != c.amount {
			t.Fatalf("allocate(%d, %v) sums to %d", c.amount, c.weights, sum)
		}
	}
}

func TestRefundShareAddsUpToTheLineTotal(t *testing.T) {
	// A line of 3 units totalling 1000, refunded one unit at a time.
	var got int64
	for done := int64(0); done < 3; done++ {
		got += RefundShare(1000, 3, done, 1)
	}
	if got != 1000 {
		t.Fatalf("refunding all units returned %d of 1000", got)
	}
	if RefundShare(1000, 3, 0, 1) != 333 || RefundShare(1000, 3, 1, 1) != 334 {
		t.Fatalf("shares %d %d", RefundShare(1000, 3, 0, 1), RefundShare(1000, 3, 1, 1))
	}
}

func TestAllocateIsExactWhereAmountTimesWeightOverflows(t *testing.T) {
	// 9.3 × 10^6 × 10^12 does not fit an int64: the old allocate gave
	// 13873372 and -4573372; the shares are half each.
	cases := []struct {
		amount  int64
		weights []int64
		want    []int64
	}{
		{9_300_000, []int64{MaxMoney, MaxMoney}, []int64{4_650_000, 4_650_000}},
		{10_000_001, []int64{MaxMoney, MaxMoney, MaxMoney}, []int64{3_333_334, 3_333_334, 3_333_333}},
		{MaxMoney, []int64{MaxMoney, MaxMoney - 1, 7}, []int64{499_999_999_999, 499_999_999_998, 3}}, // .5, .0, .49999…
		{2 * MaxMoney, []int64{MaxMoney, MaxMoney}, []int64{MaxMoney, MaxMoney}},
	}
	for _, c := range cases {
		got := allocate(c.amount, c.weights)
		for i := range got {
			if got[i] != c.want[i] {
				t.Fatalf("allocate(%d, %v) = %v, want %v", c.amount, c.weights, got, c.want)
			}
		}
	}
}

func TestAllocateClampsWhatCannotBeSplit(t *testing.T) {
	for _, c := range []struct {
		amount  int64
		weights []int64
		sum     int64
	}{{-5, []int64{3, 3}, 0}, {100, []int64{3, -3, 4}, 7}, {5, nil, 0}} {
		var sum int64
		for i, p := range allocate(c.amount, c.weights) {
			if p < 0 || p > max(c.weights[i], 0) {
				t.Fatalf("allocate(%d, %v): part %d", c.amount, c.weights, p)
			}
			sum += p
		}
		if sum != c.sum {
			t.Fatalf("allocate(%d, %v) sums to %d, want %d", c.amount, c.weights, sum, c.sum)
		}
	}
}

func TestPriceRefusesWhatIsBeyondTheLimits(t *testing.T) {
	line := func(unit, qty int64) PricedLine { return PricedLine{Unit: unit, Quantity: qty} }
	many := make([]PricedLine, MaxOrderLines+1)
	for i := range many {
		many[i] = line(1, 1)
	}
	cases := []struct {
		name      string
		lines     []PricedLine
		od        *Discount
		tax       int
		inclusive bool
		field     string
	}{
		{"no lines", nil, nil, 1000, true, "line_items"},
		{"101 lines", many, nil, 1000, true, "line_items"},
		{"a quantity of 0", []PricedLine{line(1, 0)}, nil, 1000, true, "line_items[0].quantity"},
		{"a quantity above 10000", []PricedLine{line(1, 1), line(1, MaxLineQuantity+1)}, nil, 1000, true, "line_items[1].quantity"},
		{"a unit above 10^12", []PricedLine{line(MaxUnitPrice+1, 1)}, nil, 1000, true, "line_items[0]"},
		{"a negative unit", []PricedLine{line(-1, 1)}, nil, 1000, true, "line_items[0]"},
		{"a line above 10^12", []PricedLine{line(100_000_001, 10_000)}, nil, 1000, true, "line_items[0].quantity"},
		{"a line whose product overflows", []PricedLine{line(MaxUnitPrice, MaxLineQuantity)}, nil, 1000, true, "line_items[0].quantity"},
		{"a subtotal above 10^12", []PricedLine{line(100_000_000, 10_000), line(1, 1)}, nil, 1000, true, "line_items"},
		{"a total with tax above 10^12", []PricedLine{line(MaxMoney, 1)}, nil, 1, false, "line_items"},
		{"a percent above 100 %", []PricedLine{line(1, 1)}, &Discount{Type: "percent", Value: 10001}, 1000, true, "discount.value"},
		{"a line amount above 10^12", []PricedLine{{Unit: 1, Quantity: 1, Discount: &Discount{Type: "amount", Value: MaxMoney + 1}}}, nil, 1000, true, "line_items[0].discount.value"},
		{"a negative discount", []PricedLine{{Unit: 1, Quantity: 1, Discount: &Discount{Type: "amount", Value: -1}}}, nil, 1000, true, "line_items[0].discount.value"},
		{"an unknown discount type", []PricedLine{line(1, 1)}, &Discount{Type: "free", Value: 1}, 1000, true, "discount.type"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := Price(c.lines, c.od, c.tax, c.inclusive)
			var e *Error
			if !errors.As(err, &e) || e.Kind != EInvalid || !slices.ContainsFunc(e.Fields, func(f FieldError) bool { return f.Field == c.field }) {
				t.Fatalf("Price: %v, want EInvalid naming %s", err, c.field)
			}
		})
	}
	if _, err := Price([]PricedLine{line(1, 1)}, nil, MaxTaxRateBps+1, true); err == nil || ErrorKind(err) != EInternal {
		t.Fatalf("a tax rate above 50 %%: %v", err)
	}
}

func TestPriceAtTheLimitsIsExact(t *testing.T) {
	// Two lines of 5 × 10^11 with 100 % off the order: free, exactly.
	p := mustPrice(t, []PricedLine{{Unit: 50_000_000, Quantity: MaxLineQuantity}, {Unit: 50_000_000, Quantity: MaxLineQuantity}},
		&Discount{Type: "percent", Value: MaxPercentBps}, MaxTaxRateBps, false)
	if p.Subtotal != MaxOrderTotal || p.DiscountTotal != MaxOrderTotal || p.Total != 0 || p.TaxTotal != 0 {
		t.Fatalf("%+v", p)
	}
	// 60 % and 40 % of 10^12, half off: 3 × 10^11 and 2 × 10^11 off; 5 % tax inclusive.
	p = mustPrice(t, []PricedLine{{Unit: 60_000_000, Quantity: MaxLineQuantity}, {Unit: 40_000_000, Quantity: MaxLineQuantity}},
		&Discount{Type: "amount", Value: MaxMoney / 2}, 500, true)
	if p.Lines[0].Discount != 300_000_000_000 || p.Lines[1].Discount != 200_000_000_000 || p.Total != MaxMoney/2 {
		t.Fatalf("%+v", p)
	}
	// tax contained: 3 × 10^11 × 500 / 10500 = 14285714285.71 → 14285714286; 2 × 10^11: 9523809523.8 → 9523809524
	if p.Lines[0].Tax != 14_285_714_286 || p.Lines[1].Tax != 9_523_809_524 {
		t.Fatalf("tax %+v", p.Lines)
	}
}

func TestUnitPriceSaturatesInsteadOfWrapping(t *testing.T) {
	if u := UnitPrice(450, 70, -20); u != 500 {
		t.Fatalf("450 + 70 - 20 = %d", u)
	}
	if u := UnitPrice(100, -500); u != 0 {
		t.Fatalf("a unit below zero is %d, want 0", u)
	}
	adj := make([]int64, 10_000)
	for i := range adj {
		adj[i] = math.MaxInt64 / 1000
	}
	if u := UnitPrice(MaxMoney, adj...); u != math.MaxInt64 {
		t.Fatalf("a sum beyond int64 is %d, want it saturated", u)
	}
}

func TestRefundShareStaysWithinTheTotal(t *testing.T) {
	for _, c := range []struct{ total, quantity, done, qty, want int64 }{
		{MaxMoney, MaxLineQuantity, 0, 1, 100_000_000},
		{MaxMoney, 3, 1, 2, 666_666_666_667},
		{1000, 3, 2, 5, 333},  // more than is left: the rest
		{1000, 3, -4, 1, 333}, // done below 0 counts as 0
		{1000, 0, 0, 1, 0},
		{-1000, 3, 0, 1, 0},
		{1000, 3, 0, -1, 0},
		{math.MaxInt64, 3, 0, math.MaxInt64, math.MaxInt64},
	} {
		if got := RefundShare(c.total, c.quantity, c.done, c.qty); got != c.want {
			t.Fatalf("RefundShare(%d, %d, %d, %d) = %d, want %d", c.total, c.quantity, c.done, c.qty, got, c.want)
		}
	}
}
