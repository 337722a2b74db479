-- Kassa schema, part 44: gift cards sold and reloaded as order lines
-- (docs/giftcards.md, "Sold at the till"). A gift card line is an entry
-- of its order, appended once, replicated with it (its order's location);
-- the order's gift_card_total is their sum, part of the order's total and
-- kept out of its sales; a refund's gift_card_amount is the part of it
-- taken back from cards, kept out of refunds in the sales reports. A
-- ledger entry of a line (issue, reload, takeback) names it.

ALTER TABLE orders ADD COLUMN gift_card_total INTEGER NOT NULL DEFAULT 0;
ALTER TABLE refunds ADD COLUMN gift_card_amount INTEGER NOT NULL DEFAULT 0;

CREATE TABLE gift_card_lines (
  id           TEXT PRIMARY KEY,
  org_id       TEXT NOT NULL REFERENCES orgs(id),
  order_id     TEXT NOT NULL REFERENCES orders(id),
  position     INTEGER NOT NULL,
  gift_card_id TEXT NOT NULL REFERENCES gift_cards(id),
  type         TEXT NOT NULL,    -- issue | reload
  amount       INTEGER NOT NULL, -- minor units put on the card when the order completes
  created_at   TEXT NOT NULL,
  updated_at   TEXT NOT NULL,
  hlc          TEXT NOT NULL,
  origin       TEXT NOT NULL
) STRICT;
CREATE INDEX gift_card_lines_order ON gift_card_lines(order_id, position);
CREATE INDEX gift_card_lines_card ON gift_card_lines(gift_card_id);

ALTER TABLE gift_card_transactions ADD COLUMN line_id TEXT;   -- the gift card line an issue, reload or takeback is of
ALTER TABLE gift_card_transactions ADD COLUMN refund_id TEXT; -- the refund a takeback is part of
CREATE INDEX gift_card_transactions_line ON gift_card_transactions(line_id) WHERE line_id IS NOT NULL;
