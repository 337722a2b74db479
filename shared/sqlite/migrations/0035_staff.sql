-- Kassa schema, part 35: staff management (docs/staff.md).
--
-- users gains the locations a staff member works at and a hashed PIN for
-- quick sign-in at a till (both replicate: change-record format 5). An
-- empty location list is the whole org (owners, and every user made
-- before this migration). pin_hash is '' for no PIN.
ALTER TABLE users ADD COLUMN location_ids TEXT NOT NULL DEFAULT '[]';
ALTER TABLE users ADD COLUMN pin_hash TEXT NOT NULL DEFAULT '';

-- Failed PIN sign-ins per user at this node (node-local, not replicated):
-- after kassa.PINMaxFailures in a row the PIN stops working here until a
-- new PIN is set or the user signs in with their password.
CREATE TABLE pin_failures (
  user_id  TEXT PRIMARY KEY,
  failures INTEGER NOT NULL
) STRICT;

-- A deactivation revokes the user's sessions at every node: here when it
-- is made, at the other node when it is applied there (sessions are
-- node-local), so a later reactivation does not bring old tokens back.
CREATE TRIGGER users_deactivated_revoke AFTER UPDATE OF is_active ON users
WHEN OLD.is_active = 1 AND NEW.is_active = 0
BEGIN
  UPDATE sessions SET revoked_at = strftime('%Y-%m-%dT%H:%M:%fZ', 'now')
  WHERE user_id = NEW.id AND revoked_at IS NULL;
END;

-- A new PIN, set here or applied from the other node, ends a PIN lockout.
CREATE TRIGGER users_pin_set AFTER UPDATE OF pin_hash ON users
BEGIN
  DELETE FROM pin_failures WHERE user_id = NEW.id;
END;
