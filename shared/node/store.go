package node

import (
	"context"
	"log/slog"
	"path/filepath"
	"strings"

	"kassa.dev/shared/kassa"
	"kassa.dev/shared/sqlite"
	"kassa.dev/sync/change"
	"kassa.dev/sync/hlc"
)

// What the demo seed, tools and tests need of the store beyond the
// services: narrow methods, so that nothing outside this package holds
// the *sqlite.DB (Node.db).

// WriterStats are the store's write-loop counters (see /metrics).
type WriterStats = sqlite.WriterStats

// WriterStats returns the store's write-loop counters so far.
func (n *Node) WriterStats() WriterStats { return n.db.WriterStats() }

// NewID returns a new id as the store makes them.
func (n *Node) NewID() string { return n.db.NewID() }

// Stamp returns the node's next hybrid logical clock timestamp.
func (n *Node) Stamp() hlc.Timestamp { return n.db.Clock.Now() }

// ApplyRemote applies change records made at other nodes, as sync applies
// what it pulls (idempotent by change id, merged by the rules of
// DESIGN.md "Sync"), in one unit of work. The kitchen ticket job records
// what the changes moved. Errors: a malformed change or an unknown entity
// fails the whole batch.
func (n *Node) ApplyRemote(ctx context.Context, changes []change.Change) error {
	_, err := n.db.Apply(ctx, changes, false)
	return err
}

// Changes returns the change records of one row in the outbox, in write
// order; an empty id returns every record of the entity.
func (n *Node) Changes(ctx context.Context, entity, id string) ([]change.Change, error) {
	return n.db.Changes(ctx, entity, id)
}

// OutboxLen counts every change record in the outbox, sent or not
// (PendingUp counts the unsent ones).
func (n *Node) OutboxLen(ctx context.Context) (int, error) {
	return n.db.OutboxLen(ctx, sqlite.LogFilter{})
}

// UserByEmail returns the user with that e-mail address on this node. It
// reads across orgs: for the demo seed and tools, never for a request.
// Errors: ENotFound.
func (n *Node) UserByEmail(ctx context.Context, email string) (*kassa.User, error) {
	return n.db.UserByEmail(ctx, email)
}

// RecordTicket appends a kitchen ticket event of type typ for an order,
// as a unit of work of its own (ticket.created is skipped when the order
// has one).
func (n *Node) RecordTicket(ctx context.Context, orgID, orderID, typ string) error {
	return n.db.RecordTicket(ctx, orgID, orderID, typ)
}

// SyncTicket brings an order's kitchen ticket up to date after sync
// applied changes of it, as the ticket job does, in a unit of work of its
// own.
func (n *Node) SyncTicket(ctx context.Context, orgID, orderID string) error {
	return n.db.SyncTicket(ctx, orgID, orderID)
}

// TimeFormat is how the store writes times (UTC, milliseconds).
const TimeFormat = sqlite.TimeFormat

// CreateStore creates the store file at path with the current schema (or
// migrates it) and closes it again: for baselines and tools that then
// write it with plain SQL.
func CreateStore(ctx context.Context, path string) error {
	db, err := sqlite.Open(ctx, path, sqlite.Options{Log: slog.New(slog.DiscardHandler)})
	if err != nil {
		return err
	}
	return db.Close()
}

// LoggedEvent is an event of a store's durable log, with its position
// there (per node) and the node it happened at.
type LoggedEvent = sqlite.LoggedEvent

// ReadEventLog opens the store in dataDir and returns its node id and up
// to limit events of its log after position after (0: from the start).
// The node that owns the store may keep running: this starts no
// background work and only reads (as hub verify does).
func ReadEventLog(ctx context.Context, dataDir string, after int64, limit int) (string, []LoggedEvent, error) {
	db, err := OpenStoreAt(ctx, dataDir)
	if err != nil {
		return "", nil, err
	}
	defer db.Close()
	es, err := db.EventsAfter(ctx, after, limit)
	return db.NodeID, es, err
}

// OpenStoreAt opens a node's store beside the node, quietly: at is the
// node's data folder (its SQLite file, kassa.db) or, for a hub on
// PostgreSQL, the store's postgres:// URL (what --store was given).
func OpenStoreAt(ctx context.Context, at string) (*sqlite.DB, error) {
	path := at
	if !strings.Contains(at, "://") {
		path = filepath.Join(at, "kassa.db")
	}
	return sqlite.Open(ctx, path, sqlite.Options{Log: slog.New(slog.DiscardHandler)})
}

// ReadChanges opens the store in dataDir and returns the change records
// of one row in write order, as its node wrote them (what an edge pushes);
// like ReadEventLog it only reads, beside the running node.
func ReadChanges(ctx context.Context, dataDir, entity, entityID string) ([]change.Change, error) {
	db, err := OpenStoreAt(ctx, dataDir)
	if err != nil {
		return nil, err
	}
	defer db.Close()
	return db.Changes(ctx, entity, entityID)
}

// SeedEdges is EnrolEdges for a hub run as a process: it opens the store
// of the hub in dataDir (which may be running; only the store, no link)
// and records n edges that can never link, for the browser test of the
// ops page with many stores. It returns their node ids.
func SeedEdges(ctx context.Context, dataDir, orgID, locationID string, n int) ([]string, error) {
	db, err := OpenStoreAt(ctx, dataDir)
	if err != nil {
		return nil, err
	}
	defer db.Close()
	return db.EnrolNodes(ctx, orgID, locationID, n)
}

// IngestFrom applies changes at the hub as if the enrolled edge node of
// org and location had pushed them over its link: admitted as untrusted
// input, refused ones quarantined (for tests and tools that play an
// edge). It returns how many were quarantined.
func (n *Node) IngestFrom(ctx context.Context, org, location, node string, cs []change.Change) (int, error) {
	_, q, err := n.db.Ingest(ctx, sqlite.EdgeScope{OrgID: org, LocationID: location, NodeID: node}, cs)
	return q, err
}

// EnrolEdges enrols count edges at a location of org directly in the
// store, with no usable link secret (tests that need a hub with many
// edges), and returns their node ids.
func (n *Node) EnrolEdges(ctx context.Context, org, location string, count int) ([]string, error) {
	return n.db.EnrolNodes(ctx, org, location, count)
}
