-- The hub's log of change records on PostgreSQL (docs/postgres.md, "The
-- log's order"). A row is written in the unit that made it, with the
-- writing transaction's id (xid) and its ordinal in that transaction (ord);
-- id comes from a sequence (the order of writing, for looking into it).
-- A row has no position while its transaction may be running: positions
-- are given per committed transaction (outbox_commits) in xid order, only
-- to transactions older than the oldest one still running, so a position
-- once visible never has a row committed below it.
CREATE TABLE outbox (
  xid         xid8 NOT NULL DEFAULT pg_current_xact_id(),
  ord         integer NOT NULL,
  id          bigint GENERATED ALWAYS AS IDENTITY UNIQUE,
  change_id   text NOT NULL,
  org_id      text NOT NULL,
  location_id text,
  entity      text NOT NULL,
  entity_id   text NOT NULL,
  op          text NOT NULL,
  fields      jsonb NOT NULL,
  hlc         text NOT NULL,
  origin      text NOT NULL,
  actor       text,
  created_at  timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (xid, ord)
);

-- One row per transaction that wrote the log: how many rows (n) and, once
-- given, the positions first_pos..last_pos of its rows (ord 0 is first_pos).
CREATE TABLE outbox_commits (
  xid       xid8 PRIMARY KEY DEFAULT pg_current_xact_id(),
  n         integer NOT NULL,
  first_pos bigint,
  last_pos  bigint UNIQUE
);
CREATE INDEX outbox_commits_unpositioned ON outbox_commits(xid) WHERE last_pos IS NULL;
