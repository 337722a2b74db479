package kassa

import "testing"

// TestActorRefNamesTheUserElseTheClient: records (history, movements,
// change records) name the user who acted, or the partner app when a
// token has no user.
func TestActorRefNamesTheUserElseTheClient(t *testing.T) {
	for _, c := range []struct {
		a    Actor
		want string
	}{
		{Actor{UserID: "u1", ClientID: "c1"}, "u1"},
		{Actor{ClientID: "c1"}, "c1"},
		{Actor{OrgID: "o1"}, ""},
	} {
		if got := c.a.Ref(); got != c.want {
			t.Errorf("%+v.Ref() = %q, want %q", c.a, got, c.want)
		}
	}
}
