-- The twin of SQLite migration 0044 (docs/giftcards.md, "Sold at the
-- till"): gift card lines of orders, the order's and the refund's gift
-- card part, and the line a card entry is of.

ALTER TABLE orders ADD COLUMN gift_card_total bigint NOT NULL DEFAULT 0;
ALTER TABLE refunds ADD COLUMN gift_card_amount bigint NOT NULL DEFAULT 0;

CREATE TABLE gift_card_lines (
  id           text PRIMARY KEY,
  org_id       text NOT NULL REFERENCES orgs(id),
  order_id     text NOT NULL REFERENCES orders(id),
  position     bigint NOT NULL,
  gift_card_id text NOT NULL REFERENCES gift_cards(id),
  type         text NOT NULL,    -- issue | reload
  amount       bigint NOT NULL,  -- minor units put on the card when the order completes
  created_at   text NOT NULL,
  updated_at   text NOT NULL,
  hlc          text NOT NULL,
  origin       text NOT NULL
);
CREATE INDEX gift_card_lines_order ON gift_card_lines(order_id, position);
CREATE INDEX gift_card_lines_card ON gift_card_lines(gift_card_id);

ALTER TABLE gift_card_transactions ADD COLUMN line_id text;
ALTER TABLE gift_card_transactions ADD COLUMN refund_id text;
CREATE INDEX gift_card_transactions_line ON gift_card_transactions(line_id) WHERE line_id IS NOT NULL;
