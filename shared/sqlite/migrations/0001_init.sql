-- Kassa schema, part 1: node metadata, tenants, staff, sessions, locations,
-- the catalog, the outbox and idempotency keys.
--
-- Replicated tables carry hlc (stamp of the row's last change) and origin
-- (node that made it). Timestamps are RFC 3339 UTC text with milliseconds,
-- JSON columns hold arrays or objects, booleans are 0/1.

CREATE TABLE node_meta (
  key   TEXT PRIMARY KEY,
  value TEXT NOT NULL
) STRICT;

CREATE TABLE orgs (
  id         TEXT PRIMARY KEY,
  name       TEXT NOT NULL,
  currency   TEXT NOT NULL,
  settings   TEXT NOT NULL DEFAULT '{}',
  created_at TEXT NOT NULL,
  updated_at TEXT NOT NULL,
  hlc        TEXT NOT NULL,
  origin     TEXT NOT NULL
) STRICT;
CREATE UNIQUE INDEX orgs_name ON orgs(name);

CREATE TABLE users (
  id            TEXT PRIMARY KEY,
  org_id        TEXT NOT NULL REFERENCES orgs(id),
  email         TEXT NOT NULL,
  name          TEXT NOT NULL DEFAULT '',
  role          TEXT NOT NULL,
  password_hash TEXT NOT NULL,
  is_active     INTEGER NOT NULL DEFAULT 1,
  created_at    TEXT NOT NULL,
  updated_at    TEXT NOT NULL,
  hlc           TEXT NOT NULL,
  origin        TEXT NOT NULL
) STRICT;
CREATE UNIQUE INDEX users_email ON users(email);
CREATE INDEX users_org ON users(org_id, id);

-- sessions are node-local: a login at the edge is a session of the edge.
CREATE TABLE sessions (
  id          TEXT PRIMARY KEY,
  org_id      TEXT NOT NULL,
  user_id     TEXT NOT NULL REFERENCES users(id),
  refresh_jti TEXT NOT NULL,
  created_at  TEXT NOT NULL,
  expires_at  TEXT NOT NULL,
  revoked_at  TEXT
) STRICT;
CREATE INDEX sessions_user ON sessions(user_id);

CREATE TABLE locations (
  id         TEXT PRIMARY KEY,
  org_id     TEXT NOT NULL REFERENCES orgs(id),
  name       TEXT NOT NULL,
  timezone   TEXT NOT NULL,
  address    TEXT NOT NULL DEFAULT '',
  currency   TEXT NOT NULL,
  created_at TEXT NOT NULL,
  updated_at TEXT NOT NULL,
  hlc        TEXT NOT NULL,
  origin     TEXT NOT NULL
) STRICT;
CREATE INDEX locations_org ON locations(org_id, id);

CREATE TABLE categories (
  id          TEXT PRIMARY KEY,
  org_id      TEXT NOT NULL REFERENCES orgs(id),
  name        TEXT NOT NULL,
  description TEXT,
  parent_id   TEXT,
  sort_order  INTEGER NOT NULL DEFAULT 0,
  is_active   INTEGER NOT NULL DEFAULT 1,
  created_at  TEXT NOT NULL,
  updated_at  TEXT NOT NULL,
  hlc         TEXT NOT NULL,
  origin      TEXT NOT NULL
) STRICT;
CREATE INDEX categories_org ON categories(org_id, id);

CREATE TABLE products (
  id                 TEXT PRIMARY KEY,
  org_id             TEXT NOT NULL REFERENCES orgs(id),
  name               TEXT NOT NULL,
  description        TEXT,
  sku                TEXT NOT NULL,
  barcodes           TEXT NOT NULL DEFAULT '[]',
  base_price         INTEGER NOT NULL,
  category_id        TEXT,
  tags               TEXT NOT NULL DEFAULT '[]',
  is_active          INTEGER NOT NULL DEFAULT 1,
  modifier_group_ids TEXT NOT NULL DEFAULT '[]',
  created_at         TEXT NOT NULL,
  updated_at         TEXT NOT NULL,
  hlc                TEXT NOT NULL,
  origin             TEXT NOT NULL
) STRICT;
CREATE UNIQUE INDEX products_sku ON products(org_id, sku);
CREATE INDEX products_org ON products(org_id, id);
CREATE INDEX products_category ON products(org_id, category_id, id);

CREATE TABLE modifier_groups (
  id             TEXT PRIMARY KEY,
  org_id         TEXT NOT NULL REFERENCES orgs(id),
  name           TEXT NOT NULL,
  required       INTEGER NOT NULL DEFAULT 0,
  min_selections INTEGER NOT NULL DEFAULT 0,
  max_selections INTEGER NOT NULL DEFAULT 1,
  options        TEXT NOT NULL DEFAULT '[]',
  created_at     TEXT NOT NULL,
  updated_at     TEXT NOT NULL,
  hlc            TEXT NOT NULL,
  origin         TEXT NOT NULL
) STRICT;
CREATE INDEX modifier_groups_org ON modifier_groups(org_id, id);

CREATE TABLE price_lists (
  id           TEXT PRIMARY KEY,
  org_id       TEXT NOT NULL REFERENCES orgs(id),
  name         TEXT NOT NULL,
  location_ids TEXT NOT NULL DEFAULT '[]',
  prices       TEXT NOT NULL DEFAULT '[]',
  starts_at    TEXT,
  ends_at      TEXT,
  is_active    INTEGER NOT NULL DEFAULT 1,
  created_at   TEXT NOT NULL,
  updated_at   TEXT NOT NULL,
  hlc          TEXT NOT NULL,
  origin       TEXT NOT NULL
) STRICT;
CREATE INDEX price_lists_org ON price_lists(org_id, id);

-- outbox: one change record per replicated row write, written in the same
-- transaction as the row. seq orders shipping; sent_at is set once the hub
-- acknowledged the record.
CREATE TABLE outbox (
  seq         INTEGER PRIMARY KEY AUTOINCREMENT,
  id          TEXT NOT NULL, -- change id; applied_changes keeps replays out
  org_id      TEXT NOT NULL,
  location_id TEXT,
  entity      TEXT NOT NULL,
  entity_id   TEXT NOT NULL,
  op          TEXT NOT NULL,
  fields      TEXT NOT NULL,
  hlc         TEXT NOT NULL,
  origin      TEXT NOT NULL,
  created_at  TEXT NOT NULL,
  sent_at     TEXT
) STRICT;
CREATE INDEX outbox_unsent ON outbox(seq) WHERE sent_at IS NULL;

CREATE TABLE idempotency_keys (
  scope        TEXT NOT NULL,
  key          TEXT NOT NULL,
  fingerprint  TEXT NOT NULL,
  status       TEXT NOT NULL, -- running | done
  resp_status  INTEGER,
  content_type TEXT,
  location     TEXT,
  body         BLOB,
  created_at   TEXT NOT NULL,
  PRIMARY KEY (scope, key)
) STRICT;
