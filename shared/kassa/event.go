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

// Event is a business event, published after the transaction that caused it
// committed.
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
