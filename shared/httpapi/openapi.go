package httpapi

import (
	"reflect"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/gofiber/fiber/v2"
)

// The OpenAPI 3.1 document is built from the registered routes, with JSON
// Schemas reflected from the Go types of their bodies, so it cannot drift
// from the routes that exist.

var pathParam = regexp.MustCompile(`:([A-Za-z_]+)`)

func (s *Server) openapi(c *fiber.Ctx) error {
	s.docOnce.Do(func() { s.doc = s.buildOpenAPI() })
	return c.JSON(s.doc)
}

// OpenAPI returns the document as a value (for tests and tools).
func (s *Server) OpenAPI() map[string]any {
	s.docOnce.Do(func() { s.doc = s.buildOpenAPI() })
	return s.doc
}

func (s *Server) buildOpenAPI() map[string]any {
	r := &reflector{schemas: map[string]any{}}
	paths := map[string]map[string]any{}
	for _, rt := range s.routes {
		p := "/api/v1" + pathParam.ReplaceAllString(rt.Path, "{$1}")
		if paths[p] == nil {
			paths[p] = map[string]any{}
		}
		op := map[string]any{
			"summary":     rt.Summary,
			"operationId": operationID(rt),
			"responses":   s.responses(r, rt),
		}
		if rt.Tag != "" {
			op["tags"] = []string{rt.Tag}
		}
		if rt.Public {
			op["security"] = []any{}
		} else if rt.Scope != "" {
			op["security"] = []any{map[string]any{"bearer": []string{string(rt.Scope)}}}
			op["x-required-scope"] = string(rt.Scope)
		}
		var params []any
		for _, m := range pathParam.FindAllStringSubmatch(rt.Path, -1) {
			params = append(params, map[string]any{"name": m[1], "in": "path", "required": true, "schema": map[string]any{"type": "string", "format": "uuid"}})
		}
		for _, q := range rt.Query {
			params = append(params, map[string]any{"name": q.Name, "in": "query", "description": q.Description, "schema": map[string]any{"type": q.Type}})
		}
		if rt.Method == fiber.MethodPost && !rt.Public {
			desc := "replays the first response of the same key and body within 24 h"
			if rt.NoReplay {
				desc = "ignored here: the answer holds a secret shown once, which is never stored for a replay"
			}
			params = append(params, map[string]any{"name": "Idempotency-Key", "in": "header",
				"description": desc, "schema": map[string]any{"type": "string", "maxLength": 255}})
		}
		if params != nil {
			op["parameters"] = params
		}
		if rt.Body != nil {
			op["requestBody"] = map[string]any{"required": true, "content": map[string]any{
				"application/json": map[string]any{"schema": r.schema(reflect.TypeOf(rt.Body))}}}
		}
		paths[p][strings.ToLower(rt.Method)] = op
	}
	r.schemas["Problem"] = map[string]any{
		"type": "object", "required": []string{"type", "title", "status", "detail", "instance", "request_id"},
		"properties": map[string]any{
			"type": map[string]any{"type": "string"}, "title": map[string]any{"type": "string"},
			"status": map[string]any{"type": "integer"}, "detail": map[string]any{"type": "string"},
			"instance": map[string]any{"type": "string"}, "request_id": map[string]any{"type": "string"},
			"errors": map[string]any{"type": "array", "items": map[string]any{"type": "object", "properties": map[string]any{
				"field": map[string]any{"type": "string"}, "message": map[string]any{"type": "string"}}}},
		},
	}
	return map[string]any{
		"openapi": "3.1.0",
		"info": map[string]any{
			"title":   "Kassa API",
			"version": s.cfg.Version,
			"description": "Kassa's REST API, served by every edge and by the hub. Conventions: snake_case fields " +
				"(except the login result), integer money in minor units, RFC 3339 UTC times, UUIDv7 ids, " +
				"cursor paging (limit 1-200, default 50), RFC 9457 problems of type " + s.cfg.ErrorsBase + "/<kind>. " +
				"Decisions: request bodies are strict (an unknown field is 422 naming it); a malformed id in a path is 404; " +
				"Idempotency-Key applies to authenticated POSTs (login and refresh never store tokens); first-party " +
				"refresh tokens live 30 days from their last use; logins are throttled per client address and per node, and after " +
				"5 failed logins for an account from one address that address waits 15 s, doubling per further failure up to 15 min " +
				"(429 with Retry-After; a success resets it; other addresses are unaffected); a role change or deactivation " +
				"applies to existing tokens on their next request. " +
				"Edge enrolment (POST /sync/enrol) takes only the token: the hub mints the new edge's node id; /healthz names no node id. " +
				"A method the path does not have is 405 method-not-allowed with Allow; GET routes answer HEAD; " +
				"a body, query value or path that is not valid UTF-8 is 400; settlements without dates cover " +
				"the week to each location's today in its own time zone. " +
				"Money: every amount is at most 10^12 minor units (a price, a line, an order total, a payment, a refund; 422 beyond); " +
				"a manual discount needs the role's settings.discount_limits and a cashier's refunds on one order together stay within refund_limit (403). " +
				"Money operations at the hub (payment initiate, capture, void; order refund; cancel) on an order of a store with an " +
				"enrolled edge run at that store, which answers them; while the store is not connected they are 503 problems " +
				"of kind unavailable with Retry-After and change nothing. " +
				"Rate limits: one token bucket per org, shared by its first-party and OAuth tokens; every authenticated answer " +
				"(errors too) has X-RateLimit-Limit (the org's requests per minute, which the operator may raise per org) and " +
				"X-RateLimit-Remaining, a 429 has Retry-After. Tenants (hub): /partners/tenants takes a token with partners:write " +
				"or the operator token as a bearer token; a partner sees only the tenants its app created. " +
				"Partner OAuth (hub only, metadata at /.well-known/oauth-authorization-server): /oauth/token, /oauth/revoke and " +
				"/oauth/introspect take form-encoded or JSON bodies, client auth by HTTP Basic or in the body (not both), and answer " +
				"RFC 6749 errors {error, error_description}; tokens are opaque 64-hex strings (access 900 s; refresh tokens rotate and a " +
				"reused one revokes its whole family) that every route accepts beside first-party JWTs, with the same scopes. " +
				"OAuth consent (hub, GET /oauth/authorize, outside /api/v1): an unknown client_id or a redirect_uri that is not byte for byte " +
				"a registered one shows an error page and never redirects; other errors redirect with the RFC 6749 error and the unchanged state; " +
				"the granted scope is requested ∩ registered ∩ the approving user's role.",
		},
		"servers": []any{map[string]any{"url": "/"}},
		"paths":   paths,
		"components": map[string]any{
			"schemas":         r.schemas,
			"securitySchemes": map[string]any{"bearer": map[string]any{"type": "http", "scheme": "bearer", "bearerFormat": "JWT"}},
		},
		"security": []any{map[string]any{"bearer": []string{}}},
	}
}

func operationID(rt *Route) string {
	parts := strings.FieldsFunc(rt.Path, func(r rune) bool { return r == '/' || r == '-' || r == ':' })
	return strings.ToLower(rt.Method) + "_" + strings.Join(parts, "_")
}

func (s *Server) responses(r *reflector, rt *Route) map[string]any {
	problem := map[string]any{"description": "problem", "content": map[string]any{
		"application/problem+json": map[string]any{"schema": map[string]any{"$ref": "#/components/schemas/Problem"}}}}
	out := map[string]any{"default": problem}
	desc := map[string]any{"description": "success"}
	if rt.Resp != nil {
		data := r.schema(reflect.TypeOf(rt.Resp))
		var env map[string]any
		if rt.List {
			env = map[string]any{"type": "object", "required": []string{"data", "has_more", "next_cursor"}, "properties": map[string]any{
				"data": map[string]any{"type": "array", "items": data}, "has_more": map[string]any{"type": "boolean"},
				"next_cursor": map[string]any{"type": []string{"string", "null"}}}}
		} else {
			env = map[string]any{"type": "object", "required": []string{"data"}, "properties": map[string]any{"data": data}}
		}
		desc["content"] = map[string]any{"application/json": map[string]any{"schema": env}}
	}
	out[strconv.Itoa(rt.Status)] = desc
	return out
}

// reflector turns Go types into JSON Schemas, named structs into components.
type reflector struct{ schemas map[string]any }

func (r *reflector) schema(t reflect.Type) map[string]any {
	nullable := false
	for t.Kind() == reflect.Pointer {
		t, nullable = t.Elem(), true
	}
	var s map[string]any
	switch {
	case t == timeType:
		s = map[string]any{"type": "string", "format": "date-time"}
	case strings.HasPrefix(t.Name(), "Opt["):
		inner := r.schema(t.Field(2).Type) // Opt{Set, Null, Value}
		return inner
	case t.Kind() == reflect.Struct && t.Name() != "":
		name := t.Name()
		if _, ok := r.schemas[name]; !ok {
			r.schemas[name] = map[string]any{} // break cycles
			r.schemas[name] = r.object(t)
		}
		s = map[string]any{"$ref": "#/components/schemas/" + name}
		if nullable {
			return map[string]any{"oneOf": []any{s, map[string]any{"type": "null"}}}
		}
		return s
	case t.Kind() == reflect.Struct:
		s = r.object(t)
	case t.Kind() == reflect.Slice:
		s = map[string]any{"type": "array", "items": r.schema(t.Elem())}
	case t.Kind() == reflect.Map:
		s = map[string]any{"type": "object"}
	case t.Kind() == reflect.Bool:
		s = map[string]any{"type": "boolean"}
	case t.Kind() >= reflect.Int && t.Kind() <= reflect.Uint64:
		s = map[string]any{"type": "integer"}
	case t.Kind() == reflect.Float32 || t.Kind() == reflect.Float64:
		s = map[string]any{"type": "number"}
	case t.Kind() == reflect.String:
		s = map[string]any{"type": "string"}
	default:
		s = map[string]any{}
	}
	if nullable {
		if typ, ok := s["type"].(string); ok {
			s["type"] = []string{typ, "null"}
		}
	}
	return s
}

func (r *reflector) object(t reflect.Type) map[string]any {
	props := map[string]any{}
	var required []string
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		tags := strings.Split(f.Tag.Get("openapi"), ",")
		if !f.IsExported() || slices.Contains(tags, "-") {
			continue
		}
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		if name == "-" {
			continue
		}
		if name == "" {
			name = f.Name
		}
		schema := r.schema(f.Type)
		if slices.Contains(tags, "nullable") {
			if typ, ok := schema["type"].(string); ok {
				schema["type"] = []string{typ, "null"}
			}
		}
		if slices.Contains(tags, "required") {
			required = append(required, name)
		}
		props[name] = schema
	}
	obj := map[string]any{"type": "object", "properties": props}
	if required != nil {
		obj["required"] = required
	}
	return obj
}
