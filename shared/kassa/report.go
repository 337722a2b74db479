package kassa

import (
	"context"
	"slices"
	"sync"
	"time"
)

// Reports (docs/reports.md): what sold, what it earned, what is on the
// shelf, summed over the raw rows by each location's own business day
// (BusinessDay). A report is a list of rows of one grouping; every row
// carries its currency, so stores of different currencies are never added
// up.

// ReportGrouping is what a report's rows are grouped by.
type ReportGrouping string

// The groupings.
const (
	GroupNone          ReportGrouping = "none"           // one row (per currency)
	GroupDay           ReportGrouping = "day"            // the location's business day, YYYY-MM-DD
	GroupHour          ReportGrouping = "hour"           // the local hour of day, 00–23
	GroupLocation      ReportGrouping = "location"       // the location id
	GroupRegister      ReportGrouping = "register"       // the till whose receipt the sale has ("": none)
	GroupStaff         ReportGrouping = "staff"          // the user (or app) who took the order
	GroupProduct       ReportGrouping = "product"        // the product id
	GroupCategory      ReportGrouping = "category"       // the product's category id ("": none)
	GroupPaymentMethod ReportGrouping = "payment_method" // the tender
	GroupCustomer      ReportGrouping = "customer"       // the customer id, the top ones by net
)

// ReportKind names a report.
type ReportKind string

// The reports.
const (
	ReportSales     ReportKind = "sales"
	ReportTax       ReportKind = "tax"
	ReportPayments  ReportKind = "payments"
	ReportInventory ReportKind = "inventory"
	ReportMovements ReportKind = "movements"
	ReportLoyalty   ReportKind = "loyalty"
	ReportGiftCards ReportKind = "gift_cards"
	ReportGiftOwed  ReportKind = "gift_cards_owed"
	ReportCash      ReportKind = "cash"
	ReportCampaigns ReportKind = "campaigns"
)

// reportGroupings are the groupings each report takes; the first is its
// default.
var reportGroupings = map[ReportKind][]ReportGrouping{
	ReportSales: {GroupDay, GroupNone, GroupHour, GroupLocation, GroupRegister, GroupStaff, GroupProduct, GroupCategory,
		GroupPaymentMethod, GroupCustomer},
	ReportTax:       {GroupNone, GroupDay, GroupLocation},
	ReportPayments:  {GroupNone, GroupDay, GroupLocation},
	ReportInventory: {GroupNone},
	ReportMovements: {GroupNone, GroupDay, GroupLocation, GroupProduct},
	ReportLoyalty:   {GroupNone, GroupDay},
	ReportGiftCards: {GroupNone, GroupDay, GroupLocation},
	ReportGiftOwed:  {GroupNone},
	ReportCash:      {GroupStaff, GroupNone, GroupDay, GroupLocation, GroupRegister},
	ReportCampaigns: {GroupNone},
}

// ReportGroupings returns the groupings report k takes, its default first.
func ReportGroupings(k ReportKind) []ReportGrouping { return slices.Clone(reportGroupings[k]) }

// MaxReportDays is the longest range of business days a report covers.
const MaxReportDays = 366

// DefaultReportTop is how many customers the customer grouping lists
// unless top says otherwise; MaxReportTop is the most it lists.
const (
	DefaultReportTop = 10
	MaxReportTop     = 1000
)

// ReportFilter selects a report's rows: business days DateFrom to DateTo
// (inclusive, each location's own), one location or all the actor's org
// holds, and a grouping.
type ReportFilter struct {
	DateFrom, DateTo string
	LocationID       *string
	GroupBy          ReportGrouping
	LowStock         bool // inventory: only products at or below their reorder point
	Top              int  // customer grouping: how many (DefaultReportTop when 0)
	// StaffID limits a sales report to the orders that user took (a
	// cashier's own shift; set by the handler, never by the client).
	StaffID string
}

// Validate checks f for report k at instant now (the defaults are the
// business day today in UTC+14, the first zone to reach a date, and six
// days before it): EInvalid naming date_from, date_to, group_by or top.
func (f *ReportFilter) Validate(k ReportKind, now time.Time) error {
	if f.DateTo == "" {
		f.DateTo = now.In(time.FixedZone("UTC+14", 14*3600)).Format(time.DateOnly)
	}
	to, errTo := time.Parse(time.DateOnly, f.DateTo)
	if f.DateFrom == "" && errTo == nil {
		f.DateFrom = to.AddDate(0, 0, -6).Format(time.DateOnly)
	}
	from, errFrom := time.Parse(time.DateOnly, f.DateFrom)
	groups := reportGroupings[k]
	if f.GroupBy == "" && len(groups) > 0 {
		f.GroupBy = groups[0]
	}
	var v Validation
	v.Check(errFrom == nil, "date_from", "must be a business day (YYYY-MM-DD)")
	v.Check(errTo == nil, "date_to", "must be a business day (YYYY-MM-DD)")
	if errFrom == nil && errTo == nil {
		v.Check(!to.Before(from), "date_to", "must not be before date_from")
		v.Check(to.Sub(from) < MaxReportDays*24*time.Hour, "date_to", "must be at most 366 business days after date_from")
	}
	v.Check(slices.Contains(groups, f.GroupBy), "group_by", "must be one of "+groupNames(groups))
	v.Check(f.Top >= 0 && f.Top <= MaxReportTop, "top", "must be from 1 to 1000")
	if f.Top == 0 {
		f.Top = DefaultReportTop
	}
	return v.Err()
}

func groupNames(gs []ReportGrouping) string {
	out := ""
	for i, g := range gs {
		if i > 0 {
			out += ", "
		}
		out += string(g)
	}
	return out
}

// Days returns the business days from..to inclusive (both valid dates).
func Days(from, to string) []string {
	f, _ := time.Parse(time.DateOnly, from)
	t, _ := time.Parse(time.DateOnly, to)
	var out []string
	for d := f; !d.After(t); d = d.AddDate(0, 0, 1) {
		out = append(out, d.Format(time.DateOnly))
	}
	return out
}

// DayClock is a location's business day with its zone loaded once: the
// same answers as BusinessDay, cheap enough for every row of a report.
type DayClock struct {
	zone   *time.Location
	cutoff int
}

// Clock returns the clock of d; an unknown zone counts as UTC. Zones are
// loaded once per process (a sale's rollup asks for its store's).
func (d DaySettings) Clock() DayClock {
	if z, ok := zones.Load(d.Timezone); ok {
		return DayClock{zone: z.(*time.Location), cutoff: d.CutoffHour}
	}
	z, err := time.LoadLocation(d.Timezone)
	if err != nil || d.Timezone == "" {
		z = time.UTC
	}
	zones.Store(d.Timezone, z)
	return DayClock{zone: z, cutoff: d.CutoffHour}
}

// zones caches the zones clocks loaded, by name.
var zones sync.Map

// Day returns the business day (YYYY-MM-DD) instant t belongs to.
func (c DayClock) Day(t time.Time) string {
	lt := t.In(c.zone)
	y, m, d := lt.Date()
	if lt.Hour() < c.cutoff {
		d--
	}
	return time.Date(y, m, d, 12, 0, 0, 0, time.UTC).Format(time.DateOnly)
}

// Hour returns the local hour of day of t (0–23).
func (c DayClock) Hour(t time.Time) int { return t.In(c.zone).Hour() }

// Start returns the first instant of business day day (YYYY-MM-DD): the
// first second whose Day is day or later. It is found by bisection around
// the cutoff's wall-clock time, so a cutoff hour a daylight-saving change
// skips or repeats starts the day where Day says it does.
func (c DayClock) Start(day string) time.Time {
	d, _ := time.Parse(time.DateOnly, day)
	guess := time.Date(d.Year(), d.Month(), d.Day(), c.cutoff, 0, 0, 0, c.zone)
	lo, hi := guess.Add(-6*time.Hour).Unix(), guess.Add(6*time.Hour).Unix()
	if c.Day(time.Unix(lo, 0)) >= day || c.Day(time.Unix(hi, 0)) < day {
		return guess // no zone moves a wall clock by six hours
	}
	for hi-lo > 1 { // Day(lo) < day <= Day(hi)
		mid := lo + (hi-lo)/2
		if c.Day(time.Unix(mid, 0)) >= day {
			hi = mid
		} else {
			lo = mid
		}
	}
	return time.Unix(hi, 0).UTC()
}

// Bounds returns the instants [start, end) of business days from..to.
func (c DayClock) Bounds(from, to string) (start, end time.Time) {
	t, _ := time.Parse(time.DateOnly, to)
	return c.Start(from), c.Start(t.AddDate(0, 0, 1).Format(time.DateOnly))
}

// ReportLocation is a location a report covered and the business day it
// used there.
type ReportLocation struct {
	ID            string `json:"id"`
	Name          string `json:"name"`
	Timezone      string `json:"timezone"`        // The IANA zone its business days and hours are in.
	DayCutoffHour int    `json:"day_cutoff_hour"` // The local hour its business day starts at.
	Currency      string `json:"currency"`
}

// ReportInfo says what a report covered: beside the rows in the list
// envelope (field report), and in X-Report-* headers of a CSV.
type ReportInfo struct {
	Kind     ReportKind     `json:"kind"`
	GroupBy  ReportGrouping `json:"group_by"`
	DateFrom string         `json:"date_from"` // The first business day.
	DateTo   string         `json:"date_to"`   // The last business day.
	// Timezone is the zone of the days and hours: the location's when the
	// report covers one, "per location" when it covers several (each
	// location's rows are by its own business day and local hour; the
	// zones are listed in locations).
	Timezone  string           `json:"timezone"`
	Locations []ReportLocation `json:"locations"`
}

// SalesRow is one group of a sales report. Sales are completed orders,
// booked on the business day of completed_at; refunds on the day of the
// refund. Gross is the orders' subtotal (before discounts); sales is what
// customers paid (total); net = sales − refunds. Grouped by payment
// method, the rows are the tenders: sales is what was captured by the
// method, refunds what went back through it.
type SalesRow struct {
	Group             string `json:"group"`                             // The grouping's key: a day, an hour, an id.
	Label             string `json:"label"`                             // The group's name (a location's, a product's …).
	Currency          string `json:"currency"`                          // ISO 4217.
	Orders            int64  `json:"orders"`                            // Orders counted.
	Gross             int64  `json:"gross" report:"money"`              // Line totals before discounts.
	ManualDiscounts   int64  `json:"manual_discounts" report:"money"`   // Discounts given by staff.
	CampaignDiscounts int64  `json:"campaign_discounts" report:"money"` // Discounts from campaigns.
	Tax               int64  `json:"tax" report:"money"`                // Tax on the sales.
	Sales             int64  `json:"sales" report:"money"`              // What customers paid, tax included.
	Refunds           int64  `json:"refunds" report:"money"`            // Refunded in the range.
	Net               int64  `json:"net" report:"money"`                // What stays: sales (or captured) less refunds.
	// What the units sold cost the business, over the lines whose product
	// has a cost (at its cost now); null when none has, and in every
	// grouping but product and category.
	Cost *int64 `json:"cost" report:"money"`
	// Those same lines' sales less their tax and cost; null with cost.
	GrossMargin *int64 `json:"gross_margin" report:"money"`
}

// TaxRow is the tax collected at one rate: on sales (the orders' tax) and
// given back on refunds (the refund's amount × rate ÷ (1 + rate), rounded
// half up, per refund — a refund's amount always includes its tax).
type TaxRow struct {
	Group       string `json:"group"`                     // The grouping's key: a business day, an hour, an id.
	Currency    string `json:"currency"`                  // ISO 4217.
	RateBps     int64  `json:"rate_bps"`                  // Basis points: 1000 = 10 %.
	Inclusive   bool   `json:"inclusive"`                 // Prices included the tax.
	Orders      int64  `json:"orders"`                    // Orders counted.
	Sales       int64  `json:"sales" report:"money"`      // What customers paid, tax included.
	Taxable     int64  `json:"taxable" report:"money"`    // sales − tax.
	Tax         int64  `json:"tax" report:"money"`        // On sales.
	Refunds     int64  `json:"refunds" report:"money"`    // Refunded, tax included.
	RefundedTax int64  `json:"refund_tax" report:"money"` // The tax in refunds.
	NetTax      int64  `json:"net_tax" report:"money"`    // tax − refund_tax: what the return declares.
}

// RefundTax is the tax contained in a refund of amount at rateBps.
func RefundTax(amount, rateBps int64) int64 {
	return (amount*rateBps*2 + (10000 + rateBps)) / (2 * (10000 + rateBps))
}

// PaymentRow is one tender: what was captured and refunded through it,
// against what the drawers recorded (the sales and refunds at a till's
// open drawer; a payment taken away from a till, by an API client or an
// online order, is in no drawer).
type PaymentRow struct {
	Group         string `json:"group"`                         // The grouping's key: a business day, an hour, an id.
	Currency      string `json:"currency"`                      // ISO 4217.
	Method        string `json:"method"`                        // The payment method.
	Count         int64  `json:"count"`                         // How many rows it covers.
	Captured      int64  `json:"captured" report:"money"`       // Captured in the range.
	Refunded      int64  `json:"refunded" report:"money"`       // Refunded in the range.
	Net           int64  `json:"net" report:"money"`            // What stays: sales (or captured) less refunds.
	DrawerSales   int64  `json:"drawer_sales" report:"money"`   // Recorded in drawers (business day of the drawer's entry).
	DrawerRefunds int64  `json:"drawer_refunds" report:"money"` // Positive.
	AwayFromTill  int64  `json:"away_from_till" report:"money"` // net − (drawer_sales − drawer_refunds).
}

// InventoryRow is a product's stock at a location now, and its value at
// cost (the product's cost; its base price when it has none, flagged).
type InventoryRow struct {
	LocationID   string `json:"location_id"`
	ProductID    string `json:"product_id"`
	SKU          string `json:"sku"`
	Name         string `json:"name"`                     // The name.
	Currency     string `json:"currency"`                 // ISO 4217.
	OnHand       int64  `json:"on_hand"`                  // Units on hand.
	ReorderPoint int64  `json:"reorder_point"`            // The level at which to reorder.
	UnitCost     int64  `json:"unit_cost" report:"money"` // The value of one unit: the product's cost, its base price when it has none.
	AtPrice      bool   `json:"at_price"`                 // The product has no cost: valued at its base price.
	Value        int64  `json:"value" report:"money"`     // on_hand × unit_cost (0 when on_hand is negative).
	Low          bool   `json:"low"`                      // on_hand ≤ reorder_point.
}

// MovementRow sums the stock movements of one reason in a group.
type MovementRow struct {
	Group  string `json:"group"`  // The grouping's key: a business day, an hour, an id.
	Reason string `json:"reason"` // sale, refund, received, count, damaged, …, transfer_out, transfer_in.
	Count  int64  `json:"count"`  // How many rows it covers.
	Units  int64  `json:"units"`  // Signed: out is negative.
}

// LoyaltyRow sums points: issued (earned), redeemed (positive), adjusted
// (signed), and the outstanding balance of all accounts at the end of the
// group's last day.
type LoyaltyRow struct {
	Group       string `json:"group"`       // The grouping's key: a business day, an hour, an id.
	Issued      int64  `json:"issued"`      // Issued in the range.
	Redeemed    int64  `json:"redeemed"`    // Redeemed in the range.
	Adjusted    int64  `json:"adjusted"`    // Adjusted by hand in the range.
	Outstanding int64  `json:"outstanding"` // Still to be redeemed at the range's end.
}

// GiftCardRow sums gift card money: issued, redeemed (positive), refunded
// onto cards, adjusted; outstanding is the liability (every card's
// balance) at the end of the group's last day.
type GiftCardRow struct {
	Group       string `json:"group"`                      // The grouping's key: a business day, an hour, an id.
	Currency    string `json:"currency"`                   // ISO 4217.
	Issued      int64  `json:"issued" report:"money"`      // Sold in the range: cards issued and reloaded, less what refunds of gift card lines took back.
	Redeemed    int64  `json:"redeemed" report:"money"`    // Redeemed in the range.
	Refunded    int64  `json:"refunded" report:"money"`    // Refunded in the range.
	Adjusted    int64  `json:"adjusted" report:"money"`    // Adjusted by hand in the range.
	Outstanding int64  `json:"outstanding" report:"money"` // Still to be redeemed at the range's end.
}

// GiftCardOwedRow is what one location owes another: cards it sold (and
// holds the money of) were spent at the other, net of refunds back onto
// them there. Issued at "" is head office (a card issued at the hub).
type GiftCardOwedRow struct {
	Currency           string `json:"currency"`              // ISO 4217.
	IssuedLocationID   string `json:"issued_location_id"`    // Owes …
	RedeemedLocationID string `json:"redeemed_location_id"`  // … this location …
	Amount             int64  `json:"amount" report:"money"` // … this much.
}

// CashRow sums closed drawer sessions (their Z reports): the float, what
// the drawer should have held, what was counted, over/short (negative:
// short). Staff is who opened the drawer.
type CashRow struct {
	Group     string `json:"group"`                     // The grouping's key: a business day, an hour, an id.
	Label     string `json:"label"`                     // The group's name (a location's, a product's …).
	Currency  string `json:"currency"`                  // ISO 4217.
	Sessions  int64  `json:"sessions"`                  // Drawer sessions closed.
	Float     int64  `json:"float" report:"money"`      // The opening floats.
	CashSales int64  `json:"cash_sales" report:"money"` // Cash taken for sales.
	Expected  int64  `json:"expected" report:"money"`   // Cash the drawers should have held.
	Counted   int64  `json:"counted" report:"money"`    // Cash counted at close.
	OverShort int64  `json:"over_short" report:"money"` // Counted less expected.
}

// CampaignRow is a campaign's redemptions in the range, with the link to
// its full analytics.
type CampaignRow struct {
	CampaignID string `json:"campaign_id"`             // The campaign.
	Name       string `json:"name"`                    // The name.
	Status     string `json:"status"`                  // The campaign's status.
	Currency   string `json:"currency"`                // ISO 4217.
	Orders     int64  `json:"orders"`                  // Orders counted.
	Discount   int64  `json:"discount" report:"money"` // Discounts given.
	Revenue    int64  `json:"revenue" report:"money"`  // The orders' totals.
	Analytics  string `json:"analytics"`               // The path of the campaign's analytics.
}

// ReportService computes reports from the raw rows on the read pool,
// never through the writer. Each method validates f, calls emit once per
// row in the report's order (streaming: a CSV writes it at once) and
// returns what the report covered. Errors: EInvalid (a field of f, an
// unknown location or another org's, named location_id), and emit's.
type ReportService interface {
	Sales(ctx context.Context, f ReportFilter, emit func(*SalesRow) error) (*ReportInfo, error)
	Tax(ctx context.Context, f ReportFilter, emit func(*TaxRow) error) (*ReportInfo, error)
	Payments(ctx context.Context, f ReportFilter, emit func(*PaymentRow) error) (*ReportInfo, error)
	Inventory(ctx context.Context, f ReportFilter, emit func(*InventoryRow) error) (*ReportInfo, error)
	Movements(ctx context.Context, f ReportFilter, emit func(*MovementRow) error) (*ReportInfo, error)
	Loyalty(ctx context.Context, f ReportFilter, emit func(*LoyaltyRow) error) (*ReportInfo, error)
	GiftCards(ctx context.Context, f ReportFilter, emit func(*GiftCardRow) error) (*ReportInfo, error)
	GiftCardsOwed(ctx context.Context, f ReportFilter, emit func(*GiftCardOwedRow) error) (*ReportInfo, error)
	Cash(ctx context.Context, f ReportFilter, emit func(*CashRow) error) (*ReportInfo, error)
	Campaigns(ctx context.Context, f ReportFilter, emit func(*CampaignRow) error) (*ReportInfo, error)
}
