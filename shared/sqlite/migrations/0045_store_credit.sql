-- Kassa schema, part 45: returns and store credit (docs/returns.md). A
-- customer's store credit is an org-wide, last-writer-wins row whose id is
-- the customer's own (two stores opening it offline write the same row)
-- and whose balance is derived: the sum of its append-only transactions,
-- recomputed after every write and every merge, never taken from the wire.
-- A return with its receipt is an order refund (refunds) whose money went
-- to store credit in part or whole; a return without receipt is a credit
-- entry naming its product and quantity. Both tables replicate
-- (change-record format 5); an edge of an older format is served without
-- them.

CREATE TABLE store_credits (
  id          TEXT PRIMARY KEY,           -- the customer's id
  org_id      TEXT NOT NULL REFERENCES orgs(id),
  customer_id TEXT NOT NULL REFERENCES customers(id),
  currency    TEXT NOT NULL,
  balance     INTEGER NOT NULL DEFAULT 0, -- sum of store_credit_transactions.amount
  created_at  TEXT NOT NULL,
  updated_at  TEXT NOT NULL,
  hlc         TEXT NOT NULL,
  origin      TEXT NOT NULL,
  field_hlc   TEXT NOT NULL DEFAULT '{}'
) STRICT;
CREATE INDEX store_credits_org ON store_credits(org_id, id);

CREATE TABLE store_credit_transactions (
  id              TEXT PRIMARY KEY,
  org_id          TEXT NOT NULL REFERENCES orgs(id),
  store_credit_id TEXT NOT NULL REFERENCES store_credits(id),
  type            TEXT NOT NULL,              -- return | redeem | refund
  amount          INTEGER NOT NULL,           -- signed minor units: redeem is negative
  location_id     TEXT NOT NULL REFERENCES locations(id),
  order_id        TEXT,                       -- the order paid (redeem, refund) or returned to (return with receipt)
  payment_id      TEXT,                       -- the store_credit payment (redeem, refund)
  refund_id       TEXT,                       -- the order refund a return with receipt credited
  product_id      TEXT REFERENCES products(id), -- a return without receipt: what came back
  quantity        INTEGER NOT NULL DEFAULT 0,
  restock         INTEGER NOT NULL DEFAULT 0,
  reason          TEXT NOT NULL DEFAULT '',
  actor           TEXT,
  approved_by     TEXT REFERENCES users(id),  -- the manager who let a cashier return without receipt
  origin          TEXT NOT NULL,
  created_at      TEXT NOT NULL,
  updated_at      TEXT NOT NULL,
  hlc             TEXT NOT NULL
) STRICT;
CREATE INDEX store_credit_transactions_credit ON store_credit_transactions(store_credit_id, id);
CREATE INDEX store_credit_transactions_payment ON store_credit_transactions(payment_id) WHERE payment_id IS NOT NULL;
CREATE INDEX store_credit_transactions_refund ON store_credit_transactions(refund_id) WHERE refund_id IS NOT NULL;

-- References stay inside one org (migration 0006).
CREATE TRIGGER store_credits_customer_id_org_ins BEFORE INSERT ON store_credits
WHEN EXISTS (SELECT 1 FROM customers WHERE id = NEW.customer_id AND org_id != NEW.org_id)
BEGIN SELECT RAISE(ABORT, 'kassa: cross-org reference store_credits.customer_id'); END;
CREATE TRIGGER store_credit_transactions_store_credit_id_org_ins BEFORE INSERT ON store_credit_transactions
WHEN EXISTS (SELECT 1 FROM store_credits WHERE id = NEW.store_credit_id AND org_id != NEW.org_id)
BEGIN SELECT RAISE(ABORT, 'kassa: cross-org reference store_credit_transactions.store_credit_id'); END;
CREATE TRIGGER store_credit_transactions_order_id_org_ins BEFORE INSERT ON store_credit_transactions
WHEN EXISTS (SELECT 1 FROM orders WHERE id = NEW.order_id AND org_id != NEW.org_id)
BEGIN SELECT RAISE(ABORT, 'kassa: cross-org reference store_credit_transactions.order_id'); END;
CREATE TRIGGER store_credit_transactions_product_id_org_ins BEFORE INSERT ON store_credit_transactions
WHEN EXISTS (SELECT 1 FROM products WHERE id = NEW.product_id AND org_id != NEW.org_id)
BEGIN SELECT RAISE(ABORT, 'kassa: cross-org reference store_credit_transactions.product_id'); END;
