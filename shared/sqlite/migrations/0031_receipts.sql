-- Kassa schema, part 31: receipts (docs/receipts.md). An edge numbers,
-- prints and e-mails the receipts of the sales and refunds it completes.
-- receipts replicates, append-only (change-record format 4): the hub
-- admits a store's receipt only with a number of that store's own
-- sequences. The sequences, printers, settings and the outbox are
-- node-local.

-- One gap-free sequence per till (register) at this node, or per location
-- when a completion names no till (register_id ''). code is the printed
-- prefix of its numbers, fixed when the sequence starts: the node's order
-- number prefix and the sequence's ordinal at this node (ABC123-0 is the
-- first location's default, ABC123-1 the first named till ...).
CREATE TABLE receipt_sequences (
  org_id      TEXT NOT NULL,
  location_id TEXT NOT NULL,
  register_id TEXT NOT NULL, -- '' : the location's default sequence
  code        TEXT NOT NULL UNIQUE,
  next        INTEGER NOT NULL,
  PRIMARY KEY (org_id, location_id, register_id)
) STRICT;

-- A receipt: written in the unit of work that completed the order or
-- recorded the refund, so a number is never taken by a sale that did not
-- happen and never skipped by one that did.
CREATE TABLE receipts (
  id          TEXT PRIMARY KEY,
  org_id      TEXT NOT NULL,
  location_id TEXT NOT NULL,
  register_id TEXT NOT NULL,
  number      TEXT NOT NULL UNIQUE, -- <code>-<seq>
  seq         INTEGER NOT NULL,
  kind        TEXT NOT NULL,        -- sale | refund
  order_id    TEXT NOT NULL,
  refund_id   TEXT,                 -- the refund, for kind refund
  created_at  TEXT NOT NULL,
  updated_at  TEXT NOT NULL,
  hlc         TEXT NOT NULL,
  origin      TEXT NOT NULL         -- the node that numbered it
) STRICT;
CREATE UNIQUE INDEX receipts_sale ON receipts(order_id) WHERE refund_id IS NULL;
CREATE UNIQUE INDEX receipts_refund ON receipts(refund_id) WHERE refund_id IS NOT NULL;
CREATE INDEX receipts_org ON receipts(org_id, order_id);

-- The network thermal printer of a till (raw TCP, ESC/POS).
CREATE TABLE register_printers (
  register_id TEXT NOT NULL,
  org_id      TEXT NOT NULL,
  host        TEXT NOT NULL,
  port        INTEGER NOT NULL DEFAULT 9100,
  paper_width INTEGER NOT NULL DEFAULT 80 CHECK (paper_width IN (58, 80)),
  enabled     INTEGER NOT NULL DEFAULT 1,
  last_error  TEXT NOT NULL DEFAULT '',   -- the last attempt's failure; '' after a success
  last_ok_at  TEXT,
  updated_at  TEXT NOT NULL,
  PRIMARY KEY (org_id, register_id)
) STRICT;

-- What a receipt says about the store beyond its location, and the org's
-- SMTP relay. smtp_password is a secret: never logged, never answered.
CREATE TABLE receipt_settings (
  org_id        TEXT PRIMARY KEY,
  header        TEXT NOT NULL DEFAULT '',
  footer        TEXT NOT NULL DEFAULT '',
  tax_id        TEXT NOT NULL DEFAULT '',
  smtp_host     TEXT NOT NULL DEFAULT '',
  smtp_port     INTEGER NOT NULL DEFAULT 587,
  smtp_username TEXT NOT NULL DEFAULT '',
  smtp_password TEXT NOT NULL DEFAULT '',
  smtp_from     TEXT NOT NULL DEFAULT '',
  updated_at    TEXT NOT NULL
) STRICT;

-- The durable outbox of prints and e-mails. A job is pending until it is
-- done (the printer took the bytes; the relay accepted the message) or
-- failed for good; attempts and last_error say how it goes.
CREATE TABLE receipt_jobs (
  id          TEXT PRIMARY KEY,
  org_id      TEXT NOT NULL,
  receipt_id  TEXT NOT NULL REFERENCES receipts(id),
  kind        TEXT NOT NULL,         -- print | email
  register_id TEXT NOT NULL DEFAULT '',
  email       TEXT NOT NULL DEFAULT '',
  kick        INTEGER NOT NULL DEFAULT 0, -- open the cash drawer with this print
  message_id  TEXT NOT NULL DEFAULT '',   -- fixed per job: a retry sends the same Message-ID
  status      TEXT NOT NULL,         -- pending | done | failed
  attempts    INTEGER NOT NULL DEFAULT 0,
  last_error  TEXT NOT NULL DEFAULT '',
  next_at     TEXT NOT NULL,
  created_at  TEXT NOT NULL,
  done_at     TEXT
) STRICT;
CREATE INDEX receipt_jobs_due ON receipt_jobs(status, next_at);
CREATE INDEX receipt_jobs_receipt ON receipt_jobs(receipt_id);
