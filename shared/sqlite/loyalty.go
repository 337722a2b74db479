package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"

	"kassa.dev/shared/kassa"
	"kassa.dev/shared/sqlite/engine"
	"kassa.dev/sync/change"
)

// LoyaltyService implements kassa.LoyaltyService. The ledger is
// points_transactions: append-only rows of signed points. An account's
// points_balance (sum of all points), lifetime_points (sum of earned
// points) and tier (from lifetime points) are derived from its rows and
// rewritten by the transaction that appends one, so that sync can merge
// the rows of several nodes and recompute the same figures.
type LoyaltyService struct{ db *DB }

// NewLoyaltyService returns the loyalty service of db.
func NewLoyaltyService(db *DB) *LoyaltyService { return &LoyaltyService{db: db} }

var _ kassa.LoyaltyService = (*LoyaltyService)(nil)

const programCols = `SELECT id, org_id, name, points_per_unit, redemption_value, tiers, is_active, created_at, updated_at FROM loyalty_programs`

func scanProgram(s scanner) (*kassa.LoyaltyProgram, error) {
	var p kassa.LoyaltyProgram
	var tiers, created, updated string
	if err := s.Scan(&p.ID, &p.OrgID, &p.Name, &p.PointsPerUnit, &p.RedemptionValue, &tiers, &p.IsActive, &created, &updated); err != nil {
		return nil, err
	}
	p.CreatedAt, p.UpdatedAt = parseTime(created), parseTime(updated)
	err := decodeJSON(tiers, &p.Tiers)
	if p.Tiers == nil {
		p.Tiers = []kassa.LoyaltyTier{}
	}
	return &p, err
}

func programID(p *kassa.LoyaltyProgram) string { return p.ID }

const accountCols = `SELECT id, org_id, program_id, customer_id, points_balance, lifetime_points, tier, created_at, updated_at FROM loyalty_accounts`

func scanAccount(s scanner) (*kassa.LoyaltyAccount, error) {
	var a kassa.LoyaltyAccount
	var created, updated string
	if err := s.Scan(&a.ID, &a.OrgID, &a.ProgramID, &a.CustomerID, &a.PointsBalance, &a.LifetimePoints, &a.Tier, &created, &updated); err != nil {
		return nil, err
	}
	a.CreatedAt, a.UpdatedAt = parseTime(created), parseTime(updated)
	return &a, nil
}

const pointsTxnCols = `SELECT id, org_id, account_id, type, points, balance_after, order_id, payment_id, reason, origin, created_at FROM points_transactions`

func scanPointsTxn(s scanner) (*kassa.PointsTransaction, error) {
	var t kassa.PointsTransaction
	var created string
	if err := s.Scan(&t.ID, &t.OrgID, &t.AccountID, &t.Type, &t.Points, &t.BalanceAfter, &t.OrderID, &t.PaymentID, &t.Reason, &t.Origin, &created); err != nil {
		return nil, err
	}
	t.CreatedAt = parseTime(created)
	return &t, nil
}

func pointsTxnID(t *kassa.PointsTransaction) string { return t.ID }

// FindPrograms lists the org's programs by id.
func (s *LoyaltyService) FindPrograms(ctx context.Context, p kassa.Page) (kassa.List[kassa.LoyaltyProgram], error) {
	a, err := kassa.MustActor(ctx)
	if err != nil {
		return kassa.List[kassa.LoyaltyProgram]{}, err
	}
	return findPage(ctx, s.db.Reader, programCols, orgFilter(a.OrgID), p, scanProgram, programID)
}

// FindProgramByID returns one program of the org, or ENotFound.
func (s *LoyaltyService) FindProgramByID(ctx context.Context, id string) (*kassa.LoyaltyProgram, error) {
	return readOwn(ctx, s.db, findProgram, id)
}

func findProgram(ctx context.Context, q querier, orgID, id string) (*kassa.LoyaltyProgram, error) {
	return findByID(ctx, q, programCols, "loyalty program", orgID, id, scanProgram)
}

// CreateProgram validates and stores a new program; its tiers are stored
// lowest threshold first. Errors: EInvalid.
func (s *LoyaltyService) CreateProgram(ctx context.Context, in *kassa.LoyaltyProgramCreate) (*kassa.LoyaltyProgram, error) {
	a, err := kassa.MustActor(ctx)
	if err != nil {
		return nil, err
	}
	if err := in.Validate(); err != nil {
		return nil, err
	}
	tiers := orEmpty(append([]kassa.LoyaltyTier(nil), in.Tiers...))
	kassa.SortTiers(tiers)
	id := s.db.NewID()
	return writeRead(ctx, s.db, findProgram, a.OrgID, id, func(tx *Tx) error {
		return tx.Insert(ctx, entProgram, a.OrgID, id, map[string]any{
			"name": in.Name, "points_per_unit": in.PointsPerUnit, "redemption_value": in.RedemptionValue,
			"tiers": tiers, "is_active": in.IsActive == nil || *in.IsActive,
		})
	})
}

// Enrol opens an account for a customer in a program (by default the org's
// only active program), starting at the tier reached with 0 points.
// Errors: EInvalid (no such customer; no program given and not exactly one
// active; no such program), EConflict (already enrolled in that program, or
// the program is not active).
func (s *LoyaltyService) Enrol(ctx context.Context, in *kassa.EnrolRequest) (*kassa.LoyaltyAccount, error) {
	a, err := kassa.MustActor(ctx)
	if err != nil {
		return nil, err
	}
	if err := in.Validate(); err != nil {
		return nil, err
	}
	id := s.db.NewID()
	return writeRead(ctx, s.db, findAccount, a.OrgID, id, func(tx *Tx) error {
		var v kassa.Validation
		if _, err := findCustomer(ctx, tx, a.OrgID, in.CustomerID); kassa.ErrorKind(err) == kassa.ENotFound {
			v.Add("customer_id", "no such customer")
		} else if err != nil {
			return err
		}
		prog, err := enrolProgram(ctx, tx, a.OrgID, in.ProgramID, &v)
		if err != nil {
			return err
		}
		if err := v.Err(); err != nil {
			return err
		}
		if !prog.IsActive {
			return kassa.Errorf(kassa.EConflict, "loyalty program %s is not active", prog.ID)
		}
		err = tx.Insert(ctx, entAccount, a.OrgID, id, map[string]any{
			"program_id": prog.ID, "customer_id": in.CustomerID, "points_balance": int64(0),
			"lifetime_points": int64(0), "tier": prog.TierFor(0),
		})
		if isUniqueViolation(err) {
			return kassa.Errorf(kassa.EConflict, "customer %s is already enrolled in loyalty program %s", in.CustomerID, prog.ID)
		}
		return err
	})
}

// enrolProgram returns the program named by id, or the org's only active
// program when id is nil; what is wrong is added to v (and nil returned).
func enrolProgram(ctx context.Context, q querier, orgID string, id *string, v *kassa.Validation) (*kassa.LoyaltyProgram, error) {
	if id != nil {
		p, err := findProgram(ctx, q, orgID, *id)
		if kassa.ErrorKind(err) == kassa.ENotFound {
			v.Add("program_id", "no such loyalty program")
			return nil, nil
		}
		return p, err
	}
	rows, err := q.QueryContext(ctx, programCols+` WHERE org_id = ? AND is_active = 1 ORDER BY id LIMIT 2`, orgID)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var active []*kassa.LoyaltyProgram
	for rows.Next() {
		p, err := scanProgram(rows)
		if err != nil {
			return nil, err
		}
		active = append(active, p)
	}
	if err := rows.Err(); err != nil {
		return nil, err
	}
	switch len(active) {
	case 0:
		v.Add("program_id", "is required: the org has no active loyalty program")
		return nil, nil
	case 1:
		return active[0], nil
	default:
		v.Add("program_id", "is required: the org has more than one active loyalty program")
		return nil, nil
	}
}

// FindAccountByID returns one account of the org, or ENotFound.
func (s *LoyaltyService) FindAccountByID(ctx context.Context, id string) (*kassa.LoyaltyAccount, error) {
	return readOwn(ctx, s.db, findAccount, id)
}

func findAccount(ctx context.Context, q querier, orgID, id string) (*kassa.LoyaltyAccount, error) {
	return findByID(ctx, q, accountCols, "loyalty account", orgID, id, scanAccount)
}

// FindAccountByCustomer returns the account of a customer (not deleted):
// the one in an active program, the newest if there are several, else the
// newest in any program. Errors: ENotFound.
func (s *LoyaltyService) FindAccountByCustomer(ctx context.Context, customerID string) (*kassa.LoyaltyAccount, error) {
	a, err := kassa.MustActor(ctx)
	if err != nil {
		return nil, err
	}
	acct, err := findCustomerAccount(ctx, s.db.Reader, a.OrgID, customerID, false)
	if err != nil {
		return nil, err
	}
	if acct == nil {
		return nil, kassa.Errorf(kassa.ENotFound, "no loyalty account for customer %s", customerID)
	}
	return acct, nil
}

// findCustomerAccount returns the account FindAccountByCustomer describes,
// only in an active program with activeOnly, or nil when there is none.
func findCustomerAccount(ctx context.Context, q querier, orgID, customerID string, activeOnly bool) (*kassa.LoyaltyAccount, error) {
	query := `SELECT a.id, a.org_id, a.program_id, a.customer_id, a.points_balance, a.lifetime_points, a.tier, a.created_at, a.updated_at
		FROM loyalty_accounts a
		JOIN loyalty_programs p ON p.id = a.program_id AND p.org_id = a.org_id
		JOIN customers c ON c.id = a.customer_id AND c.org_id = a.org_id AND c.deleted_at IS NULL
		WHERE a.org_id = ? AND a.customer_id = ?`
	if activeOnly {
		query += ` AND p.is_active = 1`
	}
	acct, err := scanAccount(q.QueryRowContext(ctx, query+` ORDER BY p.is_active DESC, a.id DESC LIMIT 1`, orgID, customerID))
	if errors.Is(err, sql.ErrNoRows) {
		return nil, nil
	}
	return acct, err
}

// Earn credits points, or the points an amount spent is worth in the
// account's program, and emits loyalty.points_earned (and
// loyalty.tier_changed when the tier moves). Errors: ENotFound, EInvalid
// (also an amount worth no points), EConflict (the program is not active).
func (s *LoyaltyService) Earn(ctx context.Context, accountID string, in *kassa.PointsRequest) (*kassa.PointsTransaction, error) {
	a, err := kassa.MustActor(ctx)
	if err != nil {
		return nil, err
	}
	if err := in.ValidateEarn(); err != nil {
		return nil, err
	}
	var out *kassa.PointsTransaction
	err = s.db.Write(ctx, func(tx *Tx) error {
		acct, prog, err := accountAndProgram(ctx, tx, a.OrgID, accountID)
		if err != nil {
			return err
		}
		points := in.Points
		if in.Amount > 0 {
			points = prog.PointsFor(in.Amount)
		}
		if out, err = pointsEntry(ctx, tx, acct, kassa.PointsEarn, points, in.EntryID); out != nil || err != nil {
			return err
		}
		if !prog.IsActive {
			return kassa.Errorf(kassa.EConflict, "loyalty program %s is not active: no points can be earned", prog.ID)
		}
		if points <= 0 {
			return kassa.InvalidField("amount", fmt.Sprintf("earns no points at the program's rate of %d points per 100 minor units", prog.PointsPerUnit))
		}
		out, err = appendPoints(ctx, tx, acct, prog, kassa.PointsEarn, points, pointsOf{orderID: in.OrderID, reason: in.Reason, id: in.EntryID})
		return err
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// Redeem debits points; the balance never goes below zero. Errors:
// ENotFound, EInvalid, EConflict (more points than the balance).
func (s *LoyaltyService) Redeem(ctx context.Context, accountID string, in *kassa.PointsRequest) (*kassa.PointsTransaction, error) {
	a, err := kassa.MustActor(ctx)
	if err != nil {
		return nil, err
	}
	if err := in.ValidateRedeem(); err != nil {
		return nil, err
	}
	var out *kassa.PointsTransaction
	err = s.db.Write(ctx, func(tx *Tx) error {
		acct, prog, err := accountAndProgram(ctx, tx, a.OrgID, accountID)
		if err != nil {
			return err
		}
		if out, err = pointsEntry(ctx, tx, acct, kassa.PointsRedeem, -in.Points, in.EntryID); out != nil || err != nil {
			return err
		}
		out, err = appendPoints(ctx, tx, acct, prog, kassa.PointsRedeem, -in.Points, pointsOf{orderID: in.OrderID, reason: in.Reason, id: in.EntryID})
		return err
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// pointsEntry returns the ledger entry id (kassa.PointsRequest's EntryID)
// when there is one and it is what the request writes — typ and signed
// points on acct, written at this node: the request ran before (an
// automation's action re-run after a crash) and its points moved then.
// Any other entry under that id is EConflict, and nothing moves: an edge
// picks its own ids (and its events' ids and times, from which an
// automation's key follows), so an entry it pushed first must not pass
// for the action's own, whatever it holds.
func pointsEntry(ctx context.Context, tx *Tx, acct *kassa.LoyaltyAccount, typ kassa.PointsType, points int64, id string) (*kassa.PointsTransaction, error) {
	if id == "" {
		return nil, nil
	}
	t, err := scanPointsTxn(tx.QueryRowContext(ctx, pointsTxnCols+` WHERE id = ?`, id))
	if errors.Is(err, sql.ErrNoRows) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var differ []string
	for _, d := range []struct {
		what string
		same bool
	}{
		{"org", t.OrgID == acct.OrgID}, {"account", t.AccountID == acct.ID}, {"type", t.Type == typ},
		{"points", t.Points == points}, {"node", t.Origin == tx.DB.NodeID},
	} {
		if !d.same {
			differ = append(differ, d.what)
		}
	}
	if len(differ) > 0 {
		// Another org's entry is not described: its id is all it shares.
		return nil, kassa.Errorf(kassa.EConflict, "points entry %s is already in the ledger with another %s: it is not this request's, and no points moved",
			id, strings.Join(differ, ", "))
	}
	return t, nil
}

func accountAndProgram(ctx context.Context, tx *Tx, orgID, accountID string) (*kassa.LoyaltyAccount, *kassa.LoyaltyProgram, error) {
	// The account's row lock first: on several hubs, the points read
	// below are the ones this unit changes.
	if err := tx.LockRow(ctx, "loyalty_accounts", accountID); err != nil {
		return nil, nil, err
	}
	acct, err := findAccount(ctx, tx, orgID, accountID)
	if err != nil {
		return nil, nil, err
	}
	prog, err := findProgram(ctx, tx, orgID, acct.ProgramID)
	if err != nil {
		return nil, nil, fmt.Errorf("sqlite: program of loyalty account %s: %w", acct.ID, err)
	}
	return acct, prog, nil
}

// earnForOrder credits the customer's account in the org's active program with the points for an order total (less what
// the customer's points paid of it), times the
// order's campaign multiplier (basis points, kassa.MultiplyPoints); it returns 0 and writes nothing when the customer has no account.
func earnForOrder(ctx context.Context, tx *Tx, orgID, customerID, orderID string, total, multiplierBps int64) (int64, error) {
	acct, err := findCustomerAccount(ctx, tx, orgID, customerID, true)
	if err != nil || acct == nil {
		return 0, err
	}
	prog, err := findProgram(ctx, tx, orgID, acct.ProgramID)
	if err != nil {
		return 0, err
	}
	// What points paid earns none (docs/loyalty.md).
	var byPoints int64
	if err := tx.QueryRowContext(ctx, `SELECT coalesce(sum(amount), 0) FROM payments WHERE order_id = ? AND org_id = ? AND method = 'loyalty_points'
		AND status IN ('captured', 'partially_refunded', 'refunded')`, orderID, orgID).Scan(&byPoints); err != nil {
		return 0, err
	}
	points := kassa.MultiplyPoints(prog.PointsFor(total-byPoints), multiplierBps)
	if points <= 0 {
		return 0, nil
	}
	if _, err := appendPoints(ctx, tx, acct, prog, kassa.PointsEarn, points, pointsOf{orderID: &orderID, reason: "order"}); err != nil {
		return 0, err
	}
	return points, nil
}

// appendPoints is the one way points move: it appends a transaction of
// signed points to the ledger of acct and rewrites the account's derived
// columns (balance, lifetime points, tier) in the same transaction, only
// those that changed. The figures before the entry are summed from the
// ledger, not read from the account row, so rows merged in by sync count.
// A debit beyond the balance is EConflict. An earn emits
// loyalty.points_earned; a tier move emits loyalty.tier_changed. of says
// what the entry is for.
func appendPoints(ctx context.Context, tx *Tx, acct *kassa.LoyaltyAccount, prog *kassa.LoyaltyProgram, typ kassa.PointsType, points int64, of pointsOf) (*kassa.PointsTransaction, error) {
	var balance, lifetime int64
	err := tx.QueryRowContext(ctx, `SELECT coalesce(sum(points), 0), coalesce(sum(CASE WHEN type = 'earn' THEN points ELSE 0 END), 0)
		FROM points_transactions WHERE org_id = ? AND account_id = ?`, acct.OrgID, acct.ID).Scan(&balance, &lifetime)
	if err != nil {
		return nil, err
	}
	if points < 0 && balance+points < 0 {
		return nil, kassa.Errorf(kassa.EConflict, "cannot redeem %d points: the balance of loyalty account %s is %d", -points, acct.ID, balance)
	}
	balance += points
	if typ == kassa.PointsEarn {
		lifetime += points
	}
	id := of.id
	if id == "" {
		id = tx.DB.NewID()
	}
	err = tx.Insert(ctx, entPointsTxn, acct.OrgID, id, map[string]any{
		"account_id": acct.ID, "type": string(typ), "points": points, "balance_after": balance,
		"order_id": of.orderID, "payment_id": of.paymentID, "reason": of.reason,
	})
	if err != nil {
		return nil, err
	}
	tier := prog.TierFor(lifetime)
	cols := map[string]any{}
	changed(cols, "points_balance", acct.PointsBalance, balance)
	changed(cols, "lifetime_points", acct.LifetimePoints, lifetime)
	changed(cols, "tier", acct.Tier, tier)
	if err := tx.Update(ctx, entAccount, acct.OrgID, acct.ID, cols); err != nil {
		return nil, err
	}
	t, err := scanPointsTxn(tx.QueryRowContext(ctx, pointsTxnCols+` WHERE id = ?`, id))
	if err != nil {
		return nil, err
	}
	if typ == kassa.PointsEarn {
		tx.Emit(acct.OrgID, "", kassa.EventLoyaltyPointsEarned, t)
	}
	if _, tierChanged := cols["tier"]; tierChanged {
		var moved *kassa.LoyaltyAccount
		if err := emitRead(ctx, tx, findAccount, acct.OrgID, acct.ID, kassa.EventLoyaltyTierChanged, &moved); err != nil {
			return nil, err
		}
	}
	return t, nil
}

// pointsOf is what a points entry is for: its order and loyalty_points
// payment (nil: none), its reason, and its id ("" for a new one).
type pointsOf struct {
	orderID, paymentID *string
	reason, id         string
}

// FindTransactions lists an account's transactions, oldest first.
// Errors: ENotFound for an account not in the org.
func (s *LoyaltyService) FindTransactions(ctx context.Context, accountID string, p kassa.Page) (kassa.List[kassa.PointsTransaction], error) {
	a, err := kassa.MustActor(ctx)
	if err != nil {
		return kassa.List[kassa.PointsTransaction]{}, err
	}
	if !exists(ctx, s.db.Reader, "loyalty_accounts", a.OrgID, accountID) {
		return kassa.List[kassa.PointsTransaction]{}, kassa.NotFound("loyalty account", accountID)
	}
	return findPage(ctx, s.db.Reader, pointsTxnCols, orgFilter(a.OrgID).and("account_id = ?", accountID), p, scanPointsTxn, pointsTxnID)
}

// Loyalty: an account's balance, lifetime points and tier are derived
// from its points transactions.
var entProgram, entAccount, entPointsTxn = new(noun), new(noun), new(noun)

func init() {
	register(entProgram, noun{Name: "loyalty_program", Table: "loyalty_programs", Digest: orgRows,
		Edge: &edgeRule{Update: []string{"name", "points_per_unit", "redemption_value", "tiers", "is_active"},
			Scopes: []kassa.Scope{kassa.ScopeLoyaltyWrite}, Check: checkProgram}})
	register(entAccount, noun{Name: "loyalty_account", Table: "loyalty_accounts", Digest: orgRows,
		Derived: []string{"points_balance", "lifetime_points", "tier"},
		Edge: &edgeRule{Update: []string{"points_balance", "lifetime_points", "tier"}, Once: []string{"program_id", "customer_id"}, Scopes: loyaltyWrite,
			Refs: []ref{{Col: "program_id", Table: "loyalty_programs"}, {Col: "customer_id", Table: "customers"}}},
		Events:    map[string]eventSubject{kassa.EventLoyaltyTierChanged: {Same: []string{"customer_id", "program_id"}}},
		Track:     func(a *applier, c *change.Change, _ map[string]any) { a.Touch(entAccount, c.EntityID, c.OrgID) },
		Recompute: recomputeAccounts})
	register(entPointsTxn, noun{Name: "points_transaction", Table: "points_transactions", Merge: mergeAppend, Digest: orgRows,
		Formats: []formatStep{{Format: 5, Migration: 43}},
		Edge: &edgeRule{Scopes: loyaltyWrite,
			Refs: []ref{{Col: "account_id", Table: "loyalty_accounts"}, {Col: "order_id", Table: "orders"}}, Check: checkPoints},
		Events: map[string]eventSubject{kassa.EventLoyaltyPointsEarned: {Same: []string{"account_id", "points", "type"}}},
		Track: func(a *applier, c *change.Change, f map[string]any) {
			if id := fieldText(f, "account_id"); id != "" {
				a.Touch(entAccount, id, c.OrgID)
			}
		}})
}

func checkProgram(_ context.Context, _ *admitter, c *change.Change, f map[string]any) error {
	in := &kassa.LoyaltyProgramCreate{}
	if err := asInput(f, in); err != nil {
		return err
	}
	if c.Op == change.OpInsert {
		return validated(in.Validate())
	}
	return nil
}

func checkPoints(ctx context.Context, ad *admitter, c *change.Change, f map[string]any) error {
	if err := firstErr(oneOf(f, "type", true, "earn", "redeem", "adjust", "refund"), within(f, "points", -maxPoints, maxPoints, true)); err != nil {
		return err
	}
	p, _ := intField(f, "points")
	switch f["type"] {
	case "earn":
		if p <= 0 {
			return refuse(RefusedValue, "earned points are positive")
		}
	case "redeem":
		if p >= 0 {
			return refuse(RefusedValue, "redeemed points are negative")
		}
	case "refund":
		if p <= 0 {
			return refuse(RefusedValue, "refunded points are positive")
		}
	}
	if f["type"] == "refund" || fieldText(f, "payment_id") != "" {
		return checkTenderPoints(ctx, ad, c, f)
	}
	return nil
}

// checkTenderPoints: an edge moves points for a payment only as its API
// does. The redeem comes first, once, before its payment's row (which
// checkPointsPayment then holds to it); a refund credits back, to the
// account the payment debited, never more in all than the part of the
// redeemed points what the payment gave back is worth (its refunds and
// voids as the hub holds them, kassa.PointsGivenBack).
func checkTenderPoints(ctx context.Context, ad *admitter, c *change.Change, f map[string]any) error {
	payment := fieldText(f, "payment_id")
	var paid, entries int64
	if err := ad.Tx.QueryRowContext(ctx, `SELECT (SELECT count(*) FROM payments WHERE id = ?1 AND org_id = ?2),
		(SELECT count(*) FROM points_transactions WHERE payment_id = ?1 AND org_id = ?2 AND type = 'redeem')`, payment, c.OrgID).Scan(&paid, &entries); err != nil {
		return err
	}
	switch {
	case f["type"] != "redeem" && f["type"] != "refund":
		return refuse(RefusedValue, "only a redeem or a refund belongs to a payment")
	case f["type"] == "redeem" && (paid > 0 || entries > 0 || fieldText(f, "order_id") == ""):
		return refuse(RefusedValue, "a points payment's redeem names its order and comes before its payment %s, once", payment)
	case f["type"] == "redeem":
		return nil
	case payment == "" || entries == 0:
		return refuse(RefusedReference, "a points refund names the loyalty_points payment whose points it gives back")
	}
	var pay struct {
		loc, method, account string
		amount, redeemed     int64
		given                int64
	}
	if err := ad.Tx.QueryRowContext(ctx, `SELECT p.location_id, p.method, p.amount, t.account_id, -t.points,
		(SELECT coalesce(sum(points), 0) FROM points_transactions WHERE payment_id = ?1 AND type = 'refund')
		FROM payments p JOIN points_transactions t ON t.payment_id = p.id AND t.type = 'redeem' WHERE p.id = ?1 AND p.org_id = ?2`,
		payment, c.OrgID).Scan(&pay.loc, &pay.method, &pay.amount, &pay.account, &pay.redeemed, &pay.given); err != nil {
		return refuse(RefusedReference, "payment %s is not a loyalty_points payment the hub holds", payment)
	}
	returned, err := paymentReturned(ctx, ad.Tx, c.OrgID, payment)
	if err != nil {
		return err
	}
	points, _ := intField(f, "points")
	switch {
	case pay.loc != ad.From.LocationID:
		return refuse(RefusedScope, "payment %s is another location's", payment)
	case fieldText(f, "account_id") != pay.account:
		return refuse(RefusedValue, "a points refund returns to the account payment %s debited", payment)
	case pay.given+points > kassa.PointsGivenBack(pay.redeemed, pay.amount, returned):
		return refuse(RefusedValue, "payment %s gave back %d of %d: its points back are at most %d", payment, returned, pay.amount,
			kassa.PointsGivenBack(pay.redeemed, pay.amount, returned))
	}
	return nil
}

// checkPointsPayment: a loyalty_points payment an edge writes is paid by
// the redeem written just before it for it: one entry, on the order's
// customer's account, debiting exactly the payment's amount at the
// program's redemption value as the hub holds it. Any other method
// passes.
func checkPointsPayment(ctx context.Context, ad *admitter, c *change.Change, f map[string]any) error {
	if f["method"] != string(kassa.PaymentLoyaltyPoints) {
		return nil
	}
	var n, points int64
	var order, accountCustomer, orderCustomer, program sql.NullString
	err := ad.Tx.QueryRowContext(ctx, `SELECT count(*), coalesce(-sum(t.points), 0), max(t.order_id), max(a.customer_id), max(o.customer_id), max(a.program_id)
		FROM points_transactions t
		LEFT JOIN loyalty_accounts a ON a.id = t.account_id AND a.org_id = t.org_id
		LEFT JOIN orders o ON o.id = t.order_id AND o.org_id = t.org_id
		WHERE t.payment_id = ? AND t.org_id = ? AND t.type = 'redeem'`, c.EntityID, c.OrgID).Scan(&n, &points, &order, &accountCustomer, &orderCustomer, &program)
	if err != nil {
		return err
	}
	amount, _ := intField(f, "amount")
	held, err := programHeldRate(ctx, ad.Tx, c.OrgID, program.String, points, amount)
	if err != nil {
		return err
	}
	switch {
	case n != 1:
		return refuse(RefusedValue, "a loyalty_points payment is paid by one redeem of points written before it; payment %s has %d", c.EntityID, n)
	case order.String != fieldText(f, "order_id"):
		return refuse(RefusedValue, "the points of payment %s were redeemed for another order", c.EntityID)
	case !accountCustomer.Valid || accountCustomer != orderCustomer:
		return refuse(RefusedValue, "the points of payment %s are not the order's customer's", c.EntityID)
	case !held:
		return refuse(RefusedValue, "payment %s of %d debits %d points: at no redemption value the program ever held is that its amount", c.EntityID, amount, points)
	}
	return nil
}

// programHeldRate reports whether points at some redemption value the
// program has held are worth amount: its value now, or one its change
// records (the node's outbox, never pruned, every write of the program
// the node made or admitted) show it held. An edge offline while head
// office changed the value pays at the value it last pulled (docs/trust.md,
// "Points at the value they were paid at").
func programHeldRate(ctx context.Context, tx *Tx, orgID, program string, points, amount int64) (bool, error) {
	if points <= 0 || amount%points != 0 {
		return false, nil
	}
	var n int
	err := tx.QueryRowContext(ctx, `SELECT count(*) FROM loyalty_programs WHERE id = ?1 AND org_id = ?2 AND redemption_value = ?3`,
		program, orgID, amount/points).Scan(&n)
	if err != nil || n > 0 {
		return n > 0, err
	}
	// Only a payment at another value reads the log, which has no index
	// on entity: the common case stays one row by key on the apply path.
	err = tx.QueryRowContext(ctx, `SELECT count(*) FROM outbox WHERE entity = 'loyalty_program' AND entity_id = ?1 AND org_id = ?2
		AND `+engine.D(tx).JSONInt("fields", "redemption_value")+` = ?3`, program, orgID, amount/points).Scan(&n)
	return n > 0, err
}

// recomputeAccounts rewrites the balance, lifetime points and tier of
// every loyalty account a batch touched from its points transactions; a
// balance the merge took below zero is an overdrawn conflict, listed once.
func recomputeAccounts(ctx context.Context, a *applier, accounts map[string]string) error {
	tx := a.Tx
	for id, orgID := range accounts {
		var before, balance, lifetime int64
		var program string
		err := tx.QueryRowContext(ctx, `SELECT points_balance, program_id,
			(SELECT coalesce(sum(points), 0) FROM points_transactions WHERE account_id = ?1),
			(SELECT coalesce(sum(points), 0) FROM points_transactions WHERE account_id = ?1 AND type = 'earn')
			FROM loyalty_accounts WHERE id = ?1 AND org_id = ?2`, id, orgID).Scan(&before, &program, &balance, &lifetime)
		if errors.Is(err, sql.ErrNoRows) {
			continue // its account row arrives later in the log
		}
		if err != nil {
			return err
		}
		var tiers string
		if err := tx.QueryRowContext(ctx, `SELECT tiers FROM loyalty_programs WHERE id = ? AND org_id = ?`, program, orgID).Scan(&tiers); err != nil && !errors.Is(err, sql.ErrNoRows) {
			return err
		}
		p := kassa.LoyaltyProgram{}
		decodeJSON(tiers, &p.Tiers)
		if _, err := tx.ExecContext(ctx, `UPDATE loyalty_accounts SET points_balance = ?, lifetime_points = ?, tier = ? WHERE id = ? AND org_id = ?`,
			balance, lifetime, p.TierFor(lifetime), id, orgID); err != nil {
			return err
		}
		if balance < 0 && before >= 0 {
			if err := a.Conflict(ctx, orgID, "", "overdrawn", "loyalty_account", id,
				map[string]any{"points_balance_before": before}, map[string]any{"points_balance": balance}); err != nil {
				return err
			}
		}
	}
	return nil
}

// Loyalty points as a tender (docs/loyalty.md, "Points as a tender"): a
// loyalty_points payment debits the order's customer's points in the
// payment's unit, in an entry written before the payment's row that
// names it (the hub admits the payment against it: checkPointsPayment);
// its refunds and voids credit the points back (refundPointsTender).

// redeemPointsTender debits the points that pay in.Amount of order o, for
// a loyalty_points payment (nothing for another method): the order's
// customer's account, at its program's redemption value, the amount a
// whole number of points (kassa.LoyaltyProgram.PointsToPay), within the
// balance as this node holds it (offline, the merge may overdraw it, as a
// redeem may). Errors: EInvalid naming customer_id or amount.
func redeemPointsTender(ctx context.Context, tx *Tx, o *kassa.Order, in *kassa.PaymentInitiate, paymentID string) error {
	if in.Method != kassa.PaymentLoyaltyPoints {
		return nil
	}
	if o.CustomerID == nil {
		return kassa.InvalidField("customer_id", "the order has no customer: points pay only a customer's order")
	}
	acct, err := findCustomerAccount(ctx, tx, o.OrgID, *o.CustomerID, false)
	if err != nil {
		return err
	}
	if acct == nil {
		return kassa.InvalidField("customer_id", "the order's customer has no loyalty account")
	}
	acct, prog, err := accountAndProgram(ctx, tx, o.OrgID, acct.ID) // under the account's row lock
	if err != nil {
		return err
	}
	points, err := prog.PointsToPay(in.Amount)
	if err != nil {
		return err
	}
	if points > acct.PointsBalance {
		return kassa.InvalidField("amount", fmt.Sprintf("the customer has %d points, worth at most %d", acct.PointsBalance, max(acct.PointsBalance, 0)*prog.RedemptionValue))
	}
	_, err = appendPoints(ctx, tx, acct, prog, kassa.PointsRedeem, -points, pointsOf{orderID: &o.ID, paymentID: &paymentID, reason: "payment"})
	return err
}

// returnToLedger gives back, in the unit that refunds or voids payment p,
// amount of it to the ledger it was taken from: a gift card's, or the
// customer's points.
func returnToLedger(ctx context.Context, tx *Tx, p *kassa.Payment, amount int64) error {
	if err := refundGiftCard(ctx, tx, p, amount); err != nil {
		return err
	}
	if err := refundStoreCreditTender(ctx, tx, p, amount); err != nil {
		return err
	}
	return refundPointsTender(ctx, tx, p, amount)
}

// refundPointsTender credits back to the account a loyalty_points payment
// p debited the points amount of it is worth, p.RefundedAmount being what
// was given back of it before (kassa.PointsGivenBack: the payment's
// refunds never give back more points than it took). The account takes
// them even when its program is no longer active.
func refundPointsTender(ctx context.Context, tx *Tx, p *kassa.Payment, amount int64) error {
	if p.Method != kassa.PaymentLoyaltyPoints || amount <= 0 {
		return nil
	}
	var accountID string
	var redeemed, given int64
	err := tx.QueryRowContext(ctx, `SELECT account_id, -points, (SELECT coalesce(sum(points), 0) FROM points_transactions
		WHERE payment_id = ?1 AND org_id = ?2 AND type = 'refund') FROM points_transactions WHERE payment_id = ?1 AND org_id = ?2 AND type = 'redeem'`,
		p.ID, p.OrgID).Scan(&accountID, &redeemed, &given)
	if errors.Is(err, sql.ErrNoRows) {
		return nil
	}
	if err != nil {
		return err
	}
	back := kassa.PointsGivenBack(redeemed, p.Amount, p.RefundedAmount+amount) - given
	if back <= 0 {
		return nil
	}
	acct, prog, err := accountAndProgram(ctx, tx, p.OrgID, accountID)
	if err != nil {
		return err
	}
	_, err = appendPoints(ctx, tx, acct, prog, kassa.PointsRefund, back, pointsOf{orderID: &p.OrderID, paymentID: &p.ID, reason: "refund"})
	return err
}
