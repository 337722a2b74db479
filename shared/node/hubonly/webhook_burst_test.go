package hubonly

import (
	"slices"
	"testing"

	"kassa.dev/shared/kassa"
)

// TestABurstOfEventsReadsEachOrgsEndpointsOnce: the events a commit
// publishes together wake the sender once per org, and none is left
// queued to wake it again.
func TestABurstOfEventsReadsEachOrgsEndpointsOnce(t *testing.T) {
	q := make(chan kassa.Event, 8)
	for _, org := range []string{"b", "a", "b", "c", "a"} {
		q <- kassa.Event{OrgID: org}
	}
	if got := burstOrgs(kassa.Event{OrgID: "a"}, q); !slices.Equal(got, []string{"a", "b", "c"}) {
		t.Errorf("orgs woken: %v, want a, b, c once each", got)
	}
	if len(q) != 0 {
		t.Errorf("%d events left queued", len(q))
	}
}
