-- Kassa schema, part 14 (issue 14, second session): the hub finds an edge
-- order's redemptions to set their amounts to what its own campaigns give
-- (fixRedemptions, docs/trust.md), once per pushed order.
CREATE INDEX campaign_redemptions_order ON campaign_redemptions(order_id);

-- A rule's executions page newest first by id (GET
-- /automations/:id/executions, docs/automations.md). It replaces the
-- (rule_id, started_at) index: the retention sweep walks rowids instead,
-- and deleting a rule's executions uses UNIQUE (rule_id, event_id), so
-- recording an execution (a row per rule and event) updates no more
-- indexes than before.
DROP INDEX automation_executions_rule;
CREATE INDEX automation_executions_rule_id ON automation_executions(rule_id, id);
