package kassa

import (
	"context"
	"time"
)

// StockLevel is a product's stock at a location. OnHand is the sum of the
// movements; ReorderPoint is set by staff.
type StockLevel struct {
	ID           string    `json:"id"`
	OrgID        string    `json:"org_id"`
	ProductID    string    `json:"product_id"`
	LocationID   string    `json:"location_id"`
	OnHand       int64     `json:"on_hand"`       // Units at the location (the sum of its movements).
	ReorderPoint int64     `json:"reorder_point"` // At or below this on_hand the level is low stock; 0: never low.
	Reserved     int64     `json:"reserved"`      // Units set aside for open (or expired, not yet refunded) lay-bys: already out of on_hand, not sellable, still in the store.
	UpdatedAt    time.Time `json:"updated_at"`
}

// Movement reasons. Adjustments take the first seven; the others are
// written by sales, refunds and transfers.
const (
	ReasonReceived    = "received"
	ReasonCount       = "count"
	ReasonDamaged     = "damaged"
	ReasonTheft       = "theft"
	ReasonWastage     = "wastage"
	ReasonReturn      = "return"
	ReasonCorrection  = "correction"
	ReasonSale        = "sale"
	ReasonRefund      = "refund"
	ReasonTransferOut = "transfer_out"
	ReasonTransferIn  = "transfer_in"
)

// AdjustReasons are the reason codes POST /inventory/stock/adjust accepts.
var AdjustReasons = []string{ReasonReceived, ReasonCount, ReasonDamaged, ReasonTheft, ReasonWastage, ReasonReturn, ReasonCorrection}

// Movement is one append-only change of on-hand stock.
type Movement struct {
	ID         string    `json:"id"`
	OrgID      string    `json:"org_id"`
	ProductID  string    `json:"product_id"`
	LocationID string    `json:"location_id"`
	Delta      int64     `json:"delta"`                                // The signed change of on-hand (negative: units left).
	Reason     string    `json:"reason" openapi:"enum=MovementReason"` // Why stock moved: an adjustment reason, or sale, refund, transfer_out, transfer_in.
	RefType    string    `json:"ref_type" openapi:"enum=RefType"`      // order, refund, transfer, adjustment
	RefID      *string   `json:"ref_id"`                               // The id of the order, refund, transfer or adjustment that caused it; null for an adjustment without one.
	Actor      *string   `json:"actor"`                                // user or OAuth client id
	Note       string    `json:"note"`                                 // Free text given with an adjustment.
	Origin     string    `json:"origin"`                               // node that wrote it
	CreatedAt  time.Time `json:"created_at"`
}

// StockAdjust is the body of POST /inventory/stock/adjust. For reason
// "count", Quantity is the counted on-hand and the movement is the
// difference; for the others it is the signed delta. ReorderPoint, when
// given, is set too.
type StockAdjust struct {
	LocationID   string `json:"location_id" openapi:"required"`
	ProductID    string `json:"product_id" openapi:"required"`
	Reason       string `json:"reason" openapi:"required,enum=AdjustReason"` // The reason code; it sets how quantity is read.
	Quantity     int64  `json:"quantity" openapi:"required"`                 // Units; its meaning depends on reason (see the operation).
	Note         string `json:"note"`                                        // Free text kept with the movement.
	ReorderPoint *int64 `json:"reorder_point"`                               // Also set the level's reorder point (0 or more).
}

// StockFilter selects stock levels.
type StockFilter struct {
	LocationID *string
	ProductID  *string
	LowOnly    bool // at or below the reorder point
	Page
}

// MovementFilter selects movements.
type MovementFilter struct {
	LocationID *string
	ProductID  *string
	RefType    string
	Page
}

// TransferLine is one product and quantity of a transfer.
type TransferLine struct {
	ProductID string `json:"product_id" openapi:"required"`
	Quantity  int64  `json:"quantity" openapi:"required"`
}

// Transfer states.
const (
	TransferInTransit = "in_transit"
	TransferReceived  = "received"
	TransferCancelled = "cancelled"
)

// Transfer moves stock between two locations of the org.
type Transfer struct {
	ID             string         `json:"id"`
	OrgID          string         `json:"org_id"`
	FromLocationID string         `json:"from_location_id"`                     // The location the stock leaves.
	ToLocationID   string         `json:"to_location_id"`                       // The location the stock enters.
	Status         string         `json:"status" openapi:"enum=TransferStatus"` // The transfer's state.
	Lines          []TransferLine `json:"lines"`
	Notes          string         `json:"notes"`
	ReceivedAt     *time.Time     `json:"received_at"`  // When it was received; null until then.
	CancelledAt    *time.Time     `json:"cancelled_at"` // When it was cancelled; null unless it was.
	CreatedAt      time.Time      `json:"created_at"`
	UpdatedAt      time.Time      `json:"updated_at"`
}

// TransferCreate is the body of POST /inventory/transfers.
type TransferCreate struct {
	FromLocationID string         `json:"from_location_id" openapi:"required"`
	ToLocationID   string         `json:"to_location_id" openapi:"required"`
	Lines          []TransferLine `json:"lines" openapi:"required"`
	Notes          string         `json:"notes"`
}

// InventoryService keeps stock. Errors: ENotFound, EInvalid, EConflict (a
// transfer that is not in transit, negative stock when the org forbids it).
type InventoryService interface {
	FindStock(ctx context.Context, f StockFilter) (List[StockLevel], error)
	Adjust(ctx context.Context, in *StockAdjust) (*StockLevel, error)
	FindMovements(ctx context.Context, f MovementFilter) (List[Movement], error)
	FindTransfers(ctx context.Context, p Page) (List[Transfer], error)
	FindTransferByID(ctx context.Context, id string) (*Transfer, error)
	CreateTransfer(ctx context.Context, in *TransferCreate) (*Transfer, error)
	ReceiveTransfer(ctx context.Context, id string) (*Transfer, error)
	CancelTransfer(ctx context.Context, id string) (*Transfer, error)
}
