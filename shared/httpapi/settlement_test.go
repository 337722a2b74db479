package httpapi_test

import (
	"net/url"
	"slices"
	"testing"
	"time"

	"kassa.dev/shared/kassa"
)

// TestSettlementsDefaultToEachLocationsToday: without dates, settlements
// cover the week to each location's own today, so a store east of UTC sees
// the sales of its day while UTC still has yesterday's date; explicit dates
// stay what they say.
func TestSettlementsDefaultToEachLocationsToday(t *testing.T) {
	tn := MustStartNode(t, kassa.NodeEdge, nil)
	// 20:30 UTC tomorrow: 08:30 or 09:30 the day after in Auckland,
	// 06:30 or 07:30 in Sydney, and still the UTC date at shop A.
	now := tn.Clock.Now()
	at := time.Date(now.Year(), now.Month(), now.Day()+1, 20, 30, 0, 0, time.UTC)
	tn.Clock.Advance(at.Sub(now))
	f := ordFixtureOn(t, tn)
	auckland := f.create("/locations", map[string]any{"name": "Auckland", "timezone": "Pacific/Auckland"})
	sydney := f.create("/locations", map[string]any{"name": "Sydney", "timezone": "Australia/Sydney"})
	latte := f.product("Latte", "LAT-1", 450)
	for _, loc := range []string{f.locA, auckland, sydney} {
		f.soldOrder(loc, latte, 1)
	}
	utcDay, localDay := at.Format(time.DateOnly), at.AddDate(0, 0, 1).Format(time.DateOnly)
	a := paySettlement{utcDay, f.locA, "cash", 1, 450, 0, 450}
	akl := paySettlement{localDay, auckland, "cash", 1, 450, 0, 450}
	syd := paySettlement{localDay, sydney, "cash", 1, 450, 0, 450}
	q := func(kv ...string) string {
		v := url.Values{}
		for i := 0; i+1 < len(kv); i += 2 {
			v.Set(kv[i], kv[i+1])
		}
		return "?" + v.Encode()
	}
	cases := []struct {
		name, query string
		want        []paySettlement
	}{
		{"no dates: each location's own week", "", []paySettlement{a, akl, syd}},
		{"no dates, Auckland", q("location_id", auckland), []paySettlement{akl}},
		{"no dates, shop A", q("location_id", f.locA), []paySettlement{a}},
		{"only date_from: to each location's today", q("date_from", utcDay), []paySettlement{a, akl, syd}},
		{"only date_to, the UTC date", q("date_to", utcDay), []paySettlement{a}},
		{"only date_to, the local date", q("date_to", localDay), []paySettlement{a, akl, syd}},
		{"explicit UTC date at Auckland", q("date_from", utcDay, "date_to", utcDay, "location_id", auckland), []paySettlement{}},
		{"explicit local date", q("date_from", localDay, "date_to", localDay), []paySettlement{akl, syd}},
		{"date_from is Auckland's today", q("date_from", localDay), []paySettlement{akl, syd}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got := f.paySettlements("", tc.query)
			slices.SortFunc(got, func(x, y paySettlement) int {
				return slices.Index([]string{f.locA, auckland, sydney}, x.location) - slices.Index([]string{f.locA, auckland, sydney}, y.location)
			})
			if !slices.Equal(got, tc.want) {
				t.Fatalf("settlements\n got %+v\nwant %+v", got, tc.want)
			}
		})
	}
}
