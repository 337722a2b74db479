-- Kassa schema, part 24: gift card holds (docs/giftcards.md, "Authorization").
-- While connected, a store asks the hub to set a payment's amount aside on
-- a card before it redeems; the hub serializes these against the card's
-- balance less the holds outstanding. A hold is outstanding until the
-- payment's redeem entry arrives (a gift_card_transactions row with its
-- payment_id), the store releases it, or expires_at passes. Node-local:
-- only the hub writes it; never replicated.
CREATE TABLE gift_card_holds (
  payment_id   TEXT PRIMARY KEY,
  org_id       TEXT NOT NULL,
  gift_card_id TEXT NOT NULL,
  location_id  TEXT NOT NULL, -- the store that asked
  node_id      TEXT NOT NULL,
  amount       INTEGER NOT NULL CHECK (amount > 0),
  created_at   TEXT NOT NULL,
  expires_at   TEXT NOT NULL
) STRICT;
CREATE INDEX gift_card_holds_card ON gift_card_holds(gift_card_id, expires_at);
