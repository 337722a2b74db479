-- Login throttles shared by every hub (docs/postgres.md, "Several hubs"):
-- consecutive failures per key (an account, a client address) and until
-- when the key is locked, so an attacker spreading guesses over the hubs
-- meets one count. A key with no failure for an hour starts again.
CREATE TABLE lockouts (
  key      text PRIMARY KEY,
  failures integer NOT NULL,
  last     timestamptz NOT NULL,
  until    timestamptz NOT NULL
);
