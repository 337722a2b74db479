package kassa

import (
	"testing"
	"time"
)

// TestIdempotencyReplayDecidesByTheHeldRecord: CONTRACT.md's rule for a
// repeated Idempotency-Key — the same body within 24 h replays, another
// body is 422 (EInvalid), a first request still running is 409
// (EConflict), an expired or unknown key is claimed anew.
func TestIdempotencyReplayDecidesByTheHeldRecord(t *testing.T) {
	now := time.Date(2026, 11, 23, 12, 0, 0, 0, time.UTC)
	done := &IdempotencyRecord{Fingerprint: "f1", ClaimedAt: now.Add(-time.Hour)}
	running := &IdempotencyRecord{Fingerprint: "f1", Running: true, ClaimedAt: now.Add(-time.Second)}
	old := &IdempotencyRecord{Fingerprint: "f0", Running: true, ClaimedAt: now.Add(-IdempotencyWindow - time.Second)}
	for _, c := range []struct {
		name   string
		held   *IdempotencyRecord
		fp     string
		replay bool
		kind   Kind
	}{
		{"new key", nil, "f1", false, ""},
		{"same body, done", done, "f1", true, ""},
		{"another body", done, "f2", false, EInvalid},
		{"another body while running", running, "f2", false, EInvalid},
		{"same body, still running", running, "f1", false, EConflict},
		{"expired: claimed anew", old, "f1", false, ""},
	} {
		replay, err := IdempotencyReplay(c.held, c.fp, now)
		if replay != c.replay || (c.kind == "") != (err == nil) || err != nil && ErrorKind(err) != c.kind {
			t.Errorf("%s: replay %v, err %v; want %v, kind %q", c.name, replay, err, c.replay, c.kind)
		}
	}
}
