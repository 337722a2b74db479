// Package eventbus is the in-process bus that services publish business
// events to after their transaction committed. Subscribers get events on a
// buffered channel; a subscriber that falls behind by more than its buffer
// loses events (counted in Dropped) rather than slowing the publisher, so a
// stuck consumer never blocks order taking. The bus is a wake-up: durable
// consumers (webhooks, automations) read the event log from a saved
// position (sqlite's DB.EventsAfter), sync reads the outbox.
package eventbus

import (
	"context"
	"sync"
	"sync/atomic"

	"kassa.dev/shared/kassa"
)

// Bus fans events out to subscribers. The zero value is not usable; call New.
type Bus struct {
	mu      sync.RWMutex
	subs    map[*Subscription]struct{}
	dropped atomic.Int64
}

// New returns an empty bus.
func New() *Bus { return &Bus{subs: map[*Subscription]struct{}{}} }

var _ kassa.Publisher = (*Bus)(nil)

// Subscription receives the events whose type its filter accepts.
type Subscription struct {
	C      <-chan kassa.Event
	c      chan kassa.Event
	filter func(kassa.Event) bool
	bus    *Bus
	once   sync.Once
}

// Subscribe returns a subscription with a buffer of size events; filter
// nil accepts every event.
func (b *Bus) Subscribe(size int, filter func(kassa.Event) bool) *Subscription {
	c := make(chan kassa.Event, size)
	s := &Subscription{C: c, c: c, filter: filter, bus: b}
	b.mu.Lock()
	b.subs[s] = struct{}{}
	b.mu.Unlock()
	return s
}

// Close ends the subscription and closes its channel.
func (s *Subscription) Close() {
	s.once.Do(func() {
		s.bus.mu.Lock()
		delete(s.bus.subs, s)
		s.bus.mu.Unlock()
		close(s.c)
	})
}

// Publish hands e to every subscriber whose filter accepts it, never blocking.
func (b *Bus) Publish(_ context.Context, e kassa.Event) {
	b.mu.RLock()
	defer b.mu.RUnlock()
	for s := range b.subs {
		if s.filter != nil && !s.filter(e) {
			continue
		}
		select {
		case s.c <- e:
		default:
			b.dropped.Add(1)
		}
	}
}

// Dropped counts events lost to full subscriber buffers.
func (b *Bus) Dropped() int64 { return b.dropped.Load() }
