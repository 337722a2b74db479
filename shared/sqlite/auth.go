package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"math"
	"sync"
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
	guard  *ratelimit.Limiter // login attempts per account

	// open caches sessions found open (session id → time checked) for
	// sessionTTL, so that not every request reads the sessions table.
	// Sessions are node-local and this service is the only one to revoke
	// them, and it drops the entry when it does: a logout takes effect at
	// once. A user deactivated elsewhere is refused within sessionTTL.
	open sync.Map
}

const sessionTTL = 5 * time.Second

// NewAuthService returns the auth service of db. Login attempts are limited
// per e-mail address to loginBurst at once, refilled at loginPerMinute.
func NewAuthService(db *DB, signer *token.Signer, loginPerMinute, loginBurst int) *AuthService {
	return &AuthService{db: db, signer: signer, guard: ratelimit.New(loginPerMinute, loginBurst, db.Now)}
}

var _ kassa.AuthService = (*AuthService)(nil)

var errBadLogin = kassa.Errorf(kassa.EUnauthorized, "e-mail or password is wrong")

// Login checks the credentials and opens a session. Errors: EUnauthorized
// (the same for an unknown e-mail and a wrong password), ERateLimited.
func (s *AuthService) Login(ctx context.Context, email, pw string) (*kassa.Tokens, error) {
	email = kassa.NormalizeEmail(email)
	if r := s.guard.Take(email); !r.Allowed {
		return nil, &kassa.Error{Kind: kassa.ERateLimited, Message: "too many login attempts for this account",
			RetryAfter: int(math.Ceil(r.RetryAfter.Seconds()))}
	}
	var id, orgID, hash string
	var active bool
	err := s.db.reader.QueryRowContext(ctx, `SELECT id, org_id, password_hash, is_active FROM users WHERE email = ?`, email).
		Scan(&id, &orgID, &hash, &active)
	if errors.Is(err, sql.ErrNoRows) {
		password.CheckMissing(pw)
		return nil, errBadLogin
	}
	if err != nil {
		return nil, err
	}
	if !password.Check(pw, hash) || !active {
		return nil, errBadLogin
	}
	u, err := findUser(ctx, s.db.reader, orgID, id)
	if err != nil {
		return nil, err
	}
	sid, jti := s.db.NewID(), s.db.NewID()
	now := s.db.Now()
	err = s.db.exec(ctx, `INSERT INTO sessions (id, org_id, user_id, refresh_jti, created_at, expires_at) VALUES (?, ?, ?, ?, ?, ?)`,
		sid, orgID, id, jti, fmtTime(now), fmtTime(now.Add(RefreshTTL)))
	if err != nil {
		return nil, err
	}
	return s.issue(u, sid, jti)
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
	err = s.db.write(ctx, func(tx *Tx) error {
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
			s.open.Delete(c.SessionID)
			if _, err := tx.ExecContext(ctx, `UPDATE sessions SET revoked_at = ? WHERE id = ?`, fmtTime(now), c.SessionID); err != nil {
				return err
			}
			return nil
		}
		_, err = tx.ExecContext(ctx, `UPDATE sessions SET refresh_jti = ?, expires_at = ? WHERE id = ?`, newJTI, fmtTime(now.Add(RefreshTTL)), c.SessionID)
		return err
	})
	if err != nil {
		return nil, err
	}
	s.open.Delete(c.SessionID)
	u, err := findUser(ctx, s.db.reader, orgID, userID)
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
	err := s.db.reader.QueryRowContext(ctx, `SELECT count(*) FROM sessions WHERE id = ? AND refresh_jti = ? AND revoked_at IS NULL`, sid, jti).Scan(&n)
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
	s.open.Delete(a.SessionID)
	err = s.db.exec(ctx, `UPDATE sessions SET revoked_at = ? WHERE id = ? AND org_id = ? AND revoked_at IS NULL`,
		fmtTime(s.db.Now()), a.SessionID, a.OrgID)
	s.open.Delete(a.SessionID) // a request may have cached it meanwhile
	return err
}

var errBadToken = kassa.Errorf(kassa.EUnauthorized, "access token is invalid, expired or revoked")

// Authenticate checks an access token and that its session is still open.
func (s *AuthService) Authenticate(ctx context.Context, raw string) (*kassa.Actor, error) {
	c, err := s.signer.Parse(token.TypeAccess, raw)
	if err != nil {
		return nil, errBadToken
	}
	if at, ok := s.open.Load(c.SessionID); !ok || s.db.Now().Sub(at.(time.Time)) > sessionTTL {
		var n int
		err = s.db.reader.QueryRowContext(ctx, `SELECT count(*) FROM sessions s JOIN users u ON u.id = s.user_id
			WHERE s.id = ? AND s.user_id = ? AND s.revoked_at IS NULL AND u.is_active = 1`, c.SessionID, c.Subject).Scan(&n)
		if err != nil {
			return nil, err
		}
		if n != 1 {
			s.open.Delete(c.SessionID)
			return nil, errBadToken
		}
		s.open.Store(c.SessionID, s.db.Now())
	}
	role := kassa.Role(c.Role)
	return &kassa.Actor{OrgID: c.OrgID, UserID: c.Subject, Role: role, SessionID: c.SessionID, Scopes: kassa.RoleScopes(role)}, nil
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
	return findUser(ctx, s.db.reader, a.OrgID, a.UserID)
}
