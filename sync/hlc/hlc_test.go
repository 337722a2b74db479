package hlc

import (
	"errors"
	"sort"
	"testing"
	"time"
)

type fakeWall struct{ t time.Time }

func (f *fakeWall) now() time.Time { return f.t }

func TestNowIsMonotonicWhenWallStandsStillOrGoesBack(t *testing.T) {
	w := &fakeWall{t: time.UnixMilli(1_000_000)}
	c := NewClock(w.now, time.Minute)
	a := c.Now()
	b := c.Now()
	w.t = w.t.Add(-time.Hour) // NTP step backwards
	d := c.Now()
	if !(a.Compare(b) < 0 && b.Compare(d) < 0) {
		t.Fatalf("stamps not increasing: %v %v %v", a, b, d)
	}
}

func TestUpdateOrdersAfterRemoteAndClampsFarFuture(t *testing.T) {
	w := &fakeWall{t: time.UnixMilli(1_000_000)}
	c := NewClock(w.now, time.Minute)
	remote := Timestamp{Wall: 1_000_500, Logical: 7}
	got, err := c.Update(remote)
	if err != nil || got.Compare(remote) <= 0 {
		t.Fatalf("Update(%v) = %v, %v; want after remote", remote, got, err)
	}
	far := Timestamp{Wall: 1_000_000 + int64(time.Hour/time.Millisecond)}
	got, err = c.Update(far)
	if !errors.Is(err, ErrClamped) {
		t.Fatalf("far future stamp not reported clamped: %v", err)
	}
	if got.Compare(far) >= 0 || got.Wall > 1_000_000+60_000 {
		t.Fatalf("far future stamp won: %v", got)
	}
	if next := c.Now(); next.Compare(got) <= 0 {
		t.Fatalf("Now after Update went back: %v <= %v", next, got)
	}
}

func TestStringOrderMatchesCompareAndRoundTrips(t *testing.T) {
	stamps := []Timestamp{{5, 0}, {1, 9}, {1, 10}, {12345678901234, 1}, {0, 0}, {5, 3}}
	strs := make([]string, len(stamps))
	for i, s := range stamps {
		strs[i] = s.String()
		back, err := Parse(strs[i])
		if err != nil || back != s {
			t.Fatalf("round trip %v -> %q -> %v, %v", s, strs[i], back, err)
		}
	}
	sort.Strings(strs)
	sort.Slice(stamps, func(i, j int) bool { return stamps[i].Compare(stamps[j]) < 0 })
	for i := range stamps {
		if stamps[i].String() != strs[i] {
			t.Fatalf("string order differs at %d: %s vs %s", i, stamps[i], strs[i])
		}
	}
	for _, bad := range []string{"", "1.2", "abc", "000000000000001.x000000000"} {
		if _, err := Parse(bad); err == nil {
			t.Fatalf("Parse(%q) accepted", bad)
		}
	}
}
