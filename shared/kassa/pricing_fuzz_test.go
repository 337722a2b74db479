package kassa

import (
	"encoding/binary"
	"errors"
	"math"
	"math/big"
	"slices"
	"testing"
)

// FuzzPrice prices arbitrary orders and checks that pricing terminates and
// that the totals' invariants hold: the order equals the sum of its lines,
// discounts never exceed the gross, every part is ≥ 0, tax is the half-up
// rounding of its exact value, the order discount's largest-remainder parts
// sum to it exactly (each the floor or ceiling of its exact share), and
// refunding each line in any steps returns its total exactly; each line is
// taxed at its own rate when it has one (a tax category's), and the tax
// breakdown has one group per rate, lowest first, whose taxable amounts and
// tax sum to the order's (tax by rate sums to the tax total). An order
// beyond the limits of money.go is refused with EInvalid, never priced
// wrong. Its seeds (testdata/fuzz/FuzzPrice) run in every go test; search
// with go test -fuzz=FuzzPrice ./shared/kassa/.
//
// Lines are read from data, fuzzLineSize bytes each: a flags byte (bits
// 0–1: no discount, percent, amount, an unknown type; bit 2: raw values,
// else reduced into range; bit 3: small everyday prices; bit 4: the line
// has its own tax rate, bits 5–7 choosing it of fuzzRates), the unit price
// (int64), the quantity (int32) and the discount's value (int64). The order
// discount's kind uses the same flags; steps split each line's refund.
//
// Markdowns (docs/catalog.md): the same order marked down — every unit by
// a percent, or to a new price, both drawn from the order discount's value
// — is priced again: a markdown never raises a unit nor takes it below 0,
// a percent takes the half-up rounding of its exact share, and the
// marked-down order keeps every invariant above (totals add up, tax by
// rate sums to the tax total) with a subtotal no higher than before.
func FuzzPrice(f *testing.F) {
	f.Add(fuzzLines(fuzzLine{0, 550, 2, 0}, fuzzLine{1, 450, 1, 1000}), uint8(2), int64(100), uint16(1000), true, []byte{1})
	f.Add(fuzzLines(fuzzLine{0, 125, 1, 0}, fuzzLine{0, 5, 1, 0}), uint8(0), int64(0), uint16(1000), false, []byte{0})
	// The overflow: 10^12 of order discount over lines of 10^12 each.
	f.Add(fuzzLines(fuzzLine{4, 100_000_000, 10_000, 0}, fuzzLine{4, 100_000_000, 10_000, 0}), uint8(5), int64(10_000), uint16(1000), true, []byte{3, 1})
	f.Add(fuzzLines(fuzzLine{4, 60_000_000, 10_000, 0}, fuzzLine{4, 40_000_000, 10_000, 0}), uint8(5), int64(5_000), uint16(5000), false, []byte{7, 2})
	// GST-free bread (zero-rated) beside taxed coffee; two VAT rates and the org's.
	f.Add(fuzzLines(fuzzLine{16, 450, 2, 0}, fuzzLine{0, 550, 1, 0}), uint8(0), int64(0), uint16(1000), true, []byte{1})
	f.Add(fuzzLines(fuzzLine{16 | 32<<1 | 1, 1999, 3, 1500}, fuzzLine{16 | 32*3, 2499, 1, 0}, fuzzLine{2, 999, 7, 300}), uint8(1), int64(1250), uint16(2000), false, []byte{2, 5})
	f.Add(fuzzLines(fuzzLine{4, math.MaxInt64, math.MaxInt32, math.MaxInt64}), uint8(6), int64(math.MaxInt64), uint16(65535), false, []byte{255})
	f.Fuzz(func(t *testing.T, data []byte, odKind uint8, odValue int64, tax uint16, inclusive bool, steps []byte) {
		lines := decodeFuzzLines(data)
		od := fuzzDiscount(odKind, odValue)
		taxBps := int(tax)
		if odKind&4 == 0 {
			taxBps %= MaxTaxRateBps + 1
		}
		p, err := Price(lines, od, taxBps, inclusive)
		if err != nil {
			checkRefusal(t, lines, od, taxBps, inclusive, err)
		} else {
			checkPrice(t, lines, od, taxBps, inclusive, p)
			checkRefundShares(t, lines, p, steps)
			checkMarkdowns(t, lines, od, taxBps, inclusive, p, odValue)
		}
		checkAllocate(t, odValue, lines)
	})
}

const fuzzLineSize = 1 + 8 + 4 + 8

type fuzzLine struct {
	flags    uint8
	unit     int64
	quantity int32
	value    int64
}

func fuzzLines(ls ...fuzzLine) []byte {
	var b []byte
	for _, l := range ls {
		b = append(b, l.flags)
		b = binary.LittleEndian.AppendUint64(b, uint64(l.unit))
		b = binary.LittleEndian.AppendUint32(b, uint32(l.quantity))
		b = binary.LittleEndian.AppendUint64(b, uint64(l.value))
	}
	return b
}

func decodeFuzzLines(data []byte) []PricedLine {
	var lines []PricedLine
	for len(data) >= fuzzLineSize && len(lines) < MaxOrderLines+5 {
		flags := data[0]
		unit := int64(binary.LittleEndian.Uint64(data[1:]))
		qty := int64(int32(binary.LittleEndian.Uint32(data[9:])))
		value := int64(binary.LittleEndian.Uint64(data[13:]))
		data = data[fuzzLineSize:]
		if flags&4 == 0 { // reduce into range
			qty = 1 + abs64(qty)%MaxLineQuantity
			if flags&8 != 0 {
				unit = abs64(unit) % 100_000
			} else {
				unit = abs64(unit) % (MaxLineGross/qty + 1)
			}
		}
		l := PricedLine{Unit: unit, Quantity: qty, Discount: fuzzDiscount(flags, value)}
		if flags&16 != 0 {
			l.TaxBps = &fuzzRates[flags>>5]
		}
		lines = append(lines, l)
	}
	return lines
}

// fuzzRates are the lines' own rates: zero-rated, GST, VAT rates, the limit.
var fuzzRates = [8]int{0, 1000, 500, 2000, 2100, 700, 1900, MaxTaxRateBps}

func fuzzDiscount(flags uint8, value int64) *Discount {
	raw := flags&4 != 0
	switch flags & 3 {
	case 1:
		if !raw {
			value = abs64(value) % (MaxPercentBps + 1)
		}
		return &Discount{Type: "percent", Value: value}
	case 2:
		if !raw {
			value = abs64(value) % (MaxMoney + 1)
		}
		return &Discount{Type: "amount", Value: value}
	case 3:
		return &Discount{Type: "bogus", Value: value}
	}
	return nil
}

func abs64(v int64) int64 {
	if v < 0 {
		if v == math.MinInt64 {
			return math.MaxInt64
		}
		return -v
	}
	return v
}

func bigOf(v int64) *big.Int { return big.NewInt(v) }

// bigDivRound is a / b rounded half up, for a ≥ 0 and b > 0.
func bigDivRound(a, b *big.Int) *big.Int {
	n := new(big.Int).Mul(a, big.NewInt(2))
	n.Add(n, b)
	return n.Quo(n, new(big.Int).Mul(b, big.NewInt(2)))
}

func validFuzzDiscount(d *Discount) bool {
	if d == nil {
		return true
	}
	switch d.Type {
	case "percent":
		return d.Value >= 0 && d.Value <= MaxPercentBps
	case "amount":
		return d.Value >= 0 && d.Value <= MaxMoney
	}
	return false
}

// exactDiscountOf is discountOf in big integers.
func exactDiscountOf(d *Discount, base *big.Int) *big.Int {
	if d == nil || base.Sign() <= 0 || d.Value <= 0 {
		return new(big.Int)
	}
	v := bigOf(d.Value)
	if d.Type == "percent" {
		v = bigDivRound(new(big.Int).Mul(base, v), bigOf(MaxPercentBps))
	}
	if v.Cmp(base) > 0 {
		return new(big.Int).Set(base)
	}
	return v
}

// checkRefusal requires a refused order to be beyond the limits.
func checkRefusal(t *testing.T, lines []PricedLine, od *Discount, taxBps int, inclusive bool, err error) {
	if taxBps < 0 || taxBps > MaxTaxRateBps {
		return // an internal error: the settings never hold such a rate
	}
	var e *Error
	if !errors.As(err, &e) || e.Kind != EInvalid || len(e.Fields) == 0 {
		t.Fatalf("Price refused with %v, want EInvalid naming a field", err)
	}
	valid := len(lines) >= 1 && len(lines) <= MaxOrderLines && validFuzzDiscount(od)
	subtotal := new(big.Int)
	for _, l := range lines {
		valid = valid && validFuzzDiscount(l.Discount) && l.Quantity >= 1 && l.Quantity <= MaxLineQuantity && l.Unit >= 0
		g := new(big.Int).Mul(bigOf(l.Unit), bigOf(l.Quantity))
		valid = valid && g.Cmp(bigOf(MaxLineGross)) <= 0
		subtotal.Add(subtotal, g)
	}
	if valid && subtotal.Cmp(bigOf(MaxOrderTotal)) <= 0 && (inclusive || taxBps == 0) {
		t.Fatalf("Price refused an order within every limit: %v (%+v, %+v)", err, lines, od)
	}
}

// checkPrice checks a priced order against exact arithmetic.
func checkPrice(t *testing.T, lines []PricedLine, od *Discount, taxBps int, inclusive bool, p OrderPrice) {
	if len(p.Lines) != len(lines) {
		t.Fatalf("%d lines priced of %d", len(p.Lines), len(lines))
	}
	var sub, disc, tax, total int64
	orgBps := taxBps
	rest := make([]*big.Int, len(lines))
	restTotal := new(big.Int)
	for i, l := range lines {
		lp := p.Lines[i]
		if g := new(big.Int).Mul(bigOf(l.Unit), bigOf(l.Quantity)); g.Cmp(bigOf(lp.Gross)) != 0 {
			t.Fatalf("line %d: gross %d, want %v", i, lp.Gross, g)
		}
		if lp.Gross < 0 || lp.Discount < 0 || lp.Tax < 0 || lp.Total < 0 || lp.Discount > lp.Gross {
			t.Fatalf("line %d: %+v has a negative part or a discount above its gross", i, lp)
		}
		own := exactDiscountOf(l.Discount, bigOf(lp.Gross))
		if own.Cmp(bigOf(lp.Discount)) > 0 {
			t.Fatalf("line %d: discount %d below its own %v", i, lp.Discount, own)
		}
		rest[i] = new(big.Int).Sub(bigOf(lp.Gross), own)
		restTotal.Add(restTotal, rest[i])
		net := lp.Gross - lp.Discount
		taxBps := TaxRateOf(l.TaxBps, orgBps)
		if lp.TaxBps != taxBps {
			t.Fatalf("line %d: taxed at %d, want %d", i, lp.TaxBps, taxBps)
		}
		r := bigOf(int64(taxBps))
		if inclusive {
			want := bigDivRound(new(big.Int).Mul(bigOf(net), r), bigOf(10000+int64(taxBps)))
			if want.Cmp(bigOf(lp.Tax)) != 0 || lp.Total != net || lp.Tax > net {
				t.Fatalf("line %d: inclusive tax %d total %d of net %d, want tax %v", i, lp.Tax, lp.Total, net, want)
			}
		} else {
			want := bigDivRound(new(big.Int).Mul(bigOf(net), r), bigOf(10000))
			if want.Cmp(bigOf(lp.Tax)) != 0 || lp.Total != net+lp.Tax {
				t.Fatalf("line %d: exclusive tax %d total %d of net %d, want tax %v", i, lp.Tax, lp.Total, net, want)
			}
		}
		sub += lp.Gross
		disc += lp.Discount
		tax += lp.Tax
		total += lp.Total
	}
	if p.Subtotal != sub || p.DiscountTotal != disc || p.TaxTotal != tax || p.Total != total {
		t.Fatalf("totals %+v are not the sums of the lines (%d, %d, %d, %d)", p, sub, disc, tax, total)
	}
	if p.DiscountTotal > p.Subtotal || p.Total > MaxOrderTotal || p.Subtotal > MaxOrderTotal {
		t.Fatalf("totals %+v beyond the gross or the limit", p)
	}
	checkTaxBreakdown(t, p)
	// The order discount, spread by largest remainder: the parts sum to it
	// exactly and each is the floor or the ceiling of its exact share.
	amount := exactDiscountOf(od, restTotal)
	given := new(big.Int)
	for i, l := range lines {
		part := new(big.Int).Sub(bigOf(p.Lines[i].Discount), exactDiscountOf(l.Discount, bigOf(p.Lines[i].Gross)))
		if part.Sign() < 0 || part.Cmp(rest[i]) > 0 {
			t.Fatalf("line %d: order discount part %v outside [0, %v]", i, part, rest[i])
		}
		given.Add(given, part)
		if restTotal.Sign() > 0 {
			share := new(big.Int).Mul(amount, rest[i])
			lo := new(big.Int).Quo(share, restTotal)
			if d := new(big.Int).Sub(part, lo); d.Sign() < 0 || d.Cmp(big.NewInt(1)) > 0 {
				t.Fatalf("line %d: part %v is not the floor or ceiling of %v/%v", i, part, share, restTotal)
			}
		}
	}
	if given.Cmp(amount) != 0 {
		t.Fatalf("order discount parts sum to %v, want %v", given, amount)
	}
}

// checkTaxBreakdown requires one group per rate, lowest first, each the
// sums of its lines, the groups summing to the order's tax and total.
func checkTaxBreakdown(t *testing.T, p OrderPrice) {
	want := map[int]TaxGroup{}
	for _, lp := range p.Lines {
		g := want[lp.TaxBps]
		g.RateBps, g.Taxable, g.Tax = lp.TaxBps, g.Taxable+lp.Total-lp.Tax, g.Tax+lp.Tax
		want[lp.TaxBps] = g
	}
	if len(p.TaxBreakdown) != len(want) {
		t.Fatalf("tax breakdown %+v, want a group for each of %d rates", p.TaxBreakdown, len(want))
	}
	var tax, total int64
	for i, g := range p.TaxBreakdown {
		if g != want[g.RateBps] || g.Taxable < 0 || g.Tax < 0 || (i > 0 && p.TaxBreakdown[i-1].RateBps >= g.RateBps) {
			t.Fatalf("tax breakdown %+v: group %d is not its lines' sums %+v, or not in rate order", p.TaxBreakdown, i, want[g.RateBps])
		}
		tax += g.Tax
		total += g.Taxable + g.Tax
	}
	if tax != p.TaxTotal || total != p.Total {
		t.Fatalf("tax breakdown %+v sums to tax %d total %d, want %d and %d", p.TaxBreakdown, tax, total, p.TaxTotal, p.Total)
	}
}

// checkRefundShares refunds every line in steps and requires its total back.
func checkRefundShares(t *testing.T, lines []PricedLine, p OrderPrice, steps []byte) {
	for i, l := range lines {
		total, q := p.Lines[i].Total, l.Quantity
		var done, got int64
		for k := 0; done < q; k++ {
			qty := q - done
			if len(steps) > 0 {
				qty = min(qty, 1+int64(steps[(i+k)%len(steps)])*q/256)
			}
			share := RefundShare(total, q, done, qty)
			if share < 0 || share > total {
				t.Fatalf("line %d: refund share %d of %d", i, share, total)
			}
			got += share
			done += qty
		}
		if got != total {
			t.Fatalf("line %d: refunding all %d units returned %d of %d", i, q, got, total)
		}
	}
}

// checkAllocate splits amount over the lines' raw unit prices: it must end
// whatever the input, and be exact when the weights' sum fits an int64.
func checkAllocate(t *testing.T, amount int64, lines []PricedLine) {
	weights := make([]int64, len(lines))
	sum := new(big.Int)
	for i, l := range lines {
		weights[i] = l.Unit
		if l.Unit > 0 {
			sum.Add(sum, bigOf(l.Unit))
		}
	}
	parts := allocate(amount, weights)
	if len(parts) != len(weights) || !sum.IsInt64() {
		return
	}
	want := min(max(amount, 0), sum.Int64())
	var got int64
	for i, p := range parts {
		if p < 0 || p > max(weights[i], 0) {
			t.Fatalf("allocate(%d, %v): part %d outside [0, %d]", amount, weights, p, weights[i])
		}
		got += p
	}
	if got != want {
		t.Fatalf("allocate(%d, %v) sums to %d, want %d", amount, weights, got, want)
	}
}

// checkMarkdowns prices lines again under a percent and a new-price
// markdown drawn from seed (FuzzPrice's doc).
func checkMarkdowns(t *testing.T, lines []PricedLine, od *Discount, taxBps int, inclusive bool, before OrderPrice, seed int64) {
	for _, m := range []Markdown{{Type: MarkdownPercent, Value: abs64(seed) % (MaxPercentBps + 1)}, {Type: MarkdownPrice, Value: abs64(seed) % 100_000}} {
		marked := slices.Clone(lines)
		for i, l := range lines {
			u := m.Lower(l.Unit)
			if u > l.Unit || u < min(l.Unit, 0) {
				t.Fatalf("markdown %+v took unit %d to %d", m, l.Unit, u)
			}
			if m.Type == MarkdownPercent && l.Unit > 0 {
				off := bigDivRound(new(big.Int).Mul(bigOf(l.Unit), bigOf(m.Value)), bigOf(MaxPercentBps))
				if want := l.Unit - off.Int64(); u != want {
					t.Fatalf("%d bps off %d gave %d, want %d", m.Value, l.Unit, u, want)
				}
			}
			marked[i].Unit = u
		}
		p, err := Price(marked, od, taxBps, inclusive)
		if err != nil {
			checkRefusal(t, marked, od, taxBps, inclusive, err)
			continue
		}
		checkPrice(t, marked, od, taxBps, inclusive, p)
		if p.Subtotal > before.Subtotal {
			t.Fatalf("marked down, the subtotal rose from %d to %d", before.Subtotal, p.Subtotal)
		}
	}
}
