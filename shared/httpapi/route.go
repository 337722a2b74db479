package httpapi

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/gofiber/fiber/v2"

	"kassa.dev/shared/kassa"
)

// Route is one API operation: the Fiber handler plus what the OpenAPI
// document says of it. Every /api/v1 route is registered through handle,
// so the document lists exactly the routes that exist.
type Route struct {
	Method  string
	Path    string // Fiber form, relative to /api/v1: /catalog/products/:id
	Summary string
	Tag     string
	Scope   kassa.Scope // required scope; "" with Public false means any valid token
	// AnyScope: any one of these scopes is enough (the WebSocket feeds).
	AnyScope []kassa.Scope
	Public   bool // no token needed
	// Operator: the hub operator's token is accepted besides the bearer
	// tokens that satisfy Scope (partner routes).
	Operator bool
	Body     any  // request body type, nil for none
	Resp     any  // type of data in the response envelope; nil for none
	List     bool // the response is a list envelope
	Status   int  // success status, default 200
	// SecretOnce: the answer holds a secret shown once (a webhook's signing
	// secret), so a success is kept without its body: a retry with its key
	// and body runs nothing and is 409 naming what the first created (its
	// Location); other answers replay as on any POST (idempotent).
	SecretOnce bool
	Query      []Param
	// Errors are problem statuses the route answers beyond those its shape
	// implies (problemStatuses): 409 of a state conflict, 503 at the hub.
	Errors []int
	// Form, when set, makes the route an RFC 6749 endpoint (token, revoke,
	// introspect): its body is this type, form-encoded or JSON; its answer
	// is Resp itself (no data envelope); its errors are RFC 6749
	// {error, error_description}, not problems.
	Form any
	// Produces is the media type of a success response that is not JSON
	// (the KDS stream's text/event-stream).
	Produces string
	// GraphQL: the route answers GraphQL responses, its errors too
	// (graphql.go); Resp is unused.
	GraphQL bool
	Handler fiber.Handler
}

// grants reports whether a has what r requires: r.Scope, and one of
// r.AnyScope when it lists any.
func (r *Route) grants(a *kassa.Actor) bool {
	if r.Scope != "" && !a.Has(r.Scope) {
		return false
	}
	return len(r.AnyScope) == 0 || slices.ContainsFunc(r.AnyScope, a.Has)
}

// scopeText names what r requires, for a refusal.
func (r *Route) scopeText() string {
	if r.Scope != "" {
		return string(r.Scope)
	}
	names := make([]string, len(r.AnyScope))
	for i, sc := range r.AnyScope {
		names[i] = string(sc)
	}
	return "any of " + strings.Join(names, ", ")
}

// Param is a documented query parameter. Type is a JSON Schema type, or
// the key of a closed set in kassa.Enums for a string of that set.
type Param struct {
	Name, Type, Description string
}

var pageParams = []Param{
	{"limit", "integer", "page size, 1-200, default 50"},
	{"cursor", "string", "opaque cursor from next_cursor"},
}

func (s *Server) handle(r *Route) {
	if r.Status == 0 {
		r.Status = fiber.StatusOK
	}
	s.routes = append(s.routes, r)
	handlers := []fiber.Handler{}
	if r.GraphQL {
		handlers = append(handlers, func(c *fiber.Ctx) error {
			c.Locals(localGraphQL, true)
			return c.Next()
		})
	}
	if !r.Public {
		handlers = append(handlers, s.authenticator(r))
		if r.Method == fiber.MethodPost {
			handlers = append(handlers, func(c *fiber.Ctx) error { return s.idempotent(c, r) })
		}
	}
	handlers = append(handlers, r.Handler)
	s.api.Add(r.Method, r.Path, handlers...)
	if r.Method == fiber.MethodGet {
		// HEAD is GET without the body (RFC 9110 9.3.2); Allow lists both.
		s.api.Add(fiber.MethodHead, r.Path, handlers...)
	}
}

// decode reads a JSON body strictly: malformed JSON is 400, a field of the
// wrong type or an unknown field is 422 naming the field.
func decode(c *fiber.Ctx, v any) error {
	body := c.Body()
	trimmed := bytes.TrimSpace(body)
	if len(trimmed) == 0 {
		return kassa.Errorf(kassa.EBadRequest, "a JSON request body is required")
	}
	if trimmed[0] != '{' {
		return kassa.Errorf(kassa.EBadRequest, "the request body must be a JSON object")
	}
	if !utf8.Valid(body) {
		// encoding/json would store U+FFFD in place of each bad byte.
		return kassa.Errorf(kassa.EBadRequest, "the request body is not valid UTF-8")
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.DisallowUnknownFields()
	err := dec.Decode(v)
	if err == nil {
		if _, terr := dec.Token(); terr != io.EOF {
			return kassa.Errorf(kassa.EBadRequest, "the request body has data after the JSON value")
		}
		return nil
	}
	var syn *json.SyntaxError
	var typ *json.UnmarshalTypeError
	switch {
	case errors.As(err, &syn), errors.Is(err, io.ErrUnexpectedEOF):
		return kassa.Errorf(kassa.EBadRequest, "the request body is not valid JSON")
	case errors.As(err, &typ):
		if typ.Field == "" {
			return kassa.Errorf(kassa.EBadRequest, "the request body must be a JSON object")
		}
		return kassa.InvalidField(typ.Field, "must be of type "+jsonType(typ.Type.Kind().String()))
	case strings.HasPrefix(err.Error(), "json: unknown field "):
		name := strings.Trim(strings.TrimPrefix(err.Error(), "json: unknown field "), `"`)
		return kassa.InvalidField(name, "is not a known field")
	default:
		var ke *kassa.Error
		if errors.As(err, &ke) {
			return ke
		}
		var te *time.ParseError
		if errors.As(err, &te) || strings.HasPrefix(err.Error(), "Time.UnmarshalJSON") {
			return kassa.InvalidField(badTimeField(body, v), "must be an RFC 3339 time")
		}
		return kassa.Errorf(kassa.EBadRequest, "the request body could not be read: %s", strings.TrimPrefix(err.Error(), "json: "))
	}
}

func jsonType(kind string) string {
	switch {
	case strings.HasPrefix(kind, "int"), strings.HasPrefix(kind, "uint"):
		return "integer"
	case strings.HasPrefix(kind, "float"):
		return "number"
	case kind == "slice" || kind == "array":
		return "array"
	case kind == "struct" || kind == "map":
		return "object"
	case kind == "bool":
		return "boolean"
	}
	return kind
}

// page reads limit and cursor; a bad limit is 400.
func page(c *fiber.Ctx) (kassa.Page, error) {
	p := kassa.Page{Limit: kassa.DefaultLimit, Cursor: c.Query("cursor")}
	if l := c.Query("limit"); l != "" {
		n, err := strconv.Atoi(l)
		if err != nil || n < 1 || n > kassa.MaxLimit {
			return p, kassa.Errorf(kassa.EBadRequest, "limit must be an integer from 1 to %d", kassa.MaxLimit)
		}
		p.Limit = n
	}
	if len(p.Cursor) > 512 {
		return p, kassa.Errorf(kassa.EBadRequest, "cursor is not valid")
	}
	return p, nil
}

// queryBool reads an optional true/false query parameter.
func queryBool(c *fiber.Ctx, name string) (*bool, error) {
	v := c.Query(name)
	if v == "" {
		return nil, nil
	}
	b, err := strconv.ParseBool(v)
	if err != nil || (v != "true" && v != "false") {
		return nil, kassa.Errorf(kassa.EBadRequest, "%s must be true or false", name)
	}
	return &b, nil
}

// queryID reads an optional id query parameter; a malformed one is 400.
func queryID(c *fiber.Ctx, name string) (*string, error) {
	v := c.Query(name)
	if v == "" {
		return nil, nil
	}
	if !kassa.ValidID(v) {
		return nil, kassa.Errorf(kassa.EBadRequest, "%s must be an id", name)
	}
	v = strings.Clone(v) // a report keeps its filter while it streams, after the handler returned
	return &v, nil
}

// pathID reads the :id path parameter; one that cannot be an id is 404.
func pathID(c *fiber.Ctx, resource string) (string, error) {
	return paramID(c, "id", resource)
}

// paramID reads a path parameter holding an id; one that cannot be an id
// is 404. The id is a copy: Fiber's parameter points into the request's
// buffer, which the connection's next request overwrites, and services
// keep ids past the handler (the per-order lock's map, events).
func paramID(c *fiber.Ctx, name, resource string) (string, error) {
	id := c.Params(name)
	if !kassa.ValidID(id) {
		return "", kassa.NotFound(resource, id)
	}
	return strings.Clone(id), nil
}

// one writes {"data": v}.
func one(c *fiber.Ctx, status int, v any) error {
	return c.Status(status).JSON(fiber.Map{"data": v})
}

// created writes 201 {"data": v} with Location.
func created(c *fiber.Ctx, location string, v any) error {
	c.Location("/api/v1" + location)
	return one(c, fiber.StatusCreated, v)
}

// listEnvelope is the JSON of a list page.
type listEnvelope[T any] struct {
	Data       []T     `json:"data"`
	HasMore    bool    `json:"has_more"`
	NextCursor *string `json:"next_cursor"`
}

// list writes a list page.
func list[T any](c *fiber.Ctx, l kassa.List[T], err error) error {
	if err != nil {
		return err
	}
	env := listEnvelope[T]{Data: l.Items, HasMore: l.HasMore}
	if env.Data == nil {
		env.Data = []T{}
	}
	if l.NextCursor != "" {
		env.NextCursor = &l.NextCursor
	}
	return c.JSON(env)
}

var timeType = reflect.TypeFor[time.Time]()

// badTimeField names the top-level field of body that holds a time the
// JSON decoder could not parse (its errors do not say which field).
func badTimeField(body []byte, v any) string {
	var raw map[string]json.RawMessage
	json.Unmarshal(body, &raw)
	t := reflect.TypeOf(v)
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	for i := 0; t.Kind() == reflect.Struct && i < t.NumField(); i++ {
		f := t.Field(i)
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		if !strings.Contains(f.Type.String(), "time.Time") || raw[name] == nil || string(raw[name]) == "null" {
			continue
		}
		var tm time.Time
		if json.Unmarshal(raw[name], &tm) != nil {
			return name
		}
	}
	return "body"
}
