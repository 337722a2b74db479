-- Kassa schema, part 4: replication state.
--
-- field_hlc holds, for rows merged field by field (last writer wins), the
-- stamp of each field's last write as "<hlc>@<origin>", so that a remote
-- change sets only the fields it wins.

ALTER TABLE orgs ADD COLUMN field_hlc TEXT NOT NULL DEFAULT '{}';
ALTER TABLE users ADD COLUMN field_hlc TEXT NOT NULL DEFAULT '{}';
ALTER TABLE locations ADD COLUMN field_hlc TEXT NOT NULL DEFAULT '{}';
ALTER TABLE categories ADD COLUMN field_hlc TEXT NOT NULL DEFAULT '{}';
ALTER TABLE products ADD COLUMN field_hlc TEXT NOT NULL DEFAULT '{}';
ALTER TABLE modifier_groups ADD COLUMN field_hlc TEXT NOT NULL DEFAULT '{}';
ALTER TABLE price_lists ADD COLUMN field_hlc TEXT NOT NULL DEFAULT '{}';
ALTER TABLE customers ADD COLUMN field_hlc TEXT NOT NULL DEFAULT '{}';
ALTER TABLE loyalty_programs ADD COLUMN field_hlc TEXT NOT NULL DEFAULT '{}';
ALTER TABLE loyalty_accounts ADD COLUMN field_hlc TEXT NOT NULL DEFAULT '{}';
ALTER TABLE stock_levels ADD COLUMN field_hlc TEXT NOT NULL DEFAULT '{}';
ALTER TABLE transfers ADD COLUMN field_hlc TEXT NOT NULL DEFAULT '{}';
ALTER TABLE orders ADD COLUMN field_hlc TEXT NOT NULL DEFAULT '{}';
ALTER TABLE payments ADD COLUMN field_hlc TEXT NOT NULL DEFAULT '{}';

-- applied: the change records from other nodes this node has applied, so
-- that a replay or a duplicate delivery is a no-op.
CREATE TABLE applied_changes (
  id         TEXT PRIMARY KEY,
  origin     TEXT NOT NULL,
  applied_at TEXT NOT NULL
) STRICT;

-- conflicts the merge detected: both sides' values, for ops.
CREATE TABLE sync_conflicts (
  id          TEXT PRIMARY KEY,
  org_id      TEXT NOT NULL,
  location_id TEXT,
  kind        TEXT NOT NULL, -- oversold | overdrawn | cancel_lost | clock_clamped
  entity      TEXT NOT NULL,
  entity_id   TEXT NOT NULL,
  local       TEXT NOT NULL, -- JSON
  remote      TEXT NOT NULL, -- JSON
  detected_at TEXT NOT NULL
) STRICT;
CREATE INDEX sync_conflicts_org ON sync_conflicts(org_id, id);

-- hub: enrolment tokens, single use, expiring; only their hash is kept.
CREATE TABLE enrolment_tokens (
  token_hash  TEXT PRIMARY KEY,
  org_id      TEXT NOT NULL REFERENCES orgs(id),
  location_id TEXT NOT NULL REFERENCES locations(id),
  created_by  TEXT,
  expires_at  TEXT NOT NULL,
  used_at     TEXT,
  used_by     TEXT
) STRICT;

-- hub: enrolled edges and the hash of their link secret.
CREATE TABLE sync_nodes (
  node_id     TEXT PRIMARY KEY,
  org_id      TEXT NOT NULL REFERENCES orgs(id),
  location_id TEXT NOT NULL REFERENCES locations(id),
  secret_hash TEXT NOT NULL,
  enrolled_at TEXT NOT NULL,
  revoked_at  TEXT
) STRICT;
CREATE INDEX sync_nodes_org ON sync_nodes(org_id);
