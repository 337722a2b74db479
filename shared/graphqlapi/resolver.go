package graphqlapi

import (
	"cmp"
	"context"
	"slices"

	graphql "github.com/graph-gophers/graphql-go"

	"kassa.dev/shared/kassa"
)

// root resolves the Query and Mutation fields.
type root struct{ svc Services }

// sameOrg checks an orgId argument: absent, or the token's org.
func sameOrg(ctx context.Context, orgID *string) error {
	a, err := kassa.MustActor(ctx)
	if err != nil {
		return err
	}
	if orgID != nil && *orgID != a.OrgID {
		return kassa.Errorf(kassa.EForbidden, "orgId must be the org of the token")
	}
	return nil
}

// listLimit checks a limit argument: 1-200, default 50 (CONTRACT.md).
func listLimit(limit *int32) (int, error) {
	if limit == nil {
		return 50, nil
	}
	if *limit < 1 || *limit > maxList {
		return 0, kassa.InvalidField("limit", "must be between 1 and 200")
	}
	return int(*limit), nil
}

// optionalID checks an id argument that may be absent.
func optionalID(id *string, field string) error {
	if id != nil && !kassa.ValidID(*id) {
		return kassa.InvalidField(field, "must be an id")
	}
	return nil
}

type productsArgs struct {
	OrgID      *string
	CategoryID *string
	IsActive   *bool
	Limit      *int32
}

func (rt *root) Products(ctx context.Context, args productsArgs) ([]*product, error) {
	if counting(ctx, false) {
		return nil, errCounting
	}
	if err := sameOrg(ctx, args.OrgID); err != nil {
		return nil, err
	}
	if err := optionalID(args.CategoryID, "categoryId"); err != nil {
		return nil, err
	}
	return rt.products(ctx, args.CategoryID, args.IsActive, args.Limit)
}

// products reads one page of products: the Query field and a category's.
func (rt *root) products(ctx context.Context, categoryID *string, isActive *bool, limit *int32) ([]*product, error) {
	n, err := listLimit(limit)
	if err != nil {
		return nil, err
	}
	// The page is charged before it is read: a request cannot read past
	// its budget by one large page.
	if err := charge(ctx, 1+n); err != nil {
		return nil, err
	}
	l, err := rt.svc.Products.FindProducts(ctx, kassa.ProductFilter{CategoryID: categoryID, IsActive: isActive, Page: kassa.Page{Limit: n}})
	if err != nil {
		return nil, err
	}
	read(ctx, 1+len(l.Items))
	return rt.productsOf(ctx, l.Items)
}

func (rt *root) Product(ctx context.Context, args struct{ ID graphql.ID }) (*product, error) {
	if counting(ctx, false) {
		return nil, errCounting
	}
	if !kassa.ValidID(string(args.ID)) {
		return nil, nil
	}
	if err := one(ctx); err != nil {
		return nil, err
	}
	p, err := rt.svc.Products.FindProductByID(ctx, string(args.ID))
	if kassa.ErrorKind(err) == kassa.ENotFound {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	return rt.productOf(ctx, p)
}

func (rt *root) Categories(ctx context.Context, args struct{ OrgID *string }) ([]*category, error) {
	if counting(ctx, false) {
		return nil, errCounting
	}
	if err := sameOrg(ctx, args.OrgID); err != nil {
		return nil, err
	}
	cats, err := readAll(ctx, func(p kassa.Page) (kassa.List[kassa.Category], error) {
		return rt.svc.Categories.FindCategories(ctx, kassa.CategoryFilter{Page: p})
	})
	if err != nil {
		return nil, err
	}
	slices.SortStableFunc(cats, func(a, b kassa.Category) int {
		return cmp.Or(cmp.Compare(a.SortOrder, b.SortOrder), cmp.Compare(a.Name, b.Name))
	})
	out := make([]*category, len(cats))
	for i := range cats {
		out[i] = &category{c: &cats[i], rt: rt}
	}
	return out, nil
}

func (rt *root) ModifierGroups(ctx context.Context, args struct{ OrgID, ProductID *string }) ([]*modifierGroup, error) {
	if counting(ctx, false) {
		return nil, errCounting
	}
	if err := sameOrg(ctx, args.OrgID); err != nil {
		return nil, err
	}
	if err := optionalID(args.ProductID, "productId"); err != nil {
		return nil, err
	}
	groups, err := readAll(ctx, func(p kassa.Page) (kassa.List[kassa.ModifierGroup], error) {
		return rt.svc.ModifierGroups.FindModifierGroups(ctx, args.ProductID, p)
	})
	if err != nil {
		return nil, err
	}
	scale, err := rt.scale(ctx)
	if err != nil {
		return nil, err
	}
	out := make([]*modifierGroup, len(groups))
	for i := range groups {
		out[i] = &modifierGroup{g: &groups[i], scale: scale}
	}
	return out, nil
}

// readAll reads every page of a list, each charged to the budget before
// it is read, so a list longer than the budget fails instead of filling
// memory.
func readAll[T any](ctx context.Context, find func(kassa.Page) (kassa.List[T], error)) ([]T, error) {
	var all []T
	p := kassa.Page{Limit: maxList}
	for {
		if err := charge(ctx, 1+maxList); err != nil {
			return nil, err
		}
		l, err := find(p)
		if err != nil {
			return nil, err
		}
		read(ctx, 1+len(l.Items))
		all = append(all, l.Items...)
		if l.NextCursor == "" {
			return all, nil
		}
		p.Cursor = l.NextCursor
	}
}

// mayWrite checks the catalog:write scope of a mutation and counts it: at
// most MaxMutations a request (a request of more is refused before any
// runs: countMutations), each costing the rate a whole request
// (ObjectsPerRequest), as a REST write would.
func mayWrite(ctx context.Context) error {
	if counting(ctx, true) {
		return errCounting
	}
	a, err := kassa.MustActor(ctx)
	if err != nil {
		return err
	}
	if !a.Has(kassa.ScopeCatalogWrite) {
		return kassa.Errorf(kassa.EForbidden, "this token lacks the %s scope", kassa.ScopeCatalogWrite)
	}
	r := stateOf(ctx)
	r.mu.Lock()
	r.mutations++
	over := r.mutations > MaxMutations
	r.mu.Unlock()
	if over {
		return errMutations
	}
	if err := charge(ctx, 1); err != nil {
		return err
	}
	read(ctx, ObjectsPerRequest)
	return nil
}

// errMutations is the error of each mutation past MaxMutations.
var errMutations = kassa.Errorf(kassa.EBadRequest, "a request runs at most %d mutations: send the rest in another", MaxMutations)

type createProductInput struct {
	Name        string
	Description *string
	SKU         string
	Barcodes    *[]string
	BasePrice   float64
	CategoryID  *string
	Tags        *[]string
	IsActive    *bool
}

func (rt *root) CreateProduct(ctx context.Context, args struct{ Input createProductInput }) (*product, error) {
	if err := mayWrite(ctx); err != nil {
		return nil, err
	}
	in := args.Input
	scale, err := rt.scale(ctx)
	if err != nil {
		return nil, err
	}
	price, err := toMinor(in.BasePrice, scale, "basePrice")
	if err != nil {
		return nil, err
	}
	p, err := rt.svc.Products.CreateProduct(ctx, &kassa.ProductCreate{Name: in.Name, Description: in.Description, SKU: in.SKU,
		Barcodes: deref(in.Barcodes), BasePrice: &price, CategoryID: in.CategoryID, Tags: deref(in.Tags), IsActive: in.IsActive})
	if err != nil {
		return nil, err
	}
	return rt.productOf(ctx, p)
}

type updateProductInput struct {
	Name        graphql.NullString
	Description graphql.NullString
	BasePrice   graphql.NullFloat
	CategoryID  graphql.NullString
	Tags        *[]string
	IsActive    graphql.NullBool
}

func (rt *root) UpdateProduct(ctx context.Context, args struct {
	ID    graphql.ID
	Input updateProductInput
}) (*product, error) {
	if err := mayWrite(ctx); err != nil {
		return nil, err
	}
	in := args.Input
	up := kassa.ProductUpdate{Name: opt(in.Name.Set, in.Name.Value), Description: opt(in.Description.Set, in.Description.Value),
		CategoryID: opt(in.CategoryID.Set, in.CategoryID.Value), IsActive: opt(in.IsActive.Set, in.IsActive.Value)}
	if in.Tags != nil {
		up.Tags = kassa.Some(*in.Tags)
	}
	if in.BasePrice.Set {
		up.BasePrice = kassa.Opt[int64]{Set: true, Null: in.BasePrice.Value == nil}
		if in.BasePrice.Value != nil {
			scale, err := rt.scale(ctx)
			if err != nil {
				return nil, err
			}
			if up.BasePrice.Value, err = toMinor(*in.BasePrice.Value, scale, "basePrice"); err != nil {
				return nil, err
			}
		}
	}
	p, err := rt.svc.Products.UpdateProduct(ctx, string(args.ID), &up)
	if err != nil {
		return nil, err
	}
	return rt.productOf(ctx, p)
}

func (rt *root) DeleteProduct(ctx context.Context, args struct{ ID graphql.ID }) (*product, error) {
	if err := mayWrite(ctx); err != nil {
		return nil, err
	}
	p, err := rt.svc.Products.ArchiveProduct(ctx, string(args.ID))
	if err != nil {
		return nil, err
	}
	return rt.productOf(ctx, p)
}

// opt is the kassa.Opt of a nullable GraphQL input: absent, null or a value.
func opt[T any](set bool, v *T) kassa.Opt[T] {
	o := kassa.Opt[T]{Set: set, Null: set && v == nil}
	if v != nil {
		o.Value = *v
	}
	return o
}

func deref[T any](p *[]T) []T {
	if p == nil {
		return nil
	}
	return *p
}

// productsOf wraps products with the org currency's scale and, when the
// query selects their category, the category (each read once a request):
// the product's fields then resolve in line (see product).
func (rt *root) productsOf(ctx context.Context, ps []kassa.Product) ([]*product, error) {
	scale, err := rt.scale(ctx)
	if err != nil {
		return nil, err
	}
	withCategory := graphql.HasSelectedField(ctx, "category")
	out := make([]*product, len(ps))
	for i := range ps {
		out[i] = &product{p: &ps[i], rt: rt, scale: scale}
		if id := ps[i].CategoryID; withCategory && id != nil {
			c, err := rt.category(ctx, *id)
			if err != nil {
				return nil, err
			}
			if c != nil {
				out[i].cat = &category{c: c, rt: rt}
			}
		}
	}
	return out, nil
}

// productOf wraps one product (productsOf).
func (rt *root) productOf(ctx context.Context, p *kassa.Product) (*product, error) {
	ps, err := rt.productsOf(ctx, []kassa.Product{*p})
	if err != nil {
		return nil, err
	}
	return ps[0], nil
}
