-- Kassa schema, part 37: lay-bys (docs/laybys.md). A lay-by is an
-- org-wide, last-writer-wins row whose status only moves forward (open,
-- expired, cancelled, completed) and whose paid and refunded totals are
-- derived: sums of its append-only layby_payments, recomputed after every
-- write and every merge, never taken from the wire, so that instalments
-- taken at two stores while apart add up when they meet. Both tables
-- replicate (change-record format 5); an edge of an older format is served
-- without them.

CREATE TABLE laybys (
  id                 TEXT PRIMARY KEY,
  org_id             TEXT NOT NULL REFERENCES orgs(id),
  location_id        TEXT NOT NULL REFERENCES locations(id), -- the store holding the goods
  customer_id        TEXT NOT NULL REFERENCES customers(id),
  status             TEXT NOT NULL,              -- open | expired | cancelled | completed
  currency           TEXT NOT NULL,
  line_items         TEXT NOT NULL,              -- JSON [kassa.LaybyLine]
  subtotal           INTEGER NOT NULL,
  tax_total          INTEGER NOT NULL,
  total              INTEGER NOT NULL,
  paid               INTEGER NOT NULL DEFAULT 0, -- sum of its payments' positive amounts
  refunded           INTEGER NOT NULL DEFAULT 0, -- minus the sum of its refunds
  termination_charge INTEGER NOT NULL DEFAULT 0,
  cancelled_by       TEXT,                       -- customer | store
  expires_at         TEXT NOT NULL,
  created_by         TEXT,
  completed_at       TEXT,
  cancelled_at       TEXT,
  created_at         TEXT NOT NULL,
  updated_at         TEXT NOT NULL,
  hlc                TEXT NOT NULL,
  origin             TEXT NOT NULL,
  field_hlc          TEXT NOT NULL DEFAULT '{}'
) STRICT;
CREATE INDEX laybys_org ON laybys(org_id, id);
CREATE INDEX laybys_due ON laybys(expires_at) WHERE status = 'open';
CREATE INDEX laybys_held ON laybys(location_id, status);

CREATE TABLE layby_payments (
  id            TEXT PRIMARY KEY,
  org_id        TEXT NOT NULL REFERENCES orgs(id),
  layby_id      TEXT NOT NULL REFERENCES laybys(id),
  location_id   TEXT NOT NULL REFERENCES locations(id), -- the store that took or paid it out
  type          TEXT NOT NULL,    -- payment | refund
  method        TEXT NOT NULL,    -- cash | card | gift_card
  amount        INTEGER NOT NULL, -- signed minor units: a refund is negative
  gift_card_id  TEXT REFERENCES gift_cards(id),
  card_last4    TEXT,
  processor_ref TEXT,
  created_by    TEXT,
  origin        TEXT NOT NULL,
  created_at    TEXT NOT NULL,
  updated_at    TEXT NOT NULL,
  hlc           TEXT NOT NULL
) STRICT;
CREATE INDEX layby_payments_layby ON layby_payments(layby_id, id);

-- References stay inside one org (migration 0006).
CREATE TRIGGER laybys_customer_id_org_ins BEFORE INSERT ON laybys
WHEN EXISTS (SELECT 1 FROM customers WHERE id = NEW.customer_id AND org_id != NEW.org_id)
BEGIN SELECT RAISE(ABORT, 'kassa: cross-org reference laybys.customer_id'); END;
CREATE TRIGGER laybys_location_id_org_ins BEFORE INSERT ON laybys
WHEN EXISTS (SELECT 1 FROM locations WHERE id = NEW.location_id AND org_id != NEW.org_id)
BEGIN SELECT RAISE(ABORT, 'kassa: cross-org reference laybys.location_id'); END;
CREATE TRIGGER layby_payments_layby_id_org_ins BEFORE INSERT ON layby_payments
WHEN EXISTS (SELECT 1 FROM laybys WHERE id = NEW.layby_id AND org_id != NEW.org_id)
BEGIN SELECT RAISE(ABORT, 'kassa: cross-org reference layby_payments.layby_id'); END;
CREATE TRIGGER layby_payments_location_id_org_ins BEFORE INSERT ON layby_payments
WHEN EXISTS (SELECT 1 FROM locations WHERE id = NEW.location_id AND org_id != NEW.org_id)
BEGIN SELECT RAISE(ABORT, 'kassa: cross-org reference layby_payments.location_id'); END;
CREATE TRIGGER layby_payments_gift_card_id_org_ins BEFORE INSERT ON layby_payments
WHEN EXISTS (SELECT 1 FROM gift_cards WHERE id = NEW.gift_card_id AND org_id != NEW.org_id)
BEGIN SELECT RAISE(ABORT, 'kassa: cross-org reference layby_payments.gift_card_id'); END;
