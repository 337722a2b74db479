-- The log's own mark takes the marking transaction's id as its bound, as
-- the followed tables' marks do since migration 0014 (2026-11-29, session
-- 20, helper commitrt; docs/decisions.md). Its bound was pg_snapshot_xmax,
-- one past the latest COMPLETED transaction: a writer transaction that took
-- its id (BeginSQL) and then its cseq at or below the mark's upto, still
-- running, could have an id at or above that bound, and the mark settled
-- while it ran. Its records were then positioned later, above commits of
-- higher cseq: harmless to a reader's cursor (positions are given after
-- commit, above every position given), and to the causal order (it had
-- read none of them), but "every commit at or below a settled mark is
-- positioned" did not hold, and the answer below relies on it
-- (TestEveryCommitAtOrBelowTheAnsweredSeqIsPositioned saw it fail). The
-- id is taken only when a mark is written (the INSERT's row): a call that
-- writes no mark and positions nothing still takes none.
CREATE OR REPLACE FUNCTION kassa_position(lock_key bigint) RETURNS bigint
LANGUAGE plpgsql AS $$
DECLARE
  last_cseq bigint;
  waiting bigint;
BEGIN
  last_cseq := coalesce(pg_sequence_last_value('outbox_commit_seq'::regclass), 0);
  INSERT INTO seq_marks (tbl, upto, xid_bound)
    SELECT 'outbox_commits', last_cseq, pg_current_xact_id()
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

-- The calls that position the log answer how far it is positioned: the
-- highest commit seq (cseq) with positions (2026-11-29, session 20, helper
-- commitrt; docs/decisions.md). Every committed transaction whose cseq is at
-- or below it has its positions: a call positions every commit at or below
-- a settled mark (every transaction that took a number at or below it has
-- ended, so is visible to the call), in cseq order, and the calls follow
-- one another (the advisory lock); a later call positions only commits above
-- every cseq an earlier one positioned. So the commit of the highest
-- position (outbox_commits.last_pos, its unique index) has the highest cseq
-- positioned. A hub's write loop whose commit waited for its positions
-- polled kassa_positioned (migration 0012) for its own commit; now any
-- call's answer, its own after-commit call's, another write loop's, or a
-- poll's, tells every loop of the hub whether its commit is positioned
-- (seq_mark.go, marker.reached), and most commits never poll.
CREATE FUNCTION kassa_positioned_upto() RETURNS bigint
LANGUAGE sql STABLE AS $$
  SELECT coalesce((SELECT cseq FROM outbox_commits WHERE last_pos IS NOT NULL ORDER BY last_pos DESC LIMIT 1), 0)
$$;

-- kassa_after_commit (migration 0014), answering how far the log is
-- positioned once it positioned it.
CREATE FUNCTION kassa_after_commit_upto(lock_key bigint, tbls text, seqs text) RETURNS bigint
LANGUAGE plpgsql AS $$
BEGIN
  PERFORM kassa_after_commit(lock_key, tbls, seqs);
  RETURN kassa_positioned_upto();
END $$;

-- kassa_position (migration 0015), answering how far the log is positioned.
CREATE FUNCTION kassa_position_upto(lock_key bigint) RETURNS bigint
LANGUAGE plpgsql AS $$
BEGIN
  PERFORM kassa_position(lock_key);
  RETURN kassa_positioned_upto();
END $$;
