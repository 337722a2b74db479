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
