-- Kassa schema, part 17: the hub's own figure for each redemption an edge
-- pushed (fixRedemptions, docs/trust.md). The replicated
-- campaign_redemptions row stays as its edge sent it, so the two nodes'
-- digests agree; the hub's analytics read amount and order_total from
-- here when a row is (COALESCE), never the wire's. Node-local: never
-- replicated, no change records, not digested; empty at an edge.
CREATE TABLE redemption_amounts (
  redemption_id TEXT PRIMARY KEY,  -- campaign_redemptions.id
  org_id        TEXT NOT NULL,
  amount        INTEGER NOT NULL,  -- what the hub's campaigns gave the order
  order_total   INTEGER NOT NULL   -- the order's total as the hub recomputed it
) STRICT;
