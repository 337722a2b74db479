package kassa

import (
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"
)

func TestCode128PatternsAreElevenModulesAndDistinct(t *testing.T) {
	seen := map[string]bool{}
	for v, p := range code128Patterns {
		sum := 0
		for _, c := range p {
			sum += int(c - '0')
		}
		if want := map[bool]int{true: 13, false: 11}[v == code128Stop]; sum != want || seen[p] {
			t.Fatalf("symbol %d: %s sums to %d (want %d) or repeats", v, p, sum, want)
		}
		seen[p] = true
	}
}

// TestCode128SVGDecodes reads the SVG's bars back into symbols: the data
// comes back and the check symbol holds.
func TestCode128SVGDecodes(t *testing.T) {
	svg, err := Code128SVG("3F9A1C-00042", 1, 40)
	if err != nil {
		t.Fatal(err)
	}
	var widths []int
	x := 10
	for _, m := range regexp.MustCompile(`<rect x="(\d+)" y="0" width="(\d+)"`).FindAllStringSubmatch(svg, -1) {
		bx, _ := strconv.Atoi(m[1])
		w, _ := strconv.Atoi(m[2])
		if len(widths) > 0 {
			widths = append(widths, bx-x) // the space before this bar
		}
		widths = append(widths, w)
		x = bx + w
	}
	byPattern := map[string]int{}
	for v, p := range code128Patterns {
		byPattern[p] = v
	}
	var syms []int
	for i := 0; i+6 <= len(widths); i += 6 {
		var b strings.Builder
		for _, w := range widths[i : i+6] {
			b.WriteString(strconv.Itoa(w))
		}
		v, ok := byPattern[b.String()]
		if !ok {
			break
		}
		syms = append(syms, v)
	}
	if len(syms) < 3 || syms[0] != code128StartB {
		t.Fatalf("symbols %v", syms)
	}
	data, check := syms[1:len(syms)-1], syms[len(syms)-1]
	sum, text := code128StartB, ""
	for i, v := range data {
		sum += v * (i + 1)
		text += string(rune(v + 32))
	}
	if text != "3F9A1C-00042" || sum%103 != check {
		t.Fatalf("decoded %q check %d, want %d", text, check, sum%103)
	}
	if _, err := Code128B("café"); err == nil {
		t.Fatal("non-ASCII encoded")
	}
}

func TestFormatMinor(t *testing.T) {
	for _, c := range []struct {
		v     int64
		scale int
		want  string
	}{{1234, 2, "12.34"}, {-5, 2, "-0.05"}, {500, 0, "500"}, {1234, 3, "1.234"}} {
		if got := FormatMinor(c.v, c.scale); got != c.want {
			t.Errorf("FormatMinor(%d, %d) = %q, want %q", c.v, c.scale, got, c.want)
		}
	}
}

func TestReceiptTextFitsThePaper(t *testing.T) {
	change, tendered := int64(80), int64(1000)
	r := &Receipt{Number: "ABCDEF-1-000001", Kind: ReceiptSale, OrderNumber: "ABCDEF-00001", Currency: "AUD", Scale: 2,
		Store: ReceiptStore{Name: "A café with a very long name indeed, longer than paper", Footer: "Thanks — see you"},
		Lines: []ReceiptLine{{Name: "Flat white with a name far too long for any receipt", Quantity: 1, Total: 920,
			Modifiers: []ReceiptAmount{{Name: "Oat", Amount: 70}}}},
		Total: 920, Taxes: []ReceiptTax{{RateBps: 1000, Tax: 84}}, TaxInclusive: true,
		Payments: []ReceiptPayment{{Method: PaymentCash, Amount: 920, Tendered: &tendered, Change: &change}}, IssuedAt: time.Now()}
	for _, w := range []int{58, 80} {
		text := ReceiptText(r, w)
		for _, l := range strings.Split(text, "\n") {
			if len(l) > PaperColumns(w) || strings.ContainsFunc(l, func(c rune) bool { return c < 32 || c > 126 }) {
				t.Fatalf("%d mm: line %q", w, l)
			}
		}
		if !strings.Contains(text, "change") || !strings.Contains(text, "Tax 10.00% incl.") {
			t.Fatalf("%d mm:\n%s", w, text)
		}
	}
	if b := EscPos(r, 80, false); strings.Contains(string(b), string(EscPosKick)) {
		t.Fatal("a print without kick opens the drawer")
	}
}
