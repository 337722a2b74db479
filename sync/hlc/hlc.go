// Package hlc implements a hybrid logical clock (Kulkarni et al., 2014).
//
// A Timestamp pairs a wall-clock reading in milliseconds with a logical
// counter, so that stamps taken on one node always increase and stamps
// received from other nodes are ordered after the event that sent them.
// Kassa stamps every replicated change with one; last-writer-wins merges
// compare stamps and break ties by origin node id.
package hlc

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"time"
)

// Timestamp is one HLC reading. The zero Timestamp is before every other.
type Timestamp struct {
	Wall    int64  // milliseconds since the Unix epoch
	Logical uint32 // counter for events within one millisecond
}

// String renders t as a fixed-width decimal string, "WWWWWWWWWWWWWWW.LLLLLLLLLL",
// so that comparing two strings byte-wise orders them as Compare does.
// SQLite text columns and JSON carry this form.
func (t Timestamp) String() string {
	return fmt.Sprintf("%015d.%010d", t.Wall, t.Logical)
}

// Parse reads the form written by String.
func Parse(s string) (Timestamp, error) {
	w, l, ok := strings.Cut(s, ".")
	if !ok || len(w) != 15 || len(l) != 10 {
		return Timestamp{}, fmt.Errorf("hlc: malformed timestamp %q", s)
	}
	wall, err := strconv.ParseInt(w, 10, 64)
	if err != nil {
		return Timestamp{}, fmt.Errorf("hlc: malformed wall %q", s)
	}
	logical, err := strconv.ParseUint(l, 10, 32)
	if err != nil {
		return Timestamp{}, fmt.Errorf("hlc: malformed counter %q", s)
	}
	return Timestamp{Wall: wall, Logical: uint32(logical)}, nil
}

// MarshalText implements encoding.TextMarshaler.
func (t Timestamp) MarshalText() ([]byte, error) { return []byte(t.String()), nil }

// UnmarshalText implements encoding.TextUnmarshaler.
func (t *Timestamp) UnmarshalText(b []byte) error {
	v, err := Parse(string(b))
	if err != nil {
		return err
	}
	*t = v
	return nil
}

// Compare returns -1, 0 or +1 as t is before, equal to or after u.
func (t Timestamp) Compare(u Timestamp) int {
	switch {
	case t.Wall < u.Wall:
		return -1
	case t.Wall > u.Wall:
		return 1
	case t.Logical < u.Logical:
		return -1
	case t.Logical > u.Logical:
		return 1
	}
	return 0
}

// IsZero reports whether t is the zero Timestamp.
func (t Timestamp) IsZero() bool { return t == Timestamp{} }

// Time returns the wall part of t as a time.Time in UTC.
func (t Timestamp) Time() time.Time { return time.UnixMilli(t.Wall).UTC() }

// ErrClamped is returned by Clock.Update when a remote stamp lay further in
// the future than the clock's maximum skew; the clock advanced only as far as
// the skew allows.
var ErrClamped = errors.New("hlc: remote timestamp beyond maximum clock skew was clamped")

// Clock hands out monotonically increasing timestamps. It is safe for
// concurrent use.
type Clock struct {
	now     func() time.Time
	maxSkew time.Duration

	mu   sync.Mutex
	last Timestamp
}

// NewClock returns a clock reading physical time from now (time.Now when nil).
// Remote stamps more than maxSkew ahead of physical time are clamped by Update.
func NewClock(now func() time.Time, maxSkew time.Duration) *Clock {
	if now == nil {
		now = time.Now
	}
	return &Clock{now: now, maxSkew: maxSkew}
}

// Now returns a timestamp after every one this clock returned or observed.
func (c *Clock) Now() Timestamp {
	c.mu.Lock()
	defer c.mu.Unlock()
	pt := c.now().UnixMilli()
	if pt > c.last.Wall {
		c.last = Timestamp{Wall: pt}
	} else {
		c.last.Logical++
	}
	return c.last
}

// Observe moves the clock past t without the skew check: for stamps that
// this node wrote itself, such as the newest one in its outbox at start-up.
func (c *Clock) Observe(t Timestamp) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if t.Compare(c.last) > 0 {
		c.last = t
	}
}

// Update merges a stamp received from another node and returns the stamp
// the receiving event gets, which is after both. A remote stamp beyond the
// maximum skew is clamped to physical time plus the skew, and ErrClamped is
// returned beside the (still usable) stamp so that the caller can report it.
func (c *Clock) Update(remote Timestamp) (Timestamp, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	pt := c.now().UnixMilli()
	var err error
	if c.maxSkew > 0 && remote.Wall > pt+c.maxSkew.Milliseconds() {
		remote = Timestamp{Wall: pt + c.maxSkew.Milliseconds()}
		err = ErrClamped
	}
	switch {
	case pt > c.last.Wall && pt > remote.Wall:
		c.last = Timestamp{Wall: pt}
	case remote.Wall > c.last.Wall:
		c.last = Timestamp{Wall: remote.Wall, Logical: remote.Logical + 1}
	case c.last.Wall > remote.Wall:
		c.last.Logical++
	default: // equal walls
		c.last.Logical = max(c.last.Logical, remote.Logical) + 1
	}
	return c.last, err
}
