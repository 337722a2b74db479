-- Token buckets shared by every hub (docs/postgres.md, "Several hubs"): an
-- org's rate limit and the login throttles count once across the cluster.
-- tokens may go below zero (a costly request spends after the fact); at is
-- the database's clock at the last take, so hubs' clocks do not matter.
CREATE TABLE rate_buckets (
  key     text PRIMARY KEY,
  tokens  double precision NOT NULL,
  at      timestamptz NOT NULL,
  allowed boolean NOT NULL
);
