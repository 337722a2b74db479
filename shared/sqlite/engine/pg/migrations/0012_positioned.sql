-- Whether a commit's records have their positions, after positioning as
-- far as the log has settled (kassa_position): a hub's write loop asks it
-- after its commit until its own records are positioned, before it answers
-- the commit's callers (seq_mark.go, afterCommit). A hub runs several write
-- loops (engine Options.Writers): one loop's commit waits for the others'
-- transactions that were running as it committed, and a caller that, once
-- answered, has an edge catch up (a payment routed to the order's store)
-- finds its records in the log. Each statement of the volatile function
-- sees what the one before wrote.
CREATE FUNCTION kassa_positioned(lock_key bigint, commit_seq bigint) RETURNS boolean
LANGUAGE plpgsql AS $$
BEGIN
  PERFORM kassa_position(lock_key);
  RETURN NOT EXISTS (SELECT 1 FROM outbox_commits WHERE cseq = commit_seq AND last_pos IS NULL);
END $$;
