package kassa

import (
	"slices"
	"testing"
)

func TestMoneyBreaches(t *testing.T) {
	for _, c := range []struct {
		total, paid, refunded int64
		want                  []string
	}{
		{6600, 6600, 0, nil},
		{6600, 6600, 6600, nil},
		{6600, 13200, 0, []string{ConflictOverpaid}},
		{6600, 6600, 10000, []string{ConflictOverrefunded}},
		{6600, 13200, 6601, []string{ConflictOverpaid, ConflictOverrefunded}}, // refunds are capped at the total
		{6600, 3000, 3001, []string{ConflictOverrefunded}},                    // never more than was paid
		{0, 0, 0, nil},
	} {
		if got := MoneyBreaches(c.total, c.paid, c.refunded); !slices.Equal(got, c.want) {
			t.Errorf("MoneyBreaches(%d, %d, %d) = %v, want %v", c.total, c.paid, c.refunded, got, c.want)
		}
	}
}
