-- The twin of SQLite migration 0048 (docs/tips.md): tips, and the
-- approver of an order's discount.

CREATE TABLE tips (
  id          text PRIMARY KEY,
  org_id      text NOT NULL REFERENCES orgs(id),
  location_id text NOT NULL REFERENCES locations(id),
  payment_id  text NOT NULL REFERENCES payments(id),
  order_id    text NOT NULL REFERENCES orders(id),
  method      text NOT NULL,
  amount      bigint NOT NULL,
  source      text NOT NULL,
  staff_id    text NOT NULL,
  register_id text,
  status      text NOT NULL,
  refund_id   text,
  refunded_at text,
  created_at  text NOT NULL,
  updated_at  text NOT NULL,
  hlc         text NOT NULL,
  origin      text NOT NULL,
  field_hlc   jsonb NOT NULL DEFAULT '{}'
);
CREATE UNIQUE INDEX tips_payment ON tips(payment_id);
CREATE INDEX tips_org_created ON tips(org_id, created_at);
CREATE INDEX tips_order ON tips(order_id);

CREATE TRIGGER tips_payment_id_org_ins BEFORE INSERT ON tips
  FOR EACH ROW EXECUTE FUNCTION kassa_same_org('payments', 'payment_id');
CREATE TRIGGER tips_location_id_org_ins BEFORE INSERT ON tips
  FOR EACH ROW EXECUTE FUNCTION kassa_same_org('locations', 'location_id');

ALTER TABLE orders ADD COLUMN approved_by text;
