package kassa

import (
	"context"
	"time"
)

// OAuth 2.0 partner access (spec 4.2 and 5, CONTRACT.md "Auth"). The hub is
// the authorization server: it registers an org's apps, shows the consent
// page, and issues opaque codes and tokens (64 hex characters, stored only
// as SHA-256 hashes). Business routes accept its access tokens beside
// first-party JWTs, with the same scope table.

// ScopePartnersWrite is Kassa's own scope for creating tenants (resellers,
// POST /partners/tenants). A role never grants it; an app registers it.
const ScopePartnersWrite Scope = "partners:write"

// Lifetimes of spec part 5.
const (
	OAuthCodeTTL   = 10 * time.Minute
	OAuthAccessTTL = 900 * time.Second
)

// The grants of the token endpoint (spec 4.2, CONTRACT.md "Auth").
const (
	GrantAuthorizationCode = "authorization_code"
	GrantRefreshToken      = "refresh_token"
	GrantClientCredentials = "client_credentials"
)

// Client types (RFC 6749 2.1). A confidential client holds a secret on a
// server; a public one (a native or single-page app) cannot keep one: it
// has no secret, proves each code exchange with PKCE (RFC 7636) instead,
// and has no client_credentials grant.
const (
	ClientConfidential = "confidential"
	ClientPublic       = "public"
)

// PKCEMethodS256 is the one code_challenge_method accepted (RFC 7636 4.2).
// plain is refused: it protects nothing against an attacker who can read
// the authorization request, and every client can compute SHA-256.
const PKCEMethodS256 = "S256"

// CodeChallenge is the PKCE challenge an authorization request carried
// (RFC 7636 4.3); the zero value is none.
type CodeChallenge struct {
	Challenge string
	Method    string
}

// RFC 6749 error codes (5.2 and 4.1.2.1).
const (
	OAuthInvalidRequest          = "invalid_request"
	OAuthInvalidClient           = "invalid_client"
	OAuthInvalidGrant            = "invalid_grant"
	OAuthUnauthorizedClient      = "unauthorized_client"
	OAuthUnsupportedGrantType    = "unsupported_grant_type"
	OAuthInvalidScope            = "invalid_scope"
	OAuthAccessDenied            = "access_denied"
	OAuthUnsupportedResponseType = "unsupported_response_type"
	// OAuthTemporarilyUnavailable answers a throttled token request (429).
	OAuthTemporarilyUnavailable = "temporarily_unavailable"
)

// OAuthError is an RFC 6749 error answer of the token, revoke and
// introspection endpoints: {error, error_description}. Status is 400, or
// 401 for invalid_client (with WWW-Authenticate when the client used HTTP
// Basic).
type OAuthError struct {
	Code        string
	Description string
	Status      int
}

func (e *OAuthError) Error() string { return "oauth: " + e.Code + ": " + e.Description }

// OAuthApp is a registered client of an org: confidential (the default)
// or public.
type OAuthApp struct {
	ClientID     string    `json:"client_id"` // The app's public identifier, sent as client_id.
	OrgID        string    `json:"org_id"`
	Name         string    `json:"name"`                                  // The name the consent page shows.
	ClientType   string    `json:"client_type" openapi:"enum=ClientType"` // confidential (holds a client_secret) or public (no secret; PKCE S256 required).
	RedirectURIs []string  `json:"redirect_uris"`                         // The exact URIs the consent page may redirect to (compared byte for byte).
	Scopes       []Scope   `json:"scopes"`                                // The scopes the app may ask for.
	CreatedAt    time.Time `json:"created_at"`
	UpdatedAt    time.Time `json:"updated_at"`
}

// OAuthAppSecret is an app with its client secret: the answer of a
// registration or a secret rotation, the only time the secret is shown.
type OAuthAppSecret struct {
	OAuthApp
	ClientSecret string `json:"client_secret,omitempty"` // The client secret; shown only in this answer (only a hash is kept). Absent for a public client.
}

// OAuthAppCreate is the body of POST /oauth/apps.
type OAuthAppCreate struct {
	Name         string   `json:"name" openapi:"required"`
	RedirectURIs []string `json:"redirect_uris" openapi:"required"`
	Scopes       []Scope  `json:"scopes" openapi:"required"`
	// ClientType is confidential (the default) or public; it cannot change later.
	ClientType string `json:"client_type" openapi:"enum=ClientType"`
}

// OAuthAppUpdate is the body of PATCH /oauth/apps/:id.
type OAuthAppUpdate struct {
	Name         Opt[string]   `json:"name"`
	RedirectURIs Opt[[]string] `json:"redirect_uris"`
	Scopes       Opt[[]Scope]  `json:"scopes"`
}

// TokenRequest is a call of the token endpoint, from a JSON or a
// form-encoded body; the client's credentials come from the body or from
// HTTP Basic (Basic true).
type TokenRequest struct {
	GrantType    string
	Code         string
	RedirectURI  string
	RefreshToken string
	Scope        string // optional narrowing on refresh_token and client_credentials
	CodeVerifier string // PKCE (RFC 7636 4.5), authorization_code
	ClientID     string
	ClientSecret string
	Basic        bool
}

// TokenResponse is spec 2.1. RefreshToken is empty for client_credentials.
type TokenResponse struct {
	AccessToken  string `json:"access_token"`            // An opaque access token (64 hex characters) to send as Authorization: Bearer.
	RefreshToken string `json:"refresh_token,omitempty"` // An opaque refresh token; each use rotates it. Absent for client_credentials.
	TokenType    string `json:"token_type"`              // Always Bearer.
	ExpiresIn    int    `json:"expires_in"`              // Seconds the access token lives (900).
	Scope        string `json:"scope"`                   // The granted scopes, space-separated; may be narrower than requested.
}

// ClientAuth is a client's credentials on the revoke and introspection
// endpoints.
type ClientAuth struct {
	ClientID     string
	ClientSecret string
	Basic        bool
}

// Introspection is RFC 7662's answer; an inactive token is {active:false}
// and nothing else.
type Introspection struct {
	Active    bool   `json:"active"`               // Whether the token is live; an inactive token has no other field.
	Scope     string `json:"scope,omitempty"`      // Its scopes, space-separated.
	ClientID  string `json:"client_id,omitempty"`  // The app it was issued to.
	OrgID     string `json:"org_id,omitempty"`     // The org it acts in.
	Sub       string `json:"sub,omitempty"`        // The user who approved it; absent for client_credentials.
	TokenType string `json:"token_type,omitempty"` // Bearer for an access token (RFC 7662 2.2); absent for a refresh token.
	Exp       int64  `json:"exp,omitempty"`        // When it expires (Unix seconds).
	Iat       int64  `json:"iat,omitempty"`        // When it was issued (Unix seconds).
}

// ConnectedApp is an app that holds a live grant in the caller's org.
type ConnectedApp struct {
	ClientID    string    `json:"client_id"`    // The app.
	Name        string    `json:"name"`         // The app's name.
	Scopes      []Scope   `json:"scopes"`       // The scopes it holds in the org.
	ConnectedAt time.Time `json:"connected_at"` // When it was first granted.
	ApprovedBy  string    `json:"approved_by"`  // user id; empty for client_credentials
}

// OAuthService is the authorization server. Methods that manage apps and
// connections act for the context's actor (an owner); AppForAuthorize,
// Token, Revoke and Introspect are public and authenticate the client
// themselves; Approve acts for the signed-in merchant on the consent page.
type OAuthService interface {
	CreateApp(ctx context.Context, in *OAuthAppCreate) (*OAuthAppSecret, error)
	ListApps(ctx context.Context, p Page) (*List[OAuthApp], error)
	FindApp(ctx context.Context, clientID string) (*OAuthApp, error)
	UpdateApp(ctx context.Context, clientID string, in *OAuthAppUpdate) (*OAuthApp, error)
	DeleteApp(ctx context.Context, clientID string) error
	RotateSecret(ctx context.Context, clientID string) (*OAuthAppSecret, error)

	// AppForAuthorize returns the app if clientID exists and redirectURI is
	// one of its registered URIs, byte for byte; otherwise ENotFound or
	// EInvalid, and the consent page shows an error and never redirects.
	AppForAuthorize(ctx context.Context, clientID, redirectURI string) (*OAuthApp, error)
	// Approve records the context's actor's consent and returns a single-use
	// code and the granted scopes: requested ∩ registered ∩ what the
	// actor's role grants. An empty intersection is an EInvalid error. The
	// code is bound to challenge (PKCE), which a public app must send.
	Approve(ctx context.Context, clientID, redirectURI string, requested []Scope, challenge CodeChallenge) (code string, granted []Scope, err error)

	// Token runs a grant. Errors are *OAuthError.
	Token(ctx context.Context, in *TokenRequest) (*TokenResponse, error)
	// Revoke implements RFC 7009: nil for an unknown or expired token.
	Revoke(ctx context.Context, client ClientAuth, token string) error
	// Introspect implements RFC 7662; a client sees only its own tokens.
	Introspect(ctx context.Context, client ClientAuth, token string) (*Introspection, error)
	// Authenticate checks an opaque access token and returns its actor.
	Authenticate(ctx context.Context, accessToken string) (*Actor, error)

	ConnectedApps(ctx context.Context) ([]ConnectedApp, error)
	// Disconnect revokes every grant of the app in the caller's org.
	Disconnect(ctx context.Context, clientID string) error
}
