package eventbus

import (
	"context"
	"testing"

	"kassa.dev/shared/kassa"
)

func TestFilteredDeliveryAndFullBufferDoesNotBlock(t *testing.T) {
	b := New()
	orders := b.Subscribe(1, func(e kassa.Event) bool { return e.Type == kassa.EventOrderCreated })
	defer orders.Close()
	ctx := context.Background()
	b.Publish(ctx, kassa.Event{Type: kassa.EventCustomerCreated})
	b.Publish(ctx, kassa.Event{Type: kassa.EventOrderCreated, ID: "1"})
	b.Publish(ctx, kassa.Event{Type: kassa.EventOrderCreated, ID: "2"}) // buffer full: dropped, not blocked
	if e := <-orders.C; e.ID != "1" {
		t.Fatalf("got %+v, want order 1", e)
	}
	if b.Dropped() != 1 {
		t.Fatalf("dropped = %d, want 1", b.Dropped())
	}
	orders.Close()
	if _, ok := <-orders.C; ok {
		t.Fatal("channel open after Close")
	}
	b.Publish(ctx, kassa.Event{Type: kassa.EventOrderCreated}) // no panic after close
}
