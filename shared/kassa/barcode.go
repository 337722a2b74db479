package kassa

import (
	"fmt"
	"html"
	"strings"
)

// CODE128 (ISO/IEC 15417), code set B: the order number on a receipt, for
// returns. A printer draws it itself (ESC/POS GS k); the HTML receipt draws
// it as an inline SVG from these bar widths, so the page loads nothing.

// code128Patterns are the bar and space widths of the symbols 0-105, then
// the stop pattern (which ends in a final bar).
var code128Patterns = [...]string{
	"212222", "222122", "222221", "121223", "121322", "131222", "122213", "122312", "132212", "221213",
	"221312", "231212", "112232", "122132", "122231", "113222", "123122", "123221", "223211", "221132",
	"221231", "213212", "223112", "312131", "311222", "321122", "321221", "312212", "322112", "322211",
	"212123", "212321", "232121", "111323", "131123", "131321", "112313", "132113", "132311", "211313",
	"231113", "231311", "112133", "112331", "132131", "113123", "113321", "133121", "313121", "211331",
	"231131", "213113", "213311", "213131", "311123", "311321", "331121", "312113", "312311", "332111",
	"314111", "221411", "431111", "111224", "111422", "121124", "121421", "141122", "141221", "112214",
	"112412", "122114", "122411", "142112", "142211", "241211", "221114", "413111", "241112", "134111",
	"111242", "121142", "121241", "114212", "124112", "124211", "411212", "421112", "421211", "212141",
	"214121", "412121", "111143", "111341", "131141", "114113", "114311", "411113", "411311", "113141",
	"114131", "311141", "411131", "211412", "211214", "211232", "2331112",
}

const (
	code128StartB = 104
	code128Stop   = 106
)

// Code128B returns the symbol values of s in code set B: start, data,
// check symbol, stop. s must be printable ASCII (32-126).
func Code128B(s string) ([]int, error) {
	out := []int{code128StartB}
	sum := code128StartB
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c < 32 || c > 126 {
			return nil, fmt.Errorf("kassa: %q is not printable ASCII", s)
		}
		v := int(c) - 32
		out = append(out, v)
		sum += v * (i + 1)
	}
	return append(out, sum%103, code128Stop), nil
}

// Code128SVG draws s as a CODE128 barcode: an SVG of black bars, module
// wide units, height tall, with a quiet zone of ten modules each side.
func Code128SVG(s string, module, height int) (string, error) {
	syms, err := Code128B(s)
	if err != nil {
		return "", err
	}
	var b strings.Builder
	x, bars := 10*module, &strings.Builder{}
	for _, v := range syms {
		for i, w := range code128Patterns[v] {
			n := int(w-'0') * module
			if i%2 == 0 {
				fmt.Fprintf(bars, `<rect x="%d" y="0" width="%d" height="%d"/>`, x, n, height)
			}
			x += n
		}
	}
	x += 10 * module
	fmt.Fprintf(&b, `<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" viewBox="0 0 %d %d" role="img" aria-label="%s">`,
		x, height, x, height, html.EscapeString(s))
	b.WriteString(`<rect width="100%" height="100%" fill="#fff"/><g fill="#000">`)
	b.WriteString(bars.String())
	b.WriteString(`</g></svg>`)
	return b.String(), nil
}
