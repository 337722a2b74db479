-- Kassa schema, part 5: card payments taken store-and-forward while the
-- edge had no uplink, waiting to be forwarded to the card network. Node-
-- local: only the node that took a payment forwards it. token is the
-- processor's token for the card, never the card number.
CREATE TABLE offline_forwards (
  payment_id   TEXT PRIMARY KEY,
  org_id       TEXT NOT NULL,
  token        TEXT NOT NULL,
  amount       INTEGER NOT NULL,
  capture      INTEGER NOT NULL,
  created_at   TEXT NOT NULL,
  forwarded_at TEXT,
  result       TEXT
) STRICT;
CREATE INDEX offline_forwards_open ON offline_forwards(created_at) WHERE forwarded_at IS NULL;

-- Change records this node could not apply (a bug, a constraint no merge
-- rule covers): kept whole for ops instead of stalling the link behind
-- them forever. Node-local.
CREATE TABLE sync_quarantine (
  id         TEXT PRIMARY KEY,
  org_id     TEXT NOT NULL,
  change     TEXT NOT NULL, -- the record, JSON
  error      TEXT NOT NULL,
  created_at TEXT NOT NULL
) STRICT;
