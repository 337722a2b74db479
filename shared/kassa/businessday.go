package kassa

import "time"

// DaySettings say where a location's business day starts: its IANA time
// zone and its cutoff hour. Sales made before the cutoff (a café open
// until 02:00 has cutoff 2) are booked on the previous day
// (docs/drawers.md, "The business day").
type DaySettings struct {
	Timezone   string // IANA name, e.g. Australia/Sydney
	CutoffHour int    // 0–12: the local hour the business day starts at
}

// MaxDayCutoffHour is the latest cutoff a location may set: a business day
// ends at noon of the next calendar day at the latest.
const MaxDayCutoffHour = 12

// Day returns the location's business day settings.
func (l *Location) Day() DaySettings {
	return DaySettings{Timezone: l.Timezone, CutoffHour: l.DayCutoffHour}
}

// BusinessDay returns the business day (YYYY-MM-DD) that instant t belongs
// to at a location: its local date, less one day when the local wall-clock
// time is before the cutoff hour. The wall clock is what counts, so a
// daylight-saving change neither moves the cutoff nor makes a day of the
// wrong length. An unknown time zone counts as UTC (locations are
// validated; this keeps a report readable if a zone disappears).
func BusinessDay(t time.Time, loc DaySettings) string {
	return loc.Clock().Day(t)
}

// LocationUpdate is the body of PATCH /locations/{id}: the business day's
// settings (owners only).
type LocationUpdate struct {
	Name          *string `json:"name"`
	Timezone      *string `json:"timezone"`        // IANA time zone.
	DayCutoffHour *int    `json:"day_cutoff_hour"` // 0–12: sales before this local hour belong to the previous business day.
}

// Validate checks a location update.
func (in *LocationUpdate) Validate() error {
	var v Validation
	v.Check(in.Name == nil || (*in.Name != "" && ValidText(*in.Name, 200)), "name", "must be 1-200 characters of text")
	v.Check(in.Timezone == nil || ValidTimezone(*in.Timezone), "timezone", "must be an IANA time zone such as Australia/Sydney")
	v.Check(in.DayCutoffHour == nil || (*in.DayCutoffHour >= 0 && *in.DayCutoffHour <= MaxDayCutoffHour), "day_cutoff_hour", "must be an hour from 0 to 12")
	return v.Err()
}
