package sqlite

import (
	"context"
	"crypto/subtle"
	"database/sql"
	"encoding/json"
	"errors"
	"strings"
	"time"

	"kassa.dev/shared/kassa"
	"kassa.dev/shared/sqlite/engine"
)

// OAuthService implements kassa.OAuthService: the hub's authorization
// server. Its tables (migration 0008) are node-local — no change records,
// nothing an edge may push — except oauth_access, the replicated copy of
// each access token that lets the org's edges check bearer tokens (at an
// edge only Authenticate is served). Codes, tokens and client secrets are
// 32 random bytes handed out as 64 lower-case hex characters and stored
// only as their SHA-256; a random 32-byte secret needs no slow hash, and a
// lookup by hash compares nothing secret-dependent in Go. A token family is
// an oauth_grants row: revoking it (a replayed code, a reused refresh
// token, a revoked refresh token, a disconnect) revokes every token in it
// at once.
type OAuthService struct{ db *DB }

// NewOAuthService returns the authorization server of db.
func NewOAuthService(db *DB) *OAuthService { return &OAuthService{db: db} }

var _ kassa.OAuthService = (*OAuthService)(nil)

// entOAuthAccess is the replicated copy of each access token (table
// oauth_access): the hub writes it with the token and its revocation, and
// every edge of the org applies it, so bearer checks work at a store whose
// link to the hub is down. Bearer checks read it on both nodes.
var entOAuthAccess = new(noun)

func init() { register(entOAuthAccess, noun{Name: "oauth_access", Table: "oauth_access"}) }

// newSecret returns 32 random bytes as 64 hex characters and their hash
// (hashSecret, as enrolment tokens and leaf secrets are stored).
func newSecret() (raw, hash string) {
	raw = randomHex(32)
	return raw, hashSecret(raw)
}

const oauthAppCols = `SELECT id, org_id, name, client_type, redirect_uris, scopes, created_at, updated_at, secret_hash FROM oauth_apps`

// oauthApp is an app with its stored secret hash.
type oauthApp struct {
	kassa.OAuthApp
	secretHash string
}

func scanOAuthApp(s scanner) (*oauthApp, error) {
	var a oauthApp
	var uris, scopes, created, updated string
	if err := s.Scan(&a.ClientID, &a.OrgID, &a.Name, &a.ClientType, &uris, &scopes, &created, &updated, &a.secretHash); err != nil {
		return nil, err
	}
	a.CreatedAt, a.UpdatedAt = parseTime(created), parseTime(updated)
	if err := errors.Join(decodeJSON(uris, &a.RedirectURIs), decodeJSON(scopes, &a.Scopes)); err != nil {
		return nil, err
	}
	return &a, nil
}

func oauthAppID(a *oauthApp) string { return a.ClientID }

// findOAuthApp reads an app of the org; another org's or an unknown one is
// ENotFound. orgID "" reads any org's (clients authenticating themselves).
func findOAuthApp(ctx context.Context, q querier, orgID, clientID string) (*oauthApp, error) {
	if !kassa.ValidID(clientID) {
		return nil, kassa.NotFound("oauth app", clientID)
	}
	if orgID == "" {
		a, err := scanOAuthApp(q.QueryRowContext(ctx, oauthAppCols+` WHERE id = ?`, clientID))
		if errors.Is(err, sql.ErrNoRows) {
			return nil, kassa.NotFound("oauth app", clientID)
		}
		return a, err
	}
	return findByID(ctx, q, oauthAppCols, "oauth app", orgID, clientID, scanOAuthApp)
}

// owner returns the context's actor if it is an org's owner signed in
// first-party: apps and connections are managed by owners, never by an
// OAuth token. Errors: EUnauthorized, EForbidden.
func owner(ctx context.Context) (*kassa.Actor, error) {
	a, err := kassa.MustActor(ctx)
	if err != nil {
		return nil, err
	}
	if a.Role != kassa.RoleOwner || a.UserID == "" || a.ClientID != "" {
		return nil, kassa.Errorf(kassa.EForbidden, "only an owner signed in first-party manages OAuth apps and connections")
	}
	return a, nil
}

func mustJSON(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

// CreateApp registers an app of the owner's org and returns it with its
// client secret, shown this once; a public app gets none. Errors:
// EForbidden, EInvalid.
func (s *OAuthService) CreateApp(ctx context.Context, in *kassa.OAuthAppCreate) (*kassa.OAuthAppSecret, error) {
	a, err := owner(ctx)
	if err != nil {
		return nil, err
	}
	if err := in.Validate(); err != nil {
		return nil, err
	}
	id, now := s.db.NewID(), fmtTime(s.db.Now())
	secret, hash := newSecret()
	if in.ClientType == kassa.ClientPublic {
		secret, hash = "", "" // no secret: the empty hash matches none (client)
	}
	err = s.db.Exec(ctx, `INSERT INTO oauth_apps (id, org_id, name, client_type, redirect_uris, scopes, secret_hash, created_by, created_at, updated_at)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`, id, a.OrgID, in.Name, in.ClientType, mustJSON(in.RedirectURIs), mustJSON(in.Scopes), hash, a.UserID, now, now)
	if err != nil {
		return nil, err
	}
	app, err := findOAuthApp(ctx, s.db.Reader, a.OrgID, id)
	if err != nil {
		return nil, err
	}
	return &kassa.OAuthAppSecret{OAuthApp: app.OAuthApp, ClientSecret: secret}, nil
}

// ListApps lists the owner's org's apps.
func (s *OAuthService) ListApps(ctx context.Context, p kassa.Page) (*kassa.List[kassa.OAuthApp], error) {
	a, err := owner(ctx)
	if err != nil {
		return nil, err
	}
	l, err := findPage(ctx, s.db.Reader, oauthAppCols, orgFilter(a.OrgID), p, scanOAuthApp, oauthAppID)
	if err != nil {
		return nil, err
	}
	out := &kassa.List[kassa.OAuthApp]{HasMore: l.HasMore, NextCursor: l.NextCursor, Items: make([]kassa.OAuthApp, len(l.Items))}
	for i, app := range l.Items {
		out.Items[i] = app.OAuthApp
	}
	return out, nil
}

// FindApp returns an app of the owner's org. Errors: ENotFound.
func (s *OAuthService) FindApp(ctx context.Context, clientID string) (*kassa.OAuthApp, error) {
	a, err := owner(ctx)
	if err != nil {
		return nil, err
	}
	app, err := findOAuthApp(ctx, s.db.Reader, a.OrgID, clientID)
	if err != nil {
		return nil, err
	}
	return &app.OAuthApp, nil
}

// UpdateApp changes an app's name, redirect URIs or scopes. Tokens already
// issued keep their scopes; new grants follow the new registration.
// Errors: ENotFound, EInvalid.
func (s *OAuthService) UpdateApp(ctx context.Context, clientID string, in *kassa.OAuthAppUpdate) (*kassa.OAuthApp, error) {
	a, err := owner(ctx)
	if err != nil {
		return nil, err
	}
	if err := in.Validate(); err != nil {
		return nil, err
	}
	err = s.db.Write(ctx, func(tx *Tx) error {
		app, err := findOAuthApp(ctx, tx, a.OrgID, clientID)
		if err != nil {
			return err
		}
		in.Name.To(&app.Name)
		in.RedirectURIs.To(&app.RedirectURIs)
		in.Scopes.To(&app.Scopes)
		_, err = tx.ExecContext(ctx, `UPDATE oauth_apps SET name = ?, redirect_uris = ?, scopes = ?, updated_at = ? WHERE id = ? AND org_id = ?`,
			app.Name, mustJSON(app.RedirectURIs), mustJSON(app.Scopes), fmtTime(s.db.Now()), clientID, a.OrgID)
		return err
	})
	if err != nil {
		return nil, err
	}
	return s.FindApp(ctx, clientID)
}

// DeleteApp deletes an app with its codes, grants and tokens in every org:
// its tokens stop working at once. Errors: ENotFound.
func (s *OAuthService) DeleteApp(ctx context.Context, clientID string) error {
	a, err := owner(ctx)
	if err != nil {
		return err
	}
	return s.db.Write(ctx, func(tx *Tx) error {
		if _, err := findOAuthApp(ctx, tx, a.OrgID, clientID); err != nil {
			return err
		}
		// The replicated copies of its tokens outlive the cascade: revoke them.
		if err := revokeGrants(ctx, tx, s.db.Now(), `client_id = ?`, clientID); err != nil {
			return err
		}
		_, err := tx.ExecContext(ctx, `DELETE FROM oauth_apps WHERE id = ? AND org_id = ?`, clientID, a.OrgID)
		return err
	})
}

// RotateSecret gives an app a new client secret; the old one stops working
// at once. Errors: ENotFound, EConflict (a public app has no secret).
func (s *OAuthService) RotateSecret(ctx context.Context, clientID string) (*kassa.OAuthAppSecret, error) {
	a, err := owner(ctx)
	if err != nil {
		return nil, err
	}
	secret, hash := newSecret()
	var app *oauthApp
	err = s.db.Write(ctx, func(tx *Tx) error {
		if app, err := findOAuthApp(ctx, tx, a.OrgID, clientID); err != nil {
			return err
		} else if app.ClientType == kassa.ClientPublic {
			return kassa.Errorf(kassa.EConflict, "a public client has no secret to rotate")
		}
		if _, err := tx.ExecContext(ctx, `UPDATE oauth_apps SET secret_hash = ?, updated_at = ? WHERE id = ?`, hash, fmtTime(s.db.Now()), clientID); err != nil {
			return err
		}
		app, err = findOAuthApp(ctx, tx, a.OrgID, clientID)
		return err
	})
	if err != nil {
		return nil, err
	}
	return &kassa.OAuthAppSecret{OAuthApp: app.OAuthApp, ClientSecret: secret}, nil
}

// AppForAuthorize returns the app of clientID if redirectURI is one of its
// registered URIs byte for byte. Errors: ENotFound (no such app), EInvalid
// (redirect_uri not registered).
func (s *OAuthService) AppForAuthorize(ctx context.Context, clientID, redirectURI string) (*kassa.OAuthApp, error) {
	app, err := findOAuthApp(ctx, s.db.Reader, "", clientID)
	if err != nil {
		return nil, err
	}
	if !kassa.RedirectURIRegistered(app.RedirectURIs, redirectURI) {
		return nil, kassa.InvalidField("redirect_uri", "is not a redirect URI registered for this app")
	}
	return &app.OAuthApp, nil
}

// Approve records the signed-in merchant's consent: a single-use code for
// the app, valid 10 minutes, bound to redirectURI, the merchant and their
// org and the PKCE challenge, for requested ∩ registered ∩ the merchant's
// role's scopes. Errors: EUnauthorized, EForbidden (not a first-party
// user), ENotFound, EInvalid (redirect_uri not registered, a bad or
// missing challenge, nothing grantable).
func (s *OAuthService) Approve(ctx context.Context, clientID, redirectURI string, requested []kassa.Scope, challenge kassa.CodeChallenge) (string, []kassa.Scope, error) {
	a, err := kassa.MustActor(ctx)
	if err != nil {
		return "", nil, err
	}
	if a.UserID == "" || a.ClientID != "" {
		return "", nil, kassa.Errorf(kassa.EForbidden, "only a signed-in staff member can approve an app")
	}
	app, err := s.AppForAuthorize(ctx, clientID, redirectURI)
	if err != nil {
		return "", nil, err
	}
	if err := kassa.CheckCodeChallenge(challenge, app.ClientType); err != nil {
		return "", nil, kassa.InvalidField("code_challenge", err.(*kassa.OAuthError).Description)
	}
	granted := kassa.GrantedScopes(requested, app.Scopes, kassa.RoleScopes(a.Role))
	if len(granted) == 0 {
		return "", nil, kassa.InvalidField("scope", "grants nothing: none of the requested scopes is both registered by the app and allowed to your role")
	}
	code, hash := newSecret()
	now := s.db.Now()
	err = s.db.Exec(ctx, `INSERT INTO oauth_codes (hash, client_id, org_id, user_id, redirect_uri, scopes, created_at, expires_at,
		code_challenge, code_challenge_method) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`, hash, app.ClientID, a.OrgID, a.UserID, redirectURI,
		kassa.JoinScopes(granted), fmtTime(now), fmtTime(now.Add(kassa.OAuthCodeTTL)), nullString(challenge.Challenge), nullString(challenge.Method))
	if err != nil {
		return "", nil, err
	}
	return code, granted, nil
}

// dummySecretHash is compared against when a client is unknown, so that
// an unknown client id costs what a wrong secret does.
var dummySecretHash = hashSecret("kassa: no such client")

// client authenticates an OAuth client: a confidential one by its id and
// secret (constant-time comparison of the hashes), a public one by its id
// alone (RFC 6749 2.1: it has no secret; sending one is refused).
// Errors: *kassa.OAuthError invalid_client.
func (s *OAuthService) client(ctx context.Context, c kassa.ClientAuth) (*oauthApp, error) {
	bad := kassa.OAuthErr(kassa.OAuthInvalidClient, "client authentication failed")
	if c.ClientID == "" {
		return nil, kassa.OAuthErr(kassa.OAuthInvalidClient, "client_id is required")
	}
	app, err := findOAuthApp(ctx, s.db.Reader, "", c.ClientID)
	if err != nil && kassa.ErrorKind(err) != kassa.ENotFound {
		return nil, err
	}
	if app != nil && app.ClientType == kassa.ClientPublic {
		if c.ClientSecret != "" {
			return nil, kassa.OAuthErr(kassa.OAuthInvalidClient, "a public client has no client_secret: send client_id alone")
		}
		return app, nil
	}
	if c.ClientSecret == "" {
		return nil, kassa.OAuthErr(kassa.OAuthInvalidClient, "client_id and client_secret are required")
	}
	want := dummySecretHash
	if app != nil {
		want = app.secretHash
	}
	if subtle.ConstantTimeCompare([]byte(hashSecret(c.ClientSecret)), []byte(want)) != 1 || app == nil {
		return nil, bad
	}
	return app, nil
}

// grant is an oauth_grants row: one token family.
type grant struct {
	id, clientID, orgID, userID string
	scopes                      []kassa.Scope
}

// Token runs a grant: authorization_code, refresh_token or
// client_credentials. Errors are *kassa.OAuthError (RFC 6749 5.2), others
// internal.
func (s *OAuthService) Token(ctx context.Context, in *kassa.TokenRequest) (*kassa.TokenResponse, error) {
	switch in.GrantType {
	case kassa.GrantAuthorizationCode, kassa.GrantRefreshToken, kassa.GrantClientCredentials:
	case "":
		return nil, kassa.OAuthErr(kassa.OAuthInvalidRequest, "grant_type is required")
	default:
		return nil, kassa.OAuthErr(kassa.OAuthUnsupportedGrantType, "grant_type must be authorization_code, refresh_token or client_credentials")
	}
	asked, err := kassa.ParseScopes(in.Scope)
	if err != nil {
		return nil, err
	}
	app, err := s.client(ctx, kassa.ClientAuth{ClientID: in.ClientID, ClientSecret: in.ClientSecret, Basic: in.Basic})
	if err != nil {
		return nil, err
	}
	var res *kassa.TokenResponse
	var refused error // an OAuth refusal whose revocations must commit
	err = s.db.Write(ctx, func(tx *Tx) error {
		var err error
		switch in.GrantType {
		case kassa.GrantAuthorizationCode:
			res, refused, err = s.exchangeCode(ctx, tx, app, in)
		case kassa.GrantRefreshToken:
			res, refused, err = s.refresh(ctx, tx, app, in.RefreshToken, asked)
		case kassa.GrantClientCredentials:
			if app.ClientType == kassa.ClientPublic {
				refused = kassa.OAuthErr(kassa.OAuthUnauthorizedClient, "a public client has no client_credentials grant")
				return nil
			}
			res, refused, err = s.clientCredentials(ctx, tx, app, asked)
		}
		return err
	})
	if err != nil {
		return nil, err
	}
	if refused != nil {
		return nil, refused
	}
	return res, nil
}

var errBadGrant = kassa.OAuthErr(kassa.OAuthInvalidGrant, "the code or refresh token is invalid, expired, revoked or was issued to another client")

// exchangeCode runs the authorization_code grant in tx. A replayed code
// revokes the family it issued and is refused (the refusal is returned
// apart, so the revocation commits).
func (s *OAuthService) exchangeCode(ctx context.Context, tx *Tx, app *oauthApp, in *kassa.TokenRequest) (*kassa.TokenResponse, error, error) {
	if in.Code == "" {
		return nil, kassa.OAuthErr(kassa.OAuthInvalidRequest, "code is required"), nil
	}
	if in.RedirectURI == "" {
		return nil, kassa.OAuthErr(kassa.OAuthInvalidRequest, "redirect_uri is required"), nil
	}
	if !kassa.IsOpaqueToken(in.Code) {
		return nil, errBadGrant, nil
	}
	hash := hashSecret(in.Code)
	code, err := findCode(ctx, tx, hash)
	if err != nil {
		return nil, nil, err
	}
	if code == nil {
		return nil, errBadGrant, nil
	}
	g := code.grant
	if g.clientID != app.ClientID {
		// Another client's code: refused, left as it was for its own client.
		return nil, errBadGrant, nil
	}
	now := s.db.Now()
	switch (kassa.CodeState{ExpiresAt: parseTime(code.expires), Consumed: code.consumed}).Exchange(now) {
	case kassa.OAuthRefuseAndRevoke:
		if code.grantID != "" {
			if err := revokeGrants(ctx, tx, now, `id = ?`, code.grantID); err != nil {
				return nil, nil, err
			}
		}
		return nil, kassa.OAuthErr(kassa.OAuthInvalidGrant, "the code was already used; the tokens it issued are revoked"), nil
	case kassa.OAuthRefuse:
		return nil, kassa.OAuthErr(kassa.OAuthInvalidGrant, "the code has expired"), nil
	}
	if in.RedirectURI != code.redirect {
		return nil, kassa.OAuthErr(kassa.OAuthInvalidGrant, "redirect_uri differs from the one the code was issued for"), nil
	}
	// A wrong verifier leaves the code as it was: only its holder with the
	// verifier can use it, and a 256-bit verifier is not guessed.
	if err := kassa.VerifyCodeVerifier(in.CodeVerifier, code.challenge); err != nil {
		return nil, err, nil
	}
	if !s.userActive(ctx, tx, g.orgID, g.userID) {
		return nil, errBadGrant, nil
	}
	g.id = s.db.NewID()
	if err := insertGrant(ctx, tx, now, &g); err != nil {
		return nil, nil, err
	}
	if _, err := tx.ExecContext(ctx, `UPDATE oauth_codes SET consumed_at = ?, grant_id = ? WHERE hash = ?`, fmtTime(now), g.id, hash); err != nil {
		return nil, nil, err
	}
	res, err := issueTokens(ctx, tx, now, &g, g.scopes, "", true)
	return res, nil, err
}

// storedCode is an oauth_codes row: the family it would start (grant, no
// id yet), and what its exchange is checked against.
type storedCode struct {
	grant
	redirect, expires, grantID string
	consumed                   bool
	challenge                  kassa.CodeChallenge
}

// findCode reads the code of hash; nil when there is none.
func findCode(ctx context.Context, q querier, hash string) (*storedCode, error) {
	var c storedCode
	var scopes string
	var consumed, grantID, challenge, method sql.NullString
	err := q.QueryRowContext(ctx, `SELECT client_id, org_id, user_id, redirect_uri, scopes, expires_at, consumed_at, grant_id,
		code_challenge, code_challenge_method FROM oauth_codes WHERE hash = ?`, hash).
		Scan(&c.clientID, &c.orgID, &c.userID, &c.redirect, &scopes, &c.expires, &consumed, &grantID, &challenge, &method)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	c.scopes, _ = kassa.ParseScopes(scopes)
	c.consumed, c.grantID = consumed.Valid, grantID.String
	c.challenge = kassa.CodeChallenge{Challenge: challenge.String, Method: method.String}
	return &c, nil
}

// refresh runs the refresh_token grant in tx: the presented token is
// rotated (used) and a new pair issued in its family; a reused token
// revokes the family. asked may narrow the new access token's scopes; the
// new refresh token keeps the family's (RFC 6749 6).
func (s *OAuthService) refresh(ctx context.Context, tx *Tx, app *oauthApp, raw string, asked []kassa.Scope) (*kassa.TokenResponse, error, error) {
	if raw == "" {
		return nil, kassa.OAuthErr(kassa.OAuthInvalidRequest, "refresh_token is required"), nil
	}
	if !kassa.IsOpaqueToken(raw) {
		return nil, errBadGrant, nil
	}
	hash := hashSecret(raw)
	var g grant
	var user, used, revoked, grantRevoked sql.NullString
	var scopes string
	err := tx.QueryRowContext(ctx, `SELECT t.grant_id, t.client_id, t.org_id, t.user_id, t.scopes, t.used_at, t.revoked_at, g.revoked_at
		FROM oauth_tokens t JOIN oauth_grants g ON g.id = t.grant_id WHERE t.hash = ? AND t.kind = 'refresh'`, hash).
		Scan(&g.id, &g.clientID, &g.orgID, &user, &scopes, &used, &revoked, &grantRevoked)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, errBadGrant, nil
	}
	if err != nil {
		return nil, nil, err
	}
	if g.clientID != app.ClientID {
		return nil, errBadGrant, nil
	}
	now := s.db.Now()
	switch (kassa.RefreshState{Used: used.Valid, Revoked: revoked.Valid || grantRevoked.Valid}).Refresh() {
	case kassa.OAuthRefuseAndRevoke:
		if err := revokeGrants(ctx, tx, now, `id = ?`, g.id); err != nil {
			return nil, nil, err
		}
		return nil, kassa.OAuthErr(kassa.OAuthInvalidGrant, "the refresh token was already used; its whole token family is revoked"), nil
	case kassa.OAuthRefuse:
		return nil, errBadGrant, nil
	}
	g.userID = user.String
	g.scopes, _ = kassa.ParseScopes(scopes)
	access, err := kassa.NarrowScopes(asked, g.scopes)
	if err != nil {
		return nil, err, nil
	}
	if g.userID != "" && !s.userActive(ctx, tx, g.orgID, g.userID) {
		return nil, errBadGrant, nil
	}
	if _, err := tx.ExecContext(ctx, `UPDATE oauth_tokens SET used_at = ? WHERE hash = ?`, fmtTime(now), hash); err != nil {
		return nil, nil, err
	}
	res, err := issueTokens(ctx, tx, now, &g, access, hash, true)
	return res, nil, err
}

// clientCredentials runs the client_credentials grant: an access token of
// the app's owner org for its registered scopes (or fewer), no user, no
// refresh token.
func (s *OAuthService) clientCredentials(ctx context.Context, tx *Tx, app *oauthApp, asked []kassa.Scope) (*kassa.TokenResponse, error, error) {
	scopes, err := kassa.NarrowScopes(asked, app.Scopes)
	if err != nil {
		return nil, err, nil
	}
	now := s.db.Now()
	g := grant{id: s.db.NewID(), clientID: app.ClientID, orgID: app.OrgID, scopes: scopes}
	if err := insertGrant(ctx, tx, now, &g); err != nil {
		return nil, nil, err
	}
	res, err := issueTokens(ctx, tx, now, &g, scopes, "", false)
	return res, nil, err
}

func (s *OAuthService) userActive(ctx context.Context, q querier, orgID, userID string) bool {
	var n int
	err := q.QueryRowContext(ctx, `SELECT count(*) FROM users WHERE id = ? AND org_id = ? AND is_active = 1`, userID, orgID).Scan(&n)
	return err == nil && n == 1
}

func insertGrant(ctx context.Context, tx *Tx, now time.Time, g *grant) error {
	_, err := tx.ExecContext(ctx, `INSERT INTO oauth_grants (id, client_id, org_id, user_id, scopes, created_at) VALUES (?, ?, ?, ?, ?, ?)`,
		g.id, g.clientID, g.orgID, nullString(g.userID), kassa.JoinScopes(g.scopes), fmtTime(now))
	return err
}

// issueTokens stores a new access token for scopes (and, withRefresh, a
// refresh token for the family's scopes) in g's family.
func issueTokens(ctx context.Context, tx *Tx, now time.Time, g *grant, scopes []kassa.Scope, parent string, withRefresh bool) (*kassa.TokenResponse, error) {
	const ins = `INSERT INTO oauth_tokens (hash, kind, grant_id, client_id, org_id, user_id, scopes, parent, created_at, expires_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`
	access, ah := newSecret()
	res := &kassa.TokenResponse{AccessToken: access, TokenType: "Bearer", ExpiresIn: int(kassa.OAuthAccessTTL.Seconds()), Scope: kassa.JoinScopes(scopes)}
	expires := now.Add(kassa.OAuthAccessTTL)
	if _, err := tx.ExecContext(ctx, ins, ah, "access", g.id, g.clientID, g.orgID, nullString(g.userID), res.Scope, nullString(parent),
		fmtTime(now), fmtTime(expires)); err != nil {
		return nil, err
	}
	if err := tx.Insert(ctx, entOAuthAccess, g.orgID, ah, map[string]any{
		"client_id": g.clientID, "user_id": nullString(g.userID), "scopes": res.Scope, "expires_at": expires,
	}); err != nil {
		return nil, err
	}
	if withRefresh {
		refresh, rh := newSecret()
		if _, err := tx.ExecContext(ctx, ins, rh, "refresh", g.id, g.clientID, g.orgID, nullString(g.userID), kassa.JoinScopes(g.scopes), nullString(parent),
			fmtTime(now), nil); err != nil {
			return nil, err
		}
		res.RefreshToken = refresh
	}
	return res, nil
}

// revokeGrants revokes the families matching where (a condition on
// oauth_grants) and every token in them.
func revokeGrants(ctx context.Context, tx *Tx, now time.Time, where string, args ...any) error {
	at := fmtTime(now)
	if err := revokeAccess(ctx, tx, now, `grant_id IN (SELECT id FROM oauth_grants WHERE `+where+`)`, args...); err != nil {
		return err
	}
	if _, err := tx.ExecContext(ctx, `UPDATE oauth_tokens SET revoked_at = coalesce(revoked_at, ?)
		WHERE grant_id IN (SELECT id FROM oauth_grants WHERE `+where+`)`, append([]any{at}, args...)...); err != nil {
		return err
	}
	_, err := tx.ExecContext(ctx, `UPDATE oauth_grants SET revoked_at = coalesce(revoked_at, ?) WHERE `+where, append([]any{at}, args...)...)
	return err
}

// revokeAccess marks the live access tokens matching where (a condition on
// oauth_tokens) revoked in their replicated copies, one change record
// each, so that the org's edges refuse them too once synced. Expired ones
// need nothing.
func revokeAccess(ctx context.Context, tx *Tx, now time.Time, where string, args ...any) error {
	rows, err := tx.QueryContext(ctx, `SELECT hash, org_id FROM oauth_tokens WHERE kind = 'access' AND revoked_at IS NULL AND expires_at > ? AND `+where,
		append([]any{fmtTime(now)}, args...)...)
	if err != nil {
		return err
	}
	var live [][2]string
	for rows.Next() {
		var t [2]string
		if err := rows.Scan(&t[0], &t[1]); err != nil {
			rows.Close()
			return err
		}
		live = append(live, t)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return err
	}
	for _, t := range live {
		if err := tx.Update(ctx, entOAuthAccess, t[1], t[0], map[string]any{"revoked_at": now}); err != nil {
			return err
		}
	}
	return nil
}

// storedToken is an oauth_tokens row joined with its family.
type storedToken struct {
	kind, grantID, clientID, orgID, userID, scopes string
	created, expires                               string
	used, revoked                                  bool
}

func findToken(ctx context.Context, q querier, raw string) (*storedToken, error) {
	if !kassa.IsOpaqueToken(raw) {
		return nil, nil
	}
	var t storedToken
	var user, expires, used, revoked, grantRevoked sql.NullString
	err := q.QueryRowContext(ctx, `SELECT t.kind, t.grant_id, t.client_id, t.org_id, t.user_id, t.scopes, t.created_at, t.expires_at,
		t.used_at, t.revoked_at, g.revoked_at FROM oauth_tokens t JOIN oauth_grants g ON g.id = t.grant_id WHERE t.hash = ?`, hashSecret(raw)).
		Scan(&t.kind, &t.grantID, &t.clientID, &t.orgID, &user, &t.scopes, &t.created, &expires, &used, &revoked, &grantRevoked)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	t.userID, t.expires, t.used, t.revoked = user.String, expires.String, used.Valid, revoked.Valid || grantRevoked.Valid
	return &t, nil
}

// active reports whether the token is usable at now.
func (t *storedToken) active(now time.Time) bool {
	if t.kind == "refresh" {
		return kassa.RefreshState{Used: t.used, Revoked: t.revoked}.Refresh() == kassa.OAuthAllow
	}
	return kassa.AccessState{ExpiresAt: parseTime(t.expires), Revoked: t.revoked}.Active(now)
}

// Revoke implements RFC 7009 for the authenticated client's own tokens: an
// access token stops at once; a refresh token revokes its whole family,
// every access token derived from it included. An unknown, expired or
// another client's token is no error. Errors: *kassa.OAuthError
// invalid_client.
func (s *OAuthService) Revoke(ctx context.Context, c kassa.ClientAuth, raw string) error {
	app, err := s.client(ctx, c)
	if err != nil {
		return err
	}
	if raw == "" {
		return kassa.OAuthErr(kassa.OAuthInvalidRequest, "token is required")
	}
	t, err := findToken(ctx, s.db.Reader, raw)
	if err != nil || t == nil || t.clientID != app.ClientID || t.revoked {
		return err
	}
	return s.db.Write(ctx, func(tx *Tx) error {
		now := s.db.Now()
		if t.kind == "refresh" {
			return revokeGrants(ctx, tx, now, `id = ?`, t.grantID)
		}
		hash := hashSecret(raw)
		if err := revokeAccess(ctx, tx, now, `hash = ?`, hash); err != nil {
			return err
		}
		_, err := tx.ExecContext(ctx, `UPDATE oauth_tokens SET revoked_at = coalesce(revoked_at, ?) WHERE hash = ?`, fmtTime(now), hash)
		return err
	})
}

// Introspect implements RFC 7662 for the authenticated client: its own
// active tokens are described; anything else is {active: false}.
// token_type is Bearer for an access token (RFC 7662 2.2: RFC 6749 5.1's
// type) and absent for a refresh token, which is no token type.
// Errors: *kassa.OAuthError invalid_client.
func (s *OAuthService) Introspect(ctx context.Context, c kassa.ClientAuth, raw string) (*kassa.Introspection, error) {
	app, err := s.client(ctx, c)
	if err != nil {
		return nil, err
	}
	if app.ClientType == kassa.ClientPublic {
		// RFC 7662 4: introspection is for authenticated callers.
		return nil, kassa.OAuthErr(kassa.OAuthInvalidClient, "a public client cannot introspect tokens")
	}
	t, err := findToken(ctx, s.db.Reader, raw)
	if err != nil {
		return nil, err
	}
	if t == nil || t.clientID != app.ClientID || !t.active(s.db.Now()) {
		return &kassa.Introspection{Active: false}, nil
	}
	out := &kassa.Introspection{Active: true, Scope: t.scopes, ClientID: t.clientID, OrgID: t.orgID, Sub: t.userID,
		Iat: parseTime(t.created).Unix()}
	if t.kind == "access" {
		out.TokenType = "Bearer" // RFC 7662 2.2: the type of RFC 6749 5.1
	}
	if t.expires != "" {
		out.Exp = parseTime(t.expires).Unix()
	}
	return out, nil
}

var errBadOAuthToken = kassa.Errorf(kassa.EUnauthorized, "access token is invalid, expired or revoked")

// Authenticate checks an opaque access token and returns its actor: the
// org, the client, the consenting user (none for client_credentials) and
// the token's scopes, less what the user's current role no longer grants.
// A token of a deactivated user, a revoked family or a deleted app is
// refused at once. One query, on the replicated copies (oauth_access), so
// an edge answers for its org's tokens with the hub out of reach.
// Errors: EUnauthorized.
func (s *OAuthService) Authenticate(ctx context.Context, raw string) (*kassa.Actor, error) {
	if !kassa.IsOpaqueToken(raw) {
		return nil, errBadOAuthToken
	}
	var clientID, orgID, scopes, expires string
	var user, role sql.NullString
	var active sql.NullBool
	err := s.db.Reader.QueryRowContext(ctx, `SELECT t.client_id, t.org_id, t.user_id, t.scopes, t.expires_at, u.role, u.is_active
		FROM oauth_access t LEFT JOIN users u ON u.id = t.user_id AND u.org_id = t.org_id
		WHERE t.id = ? AND t.revoked_at IS NULL`, hashSecret(raw)).
		Scan(&clientID, &orgID, &user, &scopes, &expires, &role, &active)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, errBadOAuthToken
	}
	if err != nil {
		return nil, err
	}
	if !(kassa.AccessState{ExpiresAt: parseTime(expires)}).Active(s.db.Now()) {
		return nil, errBadOAuthToken
	}
	granted, _ := kassa.ParseScopes(scopes)
	if user.Valid {
		if !active.Bool {
			return nil, errBadOAuthToken
		}
		granted = kassa.GrantedScopes(granted, granted, kassa.RoleScopes(kassa.Role(role.String)))
	}
	return &kassa.Actor{OrgID: orgID, UserID: user.String, ClientID: clientID, Scopes: granted}, nil
}

// ConnectedApps lists the apps holding a live grant in the owner's org,
// one entry per app: the scopes of its newest grant, when it was first
// connected and who approved its newest grant.
func (s *OAuthService) ConnectedApps(ctx context.Context) ([]kassa.ConnectedApp, error) {
	a, err := owner(ctx)
	if err != nil {
		return nil, err
	}
	rows, err := s.db.Reader.QueryContext(ctx, `SELECT g.client_id, a.name, g.scopes, coalesce(g.user_id, ''),
		(SELECT min(created_at) FROM oauth_grants f WHERE f.client_id = g.client_id AND f.org_id = g.org_id AND f.revoked_at IS NULL)
		FROM oauth_grants g JOIN oauth_apps a ON a.id = g.client_id
		WHERE g.org_id = ? AND g.revoked_at IS NULL AND g.id = (SELECT max(id) FROM oauth_grants n
			WHERE n.client_id = g.client_id AND n.org_id = g.org_id AND n.revoked_at IS NULL)
		ORDER BY g.client_id`, a.OrgID)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := []kassa.ConnectedApp{}
	for rows.Next() {
		var c kassa.ConnectedApp
		var scopes, since string
		if err := rows.Scan(&c.ClientID, &c.Name, &scopes, &c.ApprovedBy, &since); err != nil {
			return nil, err
		}
		c.Scopes, _ = kassa.ParseScopes(scopes)
		c.ConnectedAt = parseTime(since)
		out = append(out, c)
	}
	return out, rows.Err()
}

// Disconnect revokes every grant of the app in the owner's org: its access
// tokens are refused at once and its refresh tokens give invalid_grant; the
// app must run the flow again. Errors: ENotFound when the app holds no
// live grant in the org.
func (s *OAuthService) Disconnect(ctx context.Context, clientID string) error {
	a, err := owner(ctx)
	if err != nil {
		return err
	}
	return s.db.Write(ctx, func(tx *Tx) error {
		var n int
		if err := tx.QueryRowContext(ctx, `SELECT count(*) FROM oauth_grants WHERE client_id = ? AND org_id = ? AND revoked_at IS NULL`,
			clientID, a.OrgID).Scan(&n); err != nil {
			return err
		}
		if n == 0 {
			return kassa.NotFound("connected app", strings.Clone(clientID))
		}
		return revokeGrants(ctx, tx, s.db.Now(), `client_id = ? AND org_id = ?`, clientID, a.OrgID)
	})
}

// What the sweep keeps of what no longer works, so that a replay within
// it is still recognised (a consumed code or a rotated refresh token
// presented again revokes its family) rather than merely unknown.
const (
	oauthCodeRetention    = 24 * time.Hour
	oauthAccessRetention  = time.Hour
	oauthRefreshRetention = 30 * 24 * time.Hour
)

// Sweep deletes, at the hub, what can no longer be used: codes a day past
// their expiry, access tokens an hour past theirs (with the hub's copy in
// oauth_access), refresh tokens 30 days after their use or revocation,
// and families left without tokens or codes (every client_credentials
// token is a family of its own). It returns the rows deleted. The edges'
// replicated oauth_access rows are left alone: a revocation pulled after
// an edge had deleted its row would be an update of a missing row, which
// stalls the link; they grow by one small row per token issued.
func (s *OAuthService) Sweep(ctx context.Context) (int64, error) {
	now := s.db.Now()
	at := func(d time.Duration) string { return fmtTime(now.Add(-d)) }
	var n int64
	err := s.db.Write(ctx, func(tx *Tx) error {
		n = 0
		for _, st := range []struct {
			q   string
			arg string
		}{
			{`DELETE FROM oauth_codes WHERE expires_at < ?`, at(oauthCodeRetention)},
			{`DELETE FROM oauth_tokens WHERE kind = 'access' AND expires_at < ?`, at(oauthAccessRetention)},
			{`DELETE FROM oauth_access WHERE expires_at < ?`, at(oauthAccessRetention)},
			{`DELETE FROM oauth_tokens WHERE kind = 'refresh' AND coalesce(used_at, revoked_at) < ?`, at(oauthRefreshRetention)},
			{`DELETE FROM oauth_grants WHERE (user_id IS NULL OR revoked_at < ?)
				AND NOT EXISTS (SELECT 1 FROM oauth_tokens t WHERE t.grant_id = oauth_grants.id)
				AND NOT EXISTS (SELECT 1 FROM oauth_codes c WHERE c.grant_id = oauth_grants.id)`, at(oauthRefreshRetention)},
		} {
			res, err := tx.ExecContext(ctx, st.q, st.arg)
			if err != nil {
				return err
			}
			k, _ := res.RowsAffected()
			n += k
		}
		return nil
	})
	return n, err
}

func init() {
	engine.ActorSources = append(engine.ActorSources, engine.ActorSource{Table: "oauth_apps", Cols: "CAST(scopes AS TEXT), ''", Decode: clientActor})
}

// clientActor is an actor that is no user as an OAuth client of the org
// (its app's scopes): a write made at the hub with a client_credentials
// token and routed to the store (a money operation) comes back with the
// client id as its actor. The app's registered scopes stand for the
// token's (a token never holds more); a deleted app is no actor. Apps are
// written at the hub only.
func clientActor(scopes, _ string) (batchUser, error) {
	u := batchUser{Found: true, Active: true, Client: true}
	return u, decodeJSON(scopes, &u.Scopes)
}
