-- How far each followed seq has settled (seq_mark.go): a mark says that
-- every row of tbl with seq <= upto took its seq before a transaction
-- numbered xid_bound began, so once no transaction below xid_bound is running
-- (xid_bound <= the oldest running one) no row at or below upto can still
-- commit. A reader that follows tbl by seq reads no further than the
-- highest such mark (pg.Dialect.Settled): events, kds_events,
-- applied_changes, every identity column named seq.
CREATE TABLE seq_marks (
  tbl  text NOT NULL,
  upto bigint NOT NULL,
  xid_bound xid8 NOT NULL
);
CREATE INDEX seq_marks_tbl ON seq_marks (tbl, upto);

-- A database that hubs already ran on: mark what is there, so that its
-- readers read it before the next commit marks it. The sequences are read
-- in one statement and the bound taken in a later one (a later
-- snapshot), as seq_mark.go does.
CREATE TEMPORARY TABLE seq_now ON COMMIT DROP AS
  SELECT c.table_name::text AS tbl,
    coalesce(pg_sequence_last_value(pg_get_serial_sequence(quote_ident(c.table_name::text), 'seq')::regclass), 0) AS upto
  FROM information_schema.columns c
  WHERE c.table_schema = current_schema() AND c.column_name = 'seq' AND c.is_identity = 'YES';
INSERT INTO seq_marks (tbl, upto, xid_bound)
  SELECT tbl, upto, pg_snapshot_xmax(pg_current_snapshot()) FROM seq_now;
