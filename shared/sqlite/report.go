package sqlite

import (
	"context"
	"encoding/json"
	"fmt"
	"sort"
	"strings"
	"time"

	"kassa.dev/shared/kassa"
	"kassa.dev/shared/sqlite/engine"
)

// Reports (docs/reports.md): read-only SQL on the read pool, never through
// the writer, so a report never holds up a sale. Each location's business
// days are turned into instants in Go (kassa.DayClock) and passed to SQL
// as a JSON table d(loc, day, lo, hi) that drives range scans of each
// table's (org_id, location_id, time) index (migration 0032); SQL sums,
// Go merges the sums into rows and emits them.

// ReportService computes reports.
type ReportService struct{ db *DB }

// NewReportService returns the report service of db.
func NewReportService(db *DB) *ReportService { return &ReportService{db: db} }

var _ kassa.ReportService = (*ReportService)(nil)

// reportLoc is a location a report covers, with its business days' bounds.
type reportLoc struct {
	kassa.ReportLocation
	clock  kassa.DayClock
	lo, hi string // the range's first instant and the one after its last
}

// reportScope is what a report reads: the actor's org, its checked filter
// and the locations covered.
type reportScope struct {
	orgID string
	f     kassa.ReportFilter
	info  *kassa.ReportInfo
	locs  []reportLoc
	now   time.Time
}

// scope checks f for report k and finds the locations it covers. Errors:
// EUnauthorized, EInvalid (f's fields; location_id of no location of the
// actor's org).
func (s *ReportService) scope(ctx context.Context, k kassa.ReportKind, f kassa.ReportFilter) (*reportScope, error) {
	a, err := kassa.MustActor(ctx)
	if err != nil {
		return nil, err
	}
	if err := f.Validate(k, s.db.Now()); err != nil {
		return nil, err
	}
	sc := &reportScope{orgID: a.OrgID, f: f, now: s.db.Now(), info: &kassa.ReportInfo{Kind: k, GroupBy: f.GroupBy, DateFrom: f.DateFrom, DateTo: f.DateTo}}
	rows, err := s.db.Reader.QueryContext(ctx, `SELECT id, name, timezone, day_cutoff_hour, currency FROM locations
		WHERE org_id = ? ORDER BY created_at, id`, a.OrgID)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	for rows.Next() {
		var l reportLoc
		if err := rows.Scan(&l.ID, &l.Name, &l.Timezone, &l.DayCutoffHour, &l.Currency); err != nil {
			return nil, err
		}
		if f.LocationID == nil || *f.LocationID == l.ID {
			sc.addLoc(l)
		}
	}
	if err := rows.Err(); err != nil {
		return nil, err
	}
	if f.LocationID != nil && len(sc.locs) == 0 {
		return nil, kassa.InvalidField("location_id", "is not a location of this org")
	}
	sc.info.Timezone = "per location"
	if len(sc.locs) == 1 {
		sc.info.Timezone = sc.locs[0].Timezone
	}
	return sc, nil
}

// addLoc adds l with the bounds of the filter's days in its zone.
func (sc *reportScope) addLoc(l reportLoc) {
	l.clock = kassa.DaySettings{Timezone: l.Timezone, CutoffHour: l.DayCutoffHour}.Clock()
	lo, hi := l.clock.Bounds(sc.f.DateFrom, sc.f.DateTo)
	if sc.f.StaffID != "" {
		// A cashier's own figures: the location's business day today.
		today := l.clock.Day(sc.now)
		lo, hi = l.clock.Bounds(today, today)
		sc.info.DateFrom, sc.info.DateTo = today, today
	}
	l.lo, l.hi = fmtTime(lo), fmtTime(hi)
	sc.locs = append(sc.locs, l)
	sc.info.Locations = append(sc.info.Locations, l.ReportLocation)
}

// ranges is the JSON table d(loc, day, lo, hi): one row per location and
// business day when byDay, else one per location spanning the range.
func (sc *reportScope) ranges(byDay bool) string {
	var out [][4]string
	for _, l := range sc.locs {
		if sc.f.StaffID != "" || !byDay {
			out = append(out, [4]string{l.ID, sc.info.DateFrom, l.lo, l.hi})
			continue
		}
		days := kassa.Days(sc.f.DateFrom, sc.f.DateTo)
		starts := make([]string, len(days)+1)
		for i, d := range days {
			starts[i] = fmtTime(l.clock.Start(d))
		}
		starts[len(days)] = l.hi
		for i, d := range days {
			out = append(out, [4]string{l.ID, d, starts[i], starts[i+1]})
		}
	}
	b, _ := json.Marshal(out)
	return string(b)
}

// orgRanges is d for a report of org-wide rows (loyalty, gift cards):
// the days of the first location covered (the one given, else the org's
// first), with loc "". info.Timezone names that zone.
func (sc *reportScope) orgRanges(byDay bool) string {
	if len(sc.locs) == 0 {
		return "[]"
	}
	one := &reportScope{orgID: sc.orgID, f: sc.f, info: &kassa.ReportInfo{}}
	one.addLoc(sc.locs[0])
	one.locs[0].ID = ""
	sc.info.Timezone = sc.locs[0].Timezone
	return one.ranges(byDay)
}

// withD is the head of every report query: the ranges table d.
func (s *ReportService) withD() string {
	return `WITH d(loc, day, lo, hi) AS (SELECT value->>0, value->>1, value->>2, value->>3 FROM ` + s.d().JSONElements("?", "j") + `) `
}

// d is the dialect of the store's readers: the reports run there.
func (s *ReportService) d() engine.Dialect { return engine.D(s.db.Reader) }

// soldStatuses are the states of a completed order.
const soldStatuses = `('completed', 'partially_refunded', 'refunded')`

// campaignPart sums the campaigns' amounts of a JSON column.
func campaignPart(d engine.Dialect, col string) string {
	return `CASE WHEN ` + col + ` = '[]' THEN 0 ELSE (SELECT coalesce(sum(` + d.JSONInt("j.value", "amount") + `), 0) FROM ` + d.JSONElements(col, "j") + `) END`
}

// keySep joins two parts of a row's key in SQL, split again in Go at
// "\x1f": the unit separator as a literal, which both backends read alike
// (SQLite's char(31) is a type name to PostgreSQL).
const keySep = "'\x1f'"

// groupKey is the SQL of a grouping's key over d, o (orders) and, for
// product and category, l (order_lines) and p (products).
func groupKey(g kassa.ReportGrouping) string {
	switch g {
	case kassa.GroupDay:
		return "d.day"
	case kassa.GroupLocation:
		return "d.loc"
	case kassa.GroupStaff:
		return "coalesce(o.created_by, '')"
	case kassa.GroupCustomer:
		return "coalesce(o.customer_id, '')"
	case kassa.GroupRegister:
		return "coalesce((SELECT register_id FROM receipts rc WHERE rc.order_id = o.id AND rc.refund_id IS NULL), '')"
	case kassa.GroupProduct:
		return "l.product_id"
	case kassa.GroupCategory:
		return "coalesce(p.category_id, '')"
	}
	return "''"
}

// sumRows runs q and calls add with each row's key, currency and sums.
func (s *ReportService) sumRows(ctx context.Context, add func(key, cur string, v []int64), n int, q string, args ...any) error {
	rows, err := s.db.Reader.QueryContext(ctx, q, args...)
	if err != nil {
		return err
	}
	defer rows.Close()
	var key, cur string
	v := make([]int64, n)
	dest := []any{&key, &cur}
	for i := range v {
		dest = append(dest, &v[i])
	}
	for rows.Next() {
		if err := rows.Scan(dest...); err != nil {
			return err
		}
		add(key, cur, v)
	}
	return rows.Err()
}

// salesSums accumulates sales rows by group and currency.
type salesSums map[[2]string]*kassa.SalesRow

func (m salesSums) row(key, cur string) *kassa.SalesRow {
	k := [2]string{key, cur}
	if m[k] == nil {
		m[k] = &kassa.SalesRow{Group: key, Currency: cur}
	}
	return m[k]
}

// addSale adds orders, gross, discount, campaign part, tax and total.
func (m salesSums) addSale(key, cur string, v []int64) {
	r := m.row(key, cur)
	r.Orders += v[0]
	r.Gross += v[1]
	r.ManualDiscounts += v[2] - v[3]
	r.CampaignDiscounts += v[3]
	r.Tax += v[4]
	r.Sales += v[5]
}

// addLines adds what addSale does and, when v[6] lines had a cost, their
// cost v[7] and gross margin (v[8], their sales less tax, less cost).
func (m salesSums) addLines(key, cur string, v []int64) {
	m.addSale(key, cur, v)
	if v[6] == 0 {
		return
	}
	r := m.row(key, cur)
	if r.Cost == nil {
		r.Cost, r.GrossMargin = new(int64), new(int64)
	}
	*r.Cost += v[7]
	*r.GrossMargin += v[8] - v[7]
}

func (m salesSums) addRefund(key, cur string, v []int64) { m.row(key, cur).Refunds += v[0] }

// Sales is the sales report (kassa.SalesRow).
func (s *ReportService) Sales(ctx context.Context, f kassa.ReportFilter, emit func(*kassa.SalesRow) error) (*kassa.ReportInfo, error) {
	sc, err := s.scope(ctx, kassa.ReportSales, f)
	if err != nil {
		return nil, err
	}
	sums := salesSums{}
	switch sc.f.GroupBy {
	case kassa.GroupHour:
		err = s.salesByHour(ctx, sc, sums)
	case kassa.GroupPaymentMethod:
		err = s.salesByMethod(ctx, sc, sums)
	case kassa.GroupProduct, kassa.GroupCategory:
		err = s.salesByLine(ctx, sc, sums)
	default:
		var rolled bool
		if rolled, err = s.salesFromRollups(ctx, sc, sums); err == nil && !rolled {
			err = s.salesByOrder(ctx, sc, sums)
		}
	}
	if err != nil {
		return nil, err
	}
	rows, err := s.labelSales(ctx, sc, sums)
	if err != nil {
		return nil, err
	}
	return sc.info, emitAll(rows, emit)
}

// staffFilter limits a query to the orders of f.StaffID (a cashier's own).
func staffFilter(sc *reportScope) (string, []any) {
	if sc.f.StaffID == "" {
		return "", nil
	}
	return " AND o.created_by = ?", []any{sc.f.StaffID}
}

// salesByOrder sums orders and refunds by an order-level grouping.
func (s *ReportService) salesByOrder(ctx context.Context, sc *reportScope, sums salesSums) error {
	key := groupKey(sc.f.GroupBy)
	staff, sargs := staffFilter(sc)
	d := sc.ranges(sc.f.GroupBy == kassa.GroupDay)
	args := append([]any{d, sc.orgID}, sargs...)
	if err := s.sumRows(ctx, sums.addSale, 6, s.withD()+`SELECT `+key+`, o.currency, count(*), sum(o.subtotal), sum(o.discount_total),
		sum(`+campaignPart(s.d(), "o.campaigns")+`), sum(o.tax_total), sum(o.total - o.gift_card_total)
		FROM d CROSS JOIN orders o WHERE o.org_id = ? AND o.location_id = d.loc AND o.completed_at >= d.lo AND o.completed_at < d.hi
		AND o.status IN `+soldStatuses+staff+` GROUP BY 1, 2`, args...); err != nil {
		return err
	}
	return s.sumRows(ctx, sums.addRefund, 1, s.withD()+`SELECT `+key+`, o.currency, sum(r.amount - r.gift_card_amount)
		FROM d CROSS JOIN refunds r JOIN orders o ON o.id = r.order_id
		WHERE r.org_id = ? AND r.location_id = d.loc AND r.amount > r.gift_card_amount AND r.created_at >= d.lo AND r.created_at < d.hi`+staff+` GROUP BY 1, 2`, args...)
}

// salesByLine sums order lines and refunded lines by product or
// category; a refund by amount (or its part beyond its lines) is in the
// group "".
func (s *ReportService) salesByLine(ctx context.Context, sc *reportScope, sums salesSums) error {
	key := groupKey(sc.f.GroupBy)
	staff, sargs := staffFilter(sc)
	args := append([]any{sc.ranges(false), sc.orgID}, sargs...)
	if err := s.sumRows(ctx, sums.addLines, 9, s.withD()+`SELECT `+key+`, o.currency, count(DISTINCT o.id),
		sum(l.total + l.discount - CASE WHEN o.tax_inclusive = 1 THEN 0 ELSE l.tax END), sum(l.discount),
		sum(`+campaignPart(s.d(), "l.campaign_discounts")+`), sum(l.tax), sum(l.total),
		count(p.cost), coalesce(sum(l.quantity * p.cost), 0), coalesce(sum(CASE WHEN p.cost IS NOT NULL THEN l.total - l.tax END), 0)
		FROM d CROSS JOIN orders o JOIN order_lines l ON l.order_id = o.id LEFT JOIN products p ON p.id = l.product_id
		WHERE o.org_id = ? AND o.location_id = d.loc AND o.completed_at >= d.lo AND o.completed_at < d.hi
		AND o.status IN `+soldStatuses+staff+` GROUP BY 1, 2`, args...); err != nil {
		return err
	}
	refunds := `FROM d CROSS JOIN refunds r JOIN orders o ON o.id = r.order_id
		WHERE r.org_id = ? AND r.location_id = d.loc AND r.amount > r.gift_card_amount AND r.created_at >= d.lo AND r.created_at < d.hi` + staff
	if err := s.sumRows(ctx, sums.addRefund, 1, s.withD()+`SELECT `+key+`, o.currency, sum(`+s.d().JSONInt("j.value", "amount")+`)
		FROM d CROSS JOIN refunds r JOIN orders o ON o.id = r.order_id JOIN `+s.d().JSONElements("r.lines", "j")+` ON true
		JOIN order_lines l ON l.id = j.value->>'line_item_id' LEFT JOIN products p ON p.id = l.product_id
		WHERE r.org_id = ? AND r.location_id = d.loc AND r.created_at >= d.lo AND r.created_at < d.hi`+staff+` GROUP BY 1, 2`, args...); err != nil {
		return err
	}
	return s.sumRows(ctx, sums.addRefund, 1, s.withD()+`SELECT '', o.currency,
		sum(r.amount - r.gift_card_amount - coalesce((SELECT sum(`+s.d().JSONInt("j.value", "amount")+`) FROM `+s.d().JSONElements("r.lines", "j")+`), 0)) `+refunds+` GROUP BY 1, 2`, args...)
}

// salesByMethod sums captured payments and what went back through them.
func (s *ReportService) salesByMethod(ctx context.Context, sc *reportScope, sums salesSums) error {
	staff, sargs := staffFilter(sc)
	args := append([]any{sc.ranges(false), sc.orgID}, sargs...)
	if err := s.sumRows(ctx, func(key, cur string, v []int64) {
		r := sums.row(key, cur)
		r.Orders += v[0]
		r.Sales += v[1]
	}, 2, s.withD()+`SELECT p.method, o.currency, count(*), sum(p.amount)
		FROM d CROSS JOIN payments p JOIN orders o ON o.id = p.order_id
		WHERE p.org_id = ? AND p.location_id = d.loc AND p.captured_at >= d.lo AND p.captured_at < d.hi
		AND p.status IN ('captured', 'partially_refunded', 'refunded')`+staff+` GROUP BY 1, 2`, args...); err != nil {
		return err
	}
	if err := s.sumRows(ctx, sums.addRefund, 1, s.withD()+`SELECT p.method, o.currency, sum(`+s.d().JSONInt("j.value", "amount")+`)
		FROM d CROSS JOIN refunds r JOIN orders o ON o.id = r.order_id JOIN `+s.d().JSONElements("r.payments", "j")+` ON true
		JOIN payments p ON p.id = j.value->>'payment_id'
		WHERE r.org_id = ? AND r.location_id = d.loc AND r.created_at >= d.lo AND r.created_at < d.hi`+staff+` GROUP BY 1, 2`, args...); err != nil {
		return err
	}
	if err := s.sumRows(ctx, sums.addRefund, 1, s.withD()+`SELECT 'store_credit', o.currency, sum(t.amount)`+refundsToCredit+staff+` GROUP BY 1, 2`, args...); err != nil {
		return err
	}
	return s.giftCardsSold(ctx, sums, staff, args)
}

// giftCardsSold books the gift card money the tenders took (cards sold
// and reloaded on orders, less what refunds took back from them) as the
// group kassa.GroupGiftCardsSold, negative: the tenders' rows less it are
// the sales (docs/giftcards.md).
func (s *ReportService) giftCardsSold(ctx context.Context, sums salesSums, staff string, args []any) error {
	if err := s.sumRows(ctx, func(key, cur string, v []int64) { sums.row(key, cur).Sales -= v[0] }, 1,
		s.withD()+`SELECT '`+kassa.GroupGiftCardsSold+`', o.currency, sum(o.gift_card_total) FROM d CROSS JOIN orders o
		WHERE o.org_id = ? AND o.location_id = d.loc AND o.completed_at >= d.lo AND o.completed_at < d.hi AND o.gift_card_total > 0
		AND o.status IN `+soldStatuses+staff+` GROUP BY 1, 2`, args...); err != nil {
		return err
	}
	return s.sumRows(ctx, func(key, cur string, v []int64) { sums.row(key, cur).Refunds -= v[0] }, 1,
		s.withD()+`SELECT '`+kassa.GroupGiftCardsSold+`', o.currency, sum(r.gift_card_amount) FROM d CROSS JOIN refunds r JOIN orders o ON o.id = r.order_id
		WHERE r.org_id = ? AND r.location_id = d.loc AND r.created_at >= d.lo AND r.created_at < d.hi AND r.gift_card_amount > 0`+staff+` GROUP BY 1, 2`, args...)
}

// refundsToCredit are the parts of the range's refunds a return put on
// store credit (docs/returns.md): refunded by method store_credit, as
// a store_credit payment's refund is.
const refundsToCredit = ` FROM d CROSS JOIN refunds r JOIN orders o ON o.id = r.order_id
	JOIN store_credit_transactions t ON t.refund_id = r.id AND t.org_id = r.org_id
	WHERE r.org_id = ? AND r.location_id = d.loc AND r.created_at >= d.lo AND r.created_at < d.hi`

// salesByHour reads the orders and refunds of the range one by one and
// books each on its location's local hour.
func (s *ReportService) salesByHour(ctx context.Context, sc *reportScope, sums salesSums) error {
	clocks := map[string]kassa.DayClock{}
	for _, l := range sc.locs {
		clocks[l.ID] = l.clock
	}
	hour := func(loc, at string) string { return fmt.Sprintf("%02d", clocks[loc].Hour(parseTime(at))) }
	staff, sargs := staffFilter(sc)
	args := append([]any{sc.ranges(false), sc.orgID}, sargs...)
	err := s.eachRow(ctx, 6, func(loc, at, cur string, v []int64) { sums.addSale(hour(loc, at), cur, v) },
		s.withD()+`SELECT d.loc, o.completed_at, o.currency, 1, o.subtotal, o.discount_total, `+campaignPart(s.d(), "o.campaigns")+`, o.tax_total, o.total - o.gift_card_total
		FROM d CROSS JOIN orders o WHERE o.org_id = ? AND o.location_id = d.loc AND o.completed_at >= d.lo AND o.completed_at < d.hi
		AND o.status IN `+soldStatuses+staff, args...)
	if err != nil {
		return err
	}
	return s.eachRow(ctx, 1, func(loc, at, cur string, v []int64) { sums.addRefund(hour(loc, at), cur, v) },
		s.withD()+`SELECT d.loc, r.created_at, o.currency, r.amount - r.gift_card_amount FROM d CROSS JOIN refunds r JOIN orders o ON o.id = r.order_id
		WHERE r.org_id = ? AND r.location_id = d.loc AND r.amount > r.gift_card_amount AND r.created_at >= d.lo AND r.created_at < d.hi`+staff, args...)
}

// eachRow runs q, whose rows are a location, a time, a currency and n
// figures, and calls add with each.
func (s *ReportService) eachRow(ctx context.Context, n int, add func(loc, at, cur string, v []int64), q string, args ...any) error {
	rows, err := s.db.Reader.QueryContext(ctx, q, args...)
	if err != nil {
		return err
	}
	defer rows.Close()
	var loc, at, cur string
	v := make([]int64, n)
	dest := []any{&loc, &at, &cur}
	for i := range v {
		dest = append(dest, &v[i])
	}
	for rows.Next() {
		if err := rows.Scan(dest...); err != nil {
			return err
		}
		add(loc, at, cur, v)
	}
	return rows.Err()
}

// labelSales names the groups, computes net and orders the rows: by key,
// customers by net (the top f.Top).
func (s *ReportService) labelSales(ctx context.Context, sc *reportScope, sums salesSums) ([]*kassa.SalesRow, error) {
	names, err := s.groupNames(ctx, sc)
	if err != nil {
		return nil, err
	}
	rows := make([]*kassa.SalesRow, 0, len(sums))
	for _, r := range sums {
		r.Net = r.Sales - r.Refunds
		r.Label = names[r.Group]
		rows = append(rows, r)
	}
	sort.Slice(rows, func(i, j int) bool {
		if sc.f.GroupBy == kassa.GroupCustomer && rows[i].Net != rows[j].Net {
			return rows[i].Net > rows[j].Net
		}
		return rows[i].Group+"/"+rows[i].Currency < rows[j].Group+"/"+rows[j].Currency
	})
	if sc.f.GroupBy == kassa.GroupCustomer && len(rows) > sc.f.Top {
		rows = rows[:sc.f.Top]
	}
	return rows, nil
}

// groupNames returns the names of the grouping's ids in the actor's org.
func (s *ReportService) groupNames(ctx context.Context, sc *reportScope) (map[string]string, error) {
	q := map[kassa.ReportGrouping]string{
		kassa.GroupLocation: `SELECT id, name FROM locations WHERE org_id = ?`,
		kassa.GroupProduct:  `SELECT id, name FROM products WHERE org_id = ?`,
		kassa.GroupCategory: `SELECT id, name FROM categories WHERE org_id = ?`,
		kassa.GroupRegister: `SELECT id, name FROM registers WHERE org_id = ?`,
		kassa.GroupStaff:    `SELECT id, name FROM users WHERE org_id = ? UNION ALL SELECT id, name FROM oauth_apps`,
		kassa.GroupCustomer: `SELECT id, trim(first_name || ' ' || last_name) FROM customers WHERE org_id = ?`,
	}[sc.f.GroupBy]
	names := map[string]string{}
	if q == "" {
		return names, nil
	}
	rows, err := s.db.Reader.QueryContext(ctx, q, sc.orgID)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	for rows.Next() {
		var id, name string
		if err := rows.Scan(&id, &name); err != nil {
			return nil, err
		}
		names[id] = name
	}
	return names, rows.Err()
}

// emitAll emits rows in order.
func emitAll[T any](rows []*T, emit func(*T) error) error {
	for _, r := range rows {
		if err := emit(r); err != nil {
			return err
		}
	}
	return nil
}

// sortedRows returns the values of m ordered by their keys.
func sortedRows[K interface{ ~[2]string | ~[3]string }, T any](m map[K]*T, key func(K) string) []*T {
	keys := make([]K, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool { return key(keys[i]) < key(keys[j]) })
	out := make([]*T, len(keys))
	for i, k := range keys {
		out[i] = m[k]
	}
	return out
}

// byDayOrLocation is the d table of a report grouped by none, day or
// location.
func (sc *reportScope) byDayOrLocation() string { return sc.ranges(sc.f.GroupBy == kassa.GroupDay) }

// Tax is the tax report (kassa.TaxRow), per rate and inclusive or not.
func (s *ReportService) Tax(ctx context.Context, f kassa.ReportFilter, emit func(*kassa.TaxRow) error) (*kassa.ReportInfo, error) {
	sc, err := s.scope(ctx, kassa.ReportTax, f)
	if err != nil {
		return nil, err
	}
	key := groupKey(sc.f.GroupBy)
	sums := map[[3]string]*kassa.TaxRow{}
	row := func(k, cur string, v []int64) *kassa.TaxRow {
		id := [3]string{k, cur, fmt.Sprintf("%06d/%d", v[0], v[1])}
		if sums[id] == nil {
			sums[id] = &kassa.TaxRow{Group: k, Currency: cur, RateBps: v[0], Inclusive: v[1] == 1}
		}
		return sums[id]
	}
	args := []any{sc.byDayOrLocation(), sc.orgID}
	if err := s.sumRows(ctx, func(k, cur string, v []int64) {
		r := row(k, cur, v)
		r.Orders, r.Sales, r.Tax = r.Orders+v[2], r.Sales+v[3], r.Tax+v[4]
	}, 5, s.withD()+`SELECT `+key+`, o.currency, coalesce(l.tax_rate_bps, o.tax_rate_bps), o.tax_inclusive, count(DISTINCT o.id), sum(l.total), sum(l.tax)
		FROM d CROSS JOIN orders o JOIN order_lines l ON l.order_id = o.id AND l.org_id = o.org_id
		WHERE o.org_id = ? AND o.location_id = d.loc AND o.completed_at >= d.lo AND o.completed_at < d.hi
		AND o.status IN `+soldStatuses+` GROUP BY 1, 2, 3, 4`, args...); err != nil {
		return nil, err
	}
	if err := s.refundTaxRows(ctx, key, args, func(k, cur string, rate, inclusive, amount, tax int64) {
		r := row(k, cur, []int64{rate, inclusive})
		r.Refunds, r.RefundedTax = r.Refunds+amount, r.RefundedTax+tax
	}); err != nil {
		return nil, err
	}
	rows := sortedRows(sums, func(k [3]string) string { return strings.Join(k[:], "/") })
	for _, r := range rows {
		r.Taxable, r.NetTax = r.Sales-r.Tax, r.Tax-r.RefundedTax
	}
	return sc.info, emitAll(rows, emit)
}

// Payments is the payments report (kassa.PaymentRow): per tender,
// captured and refunded against what the drawers recorded.
func (s *ReportService) Payments(ctx context.Context, f kassa.ReportFilter, emit func(*kassa.PaymentRow) error) (*kassa.ReportInfo, error) {
	sc, err := s.scope(ctx, kassa.ReportPayments, f)
	if err != nil {
		return nil, err
	}
	key := groupKey(sc.f.GroupBy)
	sums := map[[3]string]*kassa.PaymentRow{}
	row := func(k, cur, method string) *kassa.PaymentRow {
		id := [3]string{k, cur, method}
		if sums[id] == nil {
			sums[id] = &kassa.PaymentRow{Group: k, Currency: cur, Method: method}
		}
		return sums[id]
	}
	args := []any{sc.byDayOrLocation(), sc.orgID}
	queries := []struct {
		q   string
		add func(r *kassa.PaymentRow, v []int64)
	}{
		{`SELECT ` + key + ` || ` + keySep + ` || p.method, o.currency, count(*), sum(p.amount) FROM d CROSS JOIN payments p JOIN orders o ON o.id = p.order_id
			WHERE p.org_id = ? AND p.location_id = d.loc AND p.captured_at >= d.lo AND p.captured_at < d.hi
			AND p.status IN ('captured', 'partially_refunded', 'refunded') GROUP BY 1, 2`,
			func(r *kassa.PaymentRow, v []int64) { r.Count, r.Captured = r.Count+v[0], r.Captured+v[1] }},
		{`SELECT ` + key + ` || ` + keySep + ` || p.method, o.currency, sum(` + s.d().JSONInt("j.value", "amount") + `), 0 FROM d CROSS JOIN refunds r
			JOIN orders o ON o.id = r.order_id JOIN ` + s.d().JSONElements("r.payments", "j") + ` ON true JOIN payments p ON p.id = j.value->>'payment_id'
			WHERE r.org_id = ? AND r.location_id = d.loc AND r.created_at >= d.lo AND r.created_at < d.hi GROUP BY 1, 2`,
			func(r *kassa.PaymentRow, v []int64) { r.Refunded += v[0] }},
		{`SELECT ` + key + ` || ` + keySep + ` || 'store_credit', o.currency, sum(t.amount), 0` + refundsToCredit + ` GROUP BY 1, 2`,
			func(r *kassa.PaymentRow, v []int64) { r.Refunded += v[0] }},
		{`SELECT ` + key + ` || ` + keySep + ` || e.method, ds.currency, sum(CASE WHEN e.type = 'sale' THEN e.amount ELSE 0 END),
			sum(CASE WHEN e.type = 'refund' THEN -e.amount ELSE 0 END) FROM d CROSS JOIN drawer_entries e JOIN drawer_sessions ds ON ds.id = e.drawer_id
			WHERE e.org_id = ? AND e.location_id = d.loc AND e.created_at >= d.lo AND e.created_at < d.hi AND e.type IN ('sale', 'refund') GROUP BY 1, 2`,
			func(r *kassa.PaymentRow, v []int64) {
				r.DrawerSales, r.DrawerRefunds = r.DrawerSales+v[0], r.DrawerRefunds+v[1]
			}},
	}
	for _, q := range queries {
		if err := s.sumRows(ctx, func(k, cur string, v []int64) {
			g, method, _ := strings.Cut(k, "\x1f")
			q.add(row(g, cur, method), v)
		}, 2, s.withD()+q.q, args...); err != nil {
			return nil, err
		}
	}
	rows := sortedRows(sums, func(k [3]string) string { return strings.Join(k[:], "/") })
	for _, r := range rows {
		r.Net = r.Captured - r.Refunded
		r.AwayFromTill = r.Net - (r.DrawerSales - r.DrawerRefunds)
	}
	return sc.info, emitAll(rows, emit)
}

// Inventory is the stock on hand now at the locations covered, with its
// value (kassa.InventoryRow), streamed from the query.
func (s *ReportService) Inventory(ctx context.Context, f kassa.ReportFilter, emit func(*kassa.InventoryRow) error) (*kassa.ReportInfo, error) {
	sc, err := s.scope(ctx, kassa.ReportInventory, f)
	if err != nil {
		return nil, err
	}
	ids := make([]string, len(sc.locs))
	for i, l := range sc.locs {
		ids[i] = l.ID
	}
	b, _ := json.Marshal(ids)
	low := ""
	if sc.f.LowStock {
		low = " AND sl.on_hand <= sl.reorder_point"
	}
	rows, err := s.db.Reader.QueryContext(ctx, `SELECT sl.location_id, sl.product_id, p.sku, p.name, l.currency, sl.on_hand, sl.reorder_point,
		coalesce(p.cost, p.base_price), p.cost IS NULL
		FROM stock_levels sl JOIN products p ON p.id = sl.product_id JOIN locations l ON l.id = sl.location_id
		WHERE sl.org_id = ? AND sl.location_id IN (SELECT j.value FROM `+s.d().JSONValues("?", "j")+`)`+low+` ORDER BY l.created_at, l.id, p.sku`, sc.orgID, string(b))
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	for rows.Next() {
		var r kassa.InventoryRow
		if err := rows.Scan(&r.LocationID, &r.ProductID, &r.SKU, &r.Name, &r.Currency, &r.OnHand, &r.ReorderPoint, &r.UnitCost, &r.AtPrice); err != nil {
			return nil, err
		}
		r.Value = max(r.OnHand, 0) * r.UnitCost
		r.Low = r.OnHand <= r.ReorderPoint
		if err := emit(&r); err != nil {
			return nil, err
		}
	}
	return sc.info, rows.Err()
}

// Movements sums stock movements by reason (kassa.MovementRow).
func (s *ReportService) Movements(ctx context.Context, f kassa.ReportFilter, emit func(*kassa.MovementRow) error) (*kassa.ReportInfo, error) {
	sc, err := s.scope(ctx, kassa.ReportMovements, f)
	if err != nil {
		return nil, err
	}
	key := map[kassa.ReportGrouping]string{kassa.GroupProduct: "m.product_id"}[sc.f.GroupBy]
	if key == "" {
		key = groupKey(sc.f.GroupBy)
	}
	var rows []*kassa.MovementRow
	err = s.sumRows(ctx, func(k, reason string, v []int64) {
		rows = append(rows, &kassa.MovementRow{Group: k, Reason: reason, Count: v[0], Units: v[1]})
	}, 2, s.withD()+`SELECT `+key+`, m.reason, count(*), sum(m.delta) FROM d CROSS JOIN stock_movements m
		WHERE m.org_id = ? AND m.location_id = d.loc AND m.created_at >= d.lo AND m.created_at < d.hi GROUP BY 1, 2 ORDER BY 1, 2`,
		sc.byDayOrLocation(), sc.orgID)
	if err != nil {
		return nil, err
	}
	return sc.info, emitAll(rows, emit)
}

// runningRows sums an org-wide ledger (points or gift card money) by
// group over d, with the balance before the range, so that each row's
// outstanding is the balance at the end of its last day. q selects the
// group, the currency and n figures, the last being the signed change.
func (s *ReportService) runningRows(ctx context.Context, sc *reportScope, n int, q, opening string, add func(k, cur string, v []int64, balance int64)) error {
	balances := map[string]int64{}
	if err := s.sumRows(ctx, func(_, cur string, v []int64) { balances[cur] += v[0] }, 1, opening, sc.orgID, s.rangeStart(sc)); err != nil {
		return err
	}
	return s.sumRows(ctx, func(k, cur string, v []int64) {
		balances[cur] += v[n-1]
		add(k, cur, v, balances[cur])
	}, n, s.withD()+q+` ORDER BY 1, 2`, sc.orgRanges(sc.f.GroupBy == kassa.GroupDay), sc.orgID)
}

// rangeStart is the first instant of an org-wide report's range.
func (s *ReportService) rangeStart(sc *reportScope) string {
	if len(sc.locs) == 0 {
		return ""
	}
	return sc.locs[0].lo
}

// Loyalty sums loyalty points (kassa.LoyaltyRow). Points are org-wide:
// the days are those of the location given, else of the org's first.
func (s *ReportService) Loyalty(ctx context.Context, f kassa.ReportFilter, emit func(*kassa.LoyaltyRow) error) (*kassa.ReportInfo, error) {
	sc, err := s.scope(ctx, kassa.ReportLoyalty, f)
	if err != nil {
		return nil, err
	}
	var rows []*kassa.LoyaltyRow
	err = s.runningRows(ctx, sc, 4, `SELECT `+groupKey(sc.f.GroupBy)+`, '', sum(CASE WHEN t.type = 'earn' THEN t.points ELSE 0 END),
		-sum(CASE WHEN t.type = 'redeem' THEN t.points ELSE 0 END), sum(CASE WHEN t.type NOT IN ('earn', 'redeem') THEN t.points ELSE 0 END),
		sum(t.points) FROM d CROSS JOIN points_transactions t WHERE t.org_id = ? AND t.created_at >= d.lo AND t.created_at < d.hi GROUP BY 1, 2`,
		`SELECT '', '', coalesce(sum(points), 0) FROM points_transactions WHERE org_id = ? AND created_at < ?`,
		func(k, _ string, v []int64, balance int64) {
			rows = append(rows, &kassa.LoyaltyRow{Group: k, Issued: v[0], Redeemed: v[1], Adjusted: v[2], Outstanding: balance})
		})
	if err != nil {
		return nil, err
	}
	return sc.info, emitAll(rows, emit)
}

// giftLocation is the SQL of the location a gift card transaction t
// happened at: its payment's, else its order's, else the location of the
// edge that wrote it (” at the hub: head office).
const giftLocation = `coalesce((SELECT location_id FROM payments WHERE id = t.payment_id), (SELECT location_id FROM orders WHERE id = t.order_id),
	(SELECT location_id FROM sync_nodes WHERE node_id = t.origin), '')`

// GiftCards sums gift card money (kassa.GiftCardRow); outstanding is the
// liability, org-wide, so it is given for the groupings none and day.
func (s *ReportService) GiftCards(ctx context.Context, f kassa.ReportFilter, emit func(*kassa.GiftCardRow) error) (*kassa.ReportInfo, error) {
	sc, err := s.scope(ctx, kassa.ReportGiftCards, f)
	if err != nil {
		return nil, err
	}
	key := groupKey(sc.f.GroupBy)
	if sc.f.GroupBy == kassa.GroupLocation {
		key = giftLocation
	}
	var rows []*kassa.GiftCardRow
	err = s.runningRows(ctx, sc, 5, `SELECT `+key+`, g.currency, sum(CASE WHEN t.type IN ('issue', 'reload', 'takeback') THEN t.amount ELSE 0 END),
		-sum(CASE WHEN t.type = 'redeem' THEN t.amount ELSE 0 END), sum(CASE WHEN t.type = 'refund' THEN t.amount ELSE 0 END),
		sum(CASE WHEN t.type NOT IN ('issue', 'reload', 'takeback', 'redeem', 'refund') THEN t.amount ELSE 0 END), sum(t.amount)
		FROM d CROSS JOIN gift_card_transactions t JOIN gift_cards g ON g.id = t.gift_card_id
		WHERE t.org_id = ? AND t.created_at >= d.lo AND t.created_at < d.hi GROUP BY 1, 2`,
		`SELECT '', g.currency, sum(t.amount) FROM gift_card_transactions t JOIN gift_cards g ON g.id = t.gift_card_id
		WHERE t.org_id = ? AND t.created_at < ? GROUP BY 2`,
		func(k, cur string, v []int64, balance int64) {
			r := &kassa.GiftCardRow{Group: k, Currency: cur, Issued: v[0], Redeemed: v[1], Refunded: v[2], Adjusted: v[3]}
			if sc.f.GroupBy != kassa.GroupLocation {
				r.Outstanding = balance
			}
			rows = append(rows, r)
		})
	if err != nil {
		return nil, err
	}
	return sc.info, emitAll(rows, emit)
}

// GiftCardsOwed is what each location owes the others for cards it
// issued that were spent elsewhere in the range (kassa.GiftCardOwedRow).
func (s *ReportService) GiftCardsOwed(ctx context.Context, f kassa.ReportFilter, emit func(*kassa.GiftCardOwedRow) error) (*kassa.ReportInfo, error) {
	sc, err := s.scope(ctx, kassa.ReportGiftOwed, f)
	if err != nil {
		return nil, err
	}
	issued := strings.ReplaceAll(giftLocation, "t.", "i.")
	var rows []*kassa.GiftCardOwedRow
	err = s.sumRows(ctx, func(k, cur string, v []int64) {
		from, to, _ := strings.Cut(k, "\x1f")
		if from != to && v[0] != 0 {
			rows = append(rows, &kassa.GiftCardOwedRow{Currency: cur, IssuedLocationID: from, RedeemedLocationID: to, Amount: v[0]})
		}
	}, 1, s.withD()+`SELECT coalesce((SELECT `+issued+` FROM gift_card_transactions i WHERE i.gift_card_id = t.gift_card_id AND i.type = 'issue'
		ORDER BY i.created_at LIMIT 1), '') || `+keySep+` || `+giftLocation+` AS k, g.currency, -sum(t.amount)
		FROM d CROSS JOIN gift_card_transactions t JOIN gift_cards g ON g.id = t.gift_card_id
		WHERE t.org_id = ? AND t.created_at >= d.lo AND t.created_at < d.hi AND t.type IN ('redeem', 'refund') AND t.payment_id IS NOT NULL
		GROUP BY 1, 2 ORDER BY 1, 2`, sc.orgRanges(false), sc.orgID)
	if err != nil {
		return nil, err
	}
	return sc.info, emitAll(rows, emit)
}

// Cash sums closed drawer sessions by their Z reports (kassa.CashRow).
// A Z carries its business day, so no zone is needed.
func (s *ReportService) Cash(ctx context.Context, f kassa.ReportFilter, emit func(*kassa.CashRow) error) (*kassa.ReportInfo, error) {
	sc, err := s.scope(ctx, kassa.ReportCash, f)
	if err != nil {
		return nil, err
	}
	key := map[kassa.ReportGrouping]string{kassa.GroupStaff: "z.opened_by", kassa.GroupRegister: "z.register_id",
		kassa.GroupDay: "z.business_day", kassa.GroupLocation: "z.location_id"}[sc.f.GroupBy]
	if key == "" {
		key = "''"
	}
	names, err := s.groupNames(ctx, sc)
	if err != nil {
		return nil, err
	}
	ids := make([]string, len(sc.locs))
	for i, l := range sc.locs {
		ids[i] = l.ID
	}
	b, _ := json.Marshal(ids)
	var rows []*kassa.CashRow
	err = s.sumRows(ctx, func(k, cur string, v []int64) {
		rows = append(rows, &kassa.CashRow{Group: k, Label: names[k], Currency: cur, Sessions: v[0], Float: v[1], CashSales: v[2],
			Expected: v[3], Counted: v[4], OverShort: v[5]})
	}, 6, `SELECT `+key+`, z.currency, count(*), sum(`+s.d().JSONInt("z.totals", "float")+`), sum(`+s.d().JSONInt("z.totals", "cash_sales")+`), sum(`+s.d().JSONInt("z.totals", "expected")+`),
		sum(z.counted), sum(z.over_short) FROM z_reports z
		WHERE z.org_id = ? AND z.business_day >= ? AND z.business_day <= ? AND z.location_id IN (SELECT j.value FROM `+s.d().JSONValues("?", "j")+`)
		GROUP BY 1, 2 ORDER BY 1, 2`, sc.orgID, sc.f.DateFrom, sc.f.DateTo, string(b))
	if err != nil {
		return nil, err
	}
	return sc.info, emitAll(rows, emit)
}

// Campaigns lists the campaigns redeemed in the range with their figures
// and a link to their analytics (kassa.CampaignRow).
func (s *ReportService) Campaigns(ctx context.Context, f kassa.ReportFilter, emit func(*kassa.CampaignRow) error) (*kassa.ReportInfo, error) {
	sc, err := s.scope(ctx, kassa.ReportCampaigns, f)
	if err != nil {
		return nil, err
	}
	rows, err := s.db.Reader.QueryContext(ctx, s.withD()+`SELECT c.id, c.name, c.status, l.currency, count(*), sum(r.amount), sum(r.order_total)
		FROM d CROSS JOIN campaign_redemptions r JOIN campaigns c ON c.id = r.campaign_id JOIN locations l ON l.id = r.location_id
		WHERE r.org_id = ? AND r.location_id = d.loc AND r.occurred_at >= d.lo AND r.occurred_at < d.hi
		GROUP BY 1, 4 ORDER BY c.name, c.id, l.currency`, sc.ranges(false), sc.orgID)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	for rows.Next() {
		var r kassa.CampaignRow
		if err := rows.Scan(&r.CampaignID, &r.Name, &r.Status, &r.Currency, &r.Orders, &r.Discount, &r.Revenue); err != nil {
			return nil, err
		}
		r.Analytics = "/api/v1/campaigns/" + r.CampaignID + "/analytics"
		if err := emit(&r); err != nil {
			return nil, err
		}
	}
	return sc.info, rows.Err()
}
