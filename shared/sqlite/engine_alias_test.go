package sqlite

import "kassa.dev/shared/sqlite/engine"

// What this package's tests read of the engine's internals.
var (
	entEvent         = engine.EntEvent
	schemaAt         = engine.SchemaAt
	registered       = engine.Registered
	formatMigrations = engine.FormatMigrations
	fieldStamps      = engine.FieldStamps
	replicatedTables = engine.ReplicatedTables
	migrationNumber  = engine.MigrationNumber
	canonical        = engine.Canonical
	appendFields     = engine.AppendFields
	marshalFields    = engine.MarshalFields
)
