package kassa

import (
	"errors"
	"testing"
	"time"
)

const (
	pCoffee  = "00000000-0000-4000-8000-00000000000c"
	pPastry  = "00000000-0000-4000-8000-00000000000d"
	cPastry  = "00000000-0000-4000-8000-0000000000ca"
	locCafe  = "00000000-0000-4000-8000-0000000000aa"
	locOther = "00000000-0000-4000-8000-0000000000bb"
)

func ptr[T any](v T) *T { return &v }

func TestCampaignCreateValidateNamesTheField(t *testing.T) {
	ok := CampaignCreate{Name: "Pastries before 9", Type: CampaignDiscount,
		Rules: []CampaignRule{{Type: RuleCategoryDiscount, DiscountType: DiscountPercent, Value: 1000, CategoryIDs: []string{cPastry}}}}
	if err := ok.Validate(); err != nil {
		t.Fatalf("valid campaign refused: %v", err)
	}
	for _, c := range []struct {
		field string
		edit  func(*CampaignCreate)
	}{
		{"name", func(c *CampaignCreate) { c.Name = "" }},
		{"type", func(c *CampaignCreate) { c.Type = "sale" }},
		{"rules", func(c *CampaignCreate) { c.Rules = nil }},
		{"rules[0].type", func(c *CampaignCreate) { c.Rules[0].Type = "bogof" }},
		{"rules[0].value", func(c *CampaignCreate) { c.Rules[0].Value = 10001 }},
		{"rules[0].category_ids", func(c *CampaignCreate) { c.Rules[0].CategoryIDs = nil }},
		{"rules[0].get_quantity", func(c *CampaignCreate) {
			c.Rules[0] = CampaignRule{Type: RuleBuyXGetY, DiscountType: DiscountPercent, Value: 10000, ProductIDs: []string{pCoffee}, BuyQuantity: 2}
		}},
		{"rules[0].value", func(c *CampaignCreate) { c.Rules[0] = CampaignRule{Type: RulePointsMultiplier, Value: 10000} }},
		{"rules", func(c *CampaignCreate) { c.Rules[0] = CampaignRule{Type: RuleMinSpend, MinSubtotal: 500} }},
		{"voucher_code", func(c *CampaignCreate) { c.VoucherCode = ptr("no spaces") }},
		{"usage_limit", func(c *CampaignCreate) { c.UsageLimit = ptr(int64(0)) }},
		{"ends_at", func(c *CampaignCreate) {
			c.StartsAt, c.EndsAt = ptr(time.Date(2026, 5, 2, 0, 0, 0, 0, time.UTC)), ptr(time.Date(2026, 5, 1, 0, 0, 0, 0, time.UTC))
		}},
		{"schedule.days_of_week", func(c *CampaignCreate) { c.Schedule = &CampaignSchedule{DaysOfWeek: []int{7}} }},
		{"schedule.from", func(c *CampaignCreate) { c.Schedule = &CampaignSchedule{From: "25:00", To: "09:00"} }},
		{"schedule", func(c *CampaignCreate) { c.Schedule = &CampaignSchedule{From: "07:00"} }},
		{"location_ids", func(c *CampaignCreate) { c.LocationIDs = []string{"x"} }},
	} {
		in := ok
		in.Rules = append([]CampaignRule(nil), ok.Rules...)
		c.edit(&in)
		err := in.Validate()
		var e *Error
		if !errors.As(err, &e) || e.Kind != EInvalid || len(e.Fields) == 0 || e.Fields[0].Field != c.field {
			t.Errorf("%s: got %v, want a validation error naming it", c.field, err)
		}
	}
}

func TestCampaignStateTable(t *testing.T) {
	now := time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)
	later, earlier := now.Add(time.Hour), now.Add(-time.Hour)
	draft := &Campaign{Status: CampaignDraft}
	if s, err := LaunchStatus(draft, now); err != nil || s != CampaignActive {
		t.Fatalf("launch of a draft: %q %v", s, err)
	}
	if s, _ := LaunchStatus(&Campaign{Status: CampaignDraft, StartsAt: &later}, now); s != CampaignScheduled {
		t.Fatalf("launch of a future draft: %q", s)
	}
	for _, c := range []*Campaign{{Status: CampaignActive}, {Status: CampaignDraft, EndsAt: &earlier}} {
		if _, err := LaunchStatus(c, now); ErrorKind(err) != EConflict {
			t.Fatalf("launch of %+v: %v, want a conflict", c, err)
		}
	}
	for _, c := range []struct {
		c        *Campaign
		to, want string // want "" is a conflict
	}{
		{&Campaign{Status: CampaignActive}, CampaignPaused, CampaignPaused},
		{&Campaign{Status: CampaignActive}, CampaignEnded, CampaignEnded},
		{&Campaign{Status: CampaignPaused}, CampaignActive, CampaignActive},
		{&Campaign{Status: CampaignPaused, StartsAt: &later}, CampaignActive, CampaignScheduled},
		{&Campaign{Status: CampaignScheduled, StartsAt: &later}, CampaignPaused, CampaignPaused},
		{&Campaign{Status: CampaignDraft}, CampaignActive, ""},
		{&Campaign{Status: CampaignEnded}, CampaignActive, ""},
		{&Campaign{Status: CampaignActive, EndsAt: &earlier}, CampaignPaused, ""}, // ended by the clock
	} {
		got, err := CampaignTransition(c.c, c.to, now)
		if (c.want == "") != (ErrorKind(err) == EConflict) || got != c.want {
			t.Errorf("%s → %s: %q %v, want %q", c.c.Status, c.to, got, err, c.want)
		}
	}
	if s := EffectiveCampaignStatus(&Campaign{Status: CampaignScheduled, StartsAt: &earlier}, now); s != CampaignActive {
		t.Fatalf("a scheduled campaign past its start is %q", s)
	}
	if CampaignEditable(CampaignActive, "rules") || !CampaignEditable(CampaignPaused, "rules") || !CampaignEditable(CampaignActive, "ends_at") || CampaignEditable(CampaignEnded, "ends_at") {
		t.Fatal("editable table")
	}
}

func TestCampaignAppliesInTheLocationsTimeZone(t *testing.T) {
	sydney, _ := time.LoadLocation("Australia/Sydney")
	// Tuesdays 07:00-09:00 local, at one location.
	c := &Campaign{Status: CampaignActive, LocationIDs: []string{locCafe},
		Schedule: CampaignSchedule{DaysOfWeek: []int{int(time.Tuesday)}, From: "07:00", To: "09:00"}}
	tue8 := time.Date(2026, 5, 5, 8, 0, 0, 0, sydney) // a Tuesday; Monday 22:00 UTC
	for _, c2 := range []struct {
		name string
		at   time.Time
		tz   *time.Location
		loc  string
		want bool
	}{
		{"tuesday 08:00 local", tue8, sydney, locCafe, true},
		{"same instant read in UTC is monday", tue8, time.UTC, locCafe, false},
		{"09:00 is outside", tue8.Add(time.Hour), sydney, locCafe, false},
		{"another location", tue8, sydney, locOther, false},
		{"wednesday 08:00", tue8.AddDate(0, 0, 1), sydney, locCafe, false},
	} {
		if got := Applies(c, c2.at, c2.tz, c2.loc); got != c2.want {
			t.Errorf("%s: %v", c2.name, got)
		}
	}
	night := &Campaign{Status: CampaignActive, Schedule: CampaignSchedule{DaysOfWeek: []int{int(time.Friday)}, From: "22:00", To: "02:00"}}
	fri := time.Date(2026, 5, 8, 23, 0, 0, 0, time.UTC)
	if !Applies(night, fri, time.UTC, locCafe) || !Applies(night, fri.Add(2*time.Hour), time.UTC, locCafe) || Applies(night, fri.Add(3*time.Hour), time.UTC, locCafe) {
		t.Fatal("a window past midnight belongs to the day it starts on")
	}
	for _, s := range []string{CampaignDraft, CampaignPaused, CampaignEnded} {
		if Applies(&Campaign{Status: s}, fri, time.UTC, locCafe) {
			t.Fatalf("a %s campaign applies", s)
		}
	}
}
