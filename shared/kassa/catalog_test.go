package kassa

import (
	"slices"
	"testing"
	"time"
)

var (
	mdStart  = time.Date(2026, 11, 28, 0, 0, 0, 0, time.UTC)
	mdEnd    = mdStart.Add(7 * 24 * time.Hour)
	mdDuring = mdStart.Add(time.Hour)
)

func markdown(id, typ string, value int64, products, categories []string) Markdown {
	return Markdown{ID: id, Name: "md-" + id, Type: typ, Value: value, ProductIDs: products, CategoryIDs: categories,
		StartsAt: mdStart, EndsAt: mdEnd, IsActive: true, CreatedAt: mdStart}
}

// A clothing store: a T-shirt sold as its variant M (its own price, 2200),
// marked down 25 % on its category, then 10 % off the T-shirt by campaign
// (on the marked-down price: markdowns come first); a GST-free bundle at
// its own price beside it; 10 % GST included. The lines add up to the
// order and tax by rate to its tax.
func TestPriceAMarkedDownVariantBesideAGSTFreeBundleWithACampaign(t *testing.T) {
	ms := []Markdown{markdown("winter", MarkdownPercent, 2500, nil, []string{"apparel"})}
	item := MarkdownedItem{ProductID: "tee", VariantID: "tee-m", CategoryID: "apparel"}
	m, unit := BestMarkdown(ms, item, 2200, mdDuring)
	if m == nil || m.ID != "winter" || unit != 1650 {
		t.Fatalf("markdown %v, unit %d; want winter at 1650", m, unit)
	}
	if _, u := BestMarkdown(ms, MarkdownedItem{ProductID: "pack", CategoryID: "gifts"}, 3500, mdDuring); u != 3500 {
		t.Fatalf("the bundle, of another category, marked down to %d", u)
	}
	// Campaigns match the line's product (the variant's), on the marked-down unit.
	clines := []CampaignLine{{ProductID: "tee", CategoryID: "apparel", Unit: unit, Quantity: 2}, {ProductID: "pack", CategoryID: "gifts", Unit: 3500, Quantity: 1}}
	cp := PriceCampaigns(clines, []Campaign{camp("a", 0, pct(RuleProductDiscount, 1000, "tee"))}, "")
	if cp.LineTotals[0] != 330 || cp.LineTotals[1] != 0 {
		t.Fatalf("campaigns %+v, want 330 off the marked-down tees", cp.LineTotals)
	}
	p := mustPrice(t, []PricedLine{{Unit: unit, Quantity: 2, Campaign: cp.LineTotals[0]}, {Unit: 3500, Quantity: 1, TaxBps: rate(0)}}, nil, 1000, true)
	// Tees: 3300 − 330 = 2970, GST 270; bundle 3500, no GST.
	if p.Subtotal != 6800 || p.DiscountTotal != 330 || p.CampaignTotal != 330 || p.Total != 6470 || p.TaxTotal != 270 {
		t.Fatalf("totals %+v", p)
	}
	want := []TaxGroup{{RateBps: 0, Taxable: 3500, Tax: 0}, {RateBps: 1000, Taxable: 2700, Tax: 270}}
	if !slices.Equal(p.TaxBreakdown, want) {
		t.Fatalf("breakdown %+v, want %+v", p.TaxBreakdown, want)
	}
}

// Markdowns never stack and never raise: of those applying, the lowest
// price wins (a tie to the older); one outside its window, withdrawn, or
// naming something else gives nothing; a new price above the unit (a
// price raised since) is left out; percent rounds half up.
func TestBestMarkdownTakesTheLowestPriceAndNeverRaisesIt(t *testing.T) {
	item := MarkdownedItem{ProductID: "p", VariantID: "p-red", CategoryID: "c"}
	withdrawn := markdown("w", MarkdownPrice, 1, []string{"p"}, nil)
	withdrawn.IsActive = false
	for _, tc := range []struct {
		name   string
		ms     []Markdown
		at     time.Time
		unit   int64
		wantID string
		want   int64
	}{
		{"15 % of 999 rounds half up", []Markdown{markdown("a", MarkdownPercent, 1500, []string{"p"}, nil)}, mdDuring, 999, "a", 849},
		{"the lowest of two", []Markdown{markdown("a", MarkdownPercent, 1000, []string{"p"}, nil), markdown("b", MarkdownPrice, 700, nil, []string{"c"})}, mdDuring, 1000, "b", 700},
		{"by the variant's id", []Markdown{markdown("v", MarkdownPrice, 500, []string{"p-red"}, nil)}, mdDuring, 1000, "v", 500},
		{"a tie goes to the older", []Markdown{markdown("z", MarkdownPrice, 500, []string{"p"}, nil), markdown("y", MarkdownPrice, 500, []string{"p"}, nil)}, mdDuring, 1000, "y", 500},
		{"before it starts", []Markdown{markdown("a", MarkdownPercent, 1000, []string{"p"}, nil)}, mdStart.Add(-time.Second), 1000, "", 1000},
		{"at its end", []Markdown{markdown("a", MarkdownPercent, 1000, []string{"p"}, nil)}, mdEnd, 1000, "", 1000},
		{"withdrawn", []Markdown{withdrawn}, mdDuring, 1000, "", 1000},
		{"another product", []Markdown{markdown("a", MarkdownPercent, 1000, []string{"q"}, []string{"d"})}, mdDuring, 1000, "", 1000},
		{"a new price above the unit", []Markdown{markdown("a", MarkdownPrice, 1200, []string{"p"}, nil)}, mdDuring, 1000, "", 1000},
		{"100 % off", []Markdown{markdown("a", MarkdownPercent, 10000, []string{"p"}, nil)}, mdDuring, 1000, "a", 0},
	} {
		m, got := BestMarkdown(tc.ms, item, tc.unit, tc.at)
		id := ""
		if m != nil {
			id = m.ID
		}
		if id != tc.wantID || got != tc.want {
			t.Errorf("%s: %q at %d, want %q at %d", tc.name, id, got, tc.wantID, tc.want)
		}
	}
}

func TestMarkdownValidation(t *testing.T) {
	v := func(in MarkdownCreate) []FieldError {
		err := in.Validate()
		if err == nil {
			return nil
		}
		return err.(*Error).Fields
	}
	ok := MarkdownCreate{Name: "Sale", Type: MarkdownPercent, Value: ptrTo(int64(2000)), ProductIDs: []string{"01a22252-eb90-78eb-aabe-fe403ea8d0aa"},
		StartsAt: &mdStart, EndsAt: &mdEnd}
	if f := v(ok); f != nil {
		t.Fatalf("a valid markdown: %v", f)
	}
	for field, in := range map[string]MarkdownCreate{
		"value":       {Name: "x", Type: MarkdownPercent, Value: ptrTo(int64(0)), ProductIDs: ok.ProductIDs, StartsAt: &mdStart, EndsAt: &mdEnd},
		"type":        {Name: "x", Type: "raise", Value: ptrTo(int64(10)), ProductIDs: ok.ProductIDs, StartsAt: &mdStart, EndsAt: &mdEnd},
		"ends_at":     {Name: "x", Type: MarkdownPrice, Value: ptrTo(int64(10)), ProductIDs: ok.ProductIDs, StartsAt: &mdEnd, EndsAt: &mdStart},
		"product_ids": {Name: "x", Type: MarkdownPrice, Value: ptrTo(int64(10)), StartsAt: &mdStart, EndsAt: &mdEnd},
	} {
		if f := v(in); len(f) == 0 || f[0].Field != field {
			t.Errorf("want a problem on %s, got %v", field, f)
		}
	}
}

func ptrTo[T any](v T) *T { return &v }

// A bundle containing itself is refused, directly, through another bundle,
// or nested past the depth limit; one sharing a component with another is
// fine.
func TestABundleNeverContainsItself(t *testing.T) {
	of := map[string][]BundleComponent{
		"meal":  {{ProductID: "burger", Quantity: 1}, {ProductID: "combo", Quantity: 1}},
		"combo": {{ProductID: "fries", Quantity: 1}, {ProductID: "drink", Quantity: 1}},
	}
	if ContainsItself("box", []BundleComponent{{ProductID: "fries", Quantity: 2}, {ProductID: "combo", Quantity: 1}}, of) {
		t.Error("a box of fries and a combo contains itself")
	}
	if !ContainsItself("box", []BundleComponent{{ProductID: "box", Quantity: 1}}, of) {
		t.Error("a box containing a box is allowed")
	}
	if !ContainsItself("combo", []BundleComponent{{ProductID: "meal", Quantity: 1}}, of) {
		t.Error("a combo containing the meal that contains the combo is allowed")
	}
	deep := map[string][]BundleComponent{}
	for i := range MaxBundleDepth + 1 {
		deep[string(rune('a'+i))] = []BundleComponent{{ProductID: string(rune('a' + i + 1)), Quantity: 1}}
	}
	if !ContainsItself("top", []BundleComponent{{ProductID: "a", Quantity: 1}}, deep) {
		t.Error("nesting past the depth limit is allowed")
	}
}

// Selling a nested bundle moves its leaf components, summed per product;
// its availability is the scarcest component's.
func TestABundlesStockIsItsComponents(t *testing.T) {
	of := map[string][]BundleComponent{
		"meal":  {{ProductID: "burger", Quantity: 1}, {ProductID: "combo", Quantity: 1}, {ProductID: "fries", Quantity: 1}},
		"combo": {{ProductID: "fries", Quantity: 1}, {ProductID: "drink", Quantity: 2}},
	}
	got := StockParts("meal", 3, of)
	want := []StockPart{{"burger", 3}, {"fries", 6}, {"drink", 6}}
	if !slices.Equal(got, want) {
		t.Fatalf("three meals move %v, want %v", got, want)
	}
	if got := StockParts("fries", 4, of); !slices.Equal(got, []StockPart{{"fries", 4}}) {
		t.Fatalf("a plain product moves %v", got)
	}
	one := StockParts("meal", 1, of)
	if n := BundleAvailable(one, map[string]int64{"burger": 10, "fries": 9, "drink": 7}); n != 3 {
		t.Fatalf("available %d, want 3 (7 drinks, 2 a meal)", n)
	}
	if n := BundleAvailable(one, map[string]int64{"burger": 10, "fries": -4, "drink": 7}); n != 0 {
		t.Fatalf("available %d with fries below zero", n)
	}
}

// A product with variants is sold as one of them, never as itself.
func TestAVariantIsChosen(t *testing.T) {
	var v Validation
	ChosenVariant(&v, "line_items[0]", nil, []string{"m", "l"})
	ChosenVariant(&v, "line_items[1]", ptrTo("xl"), []string{"m", "l"})
	ChosenVariant(&v, "line_items[2]", ptrTo("m"), []string{"m", "l"})
	ChosenVariant(&v, "line_items[3]", nil, nil)
	err, _ := v.Err().(*Error)
	if err == nil || len(err.Fields) != 2 || err.Fields[0].Field != "line_items[0].variant_id" || err.Fields[1].Field != "line_items[1].variant_id" {
		t.Fatalf("problems %v", v.Err())
	}
	if got := VariantName("Tee", map[string]string{"size": "M", "colour": "red"}); got != "Tee red / M" {
		t.Fatalf("name %q", got)
	}
}
