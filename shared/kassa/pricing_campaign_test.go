package kassa

import (
	"testing"
	"time"
)

func camp(id string, created int, rules ...CampaignRule) Campaign {
	return Campaign{ID: id, Name: "c-" + id, Status: CampaignActive, Rules: rules,
		CreatedAt: time.Date(2026, 1, 1, 0, created, 0, 0, time.UTC)}
}

func pct(t string, bps int64, ids ...string) CampaignRule {
	r := CampaignRule{Type: t, DiscountType: DiscountPercent, Value: bps}
	if t == RuleCategoryDiscount {
		r.CategoryIDs = ids
	} else {
		r.ProductIDs = ids
	}
	return r
}

// A café order: 2 coffees at 450, 3 pastries at 400 (category pastry).
func cafeLines() []CampaignLine {
	return []CampaignLine{{ProductID: pCoffee, Unit: 450, Quantity: 2}, {ProductID: pPastry, CategoryID: cPastry, Unit: 400, Quantity: 3}}
}

func TestPriceCampaignsEveryRuleKind(t *testing.T) {
	for _, c := range []struct {
		name   string
		c      Campaign
		lines  []int64 // per line campaign discount
		points int64
	}{
		{"percent off the order", camp("a", 0, CampaignRule{Type: RuleOrderDiscount, DiscountType: DiscountPercent, Value: 1000}),
			[]int64{90, 120}, MaxPercentBps}, // 210 of 2100, by the lines' weights 900:1200
		{"amount off the order", camp("a", 0, CampaignRule{Type: RuleOrderDiscount, DiscountType: DiscountAmount, Value: 100}),
			[]int64{43, 57}, MaxPercentBps}, // 42.86 and 57.14
		{"percent off a product", camp("a", 0, pct(RuleProductDiscount, 1500, pCoffee)), []int64{135, 0}, MaxPercentBps},
		{"amount per unit off a product", camp("a", 0, CampaignRule{Type: RuleProductDiscount, DiscountType: DiscountAmount, Value: 500, ProductIDs: []string{pCoffee}}),
			[]int64{900, 0}, MaxPercentBps}, // capped at the gross, never below zero
		{"percent off a category", camp("a", 0, pct(RuleCategoryDiscount, 1000, cPastry)), []int64{0, 120}, MaxPercentBps},
		{"buy 2 pastries get 1 free", camp("a", 0, CampaignRule{Type: RuleBuyXGetY, DiscountType: DiscountPercent, Value: 10000, ProductIDs: []string{pPastry}, BuyQuantity: 2, GetQuantity: 1}),
			[]int64{0, 400}, MaxPercentBps},
		{"min spend met", camp("a", 0, CampaignRule{Type: RuleMinSpend, MinSubtotal: 2100}, CampaignRule{Type: RuleOrderDiscount, DiscountType: DiscountAmount, Value: 200}),
			[]int64{86, 114}, MaxPercentBps},
		{"min spend missed", camp("a", 0, CampaignRule{Type: RuleMinSpend, MinSubtotal: 2101}, CampaignRule{Type: RuleOrderDiscount, DiscountType: DiscountAmount, Value: 200}),
			[]int64{0, 0}, MaxPercentBps},
		{"double points", camp("a", 0, CampaignRule{Type: RulePointsMultiplier, Value: 20000}), []int64{0, 0}, 20000},
	} {
		p := PriceCampaigns(cafeLines(), []Campaign{c.c}, "")
		if p.LineTotals[0] != c.lines[0] || p.LineTotals[1] != c.lines[1] || p.PointsMultiplier != c.points {
			t.Errorf("%s: lines %v points %d, want %v %d", c.name, p.LineTotals, p.PointsMultiplier, c.lines, c.points)
		}
		var sum int64
		for _, a := range p.Applied {
			sum += a.Amount
		}
		if sum != c.lines[0]+c.lines[1] {
			t.Errorf("%s: applied %+v does not add up to the lines", c.name, p.Applied)
		}
	}
}

func TestBuyXGetYDiscountsTheCheapestUnits(t *testing.T) {
	// Buy 1 get 1 half price over two products: 4 units make 2 groups; the
	// 2 cheapest units (both the 300s) are half price.
	c := camp("a", 0, CampaignRule{Type: RuleBuyXGetY, DiscountType: DiscountPercent, Value: 5000, ProductIDs: []string{pCoffee, pPastry}, BuyQuantity: 1, GetQuantity: 1})
	p := PriceCampaigns([]CampaignLine{{ProductID: pCoffee, Unit: 500, Quantity: 2}, {ProductID: pPastry, Unit: 300, Quantity: 2}}, []Campaign{c}, "")
	if p.LineTotals[0] != 0 || p.LineTotals[1] != 300 {
		t.Fatalf("%v", p.LineTotals)
	}
	// 5 units of buy 2 get 1: one group only.
	c.Rules[0].BuyQuantity, c.Rules[0].Value = 2, 10000
	p = PriceCampaigns([]CampaignLine{{ProductID: pCoffee, Unit: 500, Quantity: 5}}, []Campaign{c}, "")
	if p.LineTotals[0] != 500 {
		t.Fatalf("%v", p.LineTotals)
	}
}

func TestCampaignStackingOrder(t *testing.T) {
	// Line campaigns: the best per line, not both. Then the best order
	// campaign on what is left. Then the voucher competes only when given.
	coffee10 := camp("a", 0, pct(RuleProductDiscount, 1000, pCoffee))                                          // coffee 90
	coffee20 := camp("b", 1, pct(RuleProductDiscount, 2000, pCoffee), pct(RuleCategoryDiscount, 500, cPastry)) // coffee 180, pastry 60
	order5 := camp("c", 2, CampaignRule{Type: RuleOrderDiscount, DiscountType: DiscountAmount, Value: 500})
	order3 := camp("d", 3, CampaignRule{Type: RuleOrderDiscount, DiscountType: DiscountAmount, Value: 300})
	voucher := camp("e", 4, CampaignRule{Type: RuleOrderDiscount, DiscountType: DiscountAmount, Value: 1000})
	voucher.VoucherCode = ptr("FREECOFFEE")
	all := []Campaign{order3, voucher, coffee20, order5, coffee10}

	p := PriceCampaigns(cafeLines(), all, "")
	// Lines: coffee 180 (b), pastry 60 (b); left 720 + 1140 = 1860; order: c gives 500
	// spread 720:1140 → 193.5 and 306.5 → 194 and 306 (largest remainder, earlier on a tie).
	if p.LineTotals[0] != 180+194 || p.LineTotals[1] != 60+306 {
		t.Fatalf("lines %v", p.LineTotals)
	}
	if len(p.Applied) != 2 || p.Applied[0].CampaignID != "b" || p.Applied[0].Amount != 240 || p.Applied[1].CampaignID != "c" || p.Applied[1].Amount != 500 {
		t.Fatalf("applied %+v", p.Applied)
	}
	if len(p.Lines[0]) != 2 || p.Lines[0][0] != (LineCampaign{"b", 180}) || p.Lines[0][1] != (LineCampaign{"c", 194}) {
		t.Fatalf("line parts %+v", p.Lines[0])
	}
	// With the voucher (any case), it beats the automatic order campaigns.
	p = PriceCampaigns(cafeLines(), all, " freecoffee")
	if len(p.Applied) != 2 || p.Applied[1].CampaignID != "e" || p.Applied[1].Amount != 1000 {
		t.Fatalf("with the voucher: %+v", p.Applied)
	}
	// A wrong code is no code.
	if p = PriceCampaigns(cafeLines(), all, "NOPE"); p.Applied[1].CampaignID != "c" {
		t.Fatalf("a wrong code: %+v", p.Applied)
	}
	// Ties go to the campaign created first.
	twin := camp("0", 9, pct(RuleProductDiscount, 1000, pCoffee))
	if p = PriceCampaigns(cafeLines(), []Campaign{twin, coffee10}, ""); p.Applied[0].CampaignID != "a" {
		t.Fatalf("a tie: %+v", p.Applied)
	}
}

func TestManualDiscountsComeAfterCampaigns(t *testing.T) {
	// 1000 gross, campaign 100 off, then 10 % manual of 900, then 50 off the order.
	p := mustPrice(t, []PricedLine{{Unit: 1000, Quantity: 1, Campaign: 100, Discount: &Discount{Type: DiscountPercent, Value: 1000}}},
		&Discount{Type: DiscountAmount, Value: 50}, 0, true)
	if p.Lines[0].Discount != 100+90+50 || p.Lines[0].Campaign != 100 || p.CampaignTotal != 100 || p.Total != 760 {
		t.Fatalf("%+v", p)
	}
	// A campaign part beyond the gross is clamped: never below zero.
	p = mustPrice(t, []PricedLine{{Unit: 300, Quantity: 1, Campaign: 999}}, nil, 1000, true)
	if p.Total != 0 || p.CampaignTotal != 300 {
		t.Fatalf("%+v", p)
	}
}
