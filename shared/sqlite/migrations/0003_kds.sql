-- Kassa schema, part 3: the kitchen display.
--
-- kds_events is node-local (never replicated): the durable feed of ticket
-- events that GET /kds/stream serves. A row is written in the same unit of
-- work as the order change that causes it, so seq (the SSE id) increases
-- with commit order, has no holes a client could skip, and survives
-- restarts (AUTOINCREMENT never reuses a value). data is the whole ticket
-- as it stood after the change, its lines each naming their station;
-- stations lists the stations with lines, for cheap filtering.

CREATE TABLE kds_events (
  seq         INTEGER PRIMARY KEY AUTOINCREMENT,
  org_id      TEXT NOT NULL,
  location_id TEXT NOT NULL,
  order_id    TEXT NOT NULL,
  type        TEXT NOT NULL, -- ticket.created | ticket.updated | ticket.bumped | ticket.recalled
  stations    TEXT NOT NULL DEFAULT '[]',
  data        TEXT NOT NULL,
  created_at  TEXT NOT NULL
) STRICT;
CREATE INDEX kds_events_org ON kds_events(org_id, seq);
CREATE INDEX kds_events_recent ON kds_events(org_id, created_at);
CREATE INDEX kds_events_order ON kds_events(order_id, type);

-- The station a product's lines go to: the product's, else its category's,
-- else "kitchen". Replicated with the rest of the row.
ALTER TABLE categories ADD COLUMN station TEXT;
ALTER TABLE products ADD COLUMN station TEXT;
