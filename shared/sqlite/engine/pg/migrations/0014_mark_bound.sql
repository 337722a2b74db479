-- The followed tables' marks (seq_mark.go), two changes (2026-11-29,
-- session 19, docs/decisions.md):
--
-- The bound is the marking transaction's own id, taken after the sequences
-- were read. Until now it was pg_snapshot_xmax, one past the latest
-- COMPLETED transaction, not the next id to be given: a transaction that
-- began after the latest completed one (a higher id) and took a seq still
-- ran with an id at or above the bound, and once it was the oldest running
-- (the reader's xmin equal to the bound) a reader took the mark as settled
-- and read past its row (TestAFollowedSeqIsNeverPassedByALaterTransactionsRow).
-- Ids are given in order: every transaction that holds a seq at or below
-- upto took its id before its seq (BeginSQL), so before the sequences were
-- read, so before this transaction's id.
--
-- A table whose sequence did not move past a mark already there gets no
-- new mark: a visible mark (u', x') with u' >= upto was committed before
-- this statement, its bound taken before this transaction's id, so every
-- reader that could take the new mark (bound <= its xmin) takes that one,
-- as high or higher. The mark it would have written changes no reader's
-- answer. The index seq_marks_tbl (tbl, upto) answers the check.
CREATE OR REPLACE FUNCTION kassa_after_commit(lock_key bigint, tbls text, seqs text) RETURNS bigint
LANGUAGE plpgsql AS $$
DECLARE
  uptos bigint[];
BEGIN
  IF tbls <> '' THEN
    SELECT array_agg(coalesce(pg_sequence_last_value(s::regclass), 0) ORDER BY i) INTO uptos
      FROM unnest(string_to_array(seqs, ',')) WITH ORDINALITY AS x(s, i);
    INSERT INTO seq_marks (tbl, upto, xid_bound)
      SELECT t, u, pg_current_xact_id() FROM unnest(string_to_array(tbls, ','), uptos) AS x(t, u)
      WHERE NOT EXISTS (SELECT 1 FROM seq_marks m WHERE m.tbl = x.t AND m.upto >= x.u);
  END IF;
  RETURN kassa_position(lock_key);
END $$;
