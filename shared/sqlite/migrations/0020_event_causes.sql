-- Kassa schema, part 20: how deep in a chain of automations an event was
-- caused (docs/automations.md, "Depth"). An automation's actions run with
-- their execution's depth + 1 in the context (kassa.WithCauseDepth); the
-- events their units log get a row here, and the engine runs the rules
-- they set off at that depth, so rules that set each other off (one tags
-- a customer, another untags them on customer.updated) stop at
-- kassa.MaxAutomationDepth like emit_event's chains. Events with no row
-- were caused by no automation (depth 0). Node-local: never replicated,
-- no change records, not digested (automations run at the hub).
CREATE TABLE event_causes (
  event_id TEXT PRIMARY KEY,  -- events.id
  depth    INTEGER NOT NULL   -- >= 1
) STRICT, WITHOUT ROWID;
