-- Kassa schema, part 8: the OAuth 2.0 authorization server (hub only).
--
-- Node-local tables: never change-captured, never replicated, and refused
-- by the trust boundary if an edge pushed them (they have no edgeRules
-- entry). Codes, tokens and client secrets are stored only as the
-- lower-case hex SHA-256 of the value handed out (32 random bytes each).

-- oauth_apps: a registered confidential client of its owner org; id is
-- the client_id.
CREATE TABLE oauth_apps (
  id            TEXT PRIMARY KEY,
  org_id        TEXT NOT NULL REFERENCES orgs(id),
  name          TEXT NOT NULL,
  redirect_uris TEXT NOT NULL, -- JSON array of strings
  scopes        TEXT NOT NULL, -- JSON array of scopes
  secret_hash   TEXT NOT NULL,
  created_by    TEXT NOT NULL,
  created_at    TEXT NOT NULL,
  updated_at    TEXT NOT NULL
) STRICT;
CREATE INDEX oauth_apps_org ON oauth_apps(org_id, id);

-- oauth_grants: a token family. One per code exchange (user_id: the
-- merchant who consented, org_id: theirs) or client_credentials issue
-- (user_id NULL, the app owner's org). Revoking it revokes every token in it.
CREATE TABLE oauth_grants (
  id         TEXT PRIMARY KEY,
  client_id  TEXT NOT NULL REFERENCES oauth_apps(id) ON DELETE CASCADE,
  org_id     TEXT NOT NULL REFERENCES orgs(id),
  user_id    TEXT REFERENCES users(id),
  scopes     TEXT NOT NULL, -- space-separated
  created_at TEXT NOT NULL,
  revoked_at TEXT
) STRICT;
CREATE INDEX oauth_grants_org ON oauth_grants(org_id, client_id);
CREATE INDEX oauth_grants_client ON oauth_grants(client_id);

-- oauth_codes: authorization codes; grant_id is set when the code is
-- consumed (the family it issued, revoked on a replay).
CREATE TABLE oauth_codes (
  hash         TEXT PRIMARY KEY,
  client_id    TEXT NOT NULL REFERENCES oauth_apps(id) ON DELETE CASCADE,
  org_id       TEXT NOT NULL REFERENCES orgs(id),
  user_id      TEXT NOT NULL REFERENCES users(id),
  redirect_uri TEXT NOT NULL,
  scopes       TEXT NOT NULL,
  created_at   TEXT NOT NULL,
  expires_at   TEXT NOT NULL,
  consumed_at  TEXT,
  grant_id     TEXT REFERENCES oauth_grants(id) ON DELETE CASCADE
) STRICT;
CREATE INDEX oauth_codes_client ON oauth_codes(client_id);

-- oauth_tokens: access and refresh tokens. parent is the refresh token
-- (hash) a pair was rotated from; used_at marks a rotated refresh token.
CREATE TABLE oauth_tokens (
  hash       TEXT PRIMARY KEY,
  kind       TEXT NOT NULL CHECK (kind IN ('access', 'refresh')),
  grant_id   TEXT NOT NULL REFERENCES oauth_grants(id) ON DELETE CASCADE,
  client_id  TEXT NOT NULL,
  org_id     TEXT NOT NULL,
  user_id    TEXT,
  scopes     TEXT NOT NULL,
  parent     TEXT,
  created_at TEXT NOT NULL,
  expires_at TEXT, -- NULL for refresh tokens: they live until used or revoked
  used_at    TEXT,
  revoked_at TEXT
) STRICT;
CREATE INDEX oauth_tokens_grant ON oauth_tokens(grant_id);
