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

// TestSettlementsPageLikeEveryList: GET /payments/settlements takes limit
// and cursor and answers the list envelope as every list does (CONTRACT.md):
// pages in date, location and method order that together are the whole
// list, next_cursor null on the last page (also when the rows fill it
// exactly), and a bad limit or cursor is 400 (issue 21).
func TestSettlementsPageLikeEveryList(t *testing.T) {
	tn := MustStartNode(t, kassa.NodeEdge, nil)
	f := ordFixtureOn(t, tn)
	latte := f.product("Latte", "LAT-P", 450)
	locs := []string{f.locA}
	for _, name := range []string{"Second", "Third", "Fourth"} {
		locs = append(locs, f.create("/locations", map[string]any{"name": name, "timezone": "UTC"}))
	}
	for _, loc := range locs {
		f.soldOrder(loc, latte, 1)
	}
	all := f.paySettlements("", "")
	if len(all) != 4 {
		t.Fatalf("%d settlement rows, want 4: %+v", len(all), all)
	}
	var paged []paySettlement
	cursor, pages := "", 0
	for {
		r := f.must(f.do("GET", "/payments/settlements?limit=3"+cursor, "", nil), 200)
		body := r.JSON()
		items := r.List()
		pages++
		for _, it := range items {
			m := it.(map[string]any)
			paged = append(paged, paySettlement{m["date"].(string), m["location_id"].(string), m["method"].(string),
				ordNum(m["count"]), ordNum(m["gross"]), ordNum(m["refunds"]), ordNum(m["net"])})
		}
		next, _ := body["next_cursor"].(string)
		if body["has_more"] != (next != "") || (next == "" && body["next_cursor"] != nil) {
			t.Fatalf("page %d: has_more %v, next_cursor %v", pages, body["has_more"], body["next_cursor"])
		}
		if pages == 1 && (len(items) != 3 || next == "") {
			t.Fatalf("the first page of limit 3 has %d rows and next_cursor %q", len(items), next)
		}
		if next == "" {
			break
		}
		cursor = "&cursor=" + url.QueryEscape(next)
	}
	if pages != 2 || !slices.Equal(paged, all) {
		t.Fatalf("%d pages gave\n%+v\nthe whole list is\n%+v", pages, paged, all)
	}
	exact := f.must(f.do("GET", "/payments/settlements?limit=4", "", nil), 200).JSON()
	if len(exact["data"].([]any)) != 4 || exact["has_more"] != false || exact["next_cursor"] != nil {
		t.Fatalf("a page the rows fill exactly: %v", exact)
	}
	for _, q := range []string{"?limit=0", "?limit=201", "?cursor=bm90LWEtY3Vyc29y", "?cursor=" + url.QueryEscape("v1:"+f.locA)} {
		mustProblem(t, f.do("GET", "/payments/settlements"+q, "", nil), 400, "bad-request")
	}
}
