-- Kassa schema, part 9: tenants created by partners and per-org rate limits.
--
-- Hub-only (never replicated, never accepted from an edge): who created an
-- org through POST /partners/tenants (a partner app's client id, or
-- 'operator'; '' for an org made otherwise, such as the demo seed, which
-- has a row only once the operator gave it a rate limit), with the first
-- owner and location, and the org's own API rate limit (NULL: the node's
-- --rate-per-minute and --rate-burst). The hub reads every limit once at
-- start and keeps them with the token buckets.
CREATE TABLE tenants (
  org_id          TEXT PRIMARY KEY REFERENCES orgs(id),
  created_by      TEXT NOT NULL DEFAULT '',
  partner_org_id  TEXT,
  owner_id        TEXT,
  location_id     TEXT,
  rate_per_minute INTEGER,
  rate_burst      INTEGER,
  created_at      TEXT NOT NULL,
  updated_at      TEXT NOT NULL
) STRICT;
CREATE INDEX tenants_created_by ON tenants(created_by, org_id);
