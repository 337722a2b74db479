package hubonly

import (
	"strings"
	"testing"
	"time"

	"kassa.dev/shared/kassa"
)

// TestSchedulesRunOnceADayAcrossBothDaylightSavingChanges: a 02:30 rule
// in Europe/Berlin has no tick on the spring-forward Sunday (02:30 does
// not exist) and one, not two, on the autumn Sunday (02:30 happens twice;
// robfig/cron alone fires both). After downtime only the latest missed
// tick fires.
func TestSchedulesRunOnceADayAcrossBothDaylightSavingChanges(t *testing.T) {
	trig := kassa.Trigger{Type: kassa.TriggerSchedule, Cron: "30 2 * * *", Timezone: "Europe/Berlin"}
	s, err := ruleSchedule(trig)
	if err != nil {
		t.Fatal(err)
	}
	next := onceADay(s, trig)
	walk := func(from time.Time, n int) []string {
		var out []string
		for range n {
			from = next(from)
			out = append(out, from.UTC().Format(time.RFC3339))
		}
		return out
	}
	spring := walk(time.Date(2026, 3, 27, 12, 0, 0, 0, time.UTC), 3)
	if want := "[2026-03-28T01:30:00Z 2026-03-30T00:30:00Z 2026-03-31T00:30:00Z]"; "["+strings.Join(spring, " ")+"]" != want {
		t.Errorf("spring: %v, want %s", spring, want)
	}
	autumn := walk(time.Date(2026, 10, 24, 12, 0, 0, 0, time.UTC), 3)
	if want := "[2026-10-25T00:30:00Z 2026-10-26T01:30:00Z 2026-10-27T01:30:00Z]"; "["+strings.Join(autumn, " ")+"]" != want {
		t.Errorf("autumn: %v, want %s", autumn, want)
	}
	last := time.Date(2026, 4, 1, 0, 30, 0, 0, time.UTC)
	tick, after := kassa.DueTick(next, last, time.Date(2026, 4, 5, 6, 0, 0, 0, time.UTC), maxMissedTicks)
	if !tick.Equal(time.Date(2026, 4, 5, 0, 30, 0, 0, time.UTC)) || !after.Equal(time.Date(2026, 4, 6, 0, 30, 0, 0, time.UTC)) {
		t.Errorf("after downtime: tick %v, next %v", tick, after)
	}
	if tick, _ := kassa.DueTick(next, last, last.Add(time.Hour), maxMissedTicks); !tick.IsZero() {
		t.Errorf("no tick due, got %v", tick)
	}
	if _, err := checkCron("30 2 * *", time.UTC); err == nil {
		t.Error("a four-field cron parsed")
	}
}
