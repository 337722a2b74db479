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
// touched (recomputeChunk), refreshes the rollups of their business days
// (refreshOrderDays), then records the campaigns' usage limits the
// redemptions it derived went past (checkVouchers).
func recomputeOrders(ctx context.Context, a *applier, orders map[string]string) error {
	for org, ids := range idsByOrg(orders) {
		for chunk := range slices.Chunk(ids, maxInList) {
			if err := recomputeChunk(ctx, a, org, chunk); err != nil {
				return err
			}
		}
	}
	if err := refreshOrderDays(ctx, a.Tx, orders); err != nil {
		return err
	}
	return checkVouchers(ctx, a)
}

// recomputeChunk refreshes the derived columns of orders ids of org:
// payments' refunded amounts from the refunds that name them, the paid
// and refunded totals, and — for changes an edge pushed — the rest
// (recomputeAtHub); an order's campaigns from the hub's log get their
// redemptions. It records a conflict for each money invariant the merge
// broke (checkMoney). Every statement is scoped to the org.
func recomputeChunk(ctx context.Context, a *applier, org string, ids []any) error {
	before, err := ordersMoney(ctx, a.Tx, org, ids)
	if err != nil {
		return err
	}
	if err := recomputePaid(ctx, a.Tx, org, ids); err != nil {
		return err
	}
	if a.Admitter != nil {
		err = recomputeAtHub(ctx, a, org, ids)
	} else {
		err = redeemCampaigned(ctx, a, org, ids)
	}
	if err != nil {
		return err
	}
	after, err := ordersMoney(ctx, a.Tx, org, ids)
	if err != nil {
		return err
	}
	for _, id := range ids {
		if err := checkMoney(ctx, a, org, id.(string), before[id.(string)], after[id.(string)]); err != nil {
			return err
		}
	}
	return nil
}

// recomputePaid refreshes the payments' refunded amounts of orders ids,
// then the orders' paid and refunded totals.
func recomputePaid(ctx context.Context, tx *Tx, org string, ids []any) error {
	d := engine.D(tx)
	in, args := inList(1, ids)
	args = append([]any{org}, args...)
	_, err := tx.ExecContext(ctx, `UPDATE payments SET refunded_amount = (SELECT coalesce(sum(`+d.JSONInt("p.value", "amount")+`), 0)
			FROM refunds r, `+d.JSONElements("r.payments", "p")+` WHERE r.order_id = payments.order_id AND r.org_id = payments.org_id
			AND `+d.JSONText("p.value", "payment_id")+` = payments.id)
		WHERE org_id = ?1 AND order_id IN (`+in+`)`, args...)
	if err != nil {
		return err
	}
	_, err = tx.ExecContext(ctx, `UPDATE orders SET
			paid_total = (SELECT coalesce(sum(amount), 0) FROM payments WHERE order_id = orders.id AND org_id = orders.org_id
				AND status IN ('captured', 'partially_refunded', 'refunded')),
			refunded_total = (SELECT coalesce(sum(amount), 0) FROM refunds WHERE order_id = orders.id AND org_id = orders.org_id)
		WHERE org_id = ?1 AND id IN (`+in+`)`, args...)
	return err
}

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

// recomputeAtHub recomputes the totals of orders an edge pushed from
// their lines (an order's lines are fixed at creation, so this changes
// nothing for an honest edge), refuses one that claims completion without
// being paid in full, and for one whose lines are in writes the
// redemptions the hub computes (redeemAtHub) and replays the discount
// permission (checkDiscount).
func recomputeAtHub(ctx context.Context, a *applier, org string, ids []any) error {
	if err := recomputeTotals(ctx, a.Tx, org, ids); err != nil {
		return err
	}
	orders, err := pushedOrders(ctx, a.Tx, org, ids)
	if err != nil {
		return err
	}
	for _, o := range orders {
		if o.status != kassa.OrderOpen && o.status != kassa.OrderCancelled && o.paid < o.total {
			return refuse(RefusedValue, "order %s is %s with %d of %d paid", o.id, o.status, o.paid, o.total)
		}
		if !o.lines {
			continue // its lines come later in the log: recomputed then
		}
		if o.claims {
			if err := redeemAtHub(ctx, a, o.id, org); err != nil {
				return err
			}
		}
		if err := checkDiscount(ctx, a.Admitter, o); err != nil {
			return err
		}
	}
	return nil
}

// recomputeTotals sets the totals of orders ids that have lines from
// those lines.
func recomputeTotals(ctx context.Context, tx *Tx, org string, ids []any) error {
	d := engine.D(tx)
	in, args := inList(1, ids)
	_, err := tx.ExecContext(ctx, `UPDATE orders SET
			subtotal = (SELECT coalesce(sum((unit_price + coalesce((SELECT sum(`+d.JSONInt("m.value", "price_adjustment")+`) FROM `+d.JSONElements("l.modifiers", "m")+`), 0)) * quantity), 0)
				FROM order_lines l WHERE l.order_id = orders.id AND l.org_id = orders.org_id),
			discount_total = (SELECT coalesce(sum(discount), 0) FROM order_lines WHERE order_id = orders.id AND org_id = orders.org_id),
			tax_total = (SELECT coalesce(sum(tax), 0) FROM order_lines WHERE order_id = orders.id AND org_id = orders.org_id),
			gift_card_total = (SELECT coalesce(sum(amount), 0) FROM gift_card_lines WHERE order_id = orders.id AND org_id = orders.org_id),
			total = coalesce((SELECT sum(total) FROM order_lines WHERE order_id = orders.id AND org_id = orders.org_id), 0)
				+ (SELECT coalesce(sum(amount), 0) FROM gift_card_lines WHERE order_id = orders.id AND org_id = orders.org_id)
		WHERE org_id = ?1 AND id IN (`+in+`) AND (EXISTS (SELECT 1 FROM order_lines WHERE order_id = orders.id AND org_id = orders.org_id)
			OR EXISTS (SELECT 1 FROM gift_card_lines WHERE order_id = orders.id AND org_id = orders.org_id))`, append([]any{org}, args...)...)
	return err
}

// pushedOrder is what the hub's checks of an order an edge pushed read of
// it once its totals are recomputed.
type pushedOrder struct {
	id, org, status     string
	total, paid         int64
	subtotal, discount  int64
	creator, approvedBy sql.NullString
	claims, lines       bool // it names campaigns; its lines are in
}

// pushedOrders reads orders ids of org, in id order.
func pushedOrders(ctx context.Context, tx *Tx, org string, ids []any) ([]pushedOrder, error) {
	in, args := inList(1, ids)
	rows, err := tx.QueryContext(ctx, `SELECT id, status, total, paid_total, subtotal, discount_total, created_by, approved_by,
			coalesce(campaigns, '[]') != '[]', EXISTS (SELECT 1 FROM order_lines WHERE order_id = orders.id AND org_id = orders.org_id)
		FROM orders WHERE org_id = ?1 AND id IN (`+in+`) ORDER BY id`, append([]any{org}, args...)...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []pushedOrder
	for rows.Next() {
		o := pushedOrder{org: org}
		if err := rows.Scan(&o.id, &o.status, &o.total, &o.paid, &o.subtotal, &o.discount, &o.creator, &o.approvedBy, &o.claims, &o.lines); err != nil {
			return nil, err
		}
		out = append(out, o)
	}
	return out, rows.Err()
}

// checkDiscount replays the discount permission on an order pushed by an
// edge, once its lines are in: the manual discounts of the order together
// stay within what its creator's role may give (kassa.CheckDiscount). The
// campaigns' part is recomputed here (campaignPart) and does not count.
func checkDiscount(ctx context.Context, ad *admitter, o pushedOrder) error {
	if o.discount == 0 {
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
	if _, err := kassa.ApproveDiscount(a, approver, settings.DiscountLimits, o.subtotal, max(0, o.discount-campaigns)); err != nil {
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

// ordersMoney reads the totals of orders ids of org; an order not there
// (its row arrives later in the log) is absent.
func ordersMoney(ctx context.Context, tx *Tx, org string, ids []any) (map[string]money, error) {
	in, args := inList(1, ids)
	rows, err := tx.QueryContext(ctx, `SELECT id, location_id, total, paid_total, refunded_total FROM orders WHERE org_id = ?1 AND id IN (`+in+`)`,
		append([]any{org}, args...)...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := make(map[string]money, len(ids))
	for rows.Next() {
		var id string
		m := money{found: true}
		if err := rows.Scan(&id, &m.location, &m.total, &m.paid, &m.refunded); err != nil {
			return nil, err
		}
		out[id] = m
	}
	return out, rows.Err()
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
