package sqlite

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"golang.org/x/text/currency"

	"kassa.dev/shared/kassa"
	"kassa.dev/sync/change"
)

// DrawerService implements kassa.DrawerService (docs/drawers.md). A
// drawer's figures are never stored as running totals: every X and Z is
// kassa.Tally of its append-only entries, so the hub, holding the same
// entries, tallies the same Z.
type DrawerService struct{ db *DB }

// NewDrawerService returns the drawer service of db.
func NewDrawerService(db *DB) *DrawerService { return &DrawerService{db: db} }

var _ kassa.DrawerService = (*DrawerService)(nil)

const drawerCols = `SELECT id, org_id, location_id, register_id, currency, business_day, status, opened_by,
	coalesce((SELECT name FROM users WHERE users.id = opened_by), ''), opened_at, float, float_count,
	closed_by, closed_at, z_report_id, created_at, updated_at FROM drawer_sessions`

func scanDrawer(s scanner) (*kassa.DrawerSession, error) {
	var d kassa.DrawerSession
	var opened, counts, created, updated string
	var closed sql.NullString
	if err := s.Scan(&d.ID, &d.OrgID, &d.LocationID, &d.RegisterID, &d.Currency, &d.BusinessDay, &d.Status, &d.OpenedBy, &d.OpenedByName, &opened,
		&d.Float, &counts, &d.ClosedBy, &closed, &d.ZReportID, &created, &updated); err != nil {
		return nil, err
	}
	d.FloatCount = []kassa.DenominationCount{}
	if err := decodeJSON(counts, &d.FloatCount); err != nil {
		return nil, err
	}
	d.OpenedAt, d.ClosedAt, d.CreatedAt, d.UpdatedAt = parseTime(opened), nullTime(closed), parseTime(created), parseTime(updated)
	return &d, nil
}

func drawerID(d *kassa.DrawerSession) string { return d.ID }

func findDrawer(ctx context.Context, q querier, orgID, id string) (*kassa.DrawerSession, error) {
	return findByID(ctx, q, drawerCols, "drawer session", orgID, id, scanDrawer)
}

// openDrawerAt returns the open drawer of a register, or ENotFound.
func openDrawerAt(ctx context.Context, q querier, orgID, registerID string) (*kassa.DrawerSession, error) {
	d, err := scanDrawer(q.QueryRowContext(ctx, drawerCols+` WHERE org_id = ? AND register_id = ? AND status = 'open'`, orgID, registerID))
	if errors.Is(err, sql.ErrNoRows) {
		return nil, kassa.NotFound("open drawer at register", registerID)
	}
	return d, err
}

// edgeOwned refuses a drawer write at the hub for a location with an
// enrolled edge: that edge owns the location's drawers, so two nodes never
// number one register's Z reports or move one drawer's cash.
func edgeOwned(ctx context.Context, tx *Tx, locationID string) error {
	if !tx.DB.Hub || rowCount(ctx, tx, `SELECT count(*) FROM sync_nodes WHERE location_id = ? AND revoked_at IS NULL`, locationID) == 0 {
		return nil
	}
	return conflictOn("register_id", "this store's drawers are kept at the store: open, count and close them on its till")
}

// conflictOn is an EConflict problem that names the field it is about.
func conflictOn(field, format string, args ...any) *kassa.Error {
	msg := fmt.Sprintf(format, args...)
	return &kassa.Error{Kind: kassa.EConflict, Message: msg, Fields: []kassa.FieldError{{Field: field, Message: msg}}}
}

const drawerEntryCols = `SELECT id, drawer_id, type, method, amount, tendered, change, payment_id, refund_id, reason, created_by, created_at FROM drawer_entries`

func scanDrawerEntry(s scanner) (*kassa.DrawerEntry, error) {
	var e kassa.DrawerEntry
	var created string
	if err := s.Scan(&e.ID, &e.DrawerID, &e.Type, &e.Method, &e.Amount, &e.Tendered, &e.Change, &e.PaymentID, &e.RefundID,
		&e.Reason, &e.CreatedBy, &created); err != nil {
		return nil, err
	}
	e.CreatedAt = parseTime(created)
	return &e, nil
}

// drawerEntries reads a drawer's entries in the order they were written.
func drawerEntries(ctx context.Context, q querier, drawerID string) ([]kassa.DrawerEntry, error) {
	rows, err := q.QueryContext(ctx, drawerEntryCols+` WHERE drawer_id = ? ORDER BY created_at, id`, drawerID)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := []kassa.DrawerEntry{}
	for rows.Next() {
		e, err := scanDrawerEntry(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, *e)
	}
	return out, rows.Err()
}

// drawerEntry is one entry to append to a drawer.
type drawerEntry struct {
	typ                 kassa.DrawerEntryType
	method              kassa.PaymentMethod
	amount              int64
	tendered, change    *int64
	paymentID, refundID string
	reason              string
}

// appendDrawerEntry writes e into drawer d; it returns the entry's id.
func appendDrawerEntry(ctx context.Context, tx *Tx, d *kassa.DrawerSession, by string, e drawerEntry) (string, error) {
	id := tx.DB.NewID()
	cols := map[string]any{
		"location_id": d.LocationID, "drawer_id": d.ID, "type": string(e.typ), "method": string(e.method), "amount": e.amount,
		"tendered": e.tendered, "change": e.change, "payment_id": nullString(e.paymentID), "refund_id": nullString(e.refundID),
		"reason": e.reason, "created_by": by,
	}
	return id, tx.InsertAt(ctx, entDrawerEntry, d.OrgID, d.LocationID, id, cols)
}

// actorRef names a for opened_by, created_by and closed_by.
func actorRef(a *kassa.Actor) string {
	if p := actorID(a); p != nil {
		return *p
	}
	return ""
}

// OpenDrawer opens a drawer at an active register with a counted float,
// in the location's currency, on the location's business day. Errors:
// EInvalid (the register, the count), EConflict (a drawer is open there).
func (s *DrawerService) OpenDrawer(ctx context.Context, in *kassa.DrawerOpenRequest) (*kassa.DrawerSession, error) {
	a, err := kassa.MustActor(ctx)
	if err != nil {
		return nil, err
	}
	if err := in.Validate(); err != nil {
		return nil, err
	}
	reg, err := findRegister(ctx, s.db.Reader, a.OrgID, in.RegisterID)
	if err != nil || !reg.IsActive {
		return nil, kassa.InvalidField("register_id", "is not an active register of the org")
	}
	loc, err := findLocation(ctx, s.db.Reader, a.OrgID, reg.LocationID)
	if err != nil {
		return nil, err
	}
	float, err := in.Float.Total(cashCurrency(loc.Currency), "float.")
	if err != nil {
		return nil, err
	}
	id := s.db.NewID()
	return writeRead(ctx, s.db, findDrawer, a.OrgID, id, func(tx *Tx) error {
		if err := edgeOwned(ctx, tx, reg.LocationID); err != nil {
			return err
		}
		if _, err := openDrawerAt(ctx, tx, a.OrgID, reg.ID); err == nil {
			return conflictOn("register_id", "register %s already has an open drawer: close it first", reg.Name)
		}
		d := &kassa.DrawerSession{ID: id, OrgID: a.OrgID, LocationID: reg.LocationID}
		if err := tx.InsertAt(ctx, entDrawer, a.OrgID, reg.LocationID, id, map[string]any{
			"location_id": reg.LocationID, "register_id": reg.ID, "currency": loc.Currency,
			"business_day": kassa.BusinessDay(tx.Now, loc.Day()), "status": kassa.DrawerOpen, "opened_by": actorRef(a),
			"opened_at": tx.Now, "float": float, "float_count": countsOf(in.Float),
		}); err != nil {
			return err
		}
		_, err := appendDrawerEntry(ctx, tx, d, actorRef(a), drawerEntry{typ: kassa.DrawerFloat, method: kassa.PaymentCash, amount: float})
		return err
	})
}

// cashCurrency describes an ISO 4217 currency for counting cash: its
// minor-unit digits from golang.org/x/text/currency (2 when unknown).
func cashCurrency(code string) kassa.CashCurrency {
	c := kassa.CashCurrency{Code: code, Decimals: 2}
	if u, err := currency.ParseISO(code); err == nil {
		c.Decimals, _ = currency.Standard.Rounding(u)
	}
	return c
}

// countsOf is a count's denominations as stored: [] when counted by amount.
func countsOf(c kassa.CashCount) []kassa.DenominationCount {
	if c.Denominations == nil {
		return []kassa.DenominationCount{}
	}
	return c.Denominations
}

// FindDrawers lists the org's drawer sessions (readers of reports).
func (s *DrawerService) FindDrawers(ctx context.Context, f kassa.DrawerFilter) (kassa.List[kassa.DrawerSession], error) {
	a, err := kassa.MustActor(ctx)
	if err != nil {
		return kassa.List[kassa.DrawerSession]{}, err
	}
	w := orgFilter(a.OrgID)
	eq(w, "location_id", f.LocationID)
	eq(w, "register_id", f.RegisterID)
	w.eqText("status", f.Status)
	w.eqText("business_day", f.BusinessDay)
	return findPage(ctx, s.db.Reader, drawerCols, w, f.Page, scanDrawer, drawerID)
}

// FindDrawerByID returns one drawer session of the org, or ENotFound.
func (s *DrawerService) FindDrawerByID(ctx context.Context, id string) (*kassa.DrawerSession, error) {
	return readOwn(ctx, s.db, findDrawer, id)
}

// DrawerEntries lists a drawer's entries, oldest first. Errors: ENotFound.
func (s *DrawerService) DrawerEntries(ctx context.Context, id string) ([]kassa.DrawerEntry, error) {
	d, err := readOwn(ctx, s.db, findDrawer, id)
	if err != nil {
		return nil, err
	}
	return drawerEntries(ctx, s.db.Reader, d.ID)
}

// PayIn records cash put into an open drawer (managers and owners).
func (s *DrawerService) PayIn(ctx context.Context, id string, in *kassa.DrawerCashRequest) (*kassa.DrawerEntry, error) {
	return s.move(ctx, id, kassa.DrawerPaidIn, in)
}

// PayOut records cash taken out of an open drawer (managers and owners);
// more than the drawer holds is refused. Errors: EConflict.
func (s *DrawerService) PayOut(ctx context.Context, id string, in *kassa.DrawerCashRequest) (*kassa.DrawerEntry, error) {
	return s.move(ctx, id, kassa.DrawerPaidOut, in)
}

// move writes a paid-in or paid-out.
func (s *DrawerService) move(ctx context.Context, id string, typ kassa.DrawerEntryType, in *kassa.DrawerCashRequest) (*kassa.DrawerEntry, error) {
	a, err := kassa.MustActor(ctx)
	if err != nil {
		return nil, err
	}
	if err := kassa.CanMoveDrawerCash(a); err != nil {
		return nil, err
	}
	return s.entry(ctx, a, id, func(d *kassa.DrawerSession, t kassa.DrawerTotals) (drawerEntry, error) {
		if err := in.Validate(cashCurrency(d.Currency)); err != nil {
			return drawerEntry{}, err
		}
		if typ == kassa.DrawerPaidIn {
			return drawerEntry{typ: typ, method: kassa.PaymentCash, amount: in.Amount, reason: in.Reason}, nil
		}
		if in.Amount > t.Expected {
			return drawerEntry{}, conflictOn("amount", "the drawer holds %d; a paid-out of %d is more than that", t.Expected, in.Amount)
		}
		return drawerEntry{typ: typ, method: kassa.PaymentCash, amount: -in.Amount, reason: in.Reason}, nil
	})
}

// NoSale records that the drawer was opened without a sale.
func (s *DrawerService) NoSale(ctx context.Context, id string, in *kassa.DrawerNoSaleRequest) (*kassa.DrawerEntry, error) {
	a, err := kassa.MustActor(ctx)
	if err != nil {
		return nil, err
	}
	if err := in.Validate(); err != nil {
		return nil, err
	}
	return s.entry(ctx, a, id, func(*kassa.DrawerSession, kassa.DrawerTotals) (drawerEntry, error) {
		return drawerEntry{typ: kassa.DrawerNoSale, method: kassa.PaymentCash, reason: in.Reason}, nil
	})
}

// entry appends the entry decide makes of an open drawer and its figures
// so far, in one unit. Errors: ENotFound, EConflict (a closed drawer).
func (s *DrawerService) entry(ctx context.Context, a *kassa.Actor, id string, decide func(*kassa.DrawerSession, kassa.DrawerTotals) (drawerEntry, error)) (*kassa.DrawerEntry, error) {
	var entryID string
	err := s.db.Write(ctx, func(tx *Tx) error {
		d, t, err := openDrawer(ctx, tx, a.OrgID, id)
		if err != nil {
			return err
		}
		e, err := decide(d, t)
		if err != nil {
			return err
		}
		entryID, err = appendDrawerEntry(ctx, tx, d, actorRef(a), e)
		return err
	})
	if err != nil {
		return nil, err
	}
	return scanDrawerEntry(s.db.Reader.QueryRowContext(ctx, drawerEntryCols+` WHERE id = ?`, entryID))
}

// openDrawer reads a drawer that must be open, and its figures so far.
func openDrawer(ctx context.Context, q querier, orgID, id string) (*kassa.DrawerSession, kassa.DrawerTotals, error) {
	d, err := findDrawer(ctx, q, orgID, id)
	if err != nil {
		return nil, kassa.DrawerTotals{}, err
	}
	if d.Status != kassa.DrawerOpen {
		return nil, kassa.DrawerTotals{}, conflictOn("status", "the drawer is closed (Z report of %s)", d.BusinessDay)
	}
	if tx, ok := q.(*Tx); ok {
		if err := edgeOwned(ctx, tx, d.LocationID); err != nil {
			return nil, kassa.DrawerTotals{}, err
		}
	}
	entries, err := drawerEntries(ctx, q, d.ID)
	return d, kassa.Tally(entries), err
}

// XReport returns an open or closed drawer's figures so far; it changes
// nothing.
func (s *DrawerService) XReport(ctx context.Context, id string) (*kassa.XReport, error) {
	d, err := readOwn(ctx, s.db, findDrawer, id)
	if err != nil {
		return nil, err
	}
	entries, err := drawerEntries(ctx, s.db.Reader, d.ID)
	if err != nil {
		return nil, err
	}
	return &kassa.XReport{Drawer: *d, DrawerTotals: kassa.Tally(entries), At: s.db.Now()}, nil
}

// CloseDrawer closes an open drawer with a blind count and writes its Z
// report, numbered next on the register. Errors: EInvalid (the count),
// EConflict (closed already), ENotFound.
func (s *DrawerService) CloseDrawer(ctx context.Context, id string, in *kassa.DrawerCloseRequest) (*kassa.ZReport, error) {
	a, err := kassa.MustActor(ctx)
	if err != nil {
		return nil, err
	}
	if err := in.Validate(); err != nil {
		return nil, err
	}
	d, err := findDrawer(ctx, s.db.Reader, a.OrgID, id)
	if err != nil {
		return nil, err
	}
	counted, err := in.Count.Total(cashCurrency(d.Currency), "count.")
	if err != nil {
		return nil, err
	}
	zID := s.db.NewID()
	return writeRead(ctx, s.db, findZReport, a.OrgID, zID, func(tx *Tx) error {
		d, t, err := openDrawer(ctx, tx, a.OrgID, id)
		if err != nil {
			return err
		}
		if err := writeZReport(ctx, tx, d, t, zID, a, counted, in); err != nil {
			return err
		}
		return tx.UpdateAt(ctx, entDrawer, a.OrgID, d.LocationID, d.ID, map[string]any{
			"status": kassa.DrawerClosed, "closed_by": actorRef(a), "closed_at": tx.Now, "z_report_id": zID,
		})
	})
}

// writeZReport appends drawer d's Z report: the next number of its
// register, its tally, the count and the difference.
func writeZReport(ctx context.Context, tx *Tx, d *kassa.DrawerSession, t kassa.DrawerTotals, zID string, a *kassa.Actor, counted int64, in *kassa.DrawerCloseRequest) error {
	var number int64
	if err := tx.QueryRowContext(ctx, `SELECT coalesce(max(number), 0) + 1 FROM z_reports WHERE register_id = ?`, d.RegisterID).Scan(&number); err != nil {
		return err
	}
	totals, err := json.Marshal(t)
	if err != nil {
		return err
	}
	return tx.InsertAt(ctx, entZReport, d.OrgID, d.LocationID, zID, map[string]any{
		"location_id": d.LocationID, "register_id": d.RegisterID, "drawer_id": d.ID, "number": number,
		"business_day": d.BusinessDay, "currency": d.Currency, "totals": string(totals), "counted": counted,
		"count": countsOf(in.Count), "over_short": counted - t.Expected, "note": in.Note,
		"opened_by": d.OpenedBy, "opened_at": d.OpenedAt, "closed_by": actorRef(a), "closed_at": tx.Now,
	})
}

const zReportCols = `SELECT id, org_id, location_id, register_id, drawer_id, number, business_day, currency, totals, counted, count,
	over_short, note, opened_by, opened_at, closed_by, closed_at, origin FROM z_reports`

func scanZReport(s scanner) (*kassa.ZReport, error) {
	var z kassa.ZReport
	var totals, count, opened, closed string
	if err := s.Scan(&z.ID, &z.OrgID, &z.LocationID, &z.RegisterID, &z.DrawerID, &z.Number, &z.BusinessDay, &z.Currency, &totals,
		&z.Counted, &count, &z.OverShort, &z.Note, &z.OpenedBy, &opened, &z.ClosedBy, &closed, &z.Origin); err != nil {
		return nil, err
	}
	if err := decodeJSON(totals, &z.DrawerTotals); err != nil {
		return nil, err
	}
	z.CountedBy = []kassa.DenominationCount{}
	if err := decodeJSON(count, &z.CountedBy); err != nil {
		return nil, err
	}
	z.OpenedAt, z.ClosedAt = parseTime(opened), parseTime(closed)
	return &z, nil
}

func zReportID(z *kassa.ZReport) string { return z.ID }

func findZReport(ctx context.Context, q querier, orgID, id string) (*kassa.ZReport, error) {
	return findByID(ctx, q, zReportCols, "Z report", orgID, id, scanZReport)
}

// FindZReports lists the org's Z reports.
func (s *DrawerService) FindZReports(ctx context.Context, f kassa.DrawerFilter) (kassa.List[kassa.ZReport], error) {
	a, err := kassa.MustActor(ctx)
	if err != nil {
		return kassa.List[kassa.ZReport]{}, err
	}
	w := orgFilter(a.OrgID)
	eq(w, "location_id", f.LocationID)
	eq(w, "register_id", f.RegisterID)
	w.eqText("business_day", f.BusinessDay)
	return findPage(ctx, s.db.Reader, zReportCols, w, f.Page, scanZReport, zReportID)
}

// FindZReportByID returns one Z report of the org, or ENotFound.
func (s *DrawerService) FindZReportByID(ctx context.Context, id string) (*kassa.ZReport, error) {
	return readOwn(ctx, s.db, findZReport, id)
}

// tillDrawer returns the open drawer of the register a payment or refund
// names, which must stand at the order's location. Errors: EInvalid naming
// register_id, EConflict when no drawer is open there.
func tillDrawer(ctx context.Context, q querier, orgID, locationID, registerID string) (*kassa.DrawerSession, error) {
	reg, err := findRegister(ctx, q, orgID, registerID)
	if err != nil || reg.LocationID != locationID {
		return nil, kassa.InvalidField("register_id", "is not a register of the order's location")
	}
	d, err := openDrawerAt(ctx, q, orgID, registerID)
	if kassa.ErrorKind(err) == kassa.ENotFound {
		return nil, conflictOn("register_id", "no drawer is open at register %s: open one first", reg.Name)
	}
	return d, err
}

// recordSale appends a captured payment to the drawer of the register it
// was taken at (cols: the payment's columns as the unit wrote them). A
// payment that names no register, or was not captured, records nothing.
func recordSale(ctx context.Context, tx *Tx, a *kassa.Actor, locationID, paymentID string, in *kassa.PaymentInitiate, cols map[string]any) error {
	if in.RegisterID == "" || cols["status"] != kassa.PaymentCaptured {
		return nil
	}
	d, err := tillDrawer(ctx, tx, a.OrgID, locationID, in.RegisterID)
	if err != nil && in.Method != kassa.PaymentCash && kassa.ErrorKind(err) != kassa.EInternal {
		// A card charged while its drawer closed in between: the payment
		// stands (the money moved); the drawer's Z does not list it.
		tx.DB.Log.Warn("payment's drawer closed during the charge", "payment", paymentID, "err", err)
		return nil
	}
	if err != nil {
		return err
	}
	e := drawerEntry{typ: kassa.DrawerSale, method: in.Method, amount: in.Amount, paymentID: paymentID}
	if in.Method == kassa.PaymentCash {
		tendered, change := in.Amount, int64(0)
		if in.Tendered != nil {
			tendered = *in.Tendered
		}
		if c, ok := cols["change_due"].(int64); ok {
			change = c
		}
		e.tendered, e.change = &tendered, &change
	}
	_, err = appendDrawerEntry(ctx, tx, d, actorRef(a), e)
	return err
}

// recordRefund appends the parts of a refund returned through each
// payment to the drawer of the register it was handed back at.
func recordRefund(ctx context.Context, tx *Tx, a *kassa.Actor, o *kassa.Order, registerID, refundID string, paid []kassa.RefundPayment) error {
	if registerID == "" {
		return nil
	}
	d, err := tillDrawer(ctx, tx, a.OrgID, o.LocationID, registerID)
	if err != nil {
		return err
	}
	for _, rp := range paid {
		p := o.FindPayment(rp.PaymentID)
		if p == nil || rp.Amount == 0 {
			continue
		}
		if _, err := appendDrawerEntry(ctx, tx, d, actorRef(a), drawerEntry{typ: kassa.DrawerRefund, method: p.Method,
			amount: -rp.Amount, paymentID: p.ID, refundID: refundID}); err != nil {
			return err
		}
	}
	return nil
}

// Admission (trust.go): an edge's drawer records are taken as the
// edge's DrawerService writes them, checked against what the hub holds.

// checkDrawer admits a drawer session: opened in the location's currency
// on a valid business day with a float a till may hold, at an active
// register of the location; changed only by its close.
func checkDrawer(ctx context.Context, ad *admitter, c *change.Change, f map[string]any) error {
	if c.Op != change.OpInsert {
		return oneOf(f, "status", false, kassa.DrawerClosed)
	}
	var cur string
	var active bool
	err := ad.Tx.QueryRowContext(ctx, `SELECT l.currency, r.is_active FROM registers r JOIN locations l ON l.id = r.location_id
		WHERE r.id = ? AND r.location_id = ?`, f["register_id"], f["location_id"]).Scan(&cur, &active)
	if err != nil || !active {
		return refuse(RefusedReference, "register %v is not an active register of the drawer's location", f["register_id"])
	}
	if rowCount(ctx, ad.Tx, `SELECT count(*) FROM drawer_sessions WHERE register_id = ? AND status = 'open'`, f["register_id"]) > 0 {
		return refuse(RefusedValue, "register %v already has an open drawer", f["register_id"])
	}
	if f["currency"] != cur {
		return refuse(RefusedValue, "currency %v is not the location's %s", f["currency"], cur)
	}
	if day, _ := f["business_day"].(string); !validDay(day) {
		return refuse(RefusedValue, "business_day must be a date")
	}
	return firstErr(oneOf(f, "status", true, kassa.DrawerOpen), within(f, "float", 0, cashCeiling, true))
}

// cashCeiling bounds any amount in a drawer record (minor units).
const cashCeiling = kassa.MaxCashCount * 1000

func validDay(s string) bool {
	_, err := time.Parse(time.DateOnly, s)
	return err == nil
}

// entrySigns: the sign each entry type's amount has.
var entrySigns = map[string][2]int64{
	string(kassa.DrawerFloat): {0, cashCeiling}, string(kassa.DrawerSale): {1, maxAmount}, string(kassa.DrawerRefund): {-maxAmount, -1},
	string(kassa.DrawerPaidIn): {1, cashCeiling}, string(kassa.DrawerPaidOut): {-cashCeiling, -1}, string(kassa.DrawerNoSale): {0, 0},
}

// checkDrawerEntry admits a drawer entry: into an open drawer of the
// location with no Z yet; a sale or refund as its payment moved; a
// paid-in or out by a manager, never beyond the cash the hub's tally says
// the drawer holds.
func checkDrawerEntry(ctx context.Context, ad *admitter, c *change.Change, f map[string]any) error {
	typ, _ := f["type"].(string)
	sign, ok := entrySigns[typ]
	if !ok {
		return refuse(RefusedValue, "type %q is not a drawer entry type", typ)
	}
	if err := firstErr(within(f, "amount", sign[0], sign[1], true), oneOf(f, "method", true, paymentMethods...)); err != nil {
		return err
	}
	var status, loc string
	if err := ad.Tx.QueryRowContext(ctx, `SELECT status, location_id FROM drawer_sessions WHERE id = ?`, f["drawer_id"]).Scan(&status, &loc); err != nil {
		return err
	}
	if status != kassa.DrawerOpen || loc != f["location_id"] ||
		rowCount(ctx, ad.Tx, `SELECT count(*) FROM z_reports WHERE drawer_id = ?`, f["drawer_id"]) > 0 {
		return refuse(RefusedValue, "drawer %v is not open at the entry's location", f["drawer_id"])
	}
	amount, _ := intField(f, "amount")
	switch kassa.DrawerEntryType(typ) {
	case kassa.DrawerSale, kassa.DrawerRefund:
		return entryPayment(ctx, ad, f, kassa.DrawerEntryType(typ), amount)
	case kassa.DrawerTip, kassa.DrawerTipRefund:
		return checkTipEntry(ctx, ad, f, kassa.DrawerEntryType(typ), amount) // tip.go
	case kassa.DrawerPaidIn, kassa.DrawerPaidOut:
		if ad.ActorOf == nil || kassa.CanMoveDrawerCash(ad.ActorOf) != nil {
			return refuse(RefusedActor, "only a manager or an owner pays cash in or out")
		}
		id, _ := f["drawer_id"].(string)
		entries, err := drawerEntries(ctx, ad.Tx, id)
		if err != nil {
			return err
		}
		if t := kassa.Tally(entries); amount < 0 && -amount > t.Expected {
			return refuse(RefusedValue, "a paid-out of %d from a drawer that holds %d", -amount, t.Expected)
		}
	}
	return nil
}

// entryPayment admits a sale or refund entry: it names a payment of its
// method, a sale its full amount once, a refund one the hub holds and at
// most what the payment took.
func entryPayment(ctx context.Context, ad *admitter, f map[string]any, typ kassa.DrawerEntryType, amount int64) error {
	var method string
	var paid int64
	err := ad.Tx.QueryRowContext(ctx, `SELECT method, amount FROM payments WHERE id = ? AND location_id = ?`,
		f["payment_id"], f["location_id"]).Scan(&method, &paid)
	if errors.Is(err, sql.ErrNoRows) {
		return checkLaybyDrawerEntry(ctx, ad, f, typ, amount)
	}
	if err != nil {
		return err
	}
	if method != f["method"] {
		return refuse(RefusedValue, "method %v is not the payment's %s", f["method"], method)
	}
	if typ == kassa.DrawerSale {
		if amount != paid || rowCount(ctx, ad.Tx, `SELECT count(*) FROM drawer_entries WHERE payment_id = ? AND type = 'sale'`, f["payment_id"]) > 0 {
			return refuse(RefusedValue, "a sale entry records its payment's amount %d once", paid)
		}
		return nil
	}
	if f["refund_id"] == nil || !exists(ctx, ad.Tx, "refunds", ad.From.OrgID, fieldText(f, "refund_id")) || -amount > paid {
		return refuse(RefusedValue, "a refund entry names its refund and returns at most the payment's %d", paid)
	}
	return nil
}

// checkZReport admits a Z report: the drawer's first, numbered next on its
// register, its totals exactly the tally of the entries the hub holds and
// its over/short the count less the expected.
func checkZReport(ctx context.Context, ad *admitter, c *change.Change, f map[string]any) error {
	var reg, loc, day, status string
	if err := ad.Tx.QueryRowContext(ctx, `SELECT register_id, location_id, business_day, status FROM drawer_sessions WHERE id = ?`,
		f["drawer_id"]).Scan(&reg, &loc, &day, &status); err != nil {
		return err
	}
	if reg != f["register_id"] || loc != f["location_id"] || day != f["business_day"] || status != kassa.DrawerOpen {
		return refuse(RefusedValue, "a Z report closes an open drawer of its register, location and business day")
	}
	next := rowCount(ctx, ad.Tx, `SELECT coalesce(max(number), 0) + 1 FROM z_reports WHERE register_id = ?`, reg)
	if n, _ := intField(f, "number"); n != next {
		return refuse(RefusedValue, "Z number %d of register %s; the next is %d", n, reg, next)
	}
	id, _ := f["drawer_id"].(string)
	entries, err := drawerEntries(ctx, ad.Tx, id)
	if err != nil {
		return err
	}
	t := kassa.Tally(entries)
	want, _ := json.Marshal(t)
	var got kassa.DrawerTotals
	s, _ := f["totals"].(string)
	if json.Unmarshal([]byte(s), &got) != nil {
		return refuse(RefusedValue, "totals must be the drawer's totals")
	}
	if have, _ := json.Marshal(got); string(have) != string(want) {
		return refuse(RefusedValue, "totals %s are not the tally of the drawer's entries %s", have, want)
	}
	counted, _ := intField(f, "counted")
	if over, _ := intField(f, "over_short"); over != counted-t.Expected {
		return refuse(RefusedValue, "over_short %d is not counted %d less expected %d", over, counted, t.Expected)
	}
	return within(f, "counted", 0, cashCeiling, true)
}

// rowCount runs a query of one integer; 0 on error.
func rowCount(ctx context.Context, q querier, query string, args ...any) int64 {
	var n int64
	q.QueryRowContext(ctx, query, args...).Scan(&n)
	return n
}

// Cash drawers (docs/drawers.md): the edge of the location owns them; a
// session's status moves only forward; a Z is admitted only as the tally
// of the entries the hub holds (checkZReport).
var entDrawer, entDrawerEntry, entZReport = new(noun), new(noun), new(noun)

func init() {
	drawers := []formatStep{{Format: 4, Migration: 30}}
	register(entDrawer, noun{Name: "drawer_session", Table: "drawer_sessions", Formats: drawers,
		Lattice: map[string]func(string) int{"status": kassa.DrawerStatusRank},
		Edge: &edgeRule{Loc: ownLocation, Update: []string{"status", "closed_by", "closed_at", "z_report_id"},
			Once:   []string{"location_id", "register_id", "currency", "business_day", "opened_by", "opened_at", "float", "float_count"},
			Scopes: paymentsWrite, Refs: []ref{{Col: "register_id", Table: "registers"}, {Col: "z_report_id", Table: "z_reports"}}, Check: checkDrawer}})
	register(entDrawerEntry, noun{Name: "drawer_entry", Table: "drawer_entries", Merge: mergeAppend, Formats: drawers,
		Edge: &edgeRule{Loc: ownLocation, Scopes: paymentsWrite,
			Refs:  []ref{{Col: "drawer_id", Table: "drawer_sessions"}}, // payment_id, refund_id: entryPayment (a lay-by's: layby.go)
			Check: checkDrawerEntry}})
	register(entZReport, noun{Name: "z_report", Table: "z_reports", Merge: mergeAppend, Formats: drawers,
		Edge: &edgeRule{Loc: ownLocation, Scopes: paymentsWrite,
			Refs: []ref{{Col: "register_id", Table: "registers"}, {Col: "drawer_id", Table: "drawer_sessions"}}, Check: checkZReport}})
}
