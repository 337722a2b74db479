package kassa

// Pricing rules, all in integer minor units:
//
//   - A line's gross is (unit price + modifier adjustments) × quantity.
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

// PricedLine is a line to price: its gross and its own discount.
type PricedLine struct {
	Gross    int64
	Discount *Discount
}

// LinePrice is the result for one line.
type LinePrice struct {
	Discount int64
	Tax      int64
	Total    int64
}

// OrderPrice is the result for an order.
type OrderPrice struct {
	Lines         []LinePrice
	Subtotal      int64
	DiscountTotal int64
	TaxTotal      int64
	Total         int64
}

// divRound returns a/b rounded half up, for a ≥ 0 and b > 0.
func divRound(a, b int64) int64 { return (2*a + b) / (2 * b) }

// discountOf returns what d takes off base.
func discountOf(d *Discount, base int64) int64 {
	if d == nil || base <= 0 {
		return 0
	}
	if d.Type == "percent" {
		return min(base, divRound(base*d.Value, 10000))
	}
	return min(base, d.Value)
}

// Price prices an order's lines.
func Price(lines []PricedLine, orderDiscount *Discount, taxBps int, inclusive bool) OrderPrice {
	out := OrderPrice{Lines: make([]LinePrice, len(lines))}
	rest := make([]int64, len(lines))
	var restTotal int64
	for i, l := range lines {
		out.Lines[i].Discount = discountOf(l.Discount, l.Gross)
		rest[i] = l.Gross - out.Lines[i].Discount
		restTotal += rest[i]
		out.Subtotal += l.Gross
	}
	if od := discountOf(orderDiscount, restTotal); od > 0 {
		for i, part := range allocate(od, rest) {
			out.Lines[i].Discount += part
		}
	}
	r := int64(taxBps)
	for i, l := range lines {
		lp := &out.Lines[i]
		net := l.Gross - lp.Discount
		if inclusive {
			lp.Tax = divRound(net*r, 10000+r)
			lp.Total = net
		} else {
			lp.Tax = divRound(net*r, 10000)
			lp.Total = net + lp.Tax
		}
		out.DiscountTotal += lp.Discount
		out.TaxTotal += lp.Tax
		out.Total += lp.Total
	}
	return out
}

// allocate splits amount over weights in proportion, by largest remainder;
// the parts sum to amount exactly (amount ≤ sum of weights).
func allocate(amount int64, weights []int64) []int64 {
	parts := make([]int64, len(weights))
	var total int64
	for _, w := range weights {
		total += w
	}
	if total == 0 {
		return parts
	}
	rems := make([]int64, len(weights))
	var given int64
	for i, w := range weights {
		parts[i] = amount * w / total
		rems[i] = amount * w % total
		given += parts[i]
	}
	for left := amount - given; left > 0; left-- {
		best := -1
		for i := range weights {
			if weights[i] > parts[i] && (best < 0 || rems[i] > rems[best]) {
				best = i
			}
		}
		if best < 0 {
			break
		}
		parts[best]++
		rems[best] = -1
	}
	return parts
}

// RefundShare returns the amount of a line total that refunding qty more
// units returns, when done units were refunded before: the cumulative share
// total × units / quantity (rounded half up) minus what was already
// returned, so refunding every unit in any steps returns the total exactly.
func RefundShare(total, quantity, done, qty int64) int64 {
	return divRound(total*(done+qty), quantity) - divRound(total*done, quantity)
}
