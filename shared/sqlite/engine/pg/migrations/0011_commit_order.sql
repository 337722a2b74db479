-- The log's order is its commits' causal order, not their transaction ids'
-- (docs/postgres.md, "The log's order from the database", 2026-11-29).
-- A transaction takes its id when it begins (the writer's BeginSQL), and a
-- hub's writer lets units queued while a batch runs join it: a unit that
-- read what another hub committed a moment ago (an edge's next push after
-- that hub's acknowledgement) can commit under a LOWER id than the commit
-- it read. Positioned by id, its records came first and an edge pulled an
-- order's change before the order (the failover test saw it). So each
-- transaction takes a number from outbox_commit_seq after its last write to
-- the log (cseq: the writer inserts its outbox_commits row just before the
-- COMMIT, Dialect.LogCommitSQL; pg.Append, for tests, takes one at each
-- call and keeps the last): a record written after reading a commit takes a
-- number above that commit's. Positions go in cseq order, and only up to a
-- settled mark of the sequence (seq_marks, tbl 'outbox_commits', as
-- seq_mark.go marks the followed tables): every transaction that took a
-- number at or below it has ended.
CREATE SEQUENCE outbox_commit_seq;
ALTER TABLE outbox_commits ADD COLUMN cseq bigint NOT NULL DEFAULT nextval('outbox_commit_seq');
DROP INDEX outbox_commits_unpositioned;
CREATE INDEX outbox_commits_unpositioned ON outbox_commits (cseq) WHERE last_pos IS NULL;

-- Marks the commit sequence and gives the log's next positions (one hub at
-- a time: the advisory lock, tried). Each statement of a volatile function
-- has a snapshot of its own: the bound is taken after the sequence was read,
-- and the positions' UPDATE sees the mark just written and what the lock's
-- previous holder gave. It returns how many committed transactions still
-- wait for a position, or -1 when another hub held the lock.
CREATE FUNCTION kassa_position(lock_key bigint) RETURNS bigint
LANGUAGE plpgsql AS $$
DECLARE
  upto bigint;
  waiting bigint;
BEGIN
  upto := coalesce(pg_sequence_last_value('outbox_commit_seq'::regclass), 0);
  INSERT INTO seq_marks (tbl, upto, xid_bound) VALUES ('outbox_commits', upto, pg_snapshot_xmax(pg_current_snapshot()));
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

-- What the engine's writer runs after each commit, in one round trip: the
-- followed tables' marks (seq_mark.go), then the log's mark and positions.
DROP FUNCTION kassa_after_commit(bigint, text, text);
CREATE FUNCTION kassa_after_commit(lock_key bigint, tbls text, seqs text) RETURNS bigint
LANGUAGE plpgsql AS $$
DECLARE
  uptos bigint[];
BEGIN
  IF tbls <> '' THEN
    SELECT array_agg(coalesce(pg_sequence_last_value(s::regclass), 0) ORDER BY i) INTO uptos
      FROM unnest(string_to_array(seqs, ',')) WITH ORDINALITY AS x(s, i);
    INSERT INTO seq_marks (tbl, upto, xid_bound)
      SELECT t, u, pg_snapshot_xmax(pg_current_snapshot()) FROM unnest(string_to_array(tbls, ','), uptos) AS x(t, u);
  END IF;
  RETURN kassa_position(lock_key);
END $$;
