// Package token issues and checks Kassa's first-party JWTs (HS256).
//
// An access token lives 900 s and carries sub (user id), orgId, role, sid
// (session) and iss (the node that issued it). A refresh token carries sub,
// sid and a jti that the session store rotates on every refresh.
package token

import (
	"errors"
	"fmt"
	"time"

	"github.com/golang-jwt/jwt/v5"
)

// AccessTTL is the lifetime of an access token (spec 2.2).
const AccessTTL = 900 * time.Second

// Token types, in the "typ" claim.
const (
	TypeAccess  = "access"
	TypeRefresh = "refresh"
)

// Claims are the claims of both token types.
type Claims struct {
	OrgID     string `json:"orgId"`
	Role      string `json:"role,omitempty"`
	SessionID string `json:"sid"`
	Type      string `json:"typ"`
	jwt.RegisteredClaims
}

// Signer signs and verifies tokens with one node's key.
type Signer struct {
	key  []byte
	node string
	now  func() time.Time
}

// NewSigner returns a signer with an HMAC key of at least 32 bytes; node is
// written into the iss claim.
func NewSigner(key []byte, node string, now func() time.Time) (*Signer, error) {
	if len(key) < 32 {
		return nil, errors.New("token: key shorter than 32 bytes")
	}
	if now == nil {
		now = time.Now
	}
	return &Signer{key: key, node: node, now: now}, nil
}

// Issue signs claims of the given type, valid for ttl from now.
func (s *Signer) Issue(typ, userID, orgID, role, sessionID, jti string, ttl time.Duration) (string, error) {
	now := s.now()
	c := Claims{OrgID: orgID, Role: role, SessionID: sessionID, Type: typ,
		RegisteredClaims: jwt.RegisteredClaims{
			Subject: userID, Issuer: s.node, ID: jti,
			IssuedAt: jwt.NewNumericDate(now), ExpiresAt: jwt.NewNumericDate(now.Add(ttl)),
		}}
	return jwt.NewWithClaims(jwt.SigningMethodHS256, c).SignedString(s.key)
}

// ErrInvalid is returned for any token that fails verification: bad
// signature, wrong algorithm, expired, or of another type.
var ErrInvalid = errors.New("token: invalid")

// ErrNoOrg is returned for a token that verifies but names no org (spec
// part 7: "missing orgId in token"); it wraps ErrInvalid.
var ErrNoOrg = fmt.Errorf("%w: missing orgId", ErrInvalid)

// Parse verifies a token of the given type and returns its claims.
func (s *Signer) Parse(typ, raw string) (*Claims, error) {
	var c Claims
	_, err := jwt.ParseWithClaims(raw, &c, func(*jwt.Token) (any, error) { return s.key, nil },
		jwt.WithValidMethods([]string{"HS256"}), jwt.WithTimeFunc(s.now), jwt.WithExpirationRequired())
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrInvalid, err)
	}
	if c.Type != typ || c.Subject == "" || c.SessionID == "" {
		return nil, ErrInvalid
	}
	if c.OrgID == "" {
		return nil, ErrNoOrg
	}
	return &c, nil
}
