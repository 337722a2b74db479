-- The last tick each cluster-wide job ran (cron ticks, retention sweeps,
-- the automation engine's schedule): a tick runs once across the hubs
-- (docs/postgres.md, "Several hubs"; pg.Once).
CREATE TABLE job_ticks (
  job       text PRIMARY KEY,
  last_tick timestamptz NOT NULL
);
