package kassa

import (
	"context"
	"time"
)

// Ticket event types of the kitchen display feed (GET /kds/stream).
const (
	TicketCreated  = "ticket.created"  // a new order reached the kitchen
	TicketUpdated  = "ticket.updated"  // notes or order status changed (a cancel voids the ticket)
	TicketBumped   = "ticket.bumped"   // kitchen_status moved forward
	TicketRecalled = "ticket.recalled" // kitchen_status moved back
	// TicketVoided: the order was cancelled or fully refunded before it
	// was served; the ticket (void true) leaves every screen.
	TicketVoided = "ticket.voided"
)

// EventKDSTicket is published on the in-process bus after a unit of work
// that wrote ticket events committed. It is only a wake-up for the KDS
// streams (which read the durable kds_events table); Data is the newest
// seq. It is never delivered to webhooks.
const EventKDSTicket = "kds.ticket"

// StationDefault is the station of a line whose product and category name
// none.
const StationDefault = "kitchen"

// kitchenRank orders the kitchen states: bumps move up, recalls down.
var kitchenRank = map[string]int{KitchenNew: 0, KitchenInProgress: 1, KitchenReady: 2, KitchenServed: 3}

// KitchenStates lists the kitchen states in their order.
var KitchenStates = []string{KitchenNew, KitchenInProgress, KitchenReady, KitchenServed}

// KitchenRank returns the position of a kitchen state (new 0 … served 3),
// or -1 for an unknown one.
func KitchenRank(s string) int {
	if r, ok := kitchenRank[s]; ok {
		return r
	}
	return -1
}

// ValidStation reports whether s can name a station: 1-32 lower-case
// letters, digits, '-' or '_', starting with a letter or digit.
func ValidStation(s string) bool {
	if len(s) == 0 || len(s) > 32 {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c >= 'a' && c <= 'z', c >= '0' && c <= '9':
		case (c == '-' || c == '_') && i > 0:
		default:
			return false
		}
	}
	return true
}

// checkStation validates an optional station field of a catalog body.
func checkStation(v *Validation, s *string) {
	if s != nil {
		v.Check(ValidStation(*s), "station", "must be 1-32 lower-case letters, digits, - or _ (e.g. kitchen, bar)")
	}
}

// Ticket is an order as the kitchen sees it. Its id is the order's id.
type Ticket struct {
	ID         string `json:"id"` // the order id
	LocationID string `json:"location_id"`
	Number     string `json:"number"` // The order number.
	// TicketNumber is the number the screen shows (#12): 1, 2, 3… per
	// location and local business day, given by the node that made the
	// ticket, whichever node took the order.
	TicketNumber int64 `json:"ticket_number"`
	// Void: the order was cancelled or fully refunded before it was
	// served; the ticket is off the board.
	Void          bool         `json:"void"`
	Channel       string       `json:"channel" openapi:"enum=Channel"`
	Status        string       `json:"status" openapi:"enum=OrderStatus"` // the order's status; cancelled voids the ticket
	KitchenStatus string       `json:"kitchen_status" openapi:"enum=KitchenStatus"`
	Notes         string       `json:"notes"`
	Lines         []TicketLine `json:"lines"`
	Stations      []string     `json:"stations"`   // stations with lines on this ticket
	OrderedAt     time.Time    `json:"ordered_at"` // when the sale happened: the ticket timer starts here
	UpdatedAt     time.Time    `json:"updated_at"`
}

// TicketLine is one order line on a ticket.
type TicketLine struct {
	ID        string   `json:"id"`
	ProductID string   `json:"product_id"`
	Name      string   `json:"name"`
	Quantity  int64    `json:"quantity"`
	Modifiers []string `json:"modifiers"` // names of the chosen options
	Station   string   `json:"station"`
}

// VoidTicket reports whether an order of status and kitchen status
// voids its ticket: cancelled, or refunded in full, before it was served.
func VoidTicket(status, kitchenStatus string) bool {
	return (status == OrderCancelled || status == OrderRefunded) && kitchenStatus != KitchenServed
}

// ForStation returns a copy of t with only the lines of station; "" keeps
// every line.
func (t Ticket) ForStation(station string) Ticket {
	if station == "" {
		return t
	}
	lines := make([]TicketLine, 0, len(t.Lines))
	for _, l := range t.Lines {
		if l.Station == station {
			lines = append(lines, l)
		}
	}
	t.Lines = lines
	return t
}

// HasStation reports whether t has lines of station ("" matches any).
func (t *Ticket) HasStation(station string) bool {
	if station == "" {
		return true
	}
	for _, s := range t.Stations {
		if s == station {
			return true
		}
	}
	return false
}

// TicketEvent is one entry of a node's durable ticket feed. Seq increases
// by one per event at this node and survives restarts; it is the SSE id.
type TicketEvent struct {
	Seq        int64     `json:"seq"`
	Type       string    `json:"type" openapi:"enum=TicketEventType"`
	OrgID      string    `json:"-"`
	LocationID string    `json:"location_id"`
	Ticket     Ticket    `json:"ticket"`
	CreatedAt  time.Time `json:"created_at"`
}

// TicketEventFilter selects ticket events of the caller's org after a seq.
type TicketEventFilter struct {
	After      int64
	LocationID *string
	Station    string // "" for every station
	Limit      int    // 1-1000; 0 means 500
}

// TicketBoard is what a kitchen screen shows when it starts: the tickets
// still open in the kitchen and the last event id they are current at,
// from which the stream resumes.
type TicketBoard struct {
	LastEventID int64     `json:"last_event_id"` // Open GET /kds/stream after this event id to miss nothing.
	Stations    []string  `json:"stations"`      // stations in use in the catalog, for the picker
	Tickets     []Ticket  `json:"tickets"`       // Open tickets, oldest first.
	Now         time.Time `json:"now"`           // the server's clock, so screens can correct their timers
}

// TicketBoardFilter selects the tickets of a board.
type TicketBoardFilter struct {
	LocationID *string
	Station    string
	// KitchenStatuses lists the states to show; empty: new, in_progress and ready.
	KitchenStatuses []string
}

// TicketMove is the optional body of a bump or a recall: the kitchen state
// to move to; empty moves one step.
type TicketMove struct {
	KitchenStatus string `json:"kitchen_status" openapi:"enum=KitchenStatus"`
}

// Validate checks that a target kitchen state, if given, is one.
func (m *TicketMove) Validate() error {
	if m.KitchenStatus != "" && KitchenRank(m.KitchenStatus) < 0 {
		return InvalidField("kitchen_status", "must be one of new, in_progress, ready, served")
	}
	return nil
}

// KDSService serves the kitchen display. Errors: ENotFound (no such order
// in the org), EInvalid (a bad target state), EConflict (a cancelled order,
// or a move past the end or the wrong way).
type KDSService interface {
	// TicketEvents returns events after f.After in seq order, at most f.Limit.
	TicketEvents(ctx context.Context, f TicketEventFilter) ([]TicketEvent, error)
	// LastTicketSeq returns the newest seq of the caller's org at this node (0: none).
	LastTicketSeq(ctx context.Context) (int64, error)
	// TicketBoard returns the open tickets of the last 24 hours.
	TicketBoard(ctx context.Context, f TicketBoardFilter) (*TicketBoard, error)
	// BumpTicket moves an order's kitchen status forward.
	BumpTicket(ctx context.Context, orderID string, in *TicketMove) (*Ticket, error)
	// RecallTicket moves an order's kitchen status back.
	RecallTicket(ctx context.Context, orderID string, in *TicketMove) (*Ticket, error)
}
