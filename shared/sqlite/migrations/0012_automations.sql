-- Kassa schema, part 12: automation rules, their executions, the
-- engine's saved position in the event log and each schedule's last tick.
--
-- Hub-only and node-local, like webhooks: rules run only at the hub (an
-- edge's events reach the hub's log once), so they are never replicated
-- (no change records) and no edge may push them.
CREATE TABLE automation_rules (
  id          TEXT PRIMARY KEY,
  org_id      TEXT NOT NULL,
  name        TEXT NOT NULL,
  is_active   INTEGER NOT NULL,
  trigger     TEXT NOT NULL,  -- JSON kassa.Trigger
  event_type  TEXT NOT NULL DEFAULT '',  -- trigger.event, for the engine's lookup
  conditions  TEXT NOT NULL,  -- JSON array
  actions     TEXT NOT NULL,  -- JSON array
  created_at  TEXT NOT NULL,
  updated_at  TEXT NOT NULL
) STRICT;
CREATE INDEX automation_rules_org ON automation_rules(org_id, event_type);

-- One row per run. event_id is the triggering event (NULL for schedule and
-- manual runs); UNIQUE(rule_id, event_id) makes an event set a rule off at
-- most once, UNIQUE(rule_id, tick) a schedule's tick likewise.
CREATE TABLE automation_executions (
  id          TEXT PRIMARY KEY,
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
CREATE INDEX automation_executions_rule ON automation_executions(rule_id, started_at);

-- A durable reader's position in the event log (the last seq it handled).
CREATE TABLE log_readers (
  name TEXT PRIMARY KEY,
  seq  INTEGER NOT NULL
) STRICT;

-- A schedule rule's last fired tick.
CREATE TABLE automation_ticks (
  rule_id   TEXT PRIMARY KEY,
  last_tick TEXT NOT NULL
) STRICT;
