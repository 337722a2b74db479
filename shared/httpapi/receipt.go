package httpapi

import (
	"bytes"
	"crypto/sha256"
	"encoding/base64"
	"html/template"
	"strings"

	"github.com/gofiber/fiber/v2"

	"kassa.dev/shared/kassa"
)

// Receipts (docs/receipts.md): the receipt of an order's sale or refund
// as JSON or as a printable HTML page for 58 or 80 mm paper, a reprint at
// a till's printer, an e-mail through the org's relay; a till's printer
// and the org's receipt settings. Receipts live at the node that numbered
// them (the edge of the store): elsewhere they are 404.

func (s *Server) routesReceipts() {
	svc := s.svc.Receipts
	s.handle(&Route{Method: "GET", Path: "/orders/:id/receipt", Tag: "receipts", Scope: kassa.ScopeOrdersRead, Resp: kassa.Receipt{},
		Query: []Param{
			{"refund_id", "string", "a refund's receipt instead of the sale's"},
			{"format", "string", "json (default) or html: a printable page"},
			{"width", "string", "paper width of the html page in mm: 58 or 80 (default)"},
		},
		Summary: "The receipt of a completed sale, or of one refund: number (gap-free per till), store, lines with modifiers and " +
			"discounts, campaigns, tax by rate, payments (masked card, gift card balance, change), loyalty balance, " +
			"and its prints and e-mails; format=html answers text/html with an inline CODE128 barcode of the order number",
		Handler: s.getReceipt})
	s.handle(&Route{Method: "POST", Path: "/orders/:id/receipt/print", Tag: "receipts", Scope: kassa.ScopeOrdersWrite, Status: fiber.StatusAccepted,
		Body: kassa.ReceiptPrint{}, Resp: kassa.ReceiptJob{}, Errors: []int{fiber.StatusConflict},
		Summary: "Reprint a receipt at its till's printer (or register_id's); queued and retried in the background, " +
			"never opens the drawer; 409 when the till has no enabled printer",
		Handler: s.printReceipt})
	s.handle(&Route{Method: "POST", Path: "/orders/:id/receipt/email", Tag: "receipts", Scope: kassa.ScopeOrdersWrite, Status: fiber.StatusAccepted,
		Body: kassa.ReceiptEmail{}, Resp: kassa.ReceiptJob{}, Errors: []int{fiber.StatusConflict},
		Summary: "E-mail a receipt through the org's SMTP relay: queued (offline too) and sent once the relay accepts it, " +
			"with retries; 422 for an address that is not one, 409 without a relay",
		Handler: s.emailReceipt})
	s.handle(&Route{Method: "GET", Path: "/receipt-settings", Tag: "receipts", Scope: kassa.ScopeOrdersRead, Resp: kassa.ReceiptSettings{},
		Summary: "The org's receipt header, footer, tax id and SMTP relay at this store (the password is never shown)",
		Handler: func(c *fiber.Ctx) error {
			st, err := svc.Settings(c.UserContext())
			if err != nil {
				return err
			}
			return one(c, fiber.StatusOK, st)
		}})
	s.handle(&Route{Method: "PATCH", Path: "/receipt-settings", Tag: "receipts", Scope: kassa.ScopeOrdersWrite, Body: kassa.ReceiptSettingsUpdate{},
		Resp: kassa.ReceiptSettings{}, Summary: "Change the receipt settings (managers and owners); smtp_password is write-only",
		Handler: func(c *fiber.Ctx) error {
			var in kassa.ReceiptSettingsUpdate
			if err := decode(c, &in); err != nil {
				return err
			}
			st, err := svc.UpdateSettings(c.UserContext(), &in)
			if err != nil {
				return err
			}
			return one(c, fiber.StatusOK, st)
		}})
	s.handle(&Route{Method: "GET", Path: "/registers/:id/printer", Tag: "receipts", Scope: kassa.ScopeOrdersRead, Resp: kassa.RegisterPrinter{},
		Summary: "A till's receipt printer and its status: ok, unreachable (with the last error) or unknown, and the prints waiting",
		Handler: func(c *fiber.Ctx) error {
			id, err := registerParam(c)
			if err != nil {
				return err
			}
			p, err := svc.Printer(c.UserContext(), id)
			if err != nil {
				return err
			}
			return one(c, fiber.StatusOK, p)
		}})
	s.handle(&Route{Method: "PUT", Path: "/registers/:id/printer", Tag: "receipts", Scope: kassa.ScopeOrdersWrite, Body: kassa.RegisterPrinterSet{},
		Resp: kassa.RegisterPrinter{}, Summary: "Set a till's network thermal printer (raw TCP, ESC/POS; managers and owners): host, port 9100, paper 58 or 80 mm; " +
			"404 for a register the org does not have",
		Handler: s.setPrinter})
}

// registerParam reads a till id from the path: an opaque id of 1-64
// letters, digits, _ and - (the registers table owns what a till is).
func registerParam(c *fiber.Ctx) (string, error) {
	id := strings.Clone(c.Params("id"))
	if !kassa.ValidRegisterID(id) {
		return "", kassa.Errorf(kassa.ENotFound, "no such till")
	}
	return id, nil
}

func (s *Server) setPrinter(c *fiber.Ctx) error {
	id, err := registerParam(c)
	if err != nil {
		return err
	}
	var in kassa.RegisterPrinterSet
	if err := decode(c, &in); err != nil {
		return err
	}
	p, err := s.svc.Receipts.SetPrinter(c.UserContext(), id, &in)
	if err != nil {
		return err
	}
	return one(c, fiber.StatusOK, p)
}

func (s *Server) getReceipt(c *fiber.Ctx) error {
	id, err := pathID(c, "order")
	if err != nil {
		return err
	}
	var refund *string
	if v := c.Query("refund_id"); v != "" {
		v = strings.Clone(v)
		refund = &v
	}
	format, width := c.Query("format", "json"), c.Query("width", "80")
	if format != "json" && format != "html" {
		return kassa.Errorf(kassa.EBadRequest, "format must be json or html")
	}
	if width != "58" && width != "80" {
		return kassa.Errorf(kassa.EBadRequest, "width must be 58 or 80")
	}
	r, err := s.svc.Receipts.Receipt(c.UserContext(), id, refund)
	if err != nil {
		return err
	}
	if format == "json" {
		return one(c, fiber.StatusOK, r)
	}
	page, err := receiptHTML(r, width)
	if err != nil {
		return err
	}
	c.Set(fiber.HeaderContentSecurityPolicy, cspReceipt)
	c.Set(fiber.HeaderContentType, fiber.MIMETextHTMLCharsetUTF8)
	return c.Status(fiber.StatusOK).Send(page)
}

func (s *Server) printReceipt(c *fiber.Ctx) error {
	id, err := pathID(c, "order")
	if err != nil {
		return err
	}
	var in kassa.ReceiptPrint
	if len(bytes.TrimSpace(c.Body())) > 0 {
		if err := decode(c, &in); err != nil {
			return err
		}
	}
	j, err := s.svc.Receipts.Print(c.UserContext(), id, &in)
	if err != nil {
		return err
	}
	return one(c, fiber.StatusAccepted, j)
}

func (s *Server) emailReceipt(c *fiber.Ctx) error {
	id, err := pathID(c, "order")
	if err != nil {
		return err
	}
	var in kassa.ReceiptEmail
	if err := decode(c, &in); err != nil {
		return err
	}
	j, err := s.svc.Receipts.Email(c.UserContext(), id, &in)
	if err != nil {
		return err
	}
	return one(c, fiber.StatusAccepted, j)
}

// The receipt page's one stylesheet is inline and allowed by its hash:
// the page loads nothing, so it prints the same with the hub out of reach.
const receiptCSS = `body{margin:0;font:12px/1.35 ui-monospace,Menlo,Consolas,monospace;color:#000;background:#fff}
.r{margin:0 auto;padding:2mm}.w58{width:54mm}.w80{width:76mm}.c{text-align:center}h1{font-size:16px;margin:0 0 2px}
table{width:100%;border-collapse:collapse}td{vertical-align:top;padding:0}td.n{text-align:right;white-space:nowrap}
.m td:first-child{padding-left:3mm}.t{font-weight:bold;border-top:1px dashed #000}hr{border:0;border-top:1px dashed #000}
svg{max-width:100%;height:auto}@page{margin:0}@media print{.r{padding:0}}`

var cspReceipt = func() string {
	sum := sha256.Sum256([]byte(receiptCSS))
	return "default-src 'none'; style-src 'sha256-" + base64.StdEncoding.EncodeToString(sum[:]) +
		"'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"
}()

var receiptTmpl = template.Must(template.New("receipt").Funcs(template.FuncMap{
	"money":  func(r *kassa.Receipt, v int64) string { return r.Money(v) },
	"neg":    func(v int64) int64 { return -v },
	"tender": kassa.TenderLabel,
	"rate":   func(bps int) string { return kassa.FormatMinor(int64(bps), 2) + " %" },
}).Parse(`<!doctype html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width">
<title>Receipt {{.R.Number}}</title><style>{{.CSS}}</style></head><body><main class="r w{{.Width}}">
<div class="c"><h1>{{.R.Store.Name}}</h1>{{with .R.Store.Address}}<div>{{.}}</div>{{end}}{{with .R.Store.Header}}<div>{{.}}</div>{{end}}
{{with .R.Store.TaxID}}<div>Tax ID {{.}}</div>{{end}}</div><hr>
<div>{{if eq .R.Kind "refund"}}REFUND{{else}}Receipt{{end}} {{.R.Number}}</div>
<div>Order {{.R.OrderNumber}} · {{.R.IssuedAt.Format "2006-01-02 15:04"}}</div><hr>
<table>{{$r := .R}}{{range .R.Lines}}<tr><td>{{.Quantity}} × {{.Name}}</td><td class="n">{{money $r .Total}}</td></tr>
{{range .Modifiers}}<tr class="m"><td>+ {{.Name}}</td><td class="n">{{money $r .Amount}}</td></tr>{{end}}
{{if .Discount}}<tr class="m"><td>discount</td><td class="n">{{money $r (neg .Discount)}}</td></tr>{{end}}{{end}}
</table><hr><table>{{if eq .R.Kind "sale"}}<tr><td>Subtotal</td><td class="n">{{money $r .R.Subtotal}}</td></tr>
{{range .R.Campaigns}}<tr><td>{{.Name}}</td><td class="n">{{money $r (neg .Amount)}}</td></tr>{{end}}
{{if .R.Discount}}<tr><td>Discounts</td><td class="n">{{money $r (neg .R.Discount)}}</td></tr>{{end}}{{end}}
{{range .R.Taxes}}<tr><td>Tax {{rate .RateBps}}{{if $r.TaxInclusive}} incl.{{end}}</td><td class="n">{{money $r .Tax}}</td></tr>{{end}}
<tr class="t"><td>{{if eq .R.Kind "refund"}}Refunded{{else}}Total{{end}} {{.R.Currency}}</td><td class="n">{{money $r .R.Total}}</td></tr>
{{range .R.Payments}}<tr><td>{{tender .}}</td><td class="n">{{money $r .Amount}}</td></tr>
{{with .Tip}}<tr class="m"><td>tip</td><td class="n">{{money $r .}}</td></tr>{{end}}
{{with .Tendered}}<tr class="m"><td>tendered</td><td class="n">{{money $r .}}</td></tr>{{end}}
{{with .Change}}<tr class="m"><td>change</td><td class="n">{{money $r .}}</td></tr>{{end}}
{{with .GiftCardBalance}}<tr class="m"><td>card balance</td><td class="n">{{money $r .}}</td></tr>{{end}}{{end}}
{{with .R.TipTotal}}<tr><td>Tips</td><td class="n">{{money $r .}}</td></tr>{{end}}
{{with .R.Loyalty}}<tr><td>Points earned</td><td class="n">{{.Earned}}</td></tr><tr><td>Points balance</td><td class="n">{{.Balance}}</td></tr>{{end}}
</table><hr>{{with .R.Store.Footer}}<div class="c">{{.}}</div>{{end}}<div class="c">{{.Barcode}}</div></main></body></html>
`))

func receiptHTML(r *kassa.Receipt, width string) ([]byte, error) {
	svg, err := kassa.Code128SVG(r.OrderNumber, 2, 60)
	if err != nil {
		svg = ""
	}
	var b bytes.Buffer
	err = receiptTmpl.Execute(&b, map[string]any{"R": r, "Width": width, "CSS": template.CSS(receiptCSS),
		"Barcode": template.HTML(svg)})
	return b.Bytes(), err
}
