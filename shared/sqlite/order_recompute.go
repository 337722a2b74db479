package sqlite

// The order's derived columns after sync (the order noun's recompute
// hook): a batch's touched orders are recomputed a chunk at a time, each
// step one statement for the whole chunk, not one per order — the hub's
// catch-up brings hundreds of orders a batch, and on PostgreSQL every
// statement is a round trip.

import (
	"context"
	"database/sql"
	"errors"
	"maps"
	"slices"
	"strconv"
	"strings"

	"kassa.dev/shared/kassa"
	"kassa.dev/shared/sqlite/engine"
)

// maxInList bounds the ids one statement names in an IN list: well under
// both backends' limits on parameters.
const maxInList = 512

// inList is the placeholders of an IN list of ids (after the statement's
// first `first` numbered parameters) and ids padded with their last to the
// next power of two: a statement then has a handful of texts whatever the
// batch, which the writer keeps prepared (a repeated id changes no answer).
func inList(first int, ids []any) (string, []any) {
	n := 1
	for n < len(ids) {
		n *= 2
	}
	padded := slices.Grow(slices.Clone(ids), n-len(ids))
	for len(padded) < n {
		padded = append(padded, ids[len(ids)-1])
	}
	b := make([]byte, 0, n*5)
	for i := range n {
		if i > 0 {
			b = append(b, ", "...)
		}
		b = strconv.AppendInt(append(b, '?'), int64(first+1+i), 10)
	}
	return string(b), padded
}

// idsByOrg groups the ids of rows (id → org) by org, each list sorted: a
// batch's statements then run in one order whatever the map's.
func idsByOrg(rows map[string]string) map[string][]any {
	out := map[string][]any{}
	for _, id := range slices.Sorted(maps.Keys(rows)) {
		out[rows[id]] = append(out[rows[id]], id)
	}
	return out
}

// recomputeOrders refreshes the derived columns of the orders a batch
// touched (recomputeChunk), refreshes the rollups of the business days of
// those completed or refunded (refreshOrderDays), then records the
// campaigns' usage limits the redemptions it derived went past
// (checkVouchers).
func recomputeOrders(ctx context.Context, a *applier, orders map[string]string) error {
	dated := map[string]string{}
	for org, ids := range idsByOrg(orders) {
		for chunk := range slices.Chunk(ids, maxInList) {
			if err := recomputeChunk(ctx, a, org, chunk, dated); err != nil {
				return err
			}
		}
	}
	if err := refreshOrderDays(ctx, a.Tx, dated); err != nil {
		return err
	}
	return checkVouchers(ctx, a)
}

// recomputeChunk refreshes the derived columns of orders ids of org:
// payments' refunded amounts from the refunds that name them, the paid
// and refunded totals, and — for changes an edge pushed — the rest
// (checkPushed); an order's campaigns from the hub's log get their
// redemptions. It records a conflict for each money invariant the merge
// broke (checkMoney), and notes in dated (id → org) the orders whose
// business days a rollup must see again. Every statement is scoped to the
// org. An honest edge's order needs nothing rewritten: one read compares
// each figure with its recomputed value (readOrderFigures), and only
// orders that differ are written (writeFigures).
func recomputeChunk(ctx context.Context, a *applier, org string, ids []any, dated map[string]string) error {
	scope := paidTotals
	if a.Admitter != nil {
		scope = everyTotal
	}
	before, err := readOrderFigures(ctx, a.Tx, org, ids, scope)
	if err != nil {
		return err
	}
	if err := refundedAmounts(ctx, a.Tx, org, before); err != nil {
		return err
	}
	after, err := writeFigures(ctx, a.Tx, org, before, scope)
	if err != nil {
		return err
	}
	if a.Admitter != nil {
		err = checkPushed(ctx, a, after)
	} else {
		err = redeemCampaigned(ctx, a, org, ids)
	}
	if err != nil {
		return err
	}
	for _, id := range ids {
		o, ok := before[id.(string)]
		if !ok {
			continue // its row arrives later in the log
		}
		if o.completed || o.refunds {
			dated[o.id] = org
		}
		if err := checkMoney(ctx, a, org, o.id, o.money(), after[o.id].money()); err != nil {
			return err
		}
	}
	return nil
}

// orderFigures is what the recompute reads of an order once, before it:
// its figures and their recomputed values (want), what the hub's checks
// of a pushed order look at, and which of its rows exist.
type orderFigures struct {
	id, org, location, status        string
	figures, want                    figures
	creator, approvedBy              sql.NullString
	claims, lines, payments, refunds bool // it names campaigns; it has lines, payments, refunds
	completed                        bool
}

// figures are an order's derived totals, in recomputedColumns' order.
type figures struct{ paid, refunded, subtotal, discount, tax, giftCards, total int64 }

// money is the order's totals, as the money invariants see them.
func (o orderFigures) money() money {
	return money{found: o.id != "", location: o.location, total: o.figures.total, paid: o.figures.paid, refunded: o.figures.refunded}
}

// readOrderFigures reads orders ids of org with their figures
// recomputed (recomputedFigures), by id; an order not there (its row
// arrives later in the log) is absent. The figures from the lines are
// recomputed only at scope everyTotal and for an order whose lines (or
// gift card lines) are in: one whose lines come later keeps its own.
func readOrderFigures(ctx context.Context, tx *Tx, org string, ids []any, scope totalsScope) (map[string]orderFigures, error) {
	in, args := inList(1, ids)
	rows, err := tx.QueryContext(ctx, recomputedFigures(engine.D(tx), scope, in), append([]any{org}, args...)...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := make(map[string]orderFigures, len(ids))
	for rows.Next() {
		o := orderFigures{org: org}
		f, w := &o.figures, &o.want
		var gifts bool
		if err := rows.Scan(&o.id, &o.location, &o.status, &o.completed, &o.payments, &o.refunds, &o.creator, &o.approvedBy, &o.claims, &o.lines, &gifts,
			&f.paid, &f.refunded, &f.subtotal, &f.discount, &f.tax, &f.giftCards, &f.total,
			&w.paid, &w.refunded, &w.subtotal, &w.discount, &w.tax, &w.giftCards, &w.total); err != nil {
			return nil, err
		}
		if scope == paidTotals || !o.lines && !gifts {
			w.subtotal, w.discount, w.tax, w.giftCards, w.total = f.subtotal, f.discount, f.tax, f.giftCards, f.total
		} else {
			w.total += w.giftCards // the lines' total, and what the gift card lines add
		}
		out[o.id] = o
	}
	return out, rows.Err()
}

// refundedAmounts refreshes the refunded amounts of the payments of the
// orders in states that have payments, writing only those that differ;
// the payments are found by their order's index (recomputedFigures).
func refundedAmounts(ctx context.Context, tx *Tx, org string, states map[string]orderFigures) error {
	var ids []any
	for _, id := range slices.Sorted(maps.Keys(states)) {
		if states[id].payments {
			ids = append(ids, id)
		}
	}
	if len(ids) == 0 {
		return nil
	}
	d := engine.D(tx)
	refunded := `(SELECT coalesce(sum(` + d.JSONInt("p.value", "amount") + `), 0)
			FROM refunds r, ` + d.JSONElements("r.payments", "p") + ` WHERE r.order_id = payments.order_id AND ` + notIndexed("r.org_id") + ` = payments.org_id
			AND ` + d.JSONText("p.value", "payment_id") + ` = payments.id)`
	in, args := inList(1, ids)
	return tx.ExecLater(ctx, `UPDATE payments SET refunded_amount = `+refunded+`
		WHERE org_id = ?1 AND id IN (SELECT id FROM payments WHERE order_id IN (`+in+`)) AND refunded_amount <> `+refunded, append([]any{org}, args...)...)
}

// notIndexed is col in an expression no index serves: the org check of a
// row found by its order. SQLite, which keeps no statistics here, takes
// an org's index over the order's when a WHERE names both, and reads
// every row of the org (each push, once the org had many).
func notIndexed(col string) string { return col + " || ''" }

// redeemCampaigned writes the redemptions of the orders from the hub's
// log that the batch inserted with campaigns: what they gave is the
// hub's word.
func redeemCampaigned(ctx context.Context, a *applier, org string, ids []any) error {
	for _, id := range ids {
		if !campaignsOf(a.State).campaigned[id.(string)] {
			continue
		}
		if err := redeem(ctx, a, id.(string), org, nil); err != nil {
			return err
		}
	}
	return nil
}

// checkPushed checks the orders an edge pushed once their totals are
// recomputed from their lines (an order's lines are fixed at creation, so
// the recompute changes nothing for an honest edge): it refuses one that
// claims completion without being paid in full, and for one whose lines
// are in writes the redemptions the hub computes (redeemAtHub) and replays
// the discount permission (checkDiscount).
func checkPushed(ctx context.Context, a *applier, orders map[string]orderFigures) error {
	for _, id := range slices.Sorted(maps.Keys(orders)) {
		o := orders[id]
		if o.status != kassa.OrderOpen && o.status != kassa.OrderCancelled && o.figures.paid < o.figures.total {
			return refuse(RefusedValue, "order %s is %s with %d of %d paid", o.id, o.status, o.figures.paid, o.figures.total)
		}
		if !o.lines {
			continue // its lines come later in the log: recomputed then
		}
		if o.claims {
			if err := redeemAtHub(ctx, a, o.id, o.org); err != nil {
				return err
			}
		}
		if err := checkDiscount(ctx, a.Admitter, o); err != nil {
			return err
		}
	}
	return nil
}

// writeFigures writes the recomputed figures of the orders of before
// whose figures differ (rare: a forged total, payments merged from two
// nodes; on PostgreSQL the writes go with the next statement), and
// returns the orders of before with their figures after.
func writeFigures(ctx context.Context, tx *Tx, org string, before map[string]orderFigures, scope totalsScope) (map[string]orderFigures, error) {
	after := maps.Clone(before)
	var differ []any
	for _, id := range slices.Sorted(maps.Keys(before)) {
		if o := before[id]; o.figures != o.want {
			differ = append(differ, id)
			o.figures = o.want
			after[id] = o
		}
	}
	if len(differ) == 0 {
		return after, nil
	}
	cols := recomputedColumns(scope)
	set := make([]string, len(cols))
	for i, c := range cols {
		set[i] = c + " = ?"
	}
	for _, id := range differ {
		w := after[id.(string)].figures
		vals := []any{w.paid, w.refunded, w.subtotal, w.discount, w.tax, w.giftCards, w.total}[:len(cols)]
		if err := tx.ExecLater(ctx, `UPDATE orders SET `+strings.Join(set, ", ")+` WHERE org_id = ? AND id = ?`, append(vals, org, id)...); err != nil {
			return nil, err
		}
	}
	return after, nil
}

// totalsScope is which of an order's figures the recompute sets.
type totalsScope int

const (
	paidTotals totalsScope = iota // the paid and refunded totals: what an edge recomputes
	everyTotal                    // and those from the lines: what the hub recomputes of a push
)

// recomputedColumns are the figures the recompute sets at scope, in the
// order of figures.
func recomputedColumns(scope totalsScope) []string {
	cols := []string{"paid_total", "refunded_total"}
	if scope == everyTotal {
		cols = append(cols, "subtotal", "discount_total", "tax_total", "gift_card_total", "total")
	}
	return cols
}

// recomputedFigures selects orders in (placeholders after ?1, the org)
// with what the recompute reads of each: id, location, status, whether it
// is completed and has payments, refunds, lines and gift card lines, the
// hub's columns (creator, approver, whether it names campaigns), its
// figures, then each figure summed again from its payments, refunds and,
// at scope everyTotal, lines (the total: its lines' alone; readOrderFigures
// adds the gift card lines, and keeps an order's own figures where its
// lines have not arrived). Each sum is a lookup by the order's index:
// the org is checked on each row, not used to find it (notIndexed). Where
// the dialect joins a subquery per row, joinedFigures reads the same.
func recomputedFigures(d engine.Dialect, scope totalsScope, in string) string {
	if _, ok := d.PerRow("", ""); ok {
		return joinedFigures(d, scope, in)
	}
	of := func(table string) string {
		return ` FROM ` + table + ` WHERE order_id = o.id AND ` + notIndexed("org_id") + ` = o.org_id`
	}
	some := func(table string) string { return `EXISTS (SELECT 1` + of(table) + `)` }
	sum := func(expr, table string) string { return `(SELECT coalesce(sum(` + expr + `), 0)` + of(table) + `)` }
	q := `SELECT o.id, o.location_id, o.status, o.completed_at IS NOT NULL, ` + some("payments") + `, ` + some("refunds") + `, `
	paid := `(SELECT coalesce(sum(amount), 0)` + of("payments") + ` AND status IN ('captured', 'partially_refunded', 'refunded'))`
	if scope == paidTotals {
		return q + `NULL, NULL, 0, 0, 0, o.paid_total, o.refunded_total, 0, 0, 0, 0, o.total,
			` + paid + `, ` + sum("amount", "refunds") + `, 0, 0, 0, 0, o.total
		FROM orders o WHERE o.org_id = ?1 AND o.id IN (` + in + `)`
	}
	lines := func(expr string) string { return sum(expr, "order_lines") }
	return q + `o.created_by, o.approved_by, coalesce(o.campaigns, '[]') != '[]', ` + some("order_lines") + `, ` + some("gift_card_lines") + `,
			o.paid_total, o.refunded_total, o.subtotal, o.discount_total, o.tax_total, o.gift_card_total, o.total,
			` + paid + `, ` + sum("amount", "refunds") + `,
			` + lines(`(unit_price + coalesce((SELECT sum(`+d.JSONInt("m.value", "price_adjustment")+`) FROM `+d.JSONElements("modifiers", "m")+`), 0)) * quantity`) + `,
			` + lines("discount") + `, ` + lines("tax") + `, ` + sum("amount", "gift_card_lines") + `, ` + lines("total") + `
		FROM orders o WHERE o.org_id = ?1 AND o.id IN (` + in + `)`
}

// checkDiscount replays the discount permission on an order pushed by an
// edge, once its lines are in: the manual discounts of the order together
// stay within what its creator's role may give (kassa.CheckDiscount). The
// campaigns' part is recomputed here (campaignPart) and does not count.
func checkDiscount(ctx context.Context, ad *admitter, o orderFigures) error {
	if o.figures.discount == 0 {
		return nil
	}
	a := &kassa.Actor{OrgID: o.org}
	var role string
	err := ad.Tx.QueryRowContext(ctx, `SELECT role FROM users WHERE id = ? AND org_id = ?`, o.creator.String, o.org).Scan(&role)
	if err != nil && !errors.Is(err, sql.ErrNoRows) {
		return err
	}
	a.UserID, a.Role = o.creator.String, kassa.Role(role)
	if role == "" {
		a.Role = kassa.RoleCashier // an order of nobody the hub knows: the strictest limit
	}
	settings, err := orgSettings(ctx, ad.Tx, o.org)
	if err != nil {
		return err
	}
	campaigns, err := edgeCampaignPart(ctx, ad, o.id, o.org)
	if err != nil {
		return err
	}
	approver, err := approverOf(ctx, ad.Tx, o.org, map[string]any{"approved_by": o.approvedBy.String})
	if err != nil {
		return err
	}
	if _, err := kassa.ApproveDiscount(a, approver, settings.DiscountLimits, o.figures.subtotal, max(0, o.figures.discount-campaigns)); err != nil {
		return refuse(RefusedActor, "%v", err)
	}
	return nil
}

// money is an order's totals, as the money invariants see them.
type money struct {
	found                 bool
	location              string
	total, paid, refunded int64
}

// checkMoney records an overpaid or overrefunded conflict for each money
// invariant (kassa.MoneyBreaches) the merge broke: payments or refunds
// taken at two nodes at once, each within the order's total there. The
// local side is the totals before the merge, the remote side after.
func checkMoney(ctx context.Context, a *applier, orgID, id string, before, after money) error {
	if !after.found {
		return nil
	}
	was := kassa.MoneyBreaches(before.total, before.paid, before.refunded)
	for _, kind := range kassa.MoneyBreaches(after.total, after.paid, after.refunded) {
		if before.found && slices.Contains(was, kind) {
			continue // recorded when it first broke
		}
		if err := a.Conflict(ctx, orgID, after.location, kind, "order", id, moneySide(before), moneySide(after)); err != nil {
			return err
		}
	}
	return nil
}

// moneySide is one side of a money conflict.
func moneySide(m money) map[string]any {
	return map[string]any{"total": m.total, "paid_total": m.paid, "refunded_total": m.refunded}
}

// joinedFigures is recomputedFigures where the dialect joins a subquery
// per row (PostgreSQL): each of the order's payments, refunds, lines and
// gift card lines is read once for all its sums, not once a sum.
func joinedFigures(d engine.Dialect, scope totalsScope, in string) string {
	per := func(alias, sums, table string) string {
		join, _ := d.PerRow(`SELECT count(*) > 0 AS some, `+sums+` FROM `+table+` WHERE order_id = o.id AND org_id = o.org_id`, alias)
		return join
	}
	q := `SELECT o.id, o.location_id, o.status, o.completed_at IS NOT NULL, p.some, r.some, `
	from := ` FROM orders o` + per("p", `coalesce(sum(amount) FILTER (WHERE status IN ('captured', 'partially_refunded', 'refunded')), 0) AS paid`, "payments") +
		per("r", `coalesce(sum(amount), 0) AS amount`, "refunds")
	where := ` WHERE o.org_id = ?1 AND o.id IN (` + in + `)`
	if scope == paidTotals {
		return q + `NULL, NULL, 0, 0, 0, o.paid_total, o.refunded_total, 0, 0, 0, 0, o.total,
			p.paid, r.amount, 0, 0, 0, 0, o.total` + from + where
	}
	modifiers := `coalesce((SELECT sum(` + d.JSONInt("m.value", "price_adjustment") + `) FROM ` + d.JSONElements("modifiers", "m") + `), 0)`
	return q + `o.created_by, o.approved_by, coalesce(o.campaigns, '[]') != '[]', l.some, g.some,
			o.paid_total, o.refunded_total, o.subtotal, o.discount_total, o.tax_total, o.gift_card_total, o.total,
			p.paid, r.amount, l.subtotal, l.discount, l.tax, g.amount, l.total` + from +
		per("l", `coalesce(sum((unit_price + `+modifiers+`) * quantity), 0) AS subtotal,
			coalesce(sum(discount), 0) AS discount, coalesce(sum(tax), 0) AS tax, coalesce(sum(total), 0) AS total`, "order_lines") +
		per("g", `coalesce(sum(amount), 0) AS amount`, "gift_card_lines") + where
}
