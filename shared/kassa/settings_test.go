package kassa

import (
	"reflect"
	"testing"
)

// TestDecodeSettingsOverlaysTheStoredOnTheDefaults: a field the org row
// leaves out keeps its default; a stored payment_methods list replaces
// the default list as a whole, not method by method.
func TestDecodeSettingsOverlaysTheStoredOnTheDefaults(t *testing.T) {
	for _, empty := range []string{"", "{}"} {
		got, err := DecodeSettings([]byte(empty))
		if err != nil || !reflect.DeepEqual(got, DefaultSettings()) {
			t.Fatalf("DecodeSettings(%q) = %+v, %v; want the defaults", empty, got, err)
		}
	}
	got, err := DecodeSettings([]byte(`{"tax_rate_bps":0,"payment_methods":[{"method":"external","enabled":true}]}`))
	if err != nil {
		t.Fatal(err)
	}
	want := DefaultSettings()
	want.TaxRateBps = 0
	want.PaymentMethods = []PaymentMethodConfig{{PaymentExternal, true}}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("got %+v\nwant %+v", got, want)
	}
	if got.Accepts(PaymentCash) {
		t.Fatal("cash is accepted though the stored list leaves it out")
	}
	if _, err := DecodeSettings([]byte(`{"tax_rate_bps":"ten"}`)); err == nil {
		t.Fatal("a malformed row decoded without an error")
	}
}
