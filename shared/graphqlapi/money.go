package graphqlapi

import (
	"fmt"
	"math"

	"golang.org/x/text/currency"

	"kassa.dev/shared/kassa"
)

// GraphQL shows money as Float in major units (DESIGN.md "Data"); the
// store and REST keep integer minor units. The number of decimals of each
// currency is ISO 4217's, from golang.org/x/text/currency (JPY 0, AUD 2,
// KWD 3), not a table of our own.

var pow10 = [...]float64{1, 10, 100, 1000, 10000}

// currencyScale returns the decimals of an ISO 4217 code.
func currencyScale(code string) (int, error) {
	u, err := currency.ParseISO(code)
	if err != nil {
		return 0, fmt.Errorf("graphqlapi: the org's currency %q: %w", code, err)
	}
	scale, _ := currency.Standard.Rounding(u)
	if scale < 0 || scale >= len(pow10) {
		return 0, fmt.Errorf("graphqlapi: currency %s has %d decimals", code, scale)
	}
	return scale, nil
}

// toMajor turns minor units into major units: 450 of AUD is 4.5.
func toMajor(minor int64, scale int) float64 {
	return float64(minor) / pow10[scale]
}

// toMinor turns an amount in major units into minor units. It refuses,
// naming field, an amount with more decimals than the currency has (never
// rounding a price the caller typed), a negative one and one above
// kassa.MaxMoney minor units.
func toMinor(v float64, scale int, field string) (int64, error) {
	maxMajor := float64(kassa.MaxMoney) / pow10[scale]
	if math.IsNaN(v) || v < 0 || v > maxMajor {
		return 0, kassa.InvalidField(field, fmt.Sprintf("must be between 0 and %.0f", maxMajor))
	}
	x := v * pow10[scale]
	r := math.Round(x)
	// x carries the binary error of v (4.55 is 454.99999999999994 cents):
	// allow a few ulps of it, far below half a minor unit.
	if math.Abs(x-r) > max(1e-7, math.Abs(x)*1e-14) {
		return 0, kassa.InvalidField(field, fmt.Sprintf("must have at most %d decimals (the org's currency)", scale))
	}
	return int64(r), nil
}
