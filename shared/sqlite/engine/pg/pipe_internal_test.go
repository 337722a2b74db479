package pg

import "testing"

// TestARollbackToDropsWhatItsSavepointUndoes: ROLLBACK TO name keeps
// what was kept up to the last kept SAVEPOINT name, and nothing when that
// savepoint was sent; a plain ROLLBACK drops everything.
func TestARollbackToDropsWhatItsSavepointUndoes(t *testing.T) {
	kept := func(qs ...string) *conn {
		c := &conn{}
		for _, q := range qs {
			c.keep(q, nil)
		}
		return c
	}
	for _, tc := range []struct {
		queue    []string
		rollback string
		left     int
	}{
		{[]string{"begin", "INSERT a", "SAVEPOINT unit", "INSERT b"}, "ROLLBACK TO unit", 3},
		{[]string{"RELEASE unit", "SAVEPOINT unit", "INSERT b", "SAVEPOINT inner", "INSERT c"}, "rollback to savepoint unit", 2},
		{[]string{"SAVEPOINT unit", "INSERT b", "SAVEPOINT inner", "INSERT c"}, "ROLLBACK TO inner", 3},
		{[]string{"INSERT b"}, "ROLLBACK TO unit", 0},
		{[]string{"begin", "SAVEPOINT unit", "INSERT b"}, "ROLLBACK", 0},
		{[]string{"begin", "INSERT b"}, "ROLLBACKS", 2},
	} {
		c := kept(tc.queue...)
		c.failed = errKept
		err := c.before(tc.rollback)
		if len(c.queue) != tc.left {
			t.Errorf("%q after %v: %d left, want %d", tc.rollback, tc.queue, len(c.queue), tc.left)
		}
		if rolled := tc.rollback != "ROLLBACKS"; rolled != (err == nil) {
			t.Errorf("%q: the kept failure is %v", tc.rollback, err)
		}
	}
}
