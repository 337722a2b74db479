-- Kassa schema, part 47: each markdown's states as they stood at this node
-- (docs/catalog.md, as campaign_versions for campaigns, migration 0018):
-- the hub checks an edge's marked-down line against the markdown as it was
-- when the sale was made, not as it is when it syncs. One row per write of
-- a markdown at this node, in the same unit; node-local (never replicated,
-- no change records, not digested).
CREATE TABLE markdown_versions (
  id          INTEGER PRIMARY KEY,   -- write order: breaks ties within a millisecond
  org_id      TEXT NOT NULL,
  markdown_id TEXT NOT NULL,         -- markdowns.id
  valid_from  TEXT NOT NULL,         -- when this state was written (TimeFormat)
  state       TEXT NOT NULL          -- kassa.Markdown as JSON
) STRICT;
CREATE INDEX markdown_versions_at ON markdown_versions(org_id, markdown_id, valid_from);
