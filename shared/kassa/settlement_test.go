package kassa_test

import (
	"testing"
	"time"

	"kassa.dev/shared/kassa"
)

func TestSettlementFilterDays(t *testing.T) {
	auckland, err := time.LoadLocation("Pacific/Auckland")
	if err != nil {
		t.Fatal(err)
	}
	honolulu, err := time.LoadLocation("Pacific/Honolulu")
	if err != nil {
		t.Fatal(err)
	}
	// 2025-03-10 20:30 UTC is 2025-03-11 09:30 in Auckland (NZDT) and
	// 2025-03-10 10:30 in Honolulu.
	now := time.Date(2025, 3, 10, 20, 30, 0, 0, time.UTC)
	cases := []struct {
		name     string
		f        kassa.SettlementFilter
		zone     *time.Location
		from, to string
		bad      bool
	}{
		{"default in UTC", kassa.SettlementFilter{}, time.UTC, "2025-03-04", "2025-03-10", false},
		{"default east of UTC is its own today", kassa.SettlementFilter{}, auckland, "2025-03-05", "2025-03-11", false},
		{"default west of UTC", kassa.SettlementFilter{}, honolulu, "2025-03-04", "2025-03-10", false},
		{"only from", kassa.SettlementFilter{From: "2025-03-01"}, auckland, "2025-03-01", "2025-03-11", false},
		{"only to", kassa.SettlementFilter{To: "2025-03-02"}, auckland, "2025-02-24", "2025-03-02", false},
		{"both, whatever the zone", kassa.SettlementFilter{From: "2024-12-30", To: "2025-01-02"}, auckland, "2024-12-30", "2025-01-02", false},
		{"a leap year", kassa.SettlementFilter{From: "2024-01-01", To: "2024-12-31"}, time.UTC, "2024-01-01", "2024-12-31", false},
		{"over a year", kassa.SettlementFilter{From: "2023-01-01", To: "2024-12-31"}, time.UTC, "", "", true},
		{"out of order", kassa.SettlementFilter{From: "2025-03-02", To: "2025-03-01"}, time.UTC, "", "", true},
		{"from after the local today", kassa.SettlementFilter{From: "2025-03-11"}, honolulu, "", "", true},
		{"not a date", kassa.SettlementFilter{To: "yesterday"}, time.UTC, "", "", true},
		{"a time", kassa.SettlementFilter{To: "2025-03-10T00:00:00Z"}, time.UTC, "", "", true},
		{"no such day", kassa.SettlementFilter{From: "2025-02-30"}, time.UTC, "", "", true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			from, to, err := tc.f.Days(now, tc.zone)
			if tc.bad {
				if kassa.ErrorKind(err) != kassa.EBadRequest {
					t.Fatalf("Days = %q, %q, %v; want a bad-request error", from, to, err)
				}
				return
			}
			if err != nil || from != tc.from || to != tc.to {
				t.Fatalf("Days = %q, %q, %v; want %q, %q", from, to, err, tc.from, tc.to)
			}
		})
	}
}
