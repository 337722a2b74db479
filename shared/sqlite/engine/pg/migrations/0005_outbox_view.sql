-- The engine reads the hub's log as SQLite's outbox (seq, id, …, the
-- times as text in the engine's TimeFormat). On PostgreSQL that outbox is
-- a view of the log in its safe order (0001): only rows whose transaction
-- has its positions (outbox_commits.last_pos), seq being the position, so
-- a reader's cursor never passes a row that commits later. The log's rows
-- are outbox_log; the engine appends to it (pg.Dialect.LogInsertSQL).
ALTER TABLE outbox RENAME TO outbox_log;
CREATE VIEW outbox AS
  SELECT c.first_pos + o.ord AS seq, o.change_id AS id, o.org_id, o.location_id, o.entity, o.entity_id, o.op,
    o.fields::text AS fields, o.hlc, o.origin,
    to_char(o.created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') AS created_at,
    NULL::text AS sent_at, o.actor
  FROM outbox_commits c JOIN outbox_log o ON o.xid = c.xid
  WHERE c.last_pos IS NOT NULL;
