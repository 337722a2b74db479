-- Kassa schema, part 2: the commerce core — customers, loyalty, inventory,
-- orders and payments.
--
-- Append-only tables (stock_movements, points_transactions, order_lines,
-- order_history, refunds) are never updated: derived figures (on-hand,
-- balances, paid totals) are sums over them, kept in the parent row by the
-- same transaction that appends, and recomputable from the entries.

CREATE TABLE customers (
  id                TEXT PRIMARY KEY,
  org_id            TEXT NOT NULL REFERENCES orgs(id),
  first_name        TEXT NOT NULL DEFAULT '',
  last_name         TEXT NOT NULL DEFAULT '',
  email             TEXT,
  phone             TEXT,
  birthday          TEXT,
  preferences       TEXT NOT NULL DEFAULT '{}',
  loyalty_member_id TEXT,
  tags              TEXT NOT NULL DEFAULT '[]',
  notes             TEXT NOT NULL DEFAULT '',
  deleted_at        TEXT,
  created_at        TEXT NOT NULL,
  updated_at        TEXT NOT NULL,
  hlc               TEXT NOT NULL,
  origin            TEXT NOT NULL
) STRICT;
CREATE INDEX customers_org ON customers(org_id, id);
CREATE UNIQUE INDEX customers_email ON customers(org_id, email) WHERE email IS NOT NULL AND deleted_at IS NULL;

CREATE TABLE loyalty_programs (
  id               TEXT PRIMARY KEY,
  org_id           TEXT NOT NULL REFERENCES orgs(id),
  name             TEXT NOT NULL,
  points_per_unit  INTEGER NOT NULL,
  redemption_value INTEGER NOT NULL,
  tiers            TEXT NOT NULL DEFAULT '[]',
  is_active        INTEGER NOT NULL DEFAULT 1,
  created_at       TEXT NOT NULL,
  updated_at       TEXT NOT NULL,
  hlc              TEXT NOT NULL,
  origin           TEXT NOT NULL
) STRICT;
CREATE INDEX loyalty_programs_org ON loyalty_programs(org_id, id);

CREATE TABLE loyalty_accounts (
  id              TEXT PRIMARY KEY,
  org_id          TEXT NOT NULL REFERENCES orgs(id),
  program_id      TEXT NOT NULL REFERENCES loyalty_programs(id),
  customer_id     TEXT NOT NULL REFERENCES customers(id),
  points_balance  INTEGER NOT NULL DEFAULT 0, -- sum of transactions
  lifetime_points INTEGER NOT NULL DEFAULT 0, -- sum of earned points
  tier            TEXT,                      -- from lifetime_points and the program's tiers
  created_at      TEXT NOT NULL,
  updated_at      TEXT NOT NULL,
  hlc             TEXT NOT NULL,
  origin          TEXT NOT NULL
) STRICT;
CREATE INDEX loyalty_accounts_org ON loyalty_accounts(org_id, id);
CREATE UNIQUE INDEX loyalty_accounts_customer ON loyalty_accounts(program_id, customer_id);

CREATE TABLE points_transactions (
  id            TEXT PRIMARY KEY,
  org_id        TEXT NOT NULL REFERENCES orgs(id),
  account_id    TEXT NOT NULL REFERENCES loyalty_accounts(id),
  type          TEXT NOT NULL,      -- earn | redeem | adjust
  points        INTEGER NOT NULL,   -- signed: redeem is negative
  balance_after INTEGER NOT NULL,
  order_id      TEXT,
  reason        TEXT NOT NULL DEFAULT '',
  origin        TEXT NOT NULL,
  created_at    TEXT NOT NULL,
  updated_at    TEXT NOT NULL,
  hlc           TEXT NOT NULL
) STRICT;
CREATE INDEX points_transactions_account ON points_transactions(account_id, id);

CREATE TABLE stock_levels (
  id            TEXT PRIMARY KEY,
  org_id        TEXT NOT NULL REFERENCES orgs(id),
  location_id   TEXT NOT NULL REFERENCES locations(id),
  product_id    TEXT NOT NULL REFERENCES products(id),
  on_hand       INTEGER NOT NULL DEFAULT 0, -- sum of movements; not replicated, recomputed
  reorder_point INTEGER NOT NULL DEFAULT 0,
  created_at    TEXT NOT NULL,
  updated_at    TEXT NOT NULL,
  hlc           TEXT NOT NULL,
  origin        TEXT NOT NULL
) STRICT;
CREATE UNIQUE INDEX stock_levels_key ON stock_levels(location_id, product_id);
CREATE INDEX stock_levels_org ON stock_levels(org_id, id);

CREATE TABLE stock_movements (
  id          TEXT PRIMARY KEY,
  org_id      TEXT NOT NULL REFERENCES orgs(id),
  location_id TEXT NOT NULL REFERENCES locations(id),
  product_id  TEXT NOT NULL REFERENCES products(id),
  delta       INTEGER NOT NULL,
  reason      TEXT NOT NULL,      -- sale, refund, received, count, damaged, theft, wastage, return, correction, transfer_out, transfer_in
  ref_type    TEXT NOT NULL,      -- order, refund, transfer, adjustment
  ref_id      TEXT,
  actor       TEXT,               -- user id or client id
  note        TEXT NOT NULL DEFAULT '',
  origin      TEXT NOT NULL,
  created_at  TEXT NOT NULL,
  updated_at  TEXT NOT NULL,
  hlc         TEXT NOT NULL
) STRICT;
CREATE INDEX stock_movements_org ON stock_movements(org_id, id);
CREATE INDEX stock_movements_level ON stock_movements(location_id, product_id, id);

CREATE TABLE transfers (
  id               TEXT PRIMARY KEY,
  org_id           TEXT NOT NULL REFERENCES orgs(id),
  from_location_id TEXT NOT NULL REFERENCES locations(id),
  to_location_id   TEXT NOT NULL REFERENCES locations(id),
  status           TEXT NOT NULL, -- in_transit | received | cancelled
  lines            TEXT NOT NULL, -- [{product_id, quantity}]
  notes            TEXT NOT NULL DEFAULT '',
  received_at      TEXT,
  cancelled_at     TEXT,
  created_at       TEXT NOT NULL,
  updated_at       TEXT NOT NULL,
  hlc              TEXT NOT NULL,
  origin           TEXT NOT NULL
) STRICT;
CREATE INDEX transfers_org ON transfers(org_id, id);

CREATE TABLE orders (
  id                    TEXT PRIMARY KEY,
  org_id                TEXT NOT NULL REFERENCES orgs(id),
  location_id           TEXT NOT NULL REFERENCES locations(id),
  number                TEXT NOT NULL,
  status                TEXT NOT NULL, -- open | completed | partially_refunded | refunded | cancelled
  channel               TEXT NOT NULL, -- pos | online | partner
  customer_id           TEXT,
  currency              TEXT NOT NULL,
  subtotal              INTEGER NOT NULL,
  discount_total        INTEGER NOT NULL,
  tax_total             INTEGER NOT NULL,
  total                 INTEGER NOT NULL,
  paid_total            INTEGER NOT NULL DEFAULT 0, -- sum of captured payments
  refunded_total        INTEGER NOT NULL DEFAULT 0, -- sum of refunds
  loyalty_points_earned INTEGER NOT NULL DEFAULT 0,
  kitchen_status        TEXT NOT NULL DEFAULT 'new',
  notes                 TEXT NOT NULL DEFAULT '',
  tax_inclusive         INTEGER NOT NULL,
  tax_rate_bps          INTEGER NOT NULL,
  created_by            TEXT,
  occurred_at           TEXT NOT NULL, -- when the sale happened at its node (HLC wall time)
  completed_at          TEXT,
  created_at            TEXT NOT NULL,
  updated_at            TEXT NOT NULL,
  hlc                   TEXT NOT NULL,
  origin                TEXT NOT NULL
) STRICT;
CREATE INDEX orders_org ON orders(org_id, id);
CREATE INDEX orders_location ON orders(org_id, location_id, id);
CREATE INDEX orders_customer ON orders(org_id, customer_id, id);
CREATE UNIQUE INDEX orders_number ON orders(location_id, number);

CREATE TABLE order_lines (
  id           TEXT PRIMARY KEY,
  org_id       TEXT NOT NULL REFERENCES orgs(id),
  order_id     TEXT NOT NULL REFERENCES orders(id),
  position     INTEGER NOT NULL,
  product_id   TEXT NOT NULL,
  name         TEXT NOT NULL,
  sku          TEXT NOT NULL,
  quantity     INTEGER NOT NULL,
  unit_price   INTEGER NOT NULL, -- catalog or price list price, before modifiers
  modifiers    TEXT NOT NULL DEFAULT '[]',
  discount     INTEGER NOT NULL DEFAULT 0,
  tax          INTEGER NOT NULL DEFAULT 0,
  total        INTEGER NOT NULL, -- what the customer pays for the line, tax included
  created_at   TEXT NOT NULL,
  updated_at   TEXT NOT NULL,
  hlc          TEXT NOT NULL,
  origin       TEXT NOT NULL
) STRICT;
CREATE INDEX order_lines_order ON order_lines(order_id, position);

CREATE TABLE order_history (
  id         TEXT PRIMARY KEY,
  org_id     TEXT NOT NULL REFERENCES orgs(id),
  order_id   TEXT NOT NULL REFERENCES orders(id),
  status     TEXT NOT NULL,
  at         TEXT NOT NULL,
  actor      TEXT,
  created_at TEXT NOT NULL,
  updated_at TEXT NOT NULL,
  hlc        TEXT NOT NULL,
  origin     TEXT NOT NULL
) STRICT;
CREATE INDEX order_history_order ON order_history(order_id, id);

CREATE TABLE payments (
  id              TEXT PRIMARY KEY,
  org_id          TEXT NOT NULL REFERENCES orgs(id),
  location_id     TEXT NOT NULL REFERENCES locations(id),
  order_id        TEXT NOT NULL REFERENCES orders(id),
  amount          INTEGER NOT NULL,
  method          TEXT NOT NULL,
  status          TEXT NOT NULL,
  offline         INTEGER NOT NULL DEFAULT 0,
  processor_ref   TEXT,
  tendered        INTEGER,
  change_due      INTEGER,
  card_last4      TEXT,
  refunded_amount INTEGER NOT NULL DEFAULT 0,
  failure_reason  TEXT,
  captured_at     TEXT,
  created_at      TEXT NOT NULL,
  updated_at      TEXT NOT NULL,
  hlc             TEXT NOT NULL,
  origin          TEXT NOT NULL
) STRICT;
CREATE INDEX payments_org ON payments(org_id, id);
CREATE INDEX payments_order ON payments(order_id, id);

CREATE TABLE refunds (
  id          TEXT PRIMARY KEY,
  org_id      TEXT NOT NULL REFERENCES orgs(id),
  order_id    TEXT NOT NULL REFERENCES orders(id),
  location_id TEXT NOT NULL,
  amount      INTEGER NOT NULL,
  reason      TEXT NOT NULL DEFAULT '',
  restock     INTEGER NOT NULL DEFAULT 0,
  lines       TEXT NOT NULL DEFAULT '[]', -- [{line_item_id, quantity, amount}]
  payments    TEXT NOT NULL DEFAULT '[]', -- [{payment_id, amount, processor_ref}]
  actor       TEXT,
  created_at  TEXT NOT NULL,
  updated_at  TEXT NOT NULL,
  hlc         TEXT NOT NULL,
  origin      TEXT NOT NULL
) STRICT;
CREATE INDEX refunds_order ON refunds(order_id, id);
CREATE INDEX refunds_org ON refunds(org_id, created_at);

-- order numbers: a counter per location at this node (node-local).
CREATE TABLE order_counters (
  location_id TEXT PRIMARY KEY,
  next        INTEGER NOT NULL
) STRICT;
