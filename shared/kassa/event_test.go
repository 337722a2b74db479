package kassa

import (
	"slices"
	"testing"
)

// TestTheEventCatalogHoldsTheSpecsEventsAndSaysWhichAreEmitted: the
// spec's 18 types, its two release-note additions and Kassa's product
// events are in the catalog once each; test.ping is never logged.
// Gift-card events are emitted since gift cards (docs/giftcards.md), the
// four lay-by events since lay-bys (docs/laybys.md).
// automation.triggered is emitted since automations (issue 14), and the
// five campaign.* events are Kassa's additions (issue 14).
func TestTheEventCatalogHoldsTheSpecsEventsAndSaysWhichAreEmitted(t *testing.T) {
	spec := []string{"test.ping", "order.created", "order.completed", "order.refunded", "payment.captured", "payment.failed",
		"customer.created", "customer.updated", "inventory.low_stock", "inventory.stockout", "loyalty.points_earned",
		"loyalty.tier_changed", "layby.created", "layby.payment_received", "layby.completed", "layby.cancelled",
		"gift_card.issued", "gift_card.redeemed", "inventory.transfer_completed", "automation.triggered"}
	var all []string
	for _, e := range EventCatalog {
		if slices.Contains(all, e.Type) {
			t.Errorf("%s twice in the catalog", e.Type)
		}
		all = append(all, e.Type)
		if e.Operation == "" || e.Data == "" {
			t.Errorf("%s says neither what emits it nor its data", e.Type)
		}
	}
	for _, typ := range spec {
		if _, ok := LookupEvent(typ); !ok {
			t.Errorf("%s is missing from the catalog", typ)
		}
	}
	if len(all) != len(spec)+2+5 { // product.* and campaign.* are Kassa's
		t.Errorf("catalog of %d types: %v", len(all), all)
	}
	for _, typ := range []string{EventGiftCardIssued, EventGiftCardRedeemed, EventLaybyCreated, EventLaybyPaymentReceived, EventLaybyCompleted, EventLaybyCancelled} {
		if e, _ := LookupEvent(typ); !e.Emitted || !IsEventType(typ) {
			t.Errorf("%s: emitted %v, logged %v; want emitted", typ, e.Emitted, IsEventType(typ))
		}
	}
	if IsEventType(EventTestPing) || slices.Contains(EventTypes, EventTestPing) || !IsEventType(EventOrderRefunded) || IsEventType("order.deleted") {
		t.Error("IsEventType: test.ping is not logged, order.refunded is, order.deleted is not in the catalog")
	}
	if _, ok := LookupEvent("order.deleted"); ok {
		t.Error("order.deleted is not in the catalog")
	}
}
