-- Kassa schema, part 18: each campaign's states as they stood at the hub
-- (campaignsAt, docs/trust.md): the hub prices an edge's order with the
-- campaigns as they were when the order was made, not as they are when it
-- syncs. One row per write of a campaign at this node (writeRow, in the
-- same unit), state = the campaign's row as JSON (the API's fields),
-- valid_from = the unit's commit time. Node-local: never replicated, no
-- change records, not digested; a campaign of an older store gets one
-- version here, its current state from its created_at.
CREATE TABLE campaign_versions (
  id          INTEGER PRIMARY KEY,   -- write order: breaks ties within a millisecond
  org_id      TEXT NOT NULL,
  campaign_id TEXT NOT NULL,         -- campaigns.id
  valid_from  TEXT NOT NULL,         -- when this state was written (TimeFormat)
  state       TEXT NOT NULL          -- kassa.Campaign as JSON
) STRICT;
CREATE INDEX campaign_versions_at ON campaign_versions(org_id, campaign_id, valid_from);

INSERT INTO campaign_versions (org_id, campaign_id, valid_from, state)
SELECT org_id, id, created_at, json_object('id', id, 'org_id', org_id, 'name', name, 'type', type, 'status', status,
  'rules', json(rules), 'voucher_code', voucher_code, 'usage_limit', usage_limit, 'per_customer_limit', per_customer_limit,
  'starts_at', starts_at, 'ends_at', ends_at, 'schedule', json(schedule), 'location_ids', json(location_ids),
  'created_at', created_at, 'updated_at', updated_at)
FROM campaigns ORDER BY created_at, id;
