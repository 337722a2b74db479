package kassa

import (
	"testing"
	"time"
)

func TestBusinessDayAcrossCutoffAndDaylightSaving(t *testing.T) {
	sydney := DaySettings{Timezone: "Australia/Sydney", CutoffHour: 2}
	// Sydney leaves daylight saving at 03:00 AEDT on 2026-04-05 (clocks go
	// back to 02:00 AEST) and enters it at 02:00 AEST on 2026-10-04.
	cases := []struct {
		name string
		utc  string
		loc  DaySettings
		want string
	}{
		{"before the cutoff books on the previous day", "2026-03-01T14:30:00Z", sydney, "2026-03-01"},     // 01:30 AEDT Mar 2
		{"at the cutoff books on the new day", "2026-03-01T15:00:00Z", sydney, "2026-03-02"},              // 02:00 AEDT Mar 2
		{"late evening is the same day", "2026-03-02T12:59:00Z", sydney, "2026-03-02"},                    // 23:59 AEDT
		{"DST ends: first 02:30 (AEDT) is past the cutoff", "2026-04-04T15:30:00Z", sydney, "2026-04-05"}, // 02:30 AEDT Apr 5
		{"DST ends: 01:59 AEDT is the previous day", "2026-04-04T14:59:00Z", sydney, "2026-04-04"},
		{"DST ends: second 02:30 (AEST) is still Apr 5", "2026-04-04T16:30:00Z", sydney, "2026-04-05"},
		{"DST starts: 01:59 AEST is the previous day", "2026-10-03T15:59:00Z", sydney, "2026-10-03"},
		{"DST starts: 03:00 AEDT (02:00 skipped) is the new day", "2026-10-03T16:00:00Z", sydney, "2026-10-04"},
		{"cutoff 0 is the calendar day", "2026-03-01T13:30:00Z", DaySettings{Timezone: "Australia/Sydney"}, "2026-03-02"},
		{"month boundary before the cutoff", "2026-02-28T14:00:00Z", sydney, "2026-02-28"}, // 01:00 AEDT Mar 1
		{"year boundary", "2026-12-31T23:30:00Z", DaySettings{Timezone: "Europe/London", CutoffHour: 2}, "2026-12-31"},
		{"unknown zone counts as UTC", "2026-03-01T01:00:00Z", DaySettings{Timezone: "Nowhere/Else", CutoffHour: 2}, "2026-02-28"},
	}
	for _, c := range cases {
		at, err := time.Parse(time.RFC3339, c.utc)
		if err != nil {
			t.Fatal(err)
		}
		if got := BusinessDay(at, c.loc); got != c.want {
			t.Errorf("%s: BusinessDay(%s) = %s, want %s", c.name, c.utc, got, c.want)
		}
	}
}

func TestLocationUpdateValidate(t *testing.T) {
	bad := []struct {
		in    LocationUpdate
		field string
	}{
		{LocationUpdate{Timezone: ptr("Mars/Olympus")}, "timezone"},
		{LocationUpdate{DayCutoffHour: ptr(13)}, "day_cutoff_hour"},
		{LocationUpdate{DayCutoffHour: ptr(-1)}, "day_cutoff_hour"},
	}
	for _, c := range bad {
		err := c.in.Validate()
		var e *Error
		if !asError(err, &e) || e.Fields[0].Field != c.field {
			t.Errorf("%+v: %v, want an error naming %s", c.in, err, c.field)
		}
	}
	if err := (&LocationUpdate{Timezone: ptr("Pacific/Auckland"), DayCutoffHour: ptr(4)}).Validate(); err != nil {
		t.Fatal(err)
	}
}

func asError(err error, e **Error) bool {
	x, ok := err.(*Error)
	*e = x
	return ok && x != nil && len(x.Fields) > 0
}
