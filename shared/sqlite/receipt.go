package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
	"time"

	"golang.org/x/text/currency"

	"kassa.dev/shared/kassa"
	"kassa.dev/shared/sqlite/engine"
	"kassa.dev/sync/change"
)

// Receipts (docs/receipts.md, migration 0031): numbered in the unit of
// work that completes a sale or records a refund (allocateReceipt), from a
// gap-free sequence per till at this node; printed and e-mailed through
// the durable outbox receipt_jobs, which the node's receipt job works off
// (DueReceiptJobs, FinishReceiptJob). All node-local.

// ReceiptService implements kassa.ReceiptService.
type ReceiptService struct{ db *DB }

// NewReceiptService returns the receipt service of db.
func NewReceiptService(db *DB) *ReceiptService { return &ReceiptService{db: db} }

// ReceiptJobsDue signals (coalesced) that a print or e-mail was queued.
func (db *DB) ReceiptJobsDue() <-chan struct{} { return receiptsIn(db).wake }

func (db *DB) wakeReceipts() {
	select {
	case receiptsIn(db).wake <- struct{}{}:
	default:
	}
}

// allocateReceipt numbers the sale (refundID "") or refund of an order at
// the till ctx names, and queues its print when the till has a printer.
// The sequence row is read and bumped inside the unit: a unit that rolls
// back takes its number back with it, so numbers never skip.
func allocateReceipt(ctx context.Context, tx *Tx, orgID, locationID, orderID, refundID string, cash bool) error {
	reg := kassa.RegisterOf(ctx)
	if err := registerAt(ctx, tx, orgID, locationID, reg); err != nil {
		return err
	}
	code, n, err := nextReceiptSeq(ctx, tx, orgID, locationID, reg)
	if err != nil {
		return err
	}
	id, kind := tx.DB.NewID(), kassa.ReceiptSale
	if refundID != "" {
		kind = kassa.ReceiptRefund
	}
	if err := tx.InsertAt(ctx, entReceipt, orgID, locationID, id, map[string]any{"location_id": locationID, "register_id": reg,
		"number": kassa.ReceiptNumber(code, n), "seq": n, "kind": kind, "order_id": orderID, "refund_id": nullStr(refundID)}); err != nil {
		return err
	}
	if reg == "" || !printerEnabled(ctx, tx, orgID, reg) {
		return nil
	}
	return queueJob(ctx, tx, orgID, id, kassa.JobPrint, reg, "", cash)
}

// registerAt checks that the till a completion or refund names ("" names
// none) is a register of the caller's org at the order's location: a
// receipt is never numbered at a till that is not there.
func registerAt(ctx context.Context, q querier, orgID, locationID, reg string) error {
	if reg == "" {
		return nil
	}
	r, err := findRegister(ctx, q, orgID, reg)
	if kassa.ErrorKind(err) == kassa.ENotFound || (err == nil && r.LocationID != locationID) {
		return kassa.InvalidField("register_id", "is not a register of the order's location")
	}
	return err
}

func nextReceiptSeq(ctx context.Context, tx *Tx, orgID, locationID, reg string) (string, int64, error) {
	var code string
	var n int64
	// The counter is node-local, the receipts replicate: an edge restored
	// from a backup gets back receipts numbered after its counter, so the
	// next number is past the highest one held (the number index, read
	// backwards within the sequence's code; numbers are zero-padded). The
	// later of the two as rows, read alike by SQLite and PostgreSQL.
	err := tx.QueryRowContext(ctx, `UPDATE receipt_sequences SET next = (SELECT max(v) FROM (SELECT next AS v UNION ALL SELECT coalesce((SELECT r.seq FROM receipts r
			WHERE r.number >= receipt_sequences.code || '-' AND r.number < receipt_sequences.code || '.'
			ORDER BY r.number DESC LIMIT 1), 0) + 1) AS later) + 1
		WHERE org_id = ? AND location_id = ? AND register_id = ? RETURNING code, next - 1`, orgID, locationID, reg).Scan(&code, &n)
	if !errors.Is(err, sql.ErrNoRows) {
		return code, n, err
	}
	if code, n, err = heldSequence(ctx, tx, orgID, locationID, reg); err != nil {
		return "", 0, err
	}
	if code == "" {
		if code, err = freeSequenceCode(ctx, tx); err != nil {
			return "", 0, err
		}
	}
	_, err = tx.ExecContext(ctx, `INSERT INTO receipt_sequences (org_id, location_id, register_id, code, next) VALUES (?, ?, ?, ?, ?)`,
		orgID, locationID, reg, code, n+2)
	return code, n + 1, err
}

// heldSequence finds the code and last number this node gave a till's
// receipts before it lost the sequence (a restore from a backup taken
// before the till's first sale): its receipts came back by sync, and
// its numbering goes on after them.
func heldSequence(ctx context.Context, tx *Tx, orgID, locationID, reg string) (string, int64, error) {
	var number string
	var seq int64
	prefix := storeOf(tx.DB).NumberPrefix()
	err := tx.QueryRowContext(ctx, `SELECT number, seq FROM receipts WHERE number >= ? AND number < ?
		AND org_id = ? AND location_id = ? AND register_id = ? ORDER BY seq DESC LIMIT 1`,
		prefix+"-", prefix+".", orgID, locationID, reg).Scan(&number, &seq)
	if errors.Is(err, sql.ErrNoRows) {
		return "", 0, nil
	}
	if err != nil {
		return "", 0, err
	}
	return number[:strings.LastIndexByte(number, '-')], seq, nil
}

// freeSequenceCode names a new till's sequence <prefix>-<k>: the first k
// from the count of sequences that neither a sequence nor a receipt of
// this node uses (a restored edge's count can be behind its receipts).
func freeSequenceCode(ctx context.Context, tx *Tx) (string, error) {
	var k int
	if err := tx.QueryRowContext(ctx, `SELECT count(*) FROM receipt_sequences`).Scan(&k); err != nil {
		return "", err
	}
	for ; ; k++ {
		code := fmt.Sprintf("%s-%d", storeOf(tx.DB).NumberPrefix(), k)
		var used bool
		err := tx.QueryRowContext(ctx, `SELECT EXISTS (SELECT 1 FROM receipt_sequences WHERE code = ?)
			OR EXISTS (SELECT 1 FROM receipts WHERE number >= ? AND number < ?)`, code, code+"-", code+".").Scan(&used)
		if err != nil || !used {
			return code, err
		}
	}
}

func nullStr(s string) any {
	if s == "" {
		return nil
	}
	return s
}

func printerEnabled(ctx context.Context, q querier, orgID, reg string) bool {
	var on int
	err := q.QueryRowContext(ctx, `SELECT enabled FROM register_printers WHERE org_id = ? AND register_id = ?`, orgID, reg).Scan(&on)
	return err == nil && on == 1
}

func queueJob(ctx context.Context, tx *Tx, orgID, receiptID, kind, reg, email string, kick bool) error {
	id := tx.DB.NewID()
	msgID := ""
	if kind == kassa.JobEmail {
		// Fixed per job: a retry after a crash between the relay's accept
		// and our mark carries the same Message-ID (docs/receipts.md).
		msgID = "<receipt-" + id + "@kassa>"
	}
	_, err := tx.ExecContext(ctx, `INSERT INTO receipt_jobs (id, org_id, receipt_id, kind, register_id, email, kick, message_id, status, next_at, created_at)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, 'pending', ?, ?)`, id, orgID, receiptID, kind, reg, email, kick, msgID, fmtTime(tx.Now), fmtTime(tx.Now))
	return err
}

// paidCash reports whether any captured payment of o is cash.
func paidCash(ps []kassa.Payment) bool {
	for _, p := range ps {
		if p.Method == kassa.PaymentCash && p.Status == kassa.PaymentCaptured {
			return true
		}
	}
	return false
}

func refundedCash(o *kassa.Order, paid []kassa.RefundPayment) bool {
	for _, rp := range paid {
		if p := o.FindPayment(rp.PaymentID); p != nil && p.Method == kassa.PaymentCash {
			return true
		}
	}
	return false
}

type receiptRow struct {
	id, number, reg, orderID string
	refundID                 sql.NullString
	created                  string
}

func findReceiptRow(ctx context.Context, q querier, orgID, orderID string, refundID *string) (*receiptRow, error) {
	query := `SELECT id, number, register_id, order_id, refund_id, created_at FROM receipts WHERE org_id = ? AND order_id = ? AND refund_id IS NULL`
	args := []any{orgID, orderID}
	if refundID != nil {
		query = `SELECT id, number, register_id, order_id, refund_id, created_at FROM receipts WHERE org_id = ? AND order_id = ? AND refund_id = ?`
		args = append(args, *refundID)
	}
	var r receiptRow
	err := q.QueryRowContext(ctx, query, args...).Scan(&r.id, &r.number, &r.reg, &r.orderID, &r.refundID, &r.created)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, kassa.Errorf(kassa.ENotFound, "no receipt for this order at this store: it is numbered when the sale completes or the refund is made")
	}
	return &r, err
}

// Receipt returns the receipt of an order's sale, or of one of its refunds.
func (s *ReceiptService) Receipt(ctx context.Context, orderID string, refundID *string) (*kassa.Receipt, error) {
	a, err := kassa.MustActor(ctx)
	if err != nil {
		return nil, err
	}
	o, err := findOrder(ctx, s.db.Reader, a.OrgID, orderID)
	if err != nil {
		return nil, err
	}
	row, err := findReceiptRow(ctx, s.db.Reader, a.OrgID, orderID, refundID)
	if err != nil {
		return nil, err
	}
	f, err := s.facts(ctx, a.OrgID, o, row)
	if err != nil {
		return nil, err
	}
	r := kassa.BuildReceipt(f)
	r.Jobs, err = receiptJobs(ctx, s.db.Reader, row.id)
	return r, err
}

func (s *ReceiptService) facts(ctx context.Context, orgID string, o *kassa.Order, row *receiptRow) (*kassa.ReceiptFacts, error) {
	f := &kassa.ReceiptFacts{ID: row.id, Number: row.number, Order: o, IssuedAt: parseTime(row.created), Scale: 2}
	if row.reg != "" {
		f.RegisterID = &row.reg
	}
	if u, err := currency.ParseISO(o.Currency); err == nil {
		f.Scale, _ = currency.Standard.Rounding(u)
	}
	if row.refundID.Valid {
		for i := range o.Refunds {
			if o.Refunds[i].ID == row.refundID.String {
				f.Refund = &o.Refunds[i]
			}
		}
	}
	var err error
	if f.Location, err = findLocation(ctx, s.db.Reader, orgID, o.LocationID); err != nil {
		return nil, err
	}
	st, err := receiptSettings(ctx, s.db.Reader, orgID)
	if err != nil {
		return nil, err
	}
	f.Settings = *st
	if f.GiftCards, err = giftCardsOf(ctx, s.db.Reader, o); err != nil {
		return nil, err
	}
	f.Loyalty = loyaltyBalance(ctx, s.db.Reader, orgID, o.CustomerID)
	if f.Refund != nil {
		f.TipsBack, err = tipsBackOf(ctx, s.db.Reader, f.Refund.ID)
	}
	return f, err
}

func giftCardsOf(ctx context.Context, q querier, o *kassa.Order) (map[string]kassa.GiftCardBalance, error) {
	rows, err := q.QueryContext(ctx, `SELECT DISTINCT t.payment_id, g.code, g.balance FROM gift_card_transactions t
		JOIN gift_cards g ON g.id = t.gift_card_id WHERE t.order_id = ? AND t.payment_id IS NOT NULL`, o.ID)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := map[string]kassa.GiftCardBalance{}
	for rows.Next() {
		var pid, code string
		var bal int64
		if err := rows.Scan(&pid, &code, &bal); err != nil {
			return nil, err
		}
		out[pid] = kassa.GiftCardBalance{Masked: "**** " + code[max(0, len(code)-4):], Balance: bal}
	}
	return out, rows.Err()
}

func loyaltyBalance(ctx context.Context, q querier, orgID string, customerID *string) *int64 {
	if customerID == nil {
		return nil
	}
	var n int64
	if err := q.QueryRowContext(ctx, `SELECT points_balance FROM loyalty_accounts WHERE org_id = ? AND customer_id = ?`,
		orgID, *customerID).Scan(&n); err != nil {
		return nil
	}
	return &n
}

const receiptJobCols = `SELECT id, kind, status, register_id, email, attempts, last_error, created_at, done_at FROM receipt_jobs`

func scanReceiptJob(s scanner) (*kassa.ReceiptJob, error) {
	var j kassa.ReceiptJob
	var reg, email, created string
	var done sql.NullString
	if err := s.Scan(&j.ID, &j.Kind, &j.Status, &reg, &email, &j.Attempts, &j.LastError, &created, &done); err != nil {
		return nil, err
	}
	if reg != "" {
		j.RegisterID = &reg
	}
	if email != "" {
		j.Email = &email
	}
	j.CreatedAt, j.DoneAt = parseTime(created), nullTime(done)
	return &j, nil
}

func receiptJobs(ctx context.Context, q querier, receiptID string) ([]kassa.ReceiptJob, error) {
	rows, err := q.QueryContext(ctx, receiptJobCols+` WHERE receipt_id = ? ORDER BY created_at, id`, receiptID)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := []kassa.ReceiptJob{}
	for rows.Next() {
		j, err := scanReceiptJob(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, *j)
	}
	return out, rows.Err()
}

// Print queues a (re)print of a receipt at its till, or at the till named.
// Errors: ENotFound, EInvalid, EConflict (the till has no enabled printer).
func (s *ReceiptService) Print(ctx context.Context, orderID string, in *kassa.ReceiptPrint) (*kassa.ReceiptJob, error) {
	a, err := kassa.MustActor(ctx)
	if err != nil {
		return nil, err
	}
	if in.RegisterID != nil && !kassa.ValidRegisterID(*in.RegisterID) {
		return nil, kassa.InvalidField("register_id", "must be 1-64 letters, digits, _ or -")
	}
	row, err := findReceiptRow(ctx, s.db.Reader, a.OrgID, orderID, in.RefundID)
	if err != nil {
		return nil, err
	}
	reg := row.reg
	if in.RegisterID != nil {
		reg = *in.RegisterID
	}
	if reg == "" || !printerEnabled(ctx, s.db.Reader, a.OrgID, reg) {
		return nil, kassa.Errorf(kassa.EConflict, "the till has no enabled printer: set one with PUT /registers/{id}/printer")
	}
	// A reprint never opens the drawer.
	return s.queue(ctx, a.OrgID, row.id, kassa.JobPrint, reg, "")
}

// Email queues the receipt to an address; the node's receipt job sends it
// once the relay answers. Errors: ENotFound, EInvalid, EConflict (no relay).
func (s *ReceiptService) Email(ctx context.Context, orderID string, in *kassa.ReceiptEmail) (*kassa.ReceiptJob, error) {
	a, err := kassa.MustActor(ctx)
	if err != nil {
		return nil, err
	}
	if err := in.Validate(); err != nil {
		return nil, err
	}
	row, err := findReceiptRow(ctx, s.db.Reader, a.OrgID, orderID, in.RefundID)
	if err != nil {
		return nil, err
	}
	st, err := receiptSettings(ctx, s.db.Reader, a.OrgID)
	if err != nil {
		return nil, err
	}
	if st.SMTPHost == "" || st.SMTPFrom == "" {
		return nil, kassa.Errorf(kassa.EConflict, "no SMTP relay is configured for e-mail receipts: PATCH /receipt-settings")
	}
	return s.queue(ctx, a.OrgID, row.id, kassa.JobEmail, "", in.Email)
}

func (s *ReceiptService) queue(ctx context.Context, orgID, receiptID, kind, reg, email string) (*kassa.ReceiptJob, error) {
	var j *kassa.ReceiptJob
	err := s.db.Write(ctx, func(tx *Tx) error {
		if err := queueJob(ctx, tx, orgID, receiptID, kind, reg, email, false); err != nil {
			return err
		}
		var err error
		j, err = scanReceiptJob(tx.QueryRowContext(ctx, receiptJobCols+` WHERE receipt_id = ? ORDER BY created_at DESC, id DESC LIMIT 1`, receiptID))
		return err
	})
	if err != nil {
		return nil, err
	}
	s.db.wakeReceipts()
	return j, nil
}

func receiptSettings(ctx context.Context, q querier, orgID string) (*kassa.ReceiptSettings, error) {
	st := kassa.ReceiptSettings{SMTPPort: 587}
	err := q.QueryRowContext(ctx, `SELECT header, footer, tax_id, smtp_host, smtp_port, smtp_username, smtp_password, smtp_from
		FROM receipt_settings WHERE org_id = ?`, orgID).Scan(&st.Header, &st.Footer, &st.TaxID, &st.SMTPHost, &st.SMTPPort,
		&st.SMTPUsername, &st.SMTPPassword, &st.SMTPFrom)
	if err != nil && !errors.Is(err, sql.ErrNoRows) {
		return nil, err
	}
	st.SMTPPasswordSet = st.SMTPPassword != ""
	return &st, nil
}

// Settings returns the org's receipt settings (the password never).
func (s *ReceiptService) Settings(ctx context.Context) (*kassa.ReceiptSettings, error) {
	a, err := kassa.MustActor(ctx)
	if err != nil {
		return nil, err
	}
	return receiptSettings(ctx, s.db.Reader, a.OrgID)
}

// UpdateSettings changes the org's receipt settings: managers and owners.
func (s *ReceiptService) UpdateSettings(ctx context.Context, in *kassa.ReceiptSettingsUpdate) (*kassa.ReceiptSettings, error) {
	a, err := mustManager(ctx)
	if err != nil {
		return nil, err
	}
	if err := in.Validate(); err != nil {
		return nil, err
	}
	err = s.db.Write(ctx, func(tx *Tx) error {
		st, err := receiptSettings(ctx, tx, a.OrgID)
		if err != nil {
			return err
		}
		setOpt(&st.Header, in.Header)
		setOpt(&st.Footer, in.Footer)
		setOpt(&st.TaxID, in.TaxID)
		setOpt(&st.SMTPHost, in.SMTPHost)
		setOpt(&st.SMTPPort, in.SMTPPort)
		setOpt(&st.SMTPUsername, in.SMTPUsername)
		setOpt(&st.SMTPPassword, in.SMTPPassword)
		setOpt(&st.SMTPFrom, in.SMTPFrom)
		_, err = tx.ExecContext(ctx, `INSERT INTO receipt_settings (org_id, header, footer, tax_id, smtp_host, smtp_port,
			smtp_username, smtp_password, smtp_from, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
			ON CONFLICT (org_id) DO UPDATE SET header = excluded.header, footer = excluded.footer, tax_id = excluded.tax_id,
			smtp_host = excluded.smtp_host, smtp_port = excluded.smtp_port, smtp_username = excluded.smtp_username,
			smtp_password = excluded.smtp_password, smtp_from = excluded.smtp_from, updated_at = excluded.updated_at`, a.OrgID, st.Header, st.Footer,
			st.TaxID, st.SMTPHost, st.SMTPPort, st.SMTPUsername, st.SMTPPassword, st.SMTPFrom, fmtTime(tx.Now))
		return err
	})
	if err != nil {
		return nil, err
	}
	return receiptSettings(ctx, s.db.Reader, a.OrgID)
}

func setOpt[T any](dst *T, o kassa.Opt[T]) {
	if o.Set && !o.Null {
		*dst = o.Value
	}
}

func mustManager(ctx context.Context) (*kassa.Actor, error) {
	a, err := kassa.MustActor(ctx)
	if err != nil {
		return nil, err
	}
	if !a.IsStaff() {
		return nil, kassa.Errorf(kassa.EForbidden, "only a manager or an owner can change this")
	}
	return a, nil
}

// Printer returns a till's printer and its status.
func (s *ReceiptService) Printer(ctx context.Context, registerID string) (*kassa.RegisterPrinter, error) {
	a, err := kassa.MustActor(ctx)
	if err != nil {
		return nil, err
	}
	return findPrinter(ctx, s.db.Reader, a.OrgID, registerID)
}

func findPrinter(ctx context.Context, q querier, orgID, reg string) (*kassa.RegisterPrinter, error) {
	p := kassa.RegisterPrinter{RegisterID: reg}
	var on int
	var ok sql.NullString
	err := q.QueryRowContext(ctx, `SELECT host, port, paper_width, enabled, last_error, last_ok_at,
		(SELECT count(*) FROM receipt_jobs WHERE org_id = p.org_id AND register_id = p.register_id AND kind = 'print' AND status = 'pending')
		FROM register_printers p WHERE org_id = ? AND register_id = ?`, orgID, reg).Scan(&p.Host, &p.Port, &p.PaperWidth, &on, &p.LastError, &ok, &p.Pending)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, kassa.Errorf(kassa.ENotFound, "no printer is set for this till")
	}
	if err != nil {
		return nil, err
	}
	p.Enabled, p.LastOKAt = on == 1, nullTime(ok)
	switch {
	case p.LastError != "":
		p.Status = kassa.PrinterUnreachable
	case p.LastOKAt != nil:
		p.Status = kassa.PrinterOK
	default:
		p.Status = kassa.PrinterUnknown
	}
	return &p, nil
}

// SetPrinter sets a till's printer: managers and owners.
func (s *ReceiptService) SetPrinter(ctx context.Context, registerID string, in *kassa.RegisterPrinterSet) (*kassa.RegisterPrinter, error) {
	a, err := mustManager(ctx)
	if err != nil {
		return nil, err
	}
	if err := in.Validate(); err != nil {
		return nil, err
	}
	on := in.Enabled == nil || *in.Enabled
	err = s.db.Write(ctx, func(tx *Tx) error {
		if _, err := findRegister(ctx, tx, a.OrgID, registerID); err != nil {
			return err // another org's register, or none: 404
		}
		_, err := tx.ExecContext(ctx, `INSERT INTO register_printers (register_id, org_id, host, port, paper_width, enabled, updated_at)
			VALUES (?, ?, ?, ?, ?, ?, ?) ON CONFLICT (org_id, register_id) DO UPDATE SET host = excluded.host, port = excluded.port,
			paper_width = excluded.paper_width, enabled = excluded.enabled, last_error = '', last_ok_at = NULL, updated_at = excluded.updated_at`,
			registerID, a.OrgID, in.Host, in.Port, in.PaperWidth, on, fmtTime(tx.Now))
		return err
	})
	if err != nil {
		return nil, err
	}
	s.db.wakeReceipts()
	return findPrinter(ctx, s.db.Reader, a.OrgID, registerID)
}

// ReceiptTask is a due print or e-mail, with what it needs to run.
type ReceiptTask struct {
	ID, Kind, MessageID string
	OrgID               string
	Attempts            int
	Kick                bool
	Receipt             *kassa.Receipt
	Printer             *kassa.RegisterPrinter // a print's
	Email               string                 // an e-mail's recipient
	SMTP                *kassa.ReceiptSettings // an e-mail's relay (with its password)
}

// DueReceiptJobs returns up to limit pending jobs due by now, oldest first.
func (db *DB) DueReceiptJobs(ctx context.Context, now time.Time, limit int) ([]ReceiptTask, error) {
	rows, err := db.Reader.QueryContext(ctx, `SELECT j.id, j.kind, j.message_id, j.attempts, j.kick, j.register_id, j.email,
		j.org_id, r.order_id, r.refund_id FROM receipt_jobs j JOIN receipts r ON r.id = j.receipt_id
		WHERE j.status = 'pending' AND j.next_at <= ? ORDER BY j.next_at, j.id LIMIT ?`, fmtTime(now), limit)
	if err != nil {
		return nil, err
	}
	type due struct {
		t            ReceiptTask
		reg, orderID string
		refundID     sql.NullString
	}
	var ds []due
	for rows.Next() {
		var d due
		if err := rows.Scan(&d.t.ID, &d.t.Kind, &d.t.MessageID, &d.t.Attempts, &d.t.Kick, &d.reg, &d.t.Email, &d.t.OrgID, &d.orderID, &d.refundID); err != nil {
			rows.Close()
			return nil, err
		}
		ds = append(ds, d)
	}
	rows.Close()
	out := make([]ReceiptTask, 0, len(ds))
	for _, d := range ds {
		var refund *string
		if d.refundID.Valid {
			refund = &d.refundID.String
		}
		actx := kassa.WithActor(ctx, &kassa.Actor{OrgID: d.t.OrgID, Role: kassa.RoleOwner})
		if d.t.Receipt, err = NewReceiptService(db).Receipt(actx, d.orderID, refund); err != nil {
			return nil, err
		}
		if d.t.Kind == kassa.JobPrint {
			if d.t.Printer, err = findPrinter(ctx, db.Reader, d.t.OrgID, d.reg); err != nil {
				return nil, err
			}
		} else if d.t.SMTP, err = receiptSettings(ctx, db.Reader, d.t.OrgID); err != nil {
			return nil, err
		}
		out = append(out, d.t)
	}
	return out, nil
}

// FinishReceiptJob records an attempt: done when runErr is nil, else
// pending again at retryAt (failed for good past maxAttempts). A print's
// outcome is also its printer's status.
func (db *DB) FinishReceiptJob(ctx context.Context, t *ReceiptTask, runErr error, retryAt time.Time, maxAttempts int) error {
	return db.Write(ctx, func(tx *Tx) error {
		now := fmtTime(tx.Now)
		msg := ""
		if runErr != nil {
			msg = truncate(runErr.Error(), 300)
		}
		status, done, next := kassa.JobDone, any(now), fmtTime(retryAt)
		if runErr != nil {
			status, done = kassa.JobPending, nil
			if t.Attempts+1 >= maxAttempts {
				status = kassa.JobFailed
			}
		}
		if _, err := tx.ExecContext(ctx, `UPDATE receipt_jobs SET status = ?, attempts = attempts + 1, last_error = ?, next_at = ?, done_at = ?
			WHERE id = ?`, status, msg, next, done, t.ID); err != nil {
			return err
		}
		if t.Printer == nil {
			return nil
		}
		okAt := any(now)
		if runErr != nil {
			okAt = nil
		}
		_, err := tx.ExecContext(ctx, `UPDATE register_printers SET last_error = ?, last_ok_at = coalesce(?, last_ok_at)
			WHERE org_id = ? AND register_id = ?`, msg, okAt, t.OrgID, t.Printer.RegisterID)
		return err
	})
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return strings.ToValidUTF8(s[:n], "")
}

// Receipts (docs/receipts.md): numbered once by the store, from a
// sequence of its own node (checkReceipt); never changed.
var entReceipt = new(noun)

func init() {
	register(entReceipt, noun{Name: "receipt", Table: "receipts", Merge: mergeAppend, Digest: locationRows, Formats: []formatStep{{Format: 4, Migration: 31}},
		NewState: func(*engine.DB) any { return &receiptState{wake: make(chan struct{}, 1)} },
		Edge: &edgeRule{Loc: ownLocation, Scopes: saleWrite,
			Refs: []ref{{Col: "order_id", Table: "orders"}, {Col: "refund_id", Table: "refunds"}}, Check: checkReceipt}})
}

// checkReceipt: a store's receipt carries a number of one of its own
// node's sequences (the code starts with the node's number prefix), seq
// at least 1 and the number spelled from them; kind sale without a
// refund, refund with one of the order's refunds; one receipt per sale
// and per refund, and a number the org has not seen. The edge owns its
// numbering: no other node can take one of its numbers.
func checkReceipt(ctx context.Context, ad *admitter, c *change.Change, f map[string]any) error {
	if err := within(f, "seq", 1, maxAmount, true); err != nil {
		return err
	}
	str := func(k string) string { v, _ := f[k].(string); return v }
	seq, _ := intField(f, "seq")
	number, kind, refund, reg := str("number"), str("kind"), str("refund_id"), str("register_id")
	code, _, _ := strings.Cut(number, "-")
	if !strings.HasPrefix(number, numberPrefixOf(c.Origin)+"-") || code == "" ||
		!strings.HasSuffix(number, "-"+fmt.Sprintf("%06d", seq)) || len(number) > 100 {
		return refuse(RefusedValue, "receipt number %q is not one of node %s's sequences at seq %d", number, c.Origin, seq)
	}
	if reg != "" && !kassa.ValidRegisterID(reg) {
		return refuse(RefusedValue, "register_id %q is not a till id", reg)
	}
	if (kind == kassa.ReceiptSale) != (refund == "") || (kind != kassa.ReceiptSale && kind != kassa.ReceiptRefund) {
		return refuse(RefusedValue, "a sale's receipt has no refund_id, a refund's has one (kind %q)", kind)
	}
	var n int
	if err := ad.Tx.QueryRowContext(ctx, `SELECT count(*) FROM receipts WHERE org_id = ?1 AND (number = ?2
		OR (order_id = ?3 AND coalesce(refund_id, '') = ?4))`, c.OrgID, number, str("order_id"), refund).Scan(&n); err != nil {
		return err
	}
	if n > 0 {
		return refuse(RefusedValue, "receipt %s, or a receipt of that sale or refund, is already at the hub", number)
	}
	if refund != "" {
		if err := ad.Tx.QueryRowContext(ctx, `SELECT count(*) FROM refunds WHERE id = ? AND order_id = ? AND org_id = ?`,
			refund, str("order_id"), c.OrgID).Scan(&n); err != nil {
			return err
		}
		if n == 0 {
			return refuse(RefusedReference, "refund %s is not a refund of order %s", refund, str("order_id"))
		}
	}
	return nil
}

// receiptState: a receipt print or e-mail was queued (ReceiptJobsDue).
type receiptState struct{ wake chan struct{} }

// receiptsIn is db's receiptState.
func receiptsIn(db *DB) *receiptState { return db.States[entReceipt].(*receiptState) }
