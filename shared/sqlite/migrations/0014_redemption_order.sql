-- Kassa schema, part 14: the hub finds an edge order's redemptions to set
-- their amounts to what its own campaigns give (fixRedemptions,
-- docs/trust.md), once per pushed order.
CREATE INDEX campaign_redemptions_order ON campaign_redemptions(order_id);
