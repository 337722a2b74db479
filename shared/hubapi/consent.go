package hubapi

// The OAuth consent page (spec 4.2 and 5), served by the hub at
// /oauth/authorize, outside /api/v1. A partner app sends the merchant's
// browser here with response_type, client_id, redirect_uri, scope and
// state; the merchant signs in with their first-party credentials, reads
// what the app asks for in words, and approves or denies. Approve sends
// the browser to the app's registered redirect_uri with a single-use code
// and the unchanged state; deny with error=access_denied and the state.
//
// The traps, each handled here:
//   - Open redirect. client_id and redirect_uri are checked first, with
//     OAuth.AppForAuthorize (a registered URI, byte for byte). Until they
//     pass, every answer is an HTML error page (400) and never a redirect.
//     Only after them do other errors (response_type, scope, state)
//     redirect with an RFC 6749 4.1.2.1 error code.
//   - CSRF and login CSRF. Every form carries a token that is an HMAC of
//     the browser's cookie id, the form's purpose and every request
//     parameter, under a key of this process; a POST must present the
//     same cookie and a token that matches (constant time). A token of
//     another session, another form or altered hidden fields fails, and
//     client_id and redirect_uri are checked with AppForAuthorize again.
//   - The session. The cookie holds only a random id (HttpOnly,
//     SameSite=Lax, Secure over TLS, Path /oauth). A successful sign-in
//     mints a new id (no fixation); the map behind it holds the
//     first-party access token, is bounded in size and entries expire
//     after consentTTL. The token never appears in a URL or a log. A
//     decision (approve or deny) ends the session and logs it out.
//   - Clickjacking and leaks. X-Frame-Options DENY, a CSP with
//     frame-ancestors 'none' and no script, Cache-Control no-store and
//     Referrer-Policy no-referrer on every answer. The CSP's form-action
//     names the app's redirect origin, which Chromium applies to the
//     redirect after Approve.
//   - Fiber's strings point into reused buffers: every parameter is
//     copied before it reaches a service, a template or the session map.

import (
	"bytes"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"html/template"
	"io/fs"
	"log/slog"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/gofiber/fiber/v2"

	"kassa.dev/shared/httpapi"
	"kassa.dev/shared/kassa"
)

const (
	consentPath   = "/oauth/authorize"
	consentCookie = "kassa_consent"
	// consentTTL is how long a sign-in on the consent page lasts (the
	// first-party access token it holds lives 900 s).
	consentTTL = 10 * time.Minute
	// consentMaxSessions bounds the signed-in sessions kept in memory;
	// beyond it the oldest is dropped (its merchant signs in again).
	consentMaxSessions = 10000
)

// authorizeParams are the parameters of an authorization request, copied
// out of Fiber's buffers; CodeChallenge and CodeChallengeMethod are PKCE's
// (RFC 7636 4.3), carried through the sign-in and consent forms.
type authorizeParams struct {
	ResponseType, ClientID, RedirectURI, Scope, State string
	CodeChallenge, CodeChallengeMethod                string
}

// query is the parameters as a query string, for the page's own URL.
func (p *authorizeParams) query() string {
	v := url.Values{"response_type": {p.ResponseType}, "client_id": {p.ClientID}, "redirect_uri": {p.RedirectURI},
		"scope": {p.Scope}, "state": {p.State}}
	if p.CodeChallenge != "" || p.CodeChallengeMethod != "" {
		v.Set("code_challenge", p.CodeChallenge)
		v.Set("code_challenge_method", p.CodeChallengeMethod)
	}
	return v.Encode()
}

// challenge is the request's PKCE challenge.
func (p *authorizeParams) challenge() kassa.CodeChallenge {
	return kassa.CodeChallenge{Challenge: p.CodeChallenge, Method: p.CodeChallengeMethod}
}

// scopeLine is one scope on the page.
type scopeLine struct {
	Scope kassa.Scope
	Words string
	Why   string // why a requested scope is not granted
}

// consentView is what authorize.html renders: an error (Problem), the
// sign-in form (SignIn) or the consent form.
type consentView struct {
	Title        string
	Problem      string
	SignIn       bool
	Message      string
	Email        string
	Params       authorizeParams
	CSRF         string
	AppName      string
	OrgName      string
	UserEmail    string
	Role         kassa.Role
	Granted      []scopeLine // requested ∩ registered ∩ the user's role
	Withheld     []scopeLine // the other requested scopes, with why
	RedirectHost string
}

// consentSession is a merchant signed in on the consent page.
type consentSession struct {
	accessToken string // first-party; never logged, never in a URL
	expires     time.Time
}

// consentSessions is the server side of the consent cookie.
type consentSessions struct {
	mu   sync.Mutex
	key  []byte // HMAC key of the forms' CSRF tokens
	m    map[string]*consentSession
	fifo []string // ids in the order they were added: their expiry order
	now  func() time.Time
}

func newConsentSessions(now func() time.Time) *consentSessions {
	return &consentSessions{key: randomBytes(32), m: map[string]*consentSession{}, now: now}
}

// add keeps a signed-in session and returns its new id.
func (ss *consentSessions) add(accessToken string) string {
	id := base64.RawURLEncoding.EncodeToString(randomBytes(32))
	ss.mu.Lock()
	defer ss.mu.Unlock()
	now := ss.now()
	for len(ss.fifo) > 0 {
		old, ok := ss.m[ss.fifo[0]]
		if ok && now.Before(old.expires) && len(ss.m) < consentMaxSessions {
			break
		}
		delete(ss.m, ss.fifo[0])
		ss.fifo = ss.fifo[1:]
	}
	ss.m[id] = &consentSession{accessToken: accessToken, expires: now.Add(consentTTL)}
	ss.fifo = append(ss.fifo, id)
	return id
}

// get returns the live session of id, or nil.
func (ss *consentSessions) get(id string) *consentSession {
	ss.mu.Lock()
	defer ss.mu.Unlock()
	s := ss.m[id]
	if s == nil || !ss.now().Before(s.expires) {
		delete(ss.m, id)
		return nil
	}
	return s
}

func (ss *consentSessions) drop(id string) {
	ss.mu.Lock()
	delete(ss.m, id)
	ss.mu.Unlock()
}

// csrf is the token of a form: bound to the cookie id, the form's purpose
// and every request parameter.
func (ss *consentSessions) csrf(id, purpose string, p *authorizeParams) string {
	m := hmac.New(sha256.New, ss.key)
	for _, f := range []string{purpose, id, p.ResponseType, p.ClientID, p.RedirectURI, p.Scope, p.State, p.CodeChallenge, p.CodeChallengeMethod} {
		m.Write([]byte(strconv.Itoa(len(f))))
		m.Write([]byte{':'})
		m.Write([]byte(f))
	}
	return base64.RawURLEncoding.EncodeToString(m.Sum(nil))
}

// checkCSRF compares a presented token in constant time.
func (ss *consentSessions) checkCSRF(id, purpose string, p *authorizeParams, token string) bool {
	return id != "" && hmac.Equal([]byte(token), []byte(ss.csrf(id, purpose, p)))
}

func randomBytes(n int) []byte {
	b := make([]byte, n)
	if _, err := rand.Read(b); err != nil {
		panic(err) // crypto/rand does not fail on Linux
	}
	return b
}

// The forms' purposes, part of their CSRF tokens.
const (
	purposeSignIn  = "signin"
	purposeConsent = "consent"
)

// consent is the consent page's state in the server.
type consent struct {
	tmpl     *template.Template
	css      []byte
	sessions *consentSessions
}

// routesConsent serves the consent page: the page itself (GET), its form
// posts (POST) and its stylesheet.
func (s *api) routesConsent(files fs.FS) {
	tmpl := template.Must(template.ParseFS(files, "authorize.html"))
	css, err := fs.ReadFile(files, "consent.css")
	if err != nil {
		panic(err)
	}
	s.consent = &consent{tmpl: tmpl, css: css, sessions: newConsentSessions(s.cfg.Now)}
	s.App().Get("/oauth/consent.css", func(c *fiber.Ctx) error {
		c.Set(fiber.HeaderContentSecurityPolicy, httpapi.CSPPage)
		c.Set(fiber.HeaderCacheControl, "no-cache")
		c.Type("css", "utf-8")
		return c.Send(s.consent.css)
	})
	s.App().Get(consentPath, s.authorizePage)
	s.App().Post(consentPath, s.authorizePost)
}

// cspConsent is the page's policy: its own stylesheet, no script, forms
// that post to itself and (after Approve or Deny) redirect to the app.
const cspConsent = "default-src 'none'; style-src 'self'; img-src 'self' data:; base-uri 'none'; frame-ancestors 'none'; form-action 'self'"

// consentHeaders sets the headers of every consent answer; formTarget, a
// validated redirect URI, joins the CSP's form-action.
func consentHeaders(c *fiber.Ctx, formTarget string) {
	csp := cspConsent
	if o := cspOrigin(formTarget); o != "" {
		csp += " " + o
	}
	c.Set(fiber.HeaderContentSecurityPolicy, csp)
	c.Set(fiber.HeaderCacheControl, "no-store")
	c.Set(fiber.HeaderPragma, "no-cache")
	c.Set(fiber.HeaderXFrameOptions, "DENY")
	c.Set(fiber.HeaderReferrerPolicy, "no-referrer")
}

// cspOrigin is the origin of uri as a CSP source, or "" if it cannot be
// one safely.
func cspOrigin(uri string) string {
	u, err := url.Parse(uri)
	if err != nil || u.Scheme == "" || u.Host == "" {
		return ""
	}
	o := strings.ToLower(u.Scheme) + "://" + u.Host
	for _, r := range o {
		if r <= ' ' || r > '~' || strings.ContainsRune(";,'\"", r) {
			return ""
		}
	}
	return o
}

// authorizeArgs reads the parameters of a GET (query) or POST (form).
type authorizeArgs interface {
	PeekMulti(key string) [][]byte
}

// param returns the one value of key (copied), and false when the key is
// repeated (RFC 6749 3.1: a parameter must not appear more than once).
func param(args authorizeArgs, key string) (string, bool) {
	vs := args.PeekMulti(key)
	switch len(vs) {
	case 0:
		return "", true
	case 1:
		return string(vs[0]), true
	}
	return "", false
}

// authorizeRequest is a parsed request that passed the client check: its
// app, and the error to redirect with if another parameter is wrong.
type authorizeRequest struct {
	params    authorizeParams
	app       *kassa.OAuthApp
	scopes    []kassa.Scope
	errorCode string // RFC 6749 4.1.2.1; "" when the request is good
	errorDesc string
}

// parseAuthorize checks client_id and redirect_uri (a failure is an error
// page and no redirect: ok false, the page already rendered), then the
// other parameters (a failure is errorCode, to be redirected with).
func (s *api) parseAuthorize(c *fiber.Ctx, args authorizeArgs) (*authorizeRequest, bool, error) {
	clientID, ok1 := param(args, "client_id")
	redirectURI, ok2 := param(args, "redirect_uri")
	if !ok1 || !ok2 || clientID == "" || redirectURI == "" {
		return nil, false, s.consentProblem(c, fiber.StatusBadRequest, "Incomplete request",
			"The app sent an authorization request without one client_id and one redirect_uri.")
	}
	app, err := s.svc.OAuth.AppForAuthorize(c.UserContext(), clientID, redirectURI)
	if err != nil {
		switch kassa.ErrorKind(err) {
		case kassa.ENotFound, kassa.EInvalid, kassa.EBadRequest:
			return nil, false, s.consentProblem(c, fiber.StatusBadRequest, "Unknown app or address",
				"The app is not registered, or the address it wants you sent back to is not one it registered.")
		}
		return nil, false, s.consentFailure(c, err)
	}
	r := &authorizeRequest{app: app, params: authorizeParams{ClientID: clientID, RedirectURI: redirectURI}}
	p := &r.params
	var ok3, ok4, ok5, ok6, ok7 bool
	p.ResponseType, ok3 = param(args, "response_type")
	p.Scope, ok4 = param(args, "scope")
	p.State, ok5 = param(args, "state")
	p.CodeChallenge, ok6 = param(args, "code_challenge")
	p.CodeChallengeMethod, ok7 = param(args, "code_challenge_method")
	pkce := kassa.CheckCodeChallenge(p.challenge(), app.ClientType)
	var pe *kassa.OAuthError
	switch {
	case !ok3 || !ok4 || !ok5 || !ok6 || !ok7:
		r.errorCode, r.errorDesc = kassa.OAuthInvalidRequest, "a parameter is repeated"
	case p.ResponseType == "":
		r.errorCode, r.errorDesc = kassa.OAuthInvalidRequest, "response_type is required"
	case p.ResponseType != "code":
		r.errorCode, r.errorDesc = kassa.OAuthUnsupportedResponseType, "response_type must be code"
	case p.State == "":
		r.errorCode, r.errorDesc = kassa.OAuthInvalidRequest, "state is required"
	case errors.As(pkce, &pe):
		r.errorCode, r.errorDesc = pe.Code, pe.Description
	default:
		r.scopes, err = kassa.ParseScopes(p.Scope)
		var oe *kassa.OAuthError
		switch {
		case errors.As(err, &oe):
			r.errorCode, r.errorDesc = oe.Code, oe.Description
		case err != nil:
			return nil, false, s.consentFailure(c, err)
		case len(r.scopes) == 0:
			r.errorCode, r.errorDesc = kassa.OAuthInvalidScope, "scope is required"
		}
	}
	return r, true, nil
}

// authorizePage is GET /oauth/authorize.
func (s *api) authorizePage(c *fiber.Ctx) error {
	consentHeaders(c, "")
	r, ok, err := s.parseAuthorize(c, c.Request().URI().QueryArgs())
	if !ok {
		return err
	}
	if r.errorCode != "" {
		return s.redirectToApp(c, r, "error", r.errorCode, "error_description", r.errorDesc)
	}
	id := c.Cookies(consentCookie)
	if sess := s.consent.sessions.get(id); sess != nil {
		if a, err := s.svc.Auth.Authenticate(c.UserContext(), sess.accessToken); err == nil {
			return s.consentForm(c, fiber.StatusOK, r, id, a, "")
		}
		s.consent.sessions.drop(id)
	}
	return s.signInForm(c, fiber.StatusOK, r, "", "")
}

// authorizePost is POST /oauth/authorize: sign in, approve or deny.
func (s *api) authorizePost(c *fiber.Ctx) error {
	consentHeaders(c, "")
	r, ok, err := s.parseAuthorize(c, c.Request().PostArgs())
	if !ok {
		return err
	}
	action, _ := param(c.Request().PostArgs(), "action")
	token, _ := param(c.Request().PostArgs(), "csrf_token")
	id := strings.Clone(c.Cookies(consentCookie))
	purpose := purposeConsent
	if action == "signin" {
		purpose = purposeSignIn
	}
	if !s.consent.sessions.checkCSRF(id, purpose, &r.params, token) {
		return s.consentProblem(c, fiber.StatusForbidden, "This form cannot be used",
			"The form was not sent from this page in this browser, or it has expired. Go back to the app and start again.")
	}
	if r.errorCode != "" {
		return s.redirectToApp(c, r, "error", r.errorCode, "error_description", r.errorDesc)
	}
	switch action {
	case "signin":
		return s.signIn(c, r)
	case "approve", "deny":
	default:
		return s.consentProblem(c, fiber.StatusBadRequest, "Unknown action", "Choose Approve or Deny.")
	}
	sess := s.consent.sessions.get(id)
	var a *kassa.Actor
	if sess != nil {
		a, err = s.svc.Auth.Authenticate(c.UserContext(), sess.accessToken)
	}
	if sess == nil || err != nil {
		s.consent.sessions.drop(id)
		if action == "deny" { // the form was this browser's: denying needs no sign-in
			return s.redirectToApp(c, r, "error", kassa.OAuthAccessDenied)
		}
		return s.signInForm(c, fiber.StatusOK, r, "", "Your sign-in has expired. Sign in again to decide.")
	}
	ctx := kassa.WithActor(c.UserContext(), a)
	if action == "deny" {
		s.endConsentSession(c, id, a)
		return s.redirectToApp(c, r, "error", kassa.OAuthAccessDenied)
	}
	code, _, err := s.svc.OAuth.Approve(ctx, r.params.ClientID, r.params.RedirectURI, r.scopes, r.params.challenge())
	if kassa.ErrorKind(err) == kassa.EInvalid {
		return s.consentForm(c, fiber.StatusBadRequest, r, id, a, "Nothing can be granted: "+errorMessage(err))
	}
	if err != nil {
		return s.consentFailure(c, err)
	}
	s.endConsentSession(c, id, a)
	return s.redirectToApp(c, r, "code", code)
}

// signIn checks the sign-in form's credentials with the first-party
// login (its throttles included) and, on success, starts a session under
// a new cookie id and shows the consent page by its own URL.
func (s *api) signIn(c *fiber.Ctx, r *authorizeRequest) error {
	email, _ := param(c.Request().PostArgs(), "email")
	password, _ := param(c.Request().PostArgs(), "password")
	email = strings.TrimSpace(email)
	if email == "" || password == "" || len(email) > 254 || len(password) > 1024 {
		return s.signInForm(c, fiber.StatusOK, r, email, "Enter your e-mail and password.")
	}
	t, err := s.svc.Auth.Login(c.UserContext(), email, password, s.ClientAddr(c))
	if err != nil {
		switch kassa.ErrorKind(err) {
		case kassa.EUnauthorized:
			return s.signInForm(c, fiber.StatusOK, r, email, "Wrong e-mail or password.")
		case kassa.ERateLimited:
			var ke *kassa.Error
			if errors.As(err, &ke) && ke.RetryAfter > 0 {
				c.Set(fiber.HeaderRetryAfter, strconv.Itoa(ke.RetryAfter))
			}
			return s.signInForm(c, fiber.StatusTooManyRequests, r, email, "Too many sign-in attempts. Wait a little and try again.")
		}
		return s.consentFailure(c, err)
	}
	s.setConsentCookie(c, s.consent.sessions.add(t.AccessToken))
	return c.Redirect(consentPath+"?"+r.params.query(), fiber.StatusSeeOther)
}

// endConsentSession ends the sign-in after a decision: the cookie, the
// session in memory and the first-party session behind it.
func (s *api) endConsentSession(c *fiber.Ctx, id string, a *kassa.Actor) {
	s.consent.sessions.drop(id)
	c.Cookie(&fiber.Cookie{Name: consentCookie, Value: "", Path: "/oauth", MaxAge: -1, HTTPOnly: true,
		Secure: c.Protocol() == "https", SameSite: fiber.CookieSameSiteLaxMode})
	if err := s.svc.Auth.Logout(kassa.WithActor(c.UserContext(), a)); err != nil {
		s.log.Warn("consent: logout", slog.String("request_id", httpapi.RequestID(c)), slog.Any("err", err))
	}
}

func (s *api) setConsentCookie(c *fiber.Ctx, id string) {
	c.Cookie(&fiber.Cookie{Name: consentCookie, Value: id, Path: "/oauth", MaxAge: int(consentTTL.Seconds()),
		HTTPOnly: true, Secure: c.Protocol() == "https", SameSite: fiber.CookieSameSiteLaxMode})
}

// redirectToApp sends the browser to the app's registered redirect URI
// (validated by parseAuthorize) with the given parameters and the
// request's unchanged state.
func (s *api) redirectToApp(c *fiber.Ctx, r *authorizeRequest, kv ...string) error {
	v := url.Values{}
	for i := 0; i+1 < len(kv); i += 2 {
		v.Set(kv[i], kv[i+1])
	}
	if r.params.State != "" {
		v.Set("state", r.params.State)
	}
	uri := r.params.RedirectURI
	sep := "?"
	switch {
	case strings.HasSuffix(uri, "?"):
		sep = ""
	case strings.Contains(uri, "?"):
		sep = "&"
	}
	return c.Redirect(uri+sep+v.Encode(), fiber.StatusFound)
}

// signInForm renders the sign-in form. A browser without a cookie gets
// one (an id with no session), which the form's CSRF token is bound to.
func (s *api) signInForm(c *fiber.Ctx, status int, r *authorizeRequest, email, message string) error {
	id := c.Cookies(consentCookie)
	if id == "" || s.consent.sessions.get(id) != nil {
		// A fresh id also for a signed-in one whose token failed: the next
		// sign-in mints its own anyway.
		id = base64.RawURLEncoding.EncodeToString(randomBytes(32))
	} else {
		id = strings.Clone(id)
	}
	s.setConsentCookie(c, id)
	return s.renderConsent(c, status, &consentView{Title: "Sign in", SignIn: true, Message: message, Email: email,
		Params: r.params, CSRF: s.consent.sessions.csrf(id, purposeSignIn, &r.params), AppName: r.app.Name})
}

// consentForm renders the consent form for the signed-in actor.
func (s *api) consentForm(c *fiber.Ctx, status int, r *authorizeRequest, id string, a *kassa.Actor, message string) error {
	user, err := s.svc.Auth.Me(kassa.WithActor(c.UserContext(), a))
	if err != nil {
		return s.consentFailure(c, err)
	}
	orgName := "your organisation"
	if s.svc.Orgs != nil {
		if o, err := s.svc.Orgs.FindOrg(c.UserContext(), a.OrgID); err == nil {
			orgName = o.Name
		}
	}
	v := &consentView{Title: "Connect " + r.app.Name, Message: message, Params: r.params,
		CSRF: s.consent.sessions.csrf(id, purposeConsent, &r.params), AppName: r.app.Name, OrgName: orgName,
		UserEmail: user.Email, Role: a.Role, RedirectHost: redirectHost(r.params.RedirectURI)}
	granted := kassa.GrantedScopes(r.scopes, r.app.Scopes, kassa.RoleScopes(a.Role))
	for _, sc := range r.scopes {
		l := scopeLine{Scope: sc, Words: kassa.ScopeWords(sc)}
		switch {
		case slices.Contains(granted, sc):
			v.Granted = append(v.Granted, l)
			continue
		case !slices.Contains(r.app.Scopes, sc):
			l.Why = "the app did not register it"
		default:
			l.Why = "your role (" + string(a.Role) + ") cannot grant it"
		}
		v.Withheld = append(v.Withheld, l)
	}
	consentHeaders(c, r.params.RedirectURI)
	return s.renderConsent(c, status, v)
}

// redirectHost is the host the merchant is sent back to, for the page.
func redirectHost(uri string) string {
	if u, err := url.Parse(uri); err == nil && u.Host != "" {
		return u.Host
	}
	return uri
}

// consentProblem renders an error page; it never redirects.
func (s *api) consentProblem(c *fiber.Ctx, status int, title, problem string) error {
	return s.renderConsent(c, status, &consentView{Title: title, Problem: problem})
}

// consentFailure renders an unexpected error as a 500 page and logs it
// with the request id; its text stays in the log.
func (s *api) consentFailure(c *fiber.Ctx, err error) error {
	s.log.Error("consent", slog.String("request_id", httpapi.RequestID(c)), slog.Any("err", err))
	return s.consentProblem(c, fiber.StatusInternalServerError, "Something went wrong",
		"Kassa could not finish this step (request "+httpapi.RequestID(c)+"). Try again in a moment.")
}

func (s *api) renderConsent(c *fiber.Ctx, status int, v *consentView) error {
	var b bytes.Buffer
	if err := s.consent.tmpl.Execute(&b, v); err != nil {
		return err
	}
	c.Type("html", "utf-8")
	return c.Status(status).Send(b.Bytes())
}

// errorMessage is the client-safe message of a kassa error.
func errorMessage(err error) string {
	var ke *kassa.Error
	if errors.As(err, &ke) && ke.Message != "" {
		return ke.Message
	}
	return "the request was refused"
}
