-- The twin of SQLite migration 0045 (docs/returns.md): a customer's store
-- credit, keyed by the customer's id, and its append-only entries.

CREATE TABLE store_credits (
  id          text PRIMARY KEY,           -- the customer's id
  org_id      text NOT NULL REFERENCES orgs(id),
  customer_id text NOT NULL REFERENCES customers(id),
  currency    text NOT NULL,
  balance     bigint NOT NULL DEFAULT 0,  -- sum of store_credit_transactions.amount
  created_at  text NOT NULL,
  updated_at  text NOT NULL,
  hlc         text NOT NULL,
  origin      text NOT NULL,
  field_hlc   jsonb NOT NULL DEFAULT '{}'
);
CREATE INDEX store_credits_org ON store_credits(org_id, id);

CREATE TABLE store_credit_transactions (
  id              text PRIMARY KEY,
  org_id          text NOT NULL REFERENCES orgs(id),
  store_credit_id text NOT NULL REFERENCES store_credits(id),
  type            text NOT NULL,              -- return | redeem | refund
  amount          bigint NOT NULL,            -- signed minor units: redeem is negative
  location_id     text NOT NULL REFERENCES locations(id),
  order_id        text,
  payment_id      text,
  refund_id       text,
  product_id      text REFERENCES products(id),
  quantity        bigint NOT NULL DEFAULT 0,
  restock         integer NOT NULL DEFAULT 0,
  reason          text NOT NULL DEFAULT '',
  actor           text,
  approved_by     text REFERENCES users(id),
  origin          text NOT NULL,
  created_at      text NOT NULL,
  updated_at      text NOT NULL,
  hlc             text NOT NULL
);
CREATE INDEX store_credit_transactions_credit ON store_credit_transactions(store_credit_id, id);
CREATE INDEX store_credit_transactions_payment ON store_credit_transactions(payment_id) WHERE payment_id IS NOT NULL;
CREATE INDEX store_credit_transactions_refund ON store_credit_transactions(refund_id) WHERE refund_id IS NOT NULL;

CREATE TRIGGER store_credits_customer_id_org_ins BEFORE INSERT ON store_credits
  FOR EACH ROW EXECUTE FUNCTION kassa_same_org('customers', 'customer_id');
CREATE TRIGGER store_credit_transactions_store_credit_id_org_ins BEFORE INSERT ON store_credit_transactions
  FOR EACH ROW EXECUTE FUNCTION kassa_same_org('store_credits', 'store_credit_id');
CREATE TRIGGER store_credit_transactions_order_id_org_ins BEFORE INSERT ON store_credit_transactions
  FOR EACH ROW EXECUTE FUNCTION kassa_same_org('orders', 'order_id');
CREATE TRIGGER store_credit_transactions_product_id_org_ins BEFORE INSERT ON store_credit_transactions
  FOR EACH ROW EXECUTE FUNCTION kassa_same_org('products', 'product_id');
