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
