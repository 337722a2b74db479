-- Conflicts are resolved at the hub (docs/ops.md): open until someone
-- resolves one with a note, or re-applies a quarantined record
-- ("reapplied"). Node-local, like the conflicts themselves.
ALTER TABLE sync_conflicts ADD COLUMN status TEXT NOT NULL DEFAULT 'open';
ALTER TABLE sync_conflicts ADD COLUMN resolved_at TEXT;
ALTER TABLE sync_conflicts ADD COLUMN resolved_by TEXT;
ALTER TABLE sync_conflicts ADD COLUMN resolution TEXT;
-- Open conflicts per location and kind: the ops monitor's counts.
CREATE INDEX sync_conflicts_status ON sync_conflicts(org_id, status, location_id, kind);
