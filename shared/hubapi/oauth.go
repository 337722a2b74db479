package hubapi

// The hub's OAuth 2.0 authorization server over HTTP (spec 4.2 and 5,
// CONTRACT.md "Auth"): the token, revoke and introspection endpoints, RFC
// 8414 metadata, app registration and the org's connected apps. The
// consent page (/oauth/authorize) is served elsewhere.
//
// Traps:
//   - The token, revoke and introspection endpoints speak RFC 6749, not
//     this API's conventions: form-encoded or JSON bodies in, bare JSON
//     {error, error_description} out (never a problem document), with
//     Cache-Control: no-store. Standard client libraries send forms.
//   - They are public and take secrets: bodies are capped at
//     oauthBodyLimit, every value is checked for shape before the store is
//     asked, and nothing here logs a parameter (the access log has the path
//     only; a GET introspection's query never reaches a log).
//   - Client credentials come in the body or by HTTP Basic, whose id and
//     secret are form-url-encoded first (RFC 6749 2.3.1); both at once is
//     invalid_request.
//   - Fiber's buffers are reused by the connection's next request: every
//     value taken from the request is copied before a service keeps it.

import (
	"encoding/base64"
	"encoding/json"
	"errors"
	"mime"
	"net/url"
	"strings"
	"unicode/utf8"

	"github.com/gofiber/fiber/v2"

	"kassa.dev/shared/httpapi"
	"kassa.dev/shared/kassa"
)

// oauthBodyLimit bounds the bodies of the public OAuth endpoints: their
// largest legitimate body is a few hundred bytes.
const oauthBodyLimit = 8 << 10

// oauthParams are the parameters of the token, revoke and introspection
// endpoints, from a form, a JSON body or (GET introspection) the query.
type oauthParams struct {
	GrantType     string `json:"grant_type"`
	Code          string `json:"code"`
	RedirectURI   string `json:"redirect_uri"`
	RefreshToken  string `json:"refresh_token"`
	Scope         string `json:"scope"`
	CodeVerifier  string `json:"code_verifier"`
	ClientID      string `json:"client_id"`
	ClientSecret  string `json:"client_secret"`
	Token         string `json:"token"`
	TokenTypeHint string `json:"token_type_hint"`
}

// oauthTokenForm documents the token endpoint's body (RFC 6749 4.1.3, 6,
// 4.4) in the OpenAPI document; the handler reads oauthParams.
type oauthTokenForm struct {
	// GrantType is authorization_code, refresh_token or client_credentials.
	GrantType string `json:"grant_type" openapi:"required,enum=GrantType"`
	// Code is the authorization code (authorization_code).
	Code string `json:"code"`
	// RedirectURI is the redirect_uri the code was issued for, byte for byte (authorization_code).
	RedirectURI string `json:"redirect_uri"`
	// RefreshToken is the refresh token to rotate (refresh_token).
	RefreshToken string `json:"refresh_token"`
	// Scope narrows the grant: space-separated scopes within it (refresh_token, client_credentials).
	Scope string `json:"scope"`
	// CodeVerifier is PKCE's proof (RFC 7636 4.5): required when the code was requested with a code_challenge, refused otherwise (authorization_code).
	CodeVerifier string `json:"code_verifier"`
	// ClientID is the app's client id, unless sent by HTTP Basic; a public client sends it alone.
	ClientID string `json:"client_id"`
	// ClientSecret is the app's client secret, unless sent by HTTP Basic; a public client has none.
	ClientSecret string `json:"client_secret"`
}

// oauthTokenRef documents the body of the revocation (RFC 7009) and
// introspection (RFC 7662) endpoints.
type oauthTokenRef struct {
	// Token is the access or refresh token.
	Token string `json:"token" openapi:"required"`
	// TokenTypeHint is access_token or refresh_token; a hint only.
	TokenTypeHint string `json:"token_type_hint"`
	// ClientID is the app's client id, unless sent by HTTP Basic.
	ClientID string `json:"client_id"`
	// ClientSecret is the app's client secret, unless sent by HTTP Basic.
	ClientSecret string `json:"client_secret"`
}

// fields maps the form names of the parameters to their fields.
func (p *oauthParams) fields() map[string]*string {
	return map[string]*string{
		"grant_type": &p.GrantType, "code": &p.Code, "redirect_uri": &p.RedirectURI, "refresh_token": &p.RefreshToken,
		"scope": &p.Scope, "code_verifier": &p.CodeVerifier, "client_id": &p.ClientID, "client_secret": &p.ClientSecret, "token": &p.Token,
		"token_type_hint": &p.TokenTypeHint,
	}
}

func (s *api) routesOAuth() {
	svc := s.svc.OAuth
	s.Handle(&httpapi.Route{Method: "POST", Path: "/oauth/token", Tag: "oauth", Public: true, Form: oauthTokenForm{}, Resp: kassa.TokenResponse{},
		Summary: "OAuth 2.0 token endpoint (RFC 6749): authorization_code, refresh_token (rotating) and client_credentials; " +
			"form-encoded or JSON; client auth by HTTP Basic or in the body", Handler: s.oauthToken})
	s.Handle(&httpapi.Route{Method: "POST", Path: "/oauth/revoke", Tag: "oauth", Public: true, Form: oauthTokenRef{},
		Summary: "Revoke an access or refresh token of the client (RFC 7009); 200 also for unknown or expired tokens", Handler: s.oauthRevoke})
	for _, m := range []string{"GET", "POST"} {
		s.Handle(&httpapi.Route{Method: m, Path: "/oauth/introspect", Tag: "oauth", Public: true, Form: oauthTokenRef{}, Resp: kassa.Introspection{},
			Summary: "Describe a token of the client (RFC 7662); another client's token is {active:false}", Handler: s.oauthIntrospect})
	}
	s.Handle(&httpapi.Route{Method: "POST", Path: "/oauth/apps", Tag: "oauth", Status: 201, SecretOnce: true, Body: kassa.OAuthAppCreate{}, Resp: kassa.OAuthAppSecret{},
		Summary: "Register an OAuth app of the org (owners): confidential (the client_secret is in this answer only) or public (no secret; PKCE S256 required)",
		Handler: httpapi.CreateWith("/oauth/apps", func(a *kassa.OAuthAppSecret) string { return a.ClientID }, svc.CreateApp)})
	s.Handle(&httpapi.Route{Method: "GET", Path: "/oauth/apps", Tag: "oauth", List: true, Resp: kassa.OAuthApp{}, Query: httpapi.PageParams,
		Summary: "List the org's OAuth apps (owners)", Handler: s.listOAuthApps})
	s.Handle(&httpapi.Route{Method: "GET", Path: "/oauth/apps/:id", Tag: "oauth", Resp: kassa.OAuthApp{},
		Summary: "Retrieve an OAuth app of the org (owners)", Handler: httpapi.GetBy("oauth app", svc.FindApp)})
	s.Handle(&httpapi.Route{Method: "PATCH", Path: "/oauth/apps/:id", Tag: "oauth", Body: kassa.OAuthAppUpdate{}, Resp: kassa.OAuthApp{},
		Summary: "Change an app's name, redirect URIs or scopes (owners); issued tokens keep their scopes", Handler: httpapi.UpdateWith("oauth app", svc.UpdateApp)})
	s.Handle(&httpapi.Route{Method: "DELETE", Path: "/oauth/apps/:id", Tag: "oauth", Status: fiber.StatusNoContent,
		Summary: "Delete an app (owners); every token it holds in any org stops working", Handler: s.deleteOAuthApp})
	s.Handle(&httpapi.Route{Method: "POST", Path: "/oauth/apps/:id/rotate-secret", Tag: "oauth", SecretOnce: true, Resp: kassa.OAuthAppSecret{},
		Summary: "Give an app a new client_secret (owners); the old one stops working at once; 409 for a public app", Handler: s.rotateOAuthSecret})
	s.Handle(&httpapi.Route{Method: "GET", Path: "/oauth/connections", Tag: "oauth", List: true, Resp: kassa.ConnectedApp{},
		Summary: "The apps holding a live grant in the org (owners)", Handler: s.listConnections})
	s.Handle(&httpapi.Route{Method: "DELETE", Path: "/oauth/connections/:clientId", Tag: "oauth", Status: fiber.StatusNoContent,
		Summary: "Disconnect an app (owners): its tokens in the org get 401 and its refresh invalid_grant at once", Handler: s.disconnect})
	s.App().Get("/.well-known/oauth-authorization-server", s.oauthMetadata)
}

// oauthFail writes an RFC 6749 error answer; other errors go to the
// problem handler.
func oauthFail(c *fiber.Ctx, err error) error {
	var oe *kassa.OAuthError
	if !errors.As(err, &oe) {
		return err
	}
	c.Set(fiber.HeaderCacheControl, "no-store")
	c.Set("Pragma", "no-cache")
	if oe.Code == kassa.OAuthInvalidClient {
		// RFC 6749 5.2: a client that tried HTTP Basic must get 401 with
		// the scheme; one that sent its credentials in the body may, and
		// gets the same answer.
		c.Set(fiber.HeaderWWWAuthenticate, `Basic realm="kassa"`)
	}
	return c.Status(oe.Status).JSON(fiber.Map{"error": oe.Code, "error_description": oe.Description})
}

func invalidRequest(desc string) error { return kassa.OAuthErr(kassa.OAuthInvalidRequest, desc) }

// readOAuthParams reads the parameters and the client's credentials of a
// public OAuth endpoint. Errors: *kassa.OAuthError.
func readOAuthParams(c *fiber.Ctx) (*oauthParams, kassa.ClientAuth, error) {
	var p oauthParams
	var auth kassa.ClientAuth
	if len(c.Body()) > oauthBodyLimit {
		return nil, auth, &kassa.OAuthError{Code: kassa.OAuthInvalidRequest, Description: "the request body is too large", Status: fiber.StatusRequestEntityTooLarge}
	}
	fields := p.fields()
	if c.Method() == fiber.MethodGet {
		if err := readArgs(c.Request().URI().QueryArgs().PeekMulti, fields); err != nil {
			return nil, auth, err
		}
	} else {
		mt, _, _ := mime.ParseMediaType(c.Get(fiber.HeaderContentType))
		switch mt {
		case fiber.MIMEApplicationForm:
			args := c.Request().PostArgs()
			if err := readArgs(args.PeekMulti, fields); err != nil {
				return nil, auth, err
			}
		case fiber.MIMEApplicationJSON:
			if !utf8.Valid(c.Body()) || json.Unmarshal(c.Body(), &p) != nil {
				return nil, auth, invalidRequest("the body must be a JSON object of string parameters")
			}
		default:
			return nil, auth, invalidRequest("Content-Type must be application/x-www-form-urlencoded or application/json")
		}
	}
	for name, v := range fields {
		if len(*v) > 4096 || !utf8.ValidString(*v) {
			return nil, auth, invalidRequest(name + " is too long or not valid UTF-8")
		}
	}
	auth = kassa.ClientAuth{ClientID: p.ClientID, ClientSecret: p.ClientSecret}
	if h := c.Get(fiber.HeaderAuthorization); h != "" {
		raw, ok := strings.CutPrefix(h, "Basic ")
		if !ok {
			return nil, auth, invalidRequest("only HTTP Basic client authentication is accepted in the Authorization header")
		}
		if p.ClientID != "" || p.ClientSecret != "" {
			return nil, auth, invalidRequest("client credentials must not be sent both by HTTP Basic and in the body")
		}
		id, secret, err := basicCredentials(raw)
		if err != nil {
			return nil, kassa.ClientAuth{Basic: true}, err
		}
		auth = kassa.ClientAuth{ClientID: id, ClientSecret: secret, Basic: true}
	}
	return &p, auth, nil
}

// readArgs copies the known parameters out of Fiber's argument buffer; a
// parameter given twice is invalid_request (RFC 6749 3.2), unknown ones
// are ignored (3.1).
func readArgs(multi func(string) [][]byte, fields map[string]*string) error {
	for name, dst := range fields {
		vs := multi(name)
		if len(vs) > 1 {
			return invalidRequest(name + " is given more than once")
		}
		if len(vs) == 1 {
			*dst = string(vs[0]) // a copy
		}
	}
	return nil
}

// basicCredentials decodes RFC 6749 2.3.1 HTTP Basic credentials: base64 of
// the form-url-encoded id, a colon and the form-url-encoded secret.
func basicCredentials(raw string) (id, secret string, err error) {
	bad := kassa.OAuthErr(kassa.OAuthInvalidClient, "the HTTP Basic credentials are malformed")
	b, err := base64.StdEncoding.DecodeString(strings.TrimSpace(raw))
	if err != nil {
		return "", "", bad
	}
	i, s, ok := strings.Cut(string(b), ":")
	if !ok {
		return "", "", bad
	}
	if id, err = url.QueryUnescape(i); err != nil {
		return "", "", bad
	}
	if secret, err = url.QueryUnescape(s); err != nil {
		return "", "", bad
	}
	return id, secret, nil
}

func (s *api) oauthToken(c *fiber.Ctx) error {
	p, auth, perr := readOAuthParams(c)
	// A malformed request spends its address's token too.
	err := s.admitToken(c, auth.ClientID)
	if err == nil {
		err = perr
	}
	if err != nil {
		return oauthFail(c, err)
	}
	res, err := s.svc.OAuth.Token(c.UserContext(), &kassa.TokenRequest{GrantType: p.GrantType, Code: p.Code, RedirectURI: p.RedirectURI,
		RefreshToken: p.RefreshToken, Scope: p.Scope, CodeVerifier: p.CodeVerifier, ClientID: auth.ClientID, ClientSecret: auth.ClientSecret, Basic: auth.Basic})
	s.spentToken(c, auth.ClientID, err)
	if err != nil {
		return oauthFail(c, err)
	}
	c.Set(fiber.HeaderCacheControl, "no-store")
	c.Set("Pragma", "no-cache")
	return c.JSON(res)
}

func (s *api) oauthRevoke(c *fiber.Ctx) error {
	p, auth, err := readOAuthParams(c)
	if err == nil {
		err = s.svc.OAuth.Revoke(c.UserContext(), auth, p.Token)
	}
	if err != nil {
		return oauthFail(c, err)
	}
	c.Set(fiber.HeaderCacheControl, "no-store")
	return c.JSON(fiber.Map{})
}

func (s *api) oauthIntrospect(c *fiber.Ctx) error {
	p, auth, err := readOAuthParams(c)
	if err != nil {
		return oauthFail(c, err)
	}
	if p.Token == "" {
		return oauthFail(c, invalidRequest("token is required"))
	}
	in, err := s.svc.OAuth.Introspect(c.UserContext(), auth, p.Token)
	if err != nil {
		return oauthFail(c, err)
	}
	c.Set(fiber.HeaderCacheControl, "no-store")
	return c.JSON(in)
}

// oauthMetadata serves RFC 8414 metadata. The issuer is the configured
// public URL (--public-url), else the listener's: never the request's Host
// header, which any client writes (a poisoned cache or a proxy passing it
// on would send partners' secrets elsewhere).
func (s *api) oauthMetadata(c *fiber.Ctx) error {
	issuer := s.PublicURL()
	api := issuer + "/api/v1/oauth/"
	c.Set(fiber.HeaderCacheControl, "public, max-age=3600")
	return c.JSON(fiber.Map{
		"issuer":                                        issuer,
		"authorization_endpoint":                        issuer + "/oauth/authorize",
		"token_endpoint":                                api + "token",
		"revocation_endpoint":                           api + "revoke",
		"introspection_endpoint":                        api + "introspect",
		"grant_types_supported":                         []string{"authorization_code", "refresh_token", "client_credentials"},
		"response_types_supported":                      []string{"code"},
		"scopes_supported":                              kassa.OAuthScopes,
		"token_endpoint_auth_methods_supported":         []string{"client_secret_basic", "client_secret_post", "none"},
		"revocation_endpoint_auth_methods_supported":    []string{"client_secret_basic", "client_secret_post", "none"},
		"introspection_endpoint_auth_methods_supported": []string{"client_secret_basic", "client_secret_post"},
		"code_challenge_methods_supported":              []string{kassa.PKCEMethodS256},
		"service_documentation":                         issuer + "/api/v1/openapi.json",
	})
}

func (s *api) listOAuthApps(c *fiber.Ctx) error {
	p, err := httpapi.Page(c)
	if err != nil {
		return err
	}
	l, err := s.svc.OAuth.ListApps(c.UserContext(), p)
	if err != nil {
		return err
	}
	return httpapi.List(c, *l, nil)
}

func (s *api) deleteOAuthApp(c *fiber.Ctx) error {
	id, err := httpapi.PathID(c, "oauth app")
	if err != nil {
		return err
	}
	if err := s.svc.OAuth.DeleteApp(c.UserContext(), id); err != nil {
		return err
	}
	return c.SendStatus(fiber.StatusNoContent)
}

func (s *api) rotateOAuthSecret(c *fiber.Ctx) error {
	id, err := httpapi.PathID(c, "oauth app")
	if err != nil {
		return err
	}
	a, err := s.svc.OAuth.RotateSecret(c.UserContext(), id)
	if err != nil {
		return err
	}
	return httpapi.One(c, fiber.StatusOK, a)
}

func (s *api) listConnections(c *fiber.Ctx) error {
	l, err := s.svc.OAuth.ConnectedApps(c.UserContext())
	return httpapi.List(c, kassa.List[kassa.ConnectedApp]{Items: l}, err)
}

func (s *api) disconnect(c *fiber.Ctx) error {
	id, err := httpapi.ParamID(c, "clientId", "connected app")
	if err != nil {
		return err
	}
	if err := s.svc.OAuth.Disconnect(c.UserContext(), id); err != nil {
		return err
	}
	return c.SendStatus(fiber.StatusNoContent)
}
