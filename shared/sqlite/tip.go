package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"

	"kassa.dev/shared/kassa"
	"kassa.dev/sync/change"
)

// Tips (docs/tips.md): one per payment, written in the payment's own unit
// of work when it is captured (the till's tip, or the one the card
// terminal sent), with its drawer entry at the register; given back in
// the refund's unit when a refund returns the whole of its payment, and
// voided with its payment. The payment services call the hooks below.

// TipService implements kassa.TipService.
type TipService struct {
	db      *DB
	reports *ReportService
}

// NewTipService returns the tip service of db.
func NewTipService(db *DB) *TipService { return &TipService{db: db, reports: NewReportService(db)} }

var _ kassa.TipService = (*TipService)(nil)

const tipCols = `SELECT id, org_id, location_id, payment_id, order_id, method, amount, source, staff_id, register_id, status,
	refund_id, refunded_at, created_at FROM tips`

func scanTip(s scanner) (*kassa.Tip, error) {
	var t kassa.Tip
	var created string
	var refunded sql.NullString
	if err := s.Scan(&t.ID, &t.OrgID, &t.LocationID, &t.PaymentID, &t.OrderID, &t.Method, &t.Amount, &t.Source, &t.StaffID,
		&t.RegisterID, &t.Status, &t.RefundID, &refunded, &created); err != nil {
		return nil, err
	}
	t.CreatedAt = parseTime(created)
	if refunded.Valid {
		at := parseTime(refunded.String)
		t.RefundedAt = &at
	}
	return &t, nil
}

func tipID(t *kassa.Tip) string { return t.ID }

func findTip(ctx context.Context, q querier, orgID, id string) (*kassa.Tip, error) {
	return findByID(ctx, q, tipCols, "tip", orgID, id, scanTip)
}

// FindTips lists the org's tips.
func (s *TipService) FindTips(ctx context.Context, f kassa.TipFilter) (kassa.List[kassa.Tip], error) {
	a, err := kassa.MustActor(ctx)
	if err != nil {
		return kassa.List[kassa.Tip]{}, err
	}
	w := orgFilter(a.OrgID)
	eq(w, "order_id", f.OrderID)
	eq(w, "payment_id", f.PaymentID)
	eq(w, "staff_id", f.StaffID)
	return findPage(ctx, s.db.Reader, tipCols, w, f.Page, scanTip, tipID)
}

// FindTipByID returns one tip of the org, or ENotFound.
func (s *TipService) FindTipByID(ctx context.Context, id string) (*kassa.Tip, error) {
	return readOwn(ctx, s.db, findTip, id)
}

// tipOf is the tip a captured payment carries: the till's, else the one
// the card terminal sent (res.Tip).
func tipOf(in *kassa.PaymentInitiate, res kassa.ChargeResult) (int64, string) {
	if in.Tip > 0 {
		return in.Tip, kassa.TipFromTill
	}
	return res.Tip, kassa.TipFromTerminal
}

// takeTip writes the tip of a payment the unit captured (cols: the
// payment's columns as the unit wrote them) and its drawer entry at the
// register the payment names, when that drawer is open.
func takeTip(ctx context.Context, tx *Tx, pi *paymentInitiation, cols map[string]any, res kassa.ChargeResult) error {
	amount, source := tipOf(pi.in, res)
	if amount <= 0 || cols["status"] != kassa.PaymentCaptured {
		return nil
	}
	id := tx.DB.NewID()
	if err := tx.InsertAt(ctx, entTip, pi.a.OrgID, pi.o.LocationID, id, map[string]any{
		"location_id": pi.o.LocationID, "payment_id": pi.id, "order_id": pi.o.ID, "method": string(pi.in.Method),
		"amount": amount, "source": source, "staff_id": actorRef(pi.a), "register_id": nullString(pi.in.RegisterID),
		"status": kassa.TipHeld,
	}); err != nil {
		return err
	}
	if pi.in.RegisterID == "" {
		return nil
	}
	d, err := openDrawerAt(ctx, tx, pi.a.OrgID, pi.in.RegisterID)
	if kassa.ErrorKind(err) == kassa.ENotFound {
		return nil // a card charged while its drawer closed: as its sale (recordSale)
	}
	if err != nil {
		return err
	}
	_, err = appendDrawerEntry(ctx, tx, d, actorRef(pi.a), drawerEntry{typ: kassa.DrawerTip, method: pi.in.Method, amount: amount, paymentID: pi.id})
	return err
}

// tipBack is a tip a refund gives back with the whole of its payment.
type tipBack struct {
	id, paymentID string
	method        kassa.PaymentMethod
	amount        int64
}

// refundTips gives back, through the processors, the held tips of the
// payments that the refund's parts (paid) return in full. Partial
// refunds leave the tip (docs/tips.md). A processor that fails leaves
// its tip held (logged): the refund itself stands.
func (s *PaymentService) refundTips(ctx context.Context, o *kassa.Order, paid []kassa.RefundPayment) ([]tipBack, error) {
	var out []tipBack
	for _, part := range paid {
		p := o.FindPayment(part.PaymentID)
		if p == nil || p.Tip == 0 || p.RefundedAmount+part.Amount < p.Amount {
			continue
		}
		t := tipBack{paymentID: p.ID, method: p.Method}
		err := s.db.Reader.QueryRowContext(ctx, `SELECT id, amount FROM tips WHERE payment_id = ? AND status = 'held'`, p.ID).Scan(&t.id, &t.amount)
		if errors.Is(err, sql.ErrNoRows) {
			continue
		}
		if err != nil {
			return out, err
		}
		proc, err := s.processor(p.Method)
		if err != nil {
			return out, err
		}
		if _, err := proc.Refund(ctx, deref(p.ProcessorRef), t.amount); err != nil {
			s.db.Log.Error("tip refund failed", "payment", p.ID, "err", err)
			continue
		}
		out = append(out, t)
	}
	return out, nil
}

// giveTipsBack records, in the refund's unit, the tips it gave back and
// their drawer entries at the register it was handed back at.
func giveTipsBack(ctx context.Context, tx *Tx, a *kassa.Actor, o *kassa.Order, registerID, refundID string, tips []tipBack) error {
	for _, t := range tips {
		if err := tx.UpdateAt(ctx, entTip, a.OrgID, o.LocationID, t.id, map[string]any{
			"status": kassa.TipRefunded, "refund_id": refundID, "refunded_at": tx.Now}); err != nil {
			return err
		}
		if registerID == "" {
			continue
		}
		d, err := tillDrawer(ctx, tx, a.OrgID, o.LocationID, registerID)
		if err != nil {
			return err
		}
		if _, err := appendDrawerEntry(ctx, tx, d, actorRef(a), drawerEntry{typ: kassa.DrawerTipRefund, method: t.method,
			amount: -t.amount, paymentID: t.paymentID}); err != nil {
			return err
		}
	}
	return nil
}

// voidTip voids the tip of payment p, voided in this unit.
func voidTip(ctx context.Context, tx *Tx, orgID string, p *kassa.Payment) error {
	if p.Tip == 0 {
		return nil
	}
	var id string
	err := tx.QueryRowContext(ctx, `SELECT id FROM tips WHERE payment_id = ? AND status = 'held'`, p.ID).Scan(&id)
	if errors.Is(err, sql.ErrNoRows) {
		return nil
	}
	if err != nil {
		return err
	}
	return tx.UpdateAt(ctx, entTip, orgID, p.LocationID, id, map[string]any{"status": kassa.TipVoided})
}

// TipsReport sums tips by staff member (or day, location, till, tender):
// given on the business day of their payment, given back on the day of
// the refund (kassa.TipRow). Voided tips count nowhere.
func (s *TipService) TipsReport(ctx context.Context, f kassa.ReportFilter, emit func(*kassa.TipRow) error) (*kassa.ReportInfo, error) {
	sc, err := s.reports.scope(ctx, kassa.ReportTips, f)
	if err != nil {
		return nil, err
	}
	names, err := s.reports.groupNames(ctx, sc)
	if err != nil {
		return nil, err
	}
	key := map[kassa.ReportGrouping]string{kassa.GroupStaff: "t.staff_id", kassa.GroupDay: "d.day", kassa.GroupLocation: "d.loc",
		kassa.GroupRegister: "coalesce(t.register_id, '')", kassa.GroupPaymentMethod: "t.method"}[sc.f.GroupBy]
	if key == "" {
		key = "''"
	}
	sums := tipSums{}
	q := s.reports.withD() + `SELECT ` + key + `, o.currency, count(*), sum(t.amount), sum(CASE WHEN t.method = 'cash' THEN t.amount ELSE 0 END)
		FROM d JOIN tips t ON t.location_id = d.loc AND t.%[1]s >= d.lo AND t.%[1]s < d.hi JOIN orders o ON o.id = t.order_id
		WHERE t.org_id = ? AND t.status %[2]s GROUP BY 1, 2`
	ranges := sc.ranges(sc.f.GroupBy == kassa.GroupDay)
	if err := s.reports.sumRows(ctx, sums.given, 3, fmt.Sprintf(q, "created_at", "!= 'voided'"), ranges, sc.orgID); err != nil {
		return nil, err
	}
	if err := s.reports.sumRows(ctx, sums.refunded, 3, fmt.Sprintf(q, "refunded_at", "= 'refunded'"), ranges, sc.orgID); err != nil {
		return nil, err
	}
	rows := sortedRows(sums, func(k [2]string) string { return k[0] + "\x00" + k[1] })
	for _, r := range rows {
		r.Label, r.Net = names[r.Group], r.Tips-r.Refunded
		r.Card = r.Net - r.Cash
	}
	return sc.info, emitAll(rows, emit)
}

// tipSums accumulates tip rows by group and currency.
type tipSums map[[2]string]*kassa.TipRow

func (m tipSums) row(key, cur string) *kassa.TipRow {
	k := [2]string{key, cur}
	if m[k] == nil {
		m[k] = &kassa.TipRow{Group: key, Currency: cur}
	}
	return m[k]
}

func (m tipSums) given(key, cur string, v []int64) {
	r := m.row(key, cur)
	r.Count += v[0]
	r.Tips += v[1]
	r.Cash += v[2]
}

func (m tipSums) refunded(key, cur string, v []int64) {
	r := m.row(key, cur)
	r.Refunded += v[1]
	r.Cash -= v[2]
}

// Tips replicate with their payments (format 5, migration 0048): a
// payment's location's rows, written by the edge that took the payment;
// only the status moves (given back, voided), never the amount.
var entTip = new(noun)

func init() {
	register(entTip, noun{Name: "tip", Table: "tips", Digest: locationRows, Formats: []formatStep{{Format: 5, Migration: 48}},
		Lattice: map[string]func(string) int{"status": tipStatusRank},
		Edge: &edgeRule{Loc: parentLocation, Parent: ref{Col: "payment_id", Table: "payments"},
			Update: []string{"status", "refund_id", "refunded_at"},
			Once:   []string{"location_id", "payment_id", "order_id", "method", "amount", "source", "staff_id", "register_id"},
			Scopes: saleWrite, Refs: []ref{{Col: "payment_id", Table: "payments"}, {Col: "order_id", Table: "orders"},
				{Col: "refund_id", Table: "refunds"}, {Col: "register_id", Table: "registers"}},
			Check: checkTip}})
	entrySigns[string(kassa.DrawerTip)] = [2]int64{1, maxAmount}
	entrySigns[string(kassa.DrawerTipRefund)] = [2]int64{-maxAmount, -1}
}

// tipStatusRank orders a tip's states: given back or voided, never held again.
func tipStatusRank(s string) int {
	if s == kassa.TipHeld {
		return 0
	}
	return 1
}

// checkTip admits an edge's tip: on a captured payment of its order and
// method, credited to the actor who took it, within the org's bound (a
// terminal's tip within the setting's ceiling: the money moved); an update
// only gives it back with a refund of its order or voids it with its
// payment.
func checkTip(ctx context.Context, ad *admitter, c *change.Change, f map[string]any) error {
	if c.Op != change.OpInsert {
		return tipMove(ctx, ad, c, f)
	}
	if err := firstErr(within(f, "amount", 1, maxAmount, true), oneOf(f, "source", true, kassa.TipFromTill, kassa.TipFromTerminal),
		oneOf(f, "status", true, kassa.TipHeld)); err != nil {
		return err
	}
	var order, method, status string
	var amount int64
	err := ad.Tx.QueryRowContext(ctx, `SELECT order_id, method, status, amount FROM payments WHERE id = ? AND org_id = ?`,
		f["payment_id"], c.OrgID).Scan(&order, &method, &status, &amount)
	if err != nil || order != f["order_id"] || method != f["method"] || status == kassa.PaymentPending || status == kassa.PaymentFailed {
		return refuse(RefusedReference, "a tip names a payment taken of its order and method")
	}
	if f["staff_id"] != c.Actor {
		return refuse(RefusedActor, "a tip is credited to the staff member who took its payment")
	}
	settings, err := orgSettings(ctx, ad.Tx, c.OrgID)
	if err != nil {
		return err
	}
	pct := settings.TipMaxPercent
	if f["source"] == kassa.TipFromTerminal {
		pct = kassa.MaxTipMaxPercent
	}
	return within(f, "amount", 1, kassa.TipBound(amount, pct), true)
}

// tipMove admits a tip's update: refunded with a refund of its order, or
// voided with its payment.
func tipMove(ctx context.Context, ad *admitter, c *change.Change, f map[string]any) error {
	if err := oneOf(f, "status", false, kassa.TipRefunded, kassa.TipVoided); err != nil {
		return err
	}
	var order, payStatus string
	if err := ad.Tx.QueryRowContext(ctx, `SELECT t.order_id, p.status FROM tips t JOIN payments p ON p.id = t.payment_id
		WHERE t.id = ? AND t.org_id = ?`, c.EntityID, c.OrgID).Scan(&order, &payStatus); err != nil {
		return refuse(RefusedReference, "no tip %s", c.EntityID)
	}
	if f["status"] == kassa.TipVoided && payStatus != kassa.PaymentVoided {
		return refuse(RefusedValue, "a tip is voided with its payment")
	}
	id := fieldText(f, "refund_id")
	if f["status"] == kassa.TipRefunded && id == "" {
		return refuse(RefusedValue, "a tip given back names its refund")
	}
	if id != "" &&
		rowCount(ctx, ad.Tx, `SELECT count(*) FROM refunds WHERE id = ? AND order_id = ?`, id, order) == 0 {
		return refuse(RefusedReference, "a tip is given back by a refund of its order")
	}
	return nil
}

// checkTipEntry admits a drawer's tip or tip refund entry: the tip of
// its payment, of its method and amount (a refund: one given back).
func checkTipEntry(ctx context.Context, ad *admitter, f map[string]any, typ kassa.DrawerEntryType, amount int64) error {
	var method, status string
	var tip int64
	err := ad.Tx.QueryRowContext(ctx, `SELECT method, amount, status FROM tips WHERE payment_id = ? AND location_id = ?`,
		f["payment_id"], f["location_id"]).Scan(&method, &tip, &status)
	if err != nil || method != f["method"] {
		return refuse(RefusedReference, "a tip entry names the tip of a payment of the location, with its method")
	}
	if typ == kassa.DrawerTip && amount != tip || typ == kassa.DrawerTipRefund && (amount != -tip || status != kassa.TipRefunded) {
		return refuse(RefusedValue, "a tip entry moves its tip's %d (a tip refund: one given back)", tip)
	}
	return nil
}

// tipsBackOf reads the tips refund refundID gave back, by payment id
// (a refund receipt's).
func tipsBackOf(ctx context.Context, q querier, refundID string) (map[string]int64, error) {
	rows, err := q.QueryContext(ctx, `SELECT payment_id, amount FROM tips WHERE refund_id = ?`, refundID)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := map[string]int64{}
	for rows.Next() {
		var id string
		var amount int64
		if err := rows.Scan(&id, &amount); err != nil {
			return nil, err
		}
		out[id] = amount
	}
	return out, rows.Err()
}
