-- What the engine's writer runs after each commit, in one round trip
-- (pg.Dialect.AfterCommit): the log's positions (log.go, Position: the
-- same UPDATE as positionSQL, under the same advisory lock, tried) and the
-- followed tables' marks (seq_mark.go). A volatile function takes a new
-- snapshot for each statement: the positions' UPDATE sees what the lock's
-- previous holder gave, and the marks' INSERT takes its bound after the
-- sequences were read, as seq_mark.go requires. tbls and seqs are the
-- followed tables and their sequences, comma-separated, in one order.
CREATE FUNCTION kassa_after_commit(lock_key bigint, tbls text, seqs text) RETURNS void
LANGUAGE plpgsql AS $$
DECLARE
  uptos bigint[];
BEGIN
  IF pg_try_advisory_xact_lock(lock_key) THEN
    WITH base AS (SELECT coalesce(max(last_pos), 0) AS b FROM outbox_commits),
      ready AS (SELECT xid, n, sum(n) OVER (ORDER BY xid) AS upto FROM outbox_commits
        WHERE last_pos IS NULL AND xid < pg_snapshot_xmin(pg_current_snapshot()))
    UPDATE outbox_commits c SET first_pos = base.b + ready.upto - ready.n + 1, last_pos = base.b + ready.upto
    FROM base, ready WHERE c.xid = ready.xid;
  END IF;
  IF tbls = '' THEN
    RETURN;
  END IF;
  SELECT array_agg(coalesce(pg_sequence_last_value(s::regclass), 0) ORDER BY i) INTO uptos
    FROM unnest(string_to_array(seqs, ',')) WITH ORDINALITY AS x(s, i);
  INSERT INTO seq_marks (tbl, upto, xid_bound)
    SELECT t, u, pg_snapshot_xmax(pg_current_snapshot()) FROM unnest(string_to_array(tbls, ','), uptos) AS x(t, u);
END $$;
