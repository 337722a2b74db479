-- Kassa schema, part 14 (issue 14, second session): the hub finds an edge
-- order's redemptions to set their amounts to what its own campaigns give
-- (fixRedemptions, docs/trust.md), once per pushed order.
CREATE INDEX campaign_redemptions_order ON campaign_redemptions(order_id);

-- A rule's executions page newest first by id (GET
-- /automations/:id/executions, docs/automations.md).
CREATE INDEX automation_executions_rule_id ON automation_executions(rule_id, id);
