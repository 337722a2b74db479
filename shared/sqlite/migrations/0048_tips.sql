-- Kassa schema, part 48: tips (docs/tips.md). A tip is money a customer
-- gives the staff on top of a payment (cash or card), entered at the till
-- or sent by the card terminal. It is kept apart from the sale: not in the
-- order's total, its tax or the sales reports' revenue, and not in the
-- payment's amount (the payment is what pays the order). One tip per
-- payment, written in the payment's own unit of work; its amount never
-- changes; a refund that gives the whole payment back gives the tip back
-- too (refund_id, refunded_at), a void of the payment voids it (status).
-- Replicated (change-record format 5): an edge of an older format is
-- served without it.

CREATE TABLE tips (
  id          TEXT PRIMARY KEY,
  org_id      TEXT NOT NULL REFERENCES orgs(id),
  location_id TEXT NOT NULL REFERENCES locations(id),
  payment_id  TEXT NOT NULL REFERENCES payments(id),
  order_id    TEXT NOT NULL REFERENCES orders(id),
  method      TEXT NOT NULL,    -- the payment's method: cash | card | ...
  amount      INTEGER NOT NULL, -- minor units, positive
  source      TEXT NOT NULL,    -- till | terminal
  staff_id    TEXT NOT NULL,    -- the staff member credited: who took the payment
  register_id TEXT,             -- the till it was taken at
  status      TEXT NOT NULL,    -- held | refunded | voided
  refund_id   TEXT,             -- the refund that gave it back
  refunded_at TEXT,
  created_at  TEXT NOT NULL,
  updated_at  TEXT NOT NULL,
  hlc         TEXT NOT NULL,
  origin      TEXT NOT NULL,
  field_hlc   TEXT NOT NULL DEFAULT '{}'
) STRICT;
CREATE UNIQUE INDEX tips_payment ON tips(payment_id);
CREATE INDEX tips_org_created ON tips(org_id, created_at);
CREATE INDEX tips_order ON tips(order_id);

-- References stay inside one org (migration 0006).
CREATE TRIGGER tips_payment_id_org_ins BEFORE INSERT ON tips
WHEN EXISTS (SELECT 1 FROM payments WHERE id = NEW.payment_id AND org_id != NEW.org_id)
BEGIN SELECT RAISE(ABORT, 'kassa: cross-org reference tips.payment_id'); END;
CREATE TRIGGER tips_location_id_org_ins BEFORE INSERT ON tips
WHEN EXISTS (SELECT 1 FROM locations WHERE id = NEW.location_id AND org_id != NEW.org_id)
BEGIN SELECT RAISE(ABORT, 'kassa: cross-org reference tips.location_id'); END;

-- Who approved a manual discount above the creating actor's limit
-- (docs/till.md "Manager approval"): the order is the cashier's
-- (created_by) and the manager or owner who approved it is recorded
-- beside them. NULL when no approval was needed. Replicated with the order
-- (change-record format 5).
ALTER TABLE orders ADD COLUMN approved_by TEXT;
