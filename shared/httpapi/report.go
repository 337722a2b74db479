package httpapi

import (
	"bufio"
	"context"
	"encoding/csv"
	"encoding/json"
	"io"
	"reflect"
	"strconv"
	"strings"
	"sync"

	"github.com/gofiber/fiber/v2"
	"golang.org/x/text/currency"

	"kassa.dev/shared/kassa"
)

// Reports (docs/reports.md): GET /reports/<kind> with reports:read, at
// both nodes (an edge reports its own store, offline too; the hub every
// store of the org, location_id filters). The answer is the list envelope
// with the report's rows and a field report saying what it covered, or CSV
// (Accept: text/csv or format=csv): a header row, ISO dates, money in
// major units with the currency's decimals. Both are streamed as the rows
// come. A cashier reads only GET /reports/my-sales: their own orders of
// the current business day.

// reportParams are the query parameters of every report.
var reportParams = []Param{
	{"date_from", "string", "first business day (YYYY-MM-DD, the location's own); default six days before date_to"},
	{"date_to", "string", "last business day (YYYY-MM-DD), at most 366 days after date_from; default today"},
	{"location_id", "string", "only this location (at the hub; a location of another org is 422)"},
	{"group_by", "string", "the grouping (each report lists the ones it takes)"},
	{"format", "string", "csv: answer text/csv (as Accept: text/csv does)"},
}

func (s *Server) routesReports() {
	svc := s.svc.Reports
	reportRoute(s, "/reports/sales", kassa.ReportSales, "Sales: gross, discounts (manual, campaign), tax, sales, refunds and net, by business day, hour, location, till, staff, product, category, payment method or customer (top, see top)", svc.Sales,
		Param{"top", "integer", "customer grouping: how many customers, by net (1-1000, default 10)"})
	reportRoute(s, "/reports/tax", kassa.ReportTax, "Tax collected per rate, inclusive and exclusive, net of refunds", svc.Tax)
	reportRoute(s, "/reports/payments", kassa.ReportPayments, "Payments by method: captured, refunded, net, against the drawers' records (away from till)", svc.Payments)
	reportRoute(s, "/reports/inventory", kassa.ReportInventory, "Stock on hand now and its value (at cost; at base price without one)", svc.Inventory,
		Param{"low_stock", "boolean", "true: only products at or below their reorder point"})
	reportRoute(s, "/reports/inventory/movements", kassa.ReportMovements, "Stock movements by reason (sale, refund, received, transfer …)", svc.Movements)
	reportRoute(s, "/reports/loyalty", kassa.ReportLoyalty, "Loyalty points issued, redeemed, adjusted and outstanding (org-wide)", svc.Loyalty)
	reportRoute(s, "/reports/gift-cards", kassa.ReportGiftCards, "Gift card money issued, redeemed, refunded and the outstanding liability", svc.GiftCards)
	reportRoute(s, "/reports/gift-cards/owed", kassa.ReportGiftOwed, "What each location owes the others for its gift cards spent there", svc.GiftCardsOwed)
	reportRoute(s, "/reports/cash", kassa.ReportCash, "Closed drawer sessions: float, expected, counted, over/short, by staff member, register, day or location", svc.Cash)
	reportRoute(s, "/reports/campaigns", kassa.ReportCampaigns, "Campaigns redeemed in the range, with a link to each one's analytics", svc.Campaigns)
	s.handle(&Route{Method: "GET", Path: "/reports/my-sales", Tag: "reports", Scope: kassa.ScopePaymentsWrite, List: true, Resp: kassa.SalesRow{},
		Query:   reportParams[2:],
		Summary: "A cashier's own figures: the sales report of the orders they took on the current business day (no dates: always today)",
		Handler: reportHandler(kassa.ReportSales, svc.Sales, true)})
}

// reportRoute registers GET path for report kind.
func reportRoute[T any](s *Server, path string, kind kassa.ReportKind, summary string,
	run func(context.Context, kassa.ReportFilter, func(*T) error) (*kassa.ReportInfo, error), extra ...Param) {
	var row T
	groups := kassa.ReportGroupings(kind)
	names := make([]string, len(groups))
	for i, g := range groups {
		names[i] = string(g)
	}
	s.handle(&Route{Method: "GET", Path: path, Tag: "reports", Scope: kassa.ScopeReportsRead, List: true, Resp: row,
		Query:   append(append([]Param{}, reportParams...), extra...),
		Summary: summary + "; group_by " + strings.Join(names, ", ") + " (default " + names[0] + "); JSON or CSV",
		Handler: reportHandler(kind, run, false)})
}

// reportFilter reads a report's query parameters; own limits it to the
// actor's own orders of today (a cashier's). Errors: EBadRequest.
func reportFilter(c *fiber.Ctx, own bool) (kassa.ReportFilter, error) {
	f := kassa.ReportFilter{DateFrom: strings.Clone(c.Query("date_from")), DateTo: strings.Clone(c.Query("date_to")),
		GroupBy: kassa.ReportGrouping(strings.Clone(c.Query("group_by")))}
	var err error
	if f.LocationID, err = queryID(c, "location_id"); err != nil {
		return f, err
	}
	if t := c.Query("top"); t != "" {
		if f.Top, err = strconv.Atoi(t); err != nil || f.Top < 1 {
			return f, kassa.InvalidField("top", "must be from 1 to 1000")
		}
	}
	switch c.Query("low_stock") {
	case "", "false":
	case "true":
		f.LowStock = true
	default:
		return f, kassa.Errorf(kassa.EBadRequest, "low_stock must be true or false")
	}
	if own {
		a := kassa.ActorFrom(c.UserContext())
		f.DateFrom, f.DateTo, f.StaffID = "", "", a.UserID
		if a.UserID == "" {
			f.StaffID = a.ClientID
		}
	}
	return f, nil
}

// reportHandler answers a report as JSON or CSV, streaming the rows: the
// report runs in a goroutine writing into a pipe that becomes the body
// once the first row or the end has come; an error before that (bad
// input) is a problem as usual.
func reportHandler[T any](kind kassa.ReportKind, run func(context.Context, kassa.ReportFilter, func(*T) error) (*kassa.ReportInfo, error), own bool) fiber.Handler {
	return func(c *fiber.Ctx) error {
		f, err := reportFilter(c, own)
		if err != nil {
			return err
		}
		asCSV := c.Query("format") == "csv" || strings.Contains(c.Get("Accept"), "text/csv")
		switch c.Query("format") {
		case "", "csv", "json":
		default:
			return kassa.Errorf(kassa.EBadRequest, "format must be json or csv")
		}
		pr, pw := io.Pipe()
		w := &reportWriter[T]{out: bufio.NewWriterSize(pw, 32<<10), csv: asCSV, started: make(chan struct{})}
		done := make(chan error, 1)
		ctx := c.UserContext()
		go func() {
			info, err := run(ctx, f, w.row)
			if err == nil {
				err = w.finish(info)
			}
			done <- err
			w.start()
			pw.CloseWithError(err)
		}()
		<-w.started
		select {
		case err := <-done:
			if w.rows == 0 && !w.headed {
				pr.Close()
				if err != nil {
					return err
				}
			}
		default:
		}
		c.Set("Content-Type", map[bool]string{true: "text/csv; charset=utf-8", false: fiber.MIMEApplicationJSON}[asCSV])
		if asCSV {
			c.Set("Content-Disposition", `attachment; filename="`+string(kind)+`.csv"`)
		}
		c.Status(fiber.StatusOK).Context().SetBodyStream(pr, -1)
		return nil
	}
}

// reportWriter writes a report's rows as they come.
type reportWriter[T any] struct {
	out     *bufio.Writer
	csv     bool
	cw      *csv.Writer
	rows    int
	headed  bool // the JSON prefix or the CSV header is written
	once    sync.Once
	started chan struct{} // closed at the first row or the end
}

func (w *reportWriter[T]) start() { w.once.Do(func() { close(w.started) }) }

func (w *reportWriter[T]) head() error {
	if w.headed {
		return nil
	}
	w.headed = true
	if w.csv {
		w.cw = csv.NewWriter(w.out)
		return w.cw.Write(csvHeader(reflect.TypeFor[T]()))
	}
	_, err := w.out.WriteString(`{"data":[`)
	return err
}

// row writes one row (the first one hands the body over).
func (w *reportWriter[T]) row(r *T) error {
	w.start()
	if err := w.head(); err != nil {
		return err
	}
	w.rows++
	if w.csv {
		return w.cw.Write(csvRecord(reflect.ValueOf(r).Elem()))
	}
	if w.rows > 1 {
		w.out.WriteByte(',')
	}
	b, err := json.Marshal(r)
	if err != nil {
		return err
	}
	_, err = w.out.Write(b)
	return err
}

// finish writes the end: the envelope's rest with what the report covered.
func (w *reportWriter[T]) finish(info *kassa.ReportInfo) error {
	w.start() // a report without rows: hand the body over before writing into the pipe
	if err := w.head(); err != nil {
		return err
	}
	if w.csv {
		w.cw.Flush()
		if err := w.cw.Error(); err != nil {
			return err
		}
		return w.out.Flush()
	}
	b, err := json.Marshal(info)
	if err != nil {
		return err
	}
	w.out.WriteString(`],"has_more":false,"next_cursor":null,"report":`)
	w.out.Write(b)
	w.out.WriteString("}")
	return w.out.Flush()
}

// csvHeader is the JSON names of t's fields.
func csvHeader(t reflect.Type) []string {
	out := make([]string, t.NumField())
	for i := range out {
		out[i], _, _ = strings.Cut(t.Field(i).Tag.Get("json"), ",")
	}
	return out
}

// csvRecord is v's fields as text; money (fields tagged report:"money")
// in major units of the row's currency.
func csvRecord(v reflect.Value) []string {
	scale := 2
	if cur := v.FieldByName("Currency"); cur.IsValid() {
		scale = currencyScale(cur.String())
	}
	out := make([]string, v.NumField())
	for i := range out {
		f := v.Field(i)
		if f.Kind() == reflect.Pointer {
			if f.IsNil() {
				continue // null: an empty cell
			}
			f = f.Elem()
		}
		switch {
		case v.Type().Field(i).Tag.Get("report") == "money":
			out[i] = kassa.FormatMinor(f.Int(), scale)
		case f.Kind() == reflect.Int64 || f.Kind() == reflect.Int:
			out[i] = strconv.FormatInt(f.Int(), 10)
		case f.Kind() == reflect.Bool:
			out[i] = strconv.FormatBool(f.Bool())
		default:
			out[i] = f.String()
		}
	}
	return out
}

// currencyScales caches the decimals of currencies (AUD 2, JPY 0, BHD 3).
var currencyScales sync.Map

// currencyScale returns the decimals of ISO 4217 code (2 when unknown).
func currencyScale(code string) int {
	if v, ok := currencyScales.Load(code); ok {
		return v.(int)
	}
	scale := 2
	if u, err := currency.ParseISO(code); err == nil {
		scale, _ = currency.Standard.Rounding(u)
	}
	currencyScales.Store(code, scale)
	return scale
}
