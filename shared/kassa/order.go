package kassa

import (
	"context"
	"time"
)

// Order states. Status only moves forward: open → completed →
// partially_refunded → refunded, or open → cancelled.
const (
	OrderOpen              = "open"
	OrderCompleted         = "completed"
	OrderPartiallyRefunded = "partially_refunded"
	OrderRefunded          = "refunded"
	OrderCancelled         = "cancelled"
)

// orderRank orders the states on the merge lattice: a higher rank wins.
var orderRank = map[string]int{OrderOpen: 0, OrderCancelled: 1, OrderCompleted: 2, OrderPartiallyRefunded: 3, OrderRefunded: 4}

// OrderStatusRank is the order-status lattice the merge of replicated
// orders follows: of two states the higher rank wins, so a completed order
// never returns to open and a cancel loses to a complete. An unknown state
// ranks with open (0) and so never wins.
func OrderStatusRank(s string) int { return orderRank[s] }

// OrderStatusAfter reports whether status b may follow a (or equal it) on
// the lattice (OrderStatusRank).
func OrderStatusAfter(a, b string) bool { return OrderStatusRank(b) >= OrderStatusRank(a) }

// ValidOrderStatus reports whether s is an order state.
func ValidOrderStatus(s string) bool { _, ok := orderRank[s]; return ok }

// Channels.
const (
	ChannelPOS     = "pos"
	ChannelOnline  = "online"
	ChannelPartner = "partner"
)

// Kitchen states, moved by the KDS.
const (
	KitchenNew        = "new"
	KitchenInProgress = "in_progress"
	KitchenReady      = "ready"
	KitchenServed     = "served"
)

// Order is a sale at a location.
type Order struct {
	ID                  string            `json:"id"`
	OrgID               string            `json:"org_id"`
	LocationID          string            `json:"location_id"`
	Number              string            `json:"number"`                            // The human-readable order number, per location.
	Status              string            `json:"status" openapi:"enum=OrderStatus"` // The order's state: open, then completed, partially_refunded, refunded; or cancelled.
	Channel             string            `json:"channel" openapi:"enum=Channel"`
	CustomerID          *string           `json:"customer_id"`
	LineItems           []LineItem        `json:"line_items"`
	Subtotal            int64             `json:"subtotal"`       // sum of lines before discounts (tax as priced)
	DiscountTotal       int64             `json:"discount_total"` // sum of line discounts
	TaxTotal            int64             `json:"tax_total"`      // tax contained in (inclusive) or added to (exclusive) the total
	Total               int64             `json:"total"`          // what the customer pays
	PaidTotal           int64             `json:"paid_total"`     // captured payments
	RefundedTotal       int64             `json:"refunded_total"` // Refunded so far, in minor units.
	Currency            string            `json:"currency"`
	TaxInclusive        bool              `json:"tax_inclusive"`         // Whether prices include tax (the org setting when the order was created).
	TaxRateBps          int               `json:"tax_rate_bps"`          // The org's tax rate when the order was created, in basis points (1000 = 10 %); a line of a tax category has its own (line_items[].tax_rate_bps).
	TaxBreakdown        []TaxGroup        `json:"tax_breakdown"`         // The tax by rate, lowest rate first; the groups' tax sums to tax_total.
	Payments            []Payment         `json:"payments"`              // The payments taken for it, oldest first.
	Refunds             []Refund          `json:"refunds"`               // Its refunds, oldest first.
	History             []OrderHistory    `json:"history"`               // Its status changes, oldest first.
	LoyaltyPointsEarned int64             `json:"loyalty_points_earned"` // Points its customer earned on completion.
	VoucherCode         *string           `json:"voucher_code"`          // The voucher code the order gave (upper case); null: none.
	Campaigns           []AppliedCampaign `json:"campaigns"`             // What each campaign gave the order, fixed at creation; discount_total is these and the manual discounts.
	KitchenStatus       string            `json:"kitchen_status" openapi:"enum=KitchenStatus"`
	Notes               string            `json:"notes"`
	OccurredAt          time.Time         `json:"occurred_at"`  // When the sale happened at the store (may precede created_at at the hub for an order taken offline).
	CreatedBy           *string           `json:"created_by"`   // the user or OAuth client who took the order
	ApprovedBy          *string           `json:"approved_by"`  // The manager or owner who approved its manual discount above the creator's limit; null when none was needed.
	CompletedAt         *time.Time        `json:"completed_at"` // When it was completed; null until then.
	CreatedAt           time.Time         `json:"created_at"`
	UpdatedAt           time.Time         `json:"updated_at"`
}

// LineItem is one line of an order, fixed at creation.
type LineItem struct {
	ID                string         `json:"id"`
	ProductID         string         `json:"product_id"`
	Name              string         `json:"name"` // The product name when ordered.
	SKU               string         `json:"sku"`  // The product SKU when ordered.
	Quantity          int64          `json:"quantity"`
	UnitPrice         int64          `json:"unit_price"`         // before modifiers
	Modifiers         []LineModifier `json:"modifiers"`          // The chosen modifier options, priced into unit_price.
	Discount          int64          `json:"discount"`           // The manual and campaign discount of the line, in minor units.
	CampaignDiscounts []LineCampaign `json:"campaign_discounts"` // The campaigns' parts of discount; the rest is manual.
	Tax               int64          `json:"tax"`                // The line's tax, in minor units (included in or added to total per the order's tax_inclusive).
	TaxRateBps        int            `json:"tax_rate_bps"`       // The rate the line was taxed at, in basis points: its tax category's, else the order's tax_rate_bps.
	Total             int64          `json:"total"`              // (unit_price + modifiers) × quantity − discount (+ tax when exclusive)
	// RefundedQuantity is how many units were refunded by line.
	RefundedQuantity int64 `json:"refunded_quantity"` // Units of the line refunded so far.
}

// LineModifier is a chosen modifier option, priced at order time.
type LineModifier struct {
	OptionID        string `json:"option_id"` // The modifier option chosen.
	GroupID         string `json:"group_id"`  // The modifier group of the option.
	Name            string `json:"name"`      // The option name when ordered.
	PriceAdjustment int64  `json:"price_adjustment"`
}

// OrderHistory is one status change.
type OrderHistory struct {
	Status string    `json:"status" openapi:"enum=OrderStatus"` // The status it moved to.
	At     time.Time `json:"at"`                                // When.
	Actor  *string   `json:"actor"`
}

// Refund is an append-only refund entry of an order.
type Refund struct {
	ID       string          `json:"id"`
	OrderID  string          `json:"order_id"`
	Amount   int64           `json:"amount"`
	Reason   string          `json:"reason"` // Free text saying why.
	Restock  bool            `json:"restock"`
	Lines    []RefundLine    `json:"line_items"` // The refunded line quantities; empty for a refund by amount.
	Payments []RefundPayment `json:"payments"`   // How the refund was returned, per payment.
	Actor    *string         `json:"actor"`
	// The manager or owner whose approval_token let the actor refund above
	// the org's refund_limit; null when none was needed.
	ApprovedBy *string   `json:"approved_by"`
	CreatedAt  time.Time `json:"created_at"`
}

// RefundLine is a refunded quantity of a line and the amount it returned.
type RefundLine struct {
	LineItemID string `json:"line_item_id"` // The order line refunded.
	Quantity   int64  `json:"quantity"`
	Amount     int64  `json:"amount"`
	Restock    bool   `json:"restock,omitempty"` // A return's line put back on sale (docs/returns.md); a refund's restock says it for all.
}

// RefundPayment is the part of a refund returned through one payment.
type RefundPayment struct {
	PaymentID    string `json:"payment_id"` // The payment the money went back through.
	Amount       int64  `json:"amount"`
	ProcessorRef string `json:"processor_ref"`
}

// Discount is a manual discount: percent (Value in basis points, 1000 =
// 10 %) or amount (minor units).
type Discount struct {
	Type  string `json:"type" openapi:"required,enum=DiscountType"` // percent | amount
	Value int64  `json:"value" openapi:"required"`                  // Basis points for percent (1000 = 10 %), minor units for amount.
}

// OrderLineInput is a line of POST /orders.
type OrderLineInput struct {
	ProductID         string    `json:"product_id" openapi:"required"`
	Quantity          int64     `json:"quantity" openapi:"required"` // Units, 1-10000.
	ModifierOptionIDs []string  `json:"modifier_option_ids"`         // Options chosen from the product's modifier groups.
	Discount          *Discount `json:"discount"`
}

// OrderCreate is the body of POST /orders. Prices come from the catalog
// and the location's active price list; clients never send prices.
type OrderCreate struct {
	LocationID  string           `json:"location_id" openapi:"required"`
	CustomerID  *string          `json:"customer_id"`
	Channel     string           `json:"channel" openapi:"enum=Channel"`
	LineItems   []OrderLineInput `json:"line_items" openapi:"required"`
	Discount    *Discount        `json:"discount"` // order-level, spread over the lines
	Notes       string           `json:"notes"`
	VoucherCode *string          `json:"voucher_code"` // A campaign's voucher code; 422 when no campaign with it applies here and now.
	// A manager's or owner's access token (their own sign-in at the till)
	// approving a manual discount above the caller's discount_limits: the
	// order stays the caller's (created_by) and records the approver as
	// approved_by. Not needed within the limit, and then not recorded.
	ApprovalToken string `json:"approval_token"`
	// Approver is who approval_token signs in (set by the API, never read
	// from the body).
	Approver *Actor `json:"-"`
}

// OrderUpdate is the body of PATCH /orders/:id.
type OrderUpdate struct {
	Notes      Opt[string] `json:"notes"`
	CustomerID Opt[string] `json:"customer_id" openapi:"nullable"`
	Status     Opt[string] `json:"status" openapi:"enum=OrderCancel"` // only "cancelled", from open
}

// RefundLineInput asks to refund quantity units of a line.
type RefundLineInput struct {
	LineItemID string `json:"line_item_id" openapi:"required"`
	Quantity   int64  `json:"quantity" openapi:"required"`
}

// RefundRequest is the body of POST /orders/:id/refund: with neither
// amount nor line_items it refunds what is left.
type RefundRequest struct {
	Amount    *int64            `json:"amount"`
	LineItems []RefundLineInput `json:"line_items"`
	Reason    string            `json:"reason"`
	Restock   bool              `json:"restock"`
	// RegisterID names the register the refund is handed back at: its open
	// drawer records it, cash paid back leaves its drawer, and its receipt
	// sequence numbers the refund (docs/receipts.md). Omitted: no drawer
	// records it, and the location's default sequence numbers it.
	RegisterID string `json:"register_id"`
	// A manager's or owner's access token (their own sign-in at the till)
	// approving a refund above the caller's refund_limit: the refund stays
	// the caller's and records the approver as approved_by. Not needed
	// within the limit, and then not recorded.
	ApprovalToken string `json:"approval_token"`
	// Approver is who approval_token signs in (set by the API, never read
	// from the body).
	Approver *Actor `json:"-"`
}

// OrderFilter selects orders.
type OrderFilter struct {
	Status        string
	Number        string // the order number, exact (a receipt's barcode)
	LocationID    *string
	CustomerID    *string
	CreatedAfter  *time.Time
	CreatedBefore *time.Time
	Page
}

// OrderService takes and settles orders. Errors: ENotFound, EInvalid,
// EConflict (a transition the state forbids), EForbidden (a manual discount
// above the role's limit, CheckDiscount; a cashier's refunds on one order
// above the refund limit, CheckRefund).
type OrderService interface {
	FindOrders(ctx context.Context, f OrderFilter) (List[Order], error)
	FindOrderByID(ctx context.Context, id string) (*Order, error)
	CreateOrder(ctx context.Context, in *OrderCreate) (*Order, error)
	// QuoteOrder prices in exactly as CreateOrder would and stores
	// nothing: the till's running total (id and number are empty).
	QuoteOrder(ctx context.Context, in *OrderCreate) (*Order, error)
	UpdateOrder(ctx context.Context, id string, in *OrderUpdate) (*Order, error)
	CompleteOrder(ctx context.Context, id string) (*Order, error)
	RefundOrder(ctx context.Context, id string, in *RefundRequest) (*Order, error)
}
