-- Kassa schema, part 15: the hub's last word on each edge, so that its
-- sync status is right after a restart (docs/ops.md). Node-local (never
-- replicated, no change records); the hub writes it in batches every few
-- seconds from its in-memory book (shared/node/edgebook.go), never once
-- per pull.
CREATE TABLE edge_reports (
  node_id         TEXT PRIMARY KEY,
  last_seen       TEXT NOT NULL,
  connected_since TEXT NOT NULL,
  cursor          INTEGER NOT NULL,  -- how far it pulled the hub's log
  pending_up      INTEGER NOT NULL,  -- as it last reported
  version         TEXT NOT NULL,     -- '' for an edge older than v0.6.0
  reported_at     TEXT,              -- its clock, when it made the figures
  last_verified   TEXT,
  verify_ok       INTEGER,           -- NULL before its first verification
  verify_differ   TEXT NOT NULL,     -- JSON array of table names
  lag_p50         REAL NOT NULL,
  lag_p99         REAL NOT NULL
) STRICT;

-- The hub's index outbox_scope (what an edge has yet to pull) is made by
-- sqlite.Open for a hub only (hubIndexes): at an edge it would cost every
-- sale's outbox rows an index write and serve no query.
