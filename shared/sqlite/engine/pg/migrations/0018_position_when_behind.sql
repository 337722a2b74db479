-- A hub's poll for its commit's positions positions the log only when the
-- call can position that commit (2026-11-29, session 21, helper hub3;
-- docs/decisions.md, docs/performance.md "Three hubs on one PostgreSQL
-- (session 21, helper hub3)"). A write loop whose commit was not
-- positioned by its own after-commit call (a transaction of another loop
-- or hub was running as it marked, or another hub held the lock) polls
-- from a millisecond on (seq_mark.go, marker.positioned). It polled with
-- kassa_position_upto, which marks the log's sequence and positions under
-- the lock: ~160 µs of PostgreSQL's CPU a call at the ingest bench. With
-- three hubs on one database a hub hears only its own calls' answers, and
-- more transactions run at once: it polled 0.21 times a push (one hub:
-- 0.05). Now the poll names the commit it waits for (want), and the call
-- answers at once, with how far the log is positioned
-- (kassa_positioned_upto, one index read), when
--
--   - the commit is positioned already (another hub's call did it), or
--   - no settled mark of the log covers it (seq_marks_tbl): positions go
--     only to commits at or below a settled mark (0016), and the mark
--     covering it is there already: its own after-commit call, which
--     succeeded before any poll, wrote one at or above it (it read the
--     sequence after the commit), or found one as high, committed before
--     and so settling first; the pruning drops a mark only for a settled
--     higher one. A new mark written by this call, its bound the call's
--     own id, could not settle before those. What it waits for is a
--     transaction older than that mark to end.
--
-- Otherwise it positions the log as kassa_position_upto does. The answer
-- means what 0016's does.
CREATE FUNCTION kassa_position_upto(lock_key bigint, want bigint) RETURNS bigint
LANGUAGE plpgsql AS $$
DECLARE
  upto bigint := kassa_positioned_upto();
BEGIN
  IF upto >= want OR NOT EXISTS (SELECT 1 FROM seq_marks m WHERE m.tbl = 'outbox_commits' AND m.upto >= want
      AND m.xid_bound <= pg_snapshot_xmin(pg_current_snapshot())) THEN
    RETURN upto;
  END IF;
  RETURN kassa_after_commit_upto(lock_key, '', '');
END $$;
