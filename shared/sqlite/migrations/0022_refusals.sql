-- Kassa schema, part 22: a refused change is visible and fixable
-- (docs/trust.md, "A refused change at the store"). Neither table
-- replicates: the change-record format does not move.

-- Whose version a resolution took: edge (the store's records applied as
-- they were) or hub (the hub's rows sent to the store); NULL otherwise.
ALTER TABLE sync_conflicts ADD COLUMN taken TEXT;

-- At an edge: its changes the hub refused and holds in quarantine, as the
-- hub last said (a push's reply adds, every pull's reply replaces them).
CREATE TABLE sync_refusals (
  change_id  TEXT PRIMARY KEY,
  entity     TEXT NOT NULL,
  entity_id  TEXT NOT NULL,
  op         TEXT NOT NULL,
  status     TEXT NOT NULL DEFAULT '', -- the status the record set, if any
  fields     TEXT NOT NULL DEFAULT '[]', -- the names of the fields it carried, JSON
  reason     TEXT NOT NULL,
  error      TEXT NOT NULL,
  refused_at TEXT NOT NULL
) STRICT;
