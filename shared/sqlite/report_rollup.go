package sqlite

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"time"

	"kassa.dev/shared/kassa"
	"kassa.dev/shared/sqlite/engine"
	"kassa.dev/sync/change"
)

// The sales report's rollups (docs/reports.md, "Rollups"; migration 0040):
// sales_days sums each location's orders and refunds by its business day,
// so that a year of 50 stores' sales by day reads some 18,000 rows, not
// 300,000 orders. A day's row is kept in the unit of work that changes
// the day's raw rows, never by a later job. A sale or refund made here adds
// to its day's row (the order history noun's written hook, on the
// completion's history row, and the refund noun's): each is written once,
// so adding is exact, and costs the sale one upsert whatever the day's
// size. What sync brings is recomputed instead, from the raw rows of each
// day it touched (the order noun's recompute; one index range a day), so
// a change applied twice leaves the same row; a location whose zone or
// cutoff moved its days has its rows rebuilt (the location noun's hooks).
// RebuildRollups recomputes them all from the raw rows. While
// report_rollups is empty (a store upgraded with orders, before its
// rebuild), nothing keeps them and reports read the raw rows.

// unitExec is a querier that also writes: what the hooks run in a unit.
type unitExec interface {
	querier
	ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error)
}

// rollupsKept reports whether sales_days is kept (report_rollups has its
// row). A store of a release before migration 0040 (tests replay today's
// changes into one) keeps none.
func rollupsKept(ctx context.Context, q querier) (bool, error) {
	var n int
	err := q.QueryRowContext(ctx, `SELECT count(*) FROM report_rollups`).Scan(&n)
	if noRollups(err) {
		return false, nil
	}
	return n > 0, err
}

// noRollups reports whether err says the store has no report_rollups.
func noRollups(err error) bool {
	return err != nil && strings.Contains(err.Error(), "no such table: report_rollups")
}

// locationClock is the business day clock of a location.
func locationClock(ctx context.Context, q querier, locID string) (kassa.DayClock, error) {
	var d kassa.DaySettings
	err := q.QueryRowContext(ctx, `SELECT timezone, day_cutoff_hour FROM locations WHERE id = ?`, locID).Scan(&d.Timezone, &d.CutoffHour)
	return d.Clock(), err
}

// salesDayOrders and salesDayRefunds sum one business day's [?5, ?6) raw
// rows into sales_days (?1 org, ?2 location, ?3 day, ?4 org again).
func salesDayOrders(d engine.Dialect) string {
	return `INSERT INTO sales_days (org_id, location_id, day, currency, orders, gross, discounts, campaign, tax, sales, refunds)
		SELECT ?1, ?2, ?3, o.currency, count(*), sum(o.subtotal), sum(o.discount_total), sum(` + campaignPart(d, "o.campaigns") + `), sum(o.tax_total), sum(o.total - o.gift_card_total), 0
		FROM orders o WHERE o.org_id = ?4 AND o.location_id = ?2 AND o.completed_at >= ?5 AND o.completed_at < ?6
		AND o.status IN ` + soldStatuses + ` GROUP BY o.currency`
}

const salesDayRefunds = `INSERT INTO sales_days (org_id, location_id, day, currency, orders, gross, discounts, campaign, tax, sales, refunds)
		SELECT ?1, ?2, ?3, o.currency, 0, 0, 0, 0, 0, 0, sum(r.amount - r.gift_card_amount)
		FROM refunds r JOIN orders o ON o.id = r.order_id WHERE r.org_id = ?4 AND r.amount > r.gift_card_amount AND r.location_id = ?2 AND r.created_at >= ?5 AND r.created_at < ?6
		GROUP BY o.currency ON CONFLICT (org_id, location_id, day, currency) DO UPDATE SET refunds = excluded.refunds`

// refreshSalesDay recomputes the row(s) of location locID's business day
// that instant at (a stored time) falls on.
func refreshSalesDay(ctx context.Context, q unitExec, orgID, locID, at string) error {
	clock, err := locationClock(ctx, q, locID)
	if err != nil {
		return err
	}
	day := clock.Day(parseTime(at))
	lo, hi := clock.Bounds(day, day)
	if _, err := q.ExecContext(ctx, `DELETE FROM sales_days WHERE org_id = ? AND location_id = ? AND day = ?`, orgID, locID, day); err != nil {
		return err
	}
	for _, stmt := range []string{salesDayOrders(engine.D(q)), salesDayRefunds} {
		if _, err := q.ExecContext(ctx, stmt, orgID, locID, day, orgID, fmtTime(lo), fmtTime(hi)); err != nil {
			return err
		}
	}
	return nil
}

// salesDayAdd adds a sale (?5 orders, ?6 gross … ?10 sales, ?11 refunds)
// to the row of ?1 org, ?2 location, ?3 day, ?4 currency.
const salesDayAdd = `INSERT INTO sales_days (org_id, location_id, day, currency, orders, gross, discounts, campaign, tax, sales, refunds)
	VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11) ON CONFLICT (org_id, location_id, day, currency) DO UPDATE SET orders = sales_days.orders + excluded.orders,
	gross = sales_days.gross + excluded.gross, discounts = sales_days.discounts + excluded.discounts, campaign = sales_days.campaign + excluded.campaign,
	tax = sales_days.tax + excluded.tax, sales = sales_days.sales + excluded.sales, refunds = sales_days.refunds + excluded.refunds`

// addToDay reads, with query, a location, its zone and cutoff, an instant,
// a currency and the figures to add to that instant's business day there
// (orders, gross, discounts, campaign, tax, sales, refunds), and adds them;
// no row (rollups not kept, or nothing to add) adds nothing. One read and
// one upsert: what a sale pays for its rollup.
func addToDay(ctx context.Context, tx *Tx, orgID, query string, args ...any) error {
	var loc, at, cur string
	var d kassa.DaySettings
	var v [7]int64
	err := tx.QueryRowContext(ctx, query, args...).Scan(&loc, &d.Timezone, &d.CutoffHour, &at, &cur, &v[0], &v[1], &v[2], &v[3], &v[4], &v[5], &v[6])
	if errors.Is(err, sql.ErrNoRows) || noRollups(err) {
		return nil
	}
	if err != nil {
		return err
	}
	_, err = tx.ExecContext(ctx, salesDayAdd, orgID, loc, d.Clock().Day(parseTime(at)), cur, v[0], v[1], v[2], v[3], v[4], v[5], v[6])
	return err
}

// rollupSale adds order o, completed in this unit, to its business day
// there. An order completes once, and its figures are final by then, so
// adding is exact; refunds are added by rollupRefund. The unit has the
// order in memory: a sale pays one read of its location (and of whether
// rollups are kept) and one upsert, not a read of the order again.
func rollupSale(ctx context.Context, tx *Tx, orgID string, o *kassa.Order) error {
	var d kassa.DaySettings
	var kept bool
	err := tx.QueryRowContext(ctx, `SELECT timezone, day_cutoff_hour, EXISTS (SELECT 1 FROM report_rollups) FROM locations WHERE id = ?`,
		o.LocationID).Scan(&d.Timezone, &d.CutoffHour, &kept)
	if noRollups(err) || (err == nil && !kept) {
		return nil
	}
	if err != nil {
		return err
	}
	_, err = tx.ExecContext(ctx, salesDayAdd, orgID, o.LocationID, d.Clock().Day(*o.CompletedAt), o.Currency,
		1, o.Subtotal, o.DiscountTotal, campaignsAmount(o.Campaigns), o.TaxTotal, o.Total-o.GiftCardTotal, 0)
	return err
}

// campaignsAmount is what the campaigns gave an order (campaignPart in SQL).
func campaignsAmount(cs []kassa.AppliedCampaign) int64 {
	var n int64
	for _, c := range cs {
		n += c.Amount
	}
	return n
}

// rollupRefund is the refund noun's written hook: a refund made here (it
// is written once) adds its amount to its business day.
func rollupRefund(ctx context.Context, tx *Tx, orgID, id string) error {
	return addToDay(ctx, tx, orgID, `SELECT r.location_id, l.timezone, l.day_cutoff_hour, r.created_at, o.currency, 0, 0, 0, 0, 0, 0, r.amount - r.gift_card_amount
		FROM refunds r JOIN orders o ON o.id = r.order_id JOIN locations l ON l.id = r.location_id
		WHERE r.id = ? AND r.amount > r.gift_card_amount AND EXISTS (SELECT 1 FROM report_rollups)`, id)
}

// refreshOrderDays recomputes, from the raw rows, the business days of
// the completions and refunds of orders (id → org) that sync brought:
// each day once, however many of its orders the batch touched.
func refreshOrderDays(ctx context.Context, tx *Tx, orders map[string]string) error {
	days := map[salesDayOf]string{} // → an instant on it
	clocks := map[string]kassa.DayClock{}
	for org, ids := range idsByOrg(orders) {
		for chunk := range slices.Chunk(ids, maxInList) {
			if err := orderDays(ctx, tx, org, chunk, clocks, days); noRollups(err) {
				return nil // a store that keeps none (rollupsKept)
			} else if err != nil {
				return err
			}
		}
	}
	for d, at := range days {
		if err := refreshSalesDay(ctx, tx, d.org, d.loc, at); err != nil {
			return err
		}
	}
	return nil
}

// salesDayOf is a location's business day.
type salesDayOf struct{ org, loc, day string }

// orderDays notes in days the business days of the completions and
// refunds of orders ids of org, each location's clock read once (clocks),
// while sales_days is kept (rollupsKept, asked in the same statement: on
// PostgreSQL a round trip fewer for every push).
func orderDays(ctx context.Context, tx *Tx, org string, ids []any, clocks map[string]kassa.DayClock, days map[salesDayOf]string) error {
	in, args := inList(1, ids)
	rows, err := tx.QueryContext(ctx, `SELECT location_id, completed_at FROM orders WHERE org_id = ?1 AND id IN (`+in+`) AND completed_at IS NOT NULL
			AND EXISTS (SELECT 1 FROM report_rollups)
		UNION SELECT location_id, created_at FROM refunds WHERE org_id = ?1 AND order_id IN (`+in+`) AND EXISTS (SELECT 1 FROM report_rollups)`,
		append([]any{org}, args...)...)
	if err != nil {
		return err
	}
	var at [][2]string // location, instant
	for rows.Next() {
		var loc, when string
		if err := rows.Scan(&loc, &when); err != nil {
			rows.Close()
			return err
		}
		at = append(at, [2]string{loc, when})
	}
	if err := rows.Close(); err != nil {
		return err
	}
	if err := rows.Err(); err != nil {
		return err
	}
	for _, a := range at {
		clock, ok := clocks[a[0]]
		if !ok {
			if clock, err = locationClock(ctx, tx, a[0]); err != nil {
				return err
			}
			clocks[a[0]] = clock
		}
		days[salesDayOf{org, a[0], clock.Day(parseTime(a[1]))}] = a[1]
	}
	return nil
}

// rollupLocation is the location noun's written hook: its days may have
// moved (a new zone or cutoff), so its rows are rebuilt.
func rollupLocation(ctx context.Context, tx *Tx, orgID, id string) error {
	if kept, err := rollupsKept(ctx, tx); err != nil || !kept {
		return err
	}
	return rebuildLocationDays(ctx, tx, orgID, id)
}

// trackLocationDays: a location whose zone or cutoff sync changed has its
// rows rebuilt once the batch applied.
func trackLocationDays(a *applier, c *change.Change, f map[string]any) {
	_, zone := f["timezone"]
	_, cutoff := f["day_cutoff_hour"]
	if zone || cutoff {
		a.Touch(entLocation, c.EntityID, c.OrgID)
	}
}

// recomputeLocationDays rebuilds the rows of the locations a batch moved.
func recomputeLocationDays(ctx context.Context, a *applier, locs map[string]string) error {
	if kept, err := rollupsKept(ctx, a.Tx); err != nil || !kept {
		return err
	}
	for id, orgID := range locs {
		if err := rebuildLocationDays(ctx, a.Tx, orgID, id); err != nil {
			return err
		}
	}
	return nil
}

// rebuildLocationDays recomputes every row of a location from its raw
// rows in one pass over them: its completed orders and its refunds, each
// summed into its business day (the location's clock), then written.
func rebuildLocationDays(ctx context.Context, q unitExec, orgID, locID string) error {
	if _, err := q.ExecContext(ctx, `DELETE FROM sales_days WHERE org_id = ? AND location_id = ?`, orgID, locID); err != nil {
		return err
	}
	clock, err := locationClock(ctx, q, locID)
	if err != nil {
		return err
	}
	sums := map[[2]string]*[7]int64{} // day, currency → orders … refunds
	add := func(at, cur string, i int, v []int64) {
		k := [2]string{clock.Day(parseTime(at)), cur}
		if sums[k] == nil {
			sums[k] = &[7]int64{}
		}
		for j, x := range v {
			sums[k][i+j] += x
		}
	}
	if err := eachSum(ctx, q, 6, func(at, cur string, v []int64) { add(at, cur, 0, v) }, `SELECT o.completed_at, o.currency, 1, o.subtotal,
		o.discount_total, `+campaignPart(engine.D(q), "o.campaigns")+`, o.tax_total, o.total - o.gift_card_total FROM orders o
		WHERE o.org_id = ? AND o.location_id = ? AND o.completed_at IS NOT NULL AND o.status IN `+soldStatuses, orgID, locID); err != nil {
		return err
	}
	if err := eachSum(ctx, q, 1, func(at, cur string, v []int64) { add(at, cur, 6, v) }, `SELECT r.created_at, o.currency, r.amount - r.gift_card_amount
		FROM refunds r JOIN orders o ON o.id = r.order_id WHERE r.org_id = ? AND r.location_id = ? AND r.amount > r.gift_card_amount`, orgID, locID); err != nil {
		return err
	}
	for k, v := range sums {
		if _, err := q.ExecContext(ctx, salesDayAdd, orgID, locID, k[0], k[1], v[0], v[1], v[2], v[3], v[4], v[5], v[6]); err != nil {
			return err
		}
	}
	return nil
}

// eachSum runs query, whose rows are a time, a currency and n figures,
// and calls add with each.
func eachSum(ctx context.Context, q querier, n int, add func(at, cur string, v []int64), query string, args ...any) error {
	rows, err := q.QueryContext(ctx, query, args...)
	if err != nil {
		return err
	}
	defer rows.Close()
	var at, cur string
	v := make([]int64, n)
	dest := []any{&at, &cur}
	for i := range v {
		dest = append(dest, &v[i])
	}
	for rows.Next() {
		if err := rows.Scan(dest...); err != nil {
			return err
		}
		add(at, cur, v)
	}
	return rows.Err()
}

// RebuildRollups recomputes the sales report's rollups of every location
// from the raw rows, in one unit of work, and marks them kept. Run by
// `hub reports-rebuild` and `edge reports-rebuild`; it returns how many
// locations it rebuilt.
func (db *DB) RebuildRollups(ctx context.Context) (int, error) {
	if err := db.Write(ctx, func(tx *Tx) error { return rebuildAll(ctx, tx, db.Now()) }); err != nil {
		return 0, err
	}
	var n int
	err := db.Reader.QueryRowContext(ctx, `SELECT count(*) FROM locations`).Scan(&n)
	return n, err
}

// rebuildAll empties the rollups, rebuilds every location's and marks them
// kept (at now).
func rebuildAll(ctx context.Context, tx *Tx, now time.Time) error {
	rows, err := tx.QueryContext(ctx, `SELECT org_id, id FROM locations ORDER BY org_id, id`)
	if err != nil {
		return err
	}
	var locs [][2]string
	for rows.Next() {
		var l [2]string
		if err := rows.Scan(&l[0], &l[1]); err != nil {
			rows.Close()
			return err
		}
		locs = append(locs, l)
	}
	if err := rows.Close(); err != nil {
		return err
	}
	if err := dropRollups(ctx, tx); err != nil {
		return err
	}
	for _, l := range locs {
		if err := rebuildLocationDays(ctx, tx, l[0], l[1]); err != nil {
			return err
		}
	}
	_, err = tx.ExecContext(ctx, `INSERT INTO report_rollups (built_at) VALUES (?)`, fmtTime(now))
	return err
}

// DropRollups stops keeping the sales report's rollups: reports read the
// raw rows until RebuildRollups (the benchmark's "rollups off").
func (db *DB) DropRollups(ctx context.Context) error {
	return db.Write(ctx, func(tx *Tx) error { return dropRollups(ctx, tx) })
}

// dropRollups empties sales_days and report_rollups.
func dropRollups(ctx context.Context, tx *Tx) error {
	for _, table := range []string{"sales_days", "report_rollups"} {
		if _, err := tx.ExecContext(ctx, `DELETE FROM `+table); err != nil {
			return err
		}
	}
	return nil
}

// salesFromRollups sums the sales report by day, location or none from
// sales_days; ok is false when they are not kept (or the report is a
// cashier's own), and the caller reads the raw rows.
func (s *ReportService) salesFromRollups(ctx context.Context, sc *reportScope, sums salesSums) (ok bool, err error) {
	key := map[kassa.ReportGrouping]string{kassa.GroupDay: "s.day", kassa.GroupLocation: "s.location_id", kassa.GroupNone: "''"}[sc.f.GroupBy]
	if key == "" || sc.f.StaffID != "" {
		return false, nil
	}
	if kept, err := rollupsKept(ctx, s.db.Reader); err != nil || !kept {
		return false, err
	}
	ids := make([]string, len(sc.locs))
	for i, l := range sc.locs {
		ids[i] = l.ID
	}
	b, _ := json.Marshal(ids)
	return true, s.sumRows(ctx, func(k, cur string, v []int64) {
		sums.addSale(k, cur, v)
		sums.addRefund(k, cur, v[6:])
	}, 7, `SELECT `+key+`, s.currency, sum(s.orders), sum(s.gross), sum(s.discounts), sum(s.campaign), sum(s.tax), sum(s.sales), sum(s.refunds)
		FROM sales_days s WHERE s.org_id = ? AND s.location_id IN (SELECT j.value FROM `+engine.D(s.db.Reader).JSONValues("?", "j")+`) AND s.day >= ? AND s.day <= ?
		GROUP BY 1, 2`, sc.orgID, string(b), sc.f.DateFrom, sc.f.DateTo)
}
