package kassa

import "testing"

// TestPointsPayWholeAndComeBackNeverMoreThanTaken: a points payment is a
// whole number of points at the redemption value (no rounding); its
// refunds give back the share returned, rounded down, and all of it once
// the whole payment is returned.
func TestPointsPayWholeAndComeBackNeverMoreThanTaken(t *testing.T) {
	p := &LoyaltyProgram{RedemptionValue: 10}
	if n, err := p.PointsToPay(300); n != 30 || err != nil {
		t.Fatalf("300 at 10 a point: %d, %v; want 30", n, err)
	}
	if _, err := p.PointsToPay(305); ErrorKind(err) != EInvalid || err.(*Error).Fields[0].Field != "amount" {
		t.Fatalf("305 at 10 a point: %v; want invalid amount", err)
	}
	if _, err := (&LoyaltyProgram{}).PointsToPay(300); ErrorKind(err) != EInvalid {
		t.Fatalf("points worth nothing: %v; want invalid", err)
	}
	// 7 points paid 70; returned 25, then 50, then all 70.
	var given int64
	for _, tc := range []struct{ returned, want int64 }{{25, 2}, {50, 5}, {70, 7}, {80, 7}} {
		back := PointsGivenBack(7, 70, tc.returned)
		if back != tc.want || back < given {
			t.Fatalf("returned %d: %d points back in all, want %d", tc.returned, back, tc.want)
		}
		given = back
	}
}
