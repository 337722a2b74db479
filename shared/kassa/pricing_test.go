package kassa

import "testing"

func TestPriceInclusiveTaxWithDiscounts(t *testing.T) {
	// Two flat whites with oat (480 + 70) and a croissant (450); 10 % off the
	// croissant, then 1.00 off the order; 10 % GST included.
	p := Price([]PricedLine{
		{Gross: 2 * 550},
		{Gross: 450, Discount: &Discount{Type: "percent", Value: 1000}},
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
	p := Price([]PricedLine{{Gross: 125}, {Gross: 5}}, nil, 1000, false)
	// 12.5 → 13, 0.5 → 1
	if p.Lines[0].Tax != 13 || p.Lines[1].Tax != 1 || p.Total != 125+13+5+1 {
		t.Fatalf("%+v", p)
	}
}

func TestDiscountsNeverExceedTheGross(t *testing.T) {
	p := Price([]PricedLine{{Gross: 300, Discount: &Discount{Type: "amount", Value: 999}}}, &Discount{Type: "amount", Value: 50}, 1000, true)
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
