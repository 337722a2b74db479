package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"kassa.dev/shared/kassa"
	"kassa.dev/shared/sqlite/engine"
	"kassa.dev/sync/change"
)

// LaybyService implements kassa.LaybyService (docs/laybys.md). A lay-by is
// an org-wide row whose status only moves forward; its money is the
// append-only layby_payments, whose sums (paid, refunded) are derived:
// rewritten by every unit that appends one and recomputed by every merge,
// never taken from a change record, so that instalments two stores take
// while apart add up. The goods leave the holding store's sellable on-hand
// when the lay-by opens (a layby_reserve movement) and come back when it
// is cancelled (layby_release); a completion moves no stock: the reserved
// goods are collected.
type LaybyService struct {
	db *DB
	// Cards charges card instalments (the node's card processor; nil: card
	// instalments are refused).
	Cards kassa.Processor
	// Offline reports that the node has no uplink: card and gift card
	// instalments are refused then (nil: always online).
	Offline func() bool
}

// NewLaybyService returns the lay-by service of db; cards charges card
// instalments.
func NewLaybyService(db *DB, cards kassa.Processor) *LaybyService {
	return &LaybyService{db: db, Cards: cards}
}

var _ kassa.LaybyService = (*LaybyService)(nil)

const laybyCols = `SELECT id, org_id, location_id, customer_id, status, currency, line_items, subtotal, tax_total, total, paid, refunded,
	termination_charge, cancelled_by, expires_at, created_by, completed_at, cancelled_at, created_at, updated_at FROM laybys`

func scanLayby(s scanner) (*kassa.Layby, error) {
	var l kassa.Layby
	var lines, expires, created, updated string
	var completed, cancelled sql.NullString
	if err := s.Scan(&l.ID, &l.OrgID, &l.LocationID, &l.CustomerID, &l.Status, &l.Currency, &lines, &l.Subtotal, &l.TaxTotal, &l.Total,
		&l.Paid, &l.Refunded, &l.TerminationCharge, &l.CancelledBy, &expires, &l.CreatedBy, &completed, &cancelled, &created, &updated); err != nil {
		return nil, err
	}
	l.ExpiresAt, l.CreatedAt, l.UpdatedAt = parseTime(expires), parseTime(created), parseTime(updated)
	l.CompletedAt, l.CancelledAt = nullTime(completed), nullTime(cancelled)
	l.Balance = l.Total - l.Paid
	l.Payments = []kassa.LaybyPayment{}
	return &l, decodeJSON(lines, &l.LineItems)
}

func laybyID(l *kassa.Layby) string { return l.ID }

const laybyPaymentCols = `SELECT id, layby_id, location_id, type, method, amount, gift_card_id, card_last4, processor_ref, created_by, created_at FROM layby_payments`

func scanLaybyPayment(s scanner) (*kassa.LaybyPayment, error) {
	var p kassa.LaybyPayment
	var created string
	if err := s.Scan(&p.ID, &p.LaybyID, &p.LocationID, &p.Type, &p.Method, &p.Amount, &p.GiftCardID, &p.CardLast4, &p.Reference,
		&p.CreatedBy, &created); err != nil {
		return nil, err
	}
	p.CreatedAt = parseTime(created)
	return &p, nil
}

// findLayby reads a lay-by of the org with its payments, oldest first.
func findLayby(ctx context.Context, q querier, orgID, id string) (*kassa.Layby, error) {
	l, err := findByID(ctx, q, laybyCols, "lay-by", orgID, id, scanLayby)
	if err != nil {
		return nil, err
	}
	return l, loadLaybyPayments(ctx, q, l)
}

func loadLaybyPayments(ctx context.Context, q querier, l *kassa.Layby) error {
	rows, err := q.QueryContext(ctx, laybyPaymentCols+` WHERE layby_id = ? AND org_id = ? ORDER BY created_at, id`, l.ID, l.OrgID)
	if err != nil {
		return err
	}
	defer rows.Close()
	for rows.Next() {
		p, err := scanLaybyPayment(rows)
		if err != nil {
			return err
		}
		l.Payments = append(l.Payments, *p)
	}
	return rows.Err()
}

// FindLaybys lists the org's lay-bys by id, by status, customer or
// holding store; each with its payments.
func (s *LaybyService) FindLaybys(ctx context.Context, f kassa.LaybyFilter) (kassa.List[kassa.Layby], error) {
	a, err := kassa.MustActor(ctx)
	if err != nil {
		return kassa.List[kassa.Layby]{}, err
	}
	w := orgFilter(a.OrgID)
	w.eqText("status", f.Status)
	eq(w, "customer_id", f.CustomerID)
	eq(w, "location_id", f.LocationID)
	l, err := findPage(ctx, s.db.Reader, laybyCols, w, f.Page, scanLayby, laybyID)
	for i := range l.Items {
		if err == nil {
			err = loadLaybyPayments(ctx, s.db.Reader, &l.Items[i])
		}
	}
	return l, err
}

// FindLaybyByID returns one lay-by of the org, or ENotFound.
func (s *LaybyService) FindLaybyByID(ctx context.Context, id string) (*kassa.Layby, error) {
	return readOwn(ctx, s.db, findLayby, id)
}

// laybyOpening is a lay-by priced off the writer, with its deposit.
type laybyOpening struct {
	a        *kassa.Actor
	in       *kassa.LaybyCreate
	loc      *kassa.Location
	settings kassa.OrgSettings
	lines    []kassa.LaybyLine
	price    kassa.OrderPrice
	id       string
	deposit  *laybyTender
}

// CreateLayby opens a lay-by: the goods priced as a sale of them at the
// store now, the deposit (its first instalment) taken, the goods reserved,
// and layby.created emitted. Errors: EInvalid naming the field (a deposit
// below the org's minimum or of the whole total, an unknown customer,
// product or location), a declined card's EInvalid.
func (s *LaybyService) CreateLayby(ctx context.Context, in *kassa.LaybyCreate) (*kassa.Layby, error) {
	a, err := kassa.MustActor(ctx)
	if err != nil {
		return nil, err
	}
	if err := in.Validate(); err != nil {
		return nil, err
	}
	o, err := s.price(ctx, a, in)
	if err != nil {
		return nil, err
	}
	if o.deposit, err = s.tender(ctx, a.OrgID, o.loc.Currency, o.id, &in.Deposit, "deposit."); err != nil {
		return nil, err
	}
	l, err := writeRead(ctx, s.db, findLayby, a.OrgID, o.id, func(tx *Tx) error { return o.write(ctx, tx) })
	return l, s.undoIf(ctx, err, o.deposit)
}

// price reads the store, customer, settings and products on the reader
// and prices the goods as kassa.Price prices an order's lines.
func (s *LaybyService) price(ctx context.Context, a *kassa.Actor, in *kassa.LaybyCreate) (*laybyOpening, error) {
	o := &laybyOpening{a: a, in: in, id: s.db.NewID()}
	q := s.db.Reader
	var err error
	if o.loc, err = findLocation(ctx, q, a.OrgID, in.LocationID); err != nil {
		return nil, kassa.InvalidField("location_id", "no such location")
	}
	if !customerExists(ctx, q, a.OrgID, in.CustomerID) {
		return nil, kassa.InvalidField("customer_id", "no such customer")
	}
	if o.settings, err = orgSettings(ctx, q, a.OrgID); err != nil {
		return nil, err
	}
	prices, err := activePrices(ctx, q, a.OrgID, o.loc.ID, s.db.Now())
	if err != nil {
		return nil, err
	}
	var v kassa.Validation
	priced := make([]kassa.PricedLine, len(in.LineItems))
	o.lines = make([]kassa.LaybyLine, len(in.LineItems))
	for i, li := range in.LineItems {
		p, err := findProduct(ctx, q, a.OrgID, li.ProductID)
		if err != nil || !p.IsActive {
			v.Add(fmt.Sprintf("line_items[%d].product_id", i), "no such active product")
			continue
		}
		unit := p.BasePrice
		if pr, ok := prices[p.ID]; ok {
			unit = pr
		}
		o.lines[i] = kassa.LaybyLine{ProductID: p.ID, Name: p.Name, SKU: p.SKU, Quantity: li.Quantity, UnitPrice: unit}
		priced[i] = kassa.PricedLine{Unit: unit, Quantity: li.Quantity}
	}
	if err := v.Err(); err != nil {
		return nil, err
	}
	if o.price, err = kassa.Price(priced, nil, o.settings.TaxRateBps, o.settings.TaxInclusive); err != nil {
		return nil, err
	}
	for i, lp := range o.price.Lines {
		o.lines[i].Tax, o.lines[i].Total = lp.Tax, lp.Total
	}
	return o, kassa.CheckDeposit(o.price.Total, in.Deposit.Amount, o.settings.LaybyMinDepositBps)
}

// write is the opening's unit: the lay-by, its goods reserved, its
// deposit.
func (o *laybyOpening) write(ctx context.Context, tx *Tx) error {
	a, loc := o.a, o.loc
	err := tx.Insert(ctx, entLayby, a.OrgID, o.id, map[string]any{
		"location_id": loc.ID, "customer_id": o.in.CustomerID, "status": kassa.LaybyOpen, "currency": loc.Currency,
		"line_items": o.lines, "subtotal": o.price.Subtotal, "tax_total": o.price.TaxTotal, "total": o.price.Total,
		"paid": int64(0), "refunded": int64(0), "termination_charge": int64(0),
		"expires_at": tx.Now.AddDate(0, 0, o.settings.LaybyTermDays), "created_by": actorID(a),
	})
	if err != nil {
		return err
	}
	if err := moveLaybyStock(ctx, tx, a, o.id, loc.ID, o.lines, -1); err != nil {
		return err
	}
	if _, err := appendLaybyPayment(ctx, tx, a, o.id, loc.ID, o.deposit); err != nil {
		return err
	}
	return emitLayby(ctx, tx, a.OrgID, loc.ID, o.id, kassa.EventLaybyCreated)
}

// PayLayby takes an instalment at the caller's store (any store of the
// org): at most the balance, on an open lay-by; the one that pays the
// balance in full completes it (the goods are collected). It emits
// layby.payment_received (and layby.completed). Errors: ENotFound,
// EConflict (not open), EInvalid (over the balance, a declined card).
func (s *LaybyService) PayLayby(ctx context.Context, id string, in *kassa.LaybyPay) (*kassa.Layby, error) {
	a, err := kassa.MustActor(ctx)
	if err != nil {
		return nil, err
	}
	if err := in.Validate(); err != nil {
		return nil, err
	}
	l, err := findLayby(ctx, s.db.Reader, a.OrgID, id)
	if err != nil {
		return nil, err
	}
	if err := l.Payable(in.Amount); err != nil {
		return nil, err
	}
	loc, err := s.here(ctx, l)
	if err != nil {
		return nil, err
	}
	t, err := s.tender(ctx, a.OrgID, l.Currency, id, in, "")
	if err != nil {
		return nil, err
	}
	l, err = writeRead(ctx, s.db, findLayby, a.OrgID, id, func(tx *Tx) error { return payLayby(ctx, tx, a, id, loc, t) })
	return l, s.undoIf(ctx, err, t)
}

// payLayby is an instalment's unit: checked again (another may have come
// first), appended, and the lay-by completed when it is paid in full
// (layby.payment_received, then layby.completed).
func payLayby(ctx context.Context, tx *Tx, a *kassa.Actor, id, loc string, t *laybyTender) error {
	cur, err := lockLayby(ctx, tx, a.OrgID, id)
	if err == nil {
		err = cur.Payable(t.amount)
	}
	if err != nil {
		return err
	}
	after, err := appendLaybyPayment(ctx, tx, a, id, loc, t)
	if err != nil || after.Balance > 0 {
		return firstErr(err, emitLayby(ctx, tx, a.OrgID, loc, id, kassa.EventLaybyPaymentReceived))
	}
	if err := tx.Update(ctx, entLayby, a.OrgID, id, map[string]any{"status": kassa.LaybyCompleted, "completed_at": tx.Now}); err != nil {
		return err
	}
	// Both events carry the lay-by as the unit leaves it: completed.
	return firstErr(emitLayby(ctx, tx, a.OrgID, loc, id, kassa.EventLaybyPaymentReceived), emitLayby(ctx, tx, a.OrgID, loc, id, kassa.EventLaybyCompleted))
}

// CompleteLayby marks a fully paid lay-by collected: needed when the
// instalments that paid it in full were taken at two stores while apart
// (neither completed it). Errors: ENotFound, EConflict (not open, or a
// balance owed).
func (s *LaybyService) CompleteLayby(ctx context.Context, id string) (*kassa.Layby, error) {
	a, err := kassa.MustActor(ctx)
	if err != nil {
		return nil, err
	}
	l, err := findLayby(ctx, s.db.Reader, a.OrgID, id)
	if err != nil {
		return nil, err
	}
	loc, err := s.here(ctx, l)
	if err != nil {
		return nil, err
	}
	return writeRead(ctx, s.db, findLayby, a.OrgID, id, func(tx *Tx) error {
		cur, err := lockLayby(ctx, tx, a.OrgID, id)
		if err == nil {
			err = cur.Completable()
		}
		if err != nil {
			return err
		}
		return completeLayby(ctx, tx, a.OrgID, loc, id)
	})
}

// completeLayby marks the lay-by completed and emits layby.completed.
func completeLayby(ctx context.Context, tx *Tx, orgID, loc, id string) error {
	if err := tx.Update(ctx, entLayby, orgID, id, map[string]any{"status": kassa.LaybyCompleted, "completed_at": tx.Now}); err != nil {
		return err
	}
	return emitLayby(ctx, tx, orgID, loc, id, kassa.EventLaybyCompleted)
}

// CancelLayby ends an open (or expired) lay-by at the store holding its
// goods, or at the hub: everything paid is refunded by refund_method
// (cash by default) less, when the customer cancels (or the lay-by
// expired), the org's termination charge; the goods go back on sale. It
// emits layby.cancelled. Errors: ENotFound, EConflict (completed or
// cancelled already, or another store's goods at an edge).
func (s *LaybyService) CancelLayby(ctx context.Context, id string, in *kassa.LaybyCancel) (*kassa.Layby, error) {
	a, err := kassa.MustActor(ctx)
	if err != nil {
		return nil, err
	}
	if err := in.Validate(); err != nil {
		return nil, err
	}
	l, err := findLayby(ctx, s.db.Reader, a.OrgID, id)
	if err != nil {
		return nil, err
	}
	if err := s.holding(ctx, l); err != nil {
		return nil, err
	}
	method := in.RefundMethod
	if method == "" {
		method = kassa.PaymentCash
	}
	return writeRead(ctx, s.db, findLayby, a.OrgID, id, func(tx *Tx) error {
		cur, err := lockLayby(ctx, tx, a.OrgID, id)
		if err != nil {
			return err
		}
		return cancelLayby(ctx, tx, a, cur, in.By, &laybyTender{typ: kassa.LaybyRefundOut, method: method, register: in.RegisterID})
	})
}

// cancelLayby writes a cancellation in the caller's unit: the terms, the
// refund, the goods released.
func cancelLayby(ctx context.Context, tx *Tx, a *kassa.Actor, l *kassa.Layby, by string, t *laybyTender) error {
	st, err := orgSettings(ctx, tx, l.OrgID)
	if err != nil {
		return err
	}
	kept, refund, err := l.CancelTerms(by, st.LaybyTerminationCharge)
	if err != nil {
		return err
	}
	if l.Status == kassa.LaybyExpired {
		by = *l.CancelledBy
	}
	err = tx.Update(ctx, entLayby, l.OrgID, l.ID, map[string]any{"status": kassa.LaybyCancelled, "termination_charge": kept,
		"cancelled_by": by, "cancelled_at": tx.Now})
	if err != nil {
		return err
	}
	if refund > 0 {
		t.amount = -refund
		if _, err := appendLaybyPayment(ctx, tx, a, l.ID, l.LocationID, t); err != nil {
			return err
		}
	}
	if err := moveLaybyStock(ctx, tx, a, l.ID, l.LocationID, l.LineItems, 1); err != nil {
		return err
	}
	return emitLayby(ctx, tx, l.OrgID, l.LocationID, l.ID, kassa.EventLaybyCancelled)
}

// ExpireLaybys expires the open lay-bys not paid in full by their term,
// held at location (an enrolled edge's job), or, for "" (the hub's job, a
// standalone store's), at any store without an enrolled edge, so that one
// node expires each lay-by: the org's termination charge
// (at most what was paid) is fixed, the goods stay set aside until the
// refund is paid out by a cancel at the store. Each is its own unit, with
// layby.cancelled (status expired). It returns how many it expired.
func (s *LaybyService) ExpireLaybys(ctx context.Context, location string) (int64, error) {
	ids, err := s.expiring(ctx, location)
	if err != nil {
		return 0, err
	}
	var n int64
	for _, k := range ids {
		err := s.db.Write(ctx, func(tx *Tx) error {
			l, err := lockLayby(ctx, tx, k.org, k.id)
			if err == nil && !l.Expired(tx.Now) {
				err = errNotDue // paid or ended since it was listed
			}
			if err != nil {
				return err
			}
			return expireLayby(ctx, tx, l)
		})
		switch {
		case errors.Is(err, errNotDue):
		case err != nil:
			return n, err
		default:
			n++
		}
	}
	return n, nil
}

// errNotDue rolls back an expiry's unit that found nothing to expire.
var errNotDue = errors.New("sqlite: lay-by not due to expire")

type laybyKey struct{ org, id string }

// expiring lists the lay-bys past their term.
func (s *LaybyService) expiring(ctx context.Context, location string) ([]laybyKey, error) {
	rows, err := s.db.Reader.QueryContext(ctx, `SELECT org_id, id FROM laybys WHERE status = 'open' AND expires_at <= ? AND paid < total
		AND (location_id = ?2 OR ?2 = '' AND location_id NOT IN (SELECT location_id FROM sync_nodes WHERE org_id = laybys.org_id AND revoked_at IS NULL))
		ORDER BY id LIMIT 500`, fmtTime(s.db.Now()), location)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []laybyKey
	for rows.Next() {
		var k laybyKey
		if err := rows.Scan(&k.org, &k.id); err != nil {
			return nil, err
		}
		out = append(out, k)
	}
	return out, rows.Err()
}

// expireLayby writes an expiry: the node's own work (no actor), so only
// the columns its edge rule lists as system ones.
func expireLayby(ctx context.Context, tx *Tx, l *kassa.Layby) error {
	st, err := orgSettings(ctx, tx, l.OrgID)
	if err != nil {
		return err
	}
	kept, _, err := l.CancelTerms(kassa.LaybyByCustomer, st.LaybyTerminationCharge)
	if err != nil {
		return err
	}
	err = tx.Update(ctx, entLayby, l.OrgID, l.ID, map[string]any{"status": kassa.LaybyExpired, "termination_charge": kept,
		"cancelled_by": kassa.LaybyByStore, "cancelled_at": tx.Now})
	if err != nil {
		return err
	}
	return emitLayby(ctx, tx, l.OrgID, l.LocationID, l.ID, kassa.EventLaybyCancelled)
}

// here is the store an instalment or a completion is taken at: the
// enrolled edge's own; at the hub (or a standalone store), the lay-by's.
func (s *LaybyService) here(ctx context.Context, l *kassa.Layby) (string, error) {
	if !s.db.UnderHub.Load() {
		return l.LocationID, nil
	}
	loc, err := s.db.Meta(ctx, MetaEdgeLocation)
	if err != nil || loc == "" {
		return l.LocationID, err
	}
	return loc, nil
}

// holding refuses, at an enrolled edge, a lay-by whose goods another
// store holds: their stock is that store's to release.
func (s *LaybyService) holding(ctx context.Context, l *kassa.Layby) error {
	loc, err := s.here(ctx, l)
	if err != nil {
		return err
	}
	if loc != l.LocationID {
		return kassa.Errorf(kassa.EConflict, "lay-by %s's goods are held at store %s: cancel it there or at the hub", l.ID, l.LocationID)
	}
	return nil
}

// laybyTender is money moved for a lay-by, as its entry records it.
type laybyTender struct {
	typ            string
	method         kassa.PaymentMethod
	amount         int64
	giftCard       *string
	cardLast4, ref *string
	register       string // the till whose drawer records it
}

// tender takes a payment's money before the unit: a card is charged (a
// decline is EInvalid naming card_number), a gift card is found and
// checked (it is debited in the unit). field prefixes the fields named.
func (s *LaybyService) tender(ctx context.Context, orgID, currency, ref string, in *kassa.LaybyTender, field string) (*laybyTender, error) {
	t := &laybyTender{typ: kassa.LaybyPaymentIn, method: in.Method, amount: in.Amount, register: in.RegisterID}
	st, err := orgSettings(ctx, s.db.Reader, orgID)
	if err != nil {
		return nil, err
	}
	if !st.Accepts(in.Method) {
		return nil, kassa.InvalidField(field+"method", "the org does not accept "+string(in.Method))
	}
	if in.Method != kassa.PaymentCash && s.Offline != nil && s.Offline() {
		return nil, &kassa.Error{Kind: kassa.EUnavailable, RetryAfter: 30,
			Message: "a lay-by's " + string(in.Method) + " instalment needs the network (it is not stored to forward); take cash while offline"}
	}
	switch in.Method {
	case kassa.PaymentCard:
		return t, s.charge(ctx, t, currency, ref, in, field)
	case kassa.PaymentGiftCard:
		norm, _ := kassa.NormalizeGiftCardCode(in.GiftCardCode)
		g, err := findGiftCardByCode(ctx, s.db.Reader, orgID, norm)
		if err != nil {
			return nil, kassa.InvalidField(field+"gift_card_code", "no gift card of the org has that code")
		}
		if err := g.RedeemableWith(s.db.Now(), currency, in.Amount, 0); err != nil {
			return nil, err
		}
		t.giftCard = &g.ID
	}
	return t, nil
}

// charge charges a card instalment with the node's card processor.
func (s *LaybyService) charge(ctx context.Context, t *laybyTender, currency, ref string, in *kassa.LaybyTender, field string) error {
	if s.Cards == nil {
		return kassa.InvalidField(field+"method", "this node takes no card")
	}
	res, err := s.Cards.Charge(ctx, kassa.ChargeRequest{PaymentID: ref + ":" + s.db.NewID(), Amount: in.Amount, Currency: currency,
		Capture: true, CardNumber: in.CardNumber})
	if err != nil {
		return err
	}
	if !res.Approved {
		return kassa.InvalidField(field+"card_number", "the card was declined: "+res.FailureReason)
	}
	last4, cardRef := res.CardLast4, res.Ref
	t.cardLast4, t.ref = &last4, &cardRef
	return nil
}

// undoIf voids a card instalment charged before a unit that failed
// (err): the customer keeps the money the lay-by did not record.
func (s *LaybyService) undoIf(ctx context.Context, err error, t *laybyTender) error {
	if err != nil && t != nil && t.ref != nil && s.Cards != nil {
		if verr := s.Cards.Void(context.WithoutCancel(ctx), *t.ref); verr != nil {
			return errors.Join(err, verr)
		}
	}
	return err
}

// appendLaybyPayment appends an entry to the lay-by's money, debits a gift
// card instalment's card in the same unit, and rewrites the lay-by's
// derived totals (with a change record, as gift cards do, so that its
// updated_at moves alike everywhere). It returns the lay-by after it.
func appendLaybyPayment(ctx context.Context, tx *Tx, a *kassa.Actor, id, loc string, t *laybyTender) (*kassa.Layby, error) {
	entry := tx.DB.NewID()
	err := tx.Insert(ctx, entLaybyPayment, a.OrgID, entry, map[string]any{
		"layby_id": id, "location_id": loc, "type": t.typ, "method": string(t.method), "amount": t.amount,
		"gift_card_id": t.giftCard, "card_last4": t.cardLast4, "processor_ref": t.ref, "created_by": actorID(a),
	})
	if err != nil {
		return nil, err
	}
	if t.giftCard != nil {
		if err := redeemLaybyCard(ctx, tx, a.OrgID, *t.giftCard, id, entry, t.amount); err != nil {
			return nil, err
		}
	}
	if err := recordLaybyTender(ctx, tx, a, loc, entry, t); err != nil {
		return nil, err
	}
	l, err := findLayby(ctx, tx, a.OrgID, id)
	if err != nil {
		return nil, err
	}
	paid, refunded, err := laybySums(ctx, tx, a.OrgID, id)
	if err != nil {
		return nil, err
	}
	cols := map[string]any{}
	changed(cols, "paid", l.Paid, paid)
	changed(cols, "refunded", l.Refunded, refunded)
	if err := tx.Update(ctx, entLayby, a.OrgID, id, cols); err != nil {
		return nil, err
	}
	l.Paid, l.Refunded, l.Balance = paid, refunded, l.Total-paid
	return l, nil
}

// redeemLaybyCard debits a gift card instalment from its card, checked
// again in the unit (another payment may have spent it since).
func redeemLaybyCard(ctx context.Context, tx *Tx, orgID, cardID, laybyID, entry string, amount int64) error {
	g, err := findGiftCard(ctx, tx, orgID, cardID)
	if err != nil {
		return err
	}
	var currency string
	if err := tx.QueryRowContext(ctx, `SELECT currency FROM laybys WHERE id = ?`, laybyID).Scan(&currency); err != nil {
		return err
	}
	held, _, err := giftCardHeld(ctx, tx, cardID, "") // what stores hold on it at the hub
	if err != nil {
		return err
	}
	if err := g.RedeemableWith(tx.Now, currency, amount, held); err != nil {
		return err
	}
	after, err := appendGiftCardTxn(ctx, tx, orgID, cardID, kassa.GiftCardTxnRedeem, -amount, nil, &entry)
	if err != nil {
		return err
	}
	tx.Emit(orgID, "", kassa.EventGiftCardRedeemed, after)
	return nil
}

// laybySums are a lay-by's paid and refunded totals as its entries say.
func laybySums(ctx context.Context, q querier, orgID, id string) (paid, refunded int64, err error) {
	err = q.QueryRowContext(ctx, `SELECT coalesce(sum(CASE WHEN amount > 0 THEN amount END), 0), coalesce(-sum(CASE WHEN amount < 0 THEN amount END), 0)
		FROM layby_payments WHERE layby_id = ? AND org_id = ?`, id, orgID).Scan(&paid, &refunded)
	return paid, refunded, err
}

// moveLaybyStock moves the goods of a lay-by at its store: sign -1
// reserves them (off the sellable on-hand), +1 releases them.
func moveLaybyStock(ctx context.Context, tx *Tx, a *kassa.Actor, id, loc string, lines []kassa.LaybyLine, sign int64) error {
	reason := kassa.ReasonLaybyReserve
	if sign > 0 {
		reason = kassa.ReasonLaybyRelease
	}
	for _, l := range lines {
		_, err := writeMovement(ctx, tx, movement{orgID: a.OrgID, locationID: loc, productID: l.ProductID, delta: sign * l.Quantity,
			reason: reason, refType: kassa.RefLayby, refID: id, actor: a.Ref()})
		if err != nil {
			return err
		}
	}
	return nil
}

// lockLayby takes the lay-by's row lock for the rest of the unit
// (Tx.LockRow) and reads it: on several hubs, two instalments, a
// cancel or an expiry of one lay-by run one after the other.
func lockLayby(ctx context.Context, tx *Tx, orgID, id string) (*kassa.Layby, error) {
	if err := tx.LockRow(ctx, "laybys", id); err != nil {
		return nil, err
	}
	return findLayby(ctx, tx, orgID, id)
}

// emitLayby emits an event about the lay-by as the unit wrote it.
func emitLayby(ctx context.Context, tx *Tx, orgID, loc, id, typ string) error {
	l, err := findLayby(ctx, tx, orgID, id)
	if err != nil {
		return err
	}
	tx.Emit(orgID, loc, typ, l)
	return nil
}

// Lay-bys (docs/laybys.md): org-wide rows any store of the org writes (an
// instalment at any store completes one); its payments are append-only,
// each at the store that took it.
var entLayby, entLaybyPayment = new(noun), new(noun)

func init() {
	laybyEvent := eventSubject{Same: []string{"customer_id", "location_id", "currency", "total"}}
	steps := []formatStep{{Format: 5, Migration: 37}}
	register(entLayby, noun{Name: "layby", Table: "laybys", Digest: orgRows, Derived: []string{"paid", "refunded"},
		Lattice:     map[string]func(string) int{"status": kassa.LaybyStatusRank},
		LatticeLoss: &latticeLoss{Col: "status", Value: kassa.LaybyCancelled, Kind: kassa.ConflictCancelLost},
		Formats:     steps,
		Edge: &edgeRule{Update: []string{"status", "paid", "refunded", "termination_charge", "cancelled_by", "completed_at", "cancelled_at"},
			Once:   []string{"location_id", "customer_id", "currency", "line_items", "subtotal", "tax_total", "total", "expires_at", "created_by"},
			System: []string{"status", "termination_charge", "cancelled_by", "cancelled_at"}, ScopesOf: laybyScopes,
			Refs: []ref{{Col: "customer_id", Table: "customers"}, {Col: "location_id", Table: "locations"},
				{Col: "line_items", Table: "products", Key: "product_id"}},
			Check: checkLayby},
		Events: map[string]eventSubject{kassa.EventLaybyCreated: laybyEvent, kassa.EventLaybyPaymentReceived: laybyEvent,
			kassa.EventLaybyCompleted: laybyEvent, kassa.EventLaybyCancelled: laybyEvent},
		Track:     func(a *applier, c *change.Change, _ map[string]any) { a.Touch(entLayby, c.EntityID, c.OrgID) },
		Recompute: recomputeLaybys, NewState: newLaybyState})
	register(entLaybyPayment, noun{Name: "layby_payment", Table: "layby_payments", Merge: mergeAppend, Digest: orgRows,
		Formats: steps,
		Edge: &edgeRule{Scopes: saleWrite, // at the edge's store: checkLaybyPayment
			Refs:  []ref{{Col: "layby_id", Table: "laybys"}, {Col: "gift_card_id", Table: "gift_cards"}},
			Check: checkLaybyPayment},
		Track: func(a *applier, c *change.Change, f map[string]any) {
			if id := fieldText(f, "layby_id"); id != "" {
				a.Touch(entLayby, id, c.OrgID)
			}
		}})
}

// laybyScopes: a lay-by is a sale's write (orders:write), its
// instalments' totals move with a payment.
func laybyScopes(_ *change.Change, _ map[string]any) []kassa.Scope { return saleWrite }

// checkLayby: a lay-by is opened open, at the edge's store, with goods and
// money within the limits; an update moves its status only as the API
// does: to completed when the hub holds it paid in full, to cancelled or
// expired with a termination charge within the org's setting and what was
// paid. The node's own expiry (no actor) is an expiry past the term.
func checkLayby(ctx context.Context, ad *admitter, c *change.Change, f map[string]any) error {
	if c.Op == change.OpInsert {
		return checkLaybyOpened(ad, f)
	}
	statuses := []string{kassa.LaybyCompleted, kassa.LaybyCancelled, kassa.LaybyExpired}
	if c.Actor == "" {
		statuses = []string{kassa.LaybyExpired}
	}
	if err := firstErr(oneOf(f, "status", false, statuses...), oneOf(f, "cancelled_by", false, kassa.LaybyByCustomer, kassa.LaybyByStore),
		within(f, "termination_charge", 0, maxAmount, false)); err != nil {
		return err
	}
	var l kassa.Layby
	var expires string
	if err := ad.Tx.QueryRowContext(ctx, `SELECT total, paid, expires_at FROM laybys WHERE id = ? AND org_id = ?`, c.EntityID, c.OrgID).
		Scan(&l.Total, &l.Paid, &expires); err != nil {
		return err
	}
	switch f["status"] {
	case kassa.LaybyCompleted:
		if l.Paid < l.Total {
			return refuse(RefusedValue, "lay-by %s is paid %d of %d: it is not collected before it is paid", c.EntityID, l.Paid, l.Total)
		}
	case kassa.LaybyExpired:
		if ad.Tx.Now.Add(maxLaybySkew).Format(TimeFormat) < expires {
			return refuse(RefusedValue, "lay-by %s expires at %s", c.EntityID, expires)
		}
	}
	return checkLaybyCharge(ctx, ad, c, f, l.Paid)
}

// maxLaybySkew is how far an edge's clock may run ahead of the hub's when
// it expires a lay-by.
const maxLaybySkew = 24 * time.Hour

// checkLaybyOpened: an opened lay-by is open, at the edge's store, with
// nothing paid or charged yet (its deposit follows as its first payment).
func checkLaybyOpened(ad *admitter, f map[string]any) error {
	if f["location_id"] != ad.From.LocationID {
		return refuse(RefusedScope, "a lay-by is opened at the edge's own store")
	}
	in := &kassa.LaybyCreate{}
	if err := asInput(map[string]any{"line_items": f["line_items"]}, in); err != nil {
		return err
	}
	for i, l := range in.LineItems {
		if l.Quantity < 1 || l.Quantity > kassa.MaxLineQuantity {
			return refuse(RefusedValue, "line_items[%d].quantity %d out of range", i, l.Quantity)
		}
	}
	if cur, _ := f["currency"].(string); !kassa.ValidCurrency(cur) {
		return refuse(RefusedValue, "currency must be an ISO 4217 code")
	}
	if _, err := time.Parse(TimeFormat, fieldText(f, "expires_at")); err != nil {
		return refuse(RefusedValue, "expires_at is not a time")
	}
	return firstErr(oneOf(f, "status", true, kassa.LaybyOpen), within(f, "total", 1, maxAmount, true),
		within(f, "subtotal", 0, maxAmount, true), within(f, "tax_total", 0, maxAmount, true),
		within(f, "termination_charge", 0, 0, false))
}

// checkLaybyCharge: a termination charge is at most the org's setting and
// what the lay-by was paid.
func checkLaybyCharge(ctx context.Context, ad *admitter, c *change.Change, f map[string]any, paid int64) error {
	charge, ok := intField(f, "termination_charge")
	if !ok || charge == 0 {
		return nil
	}
	st, err := orgSettings(ctx, ad.Tx, c.OrgID)
	if err != nil {
		return err
	}
	if charge > st.LaybyTerminationCharge || charge > paid {
		return refuse(RefusedValue, "a termination charge of %d is over the org's %d or the %d paid", charge, st.LaybyTerminationCharge, paid)
	}
	return nil
}

// checkLaybyPayment: an entry is of the edge's store (it replicates to
// every store of the org, so its change names none); an instalment is positive, of a tender a lay-by
// takes, and never more than the lay-by's total; a refund is negative,
// of a cancelled lay-by, and all its refunds together return at most what
// was paid less the charge kept. A gift card instalment names its card.
func checkLaybyPayment(ctx context.Context, ad *admitter, c *change.Change, f map[string]any) error {
	methods := []string{string(kassa.PaymentCash), string(kassa.PaymentCard), string(kassa.PaymentGiftCard)}
	if err := firstErr(oneOf(f, "type", true, kassa.LaybyPaymentIn, kassa.LaybyRefundOut), oneOf(f, "method", true, methods...),
		within(f, "amount", -maxAmount, maxAmount, true)); err != nil {
		return err
	}
	if f["location_id"] != ad.From.LocationID {
		return refuse(RefusedScope, "a lay-by's money moves at the edge's own store")
	}
	amount, _ := intField(f, "amount")
	var l kassa.Layby
	err := ad.Tx.QueryRowContext(ctx, `SELECT status, total, paid, refunded, termination_charge FROM laybys WHERE id = ? AND org_id = ?`,
		fieldText(f, "layby_id"), c.OrgID).Scan(&l.Status, &l.Total, &l.Paid, &l.Refunded, &l.TerminationCharge)
	if err != nil {
		return err // the reference check found it
	}
	if f["type"] == kassa.LaybyPaymentIn {
		if amount < 1 || amount > l.Total {
			return refuse(RefusedValue, "an instalment is 1 to the lay-by's total %d", l.Total)
		}
		if (f["method"] == string(kassa.PaymentGiftCard)) != (f["gift_card_id"] != nil) {
			return refuse(RefusedValue, "a gift_card instalment, and only one, names its card")
		}
		return nil
	}
	if amount >= 0 || l.Status != kassa.LaybyCancelled || f["gift_card_id"] != nil {
		return refuse(RefusedValue, "a refund is negative, to cash or card, of a cancelled lay-by")
	}
	if l.Refunded-amount > l.Paid-l.TerminationCharge {
		return refuse(RefusedValue, "refunds of %d are over the %d paid less the charge %d", l.Refunded-amount, l.Paid, l.TerminationCharge)
	}
	return nil
}

// recomputeLaybys rewrites the paid and refunded totals of every lay-by
// the batch touched from its entries (no change record: every node sums
// the same entries). A lay-by the merge leaves holding the customer's
// money (kassa.Layby.Unsettled: paid over its total by two stores while
// apart, or an instalment taken elsewhere while it was cancelled) is an
// overpaid conflict, listed once (laybyOverpaid). No instalment is
// undone: the money was taken; the store refunds it.
func recomputeLaybys(ctx context.Context, a *applier, laybys map[string]string) error {
	for id, orgID := range laybys {
		l := kassa.Layby{ID: id}
		err := a.Tx.QueryRowContext(ctx, `SELECT status, total, paid, refunded, termination_charge FROM laybys WHERE id = ? AND org_id = ?`,
			id, orgID).Scan(&l.Status, &l.Total, &l.Paid, &l.Refunded, &l.TerminationCharge)
		if errors.Is(err, sql.ErrNoRows) {
			continue // its lay-by arrives later in the log
		}
		if err != nil {
			return err
		}
		if l.Paid, l.Refunded, err = laybySums(ctx, a.Tx, orgID, id); err != nil {
			return err
		}
		if _, err := a.Tx.ExecContext(ctx, `UPDATE laybys SET paid = ?, refunded = ? WHERE id = ? AND org_id = ?`, l.Paid, l.Refunded, id, orgID); err != nil {
			return err
		}
		if err := laybyOverpaid(ctx, a, orgID, &l); err != nil {
			return err
		}
	}
	return nil
}

// laybyOverpaid records, once per lay-by, that it holds money of the
// customer's that no entry paid back. A cancelled lay-by counts once its
// refund arrived (a batch may end between a cancellation's status and its
// refund entry); one whose cancellation refunded nothing (the charge kept
// all) is not flagged.
func laybyOverpaid(ctx context.Context, a *applier, orgID string, l *kassa.Layby) error {
	unsettled := l.Unsettled()
	if unsettled <= 0 || l.Status == kassa.LaybyCancelled && l.Refunded == 0 || rowCount(ctx, a.Tx, `SELECT count(*) FROM sync_conflicts WHERE entity_id = ? AND kind = ?`, l.ID, kassa.ConflictOverpaid) > 0 {
		return nil
	}
	return a.Conflict(ctx, orgID, "", kassa.ConflictOverpaid, entLayby.Name, l.ID,
		map[string]any{"paid": l.Paid, "refunded": l.Refunded}, map[string]any{"unsettled": unsettled, "status": l.Status, "total": l.Total})
}

// checkLaybyCardRedeem admits a gift card redeem entry that names (as its
// payment_id) a lay-by instalment rather than a payment: the gift_card
// instalment of the edge's store, on that card, debited by exactly its
// amount, once (giftcard.go's check hands it over when no payment has the
// id).
func checkLaybyCardRedeem(ctx context.Context, ad *admitter, c *change.Change, f map[string]any) error {
	var loc, method string
	var card sql.NullString
	var amount, entries int64
	err := ad.Tx.QueryRowContext(ctx, `SELECT location_id, method, gift_card_id, amount,
		(SELECT count(*) FROM gift_card_transactions WHERE payment_id = ?1 AND type = 'redeem') FROM layby_payments WHERE id = ?1 AND org_id = ?2`,
		fieldText(f, "payment_id"), c.OrgID).Scan(&loc, &method, &card, &amount, &entries)
	if errors.Is(err, sql.ErrNoRows) {
		return refuse(RefusedReference, "a gift card %s needs the gift_card payment it belongs to", fieldText(f, "type"))
	}
	if err != nil {
		return err
	}
	got, _ := intField(f, "amount")
	switch {
	case f["type"] != string(kassa.GiftCardTxnRedeem) || f["order_id"] != nil:
		return refuse(RefusedValue, "a lay-by instalment only redeems a card, for no order")
	case loc != ad.From.LocationID:
		return refuse(RefusedScope, "lay-by instalment %s is another store's", fieldText(f, "payment_id"))
	case method != string(kassa.PaymentGiftCard) || card.String != fieldText(f, "gift_card_id"):
		return refuse(RefusedValue, "lay-by instalment %s is not a gift_card instalment of that card", fieldText(f, "payment_id"))
	case got != -amount || entries > 0:
		return refuse(RefusedValue, "a redeem debits its instalment's amount %d, once", amount)
	}
	return nil
}

// addReserved sets a stock level's units set aside for lay-bys that hold
// them (open, or expired and not yet refunded): inventory reads it beside
// on_hand, which they already left. A store opened at a schema before
// lay-bys (tests of older formats) has none.
func addReserved(ctx context.Context, db *engine.DB, q querier, l *kassa.StockLevel) error {
	if !db.States[entLayby].(*laybyState).tables {
		return nil
	}
	d := engine.D(q)
	return q.QueryRowContext(ctx, `SELECT coalesce(sum(`+d.JSONInt("j.value", "quantity")+`), 0) FROM laybys l, `+d.JSONElements("l.line_items", "j")+`
		WHERE l.org_id = ? AND l.location_id = ? AND l.status IN ('open', 'expired') AND `+d.JSONText("j.value", "product_id")+` = ?`,
		l.OrgID, l.LocationID, l.ProductID).Scan(&l.Reserved)
}

// laybyState is what lay-bys keep beside their rows: whether the store's
// schema has them (Open's migrations are today's but in tests of older
// formats). Asked by reading the table, outside any unit, which SQLite
// and PostgreSQL answer alike (an error: no such table).
type laybyState struct{ tables bool }

func newLaybyState(db *engine.DB) any {
	var n int
	err := db.Writer.QueryRow(`SELECT count(*) FROM laybys WHERE 0 = 1`).Scan(&n)
	return &laybyState{tables: err == nil}
}

// recordLaybyTender appends an instalment (a sale entry) or a refund to
// the drawer of the till it names, as a payment's does (drawer.go): its
// cash counts in the drawer's expected cash and its Z report.
func recordLaybyTender(ctx context.Context, tx *Tx, a *kassa.Actor, loc, entry string, t *laybyTender) error {
	if t.register == "" {
		return nil
	}
	d, err := tillDrawer(ctx, tx, a.OrgID, loc, t.register)
	if err != nil {
		return err
	}
	e := drawerEntry{typ: kassa.DrawerSale, method: t.method, amount: t.amount, paymentID: entry}
	if t.typ == kassa.LaybyRefundOut {
		e.typ, e.refundID = kassa.DrawerRefund, entry
	} else if t.method == kassa.PaymentCash {
		change := int64(0)
		e.tendered, e.change = &t.amount, &change
	}
	_, err = appendDrawerEntry(ctx, tx, d, actorRef(a), e)
	return err
}

// checkLaybyDrawerEntry admits a drawer entry that names (as its
// payment_id) a lay-by entry of the drawer's store rather than a payment:
// a sale records an instalment's amount by its method, once; a refund
// (refund_id the same entry) a lay-by refund's (drawer.go's check hands
// it over when no payment has the id).
func checkLaybyDrawerEntry(ctx context.Context, ad *admitter, f map[string]any, typ kassa.DrawerEntryType, amount int64) error {
	var method, kind string
	var moved int64
	if err := ad.Tx.QueryRowContext(ctx, `SELECT method, type, amount FROM layby_payments WHERE id = ? AND location_id = ?`,
		f["payment_id"], f["location_id"]).Scan(&method, &kind, &moved); err != nil {
		return refuse(RefusedReference, "a drawer %s needs a payment of the location", typ)
	}
	wantKind, refund := kassa.LaybyPaymentIn, any(nil)
	if typ == kassa.DrawerRefund {
		wantKind, refund = kassa.LaybyRefundOut, f["payment_id"]
	}
	switch {
	case method != f["method"] || kind != wantKind || amount != moved || f["refund_id"] != refund:
		return refuse(RefusedValue, "a drawer %s records its lay-by entry's %s %d", typ, method, moved)
	case rowCount(ctx, ad.Tx, `SELECT count(*) FROM drawer_entries WHERE payment_id = ?`, f["payment_id"]) > 0:
		return refuse(RefusedValue, "lay-by entry %v is in a drawer already", f["payment_id"])
	}
	return nil
}
