package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"slices"
	"time"

	"kassa.dev/shared/kassa"
	"kassa.dev/shared/sqlite/engine"
	"kassa.dev/sync/change"
)

// GiftCardService implements kassa.GiftCardService. The ledger is
// gift_card_transactions: append-only rows of signed minor units. A card's
// balance is their sum, rewritten by every unit that appends one
// (appendGiftCardTxn) and by every sync merge (setGiftCardBalance), never
// taken from a change record,
// so that the rows of several nodes merge into the same figure everywhere.
// Redeems and refunds are written by the payment units (PaymentService,
// OrderService.RefundOrder), in the same transaction as the payment.
type GiftCardService struct{ db *DB }

// NewGiftCardService returns the gift card service of db.
func NewGiftCardService(db *DB) *GiftCardService { return &GiftCardService{db: db} }

var _ kassa.GiftCardService = (*GiftCardService)(nil)

const giftCardCols = `SELECT id, org_id, code, currency, initial_amount, balance, status, customer_id, expires_at, created_at, updated_at FROM gift_cards`

func scanGiftCard(s scanner) (*kassa.GiftCard, error) {
	var g kassa.GiftCard
	var created, updated string
	var expires sql.NullString
	if err := s.Scan(&g.ID, &g.OrgID, &g.Code, &g.Currency, &g.InitialAmount, &g.Balance, &g.Status, &g.CustomerID, &expires,
		&created, &updated); err != nil {
		return nil, err
	}
	g.CreatedAt, g.UpdatedAt, g.ExpiresAt = parseTime(created), parseTime(updated), nullTime(expires)
	return &g, nil
}

func giftCardID(g *kassa.GiftCard) string { return g.ID }

func findGiftCard(ctx context.Context, q querier, orgID, id string) (*kassa.GiftCard, error) {
	return findByID(ctx, q, giftCardCols, "gift card", orgID, id, scanGiftCard)
}

// findGiftCardByCode reads the org's card with a normalized code; a code
// of no card of the org is ENotFound, whatever another org holds.
func findGiftCardByCode(ctx context.Context, q querier, orgID, code string) (*kassa.GiftCard, error) {
	g, err := scanGiftCard(q.QueryRowContext(ctx, giftCardCols+` WHERE org_id = ? AND code = ?`, orgID, code))
	if errors.Is(err, sql.ErrNoRows) {
		return nil, kassa.Errorf(kassa.ENotFound, "no gift card of the org has that code")
	}
	return g, err
}

const giftCardTxnCols = `SELECT id, org_id, gift_card_id, type, amount, order_id, payment_id, line_id, origin, created_at FROM gift_card_transactions`

func scanGiftCardTxn(s scanner) (*kassa.GiftCardTransaction, error) {
	var t kassa.GiftCardTransaction
	var created string
	if err := s.Scan(&t.ID, &t.OrgID, &t.GiftCardID, &t.Type, &t.Amount, &t.OrderID, &t.PaymentID, &t.LineID, &t.Origin, &created); err != nil {
		return nil, err
	}
	t.CreatedAt = parseTime(created)
	return &t, nil
}

func giftCardTxnID(t *kassa.GiftCardTransaction) string { return t.ID }

// shownTo passes a card read through as actor a may see it
// (kassa.GiftCard.MaskCode; nil: as events carry it).
func shownTo(a *kassa.Actor) func(*kassa.GiftCard, error) (*kassa.GiftCard, error) {
	return func(g *kassa.GiftCard, err error) (*kassa.GiftCard, error) {
		if err != nil {
			return nil, err
		}
		g.MaskCode(a)
		return g, nil
	}
}

// FindGiftCards lists the org's cards by id, optionally by status or customer.
func (s *GiftCardService) FindGiftCards(ctx context.Context, f kassa.GiftCardFilter) (kassa.List[kassa.GiftCard], error) {
	a, err := kassa.MustActor(ctx)
	if err != nil {
		return kassa.List[kassa.GiftCard]{}, err
	}
	w := orgFilter(a.OrgID)
	w.eqText("status", f.Status)
	eq(w, "customer_id", f.CustomerID)
	l, err := findPage(ctx, s.db.Reader, giftCardCols, w, f.Page, scanGiftCard, giftCardID)
	for i := range l.Items {
		l.Items[i].MaskCode(a)
	}
	return l, err
}

// FindGiftCardByID returns one card of the org, or ENotFound.
func (s *GiftCardService) FindGiftCardByID(ctx context.Context, id string) (*kassa.GiftCard, error) {
	a, err := kassa.MustActor(ctx)
	if err != nil {
		return nil, err
	}
	return shownTo(a)(findGiftCard(ctx, s.db.Reader, a.OrgID, id))
}

// FindGiftCardByCode returns the org's card with code (case, spaces and
// dashes ignored). Errors: ENotFound, also for a code of another org's card.
func (s *GiftCardService) FindGiftCardByCode(ctx context.Context, code string) (*kassa.GiftCard, error) {
	a, err := kassa.MustActor(ctx)
	if err != nil {
		return nil, err
	}
	norm, ok := kassa.NormalizeGiftCardCode(code)
	if !ok {
		return nil, kassa.Errorf(kassa.ENotFound, "no gift card of the org has that code")
	}
	return shownTo(a)(findGiftCardByCode(ctx, s.db.Reader, a.OrgID, norm))
}

// mayIssue returns the actor of ctx if it may issue and disable gift cards
// (kassa.MayIssueGiftCards), else EForbidden.
func mayIssue(ctx context.Context) (*kassa.Actor, error) {
	a, err := kassa.MustActor(ctx)
	if err != nil {
		return nil, err
	}
	if !kassa.MayIssueGiftCards(a) {
		return nil, kassa.Errorf(kassa.EForbidden, "only a manager, an owner or a partner app may issue, disable or re-enable gift cards")
	}
	return a, nil
}

// IssueGiftCard creates an active card with a generated code and its issue
// transaction, and emits gift_card.issued. Errors: EForbidden (a
// cashier), EInvalid (also an unknown customer).
func (s *GiftCardService) IssueGiftCard(ctx context.Context, in *kassa.GiftCardIssue) (*kassa.GiftCard, error) {
	a, err := mayIssue(ctx)
	if err != nil {
		return nil, err
	}
	if err := in.Validate(s.db.Now()); err != nil {
		return nil, err
	}
	id := s.db.NewID()
	return shownTo(a)(writeRead(ctx, s.db, findGiftCard, a.OrgID, id, func(tx *Tx) error {
		if in.CustomerID != nil {
			if _, err := findCustomer(ctx, tx, a.OrgID, *in.CustomerID); kassa.ErrorKind(err) == kassa.ENotFound {
				return kassa.InvalidField("customer_id", "no such customer")
			} else if err != nil {
				return err
			}
		}
		currency := in.Currency
		if currency == "" {
			if err := tx.QueryRowContext(ctx, `SELECT currency FROM orgs WHERE id = ?`, a.OrgID).Scan(&currency); err != nil {
				return err
			}
		}
		// The balance is its issue entry's, which follows in this unit.
		cols := map[string]any{"code": kassa.NewGiftCardCode(), "currency": currency, "initial_amount": in.InitialAmount,
			"balance": in.InitialAmount, "status": kassa.GiftCardActive, "customer_id": in.CustomerID, "expires_at": in.ExpiresAt}
		if err := tx.Insert(ctx, entGiftCard, a.OrgID, id, cols); err != nil {
			return err
		}
		g, err := appendGiftCardTxn(ctx, tx, a.OrgID, id, kassa.GiftCardTxnIssue, in.InitialAmount, nil, nil)
		if err != nil {
			return err
		}
		tx.Emit(a.OrgID, "", kassa.EventGiftCardIssued, g)
		return nil
	}))
}

// DisableGiftCard disables a card: it pays nothing from then on (refunds
// still return money to it). Disabling a disabled card changes nothing.
// Errors: ENotFound.
func (s *GiftCardService) DisableGiftCard(ctx context.Context, id string) (*kassa.GiftCard, error) {
	return s.setGiftCardStatus(ctx, id, kassa.GiftCardDisabled)
}

// EnableGiftCard re-enables a disabled card: it pays again, from the
// balance it kept (an expired card stays expired). Enabling an active
// card changes nothing. Errors: EForbidden (a cashier), ENotFound.
func (s *GiftCardService) EnableGiftCard(ctx context.Context, id string) (*kassa.GiftCard, error) {
	return s.setGiftCardStatus(ctx, id, kassa.GiftCardActive)
}

// setGiftCardStatus sets a card's status, for those who may issue cards.
func (s *GiftCardService) setGiftCardStatus(ctx context.Context, id, status string) (*kassa.GiftCard, error) {
	a, err := mayIssue(ctx)
	if err != nil {
		return nil, err
	}
	return shownTo(a)(updateRead(ctx, s.db, entGiftCard, findGiftCard, a.OrgID, id, func(_ *Tx, old *kassa.GiftCard, cols map[string]any) error {
		changed(cols, "status", old.Status, status)
		return nil
	}))
}

// FindGiftCardTransactions lists a card's transactions, oldest first.
// Errors: ENotFound for a card not in the org.
func (s *GiftCardService) FindGiftCardTransactions(ctx context.Context, id string, p kassa.Page) (kassa.List[kassa.GiftCardTransaction], error) {
	a, err := kassa.MustActor(ctx)
	if err != nil {
		return kassa.List[kassa.GiftCardTransaction]{}, err
	}
	if !exists(ctx, s.db.Reader, "gift_cards", a.OrgID, id) {
		return kassa.List[kassa.GiftCardTransaction]{}, kassa.NotFound("gift card", id)
	}
	return findPage(ctx, s.db.Reader, giftCardTxnCols, orgFilter(a.OrgID).and("gift_card_id = ?", id), p, scanGiftCardTxn, giftCardTxnID)
}

// appendGiftCardTxn is the one way a card's money moves at a node: it
// appends an entry of signed amount to the card's ledger and rewrites
// the card's balance as the ledger's sum, in the caller's unit — with a
// change record, as loyalty does, so the card's updated_at moves alike
// everywhere; the balance itself is derived and recomputed where it
// arrives. It returns the card after the entry, its code masked, as
// events carry it.
func appendGiftCardTxn(ctx context.Context, tx *Tx, orgID, cardID string, typ kassa.GiftCardTxnType, amount int64, orderID, paymentID *string) (*kassa.GiftCard, error) {
	return appendGiftCardEntry(ctx, tx, orgID, cardID, giftEntry{typ: typ, amount: amount, orderID: orderID, paymentID: paymentID})
}

// giftEntry is a ledger entry to append: its type, signed amount and what
// it belongs to.
type giftEntry struct {
	typ                                  kassa.GiftCardTxnType
	amount                               int64
	orderID, paymentID, lineID, refundID *string
}

// appendGiftCardEntry is appendGiftCardTxn for any entry.
func appendGiftCardEntry(ctx context.Context, tx *Tx, orgID, cardID string, e giftEntry) (*kassa.GiftCard, error) {
	cols := map[string]any{"gift_card_id": cardID, "type": string(e.typ), "amount": e.amount, "order_id": e.orderID, "payment_id": e.paymentID}
	if e.lineID != nil {
		cols["line_id"], cols["refund_id"] = e.lineID, e.refundID
	}
	if err := tx.Insert(ctx, entGiftCardTxn, orgID, tx.DB.NewID(), cols); err != nil {
		return nil, err
	}
	g, err := findGiftCard(ctx, tx, orgID, cardID)
	if err != nil {
		return nil, err
	}
	balance, err := giftCardSum(ctx, tx, orgID, cardID)
	if err != nil {
		return nil, err
	}
	upd := map[string]any{}
	changed(upd, "balance", g.Balance, balance)
	if err := tx.Update(ctx, entGiftCard, orgID, cardID, upd); err != nil {
		return nil, err
	}
	return shownTo(nil)(findGiftCard(ctx, tx, orgID, cardID))
}

// giftCardSum is a card's balance as its ledger says.
func giftCardSum(ctx context.Context, q querier, orgID, cardID string) (int64, error) {
	var sum int64
	err := q.QueryRowContext(ctx, `SELECT coalesce(sum(amount), 0) FROM gift_card_transactions WHERE gift_card_id = ? AND org_id = ?`,
		cardID, orgID).Scan(&sum)
	return sum, err
}

// setGiftCardBalance rewrites a card's derived balance after a merge and
// returns it. It writes no change record: every node recomputes the same
// sum from the same entries.
func setGiftCardBalance(ctx context.Context, tx *Tx, orgID, cardID string) (int64, error) {
	balance, err := giftCardSum(ctx, tx, orgID, cardID)
	if err != nil {
		return 0, err
	}
	_, err = tx.ExecContext(ctx, `UPDATE gift_cards SET balance = ? WHERE id = ? AND org_id = ?`, balance, cardID, orgID)
	return balance, err
}

// redeemGiftCard pays amount of order o with the card whose code the
// payment request gives, in the payment's unit: the card must be the
// org's, active, unexpired, in the order's currency and cover the amount
// (kassa.GiftCard.RedeemableWith, less the holds stores have on it at the
// hub; EInvalid naming gift_card_code otherwise, and the unit stores
// nothing). It emits gift_card.redeemed.
func redeemGiftCard(ctx context.Context, tx *Tx, o *kassa.Order, code string, amount int64, paymentID string) error {
	norm, _ := kassa.NormalizeGiftCardCode(code) // validated with the request
	g, err := lockGiftCardByCode(ctx, tx, o.OrgID, norm)
	if kassa.ErrorKind(err) == kassa.ENotFound {
		return kassa.InvalidField("gift_card_code", "no gift card of the org has that code")
	}
	if err != nil {
		return err
	}
	// At the hub, what stores hold on the card for payments they are
	// taking is not the hub's to spend (an edge holds none).
	held, _, err := giftCardHeld(ctx, tx, g.ID, paymentID)
	if err != nil {
		return err
	}
	if err := g.RedeemableWith(tx.Now, o.Currency, amount, held); err != nil {
		return err
	}
	after, err := appendGiftCardTxn(ctx, tx, o.OrgID, g.ID, kassa.GiftCardTxnRedeem, -amount, &o.ID, &paymentID)
	if err != nil {
		return err
	}
	tx.Emit(o.OrgID, o.LocationID, kassa.EventGiftCardRedeemed, after)
	return nil
}

// lockGiftCardByCode finds the org's card of a code, takes its row lock
// for the rest of the unit (Tx.LockRow) and reads it again: on several
// hubs, the balance a spend checks is the one no other unit can change.
func lockGiftCardByCode(ctx context.Context, tx *Tx, orgID, code string) (*kassa.GiftCard, error) {
	g, err := findGiftCardByCode(ctx, tx, orgID, code)
	if err != nil {
		return nil, err
	}
	if err := tx.LockRow(ctx, "gift_cards", g.ID); err != nil {
		return nil, err
	}
	return findGiftCardByCode(ctx, tx, orgID, code)
}

// refundGiftCard returns amount of a gift_card payment to the card it was
// redeemed from, in the unit that refunds or voids the payment. A payment
// of no card (none of method gift_card) returns nothing. The card takes
// the money back even when disabled or expired: it is the customer's.
func refundGiftCard(ctx context.Context, tx *Tx, p *kassa.Payment, amount int64) error {
	if p.Method != kassa.PaymentGiftCard || amount <= 0 {
		return nil
	}
	var cardID string
	err := tx.QueryRowContext(ctx, `SELECT gift_card_id FROM gift_card_transactions WHERE payment_id = ? AND org_id = ? AND type = 'redeem'`,
		p.ID, p.OrgID).Scan(&cardID)
	if errors.Is(err, sql.ErrNoRows) {
		return nil // a gift_card payment from before gift cards: no card to return to
	}
	if err != nil {
		return err
	}
	_, err = appendGiftCardTxn(ctx, tx, p.OrgID, cardID, kassa.GiftCardTxnRefund, amount, &p.OrderID, &p.ID)
	return err
}

// HoldGiftCard is the hub's authorization of a store's gift card payment
// (docs/giftcards.md, "Authorization"): in one unit that takes the card's
// row lock, so that the holds of one card are serialized (by SQLite's one
// writer, or the lock on PostgreSQL's several), it finds the card by code
// in the asking edge's org — never another's — and sets the amount aside
// when the card's balance, less the holds outstanding, covers it. A repeat
// of the same payment's request replaces its hold. Errors: EInvalid naming
// gift_card_code (no card of the org, disabled, expired, another currency,
// not covered, too many holds at once), or the field of a malformed request.
func (db *DB) HoldGiftCard(ctx context.Context, from EdgeScope, h *kassa.GiftCardHold) error {
	if err := h.Validate(); err != nil {
		return err
	}
	return db.Write(ctx, func(tx *Tx) error {
		// Locked: two holds on one card, on two hubs or two writers of
		// one, must not both count the balance the other is taking.
		g, err := lockGiftCardByCode(ctx, tx, from.OrgID, h.Code)
		if kassa.ErrorKind(err) == kassa.ENotFound {
			return kassa.InvalidField("gift_card_code", "no gift card of the org has that code")
		}
		if err != nil {
			return err
		}
		if _, err := tx.ExecContext(ctx, `DELETE FROM gift_card_holds WHERE gift_card_id = ? AND (expires_at <= ?
			OR EXISTS (SELECT 1 FROM gift_card_transactions t WHERE t.payment_id = gift_card_holds.payment_id AND t.type = 'redeem'))`,
			g.ID, fmtTime(tx.Now)); err != nil {
			return err
		}
		held, n, err := giftCardHeld(ctx, tx, g.ID, h.PaymentID)
		if err != nil {
			return err
		}
		if n >= kassa.MaxGiftCardHolds {
			return kassa.InvalidField("gift_card_code", "too many payments are being taken with the card at once; retry in a moment")
		}
		if err := g.RedeemableWith(tx.Now, h.Currency, h.Amount, held); err != nil {
			return err
		}
		return putGiftCardHold(ctx, tx, from, g.ID, h)
	})
}

// putGiftCardHold writes (or, for a repeated request of the same store's
// payment on the same card, replaces) a hold.
func putGiftCardHold(ctx context.Context, tx *Tx, from EdgeScope, cardID string, h *kassa.GiftCardHold) error {
	res, err := tx.ExecContext(ctx, `INSERT INTO gift_card_holds (payment_id, org_id, gift_card_id, location_id, node_id, amount, created_at, expires_at)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT (payment_id) DO UPDATE SET amount = excluded.amount, expires_at = excluded.expires_at
		WHERE gift_card_holds.org_id = excluded.org_id AND gift_card_holds.location_id = excluded.location_id
		AND gift_card_holds.gift_card_id = excluded.gift_card_id`,
		h.PaymentID, from.OrgID, cardID, from.LocationID, from.NodeID, h.Amount, fmtTime(tx.Now), fmtTime(tx.Now.Add(kassa.GiftCardHoldTTL)))
	if err != nil {
		return err
	}
	if n, _ := res.RowsAffected(); n != 1 {
		return kassa.InvalidField("payment_id", "another payment holds this id")
	}
	return nil
}

// ReleaseGiftCardHold drops the hold of a payment the store did not take.
// Only the store that asked for it releases it; an unknown payment is no
// error (the hold expired, or was never made).
func (db *DB) ReleaseGiftCardHold(ctx context.Context, from EdgeScope, paymentID string) error {
	return db.Exec(ctx, `DELETE FROM gift_card_holds WHERE payment_id = ? AND org_id = ? AND location_id = ?`,
		paymentID, from.OrgID, from.LocationID)
}

// giftCardHeld sums the holds outstanding on a card but the payment
// except's own: neither expired nor matched by their payment's redeem
// entry (which, once here, is in the balance). It also counts them.
func giftCardHeld(ctx context.Context, tx *Tx, cardID, except string) (held int64, n int, err error) {
	err = tx.QueryRowContext(ctx, `SELECT coalesce(sum(amount), 0), count(*) FROM gift_card_holds h
		WHERE h.gift_card_id = ? AND h.expires_at > ? AND h.payment_id != ?
		AND NOT EXISTS (SELECT 1 FROM gift_card_transactions t WHERE t.payment_id = h.payment_id AND t.type = 'redeem')`,
		cardID, fmtTime(tx.Now), except).Scan(&held, &n)
	return held, n, err
}

// Gift cards (docs/giftcards.md): an org-wide card whose balance is its
// ledger's sum. A store issues them at the till and disables them; their
// money moves only with a gift_card payment of the edge's location
// (checkGiftCardTxn). A card's events carry its code masked, so the code
// is not compared.
var entGiftCard, entGiftCardTxn, entGiftCardLine = new(noun), new(noun), new(noun)

func init() {
	register(entGiftCard, noun{Name: "gift_card", Table: "gift_cards", Digest: orgRows, Derived: []string{"balance"},
		Formats: []formatStep{{Format: 3, Migration: 21}},
		Edge: &edgeRule{Update: []string{"status", "balance"}, Once: []string{"code", "currency", "initial_amount", "customer_id", "expires_at"}, ScopesOf: giftCardScopes,
			Refs: []ref{{Col: "customer_id", Table: "customers"}}, Check: checkGiftCard},
		Events: map[string]eventSubject{
			kassa.EventGiftCardIssued:   {Same: []string{"currency", "initial_amount"}, Also: giftCardEvent(false)},
			kassa.EventGiftCardRedeemed: {Same: []string{"currency", "initial_amount"}, Also: giftCardEvent(true)}},
		Track:     func(a *applier, c *change.Change, _ map[string]any) { a.Touch(entGiftCard, c.EntityID, c.OrgID) },
		Recompute: recomputeGiftCards, Redact: maskGiftCardCode})
	register(entGiftCardTxn, noun{Name: "gift_card_transaction", Table: "gift_card_transactions", Merge: mergeAppend, Digest: orgRows,
		Formats: []formatStep{{Format: 3, Migration: 21}, {Format: 5, Migration: 44}},
		Edge: &edgeRule{ScopesOf: giftCardTxnScopes,
			Refs:  []ref{{Col: "gift_card_id", Table: "gift_cards"}, {Col: "order_id", Table: "orders"}}, // payment_id: checkGiftCardTxn
			Check: checkGiftCardTxn},
		Track: func(a *applier, c *change.Change, f map[string]any) {
			if id := fieldText(f, "gift_card_id"); id != "" {
				a.Touch(entGiftCard, id, c.OrgID)
			}
		}})
	// A gift card line is an entry of its order, at its order's store.
	register(entGiftCardLine, noun{Name: "gift_card_line", Table: "gift_card_lines", Merge: mergeAppend, Digest: orderRows,
		Formats: []formatStep{{Format: 5, Migration: 44}},
		Edge: &edgeRule{Loc: parentLocation, Parent: ref{Col: "order_id", Table: "orders"}, Scopes: saleWrite,
			Refs: []ref{{Col: "order_id", Table: "orders"}, {Col: "gift_card_id", Table: "gift_cards"}}, Check: checkGiftCardLine},
		Track: trackOrderOf})
}

// checkGiftCardLine: a line issues a pending card of its amount, once, or
// reloads a card of the org in the order's currency. The cap is the
// edge's account (the balance it saw when it sold the line).
func checkGiftCardLine(ctx context.Context, ad *admitter, c *change.Change, f map[string]any) error {
	if err := firstErr(oneOf(f, "type", true, kassa.GiftCardLineIssue, kassa.GiftCardLineReload),
		within(f, "amount", 1, maxAmount, true), within(f, "position", 0, kassa.MaxGiftCardLines, true)); err != nil {
		return err
	}
	card, _ := f["gift_card_id"].(string)
	order, _ := f["order_id"].(string)
	amount, _ := intField(f, "amount")
	var status string
	var initial, lines int64
	var same bool
	if err := ad.Tx.QueryRowContext(ctx, `SELECT g.status, g.initial_amount, g.currency = o.currency,
		(SELECT count(*) FROM gift_card_lines WHERE gift_card_id = g.id AND type = 'issue')
		FROM gift_cards g, orders o WHERE g.id = ? AND g.org_id = ?2 AND o.id = ? AND o.org_id = ?2`, card, c.OrgID, order).Scan(&status, &initial, &same, &lines); err != nil {
		return err // the reference checks found both
	}
	switch {
	case !same:
		return refuse(RefusedValue, "card %s is in another currency than order %s", card, order)
	case f["type"] == kassa.GiftCardLineReload:
		return nil
	case status != kassa.GiftCardPending || initial != amount || lines > 0:
		return refuse(RefusedValue, "an issue line sells a pending card of its amount, once")
	}
	return nil
}

// giftCardSoldOnLine reports whether a status update of card is a sale's
// doing, which a cashier's till does: activation when the order of the
// line that issued it completed, disabling when that line was refunded.
func giftCardSoldOnLine(ctx context.Context, ad *admitter, c *change.Change, f map[string]any) (bool, error) {
	var completed, takenBack bool
	err := ad.Tx.QueryRowContext(ctx, `SELECT o.status NOT IN ('open', 'cancelled'),
		EXISTS (SELECT 1 FROM gift_card_transactions t WHERE t.line_id = l.id AND t.type = 'takeback')
		FROM gift_card_lines l JOIN orders o ON o.id = l.order_id AND o.org_id = l.org_id
		WHERE l.gift_card_id = ? AND l.org_id = ? AND l.type = 'issue'`, c.EntityID, c.OrgID).Scan(&completed, &takenBack)
	if errors.Is(err, sql.ErrNoRows) {
		return false, nil
	}
	switch f["status"] {
	case kassa.GiftCardActive:
		return completed && !takenBack, err
	case kassa.GiftCardDisabled:
		return takenBack, err
	}
	return false, err
}

// checkGiftCard: a card is created active with a code of the alphabet,
// a currency and an initial amount within the money limits; an update
// may only disable or re-enable it (its balance is derived: recomputed,
// not taken).
func checkGiftCard(ctx context.Context, ad *admitter, c *change.Change, f map[string]any) error {
	sold, err := giftCardSoldOnLine(ctx, ad, c, f)
	if err != nil {
		return err
	}
	pending := c.Op == change.OpInsert && f["status"] == kassa.GiftCardPending
	if _, ok := f["status"]; ok && !sold && !pending && !kassa.MayIssueGiftCards(ad.ActorOf) {
		return refuse(RefusedActor, "only a manager, an owner or a partner app issues, disables or re-enables gift cards")
	}
	if c.Op != change.OpInsert {
		return oneOf(f, "status", false, kassa.GiftCardDisabled, kassa.GiftCardActive)
	}
	code, _ := f["code"].(string)
	if norm, ok := kassa.NormalizeGiftCardCode(code); !ok || norm != code {
		return refuse(RefusedValue, "code must be %d characters of the gift card alphabet", kassa.GiftCardCodeLen)
	}
	if cur, _ := f["currency"].(string); !kassa.ValidCurrency(cur) {
		return refuse(RefusedValue, "currency must be an ISO 4217 code")
	}
	if at, ok := f["expires_at"].(string); ok {
		if _, err := time.Parse(TimeFormat, at); err != nil {
			return refuse(RefusedValue, "expires_at %q is not a time", at)
		}
	}
	return firstErr(oneOf(f, "status", true, kassa.GiftCardActive, kassa.GiftCardPending), within(f, "initial_amount", 1, maxAmount, true))
}

// giftCardScopes: a card's balance moves with a sale's payment (and is
// recomputed, not taken); issuing or disabling one is a payments write.
func giftCardScopes(c *change.Change, f map[string]any) []kassa.Scope {
	if c.Op == change.OpUpdate {
		if _, ok := f["status"]; !ok {
			return saleWrite
		}
	}
	return paymentsWrite
}

// giftCardTxnScopes: issuing a card is a payments write (it sells stored
// value); a redeem or refund moves with a sale's payment.
func giftCardTxnScopes(_ *change.Change, f map[string]any) []kassa.Scope {
	if f["type"] == string(kassa.GiftCardTxnIssue) && f["line_id"] == nil {
		return paymentsWrite
	}
	return saleWrite
}

// checkGiftCardTxn: an edge moves a card's money only as its API does.
// An issue credits the card's initial amount once. A redeem debits a
// gift_card payment of the edge's location by exactly its amount, once
// per payment; a refund credits one back, never more in all than the
// payment took, to the card it came from. Balances are not checked: a redeem beyond the merged
// balance was taken offline and is recorded as gift_card_overdrawn.
func checkGiftCardTxn(ctx context.Context, ad *admitter, c *change.Change, f map[string]any) error {
	types := []string{string(kassa.GiftCardTxnIssue), string(kassa.GiftCardTxnRedeem), string(kassa.GiftCardTxnRefund),
		string(kassa.GiftCardTxnReload), string(kassa.GiftCardTxnTakeback)}
	if err := firstErr(oneOf(f, "type", true, types...), within(f, "amount", -maxAmount, maxAmount, true)); err != nil {
		return err
	}
	if line, _ := f["line_id"].(string); line != "" || f["type"] == string(kassa.GiftCardTxnReload) || f["type"] == string(kassa.GiftCardTxnTakeback) {
		return checkCardLineEntry(ctx, ad, c, f)
	}
	if f["type"] == string(kassa.GiftCardTxnIssue) {
		return checkCardIssue(ctx, ad, c, f)
	}
	typ, _ := f["type"].(string)
	payment, _ := f["payment_id"].(string)
	var pay cardPayment
	err := ad.Tx.QueryRowContext(ctx, `SELECT order_id, location_id, method, amount FROM payments WHERE id = ? AND org_id = ?`,
		payment, c.OrgID).Scan(&pay.order, &pay.loc, &pay.method, &pay.amount)
	if errors.Is(err, sql.ErrNoRows) {
		return checkLaybyCardRedeem(ctx, ad, c, f) // or a lay-by's instalment (layby.go)
	}
	if err != nil {
		return err
	}
	switch {
	case pay.loc != ad.From.LocationID:
		return refuse(RefusedScope, "payment %s is another location's", payment)
	case pay.method != string(kassa.PaymentGiftCard):
		return refuse(RefusedValue, "payment %s is not a gift_card payment", payment)
	case f["order_id"] != pay.order:
		return refuse(RefusedValue, "order_id is not payment %s's order", payment)
	}
	pay.id = payment
	if err := ad.Tx.QueryRowContext(ctx, `SELECT count(*), coalesce(sum(amount), 0) FROM gift_card_transactions WHERE payment_id = ? AND type = ?`,
		payment, typ).Scan(&pay.entries, &pay.moved); err != nil {
		return err
	}
	if typ == string(kassa.GiftCardTxnRedeem) {
		return checkCardRedeem(ctx, ad, c, f, pay)
	}
	return checkCardRefund(ctx, ad, c, f, pay)
}

// checkCardLineEntry: an entry of an order's gift card line credits the
// line's amount to its card once the order completed (issue for an issue
// line, reload for a reload), once; a takeback debits at most the line's
// amount, once, as part of a refund of the line's order whose gift card
// part covers it.
func checkCardLineEntry(ctx context.Context, ad *admitter, c *change.Change, f map[string]any) error {
	lineID, _ := f["line_id"].(string)
	var card, order, ltype string
	var amount, entries int64
	var completed bool
	err := ad.Tx.QueryRowContext(ctx, `SELECT l.gift_card_id, l.order_id, l.type, l.amount, o.status NOT IN ('open', 'cancelled'),
		(SELECT count(*) FROM gift_card_transactions t WHERE t.line_id = l.id AND t.type = ?3)
		FROM gift_card_lines l JOIN orders o ON o.id = l.order_id AND o.org_id = l.org_id WHERE l.id = ?1 AND l.org_id = ?2`,
		lineID, c.OrgID, f["type"]).Scan(&card, &order, &ltype, &amount, &completed, &entries)
	if errors.Is(err, sql.ErrNoRows) {
		return refuse(RefusedReference, "no gift card line %q of the org", lineID)
	}
	if err != nil {
		return err
	}
	got, _ := intField(f, "amount")
	switch {
	case f["gift_card_id"] != card || f["order_id"] != order:
		return refuse(RefusedValue, "the entry is not of gift card line %s's card and order", lineID)
	case entries > 0:
		return refuse(RefusedValue, "gift card line %s has its %s entry already", lineID, f["type"])
	case f["type"] == string(kassa.GiftCardTxnTakeback):
		return checkCardTakeback(ctx, ad, c, f, order, amount)
	case !completed || got != amount || f["type"] != map[string]string{kassa.GiftCardLineIssue: "issue", kassa.GiftCardLineReload: "reload"}[ltype]:
		return refuse(RefusedValue, "gift card line %s credits its amount %d as its type, once its order completed", lineID, amount)
	}
	return nil
}

// checkCardTakeback: a takeback debits at most its line's amount, as part
// of a refund of the line's order whose gift card part covers it.
func checkCardTakeback(ctx context.Context, ad *admitter, c *change.Change, f map[string]any, order string, lineAmount int64) error {
	got, _ := intField(f, "amount")
	refund, _ := f["refund_id"].(string)
	var part, taken int64
	err := ad.Tx.QueryRowContext(ctx, `SELECT r.gift_card_amount, (SELECT coalesce(-sum(amount), 0) FROM gift_card_transactions WHERE refund_id = r.id AND type = 'takeback')
		FROM refunds r WHERE r.id = ? AND r.order_id = ? AND r.org_id = ?`, refund, order, c.OrgID).Scan(&part, &taken)
	if errors.Is(err, sql.ErrNoRows) {
		return refuse(RefusedReference, "a takeback names a refund of its line's order")
	}
	if err != nil {
		return err
	}
	if got >= 0 || -got > lineAmount || taken-got > part {
		return refuse(RefusedValue, "a takeback debits at most its line's amount %d, within its refund's gift card part %d", lineAmount, part)
	}
	return nil
}

// cardPayment is the gift_card payment a card's redeem or refund entry
// names, and the entries of that type it already has.
type cardPayment struct {
	id, order, loc, method string
	amount                 int64
	entries, moved         int64 // entries of the type, and their sum
}

// checkCardIssue: an issue credits the card's initial amount once, by an
// actor who may issue cards.
func checkCardIssue(ctx context.Context, ad *admitter, c *change.Change, f map[string]any) error {
	if !kassa.MayIssueGiftCards(ad.ActorOf) {
		return refuse(RefusedActor, "only a manager, an owner or a partner app issues gift cards")
	}
	amount, _ := intField(f, "amount")
	card, _ := f["gift_card_id"].(string)
	var initial, n int64
	if err := ad.Tx.QueryRowContext(ctx, `SELECT initial_amount, (SELECT count(*) FROM gift_card_transactions WHERE gift_card_id = ?1 AND type = 'issue')
		FROM gift_cards WHERE id = ?1 AND org_id = ?2`, card, c.OrgID).Scan(&initial, &n); err != nil {
		return err // the reference check found the card
	}
	if amount != initial || n > 0 {
		return refuse(RefusedValue, "a card is issued once, with its initial_amount %d", initial)
	}
	return nil
}

// checkCardRedeem: a redeem debits its payment's amount, once, from a
// card in the order's currency. Its status and expiry are the edge's
// account of the moment: a card disabled at the hub while the store was
// offline still paid there.
func checkCardRedeem(ctx context.Context, ad *admitter, c *change.Change, f map[string]any, pay cardPayment) error {
	amount, _ := intField(f, "amount")
	card, _ := f["gift_card_id"].(string)
	if amount != -pay.amount || pay.entries > 0 {
		return refuse(RefusedValue, "a redeem debits its payment's amount %d, once", pay.amount)
	}
	// A card pays only in its own currency (kassa.GiftCard.Redeemable).
	var same bool
	if err := ad.Tx.QueryRowContext(ctx, `SELECT g.currency = o.currency FROM gift_cards g, orders o
		WHERE g.id = ? AND g.org_id = ?2 AND o.id = ? AND o.org_id = ?2`, card, c.OrgID, pay.order).Scan(&same); err != nil {
		return err
	}
	if !same {
		return refuse(RefusedValue, "card %s is in another currency than order %s", card, pay.order)
	}
	return nil
}

// checkCardRefund: a refund credits back, to the card the payment was
// redeemed from, never more in all than the payment took, and only what
// the payment gave back as the hub holds it: its whole amount once voided
// while its order was not completed (the API voids only then), else its
// parts of the order's refunds (each admitted by checkRefund, with the
// refund limits; an edge writes the refund before the card's entry).
// Without this a forged entry refilled a card while the sale stood.
func checkCardRefund(ctx context.Context, ad *admitter, c *change.Change, f map[string]any, pay cardPayment) error {
	amount, _ := intField(f, "amount")
	card, _ := f["gift_card_id"].(string)
	if amount <= 0 || pay.moved+amount > pay.amount {
		return refuse(RefusedValue, "refunds of payment %s return at most its amount %d", pay.id, pay.amount)
	}
	returned, err := paymentReturned(ctx, ad.Tx, c.OrgID, pay.id)
	if err != nil {
		return err
	}
	if pay.moved+amount > returned {
		return refuse(RefusedValue, "payment %s gave back %d, not %d: no refund or void covers this entry", pay.id, returned, pay.moved+amount)
	}
	var from string
	if err := ad.Tx.QueryRowContext(ctx, `SELECT gift_card_id FROM gift_card_transactions WHERE payment_id = ? AND type = 'redeem'`,
		pay.id).Scan(&from); err != nil && !errors.Is(err, sql.ErrNoRows) {
		return err
	}
	if from != card {
		return refuse(RefusedValue, "a refund returns to the card payment %s was redeemed from", pay.id)
	}
	return nil
}

// paymentReturned is what a payment gave back as q holds it: its amount
// when voided on an order not completed, else the sum of its parts of its
// order's refunds.
func paymentReturned(ctx context.Context, q querier, orgID, paymentID string) (int64, error) {
	var returned int64
	err := q.QueryRowContext(ctx, `SELECT CASE WHEN p.status = 'voided' AND o.status IN ('open', 'cancelled') THEN p.amount
			ELSE (SELECT coalesce(sum(`+engine.D(q).JSONInt("j.value", "amount")+`), 0) FROM refunds r, `+engine.D(q).JSONElements("r.payments", "j")+`
				WHERE r.order_id = p.order_id AND r.org_id = p.org_id AND `+engine.D(q).JSONText("j.value", "payment_id")+` = p.id) END
		FROM payments p JOIN orders o ON o.id = p.order_id AND o.org_id = p.org_id WHERE p.id = ? AND p.org_id = ?`, paymentID, orgID).Scan(&returned)
	return returned, err
}

// giftCardEvent checks the rest of a gift card event an edge made: it
// carries the card's code masked, as every event does (webhooks and
// automations must never get a full code), and a redeemed event is about
// a card some payment was redeemed from.
func giftCardEvent(redeemed bool) func(context.Context, *admitter, string, map[string]any) error {
	return func(ctx context.Context, ad *admitter, id string, data map[string]any) error {
		var code string
		var redeems int
		if err := ad.Tx.QueryRowContext(ctx, `SELECT code, (SELECT count(*) FROM gift_card_transactions WHERE gift_card_id = ?1 AND type = 'redeem')
			FROM gift_cards WHERE id = ?1 AND org_id = ?2`, id, ad.From.OrgID).Scan(&code, &redeems); err != nil {
			return err // eventSubject found the card
		}
		if data["code"] != kassa.MaskedGiftCardCode(code) {
			return refuse(RefusedValue, "a gift card event carries the card's code masked")
		}
		if redeemed && redeems == 0 {
			return refuse(RefusedReference, "gift_card.redeemed about card %s, which no payment was redeemed from here", id)
		}
		return nil
	}
}

// recomputeGiftCards rewrites the balance of every card the batch touched
// from its ledger; a balance the merge took below zero (two stores
// redeemed the card while apart) is a gift_card_overdrawn conflict, listed
// once, when it first goes below. No sale is undone: the money was taken.
func recomputeGiftCards(ctx context.Context, a *applier, cards map[string]string) error {
	for id, orgID := range cards {
		var before int64
		err := a.Tx.QueryRowContext(ctx, `SELECT balance FROM gift_cards WHERE id = ? AND org_id = ?`, id, orgID).Scan(&before)
		if errors.Is(err, sql.ErrNoRows) {
			continue // its card row arrives later in the log
		}
		if err != nil {
			return err
		}
		after, err := setGiftCardBalance(ctx, a.Tx, orgID, id)
		if err != nil {
			return err
		}
		if after < 0 && before >= 0 {
			if err := a.Conflict(ctx, orgID, "", kassa.ConflictGiftCardOverdrawn, entGiftCard.Name, id,
				map[string]any{"balance_before": before}, map[string]any{"balance": after}); err != nil {
				return err
			}
		}
	}
	return nil
}

// maskGiftCardCode masks a card's code in its fields (or a gift card
// event's data), as every reader without payments:write sees it.
func maskGiftCardCode(f map[string]any) bool {
	code, ok := f["code"].(string)
	if ok {
		f["code"] = kassa.MaskedGiftCardCode(code)
	}
	return ok
}

// Gift cards sold and reloaded as order lines (docs/giftcards.md, "Sold
// at the till"). The order's pricing reads and checks each line
// (prepareGiftCardLines); its unit writes them with a pending card for an
// issue (writeGiftCardLines); its completion credits the cards
// (activateGiftCardLines); a refund takes back what is left on them
// (planGiftCardRefund, takeBackGiftCards).

// giftLinePlan is one gift card line of an order being taken.
type giftLinePlan struct {
	id, typ, code, cardID string
	amount                int64
}

// giftCardSale is an order's gift card lines as priced.
type giftCardSale struct {
	lines []giftLinePlan
	total int64
}

// prepareGiftCardLines resolves an order's gift card lines off the writer:
// an issue's code is free in the org (or generated), a reload's card is
// reloadable, and no card would hold more than the org's cap; their sum
// joins the price's total. Errors: EInvalid naming the line's field.
func prepareGiftCardLines(ctx context.Context, q querier, db *DB, orgID, currency string, st *kassa.OrgSettings, in []kassa.GiftCardLineInput,
	price *kassa.OrderPrice) (*giftCardSale, error) {
	sale := &giftCardSale{}
	onCard := map[string]int64{} // what this order puts on each card so far
	for i, l := range in {
		f := fmt.Sprintf("gift_cards[%d].", i)
		p := giftLinePlan{id: db.NewID(), typ: l.Type, amount: l.Amount, code: kassa.NewGiftCardCode()}
		if l.Code != nil {
			p.code, _ = kassa.NormalizeGiftCardCode(*l.Code) // validated with the order
		}
		g, err := findGiftCardByCode(ctx, q, orgID, p.code)
		switch {
		case err != nil && kassa.ErrorKind(err) != kassa.ENotFound:
			return nil, err
		case l.Type == kassa.GiftCardLineIssue && (err == nil || onCard[p.code] > 0):
			return nil, kassa.InvalidField(f+"code", "a gift card of the org already has that code")
		case l.Type == kassa.GiftCardLineIssue:
			p.cardID = db.NewID()
			err = kassa.WithinMaxBalance(st, 0, l.Amount, f+"amount")
		case err != nil:
			return nil, kassa.InvalidField(f+"code", "no gift card of the org has that code")
		default:
			p.cardID = g.ID
			g.Balance += onCard[p.code]
			err = g.Reloadable(db.Now(), currency, l.Amount, st, f)
		}
		if err != nil {
			return nil, err
		}
		onCard[p.code] += l.Amount
		sale.lines = append(sale.lines, p)
		sale.total += l.Amount
	}
	price.Total += sale.total
	return sale, nil
}

// writeGiftCardLines writes an order's gift card lines in its unit, an
// issue's card pending (it pays nothing until the order completes). A code
// taken, or a card disabled, since the pricing is refused as there.
func writeGiftCardLines(ctx context.Context, tx *Tx, o *kassa.Order, sale *giftCardSale) error {
	for i, p := range sale.lines {
		f := fmt.Sprintf("gift_cards[%d].code", i)
		g, err := findGiftCardByCode(ctx, tx, o.OrgID, p.code)
		switch {
		case p.typ == kassa.GiftCardLineIssue && err == nil:
			return kassa.InvalidField(f, "a gift card of the org already has that code")
		case p.typ == kassa.GiftCardLineIssue:
			err = tx.Insert(ctx, entGiftCard, o.OrgID, p.cardID, map[string]any{"code": p.code, "currency": o.Currency,
				"initial_amount": p.amount, "balance": int64(0), "status": kassa.GiftCardPending, "customer_id": o.CustomerID})
		case err != nil || g.Status != kassa.GiftCardActive:
			return kassa.InvalidField(f, "the gift card cannot be reloaded now: look it up again")
		}
		if err != nil {
			return err
		}
		if err := tx.InsertAt(ctx, entGiftCardLine, o.OrgID, o.LocationID, p.id, map[string]any{"order_id": o.ID, "position": i,
			"gift_card_id": p.cardID, "type": p.typ, "amount": p.amount}); err != nil {
			return err
		}
	}
	return nil
}

// giftCardLinesOf are the order's gift card lines as the order shows them.
func (sale *giftCardSale) giftCardLines() []kassa.GiftCardLine {
	out := []kassa.GiftCardLine{}
	if sale == nil {
		return out
	}
	for _, p := range sale.lines {
		out = append(out, kassa.GiftCardLine{ID: p.id, GiftCardID: p.cardID, Code: kassa.MaskedGiftCardCode(p.code), Type: p.typ, Amount: p.amount})
	}
	return out
}

// loadGiftCardLines fills the orders' gift card lines, codes masked.
func loadGiftCardLines(ctx context.Context, q querier, in string, args []any, byID map[string]*kassa.Order) error {
	rows, err := q.QueryContext(ctx, `SELECT l.order_id, l.id, l.gift_card_id, g.code, l.type, l.amount,
		(SELECT coalesce(-sum(t.amount), 0) FROM gift_card_transactions t WHERE t.line_id = l.id AND t.type = 'takeback'),
		EXISTS (SELECT 1 FROM gift_card_transactions t WHERE t.line_id = l.id AND t.type = 'takeback')
		FROM gift_card_lines l JOIN gift_cards g ON g.id = l.gift_card_id WHERE l.order_id IN `+in+` ORDER BY l.order_id, l.position`, args...)
	if err != nil {
		return err
	}
	defer rows.Close()
	for rows.Next() {
		var oid string
		var l kassa.GiftCardLine
		if err := rows.Scan(&oid, &l.ID, &l.GiftCardID, &l.Code, &l.Type, &l.Amount, &l.TakenBack, &l.Refunded); err != nil {
			return err
		}
		l.Code = kassa.MaskedGiftCardCode(l.Code)
		byID[oid].GiftCards = append(byID[oid].GiftCards, l)
	}
	return rows.Err()
}

// activateGiftCardLines credits the order's gift card lines in its
// completion's unit: an issued card gets its issue entry and turns
// active, a reloaded one its reload entry. The cap was checked when the
// lines were taken; the money is paid, so it is credited as sold.
func activateGiftCardLines(ctx context.Context, tx *Tx, o *kassa.Order) error {
	for _, l := range o.GiftCards {
		typ := kassa.GiftCardTxnReload
		if l.Type == kassa.GiftCardLineIssue {
			typ = kassa.GiftCardTxnIssue
			if err := tx.Update(ctx, entGiftCard, o.OrgID, l.GiftCardID, map[string]any{"status": kassa.GiftCardActive}); err != nil {
				return err
			}
		}
		g, err := appendGiftCardEntry(ctx, tx, o.OrgID, l.GiftCardID, giftEntry{typ: typ, amount: l.Amount, orderID: &o.ID, lineID: &l.ID})
		if err != nil {
			return err
		}
		if typ == kassa.GiftCardTxnIssue {
			tx.Emit(o.OrgID, o.LocationID, kassa.EventGiftCardIssued, g)
		}
	}
	return nil
}

// giftRefund is what a refund takes back from an order's gift card lines:
// per line, what is left of its amount on its card (kassa.TakeBack).
type giftRefund struct {
	lines  []kassa.GiftCardLine // with TakenBack set to what this refund takes
	amount int64
	locked int64 // the order's total that no refund of its items may give back: what its gift card lines put on cards, less takebacks
}

// planGiftCardRefund plans the gift card part of a refund of o: the lines
// named (or, for a refund of everything left, every line not refunded
// yet). Errors: EInvalid naming gift_card_line_ids (no such line, refunded
// already, nothing left on its card).
func planGiftCardRefund(ctx context.Context, q querier, o *kassa.Order, in *kassa.RefundRequest) (*giftRefund, error) {
	r := &giftRefund{}
	all := in.Amount == nil && len(in.LineItems) == 0 && len(in.GiftCardLineIDs) == 0
	for _, l := range o.GiftCards {
		r.locked += l.Amount - l.TakenBack
		if !l.Refunded && (all || slices.Contains(in.GiftCardLineIDs, l.ID)) {
			var balance int64
			if err := q.QueryRowContext(ctx, `SELECT balance FROM gift_cards WHERE id = ? AND org_id = ?`, l.GiftCardID, o.OrgID).Scan(&balance); err != nil {
				return nil, err
			}
			if l.TakenBack = kassa.TakeBack(l.Amount, balance); l.TakenBack > 0 || !all {
				r.lines = append(r.lines, l)
				r.amount += l.TakenBack
			}
		}
	}
	for _, id := range in.GiftCardLineIDs {
		i := slices.IndexFunc(r.lines, func(l kassa.GiftCardLine) bool { return l.ID == id })
		if i < 0 {
			return nil, kassa.InvalidField("gift_card_line_ids", "no gift card line of the order not refunded yet has id "+id)
		}
		if r.lines[i].TakenBack == 0 {
			return nil, kassa.InvalidField("gift_card_line_ids", "the card of gift card line "+id+" has been spent: nothing is left to take back")
		}
	}
	return r, nil
}

// takeBackGiftCards writes a refund's gift card part in its unit: each
// line's takeback entry, and a card the line issued disabled. A card spent
// since the refund was planned is a conflict: plan again.
func takeBackGiftCards(ctx context.Context, tx *Tx, o *kassa.Order, refundID string, r *giftRefund) error {
	for _, l := range r.lines {
		g, err := findGiftCard(ctx, tx, o.OrgID, l.GiftCardID)
		if err != nil {
			return err
		}
		if kassa.TakeBack(l.Amount, g.Balance) != l.TakenBack {
			return kassa.Errorf(kassa.EConflict, "gift card %s was used during the refund; refund again", kassa.MaskedGiftCardCode(g.Code))
		}
		if _, err := appendGiftCardEntry(ctx, tx, o.OrgID, g.ID, giftEntry{typ: kassa.GiftCardTxnTakeback, amount: -l.TakenBack,
			orderID: &o.ID, lineID: &l.ID, refundID: &refundID}); err != nil {
			return err
		}
		if l.Type == kassa.GiftCardLineIssue {
			cols := map[string]any{}
			changed(cols, "status", g.Status, kassa.GiftCardDisabled)
			if err := tx.Update(ctx, entGiftCard, o.OrgID, g.ID, cols); err != nil {
				return err
			}
		}
	}
	return nil
}

// planRefundWithGiftCards plans a refund of o with its gift card part: the
// items' part as kassa.PlanRefund does, over the order's total less what
// its gift card lines put on cards (no refund of the items gives that
// back), and the gift card lines' part (planGiftCardRefund). A refund of
// gift card lines only plans no items.
func planRefundWithGiftCards(ctx context.Context, q querier, o *kassa.Order, in *kassa.RefundRequest) (*giftRefund, kassa.RefundPlan, error) {
	if o.Status != kassa.OrderCompleted && o.Status != kassa.OrderPartiallyRefunded {
		return nil, kassa.RefundPlan{}, kassa.Errorf(kassa.EConflict, "order %s is %s; only completed orders can be refunded", o.Number, o.Status)
	}
	gift, err := planGiftCardRefund(ctx, q, o, in)
	if err != nil {
		return nil, kassa.RefundPlan{}, err
	}
	items := *o
	items.Total -= gift.locked
	plan := kassa.RefundPlan{Lines: []kassa.RefundLine{}}
	if in.Amount != nil || len(in.LineItems) > 0 || len(in.GiftCardLineIDs) == 0 {
		plan, err = kassa.PlanRefund(&items, in)
	}
	if err != nil && (gift.amount == 0 || kassa.ErrorKind(err) != kassa.EConflict) {
		return nil, plan, err
	}
	if err != nil {
		plan = kassa.RefundPlan{Lines: []kassa.RefundLine{}} // nothing of the items left: the cards only
	}
	plan.Amount += gift.amount
	if plan.Amount == 0 {
		return nil, plan, kassa.Errorf(kassa.EConflict, "order %s has nothing left to refund", o.Number)
	}
	return gift, plan, nil
}

// priceItems prices an order's item lines as kassa.Price does; an order
// of gift card lines only has none, and costs nothing but its cards.
func priceItems(lines []kassa.PricedLine, in *kassa.OrderCreate, st *kassa.OrgSettings) (kassa.OrderPrice, error) {
	if len(lines) == 0 && in.Discount == nil {
		return kassa.OrderPrice{}, nil
	}
	return kassa.Price(lines, in.Discount, st.TaxRateBps, st.TaxInclusive)
}
