package graphqlapi

import (
	"context"
	"errors"
	"sync"

	"kassa.dev/shared/kassa"
)

// request is one execution's state: its budget, the org's currency scale
// and the categories already read, shared by resolvers that run in
// parallel.
type request struct {
	mu         sync.Mutex
	budget     int
	read       int // service calls made and objects read
	mutations  int
	counting   bool // countMutations' pass: resolvers count, never read or write
	scaleSet   bool
	scale      int
	categories map[string]*kassa.Category
}

type requestKey struct{}

func stateOf(ctx context.Context) *request {
	if r, ok := ctx.Value(requestKey{}).(*request); ok {
		return r
	}
	// A resolver called outside Exec (none is): a budget of its own.
	return &request{budget: Budget}
}

// errCounting is every root resolver's error in countMutations' pass.
var errCounting = errors.New("graphqlapi: counting mutations")

// counting reports whether this is countMutations' pass; a mutation
// counts itself first.
func counting(ctx context.Context, mutation bool) bool {
	r := stateOf(ctx)
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.counting && mutation {
		r.mutations++
	}
	return r.counting
}

// errBudget is the error of every resolver once the budget is spent.
var errBudget = kassa.Errorf(kassa.EBadRequest,
	"the query reads more than %d objects: ask for fewer (limit), select fewer lists or nest them less", Budget)

// charge spends n of the request's budget: one per service call and one
// per object read. Once it is spent every later charge fails too, so a
// query that went over stops resolving.
func charge(ctx context.Context, n int) error {
	r := stateOf(ctx)
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.budget < n {
		r.budget = 0
		return errBudget
	}
	r.budget -= n
	return nil
}

// one charges and counts a single read (a product or category by id, a
// mutation).
func one(ctx context.Context) error {
	if err := charge(ctx, 1); err != nil {
		return err
	}
	read(ctx, 1)
	return nil
}

// read counts n objects a resolver read (Result.Cost): the budget is
// charged for what a list may hold, the rate for what it held.
func read(ctx context.Context, n int) {
	r := stateOf(ctx)
	r.mu.Lock()
	r.read += n
	r.mu.Unlock()
}

// category returns the category of id read once per request (a product
// list's category fields all ask for a few), or nil when the org has none.
func (rt *root) category(ctx context.Context, id string) (*kassa.Category, error) {
	r := stateOf(ctx)
	r.mu.Lock()
	c, ok := r.categories[id]
	r.mu.Unlock()
	if ok {
		return c, nil
	}
	if err := one(ctx); err != nil {
		return nil, err
	}
	c, err := rt.svc.Categories.FindCategoryByID(ctx, id)
	if kassa.ErrorKind(err) == kassa.ENotFound {
		c, err = nil, nil
	}
	if err != nil {
		return nil, err
	}
	r.mu.Lock()
	if r.categories == nil {
		r.categories = map[string]*kassa.Category{}
	}
	r.categories[id] = c
	r.mu.Unlock()
	return c, nil
}

// scale returns the number of decimals of the org's currency, read once
// per request.
func (rt *root) scale(ctx context.Context) (int, error) {
	r := stateOf(ctx)
	r.mu.Lock()
	if r.scaleSet {
		defer r.mu.Unlock()
		return r.scale, nil
	}
	r.mu.Unlock()
	a, err := kassa.MustActor(ctx)
	if err != nil {
		return 0, err
	}
	org, err := rt.svc.Orgs.FindOrg(ctx, a.OrgID)
	if err != nil {
		return 0, err
	}
	s, err := currencyScale(org.Currency)
	if err != nil {
		return 0, err
	}
	r.mu.Lock()
	r.scale, r.scaleSet = s, true
	r.mu.Unlock()
	return s, nil
}
