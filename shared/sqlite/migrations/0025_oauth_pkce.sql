-- Kassa schema, part 25: PKCE and public clients (issue 21).
--
-- Node-local tables (hub only, never replicated): no change-record format
-- bump. An app is confidential (holds a secret, the only kind before) or
-- public (a native or browser app: secret_hash is '' and never matches,
-- PKCE S256 is required). A code keeps the challenge of the authorization
-- request that made it (RFC 7636); its exchange must present the verifier.

ALTER TABLE oauth_apps ADD COLUMN client_type TEXT NOT NULL DEFAULT 'confidential'
  CHECK (client_type IN ('confidential', 'public'));
ALTER TABLE oauth_codes ADD COLUMN code_challenge TEXT;
ALTER TABLE oauth_codes ADD COLUMN code_challenge_method TEXT;
