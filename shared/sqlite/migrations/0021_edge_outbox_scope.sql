-- Kassa schema, part 21: no outbox_scope at an edge. Migration 0015 of
-- v0.6.0 created the index at every node; 0015 was edited afterwards to
-- leave it to the hub (hubIndexes, made by sqlite.Open after the
-- migrations), but a store that had run 0015 already keeps it, so an
-- upgraded edge paid an index write per sale's outbox row for nothing and
-- had another schema than a fresh one. Dropped at every node: a hub makes
-- it again at the same start (a one-time rebuild over its outbox). An
-- index is no column: the change-record format does not move.
DROP INDEX IF EXISTS outbox_scope;
