package kassa_test

import (
	"testing"
	"time"

	"kassa.dev/shared/kassa"
)

// TestDayStartIsWhereBusinessDayTurns checks every day of 2026 in zones
// with daylight saving (a cutoff the spring change skips, one the autumn
// change repeats, Lord Howe's half hour) and without: the instant Start
// returns is the first second BusinessDay books on that day.
func TestDayStartIsWhereBusinessDayTurns(t *testing.T) {
	for _, d := range []kassa.DaySettings{
		{Timezone: "Australia/Sydney", CutoffHour: 2}, {Timezone: "Australia/Sydney", CutoffHour: 3},
		{Timezone: "America/New_York", CutoffHour: 0}, {Timezone: "America/New_York", CutoffHour: 4},
		{Timezone: "Australia/Lord_Howe", CutoffHour: 2}, {Timezone: "Asia/Kolkata", CutoffHour: 5},
		{Timezone: "UTC", CutoffHour: 0},
	} {
		c := d.Clock()
		for _, day := range kassa.Days("2026-01-01", "2026-12-31") {
			s := c.Start(day)
			if got := kassa.BusinessDay(s, d); got != day {
				t.Fatalf("%v: Start(%s) = %s is on %s", d, day, s, got)
			}
			if got := kassa.BusinessDay(s.Add(-time.Second), d); got >= day {
				t.Fatalf("%v: the second before Start(%s) = %s is on %s", d, day, s, got)
			}
		}
	}
}

// TestReportFilterNamesTheField: each bad input is refused naming its
// field, and the defaults fill the rest.
func TestReportFilterNamesTheField(t *testing.T) {
	now := time.Date(2026, 3, 10, 12, 0, 0, 0, time.UTC)
	for _, c := range []struct {
		f     kassa.ReportFilter
		field string
	}{
		{kassa.ReportFilter{DateFrom: "2026-03-10", DateTo: "2026-03-01"}, "date_to"},
		{kassa.ReportFilter{DateFrom: "2025-01-01", DateTo: "2026-03-01"}, "date_to"},
		{kassa.ReportFilter{DateFrom: "March"}, "date_from"},
		{kassa.ReportFilter{GroupBy: "weather"}, "group_by"},
		{kassa.ReportFilter{Top: -1, GroupBy: kassa.GroupCustomer}, "top"},
	} {
		err := c.f.Validate(kassa.ReportSales, now)
		e, ok := err.(*kassa.Error)
		if !ok || e.Kind != kassa.EInvalid || len(e.Fields) == 0 || e.Fields[0].Field != c.field {
			t.Errorf("%+v: %v, want a problem naming %s", c.f, err, c.field)
		}
	}
	f := kassa.ReportFilter{}
	if err := f.Validate(kassa.ReportSales, now); err != nil || f.DateFrom != "2026-03-05" || f.DateTo != "2026-03-11" || f.GroupBy != kassa.GroupDay {
		t.Fatalf("defaults: %+v %v", f, err)
	}
}
