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
//   - A line discount (percent in basis points, or an amount) comes off the
//     line's gross; a percent is rounded half up; an amount is capped at the gross.
//   - An order discount is spread over the lines in proportion to what is
//     left of each line, by the largest-remainder method, so the parts add up
//     to the discount exactly; a percent order discount is first turned into
//     an amount of the discountable total (rounded half up).
//   - Tax is computed per line on the discounted amount, rounded half up:
//     inclusive, tax = net × r / (10000 + r) is contained in the line total;
//     exclusive, tax = net × r / 10000 is added to it.
//   - Totals are sums of the lines, so the order always equals its lines.
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
}

// LinePrice is the result for one line.
type LinePrice struct {
	Gross    int64 // unit price × quantity
	Discount int64 // the line's own discount and its share of the order's
	Tax      int64
	Total    int64
}

// OrderPrice is the result for an order.
type OrderPrice struct {
	Lines         []LinePrice
	Subtotal      int64 // sum of the lines' gross
	DiscountTotal int64
	TaxTotal      int64
	Total         int64
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
// org's tax rate. Errors: EInvalid naming the field (line_items[i].quantity,
// line_items[i], line_items, line_items[i].discount.value, discount.value…)
// when an input or a result is beyond the limits of money.go; a tax rate
// out of range is an internal error (the settings forbid it).
func Price(lines []PricedLine, orderDiscount *Discount, taxBps int, inclusive bool) (OrderPrice, error) {
	if taxBps < 0 || taxBps > MaxTaxRateBps {
		return OrderPrice{}, fmt.Errorf("kassa: a tax rate of %d basis points is out of range", taxBps)
	}
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
	rest := make([]int64, len(lines))
	var restTotal int64
	for i, l := range lines {
		lp := &out.Lines[i]
		lp.Discount = discountOf(l.Discount, lp.Gross)
		rest[i] = lp.Gross - lp.Discount
		restTotal += rest[i]
	}
	if od := discountOf(orderDiscount, restTotal); od > 0 {
		for i, part := range allocate(od, rest) {
			out.Lines[i].Discount += part
		}
	}
	r := int64(taxBps)
	for i := range out.Lines {
		lp := &out.Lines[i]
		net := lp.Gross - lp.Discount
		if inclusive {
			lp.Tax, _ = mulDivRound(net, r, 10000+r) // ≤ net
			lp.Total = net
		} else {
			lp.Tax, _ = mulDivRound(net, r, 10000) // ≤ net / 2
			lp.Total = net + lp.Tax
		}
		out.DiscountTotal += lp.Discount
		out.TaxTotal += lp.Tax
		out.Total += lp.Total
	}
	if out.Total > MaxOrderTotal {
		v.Add("line_items", "the order's total with tax is above 10^12 minor units")
		return OrderPrice{}, v.Err()
	}
	return out, nil
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
