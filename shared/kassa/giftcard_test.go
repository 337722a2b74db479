package kassa

import (
	"errors"
	"strings"
	"testing"
	"time"
)

// TestGiftCardCodesAreOfTheAlphabetAndReadAsTyped: generated codes are 16
// characters of the unambiguous alphabet, all different; a code typed in
// lower case with spaces and dashes reads as the code; nothing else does.
func TestGiftCardCodesAreOfTheAlphabetAndReadAsTyped(t *testing.T) {
	seen := map[string]bool{}
	for range 1000 {
		c := NewGiftCardCode()
		if n, ok := NormalizeGiftCardCode(c); !ok || n != c || seen[c] {
			t.Fatalf("code %q: normalized %q %v, seen %v", c, n, ok, seen[c])
		}
		if strings.ContainsAny(c, "01OIL") {
			t.Fatalf("code %q has an ambiguous character", c)
		}
		seen[c] = true
	}
	if n, ok := NormalizeGiftCardCode("abcd-efgh 2345-6789"); !ok || n != "ABCDEFGH23456789" {
		t.Fatalf("typed code read as %q %v", n, ok)
	}
	for _, bad := range []string{"", "ABCDEFGH2345678", "ABCDEFGH234567890", "ABCDEFGH2345678O", "ABCDEFGH2345678!"} {
		if _, ok := NormalizeGiftCardCode(bad); ok {
			t.Errorf("%q read as a code", bad)
		}
	}
}

// TestGiftCardCodeIsShownInFullOnlyToPaymentWriters.
func TestGiftCardCodeIsShownInFullOnlyToPaymentWriters(t *testing.T) {
	for _, tc := range []struct {
		a    *Actor
		want string
	}{
		{&Actor{Scopes: []Scope{ScopePaymentsRead, ScopePaymentsWrite}}, "ABCDEFGH23456789"},
		{&Actor{Scopes: []Scope{ScopePaymentsRead}}, "••••••••••••6789"},
		{nil, "••••••••••••6789"}, // events
	} {
		g := GiftCard{Code: "ABCDEFGH23456789"}
		g.MaskCode(tc.a)
		if g.Code != tc.want {
			t.Errorf("shown %q, want %q", g.Code, tc.want)
		}
	}
}

// TestGiftCardRedeemableNamesTheCode: each refusal is EInvalid on gift_card_code.
func TestGiftCardRedeemableNamesTheCode(t *testing.T) {
	now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	past := now.Add(-time.Second)
	card := func(mod func(*GiftCard)) *GiftCard {
		g := &GiftCard{Status: GiftCardActive, Currency: "AUD", Balance: 1000}
		if mod != nil {
			mod(g)
		}
		return g
	}
	if err := card(nil).Redeemable(now, "AUD", 1000); err != nil {
		t.Fatalf("the whole balance: %v", err)
	}
	for name, g := range map[string]*GiftCard{
		"disabled":     card(func(g *GiftCard) { g.Status = GiftCardDisabled }),
		"expired":      card(func(g *GiftCard) { g.ExpiresAt = &past }),
		"expiring now": card(func(g *GiftCard) { g.ExpiresAt = &now }),
		"short":        card(func(g *GiftCard) { g.Balance = 999 }),
		"in EUR":       card(func(g *GiftCard) { g.Currency = "EUR" }),
	} {
		t.Run(name, func(t *testing.T) { wantKind(t, g.Redeemable(now, "AUD", 1000), EInvalid, "gift_card_code") })
	}
}

// TestGiftCardOfflineAllowance: 0 takes nothing offline; an allowance takes
// up to it in a day, all of a store's offline gift card payments together;
// a refusal is unavailable with a Retry-After.
func TestGiftCardOfflineAllowance(t *testing.T) {
	for _, c := range []struct {
		limit, amount, taken int64
		ok                   bool
	}{{0, 1, 0, false}, {2000, 1200, 0, true}, {2000, 801, 1200, false}, {2000, 800, 1200, true}, {2000, 1, 2000, false}} {
		st := OrgSettings{GiftCardOfflineLimit: c.limit}
		err := GiftCardOfflineRefusal(&st, c.amount, c.taken)
		var ke *Error
		if (err == nil) != c.ok || (err != nil && (!errors.As(err, &ke) || ke.Kind != EUnavailable || ke.RetryAfter == 0)) {
			t.Errorf("limit %d, %d after %d: %v", c.limit, c.amount, c.taken, err)
		}
	}
}

// TestGiftCardHoldsTakeTheirShare: what other stores hold is not there to
// spend; a hold request is checked and its code read as typed.
func TestGiftCardHoldsTakeTheirShare(t *testing.T) {
	now := time.Now()
	g := GiftCard{Status: GiftCardActive, Currency: "AUD", Balance: 3000}
	if err := g.RedeemableWith(now, "AUD", 2880, 0); err != nil {
		t.Fatal(err)
	}
	if err := g.RedeemableWith(now, "AUD", 2880, 2880); err == nil || ErrorKind(err) != EInvalid {
		t.Fatalf("2880 of 3000 with 2880 held: %v", err)
	}
	h := GiftCardHold{PaymentID: "01a2204d-596b-7183-9370-1782b7cce561", Code: "abcd-efgh-jkmn-pqrs", Amount: 1, Currency: "AUD"}
	if err := h.Validate(); err != nil || h.Code != "ABCDEFGHJKMNPQRS" {
		t.Fatalf("%v, %q", err, h.Code)
	}
	for _, bad := range []GiftCardHold{{PaymentID: h.PaymentID, Code: "short", Amount: 1, Currency: "AUD"},
		{PaymentID: h.PaymentID, Code: h.Code, Amount: 0, Currency: "AUD"}, {PaymentID: "x", Code: h.Code, Amount: 1, Currency: "AUD"}} {
		if err := bad.Validate(); ErrorKind(err) != EInvalid {
			t.Errorf("%+v: %v", bad, err)
		}
	}
}
