package hubonly

import (
	"kassa.dev/shared/sqlite"
	"kassa.dev/shared/sqlite/engine/pg"
)

// The hub's store may be PostgreSQL (--store postgres://…): the backend
// registers in hub-only code, which the edge's binary never links
// (TestTheEdgeBinaryLinksNoHubOnlyCode), and inside shared/node, the one
// holder of the store (TestOnlyTheNodeImportsTheStore).
func init() { pg.Register(sqlite.PostgresMigrations) }

// PostgresDriver is the database/sql driver name of a hub's PostgreSQL
// store (its statements take SQLite's ? placeholders), for tests that
// read the store beside the API without importing it.
const PostgresDriver = pg.DriverName
