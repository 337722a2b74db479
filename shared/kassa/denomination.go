package kassa

import (
	"slices"
	"strconv"
	"strings"
)

// Cash is counted by denomination in the currencies Kassa has a table for
// (Denominations); in any other currency a count is one amount.

// denominations lists each supported currency's notes and coins in minor
// units, largest first.
var denominations = map[string][]int64{
	"AUD": {10000, 5000, 2000, 1000, 500, 200, 100, 50, 20, 10, 5},
	"NZD": {10000, 5000, 2000, 1000, 500, 200, 100, 50, 20, 10},
	"USD": {10000, 5000, 2000, 1000, 500, 200, 100, 50, 25, 10, 5, 1},
	"EUR": {50000, 20000, 10000, 5000, 2000, 1000, 500, 200, 100, 50, 20, 10, 5, 2, 1},
	"GBP": {5000, 2000, 1000, 500, 200, 100, 50, 20, 10, 5, 2, 1},
}

// Denominations returns the notes and coins of a currency in minor units,
// largest first, or nil when Kassa has no table for it (count by amount).
func Denominations(cur string) []int64 { return slices.Clone(denominations[cur]) }

// CashCurrency is the currency cash is counted in: its ISO 4217 code and
// its number of minor-unit digits (2 for AUD, 0 for JPY), which the store
// layer reads off golang.org/x/text/currency.
type CashCurrency struct {
	Code     string
	Decimals int
}

// MaxCashCount is the most a drawer count or a paid-in/out may be, in
// major units of the currency: a till never holds a million.
const MaxCashCount = 1_000_000

// MaxCash returns MaxCashCount in minor units of c.
func (c CashCurrency) MaxCash() int64 {
	n := int64(MaxCashCount)
	for range min(max(c.Decimals, 0), 4) {
		n *= 10
	}
	return n
}

// MaxDenominationCount bounds how many notes or coins of one value a count
// may name.
const MaxDenominationCount = 100_000

// DenominationCount is how many notes or coins of one value were counted.
type DenominationCount struct {
	Value int64 `json:"value" openapi:"required"` // The note or coin, in minor units (5000 is a 50-dollar note).
	Count int64 `json:"count" openapi:"required"` // How many were counted.
}

// CashCount is a counted amount of cash: by denomination in a currency
// Kassa has a table for, else (or for a quick count) as one amount.
type CashCount struct {
	Denominations []DenominationCount `json:"denominations"` // The count per note and coin; values from the currency's table.
	Amount        *int64              `json:"amount"`        // The total, in minor units; required without denominations, and must match them when both are given.
}

// Total validates c as a count in cur and returns its total. Fields are
// named under prefix (e.g. "float."). Errors: EInvalid.
func (c CashCount) Total(in CashCurrency, prefix string) (int64, error) {
	if len(c.Denominations) > 50 {
		return 0, InvalidField(prefix+"denominations", "must list at most 50 values")
	}
	var v Validation
	cur := in.Code
	table := denominations[cur]
	max := in.MaxCash()
	var sum int64
	seen := map[int64]bool{}
	for i, d := range c.Denominations {
		f := prefix + "denominations[" + strconv.Itoa(i) + "]"
		switch {
		case table != nil && !slices.Contains(table, d.Value):
			v.Add(f+".value", "is not a note or coin of %s (%s)", cur, joinInts(table))
		case table == nil && (d.Value <= 0 || d.Value > max):
			v.Add(f+".value", "must be a positive amount in minor units")
		case seen[d.Value]:
			v.Add(f+".value", "is listed twice")
		case d.Count < 0 || d.Count > MaxDenominationCount:
			v.Add(f+".count", "must be from 0 to %d", MaxDenominationCount)
		default:
			seen[d.Value] = true
			sum += d.Value * d.Count
		}
	}
	if err := v.Err(); err != nil {
		return 0, err
	}
	switch {
	case c.Amount == nil && len(c.Denominations) == 0:
		return 0, InvalidField(prefix+"denominations", "count the cash by denomination, or give amount")
	case c.Amount != nil && (*c.Amount < 0 || *c.Amount > max):
		return 0, InvalidField(prefix+"amount", "must be from 0 to "+strconv.FormatInt(max, 10)+" minor units")
	case c.Amount != nil && len(c.Denominations) > 0 && *c.Amount != sum:
		return 0, InvalidField(prefix+"amount", "does not match the denominations' total "+strconv.FormatInt(sum, 10))
	case c.Amount != nil:
		return *c.Amount, nil
	case sum > max:
		return 0, InvalidField(prefix+"denominations", "add up to more than a till holds ("+strconv.FormatInt(max, 10)+" minor units)")
	}
	return sum, nil
}

func joinInts(xs []int64) string {
	parts := make([]string, len(xs))
	for i, x := range xs {
		parts[i] = strconv.FormatInt(x, 10)
	}
	return strings.Join(parts, ", ")
}
