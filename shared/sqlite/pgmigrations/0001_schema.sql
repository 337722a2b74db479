-- The hub's nouns on PostgreSQL (docs/postgres.md, "The schema for
-- PostgreSQL"): the SQLite schema of shared/sqlite/migrations up to 0050,
-- written anew. Values are stored as SQLite stores them, so that digests,
-- change records and the shared SQL do not fork: timestamps are text in
-- the engine's TimeFormat (text order is time order), money and counts
-- bigint minor units, flags integer 0/1, JSON documents jsonb, ids text.
-- Every table, column (in SQLite's order: a digest hashes the columns in
-- order), primary key and index is SQLite's, named alike;
-- TestThePostgreSQLSchemaIsTheSQLiteSchemasTwin holds it. A WITHOUT ROWID
-- table is a plain table with its primary key; AUTOINCREMENT and a rowid
-- alias (INTEGER PRIMARY KEY) are GENERATED ALWAYS AS IDENTITY.
--
-- Not here: outbox (engine/pg's log, engine/pg/migrations/0001_outbox.sql),
-- offline_forwards and sync_refusals (an edge's only), schema_migrations
-- (engine/pg's own, made by pg.Migrate).

-- Text sorts as SQLite sorts it, byte by byte: ids page by "id > ?",
-- digests read "ORDER BY id", the log's keys and timestamps compare as
-- text. A database of another collation would order them otherwise.
DO $$
DECLARE c text := (SELECT datcollate FROM pg_database WHERE datname = current_database());
BEGIN
  IF c NOT IN ('C', 'POSIX', 'C.UTF-8', 'C.utf8') THEN
    RAISE EXCEPTION 'kassa: the hub''s database sorts text as %, not byte by byte as SQLite: create it with LC_COLLATE C (createdb --template=template0 --locale=C --encoding=UTF8)', c;
  END IF;
END $$;

-- A reference to another org's row (or, with a third argument, another
-- location's) is refused, as SQLite's triggers of migration 0006 refuse
-- it, with the same message: kassa_same_org(parent table, column[,
-- 'location_id']).
CREATE FUNCTION kassa_same_org() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
  ref text := to_jsonb(NEW) ->> TG_ARGV[1];
  other boolean;
BEGIN
  IF ref IS NULL THEN
    RETURN NEW;
  END IF;
  IF TG_NARGS > 2 THEN
    EXECUTE format('SELECT EXISTS (SELECT 1 FROM %I WHERE id = $1 AND (org_id <> $2 OR location_id <> $3))', TG_ARGV[0])
      INTO other USING ref, to_jsonb(NEW) ->> 'org_id', to_jsonb(NEW) ->> 'location_id';
  ELSE
    EXECUTE format('SELECT EXISTS (SELECT 1 FROM %I WHERE id = $1 AND org_id <> $2)', TG_ARGV[0])
      INTO other USING ref, to_jsonb(NEW) ->> 'org_id';
  END IF;
  IF other THEN
    RAISE EXCEPTION 'kassa: cross-org reference %.%', TG_TABLE_NAME, TG_ARGV[1];
  END IF;
  RETURN NEW;
END $$;

CREATE TABLE applied_changes (
  seq         bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  id          text NOT NULL UNIQUE,
  origin      text NOT NULL,
  applied_at  text NOT NULL,
  org_id      text,
  location_id text,
  entity      text,
  entity_id   text,
  op          text
);

CREATE TABLE automation_executions (
  seq         bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  id          text NOT NULL UNIQUE,
  org_id      text NOT NULL,
  rule_id     text NOT NULL,
  trigger     text NOT NULL,
  event_type  text NOT NULL DEFAULT '',
  event_id    text,
  tick        text,
  matched     integer NOT NULL,
  status      text NOT NULL,
  depth       bigint NOT NULL,
  results     jsonb NOT NULL,  -- JSON array of kassa.ActionResult
  error       text NOT NULL,
  duration_ms bigint NOT NULL,
  started_at  text NOT NULL,
  finished_at text NOT NULL,
  created_at  text NOT NULL,
  UNIQUE (rule_id, event_id),
  UNIQUE (rule_id, tick)
);

CREATE TABLE automation_rules (
  id          text PRIMARY KEY,
  org_id      text NOT NULL,
  name        text NOT NULL,
  is_active   integer NOT NULL,
  trigger     jsonb NOT NULL,  -- JSON kassa.Trigger
  event_type  text NOT NULL DEFAULT '',  -- trigger.event, for the engine's lookup
  conditions  jsonb NOT NULL,  -- JSON array
  actions     jsonb NOT NULL,  -- JSON array
  created_at  text NOT NULL,
  updated_at  text NOT NULL
);

CREATE TABLE automation_ticks (
  rule_id   text PRIMARY KEY,
  last_tick text NOT NULL
);

CREATE TABLE campaign_redemptions (
  order_id    text NOT NULL,
  campaign_id text NOT NULL,
  org_id      text NOT NULL,
  location_id text NOT NULL,
  customer_id text,
  amount      bigint NOT NULL,  -- what the campaign gave the order (at the hub: as the hub computes it)
  order_total bigint NOT NULL,  -- the order's total
  occurred_at text NOT NULL,     -- the sale's time (orders.occurred_at)
  PRIMARY KEY (org_id, campaign_id, order_id)
);

CREATE TABLE campaign_versions (
  id          bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,   -- write order: breaks ties within a millisecond
  org_id      text NOT NULL,
  campaign_id text NOT NULL,         -- campaigns.id
  valid_from  text NOT NULL,         -- when this state was written (TimeFormat)
  state       jsonb NOT NULL          -- kassa.Campaign as JSON
);

CREATE TABLE orgs (
  id         text PRIMARY KEY,
  name       text NOT NULL,
  currency   text NOT NULL,
  settings   jsonb NOT NULL DEFAULT '{}',
  created_at text NOT NULL,
  updated_at text NOT NULL,
  hlc        text NOT NULL,
  origin     text NOT NULL
, field_hlc jsonb NOT NULL DEFAULT '{}');

CREATE TABLE campaigns (
  id                 text PRIMARY KEY,
  org_id             text NOT NULL REFERENCES orgs(id),
  name               text NOT NULL,
  type               text NOT NULL,
  status             text NOT NULL,
  rules              jsonb NOT NULL DEFAULT '[]',
  voucher_code       text,
  usage_limit        bigint,
  per_customer_limit bigint,
  starts_at          text,
  ends_at            text,
  schedule           jsonb NOT NULL DEFAULT '{}',
  location_ids       jsonb NOT NULL DEFAULT '[]',
  created_at         text NOT NULL,
  updated_at         text NOT NULL,
  hlc                text NOT NULL,
  origin             text NOT NULL,
  field_hlc          jsonb NOT NULL DEFAULT '{}'
);

CREATE TABLE categories (
  id          text PRIMARY KEY,
  org_id      text NOT NULL REFERENCES orgs(id),
  name        text NOT NULL,
  description text,
  parent_id   text,
  sort_order  bigint NOT NULL DEFAULT 0,
  is_active   integer NOT NULL DEFAULT 1,
  created_at  text NOT NULL,
  updated_at  text NOT NULL,
  hlc         text NOT NULL,
  origin      text NOT NULL
, station text, field_hlc jsonb NOT NULL DEFAULT '{}', tax_category_id text);

CREATE TABLE customers (
  id                text PRIMARY KEY,
  org_id            text NOT NULL REFERENCES orgs(id),
  first_name        text NOT NULL DEFAULT '',
  last_name         text NOT NULL DEFAULT '',
  email             text,
  phone             text,
  birthday          text,
  preferences       jsonb NOT NULL DEFAULT '{}',
  loyalty_member_id text,
  tags              jsonb NOT NULL DEFAULT '[]',
  notes             text NOT NULL DEFAULT '',
  deleted_at        text,
  created_at        text NOT NULL,
  updated_at        text NOT NULL,
  hlc               text NOT NULL,
  origin            text NOT NULL
, field_hlc jsonb NOT NULL DEFAULT '{}');

CREATE TABLE locations (
  id         text PRIMARY KEY,
  org_id     text NOT NULL REFERENCES orgs(id),
  name       text NOT NULL,
  timezone   text NOT NULL,
  address    text NOT NULL DEFAULT '',
  currency   text NOT NULL,
  created_at text NOT NULL,
  updated_at text NOT NULL,
  hlc        text NOT NULL,
  origin     text NOT NULL
, field_hlc jsonb NOT NULL DEFAULT '{}', day_cutoff_hour bigint NOT NULL DEFAULT 0);

CREATE TABLE registers (
  id          text PRIMARY KEY,
  org_id      text NOT NULL REFERENCES orgs(id),
  location_id text NOT NULL REFERENCES locations(id),
  name        text NOT NULL,
  is_active   integer NOT NULL DEFAULT 1,
  created_at  text NOT NULL,
  updated_at  text NOT NULL,
  hlc         text NOT NULL,
  origin      text NOT NULL,
  field_hlc   jsonb NOT NULL DEFAULT '{}'
);

CREATE TABLE drawer_sessions (
  id           text PRIMARY KEY,
  org_id       text NOT NULL REFERENCES orgs(id),
  location_id  text NOT NULL REFERENCES locations(id),
  register_id  text NOT NULL REFERENCES registers(id),
  currency     text NOT NULL,
  business_day text NOT NULL,          -- YYYY-MM-DD, kassa.BusinessDay of opened_at
  status       text NOT NULL,          -- open | closed (a lattice: closed wins)
  opened_by    text NOT NULL,
  opened_at    text NOT NULL,
  float        bigint NOT NULL,       -- minor units
  float_count  jsonb NOT NULL DEFAULT '[]',
  closed_by    text,
  closed_at    text,
  z_report_id  text,
  created_at   text NOT NULL,
  updated_at   text NOT NULL,
  hlc          text NOT NULL,
  origin       text NOT NULL,
  field_hlc    jsonb NOT NULL DEFAULT '{}'
);

CREATE TABLE drawer_entries (
  id          text PRIMARY KEY,
  org_id      text NOT NULL REFERENCES orgs(id),
  location_id text NOT NULL REFERENCES locations(id),
  drawer_id   text NOT NULL REFERENCES drawer_sessions(id),
  type        text NOT NULL,    -- float | sale | refund | paid_in | paid_out | no_sale
  method      text NOT NULL,    -- the tender; cash moves the drawer
  amount      bigint NOT NULL, -- signed minor units
  tendered    bigint,
  change      bigint,
  payment_id  text,
  refund_id   text,
  reason      text NOT NULL DEFAULT '',
  created_by  text NOT NULL,
  created_at  text NOT NULL,
  updated_at  text NOT NULL,
  hlc         text NOT NULL,
  origin      text NOT NULL
);

CREATE TABLE edge_reports (
  node_id         text PRIMARY KEY,
  last_seen       text NOT NULL,
  connected_since text NOT NULL,
  cursor          bigint NOT NULL,  -- how far it pulled the hub's log
  pending_up      bigint NOT NULL,  -- as it last reported
  version         text NOT NULL,     -- '' for an edge older than v0.6.0
  reported_at     text,              -- its clock, when it made the figures
  last_verified   text,
  verify_ok       integer,           -- NULL before its first verification
  verify_differ   jsonb NOT NULL,     -- JSON array of table names
  lag_p50         double precision NOT NULL,
  lag_p99         double precision NOT NULL
);

CREATE TABLE enrolment_tokens (
  token_hash  text PRIMARY KEY,
  org_id      text NOT NULL REFERENCES orgs(id),
  location_id text NOT NULL REFERENCES locations(id),
  created_by  text,
  expires_at  text NOT NULL,
  used_at     text,
  used_by     text
);

CREATE TABLE event_causes (
  event_id text PRIMARY KEY,  -- events.id
  depth    bigint NOT NULL   -- >= 1
);

CREATE TABLE events (
  seq         bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  id          text NOT NULL UNIQUE,
  org_id      text NOT NULL,
  location_id text,
  type        text NOT NULL,
  data        jsonb NOT NULL,
  occurred_at text NOT NULL,
  created_at  text NOT NULL,
  updated_at  text NOT NULL,
  hlc         text NOT NULL,
  origin      text NOT NULL
);

CREATE TABLE gift_card_holds (
  payment_id   text PRIMARY KEY,
  org_id       text NOT NULL,
  gift_card_id text NOT NULL,
  location_id  text NOT NULL, -- the store that asked
  node_id      text NOT NULL,
  amount       bigint NOT NULL CHECK (amount > 0),
  created_at   text NOT NULL,
  expires_at   text NOT NULL
);

CREATE TABLE gift_cards (
  id             text PRIMARY KEY,
  org_id         text NOT NULL REFERENCES orgs(id),
  code           text NOT NULL,              -- 16 characters of kassa.GiftCardAlphabet
  currency       text NOT NULL,
  initial_amount bigint NOT NULL,
  balance        bigint NOT NULL DEFAULT 0, -- sum of gift_card_transactions.amount
  status         text NOT NULL,              -- active | disabled
  customer_id    text REFERENCES customers(id),
  expires_at     text,
  created_at     text NOT NULL,
  updated_at     text NOT NULL,
  hlc            text NOT NULL,
  origin         text NOT NULL,
  field_hlc      jsonb NOT NULL DEFAULT '{}'
);

CREATE TABLE gift_card_transactions (
  id           text PRIMARY KEY,
  org_id       text NOT NULL REFERENCES orgs(id),
  gift_card_id text NOT NULL REFERENCES gift_cards(id),
  type         text NOT NULL,    -- issue | redeem | refund | adjust
  amount       bigint NOT NULL, -- signed minor units: redeem is negative
  order_id     text,
  payment_id   text,
  origin       text NOT NULL,
  created_at   text NOT NULL,
  updated_at   text NOT NULL,
  hlc          text NOT NULL
);

CREATE TABLE held_events (
  id      text PRIMARY KEY,  -- events.id once released
  org_id  text NOT NULL,
  change  jsonb NOT NULL,     -- the event's change record as it arrived
  held_at text NOT NULL
);

CREATE TABLE held_event_waits (
  event_id  text NOT NULL REFERENCES held_events(id) ON DELETE CASCADE,
  change_id text NOT NULL,
  PRIMARY KEY (event_id, change_id)
);

CREATE TABLE idempotency_keys (
  scope        text NOT NULL,
  key          text NOT NULL,
  fingerprint  text NOT NULL,
  status       text NOT NULL, -- running | done
  resp_status  bigint,
  content_type text,
  location     text,
  body         bytea,
  created_at   text NOT NULL,
  PRIMARY KEY (scope, key)
);

CREATE TABLE kds_events (
  seq         bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  org_id      text NOT NULL,
  location_id text NOT NULL,
  order_id    text NOT NULL,
  type        text NOT NULL, -- ticket.created | ticket.updated | ticket.bumped | ticket.recalled
  stations    jsonb NOT NULL DEFAULT '[]',
  data        jsonb NOT NULL,
  created_at  text NOT NULL
);

CREATE TABLE kds_ticket_counters (
  location_id text NOT NULL,
  day         text NOT NULL, -- YYYY-MM-DD in the location's time zone
  next        bigint NOT NULL,
  PRIMARY KEY (location_id, day)
);

CREATE TABLE kds_ticket_numbers (
  order_id text PRIMARY KEY,
  day      text NOT NULL,
  number   bigint NOT NULL
);

CREATE TABLE laybys (
  id                 text PRIMARY KEY,
  org_id             text NOT NULL REFERENCES orgs(id),
  location_id        text NOT NULL REFERENCES locations(id), -- the store holding the goods
  customer_id        text NOT NULL REFERENCES customers(id),
  status             text NOT NULL,              -- open | expired | cancelled | completed
  currency           text NOT NULL,
  line_items         jsonb NOT NULL,              -- JSON [kassa.LaybyLine]
  subtotal           bigint NOT NULL,
  tax_total          bigint NOT NULL,
  total              bigint NOT NULL,
  paid               bigint NOT NULL DEFAULT 0, -- sum of its payments' positive amounts
  refunded           bigint NOT NULL DEFAULT 0, -- minus the sum of its refunds
  termination_charge bigint NOT NULL DEFAULT 0,
  cancelled_by       text,                       -- customer | store
  expires_at         text NOT NULL,
  created_by         text,
  completed_at       text,
  cancelled_at       text,
  created_at         text NOT NULL,
  updated_at         text NOT NULL,
  hlc                text NOT NULL,
  origin             text NOT NULL,
  field_hlc          jsonb NOT NULL DEFAULT '{}'
);

CREATE TABLE layby_payments (
  id            text PRIMARY KEY,
  org_id        text NOT NULL REFERENCES orgs(id),
  layby_id      text NOT NULL REFERENCES laybys(id),
  location_id   text NOT NULL REFERENCES locations(id), -- the store that took or paid it out
  type          text NOT NULL,    -- payment | refund
  method        text NOT NULL,    -- cash | card | gift_card
  amount        bigint NOT NULL, -- signed minor units: a refund is negative
  gift_card_id  text REFERENCES gift_cards(id),
  card_last4    text,
  processor_ref text,
  created_by    text,
  origin        text NOT NULL,
  created_at    text NOT NULL,
  updated_at    text NOT NULL,
  hlc           text NOT NULL
);

CREATE TABLE log_readers (
  name text PRIMARY KEY,
  seq  bigint NOT NULL
);

CREATE TABLE loyalty_programs (
  id               text PRIMARY KEY,
  org_id           text NOT NULL REFERENCES orgs(id),
  name             text NOT NULL,
  points_per_unit  bigint NOT NULL,
  redemption_value bigint NOT NULL,
  tiers            jsonb NOT NULL DEFAULT '[]',
  is_active        integer NOT NULL DEFAULT 1,
  created_at       text NOT NULL,
  updated_at       text NOT NULL,
  hlc              text NOT NULL,
  origin           text NOT NULL
, field_hlc jsonb NOT NULL DEFAULT '{}');

CREATE TABLE loyalty_accounts (
  id              text PRIMARY KEY,
  org_id          text NOT NULL REFERENCES orgs(id),
  program_id      text NOT NULL REFERENCES loyalty_programs(id),
  customer_id     text NOT NULL REFERENCES customers(id),
  points_balance  bigint NOT NULL DEFAULT 0, -- sum of transactions
  lifetime_points bigint NOT NULL DEFAULT 0, -- sum of earned points
  tier            text,                      -- from lifetime_points and the program's tiers
  created_at      text NOT NULL,
  updated_at      text NOT NULL,
  hlc             text NOT NULL,
  origin          text NOT NULL
, field_hlc jsonb NOT NULL DEFAULT '{}');

CREATE TABLE modifier_groups (
  id             text PRIMARY KEY,
  org_id         text NOT NULL REFERENCES orgs(id),
  name           text NOT NULL,
  required       integer NOT NULL DEFAULT 0,
  min_selections bigint NOT NULL DEFAULT 0,
  max_selections bigint NOT NULL DEFAULT 1,
  options        jsonb NOT NULL DEFAULT '[]',
  created_at     text NOT NULL,
  updated_at     text NOT NULL,
  hlc            text NOT NULL,
  origin         text NOT NULL
, field_hlc jsonb NOT NULL DEFAULT '{}');

CREATE TABLE node_meta (
  key   text PRIMARY KEY,
  value text NOT NULL
);

CREATE TABLE oauth_access (
  id         text PRIMARY KEY,
  org_id     text NOT NULL,
  client_id  text NOT NULL,
  user_id    text,
  scopes     text NOT NULL,
  expires_at text NOT NULL,
  revoked_at text,
  created_at text NOT NULL,
  updated_at text NOT NULL,
  hlc        text NOT NULL,
  origin     text NOT NULL,
  field_hlc  jsonb NOT NULL DEFAULT '{}'
);

CREATE TABLE oauth_apps (
  id            text PRIMARY KEY,
  org_id        text NOT NULL REFERENCES orgs(id),
  name          text NOT NULL,
  redirect_uris jsonb NOT NULL, -- JSON array of strings
  scopes        jsonb NOT NULL, -- JSON array of scopes
  secret_hash   text NOT NULL,
  created_by    text NOT NULL,
  created_at    text NOT NULL,
  updated_at    text NOT NULL
, client_type text NOT NULL DEFAULT 'confidential'
  CHECK (client_type IN ('confidential', 'public')));

CREATE TABLE users (
  id            text PRIMARY KEY,
  org_id        text NOT NULL REFERENCES orgs(id),
  email         text NOT NULL,
  name          text NOT NULL DEFAULT '',
  role          text NOT NULL,
  password_hash text NOT NULL,
  is_active     integer NOT NULL DEFAULT 1,
  created_at    text NOT NULL,
  updated_at    text NOT NULL,
  hlc           text NOT NULL,
  origin        text NOT NULL
, field_hlc jsonb NOT NULL DEFAULT '{}', location_ids jsonb NOT NULL DEFAULT '[]', pin_hash text NOT NULL DEFAULT '');

CREATE TABLE oauth_grants (
  id         text PRIMARY KEY,
  client_id  text NOT NULL REFERENCES oauth_apps(id) ON DELETE CASCADE,
  org_id     text NOT NULL REFERENCES orgs(id),
  user_id    text REFERENCES users(id),
  scopes     text NOT NULL, -- space-separated
  created_at text NOT NULL,
  revoked_at text
);

CREATE TABLE oauth_codes (
  hash         text PRIMARY KEY,
  client_id    text NOT NULL REFERENCES oauth_apps(id) ON DELETE CASCADE,
  org_id       text NOT NULL REFERENCES orgs(id),
  user_id      text NOT NULL REFERENCES users(id),
  redirect_uri text NOT NULL,
  scopes       text NOT NULL,
  created_at   text NOT NULL,
  expires_at   text NOT NULL,
  consumed_at  text,
  grant_id     text REFERENCES oauth_grants(id) ON DELETE CASCADE
, code_challenge text, code_challenge_method text);

CREATE TABLE oauth_tokens (
  hash       text PRIMARY KEY,
  kind       text NOT NULL CHECK (kind IN ('access', 'refresh')),
  grant_id   text NOT NULL REFERENCES oauth_grants(id) ON DELETE CASCADE,
  client_id  text NOT NULL,
  org_id     text NOT NULL,
  user_id    text,
  scopes     text NOT NULL,
  parent     text,
  created_at text NOT NULL,
  expires_at text, -- NULL for refresh tokens: they live until used or revoked
  used_at    text,
  revoked_at text
);

CREATE TABLE order_counters (
  location_id text PRIMARY KEY,
  next        bigint NOT NULL
);

CREATE TABLE orders (
  id                    text PRIMARY KEY,
  org_id                text NOT NULL REFERENCES orgs(id),
  location_id           text NOT NULL REFERENCES locations(id),
  number                text NOT NULL,
  status                text NOT NULL, -- open | completed | partially_refunded | refunded | cancelled
  channel               text NOT NULL, -- pos | online | partner
  customer_id           text,
  currency              text NOT NULL,
  subtotal              bigint NOT NULL,
  discount_total        bigint NOT NULL,
  tax_total             bigint NOT NULL,
  total                 bigint NOT NULL,
  paid_total            bigint NOT NULL DEFAULT 0, -- sum of captured payments
  refunded_total        bigint NOT NULL DEFAULT 0, -- sum of refunds
  loyalty_points_earned bigint NOT NULL DEFAULT 0,
  kitchen_status        text NOT NULL DEFAULT 'new',
  notes                 text NOT NULL DEFAULT '',
  tax_inclusive         integer NOT NULL,
  tax_rate_bps          bigint NOT NULL,
  created_by            text,
  occurred_at           text NOT NULL, -- when the sale happened at its node (HLC wall time)
  completed_at          text,
  created_at            text NOT NULL,
  updated_at            text NOT NULL,
  hlc                   text NOT NULL,
  origin                text NOT NULL
, field_hlc jsonb NOT NULL DEFAULT '{}', voucher_code text, campaigns jsonb NOT NULL DEFAULT '[]');

CREATE TABLE order_history (
  id         text PRIMARY KEY,
  org_id     text NOT NULL REFERENCES orgs(id),
  order_id   text NOT NULL REFERENCES orders(id),
  status     text NOT NULL,
  at         text NOT NULL,
  actor      text,
  created_at text NOT NULL,
  updated_at text NOT NULL,
  hlc        text NOT NULL,
  origin     text NOT NULL
);

CREATE TABLE order_lines (
  id           text PRIMARY KEY,
  org_id       text NOT NULL REFERENCES orgs(id),
  order_id     text NOT NULL REFERENCES orders(id),
  position     bigint NOT NULL,
  product_id   text NOT NULL,
  name         text NOT NULL,
  sku          text NOT NULL,
  quantity     bigint NOT NULL,
  unit_price   bigint NOT NULL, -- catalog or price list price, before modifiers
  modifiers    jsonb NOT NULL DEFAULT '[]',
  discount     bigint NOT NULL DEFAULT 0,
  tax          bigint NOT NULL DEFAULT 0,
  total        bigint NOT NULL, -- what the customer pays for the line, tax included
  created_at   text NOT NULL,
  updated_at   text NOT NULL,
  hlc          text NOT NULL,
  origin       text NOT NULL
, campaign_discounts jsonb NOT NULL DEFAULT '[]', tax_rate_bps bigint);

CREATE TABLE payments (
  id              text PRIMARY KEY,
  org_id          text NOT NULL REFERENCES orgs(id),
  location_id     text NOT NULL REFERENCES locations(id),
  order_id        text NOT NULL REFERENCES orders(id),
  amount          bigint NOT NULL,
  method          text NOT NULL,
  status          text NOT NULL,
  offline         integer NOT NULL DEFAULT 0,
  processor_ref   text,
  tendered        bigint,
  change_due      bigint,
  card_last4      text,
  refunded_amount bigint NOT NULL DEFAULT 0,
  failure_reason  text,
  captured_at     text,
  created_at      text NOT NULL,
  updated_at      text NOT NULL,
  hlc             text NOT NULL,
  origin          text NOT NULL
, field_hlc jsonb NOT NULL DEFAULT '{}');

CREATE TABLE pin_failures (
  user_id  text PRIMARY KEY,
  failures bigint NOT NULL
);

CREATE TABLE points_transactions (
  id            text PRIMARY KEY,
  org_id        text NOT NULL REFERENCES orgs(id),
  account_id    text NOT NULL REFERENCES loyalty_accounts(id),
  type          text NOT NULL,      -- earn | redeem | adjust
  points        bigint NOT NULL,   -- signed: redeem is negative
  balance_after bigint NOT NULL,
  order_id      text,
  reason        text NOT NULL DEFAULT '',
  origin        text NOT NULL,
  created_at    text NOT NULL,
  updated_at    text NOT NULL,
  hlc           text NOT NULL
, payment_id text);

CREATE TABLE price_lists (
  id           text PRIMARY KEY,
  org_id       text NOT NULL REFERENCES orgs(id),
  name         text NOT NULL,
  location_ids jsonb NOT NULL DEFAULT '[]',
  prices       jsonb NOT NULL DEFAULT '[]',
  starts_at    text,
  ends_at      text,
  is_active    integer NOT NULL DEFAULT 1,
  created_at   text NOT NULL,
  updated_at   text NOT NULL,
  hlc          text NOT NULL,
  origin       text NOT NULL
, field_hlc jsonb NOT NULL DEFAULT '{}');

CREATE TABLE products (
  id                 text PRIMARY KEY,
  org_id             text NOT NULL REFERENCES orgs(id),
  name               text NOT NULL,
  description        text,
  sku                text NOT NULL,
  barcodes           jsonb NOT NULL DEFAULT '[]',
  base_price         bigint NOT NULL,
  category_id        text,
  tags               jsonb NOT NULL DEFAULT '[]',
  is_active          integer NOT NULL DEFAULT 1,
  modifier_group_ids jsonb NOT NULL DEFAULT '[]',
  created_at         text NOT NULL,
  updated_at         text NOT NULL,
  hlc                text NOT NULL,
  origin             text NOT NULL
, station text, field_hlc jsonb NOT NULL DEFAULT '{}', cost bigint, tax_category_id text);

CREATE TABLE receipts (
  id          text PRIMARY KEY,
  org_id      text NOT NULL,
  location_id text NOT NULL,
  register_id text NOT NULL,
  number      text NOT NULL UNIQUE, -- <code>-<seq>
  seq         bigint NOT NULL,
  kind        text NOT NULL,        -- sale | refund
  order_id    text NOT NULL,
  refund_id   text,                 -- the refund, for kind refund
  created_at  text NOT NULL,
  updated_at  text NOT NULL,
  hlc         text NOT NULL,
  origin      text NOT NULL         -- the node that numbered it
);

CREATE TABLE receipt_jobs (
  id          text PRIMARY KEY,
  org_id      text NOT NULL,
  receipt_id  text NOT NULL REFERENCES receipts(id),
  kind        text NOT NULL,         -- print | email
  register_id text NOT NULL DEFAULT '',
  email       text NOT NULL DEFAULT '',
  kick        integer NOT NULL DEFAULT 0, -- open the cash drawer with this print
  message_id  text NOT NULL DEFAULT '',   -- fixed per job: a retry sends the same Message-ID
  status      text NOT NULL,         -- pending | done | failed
  attempts    bigint NOT NULL DEFAULT 0,
  last_error  text NOT NULL DEFAULT '',
  next_at     text NOT NULL,
  created_at  text NOT NULL,
  done_at     text
);

CREATE TABLE receipt_sequences (
  org_id      text NOT NULL,
  location_id text NOT NULL,
  register_id text NOT NULL, -- '' : the location's default sequence
  code        text NOT NULL UNIQUE,
  next        bigint NOT NULL,
  PRIMARY KEY (org_id, location_id, register_id)
);

CREATE TABLE receipt_settings (
  org_id        text PRIMARY KEY,
  header        text NOT NULL DEFAULT '',
  footer        text NOT NULL DEFAULT '',
  tax_id        text NOT NULL DEFAULT '',
  smtp_host     text NOT NULL DEFAULT '',
  smtp_port     bigint NOT NULL DEFAULT 587,
  smtp_username text NOT NULL DEFAULT '',
  smtp_password text NOT NULL DEFAULT '',
  smtp_from     text NOT NULL DEFAULT '',
  updated_at    text NOT NULL
);

CREATE TABLE refunds (
  id          text PRIMARY KEY,
  org_id      text NOT NULL REFERENCES orgs(id),
  order_id    text NOT NULL REFERENCES orders(id),
  location_id text NOT NULL,
  amount      bigint NOT NULL,
  reason      text NOT NULL DEFAULT '',
  restock     integer NOT NULL DEFAULT 0,
  lines       jsonb NOT NULL DEFAULT '[]', -- [{line_item_id, quantity, amount}]
  payments    jsonb NOT NULL DEFAULT '[]', -- [{payment_id, amount, processor_ref}]
  actor       text,
  created_at  text NOT NULL,
  updated_at  text NOT NULL,
  hlc         text NOT NULL,
  origin      text NOT NULL
, approved_by text);

CREATE TABLE register_printers (
  register_id text NOT NULL,
  org_id      text NOT NULL,
  host        text NOT NULL,
  port        bigint NOT NULL DEFAULT 9100,
  paper_width bigint NOT NULL DEFAULT 80 CHECK (paper_width IN (58, 80)),
  enabled     integer NOT NULL DEFAULT 1,
  last_error  text NOT NULL DEFAULT '',   -- the last attempt's failure; '' after a success
  last_ok_at  text,
  updated_at  text NOT NULL,
  PRIMARY KEY (org_id, register_id)
);

CREATE TABLE report_rollups (
  built_at text NOT NULL
);

CREATE TABLE sales_days (
  org_id      text NOT NULL,
  location_id text NOT NULL,
  day         text NOT NULL,  -- YYYY-MM-DD, the location's business day
  currency    text NOT NULL,
  orders      bigint NOT NULL,
  gross       bigint NOT NULL, -- the orders' subtotals
  discounts   bigint NOT NULL, -- their discount totals (campaigns' included)
  campaign    bigint NOT NULL, -- the campaigns' part of the discounts
  tax         bigint NOT NULL,
  sales       bigint NOT NULL, -- the orders' totals
  refunds     bigint NOT NULL, -- refunded on the day
  PRIMARY KEY (org_id, location_id, day, currency)
);

CREATE TABLE sessions (
  id          text PRIMARY KEY,
  org_id      text NOT NULL,
  user_id     text NOT NULL REFERENCES users(id),
  refresh_jti text NOT NULL,
  created_at  text NOT NULL,
  expires_at  text NOT NULL,
  revoked_at  text
);

CREATE TABLE stock_levels (
  id            text PRIMARY KEY,
  org_id        text NOT NULL REFERENCES orgs(id),
  location_id   text NOT NULL REFERENCES locations(id),
  product_id    text NOT NULL REFERENCES products(id),
  on_hand       bigint NOT NULL DEFAULT 0, -- sum of movements; not replicated, recomputed
  reorder_point bigint NOT NULL DEFAULT 0,
  created_at    text NOT NULL,
  updated_at    text NOT NULL,
  hlc           text NOT NULL,
  origin        text NOT NULL
, field_hlc jsonb NOT NULL DEFAULT '{}');

CREATE TABLE stock_movements (
  id          text PRIMARY KEY,
  org_id      text NOT NULL REFERENCES orgs(id),
  location_id text NOT NULL REFERENCES locations(id),
  product_id  text NOT NULL REFERENCES products(id),
  delta       bigint NOT NULL,
  reason      text NOT NULL,      -- sale, refund, received, count, damaged, theft, wastage, return, correction, transfer_out, transfer_in
  ref_type    text NOT NULL,      -- order, refund, transfer, adjustment
  ref_id      text,
  actor       text,               -- user id or client id
  note        text NOT NULL DEFAULT '',
  origin      text NOT NULL,
  created_at  text NOT NULL,
  updated_at  text NOT NULL,
  hlc         text NOT NULL
);

CREATE TABLE sync_conflicts (
  id          text PRIMARY KEY,
  org_id      text NOT NULL,
  location_id text,
  kind        text NOT NULL, -- oversold | overdrawn | cancel_lost | clock_clamped
  entity      text NOT NULL,
  entity_id   text NOT NULL,
  local       jsonb NOT NULL, -- JSON
  remote      jsonb NOT NULL, -- JSON
  detected_at text NOT NULL
, status text NOT NULL DEFAULT 'open', resolved_at text, resolved_by text, resolution text, taken text);

CREATE TABLE sync_nodes (
  node_id     text PRIMARY KEY,
  org_id      text NOT NULL REFERENCES orgs(id),
  location_id text NOT NULL REFERENCES locations(id),
  secret_hash text NOT NULL,
  enrolled_at text NOT NULL,
  revoked_at  text
);

CREATE TABLE sync_quarantine (
  id         text PRIMARY KEY,
  org_id     text NOT NULL,
  change     jsonb NOT NULL, -- the record, JSON
  error      text NOT NULL,
  created_at text NOT NULL
, reason text NOT NULL DEFAULT 'apply_failed', entity_id text);

CREATE TABLE tenants (
  org_id          text PRIMARY KEY REFERENCES orgs(id),
  created_by      text NOT NULL DEFAULT '',
  partner_org_id  text,
  owner_id        text,
  location_id     text,
  rate_per_minute bigint,
  rate_burst      bigint,
  created_at      text NOT NULL,
  updated_at      text NOT NULL
);

CREATE TABLE transfers (
  id               text PRIMARY KEY,
  org_id           text NOT NULL REFERENCES orgs(id),
  from_location_id text NOT NULL REFERENCES locations(id),
  to_location_id   text NOT NULL REFERENCES locations(id),
  status           text NOT NULL, -- in_transit | received | cancelled
  lines            jsonb NOT NULL, -- [{product_id, quantity}]
  notes            text NOT NULL DEFAULT '',
  received_at      text,
  cancelled_at     text,
  created_at       text NOT NULL,
  updated_at       text NOT NULL,
  hlc              text NOT NULL,
  origin           text NOT NULL
, field_hlc jsonb NOT NULL DEFAULT '{}');

CREATE TABLE webhook_attempts (
  id            text PRIMARY KEY,
  org_id        text NOT NULL,
  endpoint_id   text NOT NULL,
  delivery_id   text NOT NULL,
  attempt       bigint NOT NULL,
  response_code bigint NOT NULL,
  response_body text NOT NULL,
  duration_ms   bigint NOT NULL,
  error         text NOT NULL,
  at            text NOT NULL
);

CREATE TABLE webhook_deliveries (
  id              text PRIMARY KEY,
  org_id          text NOT NULL,
  endpoint_id     text NOT NULL,
  event_id        text,
  event_type      text NOT NULL,
  body            bytea NOT NULL,
  status          text NOT NULL,  -- pending | awaiting_retry | delivered | failed
  attempts        bigint NOT NULL DEFAULT 0,
  next_attempt_at text,
  created_at      text NOT NULL,
  updated_at      text NOT NULL,
  UNIQUE (endpoint_id, event_id)
);

CREATE TABLE webhook_endpoints (
  id          text PRIMARY KEY,
  org_id      text NOT NULL,
  url         text NOT NULL,
  events      jsonb NOT NULL,  -- JSON array of event types, or ["*"]
  description text NOT NULL DEFAULT '',
  status      text NOT NULL,  -- active | inactive
  secret      text NOT NULL,
  created_at  text NOT NULL,
  updated_at  text NOT NULL
);

CREATE TABLE z_reports (
  id           text PRIMARY KEY,
  org_id       text NOT NULL REFERENCES orgs(id),
  location_id  text NOT NULL REFERENCES locations(id),
  register_id  text NOT NULL REFERENCES registers(id),
  drawer_id    text NOT NULL REFERENCES drawer_sessions(id),
  number       bigint NOT NULL,  -- per register, from 1, without gaps
  business_day text NOT NULL,
  currency     text NOT NULL,
  totals       jsonb NOT NULL,     -- kassa.DrawerTotals as JSON: Tally of the drawer's entries
  counted      bigint NOT NULL,
  count        jsonb NOT NULL DEFAULT '[]',
  over_short   bigint NOT NULL,
  note         text NOT NULL DEFAULT '',
  opened_by    text NOT NULL,
  opened_at    text NOT NULL,
  closed_by    text NOT NULL,
  closed_at    text NOT NULL,
  created_at   text NOT NULL,
  updated_at   text NOT NULL,
  hlc          text NOT NULL,
  origin       text NOT NULL
);

CREATE INDEX applied_changes_live ON applied_changes(org_id) WHERE entity IS NOT NULL;
CREATE INDEX automation_executions_rule_id ON automation_executions(rule_id, id);
CREATE INDEX automation_rules_org ON automation_rules(org_id, event_type);
CREATE INDEX campaign_redemptions_customer ON campaign_redemptions(org_id, campaign_id, customer_id) WHERE customer_id IS NOT NULL;
CREATE INDEX campaign_versions_at ON campaign_versions(org_id, campaign_id, valid_from);
CREATE INDEX campaigns_org ON campaigns(org_id, id);
CREATE INDEX campaigns_org_status ON campaigns(org_id, status);
CREATE INDEX categories_org ON categories(org_id, id);
CREATE UNIQUE INDEX customers_email ON customers(org_id, email) WHERE email IS NOT NULL AND deleted_at IS NULL;
CREATE INDEX customers_org ON customers(org_id, id);
CREATE INDEX drawer_entries_created ON drawer_entries(org_id, location_id, created_at);
CREATE INDEX drawer_entries_drawer ON drawer_entries(drawer_id, id);
CREATE UNIQUE INDEX drawer_entries_payment ON drawer_entries(payment_id, type) WHERE payment_id IS NOT NULL AND refund_id IS NULL;
CREATE UNIQUE INDEX drawer_entries_refund ON drawer_entries(refund_id, payment_id) WHERE refund_id IS NOT NULL;
CREATE UNIQUE INDEX drawer_sessions_open ON drawer_sessions(register_id) WHERE status = 'open';
CREATE INDEX drawer_sessions_org ON drawer_sessions(org_id, location_id, id);
CREATE INDEX events_org ON events(org_id, seq);
CREATE INDEX gift_card_holds_card ON gift_card_holds(gift_card_id, expires_at);
CREATE INDEX gift_card_transactions_card ON gift_card_transactions(gift_card_id, id);
CREATE INDEX gift_card_transactions_created ON gift_card_transactions(org_id, created_at);
CREATE INDEX gift_card_transactions_payment ON gift_card_transactions(payment_id) WHERE payment_id IS NOT NULL;
CREATE UNIQUE INDEX gift_cards_code ON gift_cards(org_id, code);
CREATE INDEX gift_cards_org ON gift_cards(org_id, id);
CREATE INDEX held_event_waits_change ON held_event_waits(change_id);
CREATE INDEX kds_events_order ON kds_events(order_id, type);
CREATE INDEX kds_events_org ON kds_events(org_id, seq);
CREATE INDEX kds_events_recent ON kds_events(org_id, created_at);
CREATE INDEX layby_payments_layby ON layby_payments(layby_id, id);
CREATE INDEX laybys_due ON laybys(expires_at) WHERE status = 'open';
CREATE INDEX laybys_held ON laybys(location_id, status);
CREATE INDEX laybys_org ON laybys(org_id, id);
CREATE INDEX locations_org ON locations(org_id, id);
CREATE UNIQUE INDEX loyalty_accounts_customer ON loyalty_accounts(program_id, customer_id);
CREATE INDEX loyalty_accounts_org ON loyalty_accounts(org_id, id);
CREATE INDEX loyalty_programs_org ON loyalty_programs(org_id, id);
CREATE INDEX modifier_groups_org ON modifier_groups(org_id, id);
CREATE INDEX oauth_apps_org ON oauth_apps(org_id, id);
CREATE INDEX oauth_codes_client ON oauth_codes(client_id);
CREATE INDEX oauth_grants_client ON oauth_grants(client_id);
CREATE INDEX oauth_grants_org ON oauth_grants(org_id, client_id);
CREATE INDEX oauth_tokens_grant ON oauth_tokens(grant_id);
CREATE INDEX order_history_order ON order_history(order_id, id);
CREATE INDEX order_lines_order ON order_lines(order_id, position);
CREATE INDEX orders_completed ON orders(org_id, location_id, completed_at, status, subtotal, discount_total, tax_total, total, currency, campaigns)
  WHERE completed_at IS NOT NULL;
CREATE INDEX orders_customer ON orders(org_id, customer_id, id);
CREATE INDEX orders_location ON orders(org_id, location_id, id);
CREATE UNIQUE INDEX orders_number ON orders(location_id, number);
CREATE INDEX orders_org ON orders(org_id, id);
CREATE UNIQUE INDEX orgs_name ON orgs(name);
CREATE INDEX payments_captured ON payments(org_id, location_id, captured_at) WHERE captured_at IS NOT NULL;
CREATE INDEX payments_order ON payments(order_id, id);
CREATE INDEX payments_org ON payments(org_id, id);
CREATE INDEX points_transactions_account ON points_transactions(account_id, id);
CREATE INDEX points_transactions_created ON points_transactions(org_id, created_at);
CREATE INDEX points_transactions_payment ON points_transactions(payment_id) WHERE payment_id IS NOT NULL;
CREATE INDEX price_lists_org ON price_lists(org_id, id);
CREATE INDEX products_category ON products(org_id, category_id, id);
CREATE INDEX products_org ON products(org_id, id);
CREATE UNIQUE INDEX products_sku ON products(org_id, sku);
CREATE INDEX receipt_jobs_due ON receipt_jobs(status, next_at);
CREATE INDEX receipt_jobs_receipt ON receipt_jobs(receipt_id);
CREATE INDEX receipts_org ON receipts(org_id, order_id);
CREATE UNIQUE INDEX receipts_refund ON receipts(refund_id) WHERE refund_id IS NOT NULL;
CREATE UNIQUE INDEX receipts_sale ON receipts(order_id) WHERE refund_id IS NULL;
CREATE INDEX refunds_location ON refunds(org_id, location_id, created_at);
CREATE INDEX refunds_order ON refunds(order_id, id);
CREATE INDEX refunds_org ON refunds(org_id, created_at);
CREATE INDEX registers_org ON registers(org_id, location_id, id);
CREATE INDEX sessions_user ON sessions(user_id);
CREATE UNIQUE INDEX stock_levels_key ON stock_levels(location_id, product_id);
CREATE INDEX stock_levels_org ON stock_levels(org_id, id);
CREATE INDEX stock_movements_created ON stock_movements(org_id, location_id, created_at);
CREATE INDEX stock_movements_level ON stock_movements(location_id, product_id, id);
CREATE INDEX stock_movements_org ON stock_movements(org_id, id);
CREATE INDEX sync_conflicts_org ON sync_conflicts(org_id, id);
CREATE INDEX sync_conflicts_status ON sync_conflicts(org_id, status, location_id, kind);
CREATE INDEX sync_nodes_org ON sync_nodes(org_id);
CREATE INDEX sync_quarantine_entity ON sync_quarantine(entity_id);
CREATE INDEX sync_quarantine_order ON sync_quarantine((change->'fields'->>'order_id'));
CREATE INDEX tenants_created_by ON tenants(created_by, org_id);
CREATE INDEX transfers_org ON transfers(org_id, id);
CREATE UNIQUE INDEX users_email ON users(email);
CREATE INDEX users_org ON users(org_id, id);
CREATE INDEX webhook_attempts_delivery ON webhook_attempts(delivery_id);
CREATE INDEX webhook_attempts_endpoint ON webhook_attempts(endpoint_id, at);
CREATE INDEX webhook_deliveries_due ON webhook_deliveries(endpoint_id, next_attempt_at)
  WHERE status IN ('pending', 'awaiting_retry');
CREATE INDEX webhook_endpoints_org ON webhook_endpoints(org_id, status);
CREATE INDEX z_reports_day ON z_reports(org_id, business_day);
CREATE UNIQUE INDEX z_reports_drawer ON z_reports(drawer_id);
CREATE UNIQUE INDEX z_reports_number ON z_reports(register_id, number);
CREATE INDEX z_reports_org ON z_reports(org_id, location_id, id);

-- SQLite's cross-org triggers (0006 and later), one for one.
CREATE TRIGGER categories_parent_id_org_ins BEFORE INSERT ON categories
  FOR EACH ROW EXECUTE FUNCTION kassa_same_org('categories', 'parent_id');
CREATE TRIGGER categories_parent_id_org_upd BEFORE UPDATE OF parent_id ON categories
  FOR EACH ROW EXECUTE FUNCTION kassa_same_org('categories', 'parent_id');
CREATE TRIGGER drawer_entries_drawer_id_org_ins BEFORE INSERT ON drawer_entries
  FOR EACH ROW EXECUTE FUNCTION kassa_same_org('drawer_sessions', 'drawer_id');
CREATE TRIGGER drawer_sessions_register_id_org_ins BEFORE INSERT ON drawer_sessions
  FOR EACH ROW EXECUTE FUNCTION kassa_same_org('registers', 'register_id', 'location_id');
CREATE TRIGGER enrolment_tokens_location_id_org_ins BEFORE INSERT ON enrolment_tokens
  FOR EACH ROW EXECUTE FUNCTION kassa_same_org('locations', 'location_id');
CREATE TRIGGER enrolment_tokens_location_id_org_upd BEFORE UPDATE OF location_id ON enrolment_tokens
  FOR EACH ROW EXECUTE FUNCTION kassa_same_org('locations', 'location_id');
CREATE TRIGGER gift_card_transactions_gift_card_id_org_ins BEFORE INSERT ON gift_card_transactions
  FOR EACH ROW EXECUTE FUNCTION kassa_same_org('gift_cards', 'gift_card_id');
CREATE TRIGGER gift_card_transactions_gift_card_id_org_upd BEFORE UPDATE OF gift_card_id ON gift_card_transactions
  FOR EACH ROW EXECUTE FUNCTION kassa_same_org('gift_cards', 'gift_card_id');
CREATE TRIGGER gift_card_transactions_order_id_org_ins BEFORE INSERT ON gift_card_transactions
  FOR EACH ROW EXECUTE FUNCTION kassa_same_org('orders', 'order_id');
CREATE TRIGGER gift_card_transactions_order_id_org_upd BEFORE UPDATE OF order_id ON gift_card_transactions
  FOR EACH ROW EXECUTE FUNCTION kassa_same_org('orders', 'order_id');
CREATE TRIGGER gift_card_transactions_payment_id_org_ins BEFORE INSERT ON gift_card_transactions
  FOR EACH ROW EXECUTE FUNCTION kassa_same_org('payments', 'payment_id');
CREATE TRIGGER gift_card_transactions_payment_id_org_upd BEFORE UPDATE OF payment_id ON gift_card_transactions
  FOR EACH ROW EXECUTE FUNCTION kassa_same_org('payments', 'payment_id');
CREATE TRIGGER gift_cards_customer_id_org_ins BEFORE INSERT ON gift_cards
  FOR EACH ROW EXECUTE FUNCTION kassa_same_org('customers', 'customer_id');
CREATE TRIGGER gift_cards_customer_id_org_upd BEFORE UPDATE OF customer_id ON gift_cards
  FOR EACH ROW EXECUTE FUNCTION kassa_same_org('customers', 'customer_id');
CREATE TRIGGER layby_payments_gift_card_id_org_ins BEFORE INSERT ON layby_payments
  FOR EACH ROW EXECUTE FUNCTION kassa_same_org('gift_cards', 'gift_card_id');
CREATE TRIGGER layby_payments_layby_id_org_ins BEFORE INSERT ON layby_payments
  FOR EACH ROW EXECUTE FUNCTION kassa_same_org('laybys', 'layby_id');
CREATE TRIGGER layby_payments_location_id_org_ins BEFORE INSERT ON layby_payments
  FOR EACH ROW EXECUTE FUNCTION kassa_same_org('locations', 'location_id');
CREATE TRIGGER laybys_customer_id_org_ins BEFORE INSERT ON laybys
  FOR EACH ROW EXECUTE FUNCTION kassa_same_org('customers', 'customer_id');
CREATE TRIGGER laybys_location_id_org_ins BEFORE INSERT ON laybys
  FOR EACH ROW EXECUTE FUNCTION kassa_same_org('locations', 'location_id');
CREATE TRIGGER loyalty_accounts_customer_id_org_ins BEFORE INSERT ON loyalty_accounts
  FOR EACH ROW EXECUTE FUNCTION kassa_same_org('customers', 'customer_id');
CREATE TRIGGER loyalty_accounts_customer_id_org_upd BEFORE UPDATE OF customer_id ON loyalty_accounts
  FOR EACH ROW EXECUTE FUNCTION kassa_same_org('customers', 'customer_id');
CREATE TRIGGER loyalty_accounts_program_id_org_ins BEFORE INSERT ON loyalty_accounts
  FOR EACH ROW EXECUTE FUNCTION kassa_same_org('loyalty_programs', 'program_id');
CREATE TRIGGER loyalty_accounts_program_id_org_upd BEFORE UPDATE OF program_id ON loyalty_accounts
  FOR EACH ROW EXECUTE FUNCTION kassa_same_org('loyalty_programs', 'program_id');
CREATE TRIGGER order_history_order_id_org_ins BEFORE INSERT ON order_history
  FOR EACH ROW EXECUTE FUNCTION kassa_same_org('orders', 'order_id');
CREATE TRIGGER order_history_order_id_org_upd BEFORE UPDATE OF order_id ON order_history
  FOR EACH ROW EXECUTE FUNCTION kassa_same_org('orders', 'order_id');
CREATE TRIGGER order_lines_order_id_org_ins BEFORE INSERT ON order_lines
  FOR EACH ROW EXECUTE FUNCTION kassa_same_org('orders', 'order_id');
CREATE TRIGGER order_lines_order_id_org_upd BEFORE UPDATE OF order_id ON order_lines
  FOR EACH ROW EXECUTE FUNCTION kassa_same_org('orders', 'order_id');
CREATE TRIGGER order_lines_product_id_org_ins BEFORE INSERT ON order_lines
  FOR EACH ROW EXECUTE FUNCTION kassa_same_org('products', 'product_id');
CREATE TRIGGER order_lines_product_id_org_upd BEFORE UPDATE OF product_id ON order_lines
  FOR EACH ROW EXECUTE FUNCTION kassa_same_org('products', 'product_id');
CREATE TRIGGER orders_customer_id_org_ins BEFORE INSERT ON orders
  FOR EACH ROW EXECUTE FUNCTION kassa_same_org('customers', 'customer_id');
CREATE TRIGGER orders_customer_id_org_upd BEFORE UPDATE OF customer_id ON orders
  FOR EACH ROW EXECUTE FUNCTION kassa_same_org('customers', 'customer_id');
CREATE TRIGGER orders_location_id_org_ins BEFORE INSERT ON orders
  FOR EACH ROW EXECUTE FUNCTION kassa_same_org('locations', 'location_id');
CREATE TRIGGER orders_location_id_org_upd BEFORE UPDATE OF location_id ON orders
  FOR EACH ROW EXECUTE FUNCTION kassa_same_org('locations', 'location_id');
CREATE TRIGGER payments_order_id_org_ins BEFORE INSERT ON payments
  FOR EACH ROW EXECUTE FUNCTION kassa_same_org('orders', 'order_id', 'location_id');
CREATE TRIGGER payments_order_id_org_upd BEFORE UPDATE OF order_id ON payments
  FOR EACH ROW EXECUTE FUNCTION kassa_same_org('orders', 'order_id', 'location_id');
CREATE TRIGGER points_transactions_account_id_org_ins BEFORE INSERT ON points_transactions
  FOR EACH ROW EXECUTE FUNCTION kassa_same_org('loyalty_accounts', 'account_id');
CREATE TRIGGER points_transactions_account_id_org_upd BEFORE UPDATE OF account_id ON points_transactions
  FOR EACH ROW EXECUTE FUNCTION kassa_same_org('loyalty_accounts', 'account_id');
CREATE TRIGGER points_transactions_order_id_org_ins BEFORE INSERT ON points_transactions
  FOR EACH ROW EXECUTE FUNCTION kassa_same_org('orders', 'order_id');
CREATE TRIGGER points_transactions_order_id_org_upd BEFORE UPDATE OF order_id ON points_transactions
  FOR EACH ROW EXECUTE FUNCTION kassa_same_org('orders', 'order_id');
CREATE TRIGGER products_category_id_org_ins BEFORE INSERT ON products
  FOR EACH ROW EXECUTE FUNCTION kassa_same_org('categories', 'category_id');
CREATE TRIGGER products_category_id_org_upd BEFORE UPDATE OF category_id ON products
  FOR EACH ROW EXECUTE FUNCTION kassa_same_org('categories', 'category_id');
CREATE TRIGGER refunds_order_id_org_ins BEFORE INSERT ON refunds
  FOR EACH ROW EXECUTE FUNCTION kassa_same_org('orders', 'order_id', 'location_id');
CREATE TRIGGER refunds_order_id_org_upd BEFORE UPDATE OF order_id ON refunds
  FOR EACH ROW EXECUTE FUNCTION kassa_same_org('orders', 'order_id', 'location_id');
CREATE TRIGGER registers_location_id_org_ins BEFORE INSERT ON registers
  FOR EACH ROW EXECUTE FUNCTION kassa_same_org('locations', 'location_id');
CREATE TRIGGER sessions_user_id_org_ins BEFORE INSERT ON sessions
  FOR EACH ROW EXECUTE FUNCTION kassa_same_org('users', 'user_id');
CREATE TRIGGER sessions_user_id_org_upd BEFORE UPDATE OF user_id ON sessions
  FOR EACH ROW EXECUTE FUNCTION kassa_same_org('users', 'user_id');
CREATE TRIGGER stock_levels_location_id_org_ins BEFORE INSERT ON stock_levels
  FOR EACH ROW EXECUTE FUNCTION kassa_same_org('locations', 'location_id');
CREATE TRIGGER stock_levels_location_id_org_upd BEFORE UPDATE OF location_id ON stock_levels
  FOR EACH ROW EXECUTE FUNCTION kassa_same_org('locations', 'location_id');
CREATE TRIGGER stock_levels_product_id_org_ins BEFORE INSERT ON stock_levels
  FOR EACH ROW EXECUTE FUNCTION kassa_same_org('products', 'product_id');
CREATE TRIGGER stock_levels_product_id_org_upd BEFORE UPDATE OF product_id ON stock_levels
  FOR EACH ROW EXECUTE FUNCTION kassa_same_org('products', 'product_id');
CREATE TRIGGER stock_movements_location_id_org_ins BEFORE INSERT ON stock_movements
  FOR EACH ROW EXECUTE FUNCTION kassa_same_org('locations', 'location_id');
CREATE TRIGGER stock_movements_location_id_org_upd BEFORE UPDATE OF location_id ON stock_movements
  FOR EACH ROW EXECUTE FUNCTION kassa_same_org('locations', 'location_id');
CREATE TRIGGER stock_movements_product_id_org_ins BEFORE INSERT ON stock_movements
  FOR EACH ROW EXECUTE FUNCTION kassa_same_org('products', 'product_id');
CREATE TRIGGER stock_movements_product_id_org_upd BEFORE UPDATE OF product_id ON stock_movements
  FOR EACH ROW EXECUTE FUNCTION kassa_same_org('products', 'product_id');
CREATE TRIGGER sync_nodes_location_id_org_ins BEFORE INSERT ON sync_nodes
  FOR EACH ROW EXECUTE FUNCTION kassa_same_org('locations', 'location_id');
CREATE TRIGGER sync_nodes_location_id_org_upd BEFORE UPDATE OF location_id ON sync_nodes
  FOR EACH ROW EXECUTE FUNCTION kassa_same_org('locations', 'location_id');
CREATE TRIGGER transfers_from_location_id_org_ins BEFORE INSERT ON transfers
  FOR EACH ROW EXECUTE FUNCTION kassa_same_org('locations', 'from_location_id');
CREATE TRIGGER transfers_from_location_id_org_upd BEFORE UPDATE OF from_location_id ON transfers
  FOR EACH ROW EXECUTE FUNCTION kassa_same_org('locations', 'from_location_id');
CREATE TRIGGER transfers_to_location_id_org_ins BEFORE INSERT ON transfers
  FOR EACH ROW EXECUTE FUNCTION kassa_same_org('locations', 'to_location_id');
CREATE TRIGGER transfers_to_location_id_org_upd BEFORE UPDATE OF to_location_id ON transfers
  FOR EACH ROW EXECUTE FUNCTION kassa_same_org('locations', 'to_location_id');
CREATE TRIGGER z_reports_drawer_id_org_ins BEFORE INSERT ON z_reports
  FOR EACH ROW EXECUTE FUNCTION kassa_same_org('drawer_sessions', 'drawer_id');

-- A deactivated user's sessions end; a new PIN forgets the PIN failures
-- (SQLite's triggers users_deactivated_revoke, users_pin_set).
CREATE FUNCTION kassa_users_deactivated_revoke() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  UPDATE sessions SET revoked_at = to_char(statement_timestamp() AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')
  WHERE user_id = NEW.id AND revoked_at IS NULL;
  RETURN NULL;
END $$;
CREATE TRIGGER users_deactivated_revoke AFTER UPDATE OF is_active ON users
  FOR EACH ROW WHEN (OLD.is_active = 1 AND NEW.is_active = 0) EXECUTE FUNCTION kassa_users_deactivated_revoke();

CREATE FUNCTION kassa_users_pin_set() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  DELETE FROM pin_failures WHERE user_id = NEW.id;
  RETURN NULL;
END $$;
CREATE TRIGGER users_pin_set AFTER UPDATE OF pin_hash ON users
  FOR EACH ROW EXECUTE FUNCTION kassa_users_pin_set();

-- A hub with no orders yet keeps its rollups from the start (0040).
INSERT INTO report_rollups (built_at) SELECT to_char(statement_timestamp() AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')
  WHERE NOT EXISTS (SELECT 1 FROM orders);

-- PostgreSQL's own columns, for several hubs on one database (listed in
-- the twin test's pgOnly):
-- a delivery claimed by one hub until its lease ends (pg.ClaimDeliveries);
ALTER TABLE webhook_deliveries ADD COLUMN claimed_until timestamptz;
-- the hub that last heard an edge, and when, by the database's clock
-- (pg.SaveEdgeReports: a write never replaces a newer one).
ALTER TABLE edge_reports ADD COLUMN hub_id text NOT NULL DEFAULT '';
ALTER TABLE edge_reports ADD COLUMN seen_at timestamptz NOT NULL DEFAULT '-infinity';
