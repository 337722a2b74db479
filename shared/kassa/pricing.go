package kassa

import (
	"cmp"
	"fmt"
	"slices"
	"strconv"
)

// Pricing rules, all in integer minor units:
//
//   - A line's gross is its unit price (with modifier adjustments, see
//     UnitPrice) × quantity.
//   - Campaigns come off first (PriceCampaigns, PricedLine.Campaign).
//   - A line discount (percent in basis points, or an amount) comes off what
//     is left of the line's gross; a percent is rounded half up; an amount is capped at the gross.
//   - An order discount is spread over the lines in proportion to what is
//     left of each line, by the largest-remainder method, so the parts add up
//     to the discount exactly; a percent order discount is first turned into
//     an amount of the discountable total (rounded half up).
//   - Tax is computed per line on the discounted amount at the line's rate
//     (its tax category's, PricedLine.TaxBps; the org's when it has none),
//     rounded half up: inclusive, tax = net × r / (10000 + r) is contained
//     in the line total; exclusive, tax = net × r / 10000 is added to it.
//   - Totals are sums of the lines, so the order always equals its lines,
//     and the tax breakdown (OrderPrice.TaxBreakdown) groups the lines by
//     rate: each group's taxable amount and tax are the sums of its lines',
//     so the groups' tax sums to the order's (docs/tax.md says why per line).
//
// Bounded work: every input is checked against the limits of money.go
// before any arithmetic (quantity, unit price, line gross, order total,
// discounts, tax rate), products of two amounts are taken in 128 bits, and
// the work is O(n log n) in the number of lines whatever the amounts.

// PricedLine is a line to price: its unit price (UnitPrice), quantity and
// its own discount.
type PricedLine struct {
	Unit     int64
	Quantity int64
	Discount *Discount
	// Campaign is what campaigns took off the line (PriceCampaigns),
	// taken before the manual discounts; clamped to [0, gross].
	Campaign int64
	// TaxBps is the line's tax rate in basis points (its tax category's,
	// TaxRateOf); nil: the org's rate, Price's taxBps.
	TaxBps *int
}

// LinePrice is the result for one line.
type LinePrice struct {
	Gross    int64 // unit price × quantity
	Discount int64 // the campaigns', the line's own discount and its share of the order's
	Campaign int64 // the campaigns' part of Discount
	Tax      int64
	Total    int64
	TaxBps   int // the rate the line was taxed at
}

// TaxGroup is the tax of an order's lines at one rate, as a tax invoice
// shows it.
type TaxGroup struct {
	RateBps int   `json:"rate_bps"` // The rate, in basis points (0: zero-rated or exempt).
	Taxable int64 `json:"taxable"`  // The lines' amount without tax, in minor units.
	Tax     int64 `json:"tax"`      // The lines' tax, in minor units.
}

// OrderPrice is the result for an order.
type OrderPrice struct {
	Lines         []LinePrice
	Subtotal      int64 // sum of the lines' gross
	DiscountTotal int64
	CampaignTotal int64 // the campaigns' part of DiscountTotal; the rest is manual
	TaxTotal      int64
	Total         int64
	TaxBreakdown  []TaxGroup // by rate, lowest first; the groups' Tax sums to TaxTotal
}

// lineField names field sub of line i of POST /orders ("" names the line).
func lineField(i int, sub string) string {
	f := "line_items[" + strconv.Itoa(i) + "]"
	if sub != "" {
		f += "." + sub
	}
	return f
}

// Price prices an order's lines with an optional order discount at the
// org's tax rate taxBps, or a line's own (PricedLine.TaxBps). Errors:
// EInvalid naming the field (line_items[i].quantity, line_items[i],
// line_items, line_items[i].discount.value, discount.value…) when an input
// or a result is beyond the limits of money.go; a tax rate out of range is
// an internal error (the settings and tax categories forbid it).
func Price(lines []PricedLine, orderDiscount *Discount, taxBps int, inclusive bool) (OrderPrice, error) {
	if err := checkRates(lines, taxBps); err != nil {
		return OrderPrice{}, err
	}
	out, err := grossPrice(lines, orderDiscount)
	if err != nil {
		return OrderPrice{}, err
	}
	out.discount(lines, orderDiscount)
	out.tax(lines, taxBps, inclusive)
	if out.Total > MaxOrderTotal {
		var v Validation
		v.Add("line_items", "the order's total with tax is above 10^12 minor units")
		return OrderPrice{}, v.Err()
	}
	return out, nil
}

// checkRates refuses a rate out of range, the org's or a line's.
func checkRates(lines []PricedLine, taxBps int) error {
	for _, l := range lines {
		if l.TaxBps != nil && (*l.TaxBps < 0 || *l.TaxBps > MaxTaxRateBps) {
			return fmt.Errorf("kassa: a tax rate of %d basis points is out of range", *l.TaxBps)
		}
	}
	if taxBps < 0 || taxBps > MaxTaxRateBps {
		return fmt.Errorf("kassa: a tax rate of %d basis points is out of range", taxBps)
	}
	return nil
}

// grossPrice checks the lines and discounts and returns the lines' gross
// and the order's subtotal.
func grossPrice(lines []PricedLine, orderDiscount *Discount) (OrderPrice, error) {
	var v Validation
	v.Check(len(lines) >= 1 && len(lines) <= MaxOrderLines, "line_items", "must have 1-100 lines")
	checkDiscount(&v, "discount", orderDiscount)
	out := OrderPrice{Lines: make([]LinePrice, len(lines))}
	for i, l := range lines {
		if l.Discount != nil {
			checkDiscount(&v, lineField(i, "discount"), l.Discount)
		}
		switch {
		case l.Quantity < 1 || l.Quantity > MaxLineQuantity:
			v.Add(lineField(i, "quantity"), "must be 1-10000")
		case l.Unit < 0 || l.Unit > MaxUnitPrice:
			v.Add(lineField(i, ""), "the unit price with modifiers must be 0-10^12 minor units")
		case l.Unit > MaxLineGross/l.Quantity: // unit × quantity > MaxLineGross, without multiplying
			v.Add(lineField(i, "quantity"), "the line's gross (unit price × quantity) is above 10^12 minor units")
		default:
			out.Lines[i].Gross = l.Unit * l.Quantity
			out.Subtotal += out.Lines[i].Gross // ≤ MaxOrderLines × MaxLineGross: no overflow
		}
	}
	if err := v.Err(); err != nil {
		return OrderPrice{}, err
	}
	if out.Subtotal > MaxOrderTotal {
		v.Add("line_items", "the order's subtotal is above 10^12 minor units")
		return OrderPrice{}, v.Err()
	}
	return out, nil
}

// discount sets each line's discount: its campaign's, its own on the
// rest, and its share of the order's discount on what is left.
func (out *OrderPrice) discount(lines []PricedLine, orderDiscount *Discount) {
	rest := make([]int64, len(lines))
	var restTotal int64
	for i, l := range lines {
		lp := &out.Lines[i]
		lp.Campaign = min(max(l.Campaign, 0), lp.Gross)
		lp.Discount = lp.Campaign + discountOf(l.Discount, lp.Gross-lp.Campaign)
		rest[i] = lp.Gross - lp.Discount
		restTotal += rest[i]
	}
	if od := discountOf(orderDiscount, restTotal); od > 0 {
		for i, part := range allocate(od, rest) {
			out.Lines[i].Discount += part
		}
	}
}

// tax sets each line's tax and total at its rate or taxBps (included in
// the price or added to it), sums the order's and groups it by rate.
func (out *OrderPrice) tax(lines []PricedLine, taxBps int, inclusive bool) {
	for i := range out.Lines {
		lp := &out.Lines[i]
		lp.TaxBps = TaxRateOf(lines[i].TaxBps, taxBps)
		r := int64(lp.TaxBps)
		net := lp.Gross - lp.Discount
		if inclusive {
			lp.Tax, _ = mulDivRound(net, r, 10000+r) // ≤ net
			lp.Total = net
		} else {
			lp.Tax, _ = mulDivRound(net, r, 10000) // ≤ net / 2
			lp.Total = net + lp.Tax
		}
		out.DiscountTotal += lp.Discount
		out.CampaignTotal += lp.Campaign
		out.TaxTotal += lp.Tax
		out.Total += lp.Total
	}
	out.TaxBreakdown = TaxBreakdown(out.Lines)
}

// TaxRateOf is a line's rate: its own when it has one, else the org's.
func TaxRateOf(own *int, orgBps int) int {
	if own != nil {
		return *own
	}
	return orgBps
}

// TaxBreakdown groups priced lines by rate, lowest rate first: each
// group's taxable amount (the lines' totals less their tax) and tax are the
// sums of its lines'. A sale's breakdown always has a group per rate
// sold, a zero-rated one too; nil for no lines.
func TaxBreakdown(lines []LinePrice) []TaxGroup {
	var groups []TaxGroup
	for _, lp := range lines {
		groups = AddTax(groups, lp.TaxBps, lp.Total-lp.Tax, lp.Tax)
	}
	return groups
}

// AddTax adds a line's taxable amount and tax to its rate's group of
// groups (kept lowest rate first) and returns groups.
func AddTax(groups []TaxGroup, rateBps int, taxable, tax int64) []TaxGroup {
	i, found := slices.BinarySearchFunc(groups, rateBps, func(g TaxGroup, r int) int { return cmp.Compare(g.RateBps, r) })
	if !found {
		groups = slices.Insert(groups, i, TaxGroup{RateBps: rateBps})
	}
	groups[i].Taxable += taxable
	groups[i].Tax += tax
	return groups
}

// discountOf returns what d takes off base (base ≥ 0, d within its limits):
// never more than base.
func discountOf(d *Discount, base int64) int64 {
	if d == nil || base <= 0 || d.Value <= 0 {
		return 0
	}
	if d.Type == "percent" {
		q, ok := mulDivRound(base, min(d.Value, MaxPercentBps), MaxPercentBps)
		if !ok {
			return 0
		}
		return min(base, q)
	}
	return min(base, d.Value)
}

// allocate splits amount over weights in proportion, by the largest
// remainder method: the parts sum to amount exactly and none exceeds its
// weight, when the weights' sum fits an int64 (Price's bounds make it so).
// amount is clamped to [0, sum of weights]; a negative weight counts as 0.
// Whatever the input it runs in O(n log n) for n weights: amount × weight is
// taken in 128 bits, and fewer than n units are left over after the
// proportional parts, one each to the largest remainders (the earlier line
// first on a tie).
func allocate(amount int64, weights []int64) []int64 {
	parts := make([]int64, len(weights))
	var total int64
	for _, w := range weights {
		if w > 0 {
			total = addSat(total, w)
		}
	}
	amount = min(max(amount, 0), total)
	if amount == 0 {
		return parts
	}
	rems := make([]int64, len(weights))
	var given int64
	for i, w := range weights {
		if w <= 0 {
			continue
		}
		parts[i], rems[i], _ = mulDiv(amount, w, total) // amount ≤ total: the part is ≤ w
		given += parts[i]
	}
	left := amount - given
	if left <= 0 {
		return parts
	}
	order := make([]int, 0, len(weights))
	for i, r := range rems {
		if r > 0 {
			order = append(order, i)
		}
	}
	slices.SortStableFunc(order, func(a, b int) int { return cmp.Compare(rems[b], rems[a]) })
	for _, i := range order[:min(left, int64(len(order)))] {
		parts[i]++
	}
	return parts
}

// RefundShare returns the amount of a line total that refunding qty more
// units returns, when done units were refunded before: the cumulative share
// total × units / quantity (rounded half up) minus what was already
// returned, so refunding every unit in any steps returns the total exactly.
// It is never negative; done and done + qty are clamped to [0, quantity],
// and a non-positive total or quantity returns 0.
func RefundShare(total, quantity, done, qty int64) int64 {
	if total <= 0 || quantity <= 0 {
		return 0
	}
	done = min(max(done, 0), quantity)
	upto := min(max(addSat(done, qty), done), quantity)
	after, _ := mulDivRound(total, upto, quantity) // upto ≤ quantity: ≤ total
	before, _ := mulDivRound(total, done, quantity)
	return after - before
}

// Campaign pricing (docs/campaigns.md). The order of a sale's discounts:
//
//  1. line campaigns: of the campaigns that apply, each line takes the one
//     campaign giving it the most (product_discount, category_discount,
//     buy_x_get_y; one campaign's several rules on a line add up, capped
//     at the line's gross) — campaigns do not stack on a line;
//  2. the order campaign: the one order_discount campaign giving the most
//     on what the lines have left, spread over them like a manual order
//     discount (largest remainder);
//  3. the manual line discount, then the manual order discount, on what is
//     left (Price).
//
// A percent is rounded half up per line, an amount never takes a line
// below zero. Ties go to the campaign created first (then the lower id).
// A campaign with a voucher code competes only on an order that gives the
// code; one with a min_spend rule only when the order's subtotal (gross,
// before any discount) reaches it. The points multiplier is the highest
// of the campaigns that apply.

// CampaignLine is an order line as campaigns see it.
type CampaignLine struct {
	ProductID  string
	CategoryID string
	Unit       int64 // the unit price with modifiers (UnitPrice)
	Quantity   int64
}

// LineCampaign is the part of a line's discount one campaign gave.
type LineCampaign struct {
	CampaignID string `json:"campaign_id"` // The campaign.
	Amount     int64  `json:"amount"`      // What it took off the line, in minor units.
}

// AppliedCampaign is what one campaign gave an order.
type AppliedCampaign struct {
	CampaignID       string `json:"campaign_id"`       // The campaign.
	Name             string `json:"name"`              // Its name when the order was priced.
	Amount           int64  `json:"amount"`            // The discount it gave, in minor units (0 for points only).
	PointsMultiplier int64  `json:"points_multiplier"` // The loyalty multiplier it gave, in basis points (20000: double); 0: none.
}

// CampaignPrice is the campaigns' part of an order's price.
type CampaignPrice struct {
	Lines            [][]LineCampaign // per line, the campaigns' parts (at most one line campaign and one order campaign)
	LineTotals       []int64          // per line, the campaigns' discount
	Applied          []AppliedCampaign
	PointsMultiplier int64 // basis points; 10000 (×1) when no campaign multiplies
}

// PriceCampaigns computes what the campaigns give an order's lines. The
// campaigns are those that apply at the order's place and time (Applies);
// voucher is the code the order gave ("" none). It is pure and bounded:
// O(campaigns × rules × lines) plus a sort of the lines per buy_x_get_y rule.
// Lines beyond the money limits count for nothing here (Price refuses them).
func PriceCampaigns(lines []CampaignLine, campaigns []Campaign, voucher string) CampaignPrice {
	out := CampaignPrice{Lines: make([][]LineCampaign, len(lines)), LineTotals: make([]int64, len(lines)), PointsMultiplier: MaxPercentBps}
	gross, subtotal := grossOf(lines)
	eligible := eligibleCampaigns(campaigns, NormalizeVoucher(voucher), subtotal)
	amounts := map[string]int64{}
	rest, restTotal := out.lineCampaigns(eligible, lines, gross, amounts)
	out.orderCampaign(eligible, rest, restTotal, amounts)
	// Points: the highest multiplier.
	var pointsOf *Campaign
	for _, c := range eligible {
		if r := c.rule(RulePointsMultiplier); r != nil && r.Value > out.PointsMultiplier {
			out.PointsMultiplier, pointsOf = r.Value, c
		}
	}
	for _, c := range eligible {
		a := AppliedCampaign{CampaignID: c.ID, Name: c.Name, Amount: amounts[c.ID]}
		if c == pointsOf {
			a.PointsMultiplier = out.PointsMultiplier
		}
		if a.Amount > 0 || a.PointsMultiplier > 0 {
			out.Applied = append(out.Applied, a)
		}
	}
	return out
}

// grossOf is each line's gross (0 for a line out of bounds) and their sum.
func grossOf(lines []CampaignLine) ([]int64, int64) {
	gross := make([]int64, len(lines))
	var subtotal int64
	for i, l := range lines {
		if l.Quantity >= 1 && l.Quantity <= MaxLineQuantity && l.Unit >= 0 && l.Unit <= MaxLineGross/l.Quantity {
			gross[i] = l.Unit * l.Quantity
			subtotal += gross[i]
		}
	}
	return gross, subtotal
}

// eligibleCampaigns are the campaigns an order of subtotal with voucher (normalized)
// may get, oldest first.
func eligibleCampaigns(campaigns []Campaign, voucher string, subtotal int64) []*Campaign {
	eligible := make([]*Campaign, 0, len(campaigns))
	for i := range campaigns {
		c := &campaigns[i]
		if c.VoucherCode != nil && (voucher == "" || *c.VoucherCode != voucher) {
			continue
		}
		if m := c.rule(RuleMinSpend); m != nil && subtotal < m.MinSubtotal {
			continue
		}
		eligible = append(eligible, c)
	}
	slices.SortStableFunc(eligible, func(a, b *Campaign) int {
		return cmp.Or(a.CreatedAt.Compare(b.CreatedAt), cmp.Compare(a.ID, b.ID))
	})
	return eligible
}

// lineCampaigns gives each line the best line campaign, adds what each
// campaign gave to amounts, and returns what is left of each line and of
// the order.
func (out *CampaignPrice) lineCampaigns(eligible []*Campaign, lines []CampaignLine, gross []int64, amounts map[string]int64) ([]int64, int64) {
	best := make([]int64, len(lines))
	bestOf := make([]*Campaign, len(lines))
	for _, c := range eligible {
		for i, d := range c.lineDiscounts(lines, gross) {
			if d > best[i] {
				best[i], bestOf[i] = d, c
			}
		}
	}
	rest := make([]int64, len(lines))
	var restTotal int64
	for i := range lines {
		if bestOf[i] != nil {
			out.Lines[i] = append(out.Lines[i], LineCampaign{CampaignID: bestOf[i].ID, Amount: best[i]})
			out.LineTotals[i] = best[i]
			amounts[bestOf[i].ID] += best[i]
		}
		rest[i] = gross[i] - best[i]
		restTotal += rest[i]
	}
	return rest, restTotal
}

// orderCampaign gives the order the best order campaign on what the line
// campaigns left, spread over the lines.
func (out *CampaignPrice) orderCampaign(eligible []*Campaign, rest []int64, restTotal int64, amounts map[string]int64) {
	var orderBest int64
	var orderOf *Campaign
	for _, c := range eligible {
		var d int64
		for _, r := range c.Rules {
			if r.Type == RuleOrderDiscount {
				d += discountOf(&Discount{Type: r.DiscountType, Value: r.Value}, restTotal)
			}
		}
		if d = min(d, restTotal); d > orderBest {
			orderBest, orderOf = d, c
		}
	}
	if orderOf == nil {
		return
	}
	for i, part := range allocate(orderBest, rest) {
		if part > 0 {
			out.Lines[i] = append(out.Lines[i], LineCampaign{CampaignID: orderOf.ID, Amount: part})
			out.LineTotals[i] += part
		}
	}
	amounts[orderOf.ID] += orderBest
}

// rule returns c's first rule of type t, or nil.
func (c *Campaign) rule(t string) *CampaignRule {
	for i := range c.Rules {
		if c.Rules[i].Type == t {
			return &c.Rules[i]
		}
	}
	return nil
}

// lineDiscounts is what c's line rules take off each line, capped at its gross.
func (c *Campaign) lineDiscounts(lines []CampaignLine, gross []int64) []int64 {
	out := make([]int64, len(lines))
	for _, r := range c.Rules {
		switch r.Type {
		case RuleProductDiscount, RuleCategoryDiscount:
			for i, l := range lines {
				ids, id := r.ProductIDs, l.ProductID
				if r.Type == RuleCategoryDiscount {
					ids, id = r.CategoryIDs, l.CategoryID
				}
				if gross[i] == 0 || id == "" || !slices.Contains(ids, id) {
					continue
				}
				d := &Discount{Type: r.DiscountType, Value: r.Value}
				if r.DiscountType == DiscountAmount { // per unit: ≤ 10^12 × 10^4, no overflow
					d.Value = min(r.Value, MaxMoney) * l.Quantity
				}
				out[i] += discountOf(d, gross[i])
			}
		case RuleBuyXGetY:
			for i, d := range buyXGetY(r, lines, gross) {
				out[i] += d
			}
		}
	}
	for i := range out {
		out[i] = min(out[i], gross[i])
	}
	return out
}

// buyXGetY: of the units of r's products, every buy+get units make a
// group, and each group's get units are discounted by r.Value percent —
// the cheapest units of the order first (the earlier line on a tie).
func buyXGetY(r CampaignRule, lines []CampaignLine, gross []int64) []int64 {
	out := make([]int64, len(lines))
	group := r.BuyQuantity + r.GetQuantity
	if r.BuyQuantity < 1 || r.GetQuantity < 1 {
		return out
	}
	var units int64
	idx := make([]int, 0, len(lines))
	for i, l := range lines {
		if gross[i] > 0 && slices.Contains(r.ProductIDs, l.ProductID) {
			idx = append(idx, i)
			units += l.Quantity
		}
	}
	free := units / group * r.GetQuantity
	slices.SortStableFunc(idx, func(a, b int) int { return cmp.Compare(lines[a].Unit, lines[b].Unit) })
	for _, i := range idx {
		if free == 0 {
			break
		}
		n := min(free, lines[i].Quantity)
		free -= n
		out[i] = discountOf(&Discount{Type: DiscountPercent, Value: r.Value}, lines[i].Unit*n)
	}
	return out
}

// MultiplyPoints applies a campaign points multiplier (basis points,
// 10000 = ×1) to the points an order earns, rounded half up; a multiplier
// of ×1 or less leaves them as they are.
func MultiplyPoints(points, multiplierBps int64) int64 {
	if points <= 0 || multiplierBps <= MaxPercentBps {
		return points
	}
	q, ok := mulDivRound(points, min(multiplierBps, MaxPointsMultiplier), MaxPercentBps)
	if !ok {
		return points
	}
	return q
}

// PointsMultiplierOf is the multiplier an order's campaigns gave it
// (10000 when none did).
func PointsMultiplierOf(applied []AppliedCampaign) int64 {
	m := int64(MaxPercentBps)
	for _, a := range applied {
		m = max(m, a.PointsMultiplier)
	}
	return m
}
