-- Kassa schema, part 26: kitchen ticket numbers.
--
-- Node-local (never replicated), as kds_events: the node that makes an
-- order's first kitchen ticket gives it a number, 1, 2, 3… per location
-- and local business day (the location's calendar date when the ticket was
-- made), so a kitchen tells tickets apart whichever node took the order
-- (order numbers are per node: a hub-made and an edge-made order both
-- ended in 00001). The number stays with the order's later tickets.

CREATE TABLE kds_ticket_counters (
  location_id TEXT NOT NULL,
  day         TEXT NOT NULL, -- YYYY-MM-DD in the location's time zone
  next        INTEGER NOT NULL,
  PRIMARY KEY (location_id, day)
) STRICT, WITHOUT ROWID;

CREATE TABLE kds_ticket_numbers (
  order_id TEXT PRIMARY KEY,
  day      TEXT NOT NULL,
  number   INTEGER NOT NULL
) STRICT, WITHOUT ROWID;
