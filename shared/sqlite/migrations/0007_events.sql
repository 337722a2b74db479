-- Kassa schema, part 7: the durable event log.
--
-- Business events (kassa.EventTypes) are appended here in the same unit of
-- work as the change that caused them, so a committed change always has
-- its events and a rolled-back one has none. Rows are append-only. seq is
-- this node's own log position, for readers that keep a saved position
-- (webhooks, automations); it never travels. id is the event's stable id
-- (UUIDv7), unique: an edge's event replicated to the hub any number of
-- times is in the hub's log once. origin is the node where it happened,
-- occurred_at when (the edge's clock for an edge's event). data is the
-- resource in its API shape, as JSON.
CREATE TABLE events (
  seq         INTEGER PRIMARY KEY AUTOINCREMENT,
  id          TEXT NOT NULL UNIQUE,
  org_id      TEXT NOT NULL,
  location_id TEXT,
  type        TEXT NOT NULL,
  data        TEXT NOT NULL,
  occurred_at TEXT NOT NULL,
  created_at  TEXT NOT NULL,
  updated_at  TEXT NOT NULL,
  hlc         TEXT NOT NULL,
  origin      TEXT NOT NULL
) STRICT;
CREATE INDEX events_org ON events(org_id, seq);
