-- The log's own mark (seq_marks, tbl 'outbox_commits') is written only when
-- the commit sequence moved past every visible mark of it (2026-11-29,
-- session 19, helper pgcommit; docs/decisions.md). Until now kassa_position
-- wrote one at every call: after every commit, and at every poll of a
-- commit waiting for its positions (kassa_positioned) and every retry
-- (seq_mark.go, positionAgain), most of them with the sequence where it was.
--
-- The same argument as 0014's for the followed tables: a visible mark
-- (u', x') with u' >= upto was committed before this statement, and its
-- bound x' (pg_snapshot_xmax when it was written: one past the latest
-- completed transaction, which only grows) is at or below the bound x this
-- call would take. (upto is now last_cseq: the column's name in the check.) A reader that could take the new mark (x <= its xmin)
-- takes that one, as high or higher: the positions' settled bound is the
-- same with or without the new mark, now and at every later call. Pruning
-- (seq_mark.go) drops a mark only below a settled one as high or higher.
-- A call that writes no mark and positions nothing writes nothing: its
-- transaction takes no id, and its commit flushes no WAL.
CREATE OR REPLACE FUNCTION kassa_position(lock_key bigint) RETURNS bigint
LANGUAGE plpgsql AS $$
DECLARE
  last_cseq bigint;
  waiting bigint;
BEGIN
  last_cseq := coalesce(pg_sequence_last_value('outbox_commit_seq'::regclass), 0);
  INSERT INTO seq_marks (tbl, upto, xid_bound)
    SELECT 'outbox_commits', last_cseq, pg_snapshot_xmax(pg_current_snapshot())
    WHERE NOT EXISTS (SELECT 1 FROM seq_marks m WHERE m.tbl = 'outbox_commits' AND m.upto >= last_cseq);
  IF NOT pg_try_advisory_xact_lock(lock_key) THEN
    RETURN -1;
  END IF;
  WITH base AS (SELECT coalesce(max(last_pos), 0) AS b FROM outbox_commits),
    settled AS (SELECT coalesce(max(m.upto), 0) AS u FROM seq_marks m
      WHERE m.tbl = 'outbox_commits' AND m.xid_bound <= pg_snapshot_xmin(pg_current_snapshot())),
    ready AS (SELECT c.xid, c.n, sum(c.n) OVER (ORDER BY c.cseq) AS upto FROM outbox_commits c, settled
      WHERE c.last_pos IS NULL AND c.cseq <= settled.u)
  UPDATE outbox_commits c SET first_pos = base.b + ready.upto - ready.n + 1, last_pos = base.b + ready.upto
  FROM base, ready WHERE c.xid = ready.xid;
  SELECT count(*) INTO waiting FROM outbox_commits WHERE last_pos IS NULL;
  RETURN waiting;
END $$;
