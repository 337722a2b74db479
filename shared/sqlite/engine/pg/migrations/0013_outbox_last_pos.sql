-- The outbox view gives each record's commit's last position (last_pos):
-- a reader bounds it beside seq (Dialect.LogAfter), and the index of
-- outbox_commits.last_pos then picks the commits after a cursor. seq
-- (first_pos + ord) is computed, so a read by seq alone joined and sorted
-- the whole log, every pull (docs/postgres.md, "Reading the log").
CREATE OR REPLACE VIEW outbox AS
  SELECT c.first_pos + o.ord AS seq, o.change_id AS id, o.org_id, o.location_id, o.entity, o.entity_id, o.op,
    o.fields::text AS fields, o.hlc, o.origin,
    to_char(o.created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') AS created_at,
    NULL::text AS sent_at, o.actor, c.last_pos
  FROM outbox_commits c JOIN outbox_log o ON o.xid = c.xid
  WHERE c.last_pos IS NOT NULL;
