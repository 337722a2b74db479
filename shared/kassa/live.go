package kassa

import (
	"context"
	"strconv"
	"strings"
)

// Live updates for terminals (GET /api/v1/ws, docs/live.md): every
// change a node stores — its own, and those it applied from the other
// node — is a LiveChange at a LivePosition of that node's log.

// EventLiveChange is published on the node's live bus (a bus of its own,
// not the events' bus) after a unit of work that stored changes (its own
// or applied by sync) committed, once per org. It is only a wake-up for
// the live feeds, which read the durable log.
const EventLiveChange = "live.change"

// Live topics a terminal subscribes to, each needing its own scope.
const (
	TopicOrders    = "orders"
	TopicStock     = "stock"
	TopicCatalog   = "catalog"
	TopicCustomers = "customers"
)

// LiveTopics lists the topics in their documented order.
var LiveTopics = []string{TopicOrders, TopicStock, TopicCatalog, TopicCustomers}

var topicScope = map[string]Scope{
	TopicOrders: ScopeOrdersRead, TopicStock: ScopeInventoryRead,
	TopicCatalog: ScopeCatalogRead, TopicCustomers: ScopeCustomersRead,
}

// TopicScope returns the scope a topic needs; ok is false for an unknown
// topic.
func TopicScope(topic string) (Scope, bool) {
	s, ok := topicScope[topic]
	return s, ok
}

// LiveScopes are the scopes of which a WebSocket client needs one.
var LiveScopes = []Scope{ScopeOrdersRead, ScopeCatalogRead, ScopeInventoryRead, ScopeCustomersRead}

// liveEntities maps a stored entity to its topic and the entity a
// terminal sees: a stock movement changes its stock level.
var liveEntities = map[string][2]string{
	"order":          {TopicOrders, "order"},
	"stock_level":    {TopicStock, "stock_level"},
	"stock_movement": {TopicStock, "stock_level"},
	"product":        {TopicCatalog, "product"},
	"category":       {TopicCatalog, "category"},
	"modifier_group": {TopicCatalog, "modifier_group"},
	"price_list":     {TopicCatalog, "price_list"},
	"customer":       {TopicCustomers, "customer"},
}

// LiveTopic returns the topic of a stored entity and the entity a
// terminal sees; ok is false for entities no topic carries.
func LiveTopic(entity string) (topic, shown string, ok bool) {
	t, ok := liveEntities[entity]
	return t[0], t[1], ok
}

// LiveEntities lists the stored entities some topic carries.
func LiveEntities() []string {
	out := make([]string, 0, len(liveEntities))
	for e := range liveEntities {
		out = append(out, e)
	}
	return out
}

// LivePosition is a place in a node's log of changes: its own changes
// (the outbox's seq) and, at an edge, those it applied from the hub (the
// applied log's seq). Its text form "<own>.<applied>" is opaque to clients.
type LivePosition struct {
	Own, Applied int64
}

func (p LivePosition) String() string {
	return strconv.FormatInt(p.Own, 10) + "." + strconv.FormatInt(p.Applied, 10)
}

// After reports whether p is past q in either part.
func (p LivePosition) After(q LivePosition) bool { return p.Own > q.Own || p.Applied > q.Applied }

// Max is the later of p and q in each part.
func (p LivePosition) Max(q LivePosition) LivePosition {
	return LivePosition{max(p.Own, q.Own), max(p.Applied, q.Applied)}
}

// ParseLivePosition reads a position's text form.
func ParseLivePosition(s string) (LivePosition, error) {
	own, applied, ok := strings.Cut(s, ".")
	o, err1 := strconv.ParseInt(own, 10, 64)
	a, err2 := strconv.ParseInt(applied, 10, 64)
	if !ok || err1 != nil || err2 != nil || o < 0 || a < 0 {
		return LivePosition{}, Errorf(EBadRequest, "after must be a position from a change or subscribed message")
	}
	return LivePosition{o, a}, nil
}

// LiveChange is one stored change of an entity some topic carries.
type LiveChange struct {
	Position   LivePosition
	LocationID string // "" for org-wide entities
	Entity     string // as stored: order, stock_movement, product…
	EntityID   string
	Op         string // insert, update, delete
	// ProductID is the product of a stock movement or level (a level is
	// the location's and the product's).
	ProductID string
}

// LiveService reads a node's log of changes for the live feeds.
type LiveService interface {
	// LiveChanges returns the actor's org's changes after pos, in log
	// order (own and applied interleaved by part), at most limit.
	LiveChanges(ctx context.Context, after LivePosition, limit int) ([]LiveChange, error)
	// LiveHead is the position of the newest change of the log.
	LiveHead(ctx context.Context) (LivePosition, error)
	// FindStockLevel returns the level of a product at a location.
	FindStockLevel(ctx context.Context, locationID, productID string) (*StockLevel, error)
}
