package kassa

import (
	"slices"
	"testing"
)

func rate(bps int) *int { return &bps }

// An Australian café: GST-free bread beside taxed coffee, 10 % GST included.
// The bread's line carries no tax; the coffee's the org's rate; the receipt
// shows both rates.
func TestPriceGSTFreeBreadBesideTaxedCoffee(t *testing.T) {
	p := mustPrice(t, []PricedLine{
		{Unit: 650, Quantity: 1, TaxBps: rate(0)}, // a loaf, GST-free category
		{Unit: 550, Quantity: 2},                  // two coffees, the org's 10 %
	}, nil, 1000, true)
	if p.Lines[0].Tax != 0 || p.Lines[0].TaxBps != 0 || p.Lines[1].Tax != 100 || p.Lines[1].TaxBps != 1000 {
		t.Fatalf("lines %+v", p.Lines)
	}
	if p.Total != 1750 || p.TaxTotal != 100 {
		t.Fatalf("totals %+v", p)
	}
	want := []TaxGroup{{RateBps: 0, Taxable: 650, Tax: 0}, {RateBps: 1000, Taxable: 1000, Tax: 100}}
	if !slices.Equal(p.TaxBreakdown, want) {
		t.Fatalf("breakdown %+v, want %+v", p.TaxBreakdown, want)
	}
}

// A European store with two VAT rates (21 % and 9 %, exclusive here), a
// campaign on one product, an order campaign and a manual order discount:
// each line is taxed at its rate on what is left after every discount, and
// the breakdown adds up to the order.
func TestPriceTwoVATRatesWithCampaignsAndAnOrderDiscount(t *testing.T) {
	clines := []CampaignLine{{ProductID: pCoffee, Unit: 1000, Quantity: 2}, {ProductID: pPastry, CategoryID: cPastry, Unit: 300, Quantity: 3}}
	cp := PriceCampaigns(clines, []Campaign{
		camp("a", 0, pct(RuleProductDiscount, 1000, pCoffee)),                                         // 10 % off the coffee: 200
		camp("b", 1, CampaignRule{Type: RuleOrderDiscount, DiscountType: DiscountAmount, Value: 100}), // 1.00 off the order
	}, "")
	lines := []PricedLine{
		{Unit: 1000, Quantity: 2, Campaign: cp.LineTotals[0], TaxBps: rate(2100)},
		{Unit: 300, Quantity: 3, Campaign: cp.LineTotals[1], TaxBps: rate(900)},
	}
	p := mustPrice(t, lines, &Discount{Type: DiscountAmount, Value: 50}, 2100, false)
	// Campaigns: coffee 200, then the order's 100 over 1800:900 → 67 and 33.
	// Manual 50 over 1733:867 → 33 and 17. Nets 1700 and 850.
	if p.Lines[0].Discount != 300 || p.Lines[1].Discount != 50 {
		t.Fatalf("discounts %+v (campaigns %+v)", p.Lines, cp.LineTotals)
	}
	// 1700 × 21 % = 357; 850 × 9 % = 76.5 → 77.
	if p.Lines[0].Tax != 357 || p.Lines[1].Tax != 77 || p.TaxTotal != 434 || p.Total != 1700+850+434 {
		t.Fatalf("tax %+v totals %+v", p.Lines, p)
	}
	want := []TaxGroup{{RateBps: 900, Taxable: 850, Tax: 77}, {RateBps: 2100, Taxable: 1700, Tax: 357}}
	if !slices.Equal(p.TaxBreakdown, want) {
		t.Fatalf("breakdown %+v, want %+v", p.TaxBreakdown, want)
	}
}

// Without categories an order is priced exactly as before: every line at
// the org's rate, one group.
func TestPriceWithoutCategoriesIsOneGroupAtTheOrgRate(t *testing.T) {
	p := mustPrice(t, []PricedLine{{Unit: 125, Quantity: 1}, {Unit: 5, Quantity: 1}}, nil, 1000, false)
	want := []TaxGroup{{RateBps: 1000, Taxable: 130, Tax: 14}}
	if p.TaxTotal != 14 || !slices.Equal(p.TaxBreakdown, want) {
		t.Fatalf("%+v", p)
	}
}

func TestPriceRefusesALineRateOutOfRange(t *testing.T) {
	if _, err := Price([]PricedLine{{Unit: 1, Quantity: 1, TaxBps: rate(MaxTaxRateBps + 1)}}, nil, 1000, true); err == nil || ErrorKind(err) != EInternal {
		t.Fatalf("err %v, want an internal error", err)
	}
}

// A receipt of a sale of two rates shows each rate; refunding the GST-free
// loaf returns no tax, and a refund by amount splits over both rates.
func TestReceiptTaxesByRateForASaleAndItsRefunds(t *testing.T) {
	p := mustPrice(t, []PricedLine{{Unit: 650, Quantity: 1, TaxBps: rate(0)}, {Unit: 550, Quantity: 2}}, nil, 1000, true)
	o := &Order{ID: "o", TaxRateBps: 1000, TaxInclusive: true, Total: p.Total, TaxTotal: p.TaxTotal, TaxBreakdown: p.TaxBreakdown}
	for i, lp := range p.Lines {
		o.LineItems = append(o.LineItems, LineItem{ID: []string{"bread", "coffee"}[i], Quantity: 1, Tax: lp.Tax, Total: lp.Total, TaxRateBps: lp.TaxBps})
	}
	sale := BuildReceipt(&ReceiptFacts{Order: o})
	want := []ReceiptTax{{RateBps: 0, Net: 650}, {RateBps: 1000, Net: 1000, Tax: 100}}
	if !slices.Equal(sale.Taxes, want) || sale.TaxTotal != 100 {
		t.Fatalf("sale taxes %+v, want %+v", sale.Taxes, want)
	}
	bread := BuildReceipt(&ReceiptFacts{Order: o, Refund: &Refund{ID: "r1", Amount: 650, Lines: []RefundLine{{LineItemID: "bread", Quantity: 1, Amount: 650}}}})
	if want := []ReceiptTax{{RateBps: 0, Net: 650}}; !slices.Equal(bread.Taxes, want) || bread.TaxTotal != 0 {
		t.Fatalf("the loaf's refund returns %+v (tax %d), want %+v", bread.Taxes, bread.TaxTotal, want)
	}
	some := BuildReceipt(&ReceiptFacts{Order: o, Refund: &Refund{ID: "r2", Amount: 350}})
	// 350 over 650:1100 → 130 and 220; 220 × 100/1100 = 20.
	if want := []ReceiptTax{{RateBps: 0, Net: 130}, {RateBps: 1000, Net: 200, Tax: 20}}; !slices.Equal(some.Taxes, want) || some.TaxTotal != 20 {
		t.Fatalf("a refund of 3.50 returns %+v (tax %d), want %+v", some.Taxes, some.TaxTotal, want)
	}
}
