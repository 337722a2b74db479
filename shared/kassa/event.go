package kassa

import (
	"context"
	"time"
)

// Event types: the spec's catalog (part 6.2), its two release-note
// additions and Kassa's product events. EventCatalog says which are
// emitted, by what, with which data.
const (
	EventTestPing              = "test.ping"
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
	EventLaybyCreated          = "layby.created"
	EventLaybyPaymentReceived  = "layby.payment_received"
	EventLaybyCompleted        = "layby.completed"
	EventLaybyCancelled        = "layby.cancelled"
	EventGiftCardIssued        = "gift_card.issued"
	EventGiftCardRedeemed      = "gift_card.redeemed"
	EventInventoryTransferDone = "inventory.transfer_completed"
	EventAutomationTriggered   = "automation.triggered"
	EventProductCreated        = "product.created"
	EventProductUpdated        = "product.updated"
	EventCampaignCreated       = "campaign.created"
	EventCampaignUpdated       = "campaign.updated"
	EventCampaignLaunched      = "campaign.launched"
	EventCampaignPaused        = "campaign.paused"
	EventCampaignEnded         = "campaign.ended"
)

// EventInfo describes one event type of the catalog.
type EventInfo struct {
	Type string
	// Emitted: some operation emits it today. A type that is not emitted
	// is registered: a webhook may subscribe to it, and it arrives once
	// its feature lands.
	Emitted bool
	// Logged: the event goes through the durable event log (and so is
	// delivered for what happened at an edge too); test.ping is not, it
	// is sent only by the webhook test route.
	Logged bool
	// Operation names what emits it, and where.
	Operation string
	// Data names the event's data: the resource in its API shape, the
	// same JSON as the REST GET named.
	Data string
}

// EventCatalog is every event type a webhook may subscribe to, in the
// order of docs/events.md (which is its long form).
var EventCatalog = []EventInfo{
	{EventTestPing, true, false, "POST /webhooks/:id/test (hub only; never logged)", `{"timestamp": RFC 3339}`},
	{EventOrderCreated, true, true, "POST /orders", "the order (GET /orders/:id)"},
	{EventOrderCompleted, true, true, "POST /orders/:id/complete", "the order (GET /orders/:id)"},
	{EventOrderRefunded, true, true, "POST /orders/:id/refund, partial or full", "the order (GET /orders/:id); the refund is the last of refunds[]"},
	{EventPaymentCaptured, true, true, "POST /payments/initiate with an immediate capture (cash, external, card), POST /payments/:id/capture", "the payment (GET /payments/:id)"},
	{EventPaymentFailed, true, true, "POST /payments/initiate declined or errored (also an offline limit refusal)", "the payment (GET /payments/:id), status failed"},
	{EventCustomerCreated, true, true, "POST /customers", "the customer (GET /customers/:id)"},
	{EventCustomerUpdated, true, true, "PATCH /customers/:id when a field changed; DELETE /customers/:id (erasure)", "the customer (GET /customers/:id); an erasure sends the blanked customer with \"deleted\": true"},
	{EventInventoryLowStock, true, true, "any stock movement taking on_hand from above a positive reorder_point to at or below it", "the stock level (GET /inventory/stock)"},
	{EventInventoryStockout, true, true, "any stock movement taking on_hand from above 0 to 0 or below; a sync merge that oversells", "the stock level (GET /inventory/stock)"},
	{EventLoyaltyPointsEarned, true, true, "POST /loyalty/accounts/:id/earn, POST /orders/:id/complete for a customer with an account", "the points transaction (GET /loyalty/accounts/:id/transactions)"},
	{EventLoyaltyTierChanged, true, true, "an earn that moves lifetime points across a tier threshold", "the loyalty account (GET /loyalty/accounts/:id), tier is the new tier"},
	{EventLaybyCreated, true, true, "POST /laybys", "the lay-by (GET /laybys/:id) with its deposit"},
	{EventLaybyPaymentReceived, true, true, "POST /laybys/:id/payments", "the lay-by (GET /laybys/:id) after the instalment"},
	{EventLaybyCompleted, true, true, "POST /laybys/:id/payments paying the balance in full, POST /laybys/:id/complete", "the lay-by (GET /laybys/:id), status completed"},
	{EventLaybyCancelled, true, true, "POST /laybys/:id/cancel; the node's expiry job (status expired)", "the lay-by (GET /laybys/:id), status cancelled or expired"},
	{EventGiftCardIssued, true, true, "POST /gift-cards", "the gift card (GET /gift-cards/:id), code masked but for its last 4 characters"},
	{EventGiftCardRedeemed, true, true, "POST /payments/initiate with method gift_card", "the gift card (GET /gift-cards/:id) after the redeem, code masked but for its last 4 characters"},
	{EventInventoryTransferDone, true, true, "POST /inventory/transfers/:id/receive", "the transfer (GET /inventory/transfers/:id)"},
	{EventAutomationTriggered, true, true, "an automation's emit_event action (hub: event, schedule and POST /automations/trigger runs)", "the execution (an entry of GET /automations/:id/executions) with the action's payload"},
	{EventProductCreated, true, true, "POST /catalog/products", "the product (GET /catalog/products/:id)"},
	{EventProductUpdated, true, true, "PATCH /catalog/products/:id when a field changed; DELETE /catalog/products/:id (archive)", "the product (GET /catalog/products/:id)"},
	{EventCampaignCreated, true, true, "POST /campaigns (hub)", "the campaign (GET /campaigns/:id)"},
	{EventCampaignUpdated, true, true, "PATCH /campaigns/:id when a field changed, a resume (status active) included (hub)", "the campaign (GET /campaigns/:id)"},
	{EventCampaignLaunched, true, true, "POST /campaigns/:id/launch (hub)", "the campaign (GET /campaigns/:id), status scheduled or active"},
	{EventCampaignPaused, true, true, "PATCH /campaigns/:id to status paused, also by an automation's set_campaign_status (hub)", "the campaign (GET /campaigns/:id)"},
	{EventCampaignEnded, true, true, "PATCH /campaigns/:id to status ended (hub); not when ends_at passes", "the campaign (GET /campaigns/:id)"},
}

// EventTypes lists the catalog's types that the durable event log holds
// (all but test.ping): what the log accepts, the hub admits from an edge,
// and a webhook is delivered from the log.
var EventTypes = loggedTypes()

func loggedTypes() []string {
	var out []string
	for _, e := range EventCatalog {
		if e.Logged {
			out = append(out, e.Type)
		}
	}
	return out
}

// IsEventType reports whether t is a logged type of the catalog
// (EventTypes).
func IsEventType(t string) bool {
	e, ok := LookupEvent(t)
	return ok && e.Logged
}

// LookupEvent returns the catalog entry of t: ok is false for a type not in
// the catalog (what a webhook may not subscribe to).
func LookupEvent(t string) (EventInfo, bool) {
	for _, e := range EventCatalog {
		if e.Type == t {
			return e, true
		}
	}
	return EventInfo{}, false
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
