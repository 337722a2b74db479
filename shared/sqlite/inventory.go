package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/google/uuid"

	"kassa.dev/shared/kassa"
	"kassa.dev/sync/change"
)

// InventoryService implements kassa.InventoryService.
//
// Stock is kept as append-only movements (DESIGN.md: on-hand = sum of
// movements). stock_levels.on_hand is a cache of that sum, updated in the
// transaction that appends, and is never part of a change record: only a
// level's identity and reorder point replicate, each node derives on-hand
// from the movements it has.
type InventoryService struct{ db *DB }

// NewInventoryService returns the inventory service of db.
func NewInventoryService(db *DB) *InventoryService { return &InventoryService{db: db} }

var _ kassa.InventoryService = (*InventoryService)(nil)

// Reference types of the movements this file writes (ref_type); sales and
// refunds write "order" and "refund".
const (
	stockRefTransfer   = "transfer"
	stockRefAdjustment = "adjustment"
)

// movement is one stock change to append.
type movement struct {
	orgID, locationID, productID string
	delta                        int64
	reason, refType, refID       string
	actor, note                  string
}

// stockLevelCols selects a level. updated_at is the later of the row's own
// stamp (identity, reorder point) and its newest movement, since on-hand
// changes do not touch the replicated row: the max of the two as rows,
// which SQLite and PostgreSQL read alike (no scalar max(a, b) there).
const stockLevelCols = `SELECT id, org_id, product_id, location_id, on_hand, reorder_point,
	(SELECT max(v) FROM (SELECT updated_at AS v UNION ALL SELECT coalesce((SELECT m.created_at FROM stock_movements m
		WHERE m.location_id = stock_levels.location_id AND m.product_id = stock_levels.product_id
		ORDER BY m.id DESC LIMIT 1), '')) AS later) FROM stock_levels`

func scanStockLevel(s scanner) (*kassa.StockLevel, error) {
	var l kassa.StockLevel
	var updated string
	if err := s.Scan(&l.ID, &l.OrgID, &l.ProductID, &l.LocationID, &l.OnHand, &l.ReorderPoint, &updated); err != nil {
		return nil, err
	}
	l.UpdatedAt = parseTime(updated)
	return &l, nil
}

func stockLevelID(l *kassa.StockLevel) string { return l.ID }

// findLevel returns the level of a product at a location, or nil when the
// product has never had stock there.
func findLevel(ctx context.Context, q querier, orgID, locationID, productID string) (*kassa.StockLevel, error) {
	l, err := scanStockLevel(q.QueryRowContext(ctx, stockLevelCols+` WHERE org_id = ? AND location_id = ? AND product_id = ?`,
		orgID, locationID, productID))
	if errors.Is(err, sql.ErrNoRows) {
		return nil, nil
	}
	return l, err
}

// levelKeyID is the id of a product's level at a location, the same on
// every node (a name-based UUID), so that two nodes that both create it
// make one row, not two.
func levelKeyID(locationID, productID string) string {
	return uuid.NewSHA1(uuid.NameSpaceURL, []byte("kassa:stock-level:"+locationID+":"+productID)).String()
}

// ensureLevel returns the level of a product at a location, creating it
// (on-hand 0, reorder point 0) when missing. The caller has checked that
// the location and product belong to the org.
func ensureLevel(ctx context.Context, tx *Tx, orgID, locationID, productID string) (*kassa.StockLevel, error) {
	l, err := findLevel(ctx, tx, orgID, locationID, productID)
	if err != nil || l != nil {
		return l, err
	}
	id := levelKeyID(locationID, productID)
	err = tx.InsertAt(ctx, entStockLevel, orgID, locationID, id, map[string]any{
		"location_id": locationID, "product_id": productID, "reorder_point": int64(0),
	})
	if err != nil {
		return nil, err
	}
	return findLevel(ctx, tx, orgID, locationID, productID)
}

// moveLevel adds delta to the on-hand of the level (creating the level
// when missing) in one statement and returns the level as it is now: the
// quick path for movements, without the level's derived updated_at.
// on_hand is the cache of the sum of movements; not a replicated column,
// so no change record.
func moveLevel(ctx context.Context, tx *Tx, orgID, locationID, productID string, delta int64) (*kassa.StockLevel, error) {
	l := kassa.StockLevel{OrgID: orgID, LocationID: locationID, ProductID: productID}
	err := tx.QueryRowContext(ctx, `UPDATE stock_levels SET on_hand = on_hand + ? WHERE org_id = ? AND location_id = ? AND product_id = ?
		RETURNING id, on_hand, reorder_point`, delta, orgID, locationID, productID).Scan(&l.ID, &l.OnHand, &l.ReorderPoint)
	if errors.Is(err, sql.ErrNoRows) {
		if _, err := ensureLevel(ctx, tx, orgID, locationID, productID); err != nil {
			return nil, err
		}
		return moveLevel(ctx, tx, orgID, locationID, productID, delta)
	}
	return &l, err
}

// writeMovement appends a movement, creates the stock level row if missing
// (reorder_point 0), updates its on_hand (a cache of the sum; on_hand is not
// written into the stock_level change record, since on-hand is derived) and
// emits inventory.low_stock when on-hand crosses the reorder point downward
// (before > reorder_point >= after, reorder_point > 0) and
// inventory.stockout when it reaches zero or below from above zero. When the
// org forbids negative stock and the movement takes on-hand below zero, it
// returns an EConflict error naming the product. The caller has checked
// that the location and product belong to the org.
func writeMovement(ctx context.Context, tx *Tx, m movement) (*kassa.StockLevel, error) {
	if m.delta == 0 {
		return nil, fmt.Errorf("sqlite: empty stock movement of product %s", m.productID)
	}
	lvl, err := moveLevel(ctx, tx, m.orgID, m.locationID, m.productID, m.delta)
	if err != nil {
		return nil, err
	}
	after := lvl.OnHand
	before := after - m.delta
	if m.delta < 0 && after < 0 {
		set, err := orgSettings(ctx, tx, m.orgID)
		if err != nil {
			return nil, err
		}
		if !set.AllowNegativeStock {
			// Take the move back: a caller that goes on after the refusal
			// must find on-hand as it was.
			if _, err := moveLevel(ctx, tx, m.orgID, m.locationID, m.productID, -m.delta); err != nil {
				return nil, err
			}
			var name string
			if err := tx.QueryRowContext(ctx, `SELECT name FROM products WHERE id = ?`, m.productID).Scan(&name); err != nil {
				return nil, err
			}
			return nil, kassa.Errorf(kassa.EConflict, "not enough stock of %q (product %s): %d on hand, %d needed, and the org does not allow negative stock",
				name, m.productID, before, -m.delta)
		}
	}
	err = tx.InsertAt(ctx, entMovement, m.orgID, m.locationID, tx.DB.NewID(), map[string]any{
		"location_id": m.locationID, "product_id": m.productID, "delta": m.delta, "reason": m.reason,
		"ref_type": m.refType, "ref_id": nullString(m.refID), "actor": nullString(m.actor), "note": m.note,
	})
	if err != nil {
		return nil, err
	}
	lvl.UpdatedAt = tx.Now // what findLevel would read now
	low, out := lvl.ReorderPoint > 0 && before > lvl.ReorderPoint && after <= lvl.ReorderPoint, before > 0 && after <= 0
	if low || out {
		if err := addReserved(ctx, tx.DB, tx, lvl); err != nil {
			return nil, err
		}
	}
	if low {
		tx.Emit(m.orgID, m.locationID, kassa.EventInventoryLowStock, *lvl)
	}
	if out {
		tx.Emit(m.orgID, m.locationID, kassa.EventInventoryStockout, *lvl)
	}
	return lvl, nil
}

// FindStock lists the org's stock levels by id, filtered by location and
// product; LowOnly keeps those at or below a positive reorder point.
func (s *InventoryService) FindStock(ctx context.Context, f kassa.StockFilter) (kassa.List[kassa.StockLevel], error) {
	a, err := kassa.MustActor(ctx)
	if err != nil {
		return kassa.List[kassa.StockLevel]{}, err
	}
	w := orgFilter(a.OrgID)
	eq(w, "location_id", f.LocationID)
	eq(w, "product_id", f.ProductID)
	if f.LowOnly {
		w.and("reorder_point > 0 AND on_hand <= reorder_point")
	}
	l, err := findPage(ctx, s.db.Reader, stockLevelCols, w, f.Page, scanStockLevel, stockLevelID)
	for i := range l.Items {
		if err == nil {
			err = addReserved(ctx, s.db.DB, s.db.Reader, &l.Items[i])
		}
	}
	return l, err
}

// Adjust records a manual stock change with a reason code and returns the
// level after it. "count" sets the on-hand to the counted quantity by
// writing the difference (nothing when it matches); losses are taken off
// whatever the sign of the quantity (kassa.StockAdjust.Delta). A given
// reorder point is set first, so the movement's low-stock check uses it.
// Errors: EInvalid (also for a location or product not in the org),
// EConflict (negative stock the org forbids).
func (s *InventoryService) Adjust(ctx context.Context, in *kassa.StockAdjust) (*kassa.StockLevel, error) {
	a, err := kassa.MustActor(ctx)
	if err != nil {
		return nil, err
	}
	if err := in.Validate(); err != nil {
		return nil, err
	}
	err = s.db.Write(ctx, func(tx *Tx) error {
		var v kassa.Validation
		v.Check(exists(ctx, tx, "locations", a.OrgID, in.LocationID), "location_id", "no such location")
		v.Check(exists(ctx, tx, "products", a.OrgID, in.ProductID), "product_id", "no such product")
		v.Check(!isBundle(ctx, tx, a.OrgID, in.ProductID), "product_id", "is a bundle: its stock is its components'")
		if err := v.Err(); err != nil {
			return err
		}
		lvl, err := findLevel(ctx, tx, a.OrgID, in.LocationID, in.ProductID)
		if err != nil {
			return err
		}
		delta := in.Delta()
		if in.Reason == kassa.ReasonCount {
			delta = in.Quantity
			if lvl != nil {
				delta -= lvl.OnHand
			}
		}
		if lvl == nil && (delta == 0 || in.ReorderPoint != nil) {
			// A count that matches still establishes the level.
			if lvl, err = ensureLevel(ctx, tx, a.OrgID, in.LocationID, in.ProductID); err != nil {
				return err
			}
		}
		if in.ReorderPoint != nil {
			cols := map[string]any{}
			changed(cols, "reorder_point", lvl.ReorderPoint, *in.ReorderPoint)
			if err := tx.UpdateAt(ctx, entStockLevel, a.OrgID, in.LocationID, lvl.ID, cols); err != nil {
				return err
			}
		}
		if delta == 0 {
			return nil
		}
		_, err = writeMovement(ctx, tx, movement{
			orgID: a.OrgID, locationID: in.LocationID, productID: in.ProductID, delta: delta,
			reason: in.Reason, refType: stockRefAdjustment, actor: a.Ref(), note: in.Note,
		})
		return err
	})
	if err != nil {
		return nil, err
	}
	lvl, err := findLevel(ctx, s.db.Reader, a.OrgID, in.LocationID, in.ProductID)
	if err == nil && lvl != nil {
		err = addReserved(ctx, s.db.DB, s.db.Reader, lvl)
	}
	return lvl, err
}

const movementCols = `SELECT id, org_id, product_id, location_id, delta, reason, ref_type, ref_id, actor, note, origin, created_at FROM stock_movements`

func scanMovement(s scanner) (*kassa.Movement, error) {
	var m kassa.Movement
	var created string
	if err := s.Scan(&m.ID, &m.OrgID, &m.ProductID, &m.LocationID, &m.Delta, &m.Reason, &m.RefType, &m.RefID,
		&m.Actor, &m.Note, &m.Origin, &created); err != nil {
		return nil, err
	}
	m.CreatedAt = parseTime(created)
	return &m, nil
}

func movementID(m *kassa.Movement) string { return m.ID }

// FindMovements lists the org's movements in the order they were written
// (by id), filtered by location, product and reference type.
func (s *InventoryService) FindMovements(ctx context.Context, f kassa.MovementFilter) (kassa.List[kassa.Movement], error) {
	a, err := kassa.MustActor(ctx)
	if err != nil {
		return kassa.List[kassa.Movement]{}, err
	}
	w := orgFilter(a.OrgID)
	eq(w, "location_id", f.LocationID)
	eq(w, "product_id", f.ProductID)
	w.eqText("ref_type", f.RefType)
	return findPage(ctx, s.db.Reader, movementCols, w, f.Page, scanMovement, movementID)
}

const transferCols = `SELECT id, org_id, from_location_id, to_location_id, status, lines, notes, received_at, cancelled_at, created_at, updated_at FROM transfers`

func scanTransfer(s scanner) (*kassa.Transfer, error) {
	var t kassa.Transfer
	var lines, created, updated string
	var received, cancelled sql.NullString
	if err := s.Scan(&t.ID, &t.OrgID, &t.FromLocationID, &t.ToLocationID, &t.Status, &lines, &t.Notes,
		&received, &cancelled, &created, &updated); err != nil {
		return nil, err
	}
	t.CreatedAt, t.UpdatedAt = parseTime(created), parseTime(updated)
	t.ReceivedAt, t.CancelledAt = nullTime(received), nullTime(cancelled)
	t.Lines = []kassa.TransferLine{}
	return &t, decodeJSON(lines, &t.Lines)
}

func transferID(t *kassa.Transfer) string { return t.ID }

func findTransfer(ctx context.Context, q querier, orgID, id string) (*kassa.Transfer, error) {
	return findByID(ctx, q, transferCols, "transfer", orgID, id, scanTransfer)
}

// FindTransfers lists the org's transfers by id.
func (s *InventoryService) FindTransfers(ctx context.Context, p kassa.Page) (kassa.List[kassa.Transfer], error) {
	a, err := kassa.MustActor(ctx)
	if err != nil {
		return kassa.List[kassa.Transfer]{}, err
	}
	return findPage(ctx, s.db.Reader, transferCols, orgFilter(a.OrgID), p, scanTransfer, transferID)
}

// FindTransferByID returns one transfer of the org with its lines, or ENotFound.
func (s *InventoryService) FindTransferByID(ctx context.Context, id string) (*kassa.Transfer, error) {
	return readOwn(ctx, s.db, findTransfer, id)
}

// CreateTransfer records a transfer in transit and takes its lines off the
// source's stock (transfer_out movements). Errors: EInvalid (also for
// locations or products not in the org), EConflict (negative stock the org
// forbids).
func (s *InventoryService) CreateTransfer(ctx context.Context, in *kassa.TransferCreate) (*kassa.Transfer, error) {
	a, err := kassa.MustActor(ctx)
	if err != nil {
		return nil, err
	}
	if err := in.Validate(); err != nil {
		return nil, err
	}
	id := s.db.NewID()
	return writeRead(ctx, s.db, findTransfer, a.OrgID, id, func(tx *Tx) error {
		var v kassa.Validation
		v.Check(exists(ctx, tx, "locations", a.OrgID, in.FromLocationID), "from_location_id", "no such location")
		v.Check(exists(ctx, tx, "locations", a.OrgID, in.ToLocationID), "to_location_id", "no such location")
		for i, l := range in.Lines {
			if !exists(ctx, tx, "products", a.OrgID, l.ProductID) {
				v.Add("lines", "line %d: no such product: %s", i+1, l.ProductID)
				break
			}
		}
		if err := v.Err(); err != nil {
			return err
		}
		// Transfers are org-wide records: both locations' edges (and the
		// hub) need them, so their change records name no location.
		err := tx.Insert(ctx, entTransfer, a.OrgID, id, map[string]any{
			"from_location_id": in.FromLocationID, "to_location_id": in.ToLocationID, "status": kassa.TransferInTransit,
			"lines": in.Lines, "notes": in.Notes,
		})
		if err != nil {
			return err
		}
		return moveLines(ctx, tx, a, id, in.FromLocationID, in.Lines, -1, kassa.ReasonTransferOut, "")
	})
}

// moveLines writes one movement per transfer line at a location, with the
// quantities times sign.
func moveLines(ctx context.Context, tx *Tx, a *kassa.Actor, transferID, locationID string, lines []kassa.TransferLine, sign int64, reason, note string) error {
	for _, l := range lines {
		_, err := writeMovement(ctx, tx, movement{
			orgID: a.OrgID, locationID: locationID, productID: l.ProductID, delta: sign * l.Quantity,
			reason: reason, refType: stockRefTransfer, refID: transferID, actor: a.Ref(), note: note,
		})
		if err != nil {
			return err
		}
	}
	return nil
}

// ReceiveTransfer books an in-transit transfer into the destination's stock
// (transfer_in movements) and emits inventory.transfer_completed. Errors:
// ENotFound, EConflict when the transfer is not in transit.
func (s *InventoryService) ReceiveTransfer(ctx context.Context, id string) (*kassa.Transfer, error) {
	return s.finishTransfer(ctx, id, kassa.TransferReceived)
}

// CancelTransfer cancels an in-transit transfer and returns its stock to
// the source (movements of reason correction, noted "transfer cancelled").
// Errors: ENotFound, EConflict when the transfer is not in transit.
func (s *InventoryService) CancelTransfer(ctx context.Context, id string) (*kassa.Transfer, error) {
	return s.finishTransfer(ctx, id, kassa.TransferCancelled)
}

// finishTransfer moves an in-transit transfer to status (received or
// cancelled) with its movements.
func (s *InventoryService) finishTransfer(ctx context.Context, id, status string) (*kassa.Transfer, error) {
	a, err := kassa.MustActor(ctx)
	if err != nil {
		return nil, err
	}
	return writeRead(ctx, s.db, findTransfer, a.OrgID, id, func(tx *Tx) error {
		t, err := findTransfer(ctx, tx, a.OrgID, id)
		if err != nil {
			return err
		}
		if t.Status != kassa.TransferInTransit {
			verb := map[string]string{kassa.TransferReceived: "received", kassa.TransferCancelled: "cancelled"}[status]
			return kassa.Errorf(kassa.EConflict, "transfer %s is %s; only a transfer in transit can be %s", id, t.Status, verb)
		}
		cols := map[string]any{"status": status}
		if status == kassa.TransferReceived {
			err = moveLines(ctx, tx, a, id, t.ToLocationID, t.Lines, 1, kassa.ReasonTransferIn, "")
			cols["received_at"] = tx.Now
		} else {
			err = moveLines(ctx, tx, a, id, t.FromLocationID, t.Lines, 1, kassa.ReasonCorrection, "transfer cancelled")
			cols["cancelled_at"] = tx.Now
		}
		if err != nil {
			return err
		}
		if err := tx.Update(ctx, entTransfer, a.OrgID, id, cols); err != nil {
			return err
		}
		if status == kassa.TransferReceived {
			done, err := findTransfer(ctx, tx, a.OrgID, id)
			if err != nil {
				return err
			}
			tx.Emit(a.OrgID, t.ToLocationID, kassa.EventInventoryTransferDone, *done)
		}
		return nil
	})
}

// Stock: a level's on-hand is derived from its movements; transfers
// belong to both their locations.
var entStockLevel, entMovement, entTransfer = new(noun), new(noun), new(noun)

func init() {
	register(entStockLevel, noun{Name: "stock_level", Table: "stock_levels", Digest: locationRows, Derived: []string{"on_hand"}, Recompute: recomputeLevels,
		Edge: &edgeRule{Loc: ownLocation, Update: []string{"reorder_point", "on_hand"}, Once: []string{"location_id", "product_id"}, ScopesOf: levelScopes,
			Refs: []ref{{Col: "product_id", Table: "products"}}, Check: checkStockLevel},
		Events: map[string]eventSubject{
			kassa.EventInventoryLowStock: {AtLocation: true, Same: []string{"product_id"}},
			kassa.EventInventoryStockout: {AtLocation: true, Same: []string{"product_id"}}}})
	register(entMovement, noun{Name: "stock_movement", Table: "stock_movements", Merge: mergeAppend, Digest: locationRows,
		Edge: &edgeRule{Loc: ownLocation, ScopesOf: movementScopes,
			Refs: []ref{{Col: "product_id", Table: "products"}}, Check: checkMovement},
		Track: func(a *applier, c *change.Change, f map[string]any) {
			a.Touch(entStockLevel, fieldText(f, "location_id")+"\x00"+fieldText(f, "product_id"), c.OrgID)
		}})
	register(entTransfer, noun{Name: "transfer", Table: "transfers", Digest: orgRows,
		Edge: &edgeRule{Loc: eitherEnd, Ends: [2]string{"from_location_id", "to_location_id"}, Update: []string{"status", "received_at", "cancelled_at"}, Scopes: inventoryWrite,
			Once:  []string{"from_location_id", "to_location_id", "lines", "notes"},
			Refs:  []ref{{Col: "from_location_id", Table: "locations"}, {Col: "to_location_id", Table: "locations"}, {Col: "lines", Table: "products", Key: "product_id"}},
			Check: checkTransfer},
		Events: map[string]eventSubject{kassa.EventInventoryTransferDone: {Same: []string{"from_location_id", "to_location_id"}}}})
}

func checkMovement(_ context.Context, _ *admitter, c *change.Change, f map[string]any) error {
	reasons := append(slices.Clone(kassa.AdjustReasons), kassa.ReasonSale, kassa.ReasonRefund, kassa.ReasonTransferOut, kassa.ReasonTransferIn,
		kassa.ReasonLaybyReserve, kassa.ReasonLaybyRelease)
	if err := firstErr(within(f, "delta", -maxQuantity, maxQuantity, true), oneOf(f, "reason", true, reasons...),
		oneOf(f, "ref_type", true, "order", "refund", "transfer", "adjustment", kassa.RefLayby)); err != nil {
		return err
	}
	if f["delta"] == int64(0) {
		return refuse(RefusedValue, "a movement moves stock")
	}
	if a, ok := f["actor"]; ok && a != nil && a != c.Actor {
		return refuse(RefusedField, "the movement's actor is not the change's")
	}
	return nil
}

// movementScopes: a sale or a refund moves stock as part of the order;
// adjustments and transfers are inventory writes.
func movementScopes(_ *change.Change, f map[string]any) []kassa.Scope {
	switch f["reason"] {
	case kassa.ReasonSale, kassa.ReasonRefund, kassa.ReasonLaybyReserve, kassa.ReasonLaybyRelease:
		return saleWrite
	}
	return inventoryWrite
}

// levelScopes: a sale creates the level of a product it is the first to
// move; its reorder point is an inventory write.
func levelScopes(c *change.Change, _ map[string]any) []kassa.Scope {
	if c.Op == change.OpInsert {
		return []kassa.Scope{kassa.ScopeInventoryWrite, kassa.ScopeOrdersWrite}
	}
	return inventoryWrite
}

func checkStockLevel(_ context.Context, ad *admitter, c *change.Change, f map[string]any) error {
	if c.Op == change.OpInsert {
		product, _ := f["product_id"].(string)
		if c.EntityID != levelKeyID(ad.From.LocationID, product) {
			return refuse(RefusedValue, "a stock level's id is derived from its location and product")
		}
	}
	return within(f, "reorder_point", 0, maxQuantity, false)
}

func checkTransfer(_ context.Context, _ *admitter, c *change.Change, f map[string]any) error {
	if c.Op == change.OpInsert {
		in := &kassa.TransferCreate{}
		if err := asInput(f, in); err != nil {
			return err
		}
		if err := validated(in.Validate()); err != nil {
			return err
		}
		if s, _ := f["status"].(string); s != "in_transit" {
			return refuse(RefusedValue, "a transfer is created in transit")
		}
		return nil
	}
	return oneOf(f, "status", false, "received", "cancelled")
}

// recomputeLevels rewrites the on-hand of every stock level a batch's
// movements touched (key: location and product) from its movements; an
// on-hand the merge took below zero is an oversold conflict, listed once,
// with a stockout event.
func recomputeLevels(ctx context.Context, a *applier, levels map[string]string) error {
	tx := a.Tx
	for k, orgID := range levels {
		loc, product, _ := strings.Cut(k, "\x00")
		var before int64
		err := tx.QueryRowContext(ctx, `SELECT on_hand FROM stock_levels WHERE org_id = ? AND location_id = ? AND product_id = ?`, orgID, loc, product).Scan(&before)
		if errors.Is(err, sql.ErrNoRows) {
			// The level's own change has not arrived: create it as its origin did (the id is derived).
			_, err = tx.ExecContext(ctx, `INSERT INTO stock_levels (id, org_id, location_id, product_id, on_hand, reorder_point, created_at, updated_at, hlc, origin)
				VALUES (?, ?, ?, ?, 0, 0, ?, ?, '', '')`, levelKeyID(loc, product), orgID, loc, product, fmtTime(tx.Now), fmtTime(tx.Now))
		}
		if err != nil {
			return err
		}
		var after int64
		// org_id || '': the sum searches the level's own movements
		// (stock_movements_level), not all of the location's
		// (stock_movements_created), which SQLite picks otherwise.
		if err := tx.QueryRowContext(ctx, `UPDATE stock_levels SET on_hand = (SELECT coalesce(sum(delta), 0) FROM stock_movements
			WHERE org_id || '' = ?3 AND location_id = ?1 AND product_id = ?2) WHERE org_id = ?3 AND location_id = ?1 AND product_id = ?2 RETURNING on_hand`,
			loc, product, orgID).Scan(&after); err != nil {
			return err
		}
		if after < 0 && before >= 0 {
			if err := a.Conflict(ctx, orgID, loc, "oversold", "stock_level", levelKeyID(loc, product),
				map[string]any{"on_hand_before": before}, map[string]any{"on_hand": after, "product_id": product}); err != nil {
				return err
			}
			lvl, err := findLevel(ctx, tx, orgID, loc, product)
			if err == nil {
				err = addReserved(ctx, tx.DB, tx, lvl)
			}
			if err != nil {
				return err
			}
			tx.Emit(orgID, loc, kassa.EventInventoryStockout, lvl)
		}
	}
	return nil
}
