// Package graphqlapi is the catalog's GraphQL API (spec 4.3): the schema of
// spec 2.3 over kassa's catalog services, executed by graph-gophers/graphql-go.
// Package httpapi serves it at POST /api/v1/catalog/graphql and words its
// errors; this package only resolves.
//
// What it decides where the spec says "not shown" (docs/graphql.md):
//
//   - Every operation acts in the org of the caller's token (the actor in
//     the context). An orgId argument is accepted, as the spec lists it, and
//     must be that org: another is a forbidden error, never another org's
//     data.
//   - Money is Float in the currency's major units (basePrice 4.5 = 450
//     minor units of AUD, 450 = 450 of JPY); an input with more decimals than
//     the currency has is a validation error, never rounded.
//   - product(id) of no product in the org is null without an error, as a
//     REST GET would be 404 for another org's id: nobody learns which.
//   - deleteProduct archives (REST DELETE) and returns the archived product.
//   - Mutations need catalog:write, queries catalog:read (the route's).
//
// Work is bounded per request: the document's length, depth and selections
// are capped by the library, and every object the resolvers read is charged
// to a budget (Budget), so an anonymous or careless caller cannot nest
// categories and products into millions of rows.
package graphqlapi

import (
	"context"
	"errors"
	"log/slog"
	"strings"
	"time"

	graphql "github.com/graph-gophers/graphql-go"
	gqlerrors "github.com/graph-gophers/graphql-go/errors"
	gqllog "github.com/graph-gophers/graphql-go/log"

	"kassa.dev/shared/kassa"
)

// Services are the catalog services the resolvers call; each scopes its
// work to the actor of the context.
type Services struct {
	Products       kassa.ProductService
	Categories     kassa.CategoryService
	ModifierGroups kassa.ModifierGroupService
	// Orgs gives the org's currency, for money in major units.
	Orgs kassa.OrgService
}

// The limits of one request.
const (
	// MaxQueryLength is the longest query document, in bytes.
	MaxQueryLength = 16 << 10
	// MaxDepth is the deepest field nesting (the standard introspection
	// query needs 13).
	MaxDepth = 13
	// MaxSelections caps the selections after fragments are expanded.
	MaxSelections = 2000
	// Budget is the most objects (and service calls) one request may read.
	Budget = 5000
	// Timeout ends a request's execution.
	Timeout = 10 * time.Second
	// MaxMutations is the most mutation fields one request may run; each
	// is a write that replicates to every store and may fire webhooks.
	MaxMutations = 50
	// ObjectsPerRequest is what one request of the org's rate limit buys:
	// a REST page's worth of objects read, or one mutation (Result.Cost).
	ObjectsPerRequest = 200
	// maxParallelism is how many resolvers of one request run at once.
	maxParallelism = 4
	// maxList is the largest page a list argument may ask for (CONTRACT.md).
	maxList = 200
)

// API executes GraphQL requests against the catalog.
type API struct {
	schema *graphql.Schema
	log    *slog.Logger
}

// New parses the schema over svc. It panics if the schema and the
// resolvers disagree (a programming error, caught by any test).
func New(svc Services, log *slog.Logger) *API {
	a := &API{log: log}
	a.schema = graphql.MustParseSchema(Schema, &root{svc: svc},
		graphql.UseStringDescriptions(),
		graphql.MaxQueryLength(MaxQueryLength), graphql.MaxDepth(MaxDepth),
		graphql.MaxSelections(MaxSelections), graphql.OverlapValidationLimit(10000),
		graphql.MaxParallelism(maxParallelism),
		graphql.Logger(gqllog.LoggerFunc(a.logPanic)), graphql.PanicHandler(panicHandler{}))
	return a
}

// Result is what Exec returns: the data (nil when the request did not run:
// a syntax or validation error, which Errors holds) and the errors.
type Result struct {
	Data   []byte
	Errors []*gqlerrors.QueryError
	// Cost is the service calls made and objects read in lists, for the
	// caller's rate limit (the Budget is charged for what lists may hold).
	Cost int
}

// Exec runs the operation of query (the one named operationName when it
// has several) with variables, as the actor of ctx. A resolver's error keeps the service's
// *kassa.Error as the QueryError's ResolverError, for the caller to word;
// any other resolver error is internal (ErrInternal).
func (a *API) Exec(ctx context.Context, query, operationName string, variables map[string]any) *Result {
	ctx, cancel := context.WithTimeout(ctx, Timeout)
	defer cancel()
	if r := a.countMutations(ctx, query, operationName, variables); r != nil {
		return r
	}
	st := &request{budget: Budget}
	ctx = context.WithValue(ctx, requestKey{}, st)
	res := a.schema.Exec(ctx, query, operationName, variables)
	st.mu.Lock()
	defer st.mu.Unlock()
	return &Result{Data: res.Data, Errors: res.Errors, Cost: st.read}
}

// countMutations refuses, before anything runs, an operation of more than
// MaxMutations mutation fields: the library executes the document with
// every root resolver in counting mode (a mutation counts itself, a query
// reads nothing; both fail), so aliases, fragments and @skip/@include are
// counted as the real run would see them. It returns nil when the real run
// may go ahead, or the Result to answer (the count's refusal, or the
// document's parse and validation errors). A document without the word
// "mutation" has no mutation operation and is not counted.
func (a *API) countMutations(ctx context.Context, query, operationName string, variables map[string]any) *Result {
	if !strings.Contains(query, "mutation") {
		return nil
	}
	st := &request{budget: Budget, counting: true}
	res := a.schema.Exec(context.WithValue(ctx, requestKey{}, st), query, operationName, copyVars(variables))
	switch {
	case res.Data == nil:
		return &Result{Errors: res.Errors}
	case st.mutations > MaxMutations:
		return &Result{Errors: []*gqlerrors.QueryError{{Message: errMutations.Error(), ResolverError: errMutations, Err: errMutations}}}
	}
	return nil
}

// copyVars is a shallow copy of variables: Exec fills in the operation's
// defaults in the map it is given.
func copyVars(variables map[string]any) map[string]any {
	if variables == nil {
		return nil
	}
	out := make(map[string]any, len(variables))
	for k, v := range variables {
		out[k] = v
	}
	return out
}

// ErrInternal is the resolver error of a panic.
var ErrInternal = errors.New("graphqlapi: internal error")

type panicHandler struct{}

func (panicHandler) MakePanicError(context.Context, any) *gqlerrors.QueryError {
	return &gqlerrors.QueryError{Message: "internal error", ResolverError: ErrInternal, Err: ErrInternal}
}

func (a *API) logPanic(_ context.Context, value any) {
	a.log.Error("graphql: a resolver panicked", slog.Any("panic", value))
}
