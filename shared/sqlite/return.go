package sqlite

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"kassa.dev/shared/kassa"
)

// ReturnService takes goods back, with or without their receipt, to the
// original tender or to store credit, and exchanges them for a new sale
// (docs/returns.md). A return with a receipt is an order refund (its
// lines, restocked one by one) whose money goes back through the order's
// payments or onto the customer's store credit, in one unit; one without
// is a store credit entry per product.
type ReturnService struct {
	db       *DB
	orders   *OrderService
	payments *PaymentService
}

// NewReturnService returns the return service over db.
func NewReturnService(db *DB, orders *OrderService, payments *PaymentService) *ReturnService {
	return &ReturnService{db: db, orders: orders, payments: payments}
}

var _ kassa.ReturnService = (*ReturnService)(nil)

// Return takes goods back. Errors: ENotFound (the order), EInvalid naming
// the field (a quantity beyond what is left of a line, a customer needed
// for store credit, a product of no such id), EConflict (an order not
// completed), EForbidden (no receipt without a manager's approval; a
// cashier's refunds above refund_limit).
func (s *ReturnService) Return(ctx context.Context, in *kassa.ReturnRequest) (*kassa.Return, error) {
	a, err := kassa.MustActor(ctx)
	if err != nil {
		return nil, err
	}
	if err := in.Validate(); err != nil {
		return nil, err
	}
	if in.OrderID == "" {
		return s.withoutReceipt(ctx, a, in)
	}
	defer ordersIn(s.db).locks.Lock(in.OrderID)()
	return s.withReceipt(ctx, a, in, 0)
}

// withReceipt returns lines of in's order (its lock held): keep of the
// value goes to store credit whatever the destination (an exchange's new
// sale), the rest to in's destination.
func (s *ReturnService) withReceipt(ctx context.Context, a *kassa.Actor, in *kassa.ReturnRequest, keep int64) (*kassa.Return, error) {
	req, restock := refundOf(in.LineItems)
	req.Reason, req.RegisterID, req.Approver = in.Reason, in.RegisterID, in.Approver
	r, err := s.orders.planRefund(ctx, a, in.OrderID, req)
	if err != nil {
		return nil, err
	}
	if err := s.atTheStore(ctx, a.OrgID, r.o.LocationID); err != nil {
		return nil, err
	}
	for i := range r.plan.Lines {
		r.plan.Lines[i].Restock = restock[r.plan.Lines[i].LineItemID]
	}
	rt, err := s.split(ctx, a, in, r, keep)
	if err != nil {
		return nil, err
	}
	paid, err := s.payments.refundPayments(ctx, r.o, rt.ToTender)
	if err != nil && len(paid) == 0 {
		return nil, err
	}
	if err != nil {
		// Part of the money went back before a processor failed: record
		// that part, as RefundOrder does.
		s.db.Log.Error("return partly failed", "order", r.o.ID, "err", err)
		rt.ToTender = sumRefunded(paid)
		rt.Amount = rt.ToTender + rt.ToCredit
		r.plan = r.plan.Scaled(rt.Amount)
	}
	r.paid = paid
	r.id = s.db.NewID()
	rr := &receiptReturn{rt: rt, r: r}
	if err := s.db.Write(ctx, func(tx *Tx) error { return rr.write(ctx, tx) }); err != nil {
		return nil, err
	}
	s.db.wakeReceipts()
	return s.returned(ctx, a, rt, r.id)
}

// refundOf is the order refund of a return's lines, and which of them
// go back on sale.
func refundOf(lines []kassa.ReturnLineInput) (*kassa.RefundRequest, map[string]bool) {
	req := &kassa.RefundRequest{LineItems: []kassa.RefundLineInput{}}
	restock := map[string]bool{}
	for _, l := range lines {
		req.LineItems = append(req.LineItems, kassa.RefundLineInput{LineItemID: l.LineItemID, Quantity: l.Quantity})
		restock[l.LineItemID] = l.Restock
	}
	return req, restock
}

// split decides where a planned return's money goes and whose store
// credit takes its part: the order's customer, else the one named.
func (s *ReturnService) split(ctx context.Context, a *kassa.Actor, in *kassa.ReturnRequest, r *orderRefund, keep int64) (*kassa.Return, error) {
	rt := &kassa.Return{OrderID: &r.o.ID, LocationID: r.o.LocationID, Amount: r.plan.Amount, RefundTo: in.Destination(), Lines: []kassa.ReturnLine{}}
	rt.ToCredit = min(keep, rt.Amount)
	if rt.RefundTo == kassa.RefundToStoreCredit {
		rt.ToCredit = rt.Amount
	}
	rt.ToTender = rt.Amount - rt.ToCredit
	rt.CustomerID = r.o.CustomerID
	if rt.CustomerID == nil {
		rt.CustomerID = in.CustomerID
	}
	if rt.ToCredit > 0 && (rt.CustomerID == nil || !customerExists(ctx, s.db.Reader, a.OrgID, *rt.CustomerID)) {
		return nil, kassa.InvalidField("customer_id", "store credit is a customer's: the order has none, so name a customer of the org")
	}
	for _, l := range r.plan.Lines {
		id := l.LineItemID
		rt.Lines = append(rt.Lines, kassa.ReturnLine{LineItemID: &id, ProductID: r.o.FindLine(id).ProductID, Quantity: l.Quantity, Restock: l.Restock, Amount: l.Amount})
	}
	return rt, nil
}

// receiptReturn is one return with a receipt: what goes where, and the
// order refund that carries it.
type receiptReturn struct {
	rt *kassa.Return
	r  *orderRefund
}

// write records the return in one unit: the order's refund (the money
// through payments, the drawer, the stock, the receipt), then the store
// credit's part (checkCreditReturn admits it against the refund).
func (rr *receiptReturn) write(ctx context.Context, tx *Tx) error {
	if err := rr.r.write(ctx, tx); err != nil {
		return err
	}
	if rr.rt.ToCredit == 0 {
		return nil
	}
	o := rr.r.o
	_, err := appendStoreCredit(ctx, tx, o.OrgID, *rr.rt.CustomerID, o.Currency, creditEntry{typ: kassa.StoreCreditReturn, amount: rr.rt.ToCredit,
		locationID: o.LocationID, orderID: &o.ID, refundID: &rr.r.id, reason: rr.r.in.Reason, actor: actorID(rr.r.a)})
	return err
}

// returned fills in a return's id, its order and store credit as they
// are after it.
func (s *ReturnService) returned(ctx context.Context, a *kassa.Actor, rt *kassa.Return, id string) (*kassa.Return, error) {
	rt.ID = id
	var err error
	if rt.OrderID != nil {
		if rt.Order, err = findOrder(ctx, s.db.Reader, a.OrgID, *rt.OrderID); err != nil {
			return nil, err
		}
	}
	if rt.ToCredit > 0 {
		rt.StoreCredit, err = findStoreCredit(ctx, s.db.Reader, a.OrgID, *rt.CustomerID)
	}
	return rt, err
}

// withoutReceipt credits the customer's store credit for products taken
// back without their receipt, each at the lower of its price now at the
// store and the lowest it sold at there in the last NoReceiptWindowDays
// (kassa.NoReceiptCredit), restocked as asked: one unit, one entry a line.
func (s *ReturnService) withoutReceipt(ctx context.Context, a *kassa.Actor, in *kassa.ReturnRequest) (*kassa.Return, error) {
	if !kassa.MayReturnWithoutReceipt(a, in.Approver) {
		return nil, &kassa.Error{Kind: kassa.EForbidden, Message: "a return without receipt needs a manager or owner",
			Fields: []kassa.FieldError{{Field: "approval_token", Message: "must be a manager's or owner's sign-in approving the return"}}}
	}
	rt, loc, err := s.noReceiptPlan(ctx, a, in)
	if err != nil {
		return nil, err
	}
	nr := &noReceiptReturn{a: a, loc: loc, rt: rt, reason: in.Reason}
	if !a.IsStaff() {
		nr.approved = &in.Approver.UserID
	}
	if err := s.db.Write(ctx, func(tx *Tx) error { return nr.write(ctx, tx) }); err != nil {
		return nil, err
	}
	return s.returned(ctx, a, rt, nr.ids[0])
}

// noReceiptPlan prices a return without receipt: the store and customer
// it names, each product at kassa.NoReceiptCredit. EInvalid names the
// field: a store or customer needed, a product of no such id.
func (s *ReturnService) noReceiptPlan(ctx context.Context, a *kassa.Actor, in *kassa.ReturnRequest) (*kassa.Return, *kassa.Location, error) {
	if in.LocationID == "" {
		return nil, nil, kassa.InvalidField("location_id", "is required without a receipt: the store taking the goods back")
	}
	loc, err := findLocation(ctx, s.db.Reader, a.OrgID, in.LocationID)
	if kassa.ErrorKind(err) == kassa.ENotFound {
		return nil, nil, kassa.InvalidField("location_id", "no location of the org has that id")
	}
	if err != nil {
		return nil, nil, err
	}
	if in.CustomerID == nil || !customerExists(ctx, s.db.Reader, a.OrgID, *in.CustomerID) {
		return nil, nil, kassa.InvalidField("customer_id", "a return without receipt credits a customer of the org's store credit")
	}
	if err := s.atTheStore(ctx, a.OrgID, loc.ID); err != nil {
		return nil, nil, err
	}
	if err := s.ownStore(ctx, loc.ID); err != nil {
		return nil, nil, err
	}
	now := time.Now()
	prices, err := activePrices(ctx, s.db.Reader, a.OrgID, loc.ID, now)
	if err != nil {
		return nil, nil, err
	}
	rt := &kassa.Return{LocationID: loc.ID, CustomerID: in.CustomerID, RefundTo: kassa.RefundToStoreCredit, Lines: []kassa.ReturnLine{}}
	for i, l := range in.LineItems {
		p, err := findProduct(ctx, s.db.Reader, a.OrgID, l.ProductID)
		if kassa.ErrorKind(err) == kassa.ENotFound {
			return nil, nil, kassa.InvalidField(fmt.Sprintf("line_items[%d].product_id", i), "no product of the org has that id")
		}
		if err != nil {
			return nil, nil, err
		}
		price, ok := prices[p.ID]
		if !ok {
			price = p.BasePrice
		}
		lowest, err := lowestSold(ctx, s.db.Reader, a.OrgID, loc.ID, p.ID, now.AddDate(0, 0, -kassa.NoReceiptWindowDays))
		if err != nil {
			return nil, nil, err
		}
		line := kassa.ReturnLine{ProductID: p.ID, Quantity: l.Quantity, Restock: l.Restock, Amount: kassa.NoReceiptCredit(price, lowest, l.Quantity)}
		rt.Lines = append(rt.Lines, line)
		rt.Amount += line.Amount
	}
	rt.ToCredit = rt.Amount
	return rt, loc, nil
}

// lowestSold is the lowest unit price (the line's total over its
// quantity, rounded down) product sold at, at the store, since since: 0
// when it did not sell.
func lowestSold(ctx context.Context, q querier, orgID, locationID, productID string, since time.Time) (int64, error) {
	var lowest int64
	err := q.QueryRowContext(ctx, `SELECT coalesce(min(l.total / l.quantity), 0) FROM orders o JOIN order_lines l ON l.order_id = o.id
		WHERE o.org_id = ? AND o.location_id = ? AND o.completed_at >= ? AND o.status IN `+soldStatuses+` AND l.product_id = ? AND l.quantity > 0`,
		orgID, locationID, fmtTime(since), productID).Scan(&lowest)
	return lowest, err
}

// noReceiptReturn is one return without receipt being written.
type noReceiptReturn struct {
	a        *kassa.Actor
	loc      *kassa.Location
	rt       *kassa.Return
	reason   string
	approved *string
	ids      []string // its entries' ids, once written
}

// write credits each line to the customer's store credit and puts the
// restocked ones back on sale (a refund movement naming the entry).
func (nr *noReceiptReturn) write(ctx context.Context, tx *Tx) error {
	nr.ids = nr.ids[:0]
	for _, l := range nr.rt.Lines {
		id, err := appendStoreCredit(ctx, tx, nr.a.OrgID, *nr.rt.CustomerID, nr.loc.Currency, creditEntry{typ: kassa.StoreCreditReturn,
			amount: l.Amount, locationID: nr.loc.ID, productID: &l.ProductID, quantity: l.Quantity, restock: l.Restock,
			reason: nr.reason, actor: actorID(nr.a), approvedBy: nr.approved})
		if err != nil {
			return err
		}
		nr.ids = append(nr.ids, id)
		if !l.Restock {
			continue
		}
		if _, err := writeMovement(ctx, tx, movement{orgID: nr.a.OrgID, locationID: nr.loc.ID, productID: l.ProductID, delta: l.Quantity,
			reason: kassa.ReasonRefund, refType: "refund", refID: id, actor: deref(actorID(nr.a))}); err != nil {
			return err
		}
	}
	return nil
}

// Exchange takes lines of a past order back and sells new ones in one
// call: the new sale is priced (a quote) and opened for the customer, the
// return credits at least its total to the customer's store credit (the
// rest of the return's value to difference_to), a store_credit payment
// takes it onto the new order, and the order completes when that paid it
// all; else what is due is left to pay by any tender. A step failing
// after the new order opened cancels it when the return did not happen,
// and otherwise leaves the value on the customer's store credit.
func (s *ReturnService) Exchange(ctx context.Context, in *kassa.ExchangeRequest) (*kassa.Exchange, error) {
	a, err := kassa.MustActor(ctx)
	if err != nil {
		return nil, err
	}
	if err := in.Validate(); err != nil {
		return nil, err
	}
	o, err := findOrder(ctx, s.db.Reader, a.OrgID, in.OrderID)
	if err != nil {
		return nil, err
	}
	sale, err := s.exchangeSale(ctx, a, in, o)
	if err != nil {
		return nil, err
	}
	created, err := s.orders.CreateOrder(ctx, sale)
	if err != nil {
		return nil, err
	}
	rt, err := s.exchangeReturn(ctx, a, in, sale.CustomerID, created.Total)
	if err != nil {
		_, _ = s.orders.UpdateOrder(ctx, created.ID, &kassa.OrderUpdate{Status: kassa.Some(kassa.OrderCancelled)})
		return nil, renamed(err, "line_items", "return_lines")
	}
	return s.payExchange(ctx, in, rt, created)
}

// exchangeSale is the new sale of an exchange, at the order's store for
// its customer (or the one named), priced and checked before anything is
// written.
func (s *ReturnService) exchangeSale(ctx context.Context, a *kassa.Actor, in *kassa.ExchangeRequest, o *kassa.Order) (*kassa.OrderCreate, error) {
	customer := o.CustomerID
	if customer == nil {
		customer = in.CustomerID
	}
	if err := s.atTheStore(ctx, a.OrgID, o.LocationID); err != nil {
		return nil, err
	}
	if customer == nil || !customerExists(ctx, s.db.Reader, a.OrgID, *customer) {
		return nil, kassa.InvalidField("customer_id", "an exchange carries the return's value on a customer's store credit: the order has no customer, so name one of the org")
	}
	st, err := orgSettings(ctx, s.db.Reader, a.OrgID)
	if err != nil {
		return nil, err
	}
	if !st.Accepts(kassa.PaymentStoreCredit) {
		return nil, kassa.InvalidField("method", "store_credit is not enabled for this org: an exchange pays the new sale with the return's value through it")
	}
	// What comes back is checked before the new order is written: a
	// refused return leaves nothing behind.
	req, _ := refundOf(in.ReturnLines)
	plan, err := kassa.PlanRefund(o, req)
	if err != nil {
		return nil, renamed(err, "line_items", "return_lines")
	}
	if _, err := refundApproval(a, in.Approver, st.RefundLimit, o.RefundedTotal, plan.Amount); err != nil {
		return nil, err
	}
	sale := &kassa.OrderCreate{LocationID: o.LocationID, CustomerID: customer, Channel: o.Channel, LineItems: in.LineItems, Notes: "exchange of order " + o.Number}
	_, err = s.orders.QuoteOrder(ctx, sale)
	return sale, err
}

// exchangeReturn returns the exchange's lines, keeping total of their
// value on the customer's store credit for the new sale.
func (s *ReturnService) exchangeReturn(ctx context.Context, a *kassa.Actor, in *kassa.ExchangeRequest, customer *string, total int64) (*kassa.Return, error) {
	defer ordersIn(s.db).locks.Lock(in.OrderID)()
	return s.withReceipt(ctx, a, &kassa.ReturnRequest{OrderID: in.OrderID, CustomerID: customer, LineItems: in.ReturnLines,
		RefundTo: cmp.Or(in.DifferenceTo, kassa.RefundToOriginal), Reason: in.Reason, RegisterID: in.RegisterID, Approver: in.Approver}, total)
}

// payExchange pays the new order with the return's value and completes
// it when that covers it.
func (s *ReturnService) payExchange(ctx context.Context, in *kassa.ExchangeRequest, rt *kassa.Return, o *kassa.Order) (*kassa.Exchange, error) {
	applied := min(rt.ToCredit, o.Total)
	if applied > 0 {
		if _, err := s.payments.Initiate(ctx, &kassa.PaymentInitiate{OrderID: o.ID, Amount: applied, Method: kassa.PaymentStoreCredit,
			RegisterID: in.RegisterID}); err != nil {
			return nil, err
		}
	}
	var err error
	if applied == o.Total {
		o, err = s.orders.CompleteOrder(ctx, o.ID)
	} else {
		o, err = s.orders.FindOrderByID(ctx, o.ID)
	}
	if err != nil {
		return nil, err
	}
	return &kassa.Exchange{Return: rt, Order: o, Due: o.Total - o.PaidTotal}, nil
}

// renamed is err with its fields' prefix from renamed to: a refund's
// line_items are an exchange's return_lines.
func renamed(err error, from, to string) error {
	var ke *kassa.Error
	if !errors.As(err, &ke) || len(ke.Fields) == 0 {
		return err
	}
	out := *ke
	out.Fields = slices.Clone(ke.Fields)
	for i, f := range out.Fields {
		if rest, ok := strings.CutPrefix(f.Field, from); ok {
			out.Fields[i].Field = to + rest
		}
	}
	return &out
}

// atTheStore refuses, at the hub, a return at a store that has its own
// edge: the goods, the drawer and the order's money are the store's, and
// the hub does not route returns to it (as it routes refunds): 409.
func (s *ReturnService) atTheStore(ctx context.Context, orgID, locationID string) error {
	if !s.db.Hub {
		return nil
	}
	var n int
	if err := s.db.Reader.QueryRowContext(ctx, `SELECT count(*) FROM sync_nodes WHERE org_id = ? AND location_id = ? AND revoked_at IS NULL`,
		orgID, locationID).Scan(&n); err != nil {
		return err
	}
	if n > 0 {
		return kassa.Errorf(kassa.EConflict, "store %s has its own till server: take the return or exchange there, where the goods and the drawer are", locationID)
	}
	return nil
}

// ownStore refuses, at an enrolled edge, goods taken back for another
// store: the edge writes its own store's stock and credit entries only
// (the hub admits no other).
func (s *ReturnService) ownStore(ctx context.Context, locationID string) error {
	if !s.db.UnderHub.Load() {
		return nil
	}
	mine, err := s.db.Meta(ctx, MetaEdgeLocation)
	if err != nil || mine == "" || mine == locationID {
		return err
	}
	return kassa.InvalidField("location_id", "this store takes goods back at its own location only")
}
