package httpapi

// POST /api/v1/catalog/graphql (spec 4.3) serves package graphqlapi at both
// nodes. Everything this endpoint answers is a GraphQL response (spec part
// 7: data null and an errors array of message, locations, path), errors of
// the shared middleware too (401, 403, 429: Route.GraphQL makes
// writeProblem answer in that shape), with the HTTP status a REST client
// would get. A document that does not parse or validate is 400 with data
// null; a field that fails while the rest resolves is 200 with the data
// that did (GraphQL over HTTP). Each error's message is "<problem title>:
// <detail>" ("Unauthorized: missing orgId in token") and its extensions
// carry the problem kind as code, the request id, and for validation the
// invalid fields, named as in the schema (camelCase). docs/graphql.md.

import (
	"encoding/json"
	"errors"
	"log/slog"
	"strconv"
	"strings"

	"github.com/gofiber/fiber/v2"
	gqlerrors "github.com/graph-gophers/graphql-go/errors"

	"kassa.dev/shared/graphqlapi"
	"kassa.dev/shared/kassa"
)

// GraphQLRequest is the body of POST /catalog/graphql (GraphQL over HTTP).
type GraphQLRequest struct {
	// The GraphQL document: one or more operations.
	Query string `json:"query" openapi:"required"`
	// The operation to run when the document has several.
	OperationName string `json:"operationName"`
	// The values of the operation's variables.
	Variables map[string]any `json:"variables"`
	// Accepted for clients that send them, and ignored.
	Extensions map[string]any `json:"extensions"`
}

// graphQLResponse is every answer of the GraphQL endpoint.
type graphQLResponse struct {
	Data   json.RawMessage         `json:"data"` // nil is null
	Errors []*gqlerrors.QueryError `json:"errors,omitempty"`
}

func (s *Server) routesGraphQL() {
	gql := graphqlapi.New(graphqlapi.Services{Products: s.svc.Products, Categories: s.svc.Categories,
		ModifierGroups: s.svc.ModifierGroups, Orgs: s.svc.Orgs}, s.log)
	s.handle(&Route{Method: "POST", Path: "/catalog/graphql", Tag: "catalog", Scope: kassa.ScopeCatalogRead, GraphQL: true,
		Body: GraphQLRequest{}, Summary: "Query and change the catalog with GraphQL (spec 4.3; mutations need catalog:write)",
		Handler: func(c *fiber.Ctx) error {
			var req GraphQLRequest
			if err := decode(c, &req); err != nil {
				return err
			}
			if strings.TrimSpace(req.Query) == "" {
				return kassa.InvalidField("query", "is required")
			}
			res := gql.Exec(c.UserContext(), req.Query, req.OperationName, req.Variables)
			s.chargeGraphQL(c, res.Cost)
			status := fiber.StatusOK
			if res.Data == nil {
				status = fiber.StatusBadRequest // the document did not run
			}
			for _, qe := range res.Errors {
				s.wordGraphQLError(c, qe)
			}
			return c.Status(status).JSON(graphQLResponse{Data: res.Data, Errors: res.Errors})
		}})
}

// chargeGraphQL spends, beyond the request's own token, one of the org's
// rate limit per 200 objects the query read (cost 0-199: none; 5,000,
// the most: 25) and one per mutation (graphqlapi.ObjectsPerRequest), so
// a GraphQL request does no more for its rate than REST requests would;
// the answer's X-RateLimit-Remaining says what is left.
func (s *Server) chargeGraphQL(c *fiber.Ctx, cost int) {
	a := kassa.ActorFrom(c.UserContext())
	if s.orgLimit == nil || a == nil || cost < graphqlapi.ObjectsPerRequest {
		return
	}
	r := s.orgLimit.Spend(a.OrgID, cost/graphqlapi.ObjectsPerRequest)
	c.Set("X-RateLimit-Remaining", strconv.Itoa(r.Remaining))
}

// wordGraphQLError words a resolver's error as the problem table words it:
// a *kassa.Error keeps its detail under the kind's title; anything else is
// internal, logged with the request id and never shown.
func (s *Server) wordGraphQLError(c *fiber.Ctx, qe *gqlerrors.QueryError) {
	if qe.ResolverError == nil {
		return // the library's own parse and validation errors
	}
	var ke *kassa.Error
	if !errors.As(qe.ResolverError, &ke) {
		if !errors.Is(qe.ResolverError, graphqlapi.ErrInternal) {
			s.log.Error("internal error", slog.String("request_id", requestID(c)),
				slog.String("path", "/api/v1/catalog/graphql"), slog.Any("err", qe.ResolverError))
		}
		ke = &kassa.Error{Kind: kassa.EInternal, Message: "an unexpected error occurred; quote the request id to support"}
	}
	qe.Message, qe.Extensions = s.graphQLError(c, ke)
}

// graphQLError returns the message and extensions of ke at the GraphQL
// endpoint.
func (s *Server) graphQLError(c *fiber.Ctx, ke *kassa.Error) (string, map[string]any) {
	p, ok := problemOf[ke.Kind]
	if !ok {
		p = problemOf[kassa.EInternal]
	}
	detail := ke.Message
	if detail == "" && ke.Kind == kassa.EInvalid {
		detail = "invalid fields"
	}
	ext := map[string]any{"code": string(ke.Kind), "request_id": requestID(c)}
	if len(ke.Fields) > 0 {
		fields := make([]kassa.FieldError, len(ke.Fields))
		for i, f := range ke.Fields {
			fields[i] = kassa.FieldError{Field: camelCase(f.Field), Message: f.Message}
		}
		ext["fields"] = fields
		if ke.Message == "" {
			detail = fields[0].Field + " " + fields[0].Message
		}
	}
	return p.title + ": " + detail, ext
}

// writeGraphQLProblem is writeProblem at the GraphQL endpoint: the same
// status and headers, the body a GraphQL response.
func (s *Server) writeGraphQLProblem(c *fiber.Ctx, ke *kassa.Error) error {
	msg, ext := s.graphQLError(c, ke)
	return c.JSON(graphQLResponse{Errors: []*gqlerrors.QueryError{{Message: msg, Extensions: ext}}})
}

// camelCase names a field as the GraphQL schema does: base_price is
// basePrice.
func camelCase(s string) string {
	parts := strings.Split(s, "_")
	for i := 1; i < len(parts); i++ {
		if parts[i] != "" {
			parts[i] = strings.ToUpper(parts[i][:1]) + parts[i][1:]
		}
	}
	return strings.Join(parts, "")
}
