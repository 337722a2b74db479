package httpapi

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io/fs"
	"log/slog"
	"net/http"
	"path"
	"runtime/debug"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/gofiber/fiber/v2"
	"github.com/gofiber/fiber/v2/middleware/filesystem"
	"github.com/google/uuid"

	"kassa.dev/shared/kassa"
	"kassa.dev/shared/ratelimit"
)

const localRequestID = "request_id"

// localGraphQL marks a request of a Route.GraphQL: its errors are GraphQL
// responses.
const localGraphQL = "graphql"

func requestID(c *fiber.Ctx) string {
	id, _ := c.Locals(localRequestID).(string)
	return id
}

// validRequestID accepts client ids of up to 128 visible ASCII characters.
func validRequestID(s string) bool { return validKey(s, 128) }

// validKey accepts 1 to max visible ASCII characters.
func validKey(s string, max int) bool {
	if s == "" || len(s) > max {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] <= ' ' || s[i] > '~' {
			return false
		}
	}
	return true
}

// requestIDs echoes a sane X-Request-Id or mints one, and sets it on the response.
func (s *Server) requestIDs(c *fiber.Ctx) error {
	id := c.Get(fiber.HeaderXRequestID)
	if !validRequestID(id) {
		id = uuid.NewString()
	} else {
		// The header's bytes are reused by the connection's next request;
		// the id is logged and may be kept, so it is copied.
		id = strings.Clone(id)
	}
	c.Locals(localRequestID, id)
	c.Set(fiber.HeaderXRequestID, id)
	return c.Next()
}

// recoverer turns a panic into a 500 problem and logs the stack.
func (s *Server) recoverer(c *fiber.Ctx) (err error) {
	defer func() {
		if r := recover(); r != nil {
			s.log.Error("panic", slog.String("request_id", requestID(c)), slog.Any("panic", r), slog.String("stack", string(debug.Stack())))
			err = fmt.Errorf("panic: %v", r)
		}
	}()
	return c.Next()
}

// accessLog logs one line per request and records metrics. It logs the path
// without the query string, which may carry an access token (KDS stream).
func (s *Server) accessLog(c *fiber.Ctx) error {
	start := time.Now()
	err := c.Next()
	if err != nil {
		if herr := s.app.ErrorHandler(c, err); herr != nil {
			c.Status(fiber.StatusInternalServerError)
		}
	}
	d := time.Since(start)
	status := c.Response().StatusCode()
	method := methodLabel(c.Method())
	s.metrics.observe(method, routeLabel(c), status, d)
	if s.log.Enabled(c.UserContext(), slog.LevelInfo) {
		// A handler may keep the record (buffer it, ship it later): the
		// path is copied out of the request's buffer.
		s.log.Info("http", slog.String("request_id", requestID(c)), slog.String("method", method),
			slog.String("path", strings.Clone(c.Path())), slog.Int("status", status), slog.Duration("duration", d),
			slog.String("ip", s.clientIP(c).String()))
	}
	return nil
}

// methodLabel returns the request's method as one of Fiber's constants.
// c.Method() points into fasthttp's request buffer, which the connection's
// next request overwrites; a metric label or a log record keeps the string
// for longer ("GET" became "GETT", and /metrics answered 500 for the
// duplicate series). Fiber refuses other methods before any handler.
func methodLabel(m string) string {
	switch m {
	case fiber.MethodGet:
		return fiber.MethodGet
	case fiber.MethodHead:
		return fiber.MethodHead
	case fiber.MethodPost:
		return fiber.MethodPost
	case fiber.MethodPut:
		return fiber.MethodPut
	case fiber.MethodPatch:
		return fiber.MethodPatch
	case fiber.MethodDelete:
		return fiber.MethodDelete
	case fiber.MethodOptions:
		return fiber.MethodOptions
	case fiber.MethodConnect:
		return fiber.MethodConnect
	case fiber.MethodTrace:
		return fiber.MethodTrace
	}
	return "other"
}

// routeUnmatched is the route label of a request that matched no route
// (404, 405): one series for all of them, whatever the path.
const routeUnmatched = "unmatched"

// routeLabel returns the pattern of the route that served the request,
// a string of the router's that lives as long as the app. A request no
// route matched ends in the global middleware (path "/"; no route of its
// own serves "/"), and Fiber's fallback route (no handlers) carries the raw
// path: both are routeUnmatched, so that no client can grow the metric
// without bound.
func routeLabel(c *fiber.Ctx) string {
	r := c.Route()
	if len(r.Handlers) == 0 || r.Path == "/" {
		return routeUnmatched
	}
	return r.Path
}

// authenticate reads the bearer token, puts the actor in the request
// context and checks the route's scope. A first-party JWT goes to the
// auth service, an OAuth access token (64 hex) to the authorization
// server. anyOf, when given, are scopes of which the token needs one
// (Route.AnyScope).
func (s *Server) authenticate(scope kassa.Scope, anyOf ...kassa.Scope) fiber.Handler {
	return func(c *fiber.Ctx) error {
		raw, ok := strings.CutPrefix(c.Get(fiber.HeaderAuthorization), "Bearer ")
		if !ok || raw == "" {
			return kassa.Errorf(kassa.EUnauthorized, "a bearer token is required")
		}
		a, err := s.bearer(c.UserContext(), strings.TrimSpace(raw))
		if err != nil {
			return err
		}
		c.SetUserContext(kassa.WithActor(c.UserContext(), a))
		if err := s.takeOrgToken(c, a.OrgID); err != nil {
			return err
		}
		if scope != "" && !a.Has(scope) {
			return kassa.Errorf(kassa.EForbidden, "this token lacks the %s scope", scope)
		}
		if len(anyOf) > 0 && !slices.ContainsFunc(anyOf, a.Has) {
			return kassa.Errorf(kassa.EForbidden, "this token lacks the scope: any of %s", scopeList(anyOf))
		}
		return c.Next()
	}
}

func scopeList(scopes []kassa.Scope) string {
	names := make([]string, len(scopes))
	for i, sc := range scopes {
		names[i] = string(sc)
	}
	return strings.Join(names, ", ")
}

// OrgLimiter is an org's request budget: the in-memory
// *ratelimit.Limiter (an edge, a hub on SQLite) or the database's buckets
// of hubs sharing one PostgreSQL (hubonly's), where SetLimit is a no-op
// because the org's own limit is read from its tenants row.
type OrgLimiter interface {
	Take(key string) ratelimit.Result
	Spend(key string, n int) ratelimit.Result
	SetLimit(key string, perMinute, burst int)
}

var _ OrgLimiter = (*ratelimit.Limiter)(nil)

// takeOrgToken spends one token of the org's bucket and sets the rate
// limit headers, which every answer after authentication carries (errors
// too: the problem document keeps the response's headers). The bucket is
// the org's, whatever the token: first-party and OAuth calls of one org
// share it. Its size is the node's default or the org's own limit
// (SetOrgRateLimit), held in memory with the buckets.
func (s *Server) takeOrgToken(c *fiber.Ctx, orgID string) error {
	if s.orgLimit == nil {
		return nil
	}
	r := s.orgLimit.Take(orgID)
	c.Set("X-RateLimit-Limit", strconv.Itoa(r.Limit))
	c.Set("X-RateLimit-Remaining", strconv.Itoa(r.Remaining))
	if !r.Allowed {
		return &kassa.Error{Kind: kassa.ERateLimited, Message: "the org's request rate limit is exhausted",
			RetryAfter: int(r.RetryAfter.Seconds() + 0.999)}
	}
	return nil
}

// bearer checks a bearer token: an OAuth access token (64 hex) with the
// authorization server, anything else as a first-party JWT.
func (s *Server) bearer(ctx context.Context, raw string) (*kassa.Actor, error) {
	if s.svc.OAuth != nil && kassa.IsOpaqueToken(raw) {
		return s.svc.OAuth.Authenticate(ctx, raw)
	}
	return s.svc.Auth.Authenticate(ctx, raw)
}

// heldToken is the bearer token of a response that outlives its request
// (the KDS stream, a WebSocket connection), opened in org.
type heldToken struct {
	auth  func(context.Context, string) (*kassa.Actor, error) // Server.bearer
	token string
	org   string
}

// recheck reads the token again as a request would, with its user's
// current role and state. EUnauthorized: it no longer authenticates in the
// org (logged out, expired, its user deactivated). EForbidden: its actor
// no longer grants r's scope or one of also (a demotion, an app's scopes
// cut). Such a response calls it at every heartbeat and ends on an error,
// so a change of the user ends it there.
func (h heldToken) recheck(ctx context.Context, r *Route, also ...kassa.Scope) *kassa.Error {
	a, err := h.auth(ctx, h.token)
	if err != nil || a.OrgID != h.org {
		return kassa.Errorf(kassa.EUnauthorized, "the access token expired or was revoked")
	}
	if !r.grants(a) {
		return kassa.Errorf(kassa.EForbidden, "this token lacks the scope: %s", r.scopeText())
	}
	for _, sc := range also {
		if !a.Has(sc) {
			return kassa.Errorf(kassa.EForbidden, "this token lacks the scope: %s", sc)
		}
	}
	return nil
}

// idempotent implements Idempotency-Key on POST (CONTRACT.md): the same key
// and body within 24 h replays the first response; another body is 422;
// a first request still running is 409. Responses of 5xx are not kept, so
// a retry after a server error runs again. On a SecretOnce route the
// success of the first request is kept without its body (a secret shown
// once) and a retry is 409 naming what it created (noReplay).
func (s *Server) idempotent(c *fiber.Ctx, r *Route) error {
	key := c.Get("Idempotency-Key")
	if key == "" || c.Method() != fiber.MethodPost || s.svc.Idempotency == nil {
		return c.Next()
	}
	if !validKey(key, 255) {
		return kassa.Errorf(kassa.EBadRequest, "Idempotency-Key must be 1-255 visible ASCII characters")
	}
	ctx := c.UserContext()
	a := kassa.ActorFrom(ctx)
	scope := a.OrgID + "/" + a.UserID + a.ClientID
	sum := sha256.New()
	fmt.Fprintf(sum, "%s %s\n", c.Method(), c.Path())
	sum.Write(c.Body())
	fp := hex.EncodeToString(sum.Sum(nil))
	ctx, replay, err := s.svc.Idempotency.Begin(ctx, scope, key, fp)
	if err != nil {
		return err
	}
	if replay != nil && r.SecretOnce && replay.Status < fiber.StatusMultipleChoices {
		return noReplay(replay)
	}
	if replay != nil {
		c.Set("Idempotent-Replayed", "true")
		if replay.Location != "" {
			c.Set(fiber.HeaderLocation, replay.Location)
		}
		c.Set(fiber.HeaderContentType, replay.ContentType)
		return c.Status(replay.Status).Send(replay.Body)
	}
	// A service that passes the request on (the hub routing a store's
	// money operations) forwards the key; Fiber reuses the header's buffer.
	c.SetUserContext(kassa.WithIdempotencyKey(ctx, strings.Clone(key)))
	defer func() {
		if r := recover(); r != nil {
			// A panic is a server error: release the key so a retry runs.
			s.svc.Idempotency.Abandon(context.WithoutCancel(ctx), scope, key)
			panic(r)
		}
	}()
	if err := c.Next(); err != nil {
		if herr := s.app.ErrorHandler(c, err); herr != nil {
			s.svc.Idempotency.Abandon(ctx, scope, key)
			return herr
		}
	}
	res := c.Response()
	if res.StatusCode() >= 500 {
		return s.svc.Idempotency.Abandon(ctx, scope, key)
	}
	kept := &kassa.IdempotentResponse{
		Status: res.StatusCode(), ContentType: string(res.Header.ContentType()),
		Location: string(res.Header.Peek(fiber.HeaderLocation)), Body: append([]byte(nil), res.Body()...),
	}
	if r.SecretOnce && kept.Status < fiber.StatusMultipleChoices {
		kept.Body = []byte{} // the secret is shown once, never kept
	}
	return s.svc.Idempotency.Complete(ctx, scope, key, kept)
}

// noReplay is the answer to a retry, with the same key and body, of a
// SecretOnce request that succeeded: its answer held a secret shown once,
// so it is not replayed and nothing runs again; the 409 names what the
// first request created, whose secret can be rotated if its answer was
// lost.
func noReplay(first *kassa.IdempotentResponse) error {
	if first.Location == "" {
		return kassa.Errorf(kassa.EConflict, "a request with this Idempotency-Key already succeeded; "+
			"the secret it answered is shown once and not again: send a new key to run it again")
	}
	return kassa.Errorf(kassa.EConflict, "a request with this Idempotency-Key already created %s (id %s); "+
		"its secret was shown once, in that answer: if the answer was lost, rotate the secret",
		first.Location, path.Base(first.Location))
}

// The security headers of every response. API answers are data, never a
// document to render: their policy allows nothing. The pages (KDS,
// console) load their own script, style and API from this origin only;
// they have no inline script or style, and no page may frame them.
const (
	cspAPI  = "default-src 'none'; frame-ancestors 'none'; base-uri 'none'; form-action 'none'"
	cspPage = "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; font-src 'self'; " +
		"connect-src 'self'; manifest-src 'self'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'"
)

// secure sets the security headers on every response and refuses, with
// 400, a path or query value that is not valid UTF-8 (bodies are checked
// by decode). A handler serving a page replaces the CSP with cspPage.
func (s *Server) secure(c *fiber.Ctx) error {
	h := &c.Response().Header
	h.Set(fiber.HeaderXContentTypeOptions, "nosniff")
	h.Set(fiber.HeaderXFrameOptions, "DENY")
	h.Set(fiber.HeaderReferrerPolicy, "no-referrer")
	h.Set(fiber.HeaderContentSecurityPolicy, cspAPI)
	if !utf8.ValidString(c.Path()) {
		return kassa.Errorf(kassa.EBadRequest, "the request path is not valid UTF-8")
	}
	if uri := c.Request().URI(); len(uri.QueryString()) > 0 {
		bad := false
		uri.QueryArgs().VisitAll(func(k, v []byte) { bad = bad || !utf8.Valid(k) || !utf8.Valid(v) })
		if bad {
			return kassa.Errorf(kassa.EBadRequest, "the query string is not valid UTF-8")
		}
	}
	return c.Next()
}

// page serves a browser page's files under prefix: GET and HEAD only (405
// with Allow otherwise), with the page's CSP.
func (s *Server) page(prefix string, files fs.FS) {
	serve := filesystem.New(filesystem.Config{Root: http.FS(files), Index: "index.html"})
	s.app.Use(prefix, func(c *fiber.Ctx) error {
		switch c.Method() {
		case fiber.MethodGet, fiber.MethodHead:
		default:
			c.Set(fiber.HeaderAllow, "GET, HEAD")
			return fiber.ErrMethodNotAllowed
		}
		c.Set(fiber.HeaderContentSecurityPolicy, cspPage)
		return serve(c)
	})
}
