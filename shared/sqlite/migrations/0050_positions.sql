-- Kassa schema, part 50: the two tables read in write order get a
-- sequence column of their own instead of SQLite's rowid, so that the same
-- SQL runs on PostgreSQL (docs/postgres.md), where a row has no rowid.
-- Neither table replicates: the change-record format does not move.
--
-- Each table is rebuilt with seq as its INTEGER PRIMARY KEY, which is the
-- rowid under another name: seq takes each row's rowid, so the order, a
-- connected live feed's position and the storage are what they were; id
-- keeps its unique index (the PRIMARY KEY's before), which the inserts'
-- ON CONFLICT (id) names. The copy runs once, at the upgrade's start: on
-- a hub with a long history of applied changes it takes a while.

-- The live feeds' position in the changes an edge applied (live.go): never
-- reused (AUTOINCREMENT), as rowid was while no row was deleted; a
-- re-applied quarantined record deletes one (conflict.go).
CREATE TABLE applied_changes_0050 (
  seq         INTEGER PRIMARY KEY AUTOINCREMENT,
  id          TEXT NOT NULL UNIQUE,
  origin      TEXT NOT NULL,
  applied_at  TEXT NOT NULL,
  org_id      TEXT,
  location_id TEXT,
  entity      TEXT,
  entity_id   TEXT,
  op          TEXT
) STRICT;
INSERT INTO applied_changes_0050 (seq, id, origin, applied_at, org_id, location_id, entity, entity_id, op)
  SELECT rowid, id, origin, applied_at, org_id, location_id, entity, entity_id, op FROM applied_changes ORDER BY rowid;
DROP TABLE applied_changes;
ALTER TABLE applied_changes_0050 RENAME TO applied_changes;
CREATE INDEX applied_changes_live ON applied_changes(org_id) WHERE entity IS NOT NULL;

-- The order executions were recorded: the retention sweep walks it
-- (automation.go, DeleteExecutionsBefore).
CREATE TABLE automation_executions_0050 (
  seq         INTEGER PRIMARY KEY,
  id          TEXT NOT NULL UNIQUE,
  org_id      TEXT NOT NULL,
  rule_id     TEXT NOT NULL,
  trigger     TEXT NOT NULL,
  event_type  TEXT NOT NULL DEFAULT '',
  event_id    TEXT,
  tick        TEXT,
  matched     INTEGER NOT NULL,
  status      TEXT NOT NULL,
  depth       INTEGER NOT NULL,
  results     TEXT NOT NULL,  -- JSON array of kassa.ActionResult
  error       TEXT NOT NULL,
  duration_ms INTEGER NOT NULL,
  started_at  TEXT NOT NULL,
  finished_at TEXT NOT NULL,
  created_at  TEXT NOT NULL,
  UNIQUE (rule_id, event_id),
  UNIQUE (rule_id, tick)
) STRICT;
INSERT INTO automation_executions_0050 (seq, id, org_id, rule_id, trigger, event_type, event_id, tick, matched, status, depth,
    results, error, duration_ms, started_at, finished_at, created_at)
  SELECT rowid, id, org_id, rule_id, trigger, event_type, event_id, tick, matched, status, depth,
    results, error, duration_ms, started_at, finished_at, created_at FROM automation_executions ORDER BY rowid;
DROP TABLE automation_executions;
ALTER TABLE automation_executions_0050 RENAME TO automation_executions;
CREATE INDEX automation_executions_rule_id ON automation_executions(rule_id, id);
