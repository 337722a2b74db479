// Package sqlite implements Kassa's services on SQLite.
//
// A DB on SQLite has one writer connection (every write is one IMMEDIATE
// transaction) and a pool of read-only connections, in WAL mode with
// synchronous=FULL so that a committed write survives a power cut; a hub's
// DB on PostgreSQL runs several write loops (engine.Options.Writers).
// Migrations are embedded and
// applied at Open. Every write of a replicated row goes through Tx.Insert or
// Tx.Update, which also write the row's change record to the outbox in the
// same transaction.
package sqlite

import (
	"context"
	"embed"
	"io/fs"

	"kassa.dev/shared/sqlite/engine"
)

// The store's engine is package engine (shared/sqlite/engine): the writer,
// the unit of work, change capture, the outbox and event log, apply,
// admission, digests, formats and the registry. This file names what the
// nouns' files use of it by the names they had when it was part of this
// package, so that a noun's code reads as before (docs/store.md).

//go:embed migrations/*.sql
var migrationFS embed.FS

func init() { engine.Migrations = migrationFS }

//go:embed pgmigrations/*.sql
var postgresFS embed.FS

// PostgresMigrations are the nouns' schema on PostgreSQL
// (pgmigrations/*.sql, numbered on their own: docs/postgres.md), for the
// hub's store on PostgreSQL to hand to pg.Migrate after the backend's own.
// TestThePostgreSQLSchemaIsTheSQLiteSchemasTwin keeps them the twin of
// migrations/*.sql.
var PostgresMigrations fs.FS = postgresFS

// DB is an open Kassa store: the engine's store, with the nouns' methods.
type DB struct{ *engine.DB }

// Options configure Open. Zero values take defaults.
type Options = engine.Options

// Open opens (creating if needed) the store at path, applies migrations and
// loads or creates the node id.
func Open(ctx context.Context, path string, o Options) (*DB, error) {
	e, err := engine.Open(ctx, path, o)
	if err != nil {
		return nil, err
	}
	return &DB{e}, nil
}

// NewIdempotencyStore returns the store of idempotency keys of db.
func NewIdempotencyStore(db *DB) *IdempotencyStore { return engine.NewIdempotencyStore(db.DB) }

// storeOf is the store of an engine hook's engine.DB.
func storeOf(e *engine.DB) *DB { return &DB{e} }

// batchState is what noun n keeps for one apply batch in state.
func batchState[T any](state map[*noun]any, n *noun) *T { return engine.BatchState[T](state, n) }

type (
	Schema           = engine.Schema
	WriterStats      = engine.WriterStats
	ApplyResult      = engine.ApplyResult
	IdempotencyStore = engine.IdempotencyStore
	LogEntry         = engine.LogEntry
	LogFilter        = engine.LogFilter
	Scope            = engine.Scope
	EdgeScope        = engine.EdgeScope
	LoggedEvent      = engine.LoggedEvent
	Refusal          = engine.Refusal
	Refused          = engine.Refused
	Tx               = engine.Tx
	admitter         = engine.Admitter
	applier          = engine.Applier
	applyOpts        = engine.ApplyOpts
	batchUser        = engine.BatchUser
	edgeRule         = engine.EdgeRule
	entity           = engine.Entity
	eventSubject     = engine.EventSubject
	formatStep       = engine.FormatStep
	latticeLoss      = engine.LatticeLoss
	noun             = engine.Noun
	querier          = engine.Querier
	ref              = engine.Ref
	uniqueKey        = engine.UniqueKey
)

const (
	MetaPullCursor        = engine.MetaPullCursor
	DefaultWriterPriority = engine.DefaultWriterPriority
	RefusedActor          = engine.RefusedActor
	RefusedEntity         = engine.RefusedEntity
	RefusedField          = engine.RefusedField
	RefusedReference      = engine.RefusedReference
	RefusedScope          = engine.RefusedScope
	RefusedValue          = engine.RefusedValue
	TimeFormat            = engine.TimeFormat
	driverName            = engine.DriverName
	eitherEnd             = engine.EitherEnd
	locationRows          = engine.LocationRows
	mergeAppend           = engine.MergeAppend
	metaResyncOwn         = engine.MetaResyncOwn
	orgRows               = engine.OrgRows
	ownLocation           = engine.OwnLocation
	parentLocation        = engine.ParentLocation
)

var (
	RefusalCodes          = engine.RefusalCodes
	CanRaiseThread        = engine.CanRaiseThread
	SchemaOf              = engine.SchemaOf
	actorID               = engine.ActorID
	codeIn                = engine.CodeIn
	columnValue           = engine.ColumnValue
	decodeJSON            = engine.DecodeJSON
	fieldText             = engine.FieldText
	fmtTime               = engine.FmtTime
	hashSecret            = engine.HashSecret
	inSnapshot            = engine.InSnapshot
	isForeignKeyViolation = engine.IsForeignKeyViolation
	isUniqueViolation     = engine.IsUniqueViolation
	nounOf                = engine.NounOf
	nullString            = engine.NullString
	onEventLogged         = engine.OnEventLogged
	ownerOnly             = engine.OwnerOnly
	parseTime             = engine.ParseTime
	placeholders          = engine.Placeholders
	quarantineReason      = engine.QuarantineReason
	randomHex             = engine.RandomHex
	refuse                = engine.Refuse
	refusedOf             = engine.RefusedOf
	register              = engine.Register
	retire                = engine.Retire
	sameStored            = engine.SameStored
	ErrOutOfOrder         = engine.ErrOutOfOrder
	ErrUnknownEdge        = engine.ErrUnknownEdge
	EnrolmentChecked      = engine.EnrolmentChecked
	catalogWrite          = engine.CatalogWrite
	inventoryWrite        = engine.InventoryWrite
	kassaKind             = engine.KassaKind
	loyaltyWrite          = engine.LoyaltyWrite
	nouns                 = engine.Nouns
	paymentsWrite         = engine.PaymentsWrite
	saleWrite             = engine.SaleWrite
)
