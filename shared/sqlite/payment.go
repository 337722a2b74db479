package sqlite

import (
	"context"
	"database/sql"
	"encoding/base64"
	"errors"
	"fmt"
	"sort"
	"strings"
	"time"

	"kassa.dev/shared/kassa"
	"kassa.dev/shared/sqlite/engine"
	"kassa.dev/sync/change"
)

// PaymentService implements kassa.PaymentService over processors, one per
// method. Processor calls happen between two transactions, under the
// order's lock, so the writer is never held while a network answers.
type PaymentService struct {
	db         *DB
	processors map[kassa.PaymentMethod]kassa.Processor
	// Offline reports that the node has no uplink: card payments are then
	// taken store-and-forward within the org's offline limits. Nil: online.
	Offline func() bool
	// GiftCards authorizes gift card payments where the balance is
	// authoritative (an enrolled edge asks its hub) before the unit that
	// redeems; unreachable, the org's offline allowance applies. Nil: this
	// node is the authority (the hub, a standalone edge).
	GiftCards kassa.GiftCardAuthorizer
}

// NewPaymentService returns the payment service of db.
func NewPaymentService(db *DB, processors map[kassa.PaymentMethod]kassa.Processor) *PaymentService {
	return &PaymentService{db: db, processors: processors}
}

var _ kassa.PaymentService = (*PaymentService)(nil)

const paymentCols = `SELECT id, org_id, order_id, location_id, amount, method, status, offline, processor_ref, tendered,
	change_due, card_last4, refunded_amount, failure_reason, captured_at, created_at, updated_at,
	(SELECT coalesce(sum(t.amount), 0) FROM tips t WHERE t.payment_id = payments.id) FROM payments`

func scanPayment(s scanner) (*kassa.Payment, error) {
	var p kassa.Payment
	var created, updated string
	var captured sql.NullString
	if err := s.Scan(&p.ID, &p.OrgID, &p.OrderID, &p.LocationID, &p.Amount, &p.Method, &p.Status, &p.Offline, &p.ProcessorRef,
		&p.Tendered, &p.ChangeDue, &p.CardLast4, &p.RefundedAmount, &p.FailureReason, &captured, &created, &updated, &p.Tip); err != nil {
		return nil, err
	}
	p.CreatedAt, p.UpdatedAt = parseTime(created), parseTime(updated)
	if captured.Valid {
		t := parseTime(captured.String)
		p.CapturedAt = &t
	}
	return &p, nil
}

func paymentID(p *kassa.Payment) string { return p.ID }

func findPayment(ctx context.Context, q querier, orgID, id string) (*kassa.Payment, error) {
	return findByID(ctx, q, paymentCols, "payment", orgID, id, scanPayment)
}

// FindPayments lists the org's payments.
func (s *PaymentService) FindPayments(ctx context.Context, f kassa.PaymentFilter) (kassa.List[kassa.Payment], error) {
	a, err := kassa.MustActor(ctx)
	if err != nil {
		return kassa.List[kassa.Payment]{}, err
	}
	w := orgFilter(a.OrgID)
	eq(w, "order_id", f.OrderID)
	eq(w, "location_id", f.LocationID)
	w.eqText("status", f.Status)
	w.eqText("method", string(f.Method))
	return findPage(ctx, s.db.Reader, paymentCols, w, f.Page, scanPayment, paymentID)
}

// FindPaymentByID returns one payment of the org, or ENotFound.
func (s *PaymentService) FindPaymentByID(ctx context.Context, id string) (*kassa.Payment, error) {
	return readOwn(ctx, s.db, findPayment, id)
}

func (s *PaymentService) processor(m kassa.PaymentMethod) (kassa.Processor, error) {
	p := s.processors[m]
	if p == nil {
		return nil, kassa.MethodUnsupported(m)
	}
	return p, nil
}

// Initiate takes a payment for an open order. A declined or errored card
// is stored as a failed payment (and emits payment.failed), not an error.
// Errors: ENotFound (order), EInvalid, EConflict (order not open).
func (s *PaymentService) Initiate(ctx context.Context, in *kassa.PaymentInitiate) (*kassa.Payment, error) {
	pi, err := s.initiation(ctx, in)
	if err != nil {
		return nil, err
	}
	defer ordersIn(s.db).locks.Lock(in.OrderID)()
	// Before the unit: the writer is not held while the hub answers.
	if pi.gift, err = s.authorizeGiftCard(ctx, pi.a.OrgID, in, pi.id); err != nil {
		return nil, err
	}
	defer pi.gift.releaseUnlessTaken(ctx, s.GiftCards, pi.id, &err)
	if pi.settings, err = orgSettings(ctx, s.db.Reader, pi.a.OrgID); err != nil { // read off the writer
		return nil, err
	}
	if instant(pi.proc) {
		// Cash and external money need no network: one unit of work.
		err = s.db.Write(ctx, func(tx *Tx) error { return pi.payNow(ctx, tx) })
	} else {
		// 1. Record the attempt as pending; 2. ask the processor outside any
		// transaction; 3. record the outcome.
		if err = s.db.Write(ctx, func(tx *Tx) error { return pi.recordPending(ctx, tx) }); err != nil {
			return nil, err
		}
		res := pi.charge(ctx)
		err = s.db.Write(ctx, func(tx *Tx) error { return pi.recordOutcome(ctx, tx, res) })
	}
	if err != nil {
		return nil, err
	}
	if pi.p != nil {
		return pi.p, nil
	}
	return findPayment(ctx, s.db.Reader, pi.a.OrgID, pi.id)
}

// paymentInitiation is one Initiate: its request, what it read and what
// its units found.
type paymentInitiation struct {
	s        *PaymentService
	a        *kassa.Actor
	in       *kassa.PaymentInitiate
	proc     kassa.Processor
	id       string
	capture  bool
	offline  bool // a card taken while the node has no uplink
	gift     giftAuth
	settings kassa.OrgSettings
	// Read in the unit (check):
	o           *kassa.Order
	limitReason string         // the offline card limits refuse it
	p           *kassa.Payment // read in the unit when it logs an event
}

// initiation checks an Initiate request and names its payment.
func (s *PaymentService) initiation(ctx context.Context, in *kassa.PaymentInitiate) (*paymentInitiation, error) {
	a, err := kassa.MustActor(ctx)
	if err != nil {
		return nil, err
	}
	if err := in.Validate(); err != nil {
		return nil, err
	}
	proc, err := s.processor(in.Method)
	if err != nil {
		return nil, err
	}
	return &paymentInitiation{s: s, a: a, in: in, proc: proc, id: s.db.NewID(), capture: in.Capture == nil || *in.Capture,
		offline: in.Method == kassa.PaymentCard && s.Offline != nil && s.Offline()}, nil
}

// check reads the order and decides whether the payment may be taken.
func (pi *paymentInitiation) check(ctx context.Context, tx *Tx) error {
	if err := tx.LockRow(ctx, "orders", pi.in.OrderID); err != nil {
		return err
	}
	o, err := loadOrder(ctx, tx, pi.a.OrgID, pi.in.OrderID, partPayments)
	if err != nil {
		return err
	}
	pi.o = o
	if err := kassa.Payable(o, &pi.settings, pi.in.Method, pi.in.Amount); err != nil {
		return err
	}
	if err := kassa.CheckTip(pi.in, &pi.settings); err != nil {
		return err
	}
	if pi.in.RegisterID != "" {
		if _, err := tillDrawer(ctx, tx, pi.a.OrgID, o.LocationID, pi.in.RegisterID); err != nil {
			return err
		}
	}
	if pi.offline {
		taken, err := offlineCardsToday(ctx, tx, o.LocationID)
		pi.limitReason = kassa.OfflineCardRefusal(&pi.settings, pi.in.Amount, taken)
		return err
	}
	return nil
}

// charge asks the processor (or refuses by the offline limits).
func (pi *paymentInitiation) charge(ctx context.Context) kassa.ChargeResult {
	if pi.limitReason != "" {
		return kassa.ChargeResult{FailureReason: pi.limitReason}
	}
	in := pi.in
	req := kassa.ChargeRequest{PaymentID: pi.id, Amount: in.Amount, Currency: pi.o.Currency, Capture: pi.capture,
		CardNumber: in.CardNumber, Offline: pi.offline, Tip: in.Tip}
	if in.Tendered != nil {
		req.Tendered = *in.Tendered
	}
	res, perr := pi.proc.Charge(ctx, req)
	if perr != nil {
		pi.s.db.Log.Warn("processor error", "payment", pi.id, "method", in.Method, "err", perr)
		res = kassa.ChargeResult{FailureReason: "processing_error", CardLast4: res.CardLast4}
	}
	return res
}

// pending is the payment's row as it is first written.
func (pi *paymentInitiation) pending() map[string]any {
	in := pi.in
	var tendered any
	if in.Method == kassa.PaymentCash {
		t := in.Amount
		if in.Tendered != nil {
			t = *in.Tendered
		}
		tendered = t
	}
	return map[string]any{
		"order_id": pi.o.ID, "location_id": pi.o.LocationID, "amount": in.Amount, "method": string(in.Method),
		"status": kassa.PaymentPending, "offline": pi.offline || pi.gift.offline, "tendered": tendered, "refunded_amount": int64(0),
	}
}

// payNow takes an instant payment (cash, external, a gift card) in one unit.
func (pi *paymentInitiation) payNow(ctx context.Context, tx *Tx) error {
	if err := pi.check(ctx, tx); err != nil {
		return err
	}
	cols, o, in := pi.pending(), pi.o, pi.in
	if err := redeemPointsTender(ctx, tx, o, in, pi.id); err != nil { // before the payment's row (checkPointsPayment)
		return err
	}
	if err := redeemStoreCreditTender(ctx, tx, o, in, pi.id); err != nil { // before the payment's row (checkStoreCreditPayment)
		return err
	}
	res := pi.charge(ctx)
	ev, err := pi.s.outcome(ctx, tx, pi.a.OrgID, o.ID, pi.id, pi.capture, in, res, cols, o)
	if err != nil {
		return err
	}
	if err := tx.InsertAt(ctx, entPayment, pi.a.OrgID, o.LocationID, pi.id, cols); err != nil {
		return err
	}
	if err := recordSale(ctx, tx, pi.a, o.LocationID, pi.id, in, cols); err != nil {
		return err
	}
	if err := takeTip(ctx, tx, pi, cols, res); err != nil {
		return err
	}
	if in.Method == kassa.PaymentGiftCard {
		// The card pays in this unit: a card that cannot pay leaves
		// nothing stored.
		if err := redeemGiftCard(ctx, tx, o, in.GiftCardCode, in.Amount, pi.id); err != nil {
			return err
		}
		if err := pi.gift.withinAllowance(ctx, tx, &pi.settings, o.LocationID, pi.id, in.Amount); err != nil {
			return err
		}
	}
	pi.p, err = emitPayment(ctx, tx, pi.a.OrgID, pi.id, ev)
	return err
}

// recordPending writes the attempt of a processor payment as pending.
func (pi *paymentInitiation) recordPending(ctx context.Context, tx *Tx) error {
	if err := pi.check(ctx, tx); err != nil {
		return err
	}
	return tx.InsertAt(ctx, entPayment, pi.a.OrgID, pi.o.LocationID, pi.id, pi.pending())
}

// recordOutcome writes what the processor answered.
func (pi *paymentInitiation) recordOutcome(ctx context.Context, tx *Tx, res kassa.ChargeResult) error {
	if err := tx.LockRow(ctx, "orders", pi.o.ID); err != nil {
		return err
	}
	cols := map[string]any{}
	ev, err := pi.s.outcome(ctx, tx, pi.a.OrgID, pi.o.ID, pi.id, pi.capture, pi.in, res, cols, nil)
	if err != nil {
		return err
	}
	if err := tx.UpdateAt(ctx, entPayment, pi.a.OrgID, pi.o.LocationID, pi.id, cols); err != nil {
		return err
	}
	if err := recordSale(ctx, tx, pi.a, pi.o.LocationID, pi.id, pi.in, cols); err != nil {
		return err
	}
	if err := takeTip(ctx, tx, pi, cols, res); err != nil {
		return err
	}
	pi.p, err = emitPayment(ctx, tx, pi.a.OrgID, pi.id, ev)
	return err
}

// giftAuth is a gift card payment's authorization by the hub, asked
// before the payment's unit of work.
type giftAuth struct {
	held    bool // the hub holds the amount for the payment
	offline bool // the hub could not be asked: the offline allowance applies
}

// authorizeGiftCard asks the hub to hold a gift card payment's amount
// (PaymentService.GiftCards; nothing to ask for another method or where
// this node is the authority). The hub's refusal is the payment's: EInvalid
// naming gift_card_code. An order not here yet is ENotFound now, never
// left to the unit: it may arrive in between, and be paid unauthorized.
func (s *PaymentService) authorizeGiftCard(ctx context.Context, orgID string, in *kassa.PaymentInitiate, paymentID string) (giftAuth, error) {
	if in.Method != kassa.PaymentGiftCard || s.GiftCards == nil {
		return giftAuth{}, nil
	}
	var currency string
	err := s.db.Reader.QueryRowContext(ctx, `SELECT currency FROM orders WHERE id = ? AND org_id = ?`, in.OrderID, orgID).Scan(&currency)
	if errors.Is(err, sql.ErrNoRows) {
		return giftAuth{}, kassa.NotFound("order", in.OrderID)
	}
	if err != nil {
		return giftAuth{}, err
	}
	reached, err := s.GiftCards.Authorize(ctx, &kassa.GiftCardHold{PaymentID: paymentID, Code: in.GiftCardCode, Amount: in.Amount, Currency: currency})
	if !reached {
		return giftAuth{offline: true}, nil
	}
	return giftAuth{held: err == nil}, err
}

// releaseUnlessTaken gives the hub its hold back when the payment's unit
// failed (*err set), before the answer goes out: the amount is the
// card's again at once, not only when the hold expires.
func (g giftAuth) releaseUnlessTaken(ctx context.Context, auth kassa.GiftCardAuthorizer, paymentID string, err *error) {
	if g.held && *err != nil {
		auth.Release(context.WithoutCancel(ctx), paymentID)
	}
}

// withinAllowance checks, in the unit of a gift card payment taken
// without the hub's authorization, the org's offline allowance: what the
// location took from gift cards without the hub today, this payment
// aside, plus amount (kassa.GiftCardOfflineRefusal).
func (g giftAuth) withinAllowance(ctx context.Context, tx *Tx, st *kassa.OrgSettings, locationID, paymentID string, amount int64) error {
	if !g.offline {
		return nil
	}
	var taken int64
	if err := tx.QueryRowContext(ctx, `SELECT coalesce(sum(amount), 0) FROM payments WHERE location_id = ? AND method = 'gift_card'
		AND offline = 1 AND status IN ('captured', 'partially_refunded', 'refunded') AND created_at >= ? AND id != ?`,
		locationID, tx.Now.Format("2006-01-02"), paymentID).Scan(&taken); err != nil {
		return err
	}
	return kassa.GiftCardOfflineRefusal(st, amount, taken)
}

// emitPayment logs event (none when empty) about the payment as the unit
// wrote it, and returns the payment it read.
func emitPayment(ctx context.Context, tx *Tx, orgID, id, event string) (*kassa.Payment, error) {
	if event == "" {
		return nil, nil
	}
	p, err := findPayment(ctx, tx, orgID, id)
	if err != nil {
		return nil, err
	}
	tx.Emit(orgID, p.LocationID, event, p)
	return p, nil
}

// instant reports whether a processor answers without a network (cash).
func instant(p kassa.Processor) bool {
	i, ok := p.(interface{ Instant() bool })
	return ok && i.Instant()
}

// outcome records a processor's answer (kassa.OutcomeOf) in the payment
// columns, adds a capture to the order's paid total, queues an offline
// approval for forwarding, and returns the event to publish.
func (s *PaymentService) outcome(ctx context.Context, tx *Tx, orgID, orderID, paymentID string, capture bool, in *kassa.PaymentInitiate, res kassa.ChargeResult, cols map[string]any, known *kassa.Order) (string, error) {
	out := kassa.OutcomeOf(in.Method, in.Amount, res)
	if res.Offline {
		cols["offline"] = true
	}
	if out.Forward {
		if _, err := tx.ExecContext(ctx, `INSERT INTO offline_forwards (payment_id, org_id, token, amount, capture, created_at) VALUES (?, ?, ?, ?, ?, ?)`,
			paymentID, orgID, res.Token, in.Amount+in.Tip+res.Tip, columnValue(capture), fmtTime(tx.Now)); err != nil {
			return "", err
		}
	}
	if res.Ref != "" {
		cols["processor_ref"] = res.Ref
	}
	if res.CardLast4 != "" {
		cols["card_last4"] = res.CardLast4
	}
	cols["status"] = out.Status
	switch out.Status {
	case kassa.PaymentFailed:
		cols["failure_reason"] = out.FailureReason
	case kassa.PaymentCaptured:
		cols["captured_at"] = tx.Now
		if out.ChangeDue != nil {
			cols["change_due"] = *out.ChangeDue
		}
	}
	if out.Paid == 0 {
		return out.Event, nil
	}
	if known != nil { // read in this same unit of work
		return out.Event, tx.UpdateAt(ctx, entOrder, orgID, known.LocationID, orderID,
			map[string]any{"paid_total": known.PaidTotal + out.Paid})
	}
	return out.Event, addPaid(ctx, tx, orgID, orderID, out.Paid)
}

// offlineCardsToday sums the location's card payments taken offline since
// the start of the (UTC) day that are not failed or voided: what the daily
// offline limit counts.
func offlineCardsToday(ctx context.Context, tx *Tx, locationID string) (int64, error) {
	var taken int64
	err := tx.QueryRowContext(ctx, `SELECT coalesce(sum(amount), 0) FROM payments WHERE location_id = ? AND method = 'card'
		AND offline = 1 AND status IN ('pending', 'authorized', 'captured', 'partially_refunded', 'refunded') AND created_at >= ?`,
		locationID, tx.Now.Format("2006-01-02")).Scan(&taken)
	return taken, err
}

// addPaid moves an order's paid total by delta.
func addPaid(ctx context.Context, tx *Tx, orgID, orderID string, delta int64) error {
	var paid int64
	var loc string
	if err := tx.QueryRowContext(ctx, `SELECT paid_total, location_id FROM orders WHERE org_id = ? AND id = ?`, orgID, orderID).Scan(&paid, &loc); err != nil {
		return err
	}
	return tx.UpdateAt(ctx, entOrder, orgID, loc, orderID, map[string]any{"paid_total": paid + delta})
}

// Capture captures an authorized payment of an open order.
func (s *PaymentService) Capture(ctx context.Context, id string) (*kassa.Payment, error) {
	a, err := kassa.MustActor(ctx)
	if err != nil {
		return nil, err
	}
	p, err := findPayment(ctx, s.db.Reader, a.OrgID, id)
	if err != nil {
		return nil, err
	}
	defer ordersIn(s.db).locks.Lock(p.OrderID)()
	o, err := findOrder(ctx, s.db.Reader, a.OrgID, p.OrderID)
	if err != nil {
		return nil, err
	}
	p = o.FindPayment(id)
	if err := kassa.Capturable(o, p); err != nil {
		return nil, err
	}
	proc, err := s.processor(p.Method)
	if err != nil {
		return nil, err
	}
	if err := proc.Capture(ctx, deref(p.ProcessorRef), p.Amount); err != nil {
		return nil, fmt.Errorf("capture %s: %w", id, err)
	}
	return writeRead(ctx, s.db, findPayment, a.OrgID, id, func(tx *Tx) error {
		// Checked again under the order's row lock: another hub may have
		// captured or voided it since.
		if err := recheckPayment(ctx, tx, a.OrgID, o.ID, id, kassa.Capturable); err != nil {
			return err
		}
		if err := tx.UpdateAt(ctx, entPayment, a.OrgID, p.LocationID, id, map[string]any{"status": kassa.PaymentCaptured, "captured_at": tx.Now}); err != nil {
			return err
		}
		if err := addPaid(ctx, tx, a.OrgID, o.ID, p.Amount); err != nil {
			return err
		}
		cp, err := findPayment(ctx, tx, a.OrgID, id)
		if err != nil {
			return err
		}
		tx.Emit(a.OrgID, p.LocationID, kassa.EventPaymentCaptured, cp)
		return nil
	})
}

// recheckPayment takes the order's row lock (lockOrder) and checks its
// payment again as it was checked before the unit.
func recheckPayment(ctx context.Context, tx *Tx, orgID, orderID, id string, check func(*kassa.Order, *kassa.Payment) error) error {
	cur, err := lockOrder(ctx, tx, orgID, orderID)
	if err != nil {
		return err
	}
	return check(cur, cur.FindPayment(id))
}

// Void cancels a pending or authorized payment, or reverses a captured
// one while its order is still open. Errors: ENotFound, EConflict.
func (s *PaymentService) Void(ctx context.Context, id string) (*kassa.Payment, error) {
	a, err := kassa.MustActor(ctx)
	if err != nil {
		return nil, err
	}
	p, err := findPayment(ctx, s.db.Reader, a.OrgID, id)
	if err != nil {
		return nil, err
	}
	defer ordersIn(s.db).locks.Lock(p.OrderID)()
	if err := s.void(ctx, a, p.OrderID, id); err != nil {
		return nil, err
	}
	return findPayment(ctx, s.db.Reader, a.OrgID, id)
}

// void voids one payment; the caller holds the order's lock.
func (s *PaymentService) void(ctx context.Context, a *kassa.Actor, orderID, id string) error {
	o, err := findOrder(ctx, s.db.Reader, a.OrgID, orderID)
	if err != nil {
		return err
	}
	p := o.FindPayment(id)
	if err := kassa.Voidable(o, p); err != nil {
		return err
	}
	proc, err := s.processor(p.Method)
	if err != nil {
		return err
	}
	if p.ProcessorRef != nil {
		if err := proc.Void(ctx, *p.ProcessorRef); err != nil {
			return fmt.Errorf("void %s: %w", id, err)
		}
	}
	return s.db.Write(ctx, func(tx *Tx) error {
		// Checked again under the order's row lock: another hub may have
		// voided it or closed the order since.
		if err := recheckPayment(ctx, tx, a.OrgID, o.ID, id, kassa.Voidable); err != nil {
			return err
		}
		if err := tx.UpdateAt(ctx, entPayment, a.OrgID, p.LocationID, id, map[string]any{"status": kassa.PaymentVoided}); err != nil {
			return err
		}
		if err := voidTip(ctx, tx, a.OrgID, p); err != nil {
			return err
		}
		if p.Status == kassa.PaymentCaptured {
			if err := returnToLedger(ctx, tx, p, p.Amount); err != nil {
				return err
			}
			return addPaid(ctx, tx, a.OrgID, o.ID, -p.Amount)
		}
		return nil
	})
}

// voidAuthorizations voids an order's open authorizations (before a
// cancel); the caller holds the order's lock.
func (s *PaymentService) voidAuthorizations(ctx context.Context, a *kassa.Actor, orderID string) error {
	o, err := findOrder(ctx, s.db.Reader, a.OrgID, orderID)
	if err != nil {
		return err
	}
	if o.Status != kassa.OrderOpen {
		return nil
	}
	for _, p := range o.Payments {
		if p.Status == kassa.PaymentAuthorized {
			if err := s.void(ctx, a, orderID, p.ID); err != nil {
				return err
			}
		}
	}
	return nil
}

// refundPayments returns amount through the order's captured payments,
// newest first; it returns what each processor refunded, and an error if
// one failed. The caller holds the order's lock.
func (s *PaymentService) refundPayments(ctx context.Context, o *kassa.Order, amount int64) ([]kassa.RefundPayment, error) {
	parts, short := kassa.RefundSources(o, amount)
	out := []kassa.RefundPayment{}
	for _, part := range parts {
		p := o.FindPayment(part.PaymentID)
		proc, err := s.processor(p.Method)
		if err != nil {
			return out, err
		}
		ref, err := proc.Refund(ctx, deref(p.ProcessorRef), part.Amount)
		if err != nil {
			return out, fmt.Errorf("refund through payment %s: %w", p.ID, err)
		}
		part.ProcessorRef = ref
		out = append(out, part)
	}
	if short > 0 {
		return out, kassa.Errorf(kassa.EConflict, "the captured payments cannot cover the refund")
	}
	return out, nil
}

// earliestZone is the time zone that reaches a date first.
var earliestZone = time.FixedZone("UTC+14", 14*3600)

// Settlements sums captured payments and refunds per location-local day,
// location and method, and returns the page f.Page asks for. Missing
// dates default per location, in its zone (kassa.SettlementFilter.Days).
// Errors: EBadRequest for bad dates or a bad cursor.
func (s *PaymentService) Settlements(ctx context.Context, f kassa.SettlementFilter) (kassa.List[kassa.Settlement], error) {
	after, err := decodeSettlementCursor(f.Page.Cursor)
	if err != nil {
		return kassa.List[kassa.Settlement]{}, err
	}
	all, err := s.settlements(ctx, f)
	if err != nil {
		return kassa.List[kassa.Settlement]{}, err
	}
	return pageSettlements(all, after, f.Page.Limit), nil
}

// settlementKey is a settlement row's place in the list's order, and
// its cursor's text.
func settlementKey(st *kassa.Settlement) string {
	return st.Date + "/" + st.LocationID + "/" + string(st.Method)
}

// decodeSettlementCursor returns the key a settlements cursor names ("":
// the first page). Errors: EBadRequest.
func decodeSettlementCursor(c string) (string, error) {
	if c == "" {
		return "", nil
	}
	b, err := base64.RawURLEncoding.DecodeString(c)
	key, ok := strings.CutPrefix(string(b), "s1:")
	parts := strings.Split(key, "/")
	if err != nil || !ok || len(parts) != 3 || !kassa.ValidID(parts[1]) || !kassa.PaymentMethod(parts[2]).Valid() {
		return "", kassa.Errorf(kassa.EBadRequest, "cursor is not valid")
	}
	if _, err := time.Parse(time.DateOnly, parts[0]); err != nil {
		return "", kassa.Errorf(kassa.EBadRequest, "cursor is not valid")
	}
	return key, nil
}

// pageSettlements returns the rows of all, which are in key order, after
// the key after: at most limit of them (kassa.DefaultLimit when 0).
func pageSettlements(all []kassa.Settlement, after string, limit int) kassa.List[kassa.Settlement] {
	if limit <= 0 {
		limit = kassa.DefaultLimit
	}
	i := sort.Search(len(all), func(i int) bool { return settlementKey(&all[i]) > after })
	out := kassa.List[kassa.Settlement]{Items: all[i:min(i+limit, len(all))]}
	if i+limit < len(all) {
		out.HasMore = true
		out.NextCursor = base64.RawURLEncoding.EncodeToString([]byte("s1:" + settlementKey(&out.Items[len(out.Items)-1])))
	}
	return out
}

// settlements computes every settlement row of f's dates, in key order.
func (s *PaymentService) settlements(ctx context.Context, f kassa.SettlementFilter) ([]kassa.Settlement, error) {
	a, err := kassa.MustActor(ctx)
	if err != nil {
		return nil, err
	}
	now := s.db.Now()
	lo, hi, err := settlementWindow(f, now)
	if err != nil {
		return nil, err
	}
	zones, err := locationZones(ctx, s.db.Reader, a.OrgID)
	if err != nil {
		return nil, err
	}
	sums := &settlementSums{f: f, now: now, zones: zones, days: map[string][2]string{}, rows: map[settlementRow]*kassa.Settlement{}}
	w := orgFilter(a.OrgID).and(`status IN ('captured', 'partially_refunded', 'refunded') AND captured_at >= ? AND captured_at < ?`, lo, hi)
	eq(w, "location_id", f.LocationID)
	if err := sums.scan(ctx, s.db.Reader, `SELECT location_id, method, amount, captured_at FROM payments WHERE `+w.where, w.args, sums.captured); err != nil {
		return nil, err
	}
	w = &filter{where: "r.org_id = ?", args: []any{a.OrgID}}
	w.and("r.created_at >= ? AND r.created_at < ?", lo, hi)
	eq(w, "r.location_id", f.LocationID)
	d := engine.D(s.db.Reader)
	if err := sums.scan(ctx, s.db.Reader, `SELECT r.location_id, p.method, `+d.JSONInt("j.value", "amount")+`, r.created_at
		FROM refunds r, `+d.JSONElements("r.payments", "j")+` JOIN payments p ON p.id = `+d.JSONText("j.value", "payment_id")+` WHERE `+w.where, w.args, sums.refunded); err != nil {
		return nil, err
	}
	return sums.list(), nil
}

// settlementWindow is the UTC window of captures and refunds that f's
// dates can hold, at any location. The dates are checked in the zone whose
// today comes first (UTC+14), so that no store's today is refused as a
// date_from in the future; the bounds found there span every location's
// own dates, but for a defaulted date_from, which is up to two days
// earlier at UTC-12. Local days span UTC from 14 h before to 14 h after.
func settlementWindow(f kassa.SettlementFilter, now time.Time) (lo, hi string, err error) {
	fromDay, toDay, err := f.Days(now, earliestZone)
	if err != nil {
		return "", "", err
	}
	from, _ := time.Parse(time.DateOnly, fromDay)
	to, _ := time.Parse(time.DateOnly, toDay)
	if f.From == "" && f.To == "" {
		from = from.AddDate(0, 0, -2)
	}
	return fmtTime(from.Add(-14 * time.Hour)), fmtTime(to.Add(38 * time.Hour)), nil
}

// locationZones reads the time zone of each of an org's locations (UTC
// for one that names none or an unknown one).
func locationZones(ctx context.Context, q querier, orgID string) (map[string]*time.Location, error) {
	rows, err := q.QueryContext(ctx, `SELECT id, timezone FROM locations WHERE org_id = ?`, orgID)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	zones := map[string]*time.Location{}
	for rows.Next() {
		var id, tz string
		if err := rows.Scan(&id, &tz); err != nil {
			return nil, err
		}
		if zones[id], err = time.LoadLocation(tz); err != nil {
			zones[id] = time.UTC
		}
	}
	return zones, rows.Err()
}

// settlementRow is a settlement's place: a location's day and a method.
type settlementRow struct {
	date, loc string
	method    kassa.PaymentMethod
}

// settlementSums sums captures and refunds into settlement rows, each on
// its location's local day, when that day is in f's dates there.
type settlementSums struct {
	f     kassa.SettlementFilter
	now   time.Time
	zones map[string]*time.Location // location → its zone
	days  map[string][2]string      // location → f's dates there ("" when none)
	rows  map[settlementRow]*kassa.Settlement
}

// scan adds each (location, method, amount, time) the query returns with add.
func (ss *settlementSums) scan(ctx context.Context, q querier, query string, args []any, add func(*kassa.Settlement, int64)) error {
	rows, err := q.QueryContext(ctx, query, args...)
	if err != nil {
		return err
	}
	defer rows.Close()
	for rows.Next() {
		var loc, method, at string
		var amount int64
		if err := rows.Scan(&loc, &method, &amount, &at); err != nil {
			return err
		}
		if st := ss.row(loc, kassa.PaymentMethod(method), parseTime(at)); st != nil {
			add(st, amount)
		}
	}
	return rows.Err()
}

// row is the settlement row of a location's method on at's local day, or
// nil when that day is not in f's dates there.
func (ss *settlementSums) row(loc string, method kassa.PaymentMethod, at time.Time) *kassa.Settlement {
	zone := ss.zones[loc]
	if zone == nil {
		zone = time.UTC
	}
	r, ok := ss.days[loc]
	if !ok {
		// A range empty at this location (date_from after its today) is
		// no error: nothing there.
		from, to, _ := ss.f.Days(ss.now, zone)
		r = [2]string{from, to}
		ss.days[loc] = r
	}
	k := settlementRow{at.In(zone).Format("2006-01-02"), loc, method}
	if r[0] == "" || k.date < r[0] || k.date > r[1] {
		return nil
	}
	if ss.rows[k] == nil {
		ss.rows[k] = &kassa.Settlement{Date: k.date, LocationID: k.loc, Method: k.method}
	}
	return ss.rows[k]
}

func (ss *settlementSums) captured(st *kassa.Settlement, amount int64) {
	st.Count++
	st.Gross += amount
}

func (ss *settlementSums) refunded(st *kassa.Settlement, amount int64) { st.Refunds += amount }

// list returns the rows with their net, in key order.
func (ss *settlementSums) list() []kassa.Settlement {
	out := make([]kassa.Settlement, 0, len(ss.rows))
	for _, st := range ss.rows {
		st.Net = st.Gross - st.Refunds
		out = append(out, *st)
	}
	sort.Slice(out, func(i, j int) bool { return settlementKey(&out[i]) < settlementKey(&out[j]) })
	return out
}

// ForwardOffline sends card payments taken while the node had no uplink
// to the network, oldest first, up to limit; the node calls it once its
// link is back. An approval replaces the payment's offline reference with
// the network's; a decline now is recorded on the payment
// (failure_reason "declined_after_offline: ...") and the payment stays
// captured: the goods are gone, the loss is the merchant's risk of
// offline mode. It returns how many it forwarded.
func (s *PaymentService) ForwardOffline(ctx context.Context, limit int) (int, error) {
	proc := s.processors[kassa.PaymentCard]
	if proc == nil {
		return 0, nil
	}
	rows, err := s.db.Reader.QueryContext(ctx, `SELECT f.payment_id, f.org_id, f.token, f.amount, f.capture, p.location_id
		FROM offline_forwards f JOIN payments p ON p.id = f.payment_id WHERE f.forwarded_at IS NULL ORDER BY f.created_at LIMIT ?`, limit)
	if err != nil {
		return 0, err
	}
	type fwd struct {
		id, org, token, loc string
		amount              int64
		capture             bool
	}
	var todo []fwd
	for rows.Next() {
		var f fwd
		if err := rows.Scan(&f.id, &f.org, &f.token, &f.amount, &f.capture, &f.loc); err != nil {
			rows.Close()
			return 0, err
		}
		todo = append(todo, f)
	}
	rows.Close()
	n := 0
	for _, f := range todo {
		res, err := proc.Forward(ctx, f.token, f.amount, f.capture)
		if err != nil {
			return n, fmt.Errorf("forward payment %s: %w", f.id, err)
		}
		err = s.db.Write(ctx, func(tx *Tx) error {
			cols := map[string]any{}
			result := "approved"
			if res.Approved {
				cols["processor_ref"] = res.Ref
			} else {
				result = "declined: " + res.FailureReason
				cols["failure_reason"] = "declined_after_offline: " + res.FailureReason
			}
			if err := tx.UpdateAt(ctx, entPayment, f.org, f.loc, f.id, cols); err != nil {
				return err
			}
			_, err := tx.ExecContext(ctx, `UPDATE offline_forwards SET forwarded_at = ?, result = ? WHERE payment_id = ?`, fmtTime(tx.Now), result, f.id)
			return err
		})
		if err != nil {
			return n, err
		}
		n++
	}
	return n, nil
}

// Payments belong to their order's location; the offline flag of a card
// taken store-and-forward travels with its outcome (issue 21: refusing it
// lost every offline card sale at the hub).
var entPayment = new(noun)

func init() {
	paymentEvent := eventSubject{AtLocation: true, Same: []string{"order_id", "amount", "method"}}
	register(entPayment, noun{Name: "payment", Table: "payments", Digest: locationRows,
		Edge: &edgeRule{Loc: parentLocation, Parent: ref{Col: "order_id", Table: "orders"}, Update: []string{"status", "captured_at", "processor_ref", "failure_reason", "refunded_amount", "card_last4", "offline"},
			System: []string{"processor_ref", "failure_reason"},
			Once:   []string{"order_id", "location_id", "amount", "method", "tendered", "change_due"},
			Scopes: saleWrite, Refs: []ref{{Col: "order_id", Table: "orders"}}, Check: checkPayment},
		Events: map[string]eventSubject{kassa.EventPaymentCaptured: paymentEvent, kassa.EventPaymentFailed: paymentEvent},
		Track:  trackOrderOf})
}

func checkPayment(ctx context.Context, ad *admitter, c *change.Change, f map[string]any) error {
	insert := c.Op == change.OpInsert
	if err := firstErr(
		within(f, "amount", 1, maxAmount, insert),
		within(f, "tendered", 0, maxAmount, false),
		within(f, "change_due", 0, maxAmount, false),
		within(f, "offline", 0, 1, false),
		oneOf(f, "method", insert, paymentMethods...),
		oneOf(f, "status", insert, paymentStates...),
	); err != nil {
		return err
	}
	if insert {
		return firstErr(checkPointsPayment(ctx, ad, c, f), checkStoreCreditPayment(ctx, ad, c, f))
	}
	return stillOffline(ctx, ad, c, f)
}

// stillOffline refuses an update that unmarks a payment taken offline: a
// processor's outcome may mark one offline (a terminal that fell back to
// store-and-forward), never the reverse, which would hide it from the
// store's offline limits.
func stillOffline(ctx context.Context, ad *admitter, c *change.Change, f map[string]any) error {
	v, ok := f["offline"].(int64)
	if !ok || v == 1 {
		return nil
	}
	var was int64
	err := ad.Tx.QueryRowContext(ctx, `SELECT offline FROM payments WHERE id = ? AND org_id = ?`, c.EntityID, c.OrgID).Scan(&was)
	if err != nil && !errors.Is(err, sql.ErrNoRows) {
		return err
	}
	if was == 1 {
		return refuse(RefusedValue, "payment %s was taken offline and stays so", c.EntityID)
	}
	return nil
}

// The values an edge's payment may carry.
var (
	paymentStates = []string{kassa.PaymentPending, kassa.PaymentAuthorized, kassa.PaymentCaptured, kassa.PaymentVoided,
		kassa.PaymentFailed, kassa.PaymentRefunded, kassa.PaymentPartiallyRefunded}
	paymentMethods = []string{string(kassa.PaymentCash), string(kassa.PaymentCard), string(kassa.PaymentGiftCard), string(kassa.PaymentExternal),
		string(kassa.PaymentLoyaltyPoints), string(kassa.PaymentStoreCredit)}
)
