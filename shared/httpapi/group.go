package httpapi

import (
	"context"
	"io/fs"
	"log/slog"

	"github.com/gofiber/fiber/v2"

	"kassa.dev/shared/kassa"
)

// Routes defined outside this package. The hub's own routes (the OAuth
// server and its consent page, webhooks, automations, the ops page and its
// feed) live in package hubapi, which the edge binary never imports, so
// none of their code ships in it (README, "Where things are"). The hub
// passes them as a Group (Config.Groups); New registers each after its
// own routes, through the same handle, so the node's route table and its
// OpenAPI document hold every route it serves and no other.
//
// The exported helpers below are what such a group needs of this
// package: the same parsing, envelopes and CRUD shapes as every resource.

// Group is a set of routes from another package.
type Group struct {
	// Source holds the package's Go files: their doc comments describe its
	// types in the OpenAPI document, as this package's own do.
	Source fs.FS
	// Routes registers the group's routes on s.
	Routes func(s *Server)
}

// Handle registers r under /api/v1 (with its token check, idempotency and
// OpenAPI entry, as every route of this package).
func (s *Server) Handle(r *Route) { s.handle(r) }

// WSConn is a WebSocket connection as a Group's feed sees it.
type WSConn interface {
	// Send queues v (JSON, or a json.RawMessage as is); it never blocks.
	Send(v any) error
	// Receive waits for the client's next message.
	Receive(ctx context.Context) ([]byte, error)
}

// WebSocket registers r as a WebSocket endpoint (websocket): serve runs
// for each authenticated connection with the caller's actor in ctx.
func (s *Server) WebSocket(r *Route, serve func(ctx context.Context, c WSConn) error) {
	s.websocket(r, func(ctx context.Context, c *wsConn) error { return serve(ctx, c) })
}

// ServePage serves a browser page's files under prefix, outside /api/v1.
func (s *Server) ServePage(prefix string, files fs.FS) { s.page(prefix, files) }

// Config is the server's configuration, its defaults filled in.
func (s *Server) Config() Config { return s.cfg }

// Services are the services the server was built with.
func (s *Server) Services() *Services { return &s.svc }

// Log is the server's logger.
func (s *Server) Log() *slog.Logger { return s.log }

// ClientAddr is the address logins and the token endpoint are throttled
// by (clientAddr of the client's address, clientIP): a new string.
func (s *Server) ClientAddr(c *fiber.Ctx) string { return clientAddr(s.clientIP(c)) }

// PageParams document the limit and cursor query parameters of a list.
var PageParams = pageParams

// Page reads limit and cursor; a bad limit is 400.
func Page(c *fiber.Ctx) (kassa.Page, error) { return page(c) }

// List writes a list page (or err).
func List[T any](c *fiber.Ctx, l kassa.List[T], err error) error { return list(c, l, err) }

// One writes {"data": v} with status.
func One(c *fiber.Ctx, status int, v any) error { return one(c, status, v) }

// Decode reads a JSON body strictly (decode).
func Decode(c *fiber.Ctx, v any) error { return decode(c, v) }

// PathID reads the :id path parameter (a copy); one that cannot be an id
// is 404 naming resource.
func PathID(c *fiber.Ctx, resource string) (string, error) { return pathID(c, resource) }

// ParamID reads the path parameter name holding an id (a copy).
func ParamID(c *fiber.Ctx, name, resource string) (string, error) { return paramID(c, name, resource) }

// RequestID is the request's id, as the access log names it.
func RequestID(c *fiber.Ctx) string { return requestID(c) }

// GetBy is GET /x/:id through find.
func GetBy[T any](resource string, find func(context.Context, string) (*T, error)) fiber.Handler {
	return getBy(resource, find)
}

// CreateWith is POST /x through create: 201 with Location prefix/<id>.
func CreateWith[In, T any](prefix string, id func(*T) string, create func(context.Context, *In) (*T, error)) fiber.Handler {
	return createWith(prefix, id, create)
}

// UpdateWith is PATCH /x/:id through update.
func UpdateWith[In, T any](resource string, update func(context.Context, string, *In) (*T, error)) fiber.Handler {
	return updateWith(resource, update)
}

// DeleteWith is DELETE /x/:id through del: 204.
func DeleteWith(resource string, del func(context.Context, string) error) fiber.Handler {
	return deleteWith(resource, del)
}

// CSPPage is the Content-Security-Policy of a browser page.
const CSPPage = cspPage
