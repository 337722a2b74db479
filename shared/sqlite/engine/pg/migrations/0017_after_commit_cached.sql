-- The after-commit call in one plpgsql function whose statements keep
-- their plans (2026-11-29, session 21, helper pgcpu3; docs/decisions.md,
-- docs/performance.md "PostgreSQL's CPU a push (session 21, helper
-- pgcpu3)"). At the ingest bench kassa_after_commit_upto cost ~230 µs of
-- PostgreSQL's CPU a call: three plpgsql functions deep (0016 -> 0014 ->
-- 0015), and its answer came from kassa_positioned_upto, a LANGUAGE sql
-- function that PostgreSQL does not inline (its body has a subquery) and
-- so parsed and planned at every call. Now:
--
--   - one statement reads every sequence, the followed tables' and the
--     log's commit sequence (outbox_commit_seq), and writes every mark
--     (the followed tables' and the log's own, 0014 and 0015's skip: none
--     where a visible mark of the table is as high), its bound the call's
--     own id (0014, 0016), taken by the first mark's row. The sequences
--     are read by an aggregate (array_agg) whose array the rows are made
--     from: every sequence is read before the first row exists, so before
--     the id is taken, whatever the plan. Until now the log's sequence
--     was read after the followed tables' marks were written, so after
--     the call had taken its id when one was written: a writer that began
--     after that id and took its cseq before the read was at or below the
--     log's mark and not below its bound, the case 0016 fixed for the
--     bound itself;
--   - the positions' UPDATE returns the commit seqs it positioned, and the
--     same statement reads the highest positioned one before it (the
--     commit of the highest last_pos): the answer (0016) is the highest of
--     those, since positions go in cseq order under the lock. Only a call
--     that finds the lock taken reads it in a statement of its own
--     (kassa_positioned_upto, now plpgsql: its plan kept);
--   - kassa_position (seq_mark.go's positionAgain, pg.Position) runs the
--     same call with no followed tables and then counts what waits, as
--     before; kassa_position_upto is that call.
--
-- Each statement of a volatile plpgsql function takes a snapshot of its
-- own, so the marks' INSERT sees the marks committed before it, and the
-- UPDATE sees the mark just written and what the lock's previous holder
-- positioned. kassa_after_commit (0014) and kassa_positioned (0012) stay
-- for a hub binary of before this migration; none calls them now.
CREATE OR REPLACE FUNCTION kassa_positioned_upto() RETURNS bigint
LANGUAGE plpgsql STABLE AS $$
BEGIN
  RETURN coalesce((SELECT cseq FROM outbox_commits WHERE last_pos IS NOT NULL ORDER BY last_pos DESC LIMIT 1), 0);
END $$;

CREATE OR REPLACE FUNCTION kassa_after_commit_upto(lock_key bigint, tbls text, seqs text) RETURNS bigint
LANGUAGE plpgsql AS $$
DECLARE
  ts text[] := string_to_array(tbls, ',') || 'outbox_commits'::text;
  answer bigint;
BEGIN
  WITH r AS (SELECT array_agg(coalesce(pg_sequence_last_value(s), 0) ORDER BY i) AS uptos
      FROM unnest(array(SELECT x::regclass FROM unnest(string_to_array(seqs, ',')) AS x) || 'outbox_commit_seq'::regclass)
        WITH ORDINALITY AS q(s, i))
  INSERT INTO seq_marks (tbl, upto, xid_bound)
    SELECT x.t, x.u, pg_current_xact_id() FROM r, unnest(ts, r.uptos) AS x(t, u)
    WHERE NOT EXISTS (SELECT 1 FROM seq_marks m WHERE m.tbl = x.t AND m.upto >= x.u);
  IF NOT pg_try_advisory_xact_lock(lock_key) THEN
    RETURN kassa_positioned_upto();
  END IF;
  WITH top AS (SELECT c.last_pos, c.cseq FROM outbox_commits c WHERE c.last_pos IS NOT NULL ORDER BY c.last_pos DESC LIMIT 1),
    base AS (SELECT coalesce((SELECT top.last_pos FROM top), 0) AS b),
    settled AS (SELECT coalesce(max(m.upto), 0) AS u FROM seq_marks m
      WHERE m.tbl = 'outbox_commits' AND m.xid_bound <= pg_snapshot_xmin(pg_current_snapshot())),
    ready AS (SELECT c.xid, c.n, sum(c.n) OVER (ORDER BY c.cseq) AS upto FROM outbox_commits c, settled
      WHERE c.last_pos IS NULL AND c.cseq <= settled.u),
    moved AS (UPDATE outbox_commits c SET first_pos = base.b + ready.upto - ready.n + 1, last_pos = base.b + ready.upto
      FROM base, ready WHERE c.xid = ready.xid RETURNING c.cseq)
  SELECT coalesce((SELECT max(moved.cseq) FROM moved), (SELECT top.cseq FROM top), 0) INTO answer;
  RETURN answer;
END $$;

CREATE OR REPLACE FUNCTION kassa_position_upto(lock_key bigint) RETURNS bigint
LANGUAGE plpgsql AS $$
BEGIN
  RETURN kassa_after_commit_upto(lock_key, '', '');
END $$;

-- It returns how many committed transactions still wait for a position,
-- or -1 when another hub held the lock (an advisory lock taken twice in a
-- transaction is held twice: the second try answers as the first did,
-- unless the other hub let go between them, when the count says what
-- waits).
CREATE OR REPLACE FUNCTION kassa_position(lock_key bigint) RETURNS bigint
LANGUAGE plpgsql AS $$
BEGIN
  PERFORM kassa_after_commit_upto(lock_key, '', '');
  IF NOT pg_try_advisory_xact_lock(lock_key) THEN
    RETURN -1;
  END IF;
  RETURN (SELECT count(*) FROM outbox_commits WHERE last_pos IS NULL);
END $$;
