package sqlite

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"kassa.dev/shared/kassa"
	"kassa.dev/shared/sqlite/engine"
	"kassa.dev/sync/change"
)

// OrderService implements kassa.OrderService.
type OrderService struct {
	db       *DB
	payments *PaymentService
}

// NewOrderService returns the order service of db; it refunds and voids
// through the processors of payments.
func NewOrderService(db *DB, payments *PaymentService) *OrderService {
	return &OrderService{db: db, payments: payments}
}

var _ kassa.OrderService = (*OrderService)(nil)

const orderCols = `SELECT id, org_id, location_id, number, status, channel, customer_id, currency, subtotal, discount_total,
	tax_total, total, paid_total, refunded_total, loyalty_points_earned, kitchen_status, notes, tax_inclusive, tax_rate_bps,
	occurred_at, completed_at, created_at, updated_at, created_by, voucher_code, campaigns, approved_by, gift_card_total FROM orders`

func scanOrder(s scanner) (*kassa.Order, error) {
	var o kassa.Order
	var occurred, created, updated string
	var completed sql.NullString
	var campaigns string
	if err := s.Scan(&o.ID, &o.OrgID, &o.LocationID, &o.Number, &o.Status, &o.Channel, &o.CustomerID, &o.Currency,
		&o.Subtotal, &o.DiscountTotal, &o.TaxTotal, &o.Total, &o.PaidTotal, &o.RefundedTotal, &o.LoyaltyPointsEarned,
		&o.KitchenStatus, &o.Notes, &o.TaxInclusive, &o.TaxRateBps, &occurred, &completed, &created, &updated, &o.CreatedBy,
		&o.VoucherCode, &campaigns, &o.ApprovedBy, &o.GiftCardTotal); err != nil {
		return nil, err
	}
	o.Campaigns, o.TaxBreakdown = []kassa.AppliedCampaign{}, []kassa.TaxGroup{}
	if err := decodeJSON(campaigns, &o.Campaigns); err != nil {
		return nil, err
	}
	o.OccurredAt, o.CreatedAt, o.UpdatedAt = parseTime(occurred), parseTime(created), parseTime(updated)
	if completed.Valid {
		t := parseTime(completed.String)
		o.CompletedAt = &t
	}
	o.LineItems, o.Payments, o.Refunds, o.GiftCards = []kassa.LineItem{}, []kassa.Payment{}, []kassa.Refund{}, []kassa.GiftCardLine{}
	o.History = []kassa.OrderHistory{{Status: kassa.OrderOpen, At: o.CreatedAt, Actor: o.CreatedBy}}
	return &o, nil
}

func orderID(o *kassa.Order) string { return o.ID }

// orderParts selects what loadOrder reads besides the order row.
type orderParts uint8

const (
	partLines orderParts = 1 << iota
	partPayments
	partRefunds // also fills the lines' refunded quantities
	partHistory
	allParts = partLines | partPayments | partRefunds | partHistory
)

// findOrder loads one order of the org with its lines, payments, refunds and history.
func findOrder(ctx context.Context, q querier, orgID, id string) (*kassa.Order, error) {
	return loadOrder(ctx, q, orgID, id, allParts)
}

// lockOrder takes order id's row lock for the rest of the unit
// (Tx.LockRow) and reads the order: on several hubs, a unit that changes
// an order's money reads it only once no other unit can change it.
func lockOrder(ctx context.Context, tx *Tx, orgID, id string) (*kassa.Order, error) {
	if err := tx.LockRow(ctx, "orders", id); err != nil {
		return nil, err
	}
	return findOrder(ctx, tx, orgID, id)
}

// loadOrder loads one order of the org with the given parts: steps inside
// a write read only what they decide on, to keep the writer's time short.
func loadOrder(ctx context.Context, q querier, orgID, id string, parts orderParts) (*kassa.Order, error) {
	q, done, err := inSnapshot(ctx, q) // the order and its parts as of one moment
	if err != nil {
		return nil, err
	}
	defer done()
	o, err := findByID(ctx, q, orderCols, "order", orgID, id, scanOrder)
	if err != nil {
		return nil, err
	}
	if err := loadOrderParts(ctx, q, []*kassa.Order{o}, parts); err != nil {
		return nil, err
	}
	return o, nil
}

// loadOrderParts fills the chosen parts of orders with one query per part.
func loadOrderParts(ctx context.Context, q querier, orders []*kassa.Order, parts orderParts) error {
	if len(orders) == 0 {
		return nil
	}
	if parts&partRefunds != 0 {
		parts |= partLines
	}
	byID := make(map[string]*kassa.Order, len(orders))
	args := make([]any, len(orders))
	for i, o := range orders {
		byID[o.ID] = o
		args[i] = o.ID
	}
	in := "(" + placeholders(len(orders)) + ")"
	if parts&partLines != 0 {
		if err := errors.Join(loadLines(ctx, q, in, args, byID), loadGiftCardLines(ctx, q, in, args, byID)); err != nil {
			return err
		}
	}
	if parts&partPayments != 0 {
		if err := loadPayments(ctx, q, in, args, byID); err != nil {
			return err
		}
	}
	if parts&partRefunds != 0 {
		if err := loadRefunds(ctx, q, in, args, byID); err != nil {
			return err
		}
	}
	if parts&partHistory != 0 {
		return loadHistory(ctx, q, in, args, byID)
	}
	return nil
}

func loadLines(ctx context.Context, q querier, in string, args []any, byID map[string]*kassa.Order) error {
	rows, err := q.QueryContext(ctx, `SELECT order_id, id, product_id, name, sku, quantity, unit_price, modifiers, discount, tax, total,
		campaign_discounts, tax_rate_bps, variant_id, original_price, markdown_id FROM order_lines WHERE order_id IN `+in+` ORDER BY order_id, position`, args...)
	if err != nil {
		return err
	}
	for rows.Next() {
		var oid, mods, parts string
		var rate *int
		l := kassa.LineItem{CampaignDiscounts: []kassa.LineCampaign{}}
		if err := rows.Scan(&oid, &l.ID, &l.ProductID, &l.Name, &l.SKU, &l.Quantity, &l.UnitPrice, &mods, &l.Discount, &l.Tax, &l.Total, &parts, &rate,
			&l.VariantID, &l.OriginalPrice, &l.MarkdownID); err != nil {
			rows.Close()
			return err
		}
		if err := errors.Join(decodeJSON(mods, &l.Modifiers), decodeJSON(parts, &l.CampaignDiscounts)); err != nil {
			rows.Close()
			return err
		}
		o := byID[oid]
		l.TaxRateBps = kassa.TaxRateOf(rate, o.TaxRateBps)
		o.LineItems = append(o.LineItems, l)
		o.TaxBreakdown = kassa.AddTax(o.TaxBreakdown, l.TaxRateBps, l.Total-l.Tax, l.Tax)
	}
	rows.Close()
	return rows.Err()
}

func loadPayments(ctx context.Context, q querier, in string, args []any, byID map[string]*kassa.Order) error {
	rows, err := q.QueryContext(ctx, paymentCols+` WHERE order_id IN `+in+` ORDER BY id`, args...)
	if err != nil {
		return err
	}
	for rows.Next() {
		p, err := scanPayment(rows)
		if err != nil {
			rows.Close()
			return err
		}
		byID[p.OrderID].Payments = append(byID[p.OrderID].Payments, *p)
	}
	rows.Close()
	return rows.Err()
}

func loadRefunds(ctx context.Context, q querier, in string, args []any, byID map[string]*kassa.Order) error {
	rows, err := q.QueryContext(ctx, `SELECT id, order_id, amount, reason, restock, lines, payments, actor, approved_by, created_at, gift_card_amount
		FROM refunds WHERE order_id IN `+in+` ORDER BY id`, args...)
	if err != nil {
		return err
	}
	for rows.Next() {
		var r kassa.Refund
		var lines, pays, created string
		if err := rows.Scan(&r.ID, &r.OrderID, &r.Amount, &r.Reason, &r.Restock, &lines, &pays, &r.Actor, &r.ApprovedBy, &created, &r.GiftCardAmount); err != nil {
			rows.Close()
			return err
		}
		r.CreatedAt = parseTime(created)
		if err := errors.Join(decodeJSON(lines, &r.Lines), decodeJSON(pays, &r.Payments)); err != nil {
			rows.Close()
			return err
		}
		o := byID[r.OrderID]
		o.Refunds = append(o.Refunds, r)
		for _, rl := range r.Lines {
			for i := range o.LineItems {
				if o.LineItems[i].ID == rl.LineItemID {
					o.LineItems[i].RefundedQuantity += rl.Quantity
				}
			}
		}
	}
	rows.Close()
	return rows.Err()
}

func loadHistory(ctx context.Context, q querier, in string, args []any, byID map[string]*kassa.Order) error {
	rows, err := q.QueryContext(ctx, `SELECT order_id, status, at, actor FROM order_history WHERE order_id IN `+in+` ORDER BY at, id`, args...)
	if err != nil {
		return err
	}
	defer rows.Close()
	for rows.Next() {
		var oid, at string
		var h kassa.OrderHistory
		if err := rows.Scan(&oid, &h.Status, &at, &h.Actor); err != nil {
			return err
		}
		h.At = parseTime(at)
		byID[oid].History = append(byID[oid].History, h)
	}
	return rows.Err()
}

// FindOrders lists the org's orders, filtered, with their parts.
func (s *OrderService) FindOrders(ctx context.Context, f kassa.OrderFilter) (kassa.List[kassa.Order], error) {
	a, err := kassa.MustActor(ctx)
	if err != nil {
		return kassa.List[kassa.Order]{}, err
	}
	w := orgFilter(a.OrgID)
	w.eqText("status", f.Status)
	w.eqText("number", f.Number)
	eq(w, "location_id", f.LocationID)
	if f.CustomerID != nil {
		if !customerExists(ctx, s.db.Reader, a.OrgID, *f.CustomerID) {
			return kassa.List[kassa.Order]{}, kassa.NotFound("customer", *f.CustomerID)
		}
		eq(w, "customer_id", f.CustomerID)
	}
	if f.CreatedAfter != nil {
		w.and("created_at >= ?", fmtTime(*f.CreatedAfter))
	}
	if f.CreatedBefore != nil {
		w.and("created_at < ?", fmtTime(*f.CreatedBefore))
	}
	q, done, err := inSnapshot(ctx, s.db.Reader) // the page and its orders' parts as of one moment
	if err != nil {
		return kassa.List[kassa.Order]{}, err
	}
	defer done()
	l, err := findPage(ctx, q, orderCols, w, f.Page, scanOrder, orderID)
	if err != nil {
		return l, err
	}
	ptrs := make([]*kassa.Order, len(l.Items))
	for i := range l.Items {
		ptrs[i] = &l.Items[i]
	}
	return l, loadOrderParts(ctx, q, ptrs, allParts)
}

func customerExists(ctx context.Context, q querier, orgID, id string) bool {
	var n int
	err := q.QueryRowContext(ctx, `SELECT count(*) FROM customers WHERE org_id = ? AND id = ? AND deleted_at IS NULL`, orgID, id).Scan(&n)
	return err == nil && n == 1
}

// FindOrderByID returns one order with its parts, or ENotFound.
func (s *OrderService) FindOrderByID(ctx context.Context, id string) (*kassa.Order, error) {
	return readOwn(ctx, s.db, findOrder, id)
}

// CreateOrder prices and stores a new open order. Errors: EInvalid (also
// beyond the money limits), EForbidden (a manual discount above the actor's
// discount limit, kassa.CheckDiscount).
func (s *OrderService) CreateOrder(ctx context.Context, in *kassa.OrderCreate) (*kassa.Order, error) {
	a, err := kassa.MustActor(ctx)
	if err != nil {
		return nil, err
	}
	if err := in.Validate(); err != nil {
		return nil, err
	}
	// An automatic campaign's last use taken by a concurrent order between
	// pricing and the unit (errLimitTaken) prices the order again, now
	// without it; a voucher's is the client's 422.
	for range 3 {
		o, err := s.createOrder(ctx, a, in)
		if !errors.Is(err, errLimitTaken) {
			return o, err
		}
	}
	return nil, kassa.Errorf(kassa.EConflict, "campaign usage limits changed while the order was priced; send it again")
}

// price prices an order off the writer, in one read transaction: the
// catalog as it stands when the order is taken (or quoted).
func (s *OrderService) price(ctx context.Context, a *kassa.Actor, in *kassa.OrderCreate) (*pricedOrder, error) {
	gen := campaignsIn(s.db).live.gen(a.OrgID) // before the snapshot: see liveCampaigns
	cat := catalogOf(s.db, a.OrgID)            // likewise: see catalogCache
	snap, err := s.db.Reader.Snapshot(ctx)
	if err != nil {
		return nil, err
	}
	defer snap.Done()
	cat.q = snap
	return s.priceOrder(ctx, cat, gen, a, in)
}

func (s *OrderService) createOrder(ctx context.Context, a *kassa.Actor, in *kassa.OrderCreate) (*kassa.Order, error) {
	p, err := s.price(ctx, a, in)
	if err != nil {
		return nil, err
	}
	loc, price, id := p.loc, p.price, p.id
	// The order as stored, assembled from what is written rather than
	// read back (the order flow's hottest path); the unit fills in its
	// number and times and logs it as the order.created event.
	o := p.order(a, in)
	err = s.db.Write(ctx, func(tx *Tx) error {
		number, err := s.nextNumber(ctx, tx, loc.ID)
		if err != nil {
			return err
		}
		err = tx.InsertAt(ctx, entOrder, a.OrgID, loc.ID, id, map[string]any{
			"location_id": loc.ID, "number": number, "status": kassa.OrderOpen, "channel": p.channel,
			"customer_id": in.CustomerID, "currency": loc.Currency, "subtotal": price.Subtotal,
			"discount_total": price.DiscountTotal, "tax_total": price.TaxTotal, "total": price.Total,
			"paid_total": int64(0), "refunded_total": int64(0), "loyalty_points_earned": int64(0),
			"kitchen_status": kassa.KitchenNew, "notes": in.Notes, "tax_inclusive": p.settings.TaxInclusive,
			"tax_rate_bps": p.settings.TaxRateBps, "created_by": actorID(a), "occurred_at": tx.Now,
			"voucher_code": p.voucher, "campaigns": o.Campaigns, "approved_by": p.approved, "gift_card_total": o.GiftCardTotal,
		})
		if err != nil {
			return err
		}
		if err := p.writeLines(ctx, tx, o, in); err != nil {
			return err
		}
		if err := checkLimitsInUnit(ctx, tx, a.OrgID, p.limited, in.CustomerID, p.voucher); err != nil {
			return err
		}
		if err := writeRedemptions(ctx, tx, o); err != nil {
			return err
		}
		// No history row for "open": it is the order row's own creation
		// (created_at, created_by), and scanOrder puts it first.
		t := *p.ticket
		t.Number, t.OrderedAt, t.UpdatedAt = number, tx.Now, tx.Now
		o.Number, o.History[0].At, o.OccurredAt, o.CreatedAt, o.UpdatedAt = number, tx.Now, tx.Now, tx.Now, tx.Now
		tx.Emit(a.OrgID, loc.ID, kassa.EventOrderCreated, o)
		return writeNewTicket(ctx, tx, a.OrgID, &t, loc.Timezone)
	})
	if err != nil {
		return nil, err
	}
	return o, nil
}

// writeLines writes the order's lines, then its gift card lines.
func (p *pricedOrder) writeLines(ctx context.Context, tx *Tx, o *kassa.Order, in *kassa.OrderCreate) error {
	for i, l := range p.lines {
		lp := p.price.Lines[i]
		err := tx.InsertAt(ctx, entOrderLine, o.OrgID, o.LocationID, p.lineIDs[i], map[string]any{
			"order_id": o.ID, "position": i, "product_id": l.product.ID, "name": l.item.Name, "sku": l.item.SKU,
			"quantity": in.LineItems[i].Quantity, "unit_price": l.unitPrice, "modifiers": l.modifiers,
			"discount": lp.Discount, "tax": lp.Tax, "total": lp.Total, "campaign_discounts": o.LineItems[i].CampaignDiscounts,
			"tax_rate_bps": p.rates[i], "variant_id": l.variantID(), "original_price": l.original, "markdown_id": l.markdownID(),
		})
		if err != nil {
			return err
		}
	}
	return writeGiftCardLines(ctx, tx, o, p.gifts)
}

// order is the priced order as CreateOrder stores it, before its number
// and times.
func (p *pricedOrder) order(a *kassa.Actor, in *kassa.OrderCreate) *kassa.Order {
	loc, lines, price, id := p.loc, p.lines, p.price, p.id
	o := &kassa.Order{ID: id, OrgID: a.OrgID, LocationID: loc.ID, Status: kassa.OrderOpen,
		Channel: p.channel, CustomerID: in.CustomerID, Subtotal: price.Subtotal, DiscountTotal: price.DiscountTotal,
		TaxTotal: price.TaxTotal, Total: price.Total, Currency: loc.Currency, TaxInclusive: p.settings.TaxInclusive,
		TaxRateBps: p.settings.TaxRateBps, Payments: []kassa.Payment{}, Refunds: []kassa.Refund{},
		History:       []kassa.OrderHistory{{Status: kassa.OrderOpen, Actor: actorID(a)}},
		KitchenStatus: kassa.KitchenNew, Notes: in.Notes, CreatedBy: actorID(a), LineItems: make([]kassa.LineItem, len(lines)),
		VoucherCode: p.voucher, Campaigns: orEmpty(p.campaigns.Applied), ApprovedBy: p.approved}
	for i, l := range lines {
		lp := price.Lines[i]
		o.LineItems[i] = kassa.LineItem{ID: p.lineIDs[i], ProductID: l.product.ID, Name: l.item.Name, SKU: l.item.SKU,
			Quantity: in.LineItems[i].Quantity, UnitPrice: l.unitPrice, Modifiers: l.modifiers, Discount: lp.Discount,
			Tax: lp.Tax, TaxRateBps: lp.TaxBps, Total: lp.Total, CampaignDiscounts: orEmpty(p.campaigns.Lines[i]),
			VariantID: l.variantID(), OriginalPrice: l.original, MarkdownID: l.markdownID()}
	}
	o.TaxBreakdown = orEmpty(price.TaxBreakdown)
	o.GiftCards, o.GiftCardTotal = p.gifts.giftCardLines(), p.gifts.total
	return o
}

// QuoteOrder prices in as CreateOrder would, from the same snapshot of the
// catalog, campaigns and settings, and stores nothing: no number, no
// kitchen ticket, no campaign use. Errors: those of CreateOrder's pricing
// (EInvalid, EForbidden for a manual discount above the actor's limit).
func (s *OrderService) QuoteOrder(ctx context.Context, in *kassa.OrderCreate) (*kassa.Order, error) {
	a, err := kassa.MustActor(ctx)
	if err != nil {
		return nil, err
	}
	if err := in.Validate(); err != nil {
		return nil, err
	}
	p, err := s.price(ctx, a, in)
	if err != nil {
		return nil, err
	}
	o := p.order(a, in)
	o.ID, o.History[0].At, o.OccurredAt = "", s.db.Now(), s.db.Now()
	o.CreatedAt, o.UpdatedAt = o.OccurredAt, o.OccurredAt
	for i := range o.LineItems {
		o.LineItems[i].ID = ""
	}
	return o, nil
}

// pricedOrder is what CreateOrder reads and computes before its unit of
// work.
type pricedOrder struct {
	loc      *kassa.Location
	settings kassa.OrgSettings
	lines    []builtLine
	price    kassa.OrderPrice
	id       string
	channel  string
	lineIDs  []string
	ticket   *kassa.Ticket
	// campaigns is what campaigns gave; voucher the order's code, normalized.
	campaigns kassa.CampaignPrice
	voucher   *string
	// limited are the applied campaigns with a usage limit, checked again
	// in the unit (checkLimitsInUnit).
	limited []*kassa.Campaign
	// rates are the lines' tax categories' rates (nil: the order's rate).
	rates []*int
	// approved is who approved its manual discount (approved_by).
	approved *string
	// gifts are its gift card lines (giftcard.go), in price.Total.
	gifts *giftCardSale
}

// priceOrder reads the location, settings and catalog an order is priced
// from (on cat.q, a snapshot begun after the campaign cache's generation
// gen and the catalog cache's were read), prices it and builds its
// kitchen ticket.
func (s *OrderService) priceOrder(ctx context.Context, cat catalogView, gen uint64, a *kassa.Actor, in *kassa.OrderCreate) (*pricedOrder, error) {
	loc, err := findLocation(ctx, cat.q, a.OrgID, in.LocationID)
	if err != nil {
		return nil, kassa.InvalidField("location_id", "no such location")
	}
	if in.CustomerID != nil && !customerExists(ctx, cat.q, a.OrgID, *in.CustomerID) {
		return nil, kassa.InvalidField("customer_id", "no such customer")
	}
	settings, err := orgSettings(ctx, cat.q, a.OrgID)
	if err != nil {
		return nil, err
	}
	lines, err := s.buildLines(ctx, cat, loc.ID, s.db.Now(), in.LineItems)
	if err != nil {
		return nil, err
	}
	live, err := s.db.liveCampaigns(ctx, cat.q, gen, a.OrgID)
	if err != nil {
		return nil, err
	}
	campaigns, err := orderCampaigns(ctx, cat.q, live, a.OrgID, loc, s.db.Now(), in.CustomerID, campaignLinesOf(lines, in), in.VoucherCode, true)
	if err != nil {
		return nil, err
	}
	rates, err := lineTaxRates(ctx, cat.q, a.OrgID, &settings, lines)
	if err != nil {
		return nil, err
	}
	priced := make([]kassa.PricedLine, len(lines))
	for i, l := range lines {
		priced[i] = kassa.PricedLine{Unit: l.unit, Quantity: in.LineItems[i].Quantity, Discount: in.LineItems[i].Discount,
			Campaign: campaigns.LineTotals[i], TaxBps: rates[i]}
	}
	price, err := priceItems(priced, in, &settings)
	if err != nil {
		return nil, err
	}
	// The role's limit is on manual discounts: campaigns are head office's.
	approved, err := kassa.ApproveDiscount(a, in.Approver, settings.DiscountLimits, price.Subtotal, price.DiscountTotal-price.CampaignTotal)
	if err != nil {
		return nil, err
	}
	gifts, err := prepareGiftCardLines(ctx, cat.q, s.db, a.OrgID, loc.Currency, &settings, in.GiftCards, &price)
	if err != nil {
		return nil, err
	}
	p := &pricedOrder{loc: loc, settings: settings, lines: lines, id: s.db.NewID(), channel: in.Channel, price: price, campaigns: campaigns,
		limited: limitedCampaigns(live, campaigns.Applied), rates: rates, approved: approved, gifts: gifts}
	if in.VoucherCode != nil {
		code := kassa.NormalizeVoucher(*in.VoucherCode)
		p.voucher = &code
	}
	if p.channel == "" {
		p.channel = kassa.ChannelPOS
	}
	if err := p.draftTicket(ctx, cat.q, s.db, a.OrgID, in); err != nil {
		return nil, err
	}
	return p, nil
}

// campaignLinesOf are an order's lines as campaigns price them.
func campaignLinesOf(lines []builtLine, in *kassa.OrderCreate) []kassa.CampaignLine {
	cls := make([]kassa.CampaignLine, len(lines))
	for i, l := range lines {
		cls[i] = kassa.CampaignLine{ProductID: l.product.ID, CategoryID: deref(l.product.CategoryID), Unit: l.unit, Quantity: in.LineItems[i].Quantity}
	}
	return cls
}

// draftTicket builds the order's kitchen ticket (and its lines' ids) here,
// off the writer; the unit of work only adds its number and time.
func (p *pricedOrder) draftTicket(ctx context.Context, q querier, db *DB, orgID string, in *kassa.OrderCreate) error {
	draft := &kassa.Order{ID: p.id, OrgID: orgID, LocationID: p.loc.ID, Channel: p.channel, Status: kassa.OrderOpen,
		KitchenStatus: kassa.KitchenNew, Notes: in.Notes}
	p.lineIDs = make([]string, len(p.lines))
	for i, l := range p.lines {
		p.lineIDs[i] = db.NewID()
		draft.LineItems = append(draft.LineItems, kassa.LineItem{ID: p.lineIDs[i], ProductID: l.product.ID, Name: l.item.Name,
			Quantity: in.LineItems[i].Quantity, Modifiers: l.modifiers})
	}
	var err error
	p.ticket, err = buildTicket(ctx, q, draft)
	return err
}

type builtLine struct {
	product   *kassa.Product
	item      *kassa.Product // what it sells: the product, or its variant (variant.go)
	original  *int64         // the price before a markdown lowered unitPrice (markdown.go)
	markdown  *kassa.Markdown
	unitPrice int64
	modifiers []kassa.LineModifier
	unit      int64 // unitPrice with the modifiers' adjustments (kassa.UnitPrice)
}

// buildLines resolves products, the location's price list and modifiers.
// Required groups without a choice take their default options.
func (s *OrderService) buildLines(ctx context.Context, cat catalogView, locationID string, now time.Time, in []kassa.OrderLineInput) ([]builtLine, error) {
	prices, err := cat.prices(ctx, locationID, now)
	if err != nil {
		return nil, err
	}
	markdowns, err := cat.markdowns(ctx)
	if err != nil {
		return nil, err
	}
	var v kassa.Validation
	out := make([]builtLine, len(in))
	groups := map[string]*kassa.ModifierGroup{}
	for i, li := range in {
		f := fmt.Sprintf("line_items[%d]", i)
		p, err := cat.product(ctx, li.ProductID)
		if err != nil || !p.IsActive {
			v.Add(f+".product_id", "no such active product")
			continue
		}
		b := builtLine{product: p, item: p}
		if b.product, b.item, err = soldItem(ctx, cat, p, li.VariantID, f, &v); err != nil {
			return nil, err
		}
		if b.item == nil {
			b.item = b.product
		}
		p = b.product
		b.unitPrice = b.item.BasePrice
		if pr, ok := prices[b.item.ID]; ok {
			b.unitPrice = pr
		}
		b.markDown(markdowns, now)
		gs := make([]*kassa.ModifierGroup, len(p.ModifierGroupIDs))
		for k, gid := range p.ModifierGroupIDs {
			if gs[k] = groups[gid]; gs[k] == nil {
				if gs[k], err = cat.group(ctx, gid); err != nil {
					return nil, err
				}
				groups[gid] = gs[k]
			}
		}
		var problems []string
		b.modifiers, problems = kassa.PickModifiers(p.Name, gs, li.ModifierOptionIDs)
		for _, msg := range problems {
			v.Add(f+".modifier_option_ids", "%s", msg)
		}
		adj := make([]int64, len(b.modifiers))
		for k, m := range b.modifiers {
			adj[k] = m.PriceAdjustment
		}
		b.unit = kassa.UnitPrice(b.unitPrice, adj...) // kassa.Price checks it and the line's gross
		out[i] = b
	}
	return out, v.Err()
}

// findModifierGroupTx loads a group's options inside a transaction.
func findModifierGroupTx(ctx context.Context, q querier, orgID, id string) (*kassa.ModifierGroup, error) {
	var g kassa.ModifierGroup
	var opts string
	err := q.QueryRowContext(ctx, `SELECT id, name, min_selections, max_selections, options FROM modifier_groups WHERE org_id = ? AND id = ?`, orgID, id).
		Scan(&g.ID, &g.Name, &g.MinSelections, &g.MaxSelections, &opts)
	if err != nil {
		return nil, fmt.Errorf("sqlite: modifier group %s of a product: %w", id, err)
	}
	return &g, decodeJSON(opts, &g.Options)
}

// activePrices returns product prices of the newest price list active at t
// that applies to the location (a list with no locations applies to all).
func activePrices(ctx context.Context, q querier, orgID, locationID string, t time.Time) (map[string]int64, error) {
	lists, err := priceListsAt(ctx, q, orgID, locationID)
	if err != nil {
		return nil, err
	}
	return pricesAt(lists, t), nil
}

// priceListRow is an active price list as pricing reads it.
type priceListRow struct {
	prices       []kassa.PriceListPrice
	starts, ends sql.NullString
}

// priceListsAt are the org's active price lists that apply to the
// location, newest first, whatever their time windows.
func priceListsAt(ctx context.Context, q querier, orgID, locationID string) ([]priceListRow, error) {
	rows, err := q.QueryContext(ctx, `SELECT prices, starts_at, ends_at FROM price_lists
		WHERE org_id = ? AND is_active = 1
		AND (`+engine.D(q).JSONArrayLength("location_ids")+` = 0 OR EXISTS (SELECT 1 FROM `+engine.D(q).JSONValues("price_lists.location_ids", "j")+` WHERE j.value = ?))
		ORDER BY id DESC`, orgID, locationID)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []priceListRow
	for rows.Next() {
		var l priceListRow
		var prices string
		if err := rows.Scan(&prices, &l.starts, &l.ends); err != nil {
			return nil, err
		}
		if err := decodeJSON(prices, &l.prices); err != nil {
			return nil, err
		}
		out = append(out, l)
	}
	return out, rows.Err()
}

// pricesAt are the prices of the newest of lists active at t.
func pricesAt(lists []priceListRow, t time.Time) map[string]int64 {
	now := fmtTime(t)
	out := map[string]int64{}
	for _, l := range lists {
		if (l.starts.Valid && l.starts.String > now) || (l.ends.Valid && l.ends.String <= now) {
			continue
		}
		for _, p := range l.prices {
			if _, ok := out[p.ProductID]; !ok { // the newest list wins
				out[p.ProductID] = p.Price
			}
		}
	}
	return out
}

// nextNumber returns the location's next order number at this node:
// a prefix naming the node and a counter, unique without asking the hub.
func (s *OrderService) nextNumber(ctx context.Context, tx *Tx, locationID string) (string, error) {
	var n int64
	err := tx.QueryRowContext(ctx, `INSERT INTO order_counters (location_id, next) VALUES (?, 2)
		ON CONFLICT(location_id) DO UPDATE SET next = order_counters.next + 1 RETURNING next - 1`, locationID).Scan(&n)
	if err != nil {
		return "", err
	}
	return fmt.Sprintf("%s-%05d", s.db.NumberPrefix(), n), nil
}

// NumberPrefix is this node's order number prefix: the last six hex digits
// of its id, upper-cased.
func (db *DB) NumberPrefix() string { return numberPrefixOf(db.NodeID) }

// numberPrefixOf is a node's order (and receipt) number prefix.
func numberPrefixOf(nodeID string) string {
	id := strings.ReplaceAll(nodeID, "-", "")
	if len(id) < 6 {
		return strings.ToUpper(id)
	}
	return strings.ToUpper(id[len(id)-6:])
}

func addHistory(ctx context.Context, tx *Tx, a *kassa.Actor, orderID, locationID, status string) error {
	return tx.InsertAt(ctx, entOrderHistory, a.OrgID, locationID, tx.DB.NewID(), map[string]any{
		"order_id": orderID, "status": status, "at": tx.Now, "actor": actorID(a),
	})
}

// UpdateOrder changes notes and customer, or cancels an open order. A
// cancel needs the order's captured payments voided first; it voids open
// authorizations itself. Errors: ENotFound, EInvalid, EConflict.
func (s *OrderService) UpdateOrder(ctx context.Context, id string, in *kassa.OrderUpdate) (*kassa.Order, error) {
	a, err := kassa.MustActor(ctx)
	if err != nil {
		return nil, err
	}
	if err := in.Validate(); err != nil {
		return nil, err
	}
	defer ordersIn(s.db).locks.Lock(id)()
	if in.Status.Set {
		// Check before voiding anything, so a refused cancel changes nothing.
		o, err := loadOrder(ctx, s.db.Reader, a.OrgID, id, 0)
		if err != nil {
			return nil, err
		}
		if err := kassa.Cancellable(o); err != nil && o.Status != kassa.OrderCancelled {
			return nil, err
		}
		if err := s.payments.voidAuthorizations(ctx, a, id); err != nil {
			return nil, err
		}
	}
	return writeRead(ctx, s.db, findOrder, a.OrgID, id, func(tx *Tx) error {
		o, err := findOrder(ctx, tx, a.OrgID, id)
		if err != nil {
			return err
		}
		cols := map[string]any{}
		patch(cols, "notes", o.Notes, in.Notes)
		if in.CustomerID.Set {
			c := optPtr(in.CustomerID)
			if c != nil && !customerExists(ctx, tx, a.OrgID, *c) {
				return kassa.InvalidField("customer_id", "no such customer")
			}
			changed(cols, "customer_id", o.CustomerID, c)
		}
		if in.Status.Set && o.Status != kassa.OrderCancelled {
			if err := kassa.Cancellable(o); err != nil {
				return err
			}
			cols["status"] = kassa.OrderCancelled
			if err := addHistory(ctx, tx, a, id, o.LocationID, kassa.OrderCancelled); err != nil {
				return err
			}
		}
		if err := tx.UpdateAt(ctx, entOrder, a.OrgID, o.LocationID, id, cols); err != nil {
			return err
		}
		return recordTicketUpdate(ctx, tx, a.OrgID, id, cols)
	})
}

// CompleteOrder completes a fully paid open order: it writes a sale
// movement for every line, earns loyalty points when the customer has an
// account, and emits order.completed. Errors: ENotFound, EConflict.
func (s *OrderService) CompleteOrder(ctx context.Context, id string) (*kassa.Order, error) {
	a, err := kassa.MustActor(ctx)
	if err != nil {
		return nil, err
	}
	defer ordersIn(s.db).locks.Lock(id)()
	// Lines never change after creation, and payments only under the
	// order's lock, held here: read them off the writer, then check the
	// state that can change inside the unit of work. The bundles' components
	// too (from memory on SQLite): a bundle edited meanwhile is as if the
	// sale had completed a moment before it.
	cat := catalogOf(s.db, a.OrgID) // before the read: see catalogCache
	cat.q = s.db.Reader
	read, err := loadOrder(ctx, s.db.Reader, a.OrgID, id, partLines|partPayments)
	if err != nil {
		return nil, err
	}
	of, err := cat.bundles(ctx)
	if err != nil {
		return nil, err
	}
	c := &orderCompletion{a: a, id: id, lines: read.LineItems, payments: read.Payments, gifts: read.GiftCards, bundles: of}
	if err := s.db.Write(ctx, func(tx *Tx) error { return c.write(ctx, tx) }); err != nil {
		return nil, err
	}
	s.db.wakeReceipts()
	return c.o, nil
}

// orderCompletion is the completion of order id: its lines and payments as
// read before the unit, and the completed order once written (o).
type orderCompletion struct {
	a        *kassa.Actor
	id       string
	lines    []kassa.LineItem
	payments []kassa.Payment
	gifts    []kassa.GiftCardLine
	bundles  bundleComponents
	o        *kassa.Order
}

// write completes the order in the unit: its stock leaves, the customer
// earns points, the order is completed and gets its receipt.
func (c *orderCompletion) write(ctx context.Context, tx *Tx) error {
	a := c.a
	if err := tx.LockRow(ctx, "orders", c.id); err != nil {
		return err
	}
	o, err := scanOrder(tx.QueryRowContext(ctx, orderCols+` WHERE org_id = ? AND id = ?`, a.OrgID, c.id))
	if err != nil {
		return err
	}
	o.LineItems, o.Payments, o.TaxBreakdown, o.GiftCards = c.lines, c.payments, kassa.LineTaxBreakdown(c.lines), c.gifts
	if err := kassa.Completable(o); err != nil {
		return err
	}
	if err := sellLines(ctx, tx, a, o, c.bundles); err != nil {
		return err
	}
	var points int64
	if o.CustomerID != nil {
		if points, err = earnForOrder(ctx, tx, a.OrgID, *o.CustomerID, o.ID, o.Total-o.GiftCardTotal, kassa.PointsMultiplierOf(o.Campaigns)); err != nil {
			return err
		}
	}
	if err := tx.UpdateAt(ctx, entOrder, a.OrgID, o.LocationID, c.id, map[string]any{
		"status": kassa.OrderCompleted, "completed_at": tx.Now, "loyalty_points_earned": points,
	}); err != nil {
		return err
	}
	if err := addHistory(ctx, tx, a, c.id, o.LocationID, kassa.OrderCompleted); err != nil {
		return err
	}
	if err := activateGiftCardLines(ctx, tx, o); err != nil {
		return err
	}
	if err := allocateReceipt(ctx, tx, a.OrgID, o.LocationID, c.id, "", paidCash(o.Payments)); err != nil {
		return err
	}
	// The completed order from what this unit read and wrote, and its
	// payments; an open order has no refunds, and its history is its
	// creation (scanOrder) and this completion.
	done := tx.Now
	o.LoyaltyPointsEarned = points
	o.Status, o.CompletedAt, o.UpdatedAt = kassa.OrderCompleted, &done, done
	o.History = append(o.History, kassa.OrderHistory{Status: kassa.OrderCompleted, At: done, Actor: actorID(a)})
	if err := rollupSale(ctx, tx, a.OrgID, o); err != nil {
		return err
	}
	tx.Emit(a.OrgID, o.LocationID, kassa.EventOrderCompleted, o)
	c.o = o
	return nil
}

// sellLines takes the order's lines out of its location's stock (of:
// the org's bundles' components).
func sellLines(ctx context.Context, tx *Tx, a *kassa.Actor, o *kassa.Order, of bundleComponents) error {
	actor := ""
	if p := actorID(a); p != nil {
		actor = *p
	}
	for i := range o.LineItems {
		for _, part := range lineStockParts(&o.LineItems[i], o.LineItems[i].Quantity, of) {
			if _, err := writeMovement(ctx, tx, movement{orgID: a.OrgID, locationID: o.LocationID, productID: part.ProductID,
				delta: -part.Quantity, reason: kassa.ReasonSale, refType: "order", refID: o.ID, actor: actor}); err != nil {
				return err
			}
		}
	}
	return nil
}

// RefundOrder refunds a completed order: in full (no amount, no lines), by
// amount, or by line quantities, through the payments' processors, never
// more than was paid. With restock, refunded line quantities go back to
// stock. Errors: ENotFound, EInvalid, EConflict, EForbidden (a cashier
// taking the order's refunds above the org's limit, kassa.CheckRefund).
func (s *OrderService) RefundOrder(ctx context.Context, id string, in *kassa.RefundRequest) (*kassa.Order, error) {
	a, err := kassa.MustActor(ctx)
	if err != nil {
		return nil, err
	}
	if err := in.Validate(); err != nil {
		return nil, err
	}
	defer ordersIn(s.db).locks.Lock(id)()
	r, err := s.planRefund(ctx, a, id, in)
	if err != nil {
		return nil, err
	}
	paid, err := s.payments.refundPayments(ctx, r.o, r.plan.Amount)
	if err != nil && len(paid) == 0 {
		return nil, err
	}
	if err != nil {
		// Part of the money went back before a processor failed: record
		// that part, so what the books say matches what the customer got.
		s.db.Log.Error("refund partly failed", "order", r.o.ID, "err", err)
		r.plan = r.plan.Scaled(sumRefunded(paid))
	}
	r.paid, r.id = paid, s.db.NewID()
	if r.tips, err = s.payments.refundTips(ctx, r.o, paid); err != nil {
		return nil, err
	}
	out, err := writeRead(ctx, s.db, findOrder, a.OrgID, id, func(tx *Tx) error { return r.write(ctx, tx) })
	if err == nil {
		s.db.wakeReceipts()
	}
	return out, err
}

// orderRefund is one RefundOrder: the order as it was read, the plan,
// and the money the processors gave back.
type orderRefund struct {
	a        *kassa.Actor
	in       *kassa.RefundRequest
	o        *kassa.Order
	plan     kassa.RefundPlan
	paid     []kassa.RefundPayment
	id       string    // the refund's
	approved *string   // the approver's user id, when the actor's limit needed one
	tips     []tipBack // the tips given back with their whole payment (tip.go)
	gift     *giftRefund
}

// planRefund reads the order and plans its refund within the actor's
// refund limit, at a till with an open drawer when one is named.
func (s *OrderService) planRefund(ctx context.Context, a *kassa.Actor, id string, in *kassa.RefundRequest) (*orderRefund, error) {
	o, err := findOrder(ctx, s.db.Reader, a.OrgID, id)
	if err != nil {
		return nil, err
	}
	gift, plan, err := planRefundWithGiftCards(ctx, s.db.Reader, o, in)
	if err != nil {
		return nil, err
	}
	settings, err := orgSettings(ctx, s.db.Reader, a.OrgID)
	if err != nil {
		return nil, err
	}
	approved, err := refundApproval(a, in.Approver, settings.RefundLimit, o.RefundedTotal, plan.Amount)
	if err != nil {
		return nil, err
	}
	if in.RegisterID != "" {
		if _, err := tillDrawer(ctx, s.db.Reader, a.OrgID, o.LocationID, in.RegisterID); err != nil {
			return nil, err
		}
	}
	return &orderRefund{a: a, in: in, o: o, plan: plan, approved: approved, gift: gift}, nil
}

// refundApproval checks a refund against the actor's refund limit and,
// beyond it, against the approver's: the approver's user id when the
// approval was needed (approved_by), nil when it was not. Errors:
// EForbidden (no approval, or one that is not a manager's or owner's of
// the org).
func refundApproval(a, approver *kassa.Actor, limit, refunded, amount int64) (*string, error) {
	err := kassa.CheckRefund(a, limit, refunded, amount)
	if err == nil {
		return nil, nil
	}
	if approver == nil || approver.OrgID != a.OrgID || approver.UserID == "" || kassa.CheckRefund(approver, limit, refunded, amount) != nil {
		return nil, err
	}
	id := approver.UserID
	return &id, nil
}

// write records the refund in one unit: its row, the payments and cards
// it gave back, the drawer, the order's status, the stock and the receipt.
func (r *orderRefund) write(ctx context.Context, tx *Tx) error {
	a, o := r.a, r.o
	cur, err := lockOrder(ctx, tx, a.OrgID, o.ID)
	if err != nil {
		return err
	}
	if cur.RefundedTotal != o.RefundedTotal {
		return kassa.Errorf(kassa.EConflict, "order %s changed during the refund", o.Number)
	}
	// The refund row first: the hub admits a card's refund entry only
	// against a refund it holds (checkGiftCardTxn), and an edge's records
	// reach it in the order they were written.
	if err := tx.InsertAt(ctx, entRefund, a.OrgID, o.LocationID, r.id, map[string]any{
		"order_id": o.ID, "location_id": o.LocationID, "amount": r.plan.Amount, "reason": r.in.Reason,
		"restock": r.in.Restock, "lines": r.plan.Lines, "payments": r.paid, "actor": actorID(a), "approved_by": r.approved,
		"gift_card_amount": min(r.gift.amount, r.plan.Amount),
	}); err != nil {
		return err
	}
	if err := r.givePaymentsBack(ctx, tx, cur); err != nil {
		return err
	}
	if err := takeBackGiftCards(ctx, tx, cur, r.id, r.gift); err != nil {
		return err
	}
	if err := recordRefund(ctx, tx, a, cur, r.in.RegisterID, r.id, r.paid); err != nil {
		return err
	}
	if err := giveTipsBack(ctx, tx, a, cur, r.in.RegisterID, r.id, r.tips); err != nil {
		return err
	}
	if err := r.settleOrder(ctx, tx, cur); err != nil {
		return err
	}
	if err := r.restock(ctx, tx, cur); err != nil {
		return err
	}
	if err := allocateReceipt(ctx, tx, a.OrgID, o.LocationID, o.ID, r.id, refundedCash(cur, r.paid)); err != nil {
		return err
	}
	done, err := findOrder(ctx, tx, a.OrgID, o.ID)
	if err != nil {
		return err
	}
	tx.Emit(a.OrgID, o.LocationID, kassa.EventOrderRefunded, done)
	return nil
}

// givePaymentsBack notes on each payment what the refund gave back of it,
// and credits a gift card or the customer's points its part.
func (r *orderRefund) givePaymentsBack(ctx context.Context, tx *Tx, cur *kassa.Order) error {
	for _, rp := range r.paid {
		p := cur.FindPayment(rp.PaymentID)
		if err := tx.UpdateAt(ctx, entPayment, r.a.OrgID, r.o.LocationID, p.ID, map[string]any{
			"refunded_amount": p.RefundedAmount + rp.Amount, "status": kassa.RefundedPaymentStatus(p, rp.Amount)}); err != nil {
			return err
		}
		if err := returnToLedger(ctx, tx, p, rp.Amount); err != nil {
			return err
		}
	}
	return nil
}

// settleOrder moves the order's refunded total and status; a new status
// goes into its history, and a full refund before the kitchen served it
// voids the ticket.
func (r *orderRefund) settleOrder(ctx context.Context, tx *Tx, cur *kassa.Order) error {
	refunded := cur.RefundedTotal + r.plan.Amount
	status := kassa.RefundedOrderStatus(cur, refunded)
	if err := tx.UpdateAt(ctx, entOrder, r.a.OrgID, r.o.LocationID, cur.ID, map[string]any{"refunded_total": refunded, "status": status}); err != nil {
		return err
	}
	if status == cur.Status {
		return nil
	}
	if err := addHistory(ctx, tx, r.a, cur.ID, r.o.LocationID, status); err != nil {
		return err
	}
	return recordTicket(ctx, tx, r.a.OrgID, cur.ID, kassa.TicketUpdated)
}

// restock puts the refunded lines back on the shelf when asked: all of
// them, or a return's lines marked so.
func (r *orderRefund) restock(ctx context.Context, tx *Tx, cur *kassa.Order) error {
	actor := ""
	if p := actorID(r.a); p != nil {
		actor = *p
	}
	of, err := bundlesOf(ctx, tx, r.a.OrgID)
	if err != nil {
		return err
	}
	for _, rl := range r.plan.Lines {
		if !r.in.Restock && !rl.Restock { // a return restocks line by line (return.go)
			continue
		}
		for _, part := range lineStockParts(cur.FindLine(rl.LineItemID), rl.Quantity, of) {
			if _, err := writeMovement(ctx, tx, movement{orgID: r.a.OrgID, locationID: r.o.LocationID, productID: part.ProductID,
				delta: part.Quantity, reason: kassa.ReasonRefund, refType: "refund", refID: r.id, actor: actor}); err != nil {
				return err
			}
		}
	}
	return nil
}

func sumRefunded(ps []kassa.RefundPayment) int64 {
	var n int64
	for _, p := range ps {
		n += p.Amount
	}
	return n
}

// Orders: the status moves only forward on its lattice (kitchen_status is
// last-writer-wins: a recall moves it back); the paid and refunded totals
// are derived from payments and refunds. Lines, history and refunds are
// appended once and belong to their order's location.
var entOrder, entOrderLine, entOrderHistory, entRefund = new(noun), new(noun), new(noun), new(noun)

// orderRows is the digest scope of an order's entries: its order's location.
const orderRows = "org_id = ?1 AND order_id IN (SELECT id FROM orders WHERE location_id = ?2)"

func init() {
	orderEvent := eventSubject{AtLocation: true, Same: []string{"number", "currency"}}
	register(entOrder, noun{Name: "order", Table: "orders", Digest: locationRows,
		Derived: []string{"paid_total", "refunded_total"},
		Lattice: map[string]func(string) int{"status": kassa.OrderStatusRank},
		// A cancel that meets a completion loses, and is recorded.
		LatticeLoss: &latticeLoss{Col: "status", Value: kassa.OrderCancelled, Kind: "cancel_lost"},
		Formats:     []formatStep{{Format: 5, Migration: 44}, {Format: 5, Migration: 48}}, // gift_card_total, approved_by
		Edge: &edgeRule{Loc: ownLocation, Update: []string{"status", "notes", "customer_id", "kitchen_status", "completed_at", "loyalty_points_earned", "paid_total", "refunded_total"},
			Once: []string{"location_id", "number", "channel", "currency", "created_by", "occurred_at", "subtotal", "discount_total", "tax_total", "total",
				"tax_rate_bps", "tax_inclusive", "campaigns", "voucher_code", "approved_by", "gift_card_total"},
			ScopesOf: orderScopes, Refs: []ref{{Col: "customer_id", Table: "customers"}}, Check: checkOrder},
		Events: map[string]eventSubject{kassa.EventOrderCreated: orderEvent, kassa.EventOrderCompleted: orderEvent, kassa.EventOrderRefunded: orderEvent},
		Track:  trackOrder, Recompute: recomputeOrders, OwnBack: skipOrderNumber, Merged: queueTickets,
		NewState: func(*engine.DB) any { return &orderState{tickets: ticketQueue{wake: make(chan struct{}, 1)}} }})
	register(entOrderLine, noun{Name: "order_line", Table: "order_lines", Merge: mergeAppend, Digest: orderRows, Formats: []formatStep{{Format: 5, Migration: 42}, {Format: 5, Migration: 46}},
		Edge: &edgeRule{Loc: parentLocation, Parent: ref{Col: "order_id", Table: "orders"}, Scopes: saleWrite,
			Refs: []ref{{Col: "order_id", Table: "orders"}, {Col: "product_id", Table: "products"}, {Col: "variant_id", Table: "products"}}, Check: checkOrderLine},
		Track: trackOrderOf})
	register(entOrderHistory, noun{Name: "order_history", Table: "order_history", Merge: mergeAppend, Digest: orderRows,
		Edge:  &edgeRule{Loc: parentLocation, Parent: ref{Col: "order_id", Table: "orders"}, Scopes: saleWrite, Refs: []ref{{Col: "order_id", Table: "orders"}}, Check: checkHistory},
		Track: trackOrderOf})
	register(entRefund, noun{Name: "refund", Table: "refunds", Merge: mergeAppend, Digest: locationRows,
		Formats: []formatStep{{Format: 5, Migration: 41}, {Format: 5, Migration: 44}},
		Edge: &edgeRule{Loc: parentLocation, Parent: ref{Col: "order_id", Table: "orders"}, Scopes: saleWrite,
			Refs: []ref{{Col: "order_id", Table: "orders"}, {Col: "approved_by", Table: "users"}}, Check: checkRefund},
		Track: trackOrderOf, Written: rollupRefund})
}

// orderState is what a store keeps in memory of its orders: a lock per
// order for the steps around processor calls, and the orders sync changed
// whose kitchen tickets are due (kds.go).
type orderState struct {
	locks   keyedMutex
	tickets ticketQueue
}

// ordersIn is db's orderState.
func ordersIn(db *DB) *orderState { return db.States[entOrder].(*orderState) }

// trackOrder: an order's derived totals are recomputed; one inserted with
// campaigns gets its redemptions derived.
func trackOrder(a *applier, c *change.Change, f map[string]any) {
	a.Touch(entOrder, c.EntityID, c.OrgID)
	if cs := fieldText(f, "campaigns"); cs != "" && cs != "[]" {
		// Its redemptions count toward its org's usage limits, checked
		// once for the batch (redeem, checkVouchers).
		a.Shares(campaignsKey(c.OrgID))
		if c.Op == change.OpInsert {
			campaignsOf(a.State).campaigned[c.EntityID] = true
		}
	}
}

// trackOrderOf: an entry of an order (a line, its history, a payment or a
// refund) has its order's derived totals recomputed.
func trackOrderOf(a *applier, c *change.Change, f map[string]any) {
	if id := fieldText(f, "order_id"); id != "" {
		a.Touch(entOrder, id, c.OrgID)
	}
}

func checkOrder(_ context.Context, _ *admitter, c *change.Change, f map[string]any) error {
	insert := c.Op == change.OpInsert
	if insert {
		if s, _ := f["status"].(string); s != kassa.OrderOpen {
			return refuse(RefusedValue, "an order is created open, not %q", s)
		}
		if cur, _ := f["currency"].(string); !kassa.ValidCurrency(cur) {
			return refuse(RefusedValue, "currency must be an ISO 4217 code")
		}
		if n, _ := f["number"].(string); !kassa.ValidText(n, 64) || n == "" {
			return refuse(RefusedValue, "number must be a short text")
		}
	}
	if n, ok := f["notes"].(string); ok && !kassa.ValidText(n, 2000) {
		return refuse(RefusedValue, "notes must be text of at most 2000 characters")
	}
	return firstErr(
		oneOf(f, "status", insert, orderStates...),
		oneOf(f, "kitchen_status", false, kitchenStates...),
		oneOf(f, "channel", insert, kassa.ChannelPOS, kassa.ChannelOnline, kassa.ChannelPartner),
		within(f, "tax_rate_bps", 0, kassa.MaxTaxRateBps, insert),
		within(f, "tax_inclusive", 0, 1, insert),
		within(f, "subtotal", 0, maxAmount, insert),
		within(f, "discount_total", 0, maxAmount, insert),
		within(f, "tax_total", 0, maxAmount, insert),
		within(f, "total", 0, maxAmount, insert),
		within(f, "loyalty_points_earned", 0, maxPoints, false),
		appliedCampaigns(f),
	)
}

// appliedCampaigns refuses an order's campaigns field unless it is a JSON
// list of what campaigns gave it (kassa.AppliedCampaign): at most one per
// line and two more (pricing's stacking), each naming a campaign once,
// with amounts in range. The hub derives the order's redemptions from it
// (redeemAtHub), with its own amounts.
func appliedCampaigns(f map[string]any) error {
	v, present := f["campaigns"]
	if !present {
		return nil
	}
	s, _ := v.(string)
	var cs []kassa.AppliedCampaign
	if !strings.HasPrefix(strings.TrimSpace(s), "[") || json.Unmarshal([]byte(s), &cs) != nil || len(cs) > kassa.MaxOrderLines+2 {
		return refuse(RefusedValue, "campaigns must be a list of at most %d applied campaigns", kassa.MaxOrderLines+2)
	}
	seen := make(map[string]bool, len(cs))
	for _, c := range cs {
		if c.CampaignID == "" || !kassa.ValidText(c.CampaignID, 64) || seen[c.CampaignID] || !kassa.ValidText(c.Name, 200) ||
			c.Amount < 0 || c.Amount > maxAmount || c.PointsMultiplier < 0 || c.PointsMultiplier > kassa.MaxPointsMultiplier {
			return refuse(RefusedValue, "campaigns: each names a campaign once, with amount 0-%d and points_multiplier 0-%d", maxAmount, kassa.MaxPointsMultiplier)
		}
		seen[c.CampaignID] = true
	}
	return nil
}

// checkOrderLine checks a line's arithmetic against its order's tax
// settings: gross = (unit price + modifier adjustments) × quantity, the
// discount within the gross, tax and total as pricing computes them.
func checkOrderLine(ctx context.Context, ad *admitter, c *change.Change, f map[string]any) error {
	if err := firstErr(within(f, "quantity", 1, maxQuantity, true), within(f, "unit_price", 0, maxAmount, true),
		within(f, "discount", 0, maxAmount, true), within(f, "tax", 0, maxAmount, true), within(f, "total", 0, maxAmount, true),
		within(f, "position", 0, 10000, true), within(f, "tax_rate_bps", 0, kassa.MaxTaxRateBps, false)); err != nil {
		return err
	}
	var mods []struct {
		PriceAdjustment int64 `json:"price_adjustment"`
	}
	if s, ok := f["modifiers"].(string); ok {
		if err := json.Unmarshal([]byte(s), &mods); err != nil || len(mods) > kassa.MaxLineModifiers {
			return refuse(RefusedValue, "modifiers must be a list of at most %d options", kassa.MaxLineModifiers)
		}
	}
	unit, _ := intField(f, "unit_price")
	for _, m := range mods {
		if m.PriceAdjustment < -maxAmount || m.PriceAdjustment > maxAmount {
			return refuse(RefusedValue, "a modifier's price_adjustment is out of range")
		}
		unit += m.PriceAdjustment
	}
	qty, _ := intField(f, "quantity")
	gross := unit * qty
	if unit < 0 || gross > maxAmount {
		return refuse(RefusedValue, "the line's gross is out of range")
	}
	discount, _ := intField(f, "discount")
	if discount > gross {
		return refuse(RefusedValue, "the discount %d exceeds the line's gross %d", discount, gross)
	}
	rate, inclusive, err := orderTax(ctx, ad, f)
	if err != nil {
		return err
	}
	// A line of a tax category carries its rate (the edge's catalog and
	// settings when it sold it, docs/tax.md); the hub checks the arithmetic.
	own := lineTaxRate(f)
	priced, err := kassa.Price([]kassa.PricedLine{{Unit: unit, Quantity: qty, Discount: &kassa.Discount{Type: "amount", Value: discount}, TaxBps: own}}, nil, int(rate), inclusive)
	if err != nil {
		return validated(err)
	}
	want := priced.Lines[0]
	tax, _ := intField(f, "tax")
	total, _ := intField(f, "total")
	if tax != want.Tax || total != want.Total {
		return refuse(RefusedValue, "tax %d and total %d do not follow from the line (tax %d, total %d)", tax, total, want.Tax, want.Total)
	}
	return checkLineMarkdown(ctx, ad, c, f)
}

// orderTax is the tax settings of a line's order, from the batch when the
// batch made the order (a sale's order and lines arrive in one push).
func orderTax(ctx context.Context, ad *admitter, f map[string]any) (rate int64, inclusive bool, err error) {
	order, _ := f["order_id"].(string)
	if _, _, v, ok := ad.MadeRow("orders", order, "tax_rate_bps", "tax_inclusive"); ok {
		r, rok := v[0].(int64)
		inc, iok := v[1].(int64)
		if rok && iok {
			return r, inc != 0, nil
		}
	}
	err = ad.Tx.QueryRowContext(ctx, `SELECT tax_rate_bps, tax_inclusive FROM orders WHERE id = ?`, order).Scan(&rate, &inclusive)
	return rate, inclusive, err // the reference check found the order
}

func checkHistory(_ context.Context, _ *admitter, _ *change.Change, f map[string]any) error {
	return oneOf(f, "status", true, orderStates...)
}

func checkRefund(ctx context.Context, ad *admitter, c *change.Change, f map[string]any) error {
	if err := firstErr(within(f, "amount", 1, maxAmount, true), within(f, "restock", 0, 1, false)); err != nil {
		return err
	}
	var paid []struct {
		PaymentID string `json:"payment_id"`
		Amount    int64  `json:"amount"`
	}
	if s, ok := f["payments"].(string); ok {
		if err := json.Unmarshal([]byte(s), &paid); err != nil {
			return refuse(RefusedValue, "payments must be a list of {payment_id, amount}")
		}
	}
	order, _ := f["order_id"].(string)
	// The refund limit, replayed: a cashier's refunds of one order together
	// stay within the org's limit (kassa.CheckRefund).
	var refunded int64
	if err := ad.Tx.QueryRowContext(ctx, `SELECT coalesce(sum(amount), 0) FROM refunds WHERE order_id = ? AND org_id = ?`, order, c.OrgID).Scan(&refunded); err != nil {
		return err
	}
	settings, err := orgSettings(ctx, ad.Tx, c.OrgID)
	if err != nil {
		return err
	}
	amount, _ := intField(f, "amount")
	approver, err := approverOf(ctx, ad.Tx, c.OrgID, f)
	if err != nil {
		return err
	}
	if _, err := refundApproval(ad.ActorOf, approver, settings.RefundLimit, refunded, amount); err != nil {
		return refuse(RefusedActor, "%v", err)
	}
	for _, p := range paid {
		var n int
		if err := ad.Tx.QueryRowContext(ctx, `SELECT count(*) FROM payments WHERE id = ? AND order_id = ? AND org_id = ?`,
			p.PaymentID, order, c.OrgID).Scan(&n); err != nil {
			return err
		}
		if n == 0 {
			return refuse(RefusedReference, "the refund names payment %s, which is not one of order %s", p.PaymentID, order)
		}
		if p.Amount < 0 || p.Amount > maxAmount {
			return refuse(RefusedValue, "a refunded payment amount is out of range")
		}
	}
	return nil
}

// approverOf is the active user of the org a refund names as approved_by,
// as the hub knows them; nil for none (or one the hub does not know).
func approverOf(ctx context.Context, q querier, orgID string, f map[string]any) (*kassa.Actor, error) {
	id, _ := f["approved_by"].(string)
	if id == "" {
		return nil, nil
	}
	var role string
	err := q.QueryRowContext(ctx, `SELECT role FROM users WHERE id = ? AND org_id = ? AND is_active = 1`, id, orgID).Scan(&role)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	return &kassa.Actor{OrgID: orgID, UserID: id, Role: kassa.Role(role), Scopes: kassa.RoleScopes(kassa.Role(role))}, nil
}

// orderScopes: the kitchen moves an order's kitchen_status and nothing
// else; every other change of an order is a sale's.
func orderScopes(c *change.Change, f map[string]any) []kassa.Scope {
	if c.Op == change.OpUpdate {
		kitchenOnly := true
		for k := range f {
			if k != "kitchen_status" && k != "updated_at" {
				kitchenOnly = false
			}
		}
		if kitchenOnly {
			return []kassa.Scope{kassa.ScopeKDS, kassa.ScopeOrdersWrite}
		}
	}
	return saleWrite
}

// The values an edge's order may carry.
var (
	orderStates   = []string{kassa.OrderOpen, kassa.OrderCompleted, kassa.OrderPartiallyRefunded, kassa.OrderRefunded, kassa.OrderCancelled}
	kitchenStates = []string{kassa.KitchenNew, kassa.KitchenInProgress, kassa.KitchenReady, kassa.KitchenServed}
)

// skipOrderNumber moves the order counter of an own order that came back
// past its number.
func skipOrderNumber(ctx context.Context, tx *Tx, c *change.Change) error {
	num, _ := c.Fields["number"].(string)
	loc := c.LocationID
	i := strings.LastIndexByte(num, '-')
	n, err := strconv.ParseInt(num[i+1:], 10, 64)
	if num == "" || loc == "" || err != nil {
		return nil
	}
	_, err = tx.ExecContext(ctx, `INSERT INTO order_counters (location_id, next) VALUES (?, ?)
		ON CONFLICT(location_id) DO UPDATE SET next = CASE WHEN excluded.next > order_counters.next THEN excluded.next ELSE order_counters.next END`, loc, n+1)
	return err
}
