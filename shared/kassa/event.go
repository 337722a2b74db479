package kassa

import (
	"context"
	"time"
)

// Event types of the spec's catalog and Kassa's additions.
const (
	EventOrderCreated          = "order.created"
	EventOrderCompleted        = "order.completed"
	EventOrderRefunded         = "order.refunded"
	EventPaymentCaptured       = "payment.captured"
	EventPaymentFailed         = "payment.failed"
	EventCustomerCreated       = "customer.created"
	EventCustomerUpdated       = "customer.updated"
	EventInventoryLowStock     = "inventory.low_stock"
	EventInventoryStockout     = "inventory.stockout"
	EventLoyaltyPointsEarned   = "loyalty.points_earned"
	EventLoyaltyTierChanged    = "loyalty.tier_changed"
	EventInventoryTransferDone = "inventory.transfer_completed"
	EventAutomationTriggered   = "automation.triggered"
	EventProductCreated        = "product.created"
	EventProductUpdated        = "product.updated"
)

// EventTypes is the catalog of business events Kassa emits today: the types
// the durable event log holds and the hub admits from an edge. The spec's
// lay-by and gift-card events join it with those features.
var EventTypes = []string{
	EventOrderCreated, EventOrderCompleted, EventOrderRefunded, EventPaymentCaptured, EventPaymentFailed,
	EventCustomerCreated, EventCustomerUpdated, EventInventoryLowStock, EventInventoryStockout,
	EventLoyaltyPointsEarned, EventLoyaltyTierChanged, EventInventoryTransferDone, EventAutomationTriggered,
	EventProductCreated, EventProductUpdated,
}

// IsEventType reports whether t is in the catalog (EventTypes).
func IsEventType(t string) bool {
	for _, e := range EventTypes {
		if e == t {
			return true
		}
	}
	return false
}

// MaxEventData bounds an event's data (the resource as JSON) that the hub
// accepts from an edge; an order of a few hundred lines fits.
const MaxEventData = 256 << 10

// Event is a business event. The unit of work that causes it appends it
// to the node's durable event log; after the commit it is also published
// on the in-process bus, which only wakes readers (it drops events for a
// slow subscriber): durable readers read the log from a saved position.
type Event struct {
	ID         string    `json:"id"`
	Type       string    `json:"type"`
	OrgID      string    `json:"org_id"`
	LocationID string    `json:"location_id,omitempty"`
	OccurredAt time.Time `json:"occurred_at"`
	Data       any       `json:"data"`
}

// Publisher takes business events; package eventbus implements it.
type Publisher interface {
	Publish(ctx context.Context, e Event)
}
