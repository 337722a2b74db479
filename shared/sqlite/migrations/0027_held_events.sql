-- Kassa schema, part 27: events an edge pushed about a row whose change
-- the hub refused (issue 21; docs/trust.md, "Events follow the admission
-- of their changes"). Such an event (order.completed about an order
-- whose completion was quarantined) would tell a partner what the hub's
-- own API contradicts, so the hub holds it: not in its event log, not
-- queued for webhooks, not seen by automations. It is logged and
-- delivered once every change it waits on was admitted (a re-apply); a
-- change resolved otherwise leaves it held. Node-local (the hub's): never
-- replicated, no change records, not digested.
CREATE TABLE held_events (
  id      TEXT PRIMARY KEY,  -- events.id once released
  org_id  TEXT NOT NULL,
  change  TEXT NOT NULL,     -- the event's change record as it arrived
  held_at TEXT NOT NULL
) STRICT;

-- The quarantined changes (sync_quarantine.id) a held event waits on.
CREATE TABLE held_event_waits (
  event_id  TEXT NOT NULL REFERENCES held_events(id) ON DELETE CASCADE,
  change_id TEXT NOT NULL,
  PRIMARY KEY (event_id, change_id)
) STRICT, WITHOUT ROWID;
CREATE INDEX held_event_waits_change ON held_event_waits(change_id);

-- An arriving event looks up its subject's quarantined changes: by the
-- row (entity_id, indexed since 0006) and by the order they name.
CREATE INDEX sync_quarantine_order ON sync_quarantine(json_extract(change, '$.fields.order_id'));
