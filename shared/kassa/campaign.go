package kassa

import (
	"context"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"time"
)

// Campaigns: discounts, offers and promotions priced at the till
// (docs/campaigns.md). A campaign is org-wide data made at the hub and
// replicated to every edge, so a store prices with it offline.
//
// States (CampaignTransition):
//
//	draft ──launch──▶ scheduled (starts_at in the future) | active
//	scheduled ─▶ active (by the clock: EffectiveCampaignStatus), paused, ended
//	active ─▶ paused, ended            paused ─▶ active (or scheduled), ended
//	ended: final
//
// A campaign prices orders only while active (Applies): inside its
// starts_at–ends_at window, on its days of week and hours in the
// location's time zone, at one of its locations (none: all).

// Campaign types (the spec's kinds).
const (
	CampaignDiscount  = "discount"
	CampaignOffer     = "offer"
	CampaignPromotion = "promotion"
)

// Campaign states.
const (
	CampaignDraft     = "draft"
	CampaignScheduled = "scheduled"
	CampaignActive    = "active"
	CampaignPaused    = "paused"
	CampaignEnded     = "ended"
)

// Campaign rule types.
const (
	RuleOrderDiscount    = "order_discount"    // percent or amount off the order
	RuleProductDiscount  = "product_discount"  // percent, or amount per unit, off lines of product_ids
	RuleCategoryDiscount = "category_discount" // percent, or amount per unit, off lines whose product is in category_ids
	RuleBuyXGetY         = "buy_x_get_y"       // of product_ids, every buy_quantity+get_quantity units: the get_quantity cheapest at value percent off
	RuleMinSpend         = "min_spend"         // a condition: the order's subtotal is at least min_subtotal
	RulePointsMultiplier = "points_multiplier" // loyalty points earned × value / 10000
)

// Bounds of a campaign.
const (
	MaxCampaignRules      = 20
	MaxPointsMultiplier   = 100_000 // ×10, in basis points
	MaxCampaignRuleIDs    = 100
	MaxBuyGetQuantity     = 1000
	minPointsMultiplier   = 10_001 // more than ×1
	campaignTimeOfDayText = "must be HH:MM, 00:00-23:59"
)

// Campaign is a discount, offer or promotion.
type Campaign struct {
	ID               string           `json:"id"`
	OrgID            string           `json:"org_id"`
	Name             string           `json:"name"`
	Type             string           `json:"type" openapi:"enum=CampaignType"`     // discount, offer or promotion: how head office files it; pricing depends on the rules only.
	Status           string           `json:"status" openapi:"enum=CampaignStatus"` // draft, scheduled, active, paused or ended; scheduled turns active and active ended by the clock.
	Rules            []CampaignRule   `json:"rules"`                                // What the campaign gives and on which condition.
	VoucherCode      *string          `json:"voucher_code"`                         // With a code the campaign applies only to orders that give it (upper case); null: automatic.
	UsageLimit       *int64           `json:"usage_limit"`                          // How many orders may use it in total; null: no limit.
	PerCustomerLimit *int64           `json:"per_customer_limit"`                   // How many orders of one customer may use it; null: no limit.
	StartsAt         *time.Time       `json:"starts_at"`                            // When it starts applying; null: at launch.
	EndsAt           *time.Time       `json:"ends_at"`                              // When it stops applying; null: never.
	Schedule         CampaignSchedule `json:"schedule"`                             // Days of week and hours, in each location's time zone.
	LocationIDs      []string         `json:"location_ids"`                         // The locations it applies at; empty: all.
	CreatedAt        time.Time        `json:"created_at"`
	UpdatedAt        time.Time        `json:"updated_at"`
}

// CampaignRule is one rule of a campaign; Type says which fields count.
type CampaignRule struct {
	Type         string   `json:"type" openapi:"required,enum=CampaignRuleType"`       // What the rule does; which other fields count.
	DiscountType string   `json:"discount_type,omitempty" openapi:"enum=DiscountType"` // percent (value in basis points) or amount (minor units; per unit for product and category rules); discount rules only.
	Value        int64    `json:"value,omitempty"`                                     // The discount (per discount_type), the buy_x_get_y percent off, or the points multiplier in basis points (20000 = double).
	ProductIDs   []string `json:"product_ids,omitempty"`                               // The products of product_discount and buy_x_get_y.
	CategoryIDs  []string `json:"category_ids,omitempty"`                              // The categories of category_discount.
	BuyQuantity  int64    `json:"buy_quantity,omitempty"`                              // buy_x_get_y: units paid in full per group.
	GetQuantity  int64    `json:"get_quantity,omitempty"`                              // buy_x_get_y: units discounted per group.
	MinSubtotal  int64    `json:"min_subtotal,omitempty"`                              // min_spend: the order subtotal needed, in minor units.
}

// CampaignSchedule is a weekly window in the location's time zone.
type CampaignSchedule struct {
	DaysOfWeek []int  `json:"days_of_week"` // 0 (Sunday) to 6 (Saturday); empty: every day.
	From       string `json:"from"`         // Local start time HH:MM; empty with to: all day.
	To         string `json:"to"`           // Local end time HH:MM (exclusive); before from: the window runs past midnight.
}

// CampaignCreate is the body of POST /campaigns; a new campaign is a draft.
type CampaignCreate struct {
	Name             string            `json:"name" openapi:"required"`
	Type             string            `json:"type" openapi:"required,enum=CampaignType"`
	Rules            []CampaignRule    `json:"rules" openapi:"required"`
	VoucherCode      *string           `json:"voucher_code"`
	UsageLimit       *int64            `json:"usage_limit"`
	PerCustomerLimit *int64            `json:"per_customer_limit"`
	StartsAt         *time.Time        `json:"starts_at"`
	EndsAt           *time.Time        `json:"ends_at"`
	Schedule         *CampaignSchedule `json:"schedule"`
	LocationIDs      []string          `json:"location_ids"`
}

// CampaignUpdate is the body of PATCH /campaigns/:id. Only name, ends_at
// and status change while a campaign is scheduled or active; the rest while
// it is a draft or paused (CampaignEditable); nothing but name once ended.
type CampaignUpdate struct {
	Name             Opt[string]           `json:"name"`
	Status           Opt[string]           `json:"status" openapi:"enum=CampaignStatusSet"` // paused, active or ended, as CampaignTransition allows.
	Type             Opt[string]           `json:"type" openapi:"enum=CampaignType"`
	Rules            Opt[[]CampaignRule]   `json:"rules"`
	VoucherCode      Opt[string]           `json:"voucher_code" openapi:"nullable"`
	UsageLimit       Opt[int64]            `json:"usage_limit" openapi:"nullable"`
	PerCustomerLimit Opt[int64]            `json:"per_customer_limit" openapi:"nullable"`
	StartsAt         Opt[time.Time]        `json:"starts_at" openapi:"nullable"`
	EndsAt           Opt[time.Time]        `json:"ends_at" openapi:"nullable"`
	Schedule         Opt[CampaignSchedule] `json:"schedule"`
	LocationIDs      Opt[[]string]         `json:"location_ids"`
}

var voucherRe = regexp.MustCompile(`^[A-Z0-9_-]{3,32}$`)

// NormalizeVoucher is a voucher code as stored and compared: trimmed, upper case.
func NormalizeVoucher(s string) string { return strings.ToUpper(strings.TrimSpace(s)) }

// Validate checks a new campaign (voucher_code normalized first).
func (in *CampaignCreate) Validate() error {
	var v Validation
	v.Check(in.Name != "" && ValidText(in.Name, 200), "name", "is required: 1-200 characters of text")
	v.Check(slices.Contains(Enums["CampaignType"], in.Type), "type", "must be discount, offer or promotion")
	validateRules(&v, in.Rules)
	if in.VoucherCode != nil {
		v.Check(voucherRe.MatchString(*in.VoucherCode), "voucher_code", "must be 3-32 letters, digits, - or _")
	}
	v.Check(in.UsageLimit == nil || *in.UsageLimit >= 1, "usage_limit", "must be at least 1")
	v.Check(in.PerCustomerLimit == nil || *in.PerCustomerLimit >= 1, "per_customer_limit", "must be at least 1")
	v.Check(in.StartsAt == nil || in.EndsAt == nil || in.EndsAt.After(*in.StartsAt), "ends_at", "must be after starts_at")
	if in.Schedule != nil {
		validateSchedule(&v, *in.Schedule)
	}
	checkIDs(&v, "location_ids", in.LocationIDs)
	return v.Err()
}

func validateRules(v *Validation, rules []CampaignRule) {
	if len(rules) < 1 || len(rules) > MaxCampaignRules {
		v.Add("rules", "must have 1-%d rules", MaxCampaignRules)
		return
	}
	gives, seen := false, map[string]bool{}
	for i, r := range rules {
		f := fmt.Sprintf("rules[%d]", i)
		switch r.Type {
		case RuleOrderDiscount, RuleProductDiscount, RuleCategoryDiscount:
			gives = true
			if r.DiscountType == DiscountPercent || r.DiscountType == DiscountAmount {
				checkDiscount(v, f, &Discount{Type: r.DiscountType, Value: r.Value})
			} else {
				v.Add(f+".discount_type", "must be percent or amount")
			}
			v.Check(r.Value > 0, f+".value", "must be above 0")
			if r.Type == RuleProductDiscount {
				checkRuleIDs(v, f+".product_ids", r.ProductIDs)
			}
			if r.Type == RuleCategoryDiscount {
				checkRuleIDs(v, f+".category_ids", r.CategoryIDs)
			}
		case RuleBuyXGetY:
			gives = true
			checkRuleIDs(v, f+".product_ids", r.ProductIDs)
			v.Check(r.BuyQuantity >= 1 && r.BuyQuantity <= MaxBuyGetQuantity, f+".buy_quantity", "must be 1-1000")
			v.Check(r.GetQuantity >= 1 && r.GetQuantity <= MaxBuyGetQuantity, f+".get_quantity", "must be 1-1000")
			v.Check(r.DiscountType == DiscountPercent, f+".discount_type", "must be percent (10000: free)")
			v.Check(r.Value >= 1 && r.Value <= MaxPercentBps, f+".value", "must be 1-10000 basis points (10000: free)")
		case RuleMinSpend:
			v.Check(!seen[r.Type], f+".type", "only one min_spend rule")
			v.Check(r.MinSubtotal >= 1 && r.MinSubtotal <= MaxMoney, f+".min_subtotal", "must be 1-10^12 minor units")
		case RulePointsMultiplier:
			gives = true
			v.Check(!seen[r.Type], f+".type", "only one points_multiplier rule")
			v.Check(r.Value >= minPointsMultiplier && r.Value <= MaxPointsMultiplier, f+".value", "must be 10001-100000 basis points (20000: double points)")
		default:
			v.Add(f+".type", "must be one of %s", strings.Join(Enums["CampaignRuleType"], ", "))
		}
		seen[r.Type] = true
	}
	v.Check(gives, "rules", "need a discount, buy_x_get_y or points_multiplier rule")
}

func checkRuleIDs(v *Validation, field string, ids []string) {
	v.Check(len(ids) >= 1, field, "must name at least one id")
	checkIDs(v, field, ids)
}

func validateSchedule(v *Validation, s CampaignSchedule) {
	v.Check(len(s.DaysOfWeek) <= 7, "schedule.days_of_week", "must have at most 7 days")
	for _, d := range s.DaysOfWeek {
		if d < 0 || d > 6 {
			v.Add("schedule.days_of_week", "days are 0 (Sunday) to 6 (Saturday)")
			break
		}
	}
	from, okFrom := minuteOfDay(s.From)
	to, okTo := minuteOfDay(s.To)
	switch {
	case s.From == "" && s.To == "":
	case s.From == "" || s.To == "":
		v.Add("schedule", "from and to go together")
	case !okFrom:
		v.Add("schedule.from", campaignTimeOfDayText)
	case !okTo:
		v.Add("schedule.to", campaignTimeOfDayText)
	default:
		v.Check(from != to, "schedule.to", "must differ from from")
	}
}

// minuteOfDay parses "HH:MM".
func minuteOfDay(s string) (int, bool) {
	if len(s) != 5 { // "" (all day) without time.Parse's error, on every sale
		return 0, false
	}
	t, err := time.Parse("15:04", s)
	if err != nil {
		return 0, false
	}
	return t.Hour()*60 + t.Minute(), true
}

// ValidateFields checks the fields present in an update on their own; the
// store merges the update into the stored campaign and validates the whole.
func (in *CampaignUpdate) ValidateFields() error {
	var v Validation
	if in.Status.Set {
		v.Check(!in.Status.Null && slices.Contains(Enums["CampaignStatusSet"], in.Status.Value), "status", "must be paused, active or ended")
	}
	v.Check(!in.Name.Null, "name", "must be 1-200 characters of text")
	v.Check(!in.Type.Null, "type", "must be discount, offer or promotion")
	v.Check(!in.Rules.Null, "rules", "must be a list of rules")
	v.Check(!in.Schedule.Null, "schedule", "must be an object")
	return v.Err()
}

// CampaignEditable reports whether field (a JSON name) of a campaign in
// status may change: name always; ends_at until ended; every other field
// while a draft or paused (pause a running campaign to change its rules).
func CampaignEditable(status, field string) bool {
	switch {
	case field == "name":
		return true
	case status == CampaignEnded:
		return false
	case field == "ends_at":
		return true
	default:
		return status == CampaignDraft || status == CampaignPaused
	}
}

// campaignMoves are the status changes PATCH may make (launch makes
// draft → scheduled | active).
var campaignMoves = map[string][]string{
	CampaignScheduled: {CampaignPaused, CampaignEnded},
	CampaignActive:    {CampaignPaused, CampaignEnded},
	CampaignPaused:    {CampaignActive, CampaignEnded},
}

// CampaignTransition returns the status a campaign in status from takes
// when asked for to at now (PATCH status): resuming (active) a campaign
// whose starts_at is still ahead makes it scheduled. Errors: EConflict for
// a move the table forbids (a draft is launched, an ended campaign stays).
func CampaignTransition(c *Campaign, to string, now time.Time) (string, error) {
	from := EffectiveCampaignStatus(c, now)
	if from == to {
		return to, nil
	}
	if !slices.Contains(campaignMoves[from], to) {
		return "", Errorf(EConflict, "a %s campaign cannot become %s", from, to)
	}
	if to == CampaignActive && c.StartsAt != nil && now.Before(*c.StartsAt) {
		return CampaignScheduled, nil
	}
	return to, nil
}

// LaunchStatus returns the status a draft takes at launch: scheduled when
// starts_at is ahead, else active. Errors: EConflict when it is not a
// draft, or its ends_at has passed.
func LaunchStatus(c *Campaign, now time.Time) (string, error) {
	if c.Status != CampaignDraft {
		return "", Errorf(EConflict, "only a draft campaign can be launched; this one is %s", EffectiveCampaignStatus(c, now))
	}
	if c.EndsAt != nil && !now.Before(*c.EndsAt) {
		return "", Errorf(EConflict, "the campaign's ends_at has passed")
	}
	if c.StartsAt != nil && now.Before(*c.StartsAt) {
		return CampaignScheduled, nil
	}
	return CampaignActive, nil
}

// EffectiveCampaignStatus is a campaign's status at now: the stored one,
// except that a scheduled campaign is active from starts_at, and a
// scheduled, active or paused one is ended from ends_at. Nothing needs to
// run at those instants: every read and every pricing decision uses it.
func EffectiveCampaignStatus(c *Campaign, now time.Time) string {
	switch c.Status {
	case CampaignScheduled, CampaignActive, CampaignPaused:
		if c.EndsAt != nil && !now.Before(*c.EndsAt) {
			return CampaignEnded
		}
		if c.Status == CampaignScheduled && (c.StartsAt == nil || !now.Before(*c.StartsAt)) {
			return CampaignActive
		}
	}
	return c.Status
}

// Applies reports whether campaign c prices an order at locationID at
// instant at: it is active then (EffectiveCampaignStatus), the location is
// one of its locations (or it names none), and at, read in the location's
// time zone tz, falls on one of its days and inside its hours. A window
// whose to is before its from runs past midnight and belongs to the day it
// starts on. Vouchers and min_spend are the pricing's business.
func Applies(c *Campaign, at time.Time, tz *time.Location, locationID string) bool {
	if EffectiveCampaignStatus(c, at) != CampaignActive {
		return false
	}
	if len(c.LocationIDs) > 0 && !slices.Contains(c.LocationIDs, locationID) {
		return false
	}
	if tz == nil {
		tz = time.UTC
	}
	local := at.In(tz)
	day, minute := int(local.Weekday()), local.Hour()*60+local.Minute()
	s := c.Schedule
	from, okFrom := minuteOfDay(s.From)
	to, okTo := minuteOfDay(s.To)
	if !okFrom || !okTo {
		return onDay(s.DaysOfWeek, day)
	}
	if from < to {
		return onDay(s.DaysOfWeek, day) && minute >= from && minute < to
	}
	// Past midnight: the evening part on a listed day, the morning part on the day after one.
	return (minute >= from && onDay(s.DaysOfWeek, day)) || (minute < to && onDay(s.DaysOfWeek, (day+6)%7))
}

func onDay(days []int, d int) bool { return len(days) == 0 || slices.Contains(days, d) }

// CampaignFilter selects campaigns.
type CampaignFilter struct {
	Status string // an effective status; "" all
	Page
}

// CampaignStats is GET /campaigns/:id/analytics: what the campaign did,
// from its redemptions (one per order that used it).
type CampaignStats struct {
	CampaignID    string              `json:"campaign_id"`    // The campaign.
	Redemptions   int64               `json:"redemptions"`    // Orders that used the campaign (one redemption each).
	Orders        int64               `json:"orders"`         // Distinct orders that used it.
	DiscountGiven int64               `json:"discount_given"` // Discount it gave, in minor units.
	Revenue       int64               `json:"revenue"`        // Totals of the orders that used it, in minor units (as sold).
	Refunded      int64               `json:"refunded"`       // Refunded so far of the orders that used it, in minor units.
	NetRevenue    int64               `json:"net_revenue"`    // revenue − refunded, in minor units.
	Currency      string              `json:"currency"`
	ByDay         []CampaignStatsPart `json:"by_day"`      // Per UTC day (key YYYY-MM-DD), oldest first.
	ByLocation    []CampaignStatsPart `json:"by_location"` // Per location (key the location id).
}

// CampaignStatsPart is the stats of one day or one location.
type CampaignStatsPart struct {
	Key           string `json:"key"`            // The day (YYYY-MM-DD) or the location id.
	Redemptions   int64  `json:"redemptions"`    // Orders that used the campaign.
	DiscountGiven int64  `json:"discount_given"` // In minor units.
	Revenue       int64  `json:"revenue"`        // In minor units (as sold).
	Refunded      int64  `json:"refunded"`       // Refunded so far of these orders, in minor units (on the sale's day).
	NetRevenue    int64  `json:"net_revenue"`    // revenue − refunded, in minor units.
}

// CampaignService manages campaigns. Errors: ENotFound, EInvalid, EConflict
// (a launch of a non-draft, a forbidden status change or edit).
type CampaignService interface {
	FindCampaigns(ctx context.Context, f CampaignFilter) (List[Campaign], error)
	FindCampaignByID(ctx context.Context, id string) (*Campaign, error)
	CreateCampaign(ctx context.Context, in *CampaignCreate) (*Campaign, error)
	UpdateCampaign(ctx context.Context, id string, in *CampaignUpdate) (*Campaign, error)
	LaunchCampaign(ctx context.Context, id string) (*Campaign, error)
	CampaignStats(ctx context.Context, id string) (*CampaignStats, error)
}
