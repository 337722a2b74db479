package hubapi

import (
	"testing"
	"time"
)

// The consent page's sign-ins are kept in memory: they expire after
// consentTTL and their number is bounded, the oldest going first, so a
// flood of sign-ins cannot grow the hub's memory without end.
func TestConsentSessionsExpireAndAreBounded(t *testing.T) {
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	ss := newConsentSessions(func() time.Time { return now })
	first := ss.add("token-0")
	var last string
	for i := 1; i <= consentMaxSessions; i++ {
		last = ss.add("token")
	}
	if len(ss.m) != consentMaxSessions || ss.get(first) != nil || ss.get(last) == nil {
		t.Fatalf("%d sessions kept (max %d); the oldest kept: %t", len(ss.m), consentMaxSessions, ss.get(first) != nil)
	}
	now = now.Add(consentTTL)
	if ss.get(last) != nil {
		t.Fatal("a sign-in outlived consentTTL")
	}
	ss.add("token")
	if len(ss.m) != 1 || len(ss.fifo) != 1 {
		t.Fatalf("expired sessions stay: %d in the map, %d in the queue", len(ss.m), len(ss.fifo))
	}
}
