package kassa

import (
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"net/url"
	"slices"
	"strings"
	"time"
	"unicode/utf8"
)

// The rules of the authorization server as pure functions: what an app may
// register, which scopes a grant gets, and the state machine of codes,
// access and refresh tokens (spec part 3), each decided at a given now.

// OAuthScopes are the scopes an app may register: the spec's, Kassa's own
// (kds, locations:write, sync:write) and partners:write. A role never grants
// partners:write, so only client_credentials can carry it.
var OAuthScopes = append(slices.Clone(AllScopes), ScopeKDS, ScopeLocationsWrite, ScopePartnersWrite, ScopeSyncWrite)

// Limits of an app's registration.
const (
	MaxOAuthRedirectURIs   = 10
	MaxOAuthRedirectURILen = 2000
	MaxOAuthAppName        = 200
)

// ValidOAuthScope reports whether s is a scope an app may ask for.
func ValidOAuthScope(s Scope) bool { return slices.Contains(OAuthScopes, s) }

// ValidRedirectURI reports whether s may be registered as a redirect URI:
// an absolute https URL without a fragment, or, for native and development
// apps (RFC 8252 7.3), http on a loopback host (127.0.0.1, [::1],
// localhost); at most 2000 bytes, no user info.
func ValidRedirectURI(s string) bool {
	if s == "" || len(s) > MaxOAuthRedirectURILen || !utf8.ValidString(s) || strings.ContainsAny(s, "#\x00\r\n\t ") {
		return false
	}
	u, err := url.Parse(s)
	if err != nil || u.Host == "" || u.User != nil || u.Opaque != "" {
		return false
	}
	switch u.Scheme {
	case "https":
		return true
	case "http":
		h := u.Hostname()
		return h == "127.0.0.1" || h == "::1" || h == "localhost"
	}
	return false
}

// RedirectURIRegistered reports whether uri is one of registered, byte for
// byte: no prefix, case, slash or query normalisation (an altered URI is an
// open redirect).
func RedirectURIRegistered(registered []string, uri string) bool {
	return slices.Contains(registered, uri)
}

func checkRedirectURIs(v *Validation, uris []string) {
	v.Check(len(uris) >= 1 && len(uris) <= MaxOAuthRedirectURIs, "redirect_uris", "must list 1-10 URIs")
	for _, u := range uris {
		if !ValidRedirectURI(u) {
			v.Add("redirect_uris", "%.100q is not an absolute https URL without fragment (http only for 127.0.0.1, [::1], localhost)", u)
			return
		}
	}
}

func checkAppScopes(v *Validation, scopes []Scope) {
	v.Check(len(scopes) >= 1, "scopes", "must list at least one scope")
	for _, s := range scopes {
		if !ValidOAuthScope(s) {
			v.Add("scopes", "%.64q is not a known scope", string(s))
			return
		}
	}
}

func checkAppName(v *Validation, name string) {
	v.Check(name != "" && ValidText(name, MaxOAuthAppName), "name", "is required: 1-200 characters of text")
}

// Validate checks a new app: a name of 1–200 characters, 1–10 redirect URIs
// (ValidRedirectURI), at least one known scope, and a client type
// (confidential when empty).
func (in *OAuthAppCreate) Validate() error {
	var v Validation
	if in.ClientType == "" {
		in.ClientType = ClientConfidential
	}
	v.Check(in.ClientType == ClientConfidential || in.ClientType == ClientPublic, "client_type", "must be confidential or public")
	checkAppName(&v, in.Name)
	checkRedirectURIs(&v, in.RedirectURIs)
	checkAppScopes(&v, in.Scopes)
	return v.Err()
}

// Validate checks an app's update by the rules of OAuthAppCreate; null is
// refused for every field.
func (in *OAuthAppUpdate) Validate() error {
	var v Validation
	if in.Name.Set {
		checkAppName(&v, in.Name.Value)
	}
	if in.RedirectURIs.Set {
		checkRedirectURIs(&v, in.RedirectURIs.Value)
	}
	if in.Scopes.Set {
		checkAppScopes(&v, in.Scopes.Value)
	}
	for _, f := range []struct {
		name string
		null bool
	}{{"name", in.Name.Null}, {"redirect_uris", in.RedirectURIs.Null}, {"scopes", in.Scopes.Null}} {
		v.Check(!f.null, f.name, "cannot be null")
	}
	return v.Err()
}

// OAuthErr returns an *OAuthError of the token endpoint: status 400, or 401
// for invalid_client.
func OAuthErr(code, description string) *OAuthError {
	status := 400
	if code == OAuthInvalidClient {
		status = 401
	}
	return &OAuthError{Code: code, Description: description, Status: status}
}

// ParseScopes reads an OAuth scope parameter: scopes separated by spaces
// (RFC 6749 3.3), each known, duplicates dropped. An empty parameter is no
// scope. Errors: invalid_scope.
func ParseScopes(s string) ([]Scope, error) {
	var out []Scope
	for f := range strings.FieldsSeq(s) {
		sc := Scope(f)
		if !ValidOAuthScope(sc) {
			return nil, OAuthErr(OAuthInvalidScope, "unknown scope "+strings.ToValidUTF8(f[:min(len(f), 64)], ""))
		}
		if !slices.Contains(out, sc) {
			out = append(out, sc)
		}
	}
	return out, nil
}

// JoinScopes writes scopes as a scope parameter.
func JoinScopes(scopes []Scope) string {
	parts := make([]string, len(scopes))
	for i, s := range scopes {
		parts[i] = string(s)
	}
	return strings.Join(parts, " ")
}

// GrantedScopes is what a merchant's consent grants: the requested scopes
// that the app registered and the approving user's role grants, in the
// order requested. An empty result grants nothing.
func GrantedScopes(requested, registered, roleScopes []Scope) []Scope {
	var out []Scope
	for _, s := range requested {
		if slices.Contains(registered, s) && slices.Contains(roleScopes, s) && !slices.Contains(out, s) {
			out = append(out, s)
		}
	}
	return out
}

// NarrowScopes applies an optional scope parameter to a grant's scopes on
// refresh_token and client_credentials: none asked keeps them all; asking
// for any scope the grant does not hold is invalid_scope (no escalation).
func NarrowScopes(asked, granted []Scope) ([]Scope, error) {
	if len(asked) == 0 {
		return slices.Clone(granted), nil
	}
	for _, s := range asked {
		if !slices.Contains(granted, s) {
			return nil, OAuthErr(OAuthInvalidScope, "scope "+string(s)+" was not granted")
		}
	}
	return asked, nil
}

// OAuthDecision is what the token endpoint does with a presented code or
// refresh token.
type OAuthDecision int

// The decisions.
const (
	// OAuthAllow: run the grant (consume the code, rotate the token).
	OAuthAllow OAuthDecision = iota
	// OAuthRefuse: invalid_grant, nothing else changes.
	OAuthRefuse
	// OAuthRefuseAndRevoke: invalid_grant, and revoke every token of the
	// family (a replayed code or a reused refresh token has leaked).
	OAuthRefuseAndRevoke
)

// CodeState is a stored authorization code.
type CodeState struct {
	ExpiresAt time.Time
	Consumed  bool
}

// Exchange decides a code exchange at now (spec part 3): a consumed code is
// a replay (refuse and revoke what it issued), an expired one is refused,
// an issued one within its 10 minutes is exchanged.
func (c CodeState) Exchange(now time.Time) OAuthDecision {
	switch {
	case c.Consumed:
		return OAuthRefuseAndRevoke
	case !now.Before(c.ExpiresAt):
		return OAuthRefuse
	}
	return OAuthAllow
}

// RefreshState is a stored refresh token: Used once it was rotated,
// Revoked by a revoke call, a disconnect or its family's revocation.
type RefreshState struct {
	Used, Revoked bool
}

// Refresh decides a refresh_token grant: a used (rotated) token presented
// again is reuse (refuse and revoke the family); a revoked one is refused;
// a valid one rotates. Refresh tokens do not expire (spec part 5).
func (r RefreshState) Refresh() OAuthDecision {
	switch {
	case r.Used:
		return OAuthRefuseAndRevoke
	case r.Revoked:
		return OAuthRefuse
	}
	return OAuthAllow
}

// AccessState is a stored access token.
type AccessState struct {
	ExpiresAt time.Time
	Revoked   bool
}

// Active reports whether the access token is usable at now: not revoked
// and within its 900 seconds.
func (a AccessState) Active(now time.Time) bool {
	return !a.Revoked && now.Before(a.ExpiresAt)
}

// IsOpaqueToken reports whether s has the shape of Kassa's opaque codes and
// tokens: 64 lower-case hex characters (32 random bytes). A bearer token of
// this shape is an OAuth access token; anything else is a first-party JWT.
func IsOpaqueToken(s string) bool {
	if len(s) != 64 {
		return false
	}
	for i := 0; i < len(s); i++ {
		if c := s[i]; !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f') {
			return false
		}
	}
	return true
}

// CheckCodeChallenge checks an authorization request's PKCE parameters
// (RFC 7636 4.3): none at all, or an S256 challenge (43 base64url
// characters, the SHA-256 of the verifier). plain, or a challenge without
// its method (which RFC 7636 reads as plain), is refused; so is a method
// without a challenge. A public client must send one. Errors:
// invalid_request.
func CheckCodeChallenge(c CodeChallenge, clientType string) error {
	switch {
	case c.Challenge == "" && c.Method == "":
		if clientType == ClientPublic {
			return OAuthErr(OAuthInvalidRequest, "code_challenge is required: this app is a public client and must use PKCE (S256)")
		}
		return nil
	case c.Method != PKCEMethodS256:
		return OAuthErr(OAuthInvalidRequest, "code_challenge_method must be S256 (plain is not supported)")
	case !validS256Challenge(c.Challenge):
		return OAuthErr(OAuthInvalidRequest, "code_challenge must be the base64url SHA-256 of the code_verifier: 43 characters")
	}
	return nil
}

func validS256Challenge(s string) bool {
	b, err := base64.RawURLEncoding.Strict().DecodeString(s)
	return len(s) == 43 && err == nil && len(b) == sha256.Size
}

// ValidCodeVerifier reports whether s is an RFC 7636 4.1 code_verifier:
// 43 to 128 characters of A-Z a-z 0-9 - . _ ~.
func ValidCodeVerifier(s string) bool {
	if len(s) < 43 || len(s) > 128 {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= 'A' && c <= 'Z' || c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '-' || c == '.' || c == '_' || c == '~') {
			return false
		}
	}
	return true
}

// VerifyCodeVerifier decides a code exchange's PKCE proof (RFC 7636 4.6):
// a code issued with a challenge needs the verifier whose S256 is that
// challenge (compared in constant time); a code issued without one must
// not be presented with a verifier (RFC 9700 2.1.1: a downgrade). Errors:
// invalid_grant.
func VerifyCodeVerifier(verifier string, issued CodeChallenge) error {
	if issued.Challenge == "" {
		if verifier != "" {
			return OAuthErr(OAuthInvalidGrant, "code_verifier was sent but the code was issued without a code_challenge")
		}
		return nil
	}
	if !ValidCodeVerifier(verifier) {
		return OAuthErr(OAuthInvalidGrant, "code_verifier is missing or malformed: the code was issued with a code_challenge")
	}
	sum := sha256.Sum256([]byte(verifier))
	if subtle.ConstantTimeCompare([]byte(base64.RawURLEncoding.EncodeToString(sum[:])), []byte(issued.Challenge)) != 1 {
		return OAuthErr(OAuthInvalidGrant, "code_verifier does not match the code_challenge")
	}
	return nil
}
