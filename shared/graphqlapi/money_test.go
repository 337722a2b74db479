package graphqlapi

import (
	"strings"
	"testing"

	"kassa.dev/shared/kassa"
)

// TestMoneyInMajorUnits: prices typed in major units become the minor
// units the store keeps, exactly, in each currency's decimals; an amount
// with more decimals, a negative one and one past the money limit are
// refused naming the field.
func TestMoneyInMajorUnits(t *testing.T) {
	for _, tc := range []struct {
		currency string
		major    float64
		minor    int64
		err      string // part of the field's message, "" for none
	}{
		{"AUD", 4.5, 450, ""},
		{"AUD", 4.55, 455, ""}, // 454.99999999999994 in binary
		{"AUD", 0.29, 29, ""},  // 28.999999999999996
		{"AUD", 1.005, 0, "at most 2 decimals"},
		{"AUD", 4.555, 0, "at most 2 decimals"},
		{"AUD", 0, 0, ""},
		{"AUD", -0.01, 0, "between 0 and"},
		{"AUD", 1e10, kassa.MaxMoney, ""},
		{"AUD", 1e10 + 0.01, 0, "between 0 and"},
		{"AUD", 99999999.99, 9999999999, ""},
		{"JPY", 450, 450, ""},
		{"JPY", 4.5, 0, "at most 0 decimals"},
		{"KWD", 1.234, 1234, ""},
		{"KWD", 1.2345, 0, "at most 3 decimals"},
	} {
		scale, err := currencyScale(tc.currency)
		if err != nil {
			t.Fatal(err)
		}
		got, err := toMinor(tc.major, scale, "basePrice")
		if tc.err == "" {
			if err != nil || got != tc.minor {
				t.Errorf("%v %s: %d, %v; want %d", tc.major, tc.currency, got, err, tc.minor)
				continue
			}
			if back := toMajor(got, scale); back != tc.major {
				t.Errorf("%d minor %s back to major: %v, want %v", got, tc.currency, back, tc.major)
			}
			continue
		}
		ke, ok := err.(*kassa.Error)
		if !ok || ke.Kind != kassa.EInvalid || len(ke.Fields) != 1 || ke.Fields[0].Field != "basePrice" || !strings.Contains(ke.Fields[0].Message, tc.err) {
			t.Errorf("%v %s: %d, %v; want a validation error of basePrice with %q", tc.major, tc.currency, got, err, tc.err)
		}
	}
	if _, err := currencyScale("ZZZ"); err == nil {
		t.Error("an unknown currency has a scale")
	}
}
