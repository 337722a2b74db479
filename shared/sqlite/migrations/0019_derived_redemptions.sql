-- Kassa schema, part 19 (change-record format 2): campaign redemptions
-- are derived, no longer replicated. Every node writes an order's
-- redemptions itself from the order's campaigns (redeem, campaign.go): an
-- edge in the sale's unit and when it applies an order from the hub, the
-- hub when it admits an edge's order, with the amounts its own campaigns
-- give (hubCampaigns) in place of redemption_amounts. A sale no longer
-- writes and ships a row and a change record per campaign that gave it
-- something (docs/campaigns.md, "Cost per sale"). Node-local: no change
-- records, not digested; an older edge's campaign_redemption records are
-- accepted and dropped (retiredEntities, apply.go).
--
-- One row per order and campaign, dated at the sale; the rows an edge or
-- hub held are kept, with the hub's own amounts where it had them. Keyed
-- by campaign: usage limits count a campaign's orders and analytics sum
-- its rows, off the key alone, and a sale writes one b-tree (a second
-- index cost a sale with four campaigns several per cent of the order
-- flow); only a sale to a known customer also writes the per-customer
-- index, for per_customer_limit.
CREATE TABLE campaign_redemptions_derived (
  order_id    TEXT NOT NULL,
  campaign_id TEXT NOT NULL,
  org_id      TEXT NOT NULL,
  location_id TEXT NOT NULL,
  customer_id TEXT,
  amount      INTEGER NOT NULL,  -- what the campaign gave the order (at the hub: as the hub computes it)
  order_total INTEGER NOT NULL,  -- the order's total
  occurred_at TEXT NOT NULL,     -- the sale's time (orders.occurred_at)
  PRIMARY KEY (org_id, campaign_id, order_id)
) STRICT, WITHOUT ROWID;
INSERT OR IGNORE INTO campaign_redemptions_derived
  SELECT r.order_id, r.campaign_id, r.org_id, r.location_id, r.customer_id,
    coalesce(h.amount, r.amount), coalesce(h.order_total, r.order_total), coalesce(o.occurred_at, r.created_at)
  FROM campaign_redemptions r
  LEFT JOIN redemption_amounts h ON h.redemption_id = r.id
  LEFT JOIN orders o ON o.id = r.order_id AND o.org_id = r.org_id;
DROP TABLE redemption_amounts;
DROP TABLE campaign_redemptions;
ALTER TABLE campaign_redemptions_derived RENAME TO campaign_redemptions;
CREATE INDEX campaign_redemptions_customer ON campaign_redemptions(org_id, campaign_id, customer_id) WHERE customer_id IS NOT NULL;
