-- Kassa schema, part 21: gift cards (docs/giftcards.md). A card is an
-- org-wide, last-writer-wins row whose balance is derived: the sum of its
-- append-only transactions, recomputed after every write and every merge,
-- never taken from the wire. Both tables replicate (change-record format 3);
-- an edge of format 1 or 2 is served without them.

CREATE TABLE gift_cards (
  id             TEXT PRIMARY KEY,
  org_id         TEXT NOT NULL REFERENCES orgs(id),
  code           TEXT NOT NULL,              -- 16 characters of kassa.GiftCardAlphabet
  currency       TEXT NOT NULL,
  initial_amount INTEGER NOT NULL,
  balance        INTEGER NOT NULL DEFAULT 0, -- sum of gift_card_transactions.amount
  status         TEXT NOT NULL,              -- active | disabled
  customer_id    TEXT REFERENCES customers(id),
  expires_at     TEXT,
  created_at     TEXT NOT NULL,
  updated_at     TEXT NOT NULL,
  hlc            TEXT NOT NULL,
  origin         TEXT NOT NULL,
  field_hlc      TEXT NOT NULL DEFAULT '{}'
) STRICT;
CREATE INDEX gift_cards_org ON gift_cards(org_id, id);
CREATE UNIQUE INDEX gift_cards_code ON gift_cards(org_id, code);

CREATE TABLE gift_card_transactions (
  id           TEXT PRIMARY KEY,
  org_id       TEXT NOT NULL REFERENCES orgs(id),
  gift_card_id TEXT NOT NULL REFERENCES gift_cards(id),
  type         TEXT NOT NULL,    -- issue | redeem | refund | adjust
  amount       INTEGER NOT NULL, -- signed minor units: redeem is negative
  order_id     TEXT,
  payment_id   TEXT,
  origin       TEXT NOT NULL,
  created_at   TEXT NOT NULL,
  updated_at   TEXT NOT NULL,
  hlc          TEXT NOT NULL
) STRICT;
CREATE INDEX gift_card_transactions_card ON gift_card_transactions(gift_card_id, id);
CREATE INDEX gift_card_transactions_payment ON gift_card_transactions(payment_id) WHERE payment_id IS NOT NULL;

-- References stay inside one org (migration 0006).
CREATE TRIGGER gift_cards_customer_id_org_ins BEFORE INSERT ON gift_cards
WHEN EXISTS (SELECT 1 FROM customers WHERE id = NEW.customer_id AND org_id != NEW.org_id)
BEGIN SELECT RAISE(ABORT, 'kassa: cross-org reference gift_cards.customer_id'); END;
CREATE TRIGGER gift_cards_customer_id_org_upd BEFORE UPDATE OF customer_id ON gift_cards
WHEN EXISTS (SELECT 1 FROM customers WHERE id = NEW.customer_id AND org_id != NEW.org_id)
BEGIN SELECT RAISE(ABORT, 'kassa: cross-org reference gift_cards.customer_id'); END;
CREATE TRIGGER gift_card_transactions_gift_card_id_org_ins BEFORE INSERT ON gift_card_transactions
WHEN EXISTS (SELECT 1 FROM gift_cards WHERE id = NEW.gift_card_id AND org_id != NEW.org_id)
BEGIN SELECT RAISE(ABORT, 'kassa: cross-org reference gift_card_transactions.gift_card_id'); END;
CREATE TRIGGER gift_card_transactions_gift_card_id_org_upd BEFORE UPDATE OF gift_card_id ON gift_card_transactions
WHEN EXISTS (SELECT 1 FROM gift_cards WHERE id = NEW.gift_card_id AND org_id != NEW.org_id)
BEGIN SELECT RAISE(ABORT, 'kassa: cross-org reference gift_card_transactions.gift_card_id'); END;
CREATE TRIGGER gift_card_transactions_order_id_org_ins BEFORE INSERT ON gift_card_transactions
WHEN EXISTS (SELECT 1 FROM orders WHERE id = NEW.order_id AND org_id != NEW.org_id)
BEGIN SELECT RAISE(ABORT, 'kassa: cross-org reference gift_card_transactions.order_id'); END;
CREATE TRIGGER gift_card_transactions_order_id_org_upd BEFORE UPDATE OF order_id ON gift_card_transactions
WHEN EXISTS (SELECT 1 FROM orders WHERE id = NEW.order_id AND org_id != NEW.org_id)
BEGIN SELECT RAISE(ABORT, 'kassa: cross-org reference gift_card_transactions.order_id'); END;
CREATE TRIGGER gift_card_transactions_payment_id_org_ins BEFORE INSERT ON gift_card_transactions
WHEN EXISTS (SELECT 1 FROM payments WHERE id = NEW.payment_id AND org_id != NEW.org_id)
BEGIN SELECT RAISE(ABORT, 'kassa: cross-org reference gift_card_transactions.payment_id'); END;
CREATE TRIGGER gift_card_transactions_payment_id_org_upd BEFORE UPDATE OF payment_id ON gift_card_transactions
WHEN EXISTS (SELECT 1 FROM payments WHERE id = NEW.payment_id AND org_id != NEW.org_id)
BEGIN SELECT RAISE(ABORT, 'kassa: cross-org reference gift_card_transactions.payment_id'); END;
