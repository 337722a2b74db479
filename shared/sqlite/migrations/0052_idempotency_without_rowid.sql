-- Kassa schema, part 52: an idempotency record is one B-tree row, not two
-- (docs/write-path.md, "The order flow on a quiet spell"). As a rowid
-- table with PRIMARY KEY (scope, key), each keyed request's record wrote
-- the table and its automatic index, then rewrote the row with the kept
-- answer. WITHOUT ROWID stores the row in the key's own B-tree. Same
-- columns, same key, same queries; node-local, never replicated, so the
-- change-record format does not move. PostgreSQL has no rowid: its twin's
-- table is already this shape and needs no migration.
CREATE TABLE idempotency_keys_0052 (
  scope        TEXT NOT NULL,
  key          TEXT NOT NULL,
  fingerprint  TEXT NOT NULL,
  status       TEXT NOT NULL, -- running | done
  resp_status  INTEGER,
  content_type TEXT,
  location     TEXT,
  body         BLOB,
  created_at   TEXT NOT NULL,
  PRIMARY KEY (scope, key)
) STRICT, WITHOUT ROWID;
INSERT INTO idempotency_keys_0052 (scope, key, fingerprint, status, resp_status, content_type, location, body, created_at)
  SELECT scope, key, fingerprint, status, resp_status, content_type, location, body, created_at FROM idempotency_keys;
DROP TABLE idempotency_keys;
ALTER TABLE idempotency_keys_0052 RENAME TO idempotency_keys;
