-- Kassa schema, part 30: registers, cash drawers and Z reports
-- (docs/drawers.md), and the business day's cutoff hour of a location.
-- Registers and drawer sessions are last-writer-wins rows of one location;
-- drawer entries and Z reports are append-only. The edge of the location
-- owns them: the hub admits them only from that location's edge. All four
-- replicate (change-record format 4); an edge of an older format is served
-- without them.

-- The local hour the location's business day starts at (0–12):
-- kassa.BusinessDay.
ALTER TABLE locations ADD COLUMN day_cutoff_hour INTEGER NOT NULL DEFAULT 0;

CREATE TABLE registers (
  id          TEXT PRIMARY KEY,
  org_id      TEXT NOT NULL REFERENCES orgs(id),
  location_id TEXT NOT NULL REFERENCES locations(id),
  name        TEXT NOT NULL,
  is_active   INTEGER NOT NULL DEFAULT 1,
  created_at  TEXT NOT NULL,
  updated_at  TEXT NOT NULL,
  hlc         TEXT NOT NULL,
  origin      TEXT NOT NULL,
  field_hlc   TEXT NOT NULL DEFAULT '{}'
) STRICT;
CREATE INDEX registers_org ON registers(org_id, location_id, id);

CREATE TABLE drawer_sessions (
  id           TEXT PRIMARY KEY,
  org_id       TEXT NOT NULL REFERENCES orgs(id),
  location_id  TEXT NOT NULL REFERENCES locations(id),
  register_id  TEXT NOT NULL REFERENCES registers(id),
  currency     TEXT NOT NULL,
  business_day TEXT NOT NULL,          -- YYYY-MM-DD, kassa.BusinessDay of opened_at
  status       TEXT NOT NULL,          -- open | closed (a lattice: closed wins)
  opened_by    TEXT NOT NULL,
  opened_at    TEXT NOT NULL,
  float        INTEGER NOT NULL,       -- minor units
  float_count  TEXT NOT NULL DEFAULT '[]',
  closed_by    TEXT,
  closed_at    TEXT,
  z_report_id  TEXT,
  created_at   TEXT NOT NULL,
  updated_at   TEXT NOT NULL,
  hlc          TEXT NOT NULL,
  origin       TEXT NOT NULL,
  field_hlc    TEXT NOT NULL DEFAULT '{}'
) STRICT;
CREATE INDEX drawer_sessions_org ON drawer_sessions(org_id, location_id, id);
-- One open drawer per register.
CREATE UNIQUE INDEX drawer_sessions_open ON drawer_sessions(register_id) WHERE status = 'open';

CREATE TABLE drawer_entries (
  id          TEXT PRIMARY KEY,
  org_id      TEXT NOT NULL REFERENCES orgs(id),
  location_id TEXT NOT NULL REFERENCES locations(id),
  drawer_id   TEXT NOT NULL REFERENCES drawer_sessions(id),
  type        TEXT NOT NULL,    -- float | sale | refund | paid_in | paid_out | no_sale
  method      TEXT NOT NULL,    -- the tender; cash moves the drawer
  amount      INTEGER NOT NULL, -- signed minor units
  tendered    INTEGER,
  change      INTEGER,
  payment_id  TEXT,
  refund_id   TEXT,
  reason      TEXT NOT NULL DEFAULT '',
  created_by  TEXT NOT NULL,
  created_at  TEXT NOT NULL,
  updated_at  TEXT NOT NULL,
  hlc         TEXT NOT NULL,
  origin      TEXT NOT NULL
) STRICT;
CREATE INDEX drawer_entries_drawer ON drawer_entries(drawer_id, id);
CREATE UNIQUE INDEX drawer_entries_payment ON drawer_entries(payment_id, type) WHERE payment_id IS NOT NULL AND refund_id IS NULL;
CREATE UNIQUE INDEX drawer_entries_refund ON drawer_entries(refund_id, payment_id) WHERE refund_id IS NOT NULL;

CREATE TABLE z_reports (
  id           TEXT PRIMARY KEY,
  org_id       TEXT NOT NULL REFERENCES orgs(id),
  location_id  TEXT NOT NULL REFERENCES locations(id),
  register_id  TEXT NOT NULL REFERENCES registers(id),
  drawer_id    TEXT NOT NULL REFERENCES drawer_sessions(id),
  number       INTEGER NOT NULL,  -- per register, from 1, without gaps
  business_day TEXT NOT NULL,
  currency     TEXT NOT NULL,
  totals       TEXT NOT NULL,     -- kassa.DrawerTotals as JSON: Tally of the drawer's entries
  counted      INTEGER NOT NULL,
  count        TEXT NOT NULL DEFAULT '[]',
  over_short   INTEGER NOT NULL,
  note         TEXT NOT NULL DEFAULT '',
  opened_by    TEXT NOT NULL,
  opened_at    TEXT NOT NULL,
  closed_by    TEXT NOT NULL,
  closed_at    TEXT NOT NULL,
  created_at   TEXT NOT NULL,
  updated_at   TEXT NOT NULL,
  hlc          TEXT NOT NULL,
  origin       TEXT NOT NULL
) STRICT;
CREATE UNIQUE INDEX z_reports_number ON z_reports(register_id, number);
CREATE UNIQUE INDEX z_reports_drawer ON z_reports(drawer_id);
CREATE INDEX z_reports_org ON z_reports(org_id, location_id, id);

-- References stay inside one org (migration 0006).
CREATE TRIGGER registers_location_id_org_ins BEFORE INSERT ON registers
WHEN EXISTS (SELECT 1 FROM locations WHERE id = NEW.location_id AND org_id != NEW.org_id)
BEGIN SELECT RAISE(ABORT, 'kassa: cross-org reference registers.location_id'); END;
CREATE TRIGGER drawer_sessions_register_id_org_ins BEFORE INSERT ON drawer_sessions
WHEN EXISTS (SELECT 1 FROM registers WHERE id = NEW.register_id AND (org_id != NEW.org_id OR location_id != NEW.location_id))
BEGIN SELECT RAISE(ABORT, 'kassa: cross-org reference drawer_sessions.register_id'); END;
CREATE TRIGGER drawer_entries_drawer_id_org_ins BEFORE INSERT ON drawer_entries
WHEN EXISTS (SELECT 1 FROM drawer_sessions WHERE id = NEW.drawer_id AND org_id != NEW.org_id)
BEGIN SELECT RAISE(ABORT, 'kassa: cross-org reference drawer_entries.drawer_id'); END;
CREATE TRIGGER z_reports_drawer_id_org_ins BEFORE INSERT ON z_reports
WHEN EXISTS (SELECT 1 FROM drawer_sessions WHERE id = NEW.drawer_id AND org_id != NEW.org_id)
BEGIN SELECT RAISE(ABORT, 'kassa: cross-org reference z_reports.drawer_id'); END;
