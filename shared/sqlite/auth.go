package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"math"
	"time"

	"kassa.dev/shared/kassa"
	"kassa.dev/shared/password"
	"kassa.dev/shared/ratelimit"
	"kassa.dev/shared/token"
)

// RefreshTTL is how long a first-party refresh token (and its session) lives
// without use; every refresh starts it anew. The spec leaves it open.
const RefreshTTL = 30 * 24 * time.Hour

// AuthService implements kassa.AuthService with node-local sessions: a
// session row per login holds the id (jti) of its one valid refresh token.
type AuthService struct {
	db     *DB
	signer *token.Signer

	// Logins are throttled per client address (ip) and for the node as a
	// whole (global), and locked by account and address after failures
	// (kassa.LockoutDelay). Password hashing itself is bounded by package
	// password's slots.
	ip      LoginThrottle
	global  *ratelimit.Limiter
	lockout LoginLockout

	// Rehash stores a new hash, made with password.Params, when a user logs
	// in with a hash made with other parameters. Only a node where users are
	// written (the hub) should: an edge's users are the hub's replicas.
	Rehash bool
}

// LoginThrottle takes one login attempt of a key: the in-memory
// *ratelimit.Limiter, or the database's buckets on hubs sharing one
// PostgreSQL (ShareThrottles).
type LoginThrottle interface {
	Take(key string) ratelimit.Result
}

// LoginLockout counts a key's failed logins: the in-memory
// *ratelimit.Lockout, or the database's on hubs sharing one PostgreSQL.
type LoginLockout interface {
	Locked(key string) time.Duration
	Fail(key string) time.Duration
	Reset(key string)
}

// ShareThrottles replaces the per-address throttle and the lockout with
// ones every hub on the database shares, so failures split across the hubs
// count once. The node-wide throttle stays this process's: it bounds this
// machine's password hashing. Called before the node serves.
func (s *AuthService) ShareThrottles(ip LoginThrottle, lockout LoginLockout) {
	s.ip, s.lockout = ip, lockout
}

// LoginLimits are the login throttles: attempts a minute and at once, from
// all addresses together and from one client address.
type LoginLimits struct {
	PerMinute, Burst     int
	IPPerMinute, IPBurst int
}

// NewAuthService returns the auth service of db with the given throttles.
func NewAuthService(db *DB, signer *token.Signer, l LoginLimits) *AuthService {
	return &AuthService{db: db, signer: signer,
		ip:      ratelimit.New(l.IPPerMinute, l.IPBurst, db.Now),
		global:  ratelimit.New(l.PerMinute, l.Burst, db.Now),
		lockout: ratelimit.NewLockout(kassa.LockoutDelay, db.Now),
	}
}

var _ kassa.AuthService = (*AuthService)(nil)

var errBadLogin = kassa.Errorf(kassa.EUnauthorized, "e-mail or password is wrong")

func rateLimited(msg string, d time.Duration) error {
	return &kassa.Error{Kind: kassa.ERateLimited, Message: msg, RetryAfter: max(1, int(math.Ceil(d.Seconds())))}
}

// Login checks the credentials and opens a session; addr is the client's
// address. Errors: EUnauthorized (the same for an unknown e-mail and a
// wrong password), ERateLimited (throttled, locked out for this address,
// or every password slot busy).
func (s *AuthService) Login(ctx context.Context, email, pw, addr string) (*kassa.Tokens, error) {
	email = kassa.NormalizeEmail(email)
	if err := s.throttle(addr); err != nil {
		return nil, err
	}
	key := email + "\x00" + addr
	if d := s.lockout.Locked(key); d > 0 {
		return nil, rateLimited("too many failed logins for this account from this address", d)
	}
	var id, orgID, hash string
	var active bool
	err := s.db.Reader.QueryRowContext(ctx, `SELECT id, org_id, password_hash, is_active FROM users WHERE email = ?`, email).
		Scan(&id, &orgID, &hash, &active)
	var ok, stale bool
	switch {
	case errors.Is(err, sql.ErrNoRows):
		// An unknown e-mail costs a check and counts towards the lockout
		// like a known one, so neither tells which addresses have accounts.
		err = password.CheckMissing(ctx, pw)
	case err == nil:
		ok, stale, err = password.Verify(ctx, pw, hash)
	}
	if errors.Is(err, password.ErrBusy) {
		return nil, rateLimited("the node is busy checking passwords", time.Second)
	}
	if err != nil {
		return nil, err
	}
	if !ok || !active {
		if d := s.lockout.Fail(key); d > 0 {
			return nil, rateLimited("too many failed logins for this account from this address", d)
		}
		return nil, errBadLogin
	}
	s.lockout.Reset(key)
	if stale && s.Rehash {
		s.rehash(ctx, orgID, id, pw)
	}
	return s.open(ctx, orgID, id)
}

// throttle takes a login attempt from addr and from the node.
func (s *AuthService) throttle(addr string) error {
	if r := s.ip.Take(addr); !r.Allowed {
		return rateLimited("too many login attempts from this address", r.RetryAfter)
	}
	if r := s.global.Take(""); !r.Allowed {
		return rateLimited("too many login attempts at this node", r.RetryAfter)
	}
	return nil
}

// open opens a session for a user who signed in and issues its tokens.
// A sign-in with the password also ends a PIN lockout (pin_failures).
func (s *AuthService) open(ctx context.Context, orgID, id string) (*kassa.Tokens, error) {
	u, err := findUser(ctx, s.db.Reader, orgID, id)
	if err != nil {
		return nil, err
	}
	sid, jti := s.db.NewID(), s.db.NewID()
	now := s.db.Now()
	err = s.db.Write(ctx, func(tx *Tx) error {
		_, err := tx.ExecContext(ctx, `INSERT INTO sessions (id, org_id, user_id, refresh_jti, created_at, expires_at) VALUES (?, ?, ?, ?, ?, ?)`,
			sid, orgID, id, jti, fmtTime(now), fmtTime(now.Add(RefreshTTL)))
		if err == nil {
			_, err = tx.ExecContext(ctx, `DELETE FROM pin_failures WHERE user_id = ?`, id)
		}
		return err
	})
	if err != nil {
		return nil, err
	}
	return s.issue(u, sid, jti)
}

var (
	errBadPIN    = kassa.Errorf(kassa.EUnauthorized, "user or PIN is wrong")
	errPINLocked = kassa.Errorf(kassa.EUnauthorized, "this PIN is locked after too many wrong tries: sign in with the password, or have a manager set a new PIN")
)

// PINLogin signs a user in with their PIN (docs/staff.md), throttled and
// locked by user and address like Login, and bounded per user and node:
// after kassa.PINMaxFailures wrong PINs in a row the PIN stops working
// here (errPINLocked) until a new PIN is set or the password signs in. At
// an enrolled edge only staff who work at its location sign in by PIN.
// The PIN is compared as a hash (password.Verify, constant time); an
// unknown user or one without a PIN costs a check like a known one.
func (s *AuthService) PINLogin(ctx context.Context, userID, pin, addr string) (*kassa.Tokens, error) {
	if err := s.throttle(addr); err != nil {
		return nil, err
	}
	key := "pin\x00" + userID + "\x00" + addr
	if d := s.lockout.Locked(key); d > 0 {
		return nil, rateLimited("too many wrong PINs for this user from this address", d)
	}
	u, hash, failures, err := s.pinOf(ctx, userID)
	if err != nil {
		return nil, err
	}
	var ok bool
	if u == nil || hash == "" || failures >= kassa.PINMaxFailures {
		err = password.CheckMissing(ctx, pin)
	} else {
		ok, _, err = password.Verify(ctx, pin, hash)
	}
	if errors.Is(err, password.ErrBusy) {
		return nil, rateLimited("the node is busy checking passwords", time.Second)
	}
	if err != nil {
		return nil, err
	}
	if ok {
		s.lockout.Reset(key)
		return s.open(ctx, u.OrgID, u.ID)
	}
	return nil, s.pinFailed(ctx, key, u, failures)
}

// pinOf reads who may sign in by PIN as userID at this node, their PIN
// hash and failures here; a nil user for none (unknown, deactivated, or
// at an enrolled edge not working at its location).
func (s *AuthService) pinOf(ctx context.Context, userID string) (*kassa.User, string, int, error) {
	var orgID, hash string
	var failures int
	err := s.db.Reader.QueryRowContext(ctx, `SELECT org_id, pin_hash, coalesce((SELECT failures FROM pin_failures WHERE user_id = u.id), 0)
		FROM users u WHERE id = ? AND is_active = 1`, userID).Scan(&orgID, &hash, &failures)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, "", 0, nil
	}
	if err != nil {
		return nil, "", 0, err
	}
	u, err := findUser(ctx, s.db.Reader, orgID, userID)
	if err != nil || !s.db.UnderHub.Load() {
		return u, hash, failures, err
	}
	loc, err := s.db.Meta(ctx, MetaEdgeLocation)
	if err != nil || !staffOf(u).Covers([]string{loc}) {
		return nil, "", 0, err
	}
	return u, hash, failures, nil
}

// pinFailed counts a wrong PIN: towards the lockout by user and address,
// and in pin_failures for a known user.
func (s *AuthService) pinFailed(ctx context.Context, key string, u *kassa.User, failures int) error {
	if u != nil && failures < kassa.PINMaxFailures {
		err := s.db.Exec(ctx, `INSERT INTO pin_failures (user_id, failures) VALUES (?, 1)
			ON CONFLICT (user_id) DO UPDATE SET failures = pin_failures.failures + 1`, u.ID)
		if err != nil {
			return err
		}
	}
	if u != nil && failures+1 >= kassa.PINMaxFailures {
		return errPINLocked
	}
	if d := s.lockout.Fail(key); d > 0 {
		return rateLimited("too many wrong PINs for this user from this address", d)
	}
	return errBadPIN
}

// hashPassword hashes a new password. Errors: ERateLimited when every
// hashing slot stayed busy (password.ErrBusy).
func hashPassword(pw string) (string, error) {
	h, err := password.Hash(pw)
	if errors.Is(err, password.ErrBusy) {
		return "", rateLimited("the node is busy hashing passwords", time.Second)
	}
	return h, err
}

// rehash replaces a user's hash made with old parameters by one made with
// password.Params (a replicated change, so edges get it). It is best
// effort: a busy pool or a failed write leaves the old hash, which still
// verifies, for the next login.
func (s *AuthService) rehash(ctx context.Context, orgID, id, pw string) {
	h, err := hashPassword(pw)
	if err != nil {
		return
	}
	s.db.Write(ctx, func(tx *Tx) error {
		return tx.Update(ctx, entUser, orgID, id, map[string]any{"password_hash": h})
	})
}

func (s *AuthService) issue(u *kassa.User, sid, jti string) (*kassa.Tokens, error) {
	access, err := s.signer.Issue(token.TypeAccess, u.ID, u.OrgID, string(u.Role), sid, s.db.NewID(), token.AccessTTL)
	if err != nil {
		return nil, err
	}
	refresh, err := s.signer.Issue(token.TypeRefresh, u.ID, u.OrgID, "", sid, jti, RefreshTTL)
	if err != nil {
		return nil, err
	}
	return &kassa.Tokens{AccessToken: access, RefreshToken: refresh, ExpiresIn: int(token.AccessTTL.Seconds()), User: u}, nil
}

var errBadRefresh = kassa.Errorf(kassa.EUnauthorized, "refresh token is invalid, expired or revoked")

// Refresh rotates a refresh token: the presented one stops working and a new
// pair is issued. Presenting an already used refresh token revokes the
// whole session, since it means the token leaked. Errors: EUnauthorized.
func (s *AuthService) Refresh(ctx context.Context, raw string) (*kassa.Tokens, error) {
	c, err := s.signer.Parse(token.TypeRefresh, raw)
	if err != nil {
		return nil, errBadRefresh
	}
	newJTI := s.db.NewID()
	now := s.db.Now()
	var userID, orgID string
	err = s.db.Write(ctx, func(tx *Tx) error {
		var current string
		var revoked sql.NullString
		var expires string
		err := tx.QueryRowContext(ctx, `SELECT user_id, org_id, refresh_jti, revoked_at, expires_at FROM sessions WHERE id = ?`, c.SessionID).
			Scan(&userID, &orgID, &current, &revoked, &expires)
		if errors.Is(err, sql.ErrNoRows) || err == nil && (revoked.Valid || parseTime(expires).Before(now)) {
			return errBadRefresh
		}
		if err != nil {
			return err
		}
		if current != c.ID {
			// Reuse of a rotated token: revoke the family, commit that, refuse.
			if _, err := tx.ExecContext(ctx, `UPDATE sessions SET revoked_at = ? WHERE id = ?`, fmtTime(now), c.SessionID); err != nil {
				return err
			}
			return nil
		}
		_, err = tx.ExecContext(ctx, `UPDATE sessions SET refresh_jti = ?, expires_at = ? WHERE id = ?`, newJTI, fmtTime(now.Add(RefreshTTL)), c.SessionID)
		return err
	})
	if orgID != "" {
		s.sessionsEnded(orgID) // a reused token's family was revoked
	}
	if err != nil {
		return nil, err
	}
	u, err := findUser(ctx, s.db.Reader, orgID, userID)
	if err != nil {
		return nil, errBadRefresh
	}
	if !s.sessionCurrent(ctx, c.SessionID, newJTI) || !u.IsActive {
		return nil, errBadRefresh
	}
	return s.issue(u, c.SessionID, newJTI)
}

func (s *AuthService) sessionCurrent(ctx context.Context, sid, jti string) bool {
	var n int
	err := s.db.Reader.QueryRowContext(ctx, `SELECT count(*) FROM sessions WHERE id = ? AND refresh_jti = ? AND revoked_at IS NULL`, sid, jti).Scan(&n)
	return err == nil && n == 1
}

// Logout revokes the caller's session: its access and refresh tokens stop working.
func (s *AuthService) Logout(ctx context.Context) error {
	a, err := kassa.MustActor(ctx)
	if err != nil {
		return err
	}
	if a.SessionID == "" {
		return kassa.Errorf(kassa.EBadRequest, "this token has no session to log out of")
	}
	err = s.db.Exec(ctx, `UPDATE sessions SET revoked_at = ? WHERE id = ? AND org_id = ? AND revoked_at IS NULL`,
		fmtTime(s.db.Now()), a.SessionID, a.OrgID)
	s.sessionsEnded(a.OrgID)
	return err
}

var errBadToken = kassa.Errorf(kassa.EUnauthorized, "access token is invalid, expired or revoked")

// errNoOrg: a token signed here that names no org (spec part 7's wording).
var errNoOrg = kassa.Errorf(kassa.EUnauthorized, "missing orgId in token")

// Authenticate checks an access token, that its session is open and its
// user active, and builds the actor from the user's current role, not the
// token's claim: a demotion or a deactivation takes effect on the next
// request. One query per request (sessions joined with users).
func (s *AuthService) Authenticate(ctx context.Context, raw string) (*kassa.Actor, error) {
	c, err := s.signer.Parse(token.TypeAccess, raw)
	if errors.Is(err, token.ErrNoOrg) {
		return nil, errNoOrg
	}
	if err != nil {
		return nil, errBadToken
	}
	role, err := s.sessionRole(ctx, c.SessionID, c.Subject, c.OrgID)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, errBadToken
	}
	if err != nil {
		return nil, err
	}
	return &kassa.Actor{OrgID: c.OrgID, UserID: c.Subject, Role: role, SessionID: c.SessionID, Scopes: kassa.RoleScopes(role)}, nil
}

// sessionRole is the role of user userID of org orgID while session sid
// is open and the user active (sql.ErrNoRows: not so), from the session
// cache when it holds it (sessionCache).
func (s *AuthService) sessionRole(ctx context.Context, sid, userID, orgID string) (kassa.Role, error) {
	cache := sessionsIn(s.db)
	if cache == nil {
		return s.readSessionRole(ctx, sid, userID, orgID)
	}
	if role, ok := cache.role(sid, userID, orgID); ok {
		return role, nil
	}
	gen := cache.generation(orgID)
	role, err := s.readSessionRole(ctx, sid, userID, orgID)
	if err == nil {
		cache.keep(sid, sessionSeen{userID: userID, orgID: orgID, role: role, gen: gen})
	}
	return role, err
}

func (s *AuthService) readSessionRole(ctx context.Context, sid, userID, orgID string) (kassa.Role, error) {
	var role kassa.Role
	err := s.db.Reader.QueryRowContext(ctx, `SELECT u.role FROM sessions s JOIN users u ON u.id = s.user_id
		WHERE s.id = ? AND s.user_id = ? AND s.org_id = ? AND u.org_id = ? AND s.revoked_at IS NULL AND u.is_active = 1`,
		sid, userID, orgID, orgID).Scan(&role)
	return role, err
}

// sessionsEnded tells the session cache that a committed write ended or
// may have ended sessions of orgID.
func (s *AuthService) sessionsEnded(orgID string) {
	if cache := sessionsIn(s.db); cache != nil {
		cache.ended(orgID)
	}
}

// Me returns the caller's user.
func (s *AuthService) Me(ctx context.Context) (*kassa.User, error) {
	a, err := kassa.MustActor(ctx)
	if err != nil {
		return nil, err
	}
	if a.UserID == "" {
		return nil, kassa.Errorf(kassa.EForbidden, "this token does not belong to a user")
	}
	return findUser(ctx, s.db.Reader, a.OrgID, a.UserID)
}
