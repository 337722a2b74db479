-- The outbox view's reads after a position cost what they return (session
-- pgingest2): a row's seq is its commit's first_pos plus its ord, an
-- expression across the join that no index serves, so "seq > ?" joined the
-- whole log at every read (the hub's watch job after each commit, an
-- edge's every pull). The view now also gives its commit's last position
-- (pos_last), and the engine's reads after a position ask for it too
-- (pg.Dialect.LogAfterSQL: seq > ?1 AND pos_last > ?1), which the unique
-- index of outbox_commits.last_pos serves: the commits past the cursor,
-- then each one's rows by their key.
CREATE OR REPLACE VIEW outbox AS
  SELECT c.first_pos + o.ord AS seq, o.change_id AS id, o.org_id, o.location_id, o.entity, o.entity_id, o.op,
    o.fields::text AS fields, o.hlc, o.origin,
    to_char(o.created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') AS created_at,
    NULL::text AS sent_at, o.actor, c.last_pos AS pos_last
  FROM outbox_commits c JOIN outbox_log o ON o.xid = c.xid
  WHERE c.last_pos IS NOT NULL;
