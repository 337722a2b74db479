package kassa

import (
	"bytes"
	"fmt"
	"strings"
)

// ESC/POS (Epson's command set, which network thermal printers speak on
// raw TCP port 9100): the few commands a receipt needs.
//
//	ESC @          1B 40            initialize
//	ESC a n        1B 61 n          align: 0 left, 1 centre
//	ESC E n        1B 45 n          bold on (1) / off (0)
//	GS ! n         1D 21 n          character size: 0x11 double width and height, 0 normal
//	GS h n         1D 68 n          barcode height in dots
//	GS w n         1D 77 n          barcode module width (2)
//	GS H n         1D 48 n          barcode text: 2 below
//	GS k 73 n d…   1D 6B 49 n d…    CODE128; d starts with {B (code set B)
//	ESC p m t1 t2  1B 70 00 19 FA   cash drawer kick, pin 2, 50 ms on, 500 ms off
//	GS V 66 n      1D 56 42 00      feed to the cutter and cut (partial)
//
// Text goes out as ASCII: a character outside it prints as '?', as the
// printer's default code page would garble it anyway.
var (
	escInit      = []byte{0x1b, 0x40}
	escBoldOn    = []byte{0x1b, 0x45, 1}
	escBoldOff   = []byte{0x1b, 0x45, 0}
	escLeft      = []byte{0x1b, 0x61, 0}
	escCenter    = []byte{0x1b, 0x61, 1}
	escDouble    = []byte{0x1d, 0x21, 0x11}
	escNormal    = []byte{0x1d, 0x21, 0x00}
	EscPosKick   = []byte{0x1b, 0x70, 0x00, 0x19, 0xfa}
	EscPosCut    = []byte{0x1d, 0x56, 0x42, 0x00}
	escBarcode   = []byte{0x1d, 0x68, 80, 0x1d, 0x77, 2, 0x1d, 0x48, 2}
	escCode128   = []byte{0x1d, 0x6b, 73}
	escCode128SB = []byte{'{', 'B'}
)

// PaperColumns is how many characters of the printer's font A fit a line.
func PaperColumns(width int) int {
	if width == 58 {
		return 32
	}
	return 48
}

// EscPos encodes the receipt for a printer with paper of width mm; with
// kick it opens the cash drawer first.
func EscPos(r *Receipt, width int, kick bool) []byte {
	return encodeReceipt(r, width, kick, false)
}

// ReceiptText is the receipt as plain text of the paper's columns, for
// e-mails: EscPos without its commands.
func ReceiptText(r *Receipt, width int) string { return string(encodeReceipt(r, width, false, true)) }

// escBuf is the encoder's output; plain drops the printer commands.
type escBuf struct {
	bytes.Buffer
	plain bool
}

func (b *escBuf) ctl(p []byte) {
	if !b.plain {
		b.Write(p)
	}
}

func encodeReceipt(r *Receipt, width int, kick, plain bool) []byte {
	cols := PaperColumns(width)
	b := escBuf{plain: plain}
	b.ctl(escInit)
	if kick {
		b.ctl(EscPosKick)
	}
	b.ctl(escCenter)
	b.ctl(escBoldOn)
	b.ctl(escDouble)
	line(&b, r.Store.Name, cols/2)
	b.ctl(escNormal)
	b.ctl(escBoldOff)
	for _, s := range []string{r.Store.Address, r.Store.Header} {
		wrap(&b, s, cols)
	}
	if r.Store.TaxID != "" {
		line(&b, "Tax ID "+r.Store.TaxID, cols)
	}
	b.ctl(escLeft)
	rule(&b, cols)
	title := "Receipt "
	if r.Kind == ReceiptRefund {
		title = "REFUND "
	}
	line(&b, title+r.Number, cols)
	line(&b, "Order "+r.OrderNumber+"  "+r.IssuedAt.Format("2006-01-02 15:04"), cols)
	rule(&b, cols)
	escLines(&b, r, cols)
	rule(&b, cols)
	escTotals(&b, r, cols)
	escPayments(&b, r, cols)
	if r.Loyalty != nil {
		pair(&b, "Points earned", fmt.Sprint(r.Loyalty.Earned), cols)
		pair(&b, "Points balance", fmt.Sprint(r.Loyalty.Balance), cols)
	}
	b.ctl(escCenter)
	wrap(&b, r.Store.Footer, cols)
	if !plain {
		escBarcodeOf(&b, r.OrderNumber)
	}
	b.WriteString("\n\n")
	b.ctl(EscPosCut)
	return b.Bytes()
}

func escLines(b *escBuf, r *Receipt, cols int) {
	for _, l := range r.Lines {
		pair(b, fmt.Sprintf("%d x %s", l.Quantity, l.Name), r.Money(l.Total), cols)
		for _, m := range l.Modifiers {
			pair(b, "  + "+m.Name, r.Money(m.Amount), cols)
		}
		if l.Discount != 0 {
			pair(b, "  discount", r.Money(-l.Discount), cols)
		}
	}
}

func escTotals(b *escBuf, r *Receipt, cols int) {
	if r.Kind == ReceiptSale {
		pair(b, "Subtotal", r.Money(r.Subtotal), cols)
		for _, c := range r.Campaigns {
			pair(b, c.Name, r.Money(-c.Amount), cols)
		}
		if r.Discount != 0 {
			pair(b, "Discounts", r.Money(-r.Discount), cols)
		}
	}
	for _, t := range r.Taxes {
		label := "Tax " + FormatMinor(int64(t.RateBps), 2) + "%"
		if r.TaxInclusive {
			label += " incl."
		}
		pair(b, label, r.Money(t.Tax), cols)
	}
	b.ctl(escBoldOn)
	label := "TOTAL " + r.Currency
	if r.Kind == ReceiptRefund {
		label = "REFUNDED " + r.Currency
	}
	pair(b, label, r.Money(r.Total), cols)
	b.ctl(escBoldOff)
}

func escPayments(b *escBuf, r *Receipt, cols int) {
	for _, p := range r.Payments {
		label := TenderLabel(p)
		pair(b, label, r.Money(p.Amount), cols)
		if p.Tip != 0 {
			pair(b, "  tip", r.Money(p.Tip), cols)
		}
		if p.Tendered != nil {
			pair(b, "  tendered", r.Money(*p.Tendered), cols)
		}
		if p.Change != nil && *p.Change > 0 {
			pair(b, "  change", r.Money(*p.Change), cols)
		}
		if p.GiftCardBalance != nil {
			pair(b, "  card balance", r.Money(*p.GiftCardBalance), cols)
		}
	}
}

// TenderLabel names a tender as the receipt prints it: "Card **** 4242".
func TenderLabel(p ReceiptPayment) string {
	switch {
	case p.Card != nil:
		return "Card " + *p.Card
	case p.GiftCard != nil:
		return "Gift card " + *p.GiftCard
	case p.Method == PaymentCash:
		return "Cash"
	case p.Method == PaymentLoyaltyPoints:
		return "Points"
	case p.Method == PaymentStoreCredit:
		return "Store credit"
	}
	return string(p.Method)
}

func escBarcodeOf(b *escBuf, s string) {
	if _, err := Code128B(s); err != nil || len(s) == 0 || len(s) > 250 {
		return
	}
	b.ctl(escBarcode)
	b.ctl(escCode128)
	b.WriteByte(byte(len(s) + 2))
	b.ctl(escCode128SB)
	b.WriteString(s)
	b.WriteByte('\n')
}

// ascii keeps printable ASCII and prints '?' for the rest.
func ascii(s string) string {
	return strings.Map(func(r rune) rune {
		if r < 32 || r > 126 {
			return '?'
		}
		return r
	}, s)
}

func line(b *escBuf, s string, cols int) {
	s = ascii(s)
	if len(s) > cols {
		s = s[:cols]
	}
	b.WriteString(s)
	b.WriteByte('\n')
}

func rule(b *escBuf, cols int) { line(b, strings.Repeat("-", cols), cols) }

// pair prints label left and value right on one line of cols.
func pair(b *escBuf, label, value string, cols int) {
	label, value = ascii(label), ascii(value)
	room := cols - len(value) - 1
	if room < 1 {
		room = 1
	}
	if len(label) > room {
		label = label[:room]
	}
	b.WriteString(label + strings.Repeat(" ", max(1, cols-len(label)-len(value))) + value + "\n")
}

// wrap prints s on as many lines of cols as it takes; "" prints nothing.
func wrap(b *escBuf, s string, cols int) {
	for _, para := range strings.Split(s, "\n") {
		cur := ""
		for _, w := range strings.Fields(para) {
			if cur != "" && len(cur)+1+len(w) > cols {
				line(b, cur, cols)
				cur = ""
			}
			if cur != "" {
				cur += " "
			}
			cur += w
		}
		if cur != "" {
			line(b, cur, cols)
		}
	}
}
