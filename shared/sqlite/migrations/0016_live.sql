-- The live feeds (GET /api/v1/ws): an edge's log of changes is its outbox
-- (its own changes) plus the changes it applied from the hub. The applied
-- ones are kept here with what they touched, in the order applied (rowid,
-- never reused: rows are never deleted). Rows from before this migration
-- have no entity and are not shown. At the hub the outbox holds both.
ALTER TABLE applied_changes ADD COLUMN org_id TEXT;
ALTER TABLE applied_changes ADD COLUMN location_id TEXT;
ALTER TABLE applied_changes ADD COLUMN entity TEXT;
ALTER TABLE applied_changes ADD COLUMN entity_id TEXT;
ALTER TABLE applied_changes ADD COLUMN op TEXT;
CREATE INDEX applied_changes_live ON applied_changes(org_id) WHERE entity IS NOT NULL;
