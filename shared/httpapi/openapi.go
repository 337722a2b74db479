package httpapi

import (
	"encoding/json"
	"maps"
	"net/http"
	"reflect"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/gofiber/fiber/v2"

	"kassa.dev/shared/kassa"
)

// The OpenAPI 3.1 document is built from the registered routes, with JSON
// Schemas reflected from the Go types of their bodies, so it cannot drift
// from the routes that exist. Everything a client generator needs is
// derived, never written twice (docs/openapi.md):
//
//   - descriptions: the doc comment of each type and field (openapidoc.go);
//   - enums: kassa.Enums, by type name or the field's openapi:"enum=<key>",
//     one component schema per set;
//   - required: request fields tagged openapi:"required"; response fields
//     unless omitempty (they are always in the JSON);
//   - problem responses: from the route's shape (problemStatuses);
//   - security: the route's Scope, for both the bearer and oauth2 schemes.

var pathParam = regexp.MustCompile(`:([A-Za-z_]+)`)

func (s *Server) openapi(c *fiber.Ctx) error {
	return c.JSON(s.OpenAPI())
}

// OpenAPI returns the document as a value (for tests and tools).
func (s *Server) OpenAPI() map[string]any {
	s.docOnce.Do(func() { s.doc = s.buildOpenAPI() })
	return s.doc
}

func (s *Server) buildOpenAPI() map[string]any {
	r := newReflector(s.routes, s.cfg.Groups)
	paths := map[string]map[string]any{}
	used := map[int]bool{}
	tags := map[string]bool{}
	for _, rt := range s.routes {
		p := "/api/v1" + pathParam.ReplaceAllString(rt.Path, "{$1}")
		if paths[p] == nil {
			paths[p] = map[string]any{}
		}
		op := map[string]any{
			"summary":     rt.Summary,
			"operationId": operationID(rt),
			"responses":   s.responses(r, rt, used),
			"security":    security(rt),
		}
		if rt.Tag != "" {
			op["tags"] = []string{rt.Tag}
			tags[rt.Tag] = true
		}
		if rt.Scope != "" {
			op["x-required-scope"] = string(rt.Scope)
		}
		var params []any
		for _, m := range pathParam.FindAllStringSubmatch(rt.Path, -1) {
			params = append(params, map[string]any{"name": m[1], "in": "path", "required": true,
				"description": "the id of the " + pathNoun(rt.Path, m[1]),
				"schema":      map[string]any{"type": "string", "format": "uuid"}})
		}
		for _, q := range rt.Query {
			schema := map[string]any{"type": q.Type}
			if kassa.Enums[q.Type] != nil {
				schema = r.enumRef(q.Type, false)
			}
			params = append(params, map[string]any{"name": q.Name, "in": "query", "description": q.Description, "schema": schema})
		}
		if rt.Method == fiber.MethodPost && !rt.Public {
			desc := "replays the first response of the same key and body within 24 h (header Idempotent-Replayed: true); " +
				"the same key with another body is 422; while the first request runs, 409"
			switch {
			case rt.SecretOnce:
				desc = "the answer holds a secret shown once, which is never stored for a replay: a retry of a request that " +
					"succeeded, with the same key and body within 24 h, runs nothing and is 409 naming what it created " +
					"(rotate the secret if the answer was lost); the same key with another body is 422; while the first request runs, 409"
			}
			params = append(params, map[string]any{"name": "Idempotency-Key", "in": "header",
				"description": desc, "schema": map[string]any{"type": "string", "minLength": 1, "maxLength": 255}})
		}
		if params != nil {
			op["parameters"] = params
		}
		if rt.Form != nil && rt.Method != fiber.MethodGet {
			schema := r.schema(reflect.TypeOf(rt.Form), dirIn)
			op["requestBody"] = map[string]any{"required": true, "content": map[string]any{
				"application/x-www-form-urlencoded": map[string]any{"schema": schema},
				"application/json":                  map[string]any{"schema": schema}}}
		}
		if rt.Body != nil {
			op["requestBody"] = map[string]any{"required": true, "content": map[string]any{
				"application/json": map[string]any{"schema": r.schema(reflect.TypeOf(rt.Body), dirIn)}}}
		}
		paths[p][strings.ToLower(rt.Method)] = op
	}
	r.schemas["Problem"] = problemSchema
	responses := map[string]any{}
	for _, pr := range problems {
		if used[pr.status] {
			responses[pr.name+"Problem"] = pr.response(s.cfg.ErrorsBase)
		}
	}
	var tagList []any
	for _, t := range slices.Sorted(maps.Keys(tags)) {
		tagList = append(tagList, map[string]any{"name": t, "description": tagText[t]})
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
				"Campaigns: a voucher's last use goes to exactly one of concurrent orders (the others 422 on voucher_code); analytics revenue is as sold, refunded and net_revenue beside it; at the hub an edge sale counts the discount the hub's own campaigns gave it as they stood when it was made (its occurred_at; the edge's analytics count its own). " +
				"Edge enrolment (POST /sync/enrol) takes only the token: the hub mints the new edge's node id; /healthz names no node id. " +
				"Sync conflicts are resolved at the hub with sync:write (owners and the ops role): resolving tells the edges nothing; " +
				"a re-applied quarantined record passes the same checks as its edge's push and then replicates like any change. " +
				"A method the path does not have is 405 method-not-allowed with Allow; GET routes answer HEAD; " +
				"a body, query value or path that is not valid UTF-8 is 400; settlements without dates cover " +
				"the week to each location's today in its own time zone. " +
				"Test cards (a simulated card network; POST /payments/initiate with method card and card_number; a decline is 201 " +
				"with status failed and failure_reason): 4242424242424242 approves, as does any other number passing the Luhn check; " +
				"4000000000000002 declines (card_declined); 4000000000009995 declines (insufficient_funds); 4000000000000119 " +
				"fails as a network error (processing_error); 4000000000001505 approves and its customer adds a tip of 10 percent of the amount on the terminal " +
				"(the payment's tip, unless the request sent one); a number failing the Luhn check, such as 4242424242424241, fails " +
				"(invalid_number). Offline, within the org's offline limits, the till approves every Luhn-valid number and the " +
				"decline cards are declined when the payment is forwarded. " +
				"Money: every amount is at most 10^12 minor units (a price, a line, an order total, a payment, a refund; 422 beyond); " +
				"a manual discount needs the role's settings.discount_limits and a cashier's refunds on one order together stay within refund_limit (403). " +
				"Money operations at the hub (payment initiate, capture, void; order complete, refund, cancel) on an order of a store " +
				"with an enrolled edge run at that store, after it applied the hub's changes made before the call, and it answers " +
				"them; while the store is not connected they are 503 problems of kind unavailable with Retry-After and change nothing. " +
				"Rate limits: one token bucket per org, shared by its first-party and OAuth tokens; every authenticated answer " +
				"(errors too) has X-RateLimit-Limit (the org's requests per minute, which the operator may raise per org) and " +
				"X-RateLimit-Remaining, a 429 has Retry-After. Tenants (hub): /partners/tenants takes a token with partners:write " +
				"or the operator token as a bearer token; a partner sees only the tenants its app created. " +
				"Partner OAuth (hub only, metadata at /.well-known/oauth-authorization-server): /oauth/token, /oauth/revoke and " +
				"/oauth/introspect take form-encoded or JSON bodies, client auth by HTTP Basic or in the body (not both), and answer " +
				"RFC 6749 errors {error, error_description}; tokens are opaque 64-hex strings (access 900 s; refresh tokens rotate and a " +
				"reused one revokes its whole family) that every route accepts beside first-party JWTs, with the same scopes. " +
				"PKCE (RFC 7636): S256 only (plain is refused, as is a challenge without its method); a code requested with a " +
				"code_challenge needs its code_verifier, one requested without refuses a verifier. An app registered with client_type " +
				"public has no secret, sends client_id alone, must use PKCE, and has no client_credentials grant nor introspection. " +
				"The token endpoint is throttled per authenticated client and per client address (X-RateLimit-Limit and " +
				"X-RateLimit-Remaining of the tighter bucket on every answer; 429 temporarily_unavailable with Retry-After). " +
				"The metadata's issuer is the hub's configured public URL, never the request's Host. " +
				"OAuth consent (hub, GET /oauth/authorize, outside /api/v1): an unknown client_id or a redirect_uri that is not byte for byte " +
				"a registered one shows an error page and never redirects; other errors redirect with the RFC 6749 error and the unchanged state; " +
				"the granted scope is requested ∩ registered ∩ the approving user's role. " +
				"Webhooks (hub): a delivery POSTs exactly {event, data} with X-Kassa-Event, X-Kassa-Delivery (the same across retries " +
				"and replays; deduplicate on it), X-Kassa-Signature sha256=<hex HMAC-SHA256 of the body keyed with the whole whsec_ secret> " +
				"and the Standard Webhooks headers webhook-id, webhook-timestamp, webhook-signature (keyed with the secret's base64 part); " +
				"attempts at once, +1 min, +5 min, then failed; events [\"*\"] subscribes to every event. " +
				"Every operation names its scope in security, for first-party tokens and OAuth tokens alike; a token without it is 403 naming the scope. " +
				"Every response field that is always present is required; a field that may be absent is documented as such, and null only where its type allows null. " +
				"Events (webhooks): the catalog, which operation emits each event and its data, is docs/events.md; an event's data is " +
				"its resource as the REST GET of that resource answers at the moment of the event. " +
				"Automations (hub): a rule's event trigger runs once per event of the hub's log (an edge's events too, after sync); " +
				"conditions name fields of the event's data, action params may take \"$data.<field>\"; schedules run in the rule's time zone " +
				"(a local time skipped by a daylight-saving change does not run that day; a repeated one runs once); " +
				"chains of automation.triggered stop at depth 3, recorded as a skipped execution. " +
				"Campaigns: made at the hub (catalog:write; an enrolled edge answers a write 409) and read at both nodes (catalog:read), " +
				"analytics reports:read; draft → launch → scheduled or active, active ⇄ paused, → ended; each line takes its best line campaign, " +
				"then the order its best order campaign, then manual discounts apply to what is left. " +
				"GraphQL (POST /api/v1/catalog/graphql, both nodes; schema by introspection, docs/graphql.md): camelCase fields, money as Float in the " +
				"org currency's major units (more decimals than the currency has is a validation error), every operation in the token's org " +
				"(an orgId argument must be it), mutations need catalog:write; every answer, errors included, is {data, errors[{message, " +
				"locations, path, extensions{code, request_id, fields}}]}: a field error is 200 with the rest of the data, a document that " +
				"does not parse or validate 400 with data null, and the middleware's refusals keep their REST status; a request costs the org's " +
				"rate limit one request plus one per 200 objects it read and one per mutation; a request runs at most 50 mutations.",
		},
		"servers":    []any{map[string]any{"url": "/"}},
		"tags":       tagList,
		"paths":      paths,
		"components": map[string]any{"schemas": r.schemas, "responses": responses, "securitySchemes": securitySchemes()},
		"security":   []any{map[string]any{"bearer": []string{}}, map[string]any{"oauth2": []string{}}},
	}
}

// tagText describes each tag of the document.
var tagText = map[string]string{
	"auth":        "First-party staff sign-in, sessions and staff accounts",
	"catalog":     "Products, categories, modifier groups and price lists",
	"campaigns":   "Discounts, offers and promotions priced at the till, and their analytics",
	"customers":   "Customer profiles",
	"inventory":   "Stock levels, movements and transfers between locations",
	"kds":         "The kitchen display: board, live feed and ticket moves",
	"live":        "Live updates for terminals over WebSocket: orders, stock, catalog and customers as they change",
	"locations":   "The org's stores",
	"loyalty":     "Loyalty programs, accounts and points",
	"gift-cards":  "Gift cards: issue, look up, disable; they pay through POST /payments/initiate with method gift_card",
	"returns":     "Returns, exchanges and store credit: goods back with or without a receipt, to the original tender or a customer's store credit",
	"laybys":      "Lay-bys: goods set aside for a customer who pays in instalments at any store; completed when paid, cancelled with a refund",
	"drawers":     "Registers (tills), cash drawers from float to blind close, X and Z reports; the business day is the location's",
	"reports":     "Reports by the location's business days: sales, tax, payments, inventory, loyalty, gift cards, cash and campaigns, as JSON or CSV",
	"receipts":    "Receipts: gap-free numbers per till, the document as JSON or printable HTML, prints on network thermal printers, e-mails through the org's relay",
	"orders":      "Orders, their completion and refunds",
	"payments":    "Payments, payment methods and settlements",
	"settings":    "The org's commercial settings",
	"sync":        "Edge enrolment and replication state",
	"oauth":       "OAuth 2.0 apps, tokens and connected apps (the hub)",
	"partners":    "Resellers creating tenants (the hub)",
	"webhooks":    "Webhook endpoints and deliveries (the hub)",
	"automations": "Automation rules on events and schedules, and their executions (the hub)",
	"openapi":     "This document",
}

func securitySchemes() map[string]any {
	scopes := map[string]string{}
	for _, sc := range kassa.Enums["Scope"] {
		scopes[sc] = kassa.ScopeText[kassa.Scope(sc)]
	}
	return map[string]any{
		"bearer": map[string]any{"type": "http", "scheme": "bearer", "bearerFormat": "JWT",
			"description": "A first-party access token from POST /api/v1/auth/login (a JWT, 900 s). Its scopes are its role's."},
		"oauth2": map[string]any{"type": "oauth2",
			"description": "A partner app's opaque access token (64 hex characters, 900 s) from the hub's token endpoint, " +
				"sent as Authorization: Bearer. Refresh tokens rotate; client_credentials gets no refresh token.",
			"flows": map[string]any{
				"authorizationCode": map[string]any{"authorizationUrl": "/oauth/authorize", "tokenUrl": "/api/v1/oauth/token",
					"refreshUrl": "/api/v1/oauth/token", "scopes": scopes},
				"clientCredentials": map[string]any{"tokenUrl": "/api/v1/oauth/token", "scopes": scopes},
			}},
	}
}

// security is a route's requirement: none for public routes, else its
// scope (or any valid token) with either scheme.
func security(rt *Route) []any {
	if rt.Public {
		return []any{}
	}
	scopes := []string{}
	if rt.Scope != "" {
		scopes = []string{string(rt.Scope)}
	}
	if len(rt.AnyScope) > 0 {
		// Alternatives: a token with any one of the scopes is enough.
		var out []any
		for _, sc := range rt.AnyScope {
			out = append(out, map[string]any{"bearer": []string{string(sc)}}, map[string]any{"oauth2": []string{string(sc)}})
		}
		return out
	}
	return []any{map[string]any{"bearer": scopes}, map[string]any{"oauth2": scopes}}
}

// pathNoun names what a path parameter identifies: the segment before it
// (":id" of /catalog/products/:id is a product), or the parameter's own
// name (":customerId").
func pathNoun(path, param string) string {
	if param != "id" {
		return strings.TrimSuffix(param, "Id")
	}
	segs := strings.Split(path, "/")
	for i, s := range segs {
		if s == ":"+param && i > 0 {
			return strings.TrimSuffix(strings.ReplaceAll(segs[i-1], "-", " "), "s")
		}
	}
	return "resource"
}

func operationID(rt *Route) string {
	parts := strings.FieldsFunc(rt.Path, func(r rune) bool { return r == '/' || r == '-' || r == ':' || r == '.' })
	return strings.ToLower(rt.Method) + "_" + strings.Join(parts, "_")
}

// problem is a problem response the document can name.
type problem struct {
	status        int
	name, kind    string
	when, headers string
}

// problems are the problem responses of CONTRACT.md's table, by status.
var problems = []problem{
	{400, "BadRequest", "bad-request", "malformed JSON, a bad query value or cursor, text that is not valid UTF-8, or a request body with a Content-Encoding (send it uncompressed)", ""},
	{401, "Unauthorized", "unauthorized", "the token is missing, invalid, expired or revoked", "WWW-Authenticate"},
	{403, "Forbidden", "forbidden", "the token lacks the operation's scope (named in detail), or the role may not do it", ""},
	{404, "NotFound", "not-found", "no such resource in the caller's org (another org's ids are not found either)", ""},
	{409, "Conflict", "conflict", "the resource's state forbids it, or a request with the same Idempotency-Key is still running", ""},
	{413, "TooLarge", "too-large", "the request body is larger than the node's limit", ""},
	{422, "Validation", "validation", "body fields are invalid or missing (errors names each), or an Idempotency-Key was reused with another body", ""},
	{429, "RateLimited", "rate-limited", "the org's request rate, or the login throttle, is exhausted; or (a body over 8 KiB) the node's budget of large request bodies stayed in use for 5 s", "Retry-After"},
	{503, "Unavailable", "unavailable", "the store that must answer is not connected to the hub", "Retry-After"},
}

func (p problem) ref() map[string]any {
	return map[string]any{"$ref": "#/components/responses/" + p.name + "Problem"}
}

func (p problem) response(base string) map[string]any {
	out := map[string]any{"description": http.StatusText(p.status) + " (type " + base + "/" + p.kind + "): " + p.when,
		"content": map[string]any{"application/problem+json": map[string]any{"schema": map[string]any{"$ref": "#/components/schemas/Problem"}}}}
	switch p.headers {
	case "WWW-Authenticate":
		out["headers"] = map[string]any{"WWW-Authenticate": map[string]any{"description": "Bearer", "schema": map[string]any{"type": "string"}}}
	case "Retry-After":
		out["headers"] = map[string]any{"Retry-After": map[string]any{"description": "seconds to wait before retrying", "schema": map[string]any{"type": "integer"}}}
	}
	return out
}

// problemStatuses derives the problems a route can answer from its shape,
// so a new route documents them without listing any: every request can be
// malformed (400); a token can be missing or short of scope, and the org's
// rate can run out (401, 403, 429); a path id can be unknown (404); a body
// can be too large or invalid (413, 422) or wait in vain for the body
// budget (429, body.go); an authenticated POST takes an
// Idempotency-Key (409, 422). Route.Errors adds the rest (a state conflict).
func problemStatuses(rt *Route) []int {
	st := []int{400}
	if !rt.Public {
		st = append(st, 401, 403, 429)
	}
	if strings.Contains(rt.Path, ":") {
		st = append(st, 404)
	}
	if rt.Body != nil {
		st = append(st, 413, 422, 429)
	}
	if rt.Method == fiber.MethodPost && !rt.Public {
		st = append(st, 409, 422)
	}
	st = append(st, rt.Errors...)
	slices.Sort(st)
	return slices.Compact(st)
}

// oauthErrorSchema is an RFC 6749 error answer (5.2).
var oauthErrorSchema = map[string]any{
	"type":        "object",
	"description": "An RFC 6749 error answer of the token, revocation and introspection endpoints.",
	"required":    []string{"error", "error_description"},
	"properties": map[string]any{
		"error": map[string]any{"type": "string", "description": "the RFC 6749 error code",
			"enum": []string{kassa.OAuthInvalidRequest, kassa.OAuthInvalidClient, kassa.OAuthInvalidGrant, kassa.OAuthUnauthorizedClient,
				kassa.OAuthUnsupportedGrantType, kassa.OAuthInvalidScope, kassa.OAuthTemporarilyUnavailable}},
		"error_description": map[string]any{"type": "string", "description": "what went wrong, for the developer"},
	},
}

// oauthResponses are the answers of an RFC 6749 endpoint (Route.Form).
func oauthResponses(r *reflector, rt *Route) map[string]any {
	oauthErr := func(desc string) map[string]any {
		return map[string]any{"description": desc, "content": map[string]any{
			"application/json": map[string]any{"schema": map[string]any{"$ref": "#/components/schemas/OAuthError"}}}}
	}
	ok := map[string]any{"description": http.StatusText(rt.Status)}
	if rt.Resp != nil {
		ok["content"] = map[string]any{"application/json": map[string]any{"schema": r.schema(reflect.TypeOf(rt.Resp), dirOut)}}
	}
	out := map[string]any{
		strconv.Itoa(rt.Status): ok,
		"400":                   oauthErr("invalid_request, invalid_grant, invalid_scope, unsupported_grant_type or unauthorized_client"),
		"401":                   oauthErr("invalid_client, with WWW-Authenticate: Basic"),
		"413":                   oauthErr("invalid_request: the body is over 8 KiB"),
	}
	if rt.Path == "/oauth/token" {
		// Throttled per client and per address (oauthlimit.go): every
		// answer names the tighter bucket.
		header := func(desc string) map[string]any {
			return map[string]any{"description": desc, "schema": map[string]any{"type": "integer"}}
		}
		rate := map[string]any{"X-RateLimit-Limit": header("calls a minute of the tighter bucket (this client's or this address's)"),
			"X-RateLimit-Remaining": header("calls left in that bucket now")}
		for _, st := range []string{strconv.Itoa(rt.Status), "400", "401"} {
			out[st].(map[string]any)["headers"] = rate
		}
		tooMany := oauthErr("temporarily_unavailable: this client or address called too often; wait Retry-After seconds")
		tooMany["headers"] = map[string]any{"X-RateLimit-Limit": rate["X-RateLimit-Limit"], "X-RateLimit-Remaining": rate["X-RateLimit-Remaining"],
			"Retry-After": header("seconds to wait before retrying")}
		out["429"] = tooMany
	}
	return out
}

// graphQLResponseSchema is every answer of the GraphQL endpoint (spec
// part 7), successes and errors alike.
var graphQLResponseSchema = map[string]any{
	"type":        "object",
	"description": "A GraphQL response: data (null when the request did not run) and, when something failed, errors.",
	"required":    []string{"data"},
	"properties": map[string]any{
		"data": map[string]any{"type": []string{"object", "null"}, "description": "the operation's result, shaped as the query asked"},
		"errors": map[string]any{"type": "array", "description": "what failed; absent when nothing did", "items": map[string]any{
			"type": "object", "required": []string{"message"}, "properties": map[string]any{
				"message": map[string]any{"type": "string", "description": "<problem title>: <detail>, e.g. Unauthorized: missing orgId in token"},
				"locations": map[string]any{"type": "array", "description": "where in the document", "items": map[string]any{
					"type": "object", "required": []string{"line", "column"}, "properties": map[string]any{
						"line": map[string]any{"type": "integer", "description": "1-based line"}, "column": map[string]any{"type": "integer", "description": "1-based column"}}}},
				"path":       map[string]any{"type": "array", "description": "the field names (and list indexes) of the field that failed", "items": map[string]any{"description": "a field name (a string) or a list index (an integer)"}},
				"extensions": map[string]any{"type": "object", "description": "code (the problem kind: not-found, validation, forbidden…), request_id, and for validation fields [{field, message}]"},
			}}},
	},
}

// graphQLResponses are the answers of a Route.GraphQL: its problem statuses
// with a GraphQL response body.
func graphQLResponses(r *reflector, rt *Route) map[string]any {
	r.schemas["GraphQLResponse"] = graphQLResponseSchema
	body := func(desc string) map[string]any {
		return map[string]any{"description": desc, "content": map[string]any{
			"application/json": map[string]any{"schema": map[string]any{"$ref": "#/components/schemas/GraphQLResponse"}}}}
	}
	out := map[string]any{
		"200":     body("The data, with errors for the fields that failed"),
		"default": body("any other error, such as 500 internal (with the request id; no detail of the cause)"),
	}
	for _, st := range problemStatuses(rt) {
		for _, p := range problems {
			if p.status == st {
				out[strconv.Itoa(st)] = body(http.StatusText(st) + " (code " + p.kind + "): " + p.when)
			}
		}
	}
	out["400"] = body("Bad Request: the body, or the document, does not parse or validate (data null)")
	return out
}

func (s *Server) responses(r *reflector, rt *Route, used map[int]bool) map[string]any {
	if rt.Form != nil {
		r.schemas["OAuthError"] = oauthErrorSchema
		return oauthResponses(r, rt)
	}
	if rt.GraphQL {
		return graphQLResponses(r, rt)
	}
	out := map[string]any{"default": map[string]any{"description": "any other problem, such as 500 internal (with the request id; no detail of the cause)",
		"content": map[string]any{"application/problem+json": map[string]any{"schema": map[string]any{"$ref": "#/components/schemas/Problem"}}}}}
	for _, st := range problemStatuses(rt) {
		for _, p := range problems {
			if p.status == st {
				out[strconv.Itoa(st)] = p.ref()
				used[st] = true
			}
		}
	}
	desc := map[string]any{"description": http.StatusText(rt.Status)}
	switch {
	case rt.Resp != nil:
		data := r.schema(reflect.TypeOf(rt.Resp), dirOut)
		var env map[string]any
		if rt.List {
			env = map[string]any{"type": "object", "required": []string{"data", "has_more", "next_cursor"}, "properties": map[string]any{
				"data":        map[string]any{"type": "array", "items": data, "description": "the page's items"},
				"has_more":    map[string]any{"type": "boolean", "description": "whether a further page exists"},
				"next_cursor": map[string]any{"type": []string{"string", "null"}, "description": "the cursor of the next page; null on the last"}}}
		} else {
			env = map[string]any{"type": "object", "required": []string{"data"}, "properties": map[string]any{"data": data}}
		}
		desc["content"] = map[string]any{"application/json": map[string]any{"schema": env}}
	case rt.Produces != "":
		desc["content"] = map[string]any{rt.Produces: map[string]any{"schema": map[string]any{"type": "string"}}}
	}
	if rt.Status == fiber.StatusCreated && rt.Resp != nil {
		desc["headers"] = map[string]any{"Location": map[string]any{"description": "the created resource", "schema": map[string]any{"type": "string"}}}
	}
	out[strconv.Itoa(rt.Status)] = desc
	return out
}

var problemSchema = map[string]any{
	"type":        "object",
	"description": "An RFC 9457 problem document.",
	"required":    []string{"type", "title", "status", "detail", "instance", "request_id"},
	"properties": map[string]any{
		"type":       map[string]any{"type": "string", "description": "the kind of problem: the node's errors base, a slash and the kind (not-found, validation…)"},
		"title":      map[string]any{"type": "string", "description": "a short summary of the kind"},
		"status":     map[string]any{"type": "integer", "description": "the HTTP status"},
		"detail":     map[string]any{"type": "string", "description": "what went wrong in this request, for a person"},
		"instance":   map[string]any{"type": "string", "description": "the request path"},
		"request_id": map[string]any{"type": "string", "description": "the X-Request-Id of the request, to quote to support"},
		"errors": map[string]any{"type": "array", "description": "validation problems only: one entry per invalid field",
			"items": map[string]any{"type": "object", "required": []string{"field", "message"}, "properties": map[string]any{
				"field":   map[string]any{"type": "string", "description": "the JSON name of the field"},
				"message": map[string]any{"type": "string", "description": "what is wrong with it"}}}},
	},
}

// direction is whether a schema describes a request (what a client sends)
// or a response (what it receives): their required fields differ.
type direction int

const (
	dirIn direction = iota
	dirOut
)

// reflector turns Go types into JSON Schemas, named structs into components.
type reflector struct {
	schemas map[string]any
	docs    *docIndex
	// out holds the named types some response contains; as a request
	// body such a type is the component <Name>Input.
	out map[reflect.Type]bool
}

func newReflector(routes []*Route, groups []Group) *reflector {
	r := &reflector{schemas: map[string]any{}, docs: sourceDocs(groups), out: map[reflect.Type]bool{}}
	for _, rt := range routes {
		if rt.Resp != nil {
			markOut(reflect.TypeOf(rt.Resp), r.out)
		}
	}
	return r
}

func markOut(t reflect.Type, seen map[reflect.Type]bool) {
	for t.Kind() == reflect.Pointer || t.Kind() == reflect.Slice || t.Kind() == reflect.Map {
		t = t.Elem()
	}
	if t.Kind() != reflect.Struct || seen[t] {
		return
	}
	seen[t] = true
	for i := 0; i < t.NumField(); i++ {
		markOut(t.Field(i).Type, seen)
	}
}

var rawJSONType = reflect.TypeFor[json.RawMessage]()

func (r *reflector) schema(t reflect.Type, dir direction) map[string]any {
	nullable := false
	for t.Kind() == reflect.Pointer {
		t, nullable = t.Elem(), true
	}
	var s map[string]any
	switch {
	case t == timeType:
		s = map[string]any{"type": "string", "format": "date-time"}
	case t == rawJSONType || t.Kind() == reflect.Interface:
		return map[string]any{} // any JSON value
	case strings.HasPrefix(t.Name(), "Opt["):
		return r.schema(t.Field(2).Type, dir) // Opt{Set, Null, Value}
	case t.Kind() == reflect.Struct && t.Name() != "":
		name := t.Name()
		if dir == dirIn && r.out[t] {
			name += "Input"
		}
		if _, ok := r.schemas[name]; !ok {
			r.schemas[name] = map[string]any{} // break cycles
			obj := r.object(t, dir)
			if d := r.docs.typeDoc(t.Name()); d != "" {
				obj["description"] = d
			}
			r.schemas[name] = obj
		}
		s = map[string]any{"$ref": "#/components/schemas/" + name}
		if nullable {
			return map[string]any{"oneOf": []any{s, map[string]any{"type": "null"}}}
		}
		return s
	case t.Kind() == reflect.Struct:
		s = r.object(t, dir)
	case t.Kind() == reflect.Slice:
		s = map[string]any{"type": "array", "items": r.schema(t.Elem(), dir)}
	case t.Kind() == reflect.Map:
		s = map[string]any{"type": "object"}
	case t.Kind() == reflect.Bool:
		s = map[string]any{"type": "boolean"}
	case t.Kind() >= reflect.Int && t.Kind() <= reflect.Uint64:
		s = map[string]any{"type": "integer", "format": "int64"}
	case t.Kind() == reflect.Float32 || t.Kind() == reflect.Float64:
		s = map[string]any{"type": "number"}
	case t.Kind() == reflect.String && t.PkgPath() == kassaPkg && kassa.Enums[t.Name()] != nil:
		return r.enumRef(t.Name(), nullable)
	case t.Kind() == reflect.String:
		s = map[string]any{"type": "string"}
	default:
		s = map[string]any{}
	}
	if nullable {
		allowNull(s)
	}
	return s
}

var kassaPkg = reflect.TypeFor[kassa.Role]().PkgPath()

// allowNull adds null to a schema's type.
func allowNull(s map[string]any) {
	if typ, ok := s["type"].(string); ok {
		s["type"] = []string{typ, "null"}
	}
}

// enumRef refers to the component schema of a closed set (kassa.Enums),
// which a generated client turns into one type with a constant per value.
func (r *reflector) enumRef(key string, nullable bool) map[string]any {
	if _, ok := r.schemas[key]; !ok {
		desc := kassa.EnumText[key]
		if desc == "" {
			desc = r.docs.typeDoc(key)
		}
		r.schemas[key] = map[string]any{"type": "string", "enum": kassa.Enums[key], "description": desc}
	}
	ref := map[string]any{"$ref": "#/components/schemas/" + key}
	if nullable {
		return map[string]any{"oneOf": []any{ref, map[string]any{"type": "null"}}}
	}
	return ref
}

func (r *reflector) object(t reflect.Type, dir direction) map[string]any {
	props := map[string]any{}
	required := []string{}
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		tags := strings.Split(f.Tag.Get("openapi"), ",")
		if !f.IsExported() || slices.Contains(tags, "-") {
			continue
		}
		name, opts, _ := strings.Cut(f.Tag.Get("json"), ",")
		if name == "-" {
			continue
		}
		if f.Anonymous && name == "" && f.Type.Kind() == reflect.Struct {
			// An embedded struct's fields are the outer object's (OAuthAppSecret).
			inner := r.object(f.Type, dir)
			for k, v := range inner["properties"].(map[string]any) {
				props[k] = v
			}
			req, _ := inner["required"].([]string)
			required = append(required, req...)
			continue
		}
		if name == "" {
			name = f.Name
		}
		schema := r.schema(f.Type, dir)
		if slices.Contains(tags, "nullable") {
			allowNull(schema)
		}
		for _, tag := range tags {
			if key, ok := strings.CutPrefix(tag, "enum="); ok {
				typ, _ := schema["type"].([]string)
				schema = r.enumRef(key, slices.Contains(typ, "null"))
			}
		}
		if d := r.docs.fieldDoc(t.Name(), name); d != "" {
			schema["description"] = d // beside a $ref too (OpenAPI 3.1)
		}
		if slices.Contains(tags, "required") || (dir == dirOut && !strings.Contains(opts, "omitempty")) {
			required = append(required, name)
		}
		props[name] = schema
	}
	slices.Sort(required)
	obj := map[string]any{"type": "object", "properties": props}
	if len(required) > 0 {
		obj["required"] = slices.Compact(required)
	}
	return obj
}
