-- Kassa schema, part 10: webhook endpoints and the durable delivery queue.
--
-- Hub-only and node-local: these rows are never replicated (no change
-- records) and no edge may push them (the trust boundary knows no such
-- entity). The secret is stored as it is, not hashed: the hub signs every
-- delivery with it. It is shown only in the answers of registration and
-- rotation.
CREATE TABLE webhook_endpoints (
  id          TEXT PRIMARY KEY,
  org_id      TEXT NOT NULL,
  url         TEXT NOT NULL,
  events      TEXT NOT NULL,  -- JSON array of event types, or ["*"]
  description TEXT NOT NULL DEFAULT '',
  status      TEXT NOT NULL,  -- active | inactive
  secret      TEXT NOT NULL,
  created_at  TEXT NOT NULL,
  updated_at  TEXT NOT NULL
) STRICT;
CREATE INDEX webhook_endpoints_org ON webhook_endpoints(org_id, status);

-- One row per event and endpoint, inserted in the unit of work that
-- appends the event to the log: no event without its deliveries, no
-- delivery of an event that rolled back. id is the delivery id sent as
-- X-Kassa-Delivery and webhook-id, the same across retries and replays.
-- body is the exact bytes sent. event_id is NULL for test.ping.
CREATE TABLE webhook_deliveries (
  id              TEXT PRIMARY KEY,
  org_id          TEXT NOT NULL,
  endpoint_id     TEXT NOT NULL,
  event_id        TEXT,
  event_type      TEXT NOT NULL,
  body            BLOB NOT NULL,
  status          TEXT NOT NULL,  -- pending | awaiting_retry | delivered | failed
  attempts        INTEGER NOT NULL DEFAULT 0,
  next_attempt_at TEXT,
  created_at      TEXT NOT NULL,
  updated_at      TEXT NOT NULL,
  UNIQUE (endpoint_id, event_id)
) STRICT;
CREATE INDEX webhook_deliveries_due ON webhook_deliveries(endpoint_id, next_attempt_at)
  WHERE status IN ('pending', 'awaiting_retry');

-- The attempts log: one row per attempt, the receiver's answer bounded.
CREATE TABLE webhook_attempts (
  id            TEXT PRIMARY KEY,
  org_id        TEXT NOT NULL,
  endpoint_id   TEXT NOT NULL,
  delivery_id   TEXT NOT NULL,
  attempt       INTEGER NOT NULL,
  response_code INTEGER NOT NULL,
  response_body TEXT NOT NULL,
  duration_ms   INTEGER NOT NULL,
  error         TEXT NOT NULL,
  at            TEXT NOT NULL
) STRICT;
CREATE INDEX webhook_attempts_endpoint ON webhook_attempts(endpoint_id, at);
CREATE INDEX webhook_attempts_delivery ON webhook_attempts(delivery_id);
