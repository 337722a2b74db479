-- Kassa schema, part 11: campaigns (issue 14, docs/campaigns.md).
--
-- campaigns: org-wide, made at the hub only (the trust boundary knows no
-- such entity from an edge), replicated to every edge field by field
-- (last writer wins), so a store prices with them offline. status is the
-- stored one; scheduled → active and → ended follow the clock on read.
CREATE TABLE campaigns (
  id                 TEXT PRIMARY KEY,
  org_id             TEXT NOT NULL REFERENCES orgs(id),
  name               TEXT NOT NULL,
  type               TEXT NOT NULL,
  status             TEXT NOT NULL,
  rules              TEXT NOT NULL DEFAULT '[]',
  voucher_code       TEXT,
  usage_limit        INTEGER,
  per_customer_limit INTEGER,
  starts_at          TEXT,
  ends_at            TEXT,
  schedule           TEXT NOT NULL DEFAULT '{}',
  location_ids       TEXT NOT NULL DEFAULT '[]',
  created_at         TEXT NOT NULL,
  updated_at         TEXT NOT NULL,
  hlc                TEXT NOT NULL,
  origin             TEXT NOT NULL,
  field_hlc          TEXT NOT NULL DEFAULT '{}'
) STRICT;
CREATE INDEX campaigns_org ON campaigns(org_id, id);
CREATE INDEX campaigns_org_status ON campaigns(org_id, status);

-- campaign_redemptions: one row per order and campaign that gave it a
-- discount or points, written with the order; append-only, replicated
-- edge → hub with the order (location data), so the hub's analytics
-- count edge sales.
CREATE TABLE campaign_redemptions (
  id          TEXT PRIMARY KEY,
  org_id      TEXT NOT NULL REFERENCES orgs(id),
  location_id TEXT NOT NULL,
  campaign_id TEXT NOT NULL,
  order_id    TEXT NOT NULL,
  customer_id TEXT,
  amount      INTEGER NOT NULL,
  order_total INTEGER NOT NULL,
  created_at  TEXT NOT NULL,
  updated_at  TEXT NOT NULL,
  hlc         TEXT NOT NULL,
  origin      TEXT NOT NULL
) STRICT;
CREATE INDEX campaign_redemptions_campaign ON campaign_redemptions(org_id, campaign_id, created_at);

-- Orders show what campaigns gave: the voucher given, the campaigns applied
-- (JSON [{campaign_id, name, amount, points_multiplier}]) and per line the
-- campaigns' parts (JSON [{campaign_id, amount}]). Fixed at creation like
-- the lines.
ALTER TABLE orders ADD COLUMN voucher_code TEXT;
ALTER TABLE orders ADD COLUMN campaigns TEXT NOT NULL DEFAULT '[]';
ALTER TABLE order_lines ADD COLUMN campaign_discounts TEXT NOT NULL DEFAULT '[]';
