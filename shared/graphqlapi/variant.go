package graphqlapi

import (
	"context"
	"slices"

	"kassa.dev/shared/kassa"
)

// Variants, bundles and tax categories in the catalog's GraphQL view
// (docs/catalog.md, docs/graphql.md): fields added to the spec's Product
// and Category, read like cost; they are set through REST.

type variantOption struct{ name, value string }

func (o variantOption) Name() string  { return o.name }
func (o variantOption) Value() string { return o.value }

type bundleComponent struct{ c kassa.BundleComponent }

func (b bundleComponent) ProductID() string { return b.c.ProductID }
func (b bundleComponent) Quantity() int32   { return int32(b.c.Quantity) }

func (p *product) TaxCategoryID() *string  { return p.p.TaxCategoryID }
func (p *product) VariantOf() *string      { return p.p.VariantOf }
func (c *category) TaxCategoryID() *string { return c.c.TaxCategoryID }

// Options are a variant's options by name.
func (p *product) Options() []variantOption {
	keys := make([]string, 0, len(p.p.Options))
	for k := range p.p.Options {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	out := make([]variantOption, len(keys))
	for i, k := range keys {
		out[i] = variantOption{name: k, value: p.p.Options[k]}
	}
	return out
}

func (p *product) Components() []bundleComponent {
	out := make([]bundleComponent, len(p.p.Components))
	for i, c := range p.p.Components {
		out[i] = bundleComponent{c: c}
	}
	return out
}

// Variants lists the product's variants, charged to the request's budget
// like any list.
func (p *product) Variants(ctx context.Context, args struct{ Limit *int32 }) ([]*product, error) {
	n, err := listLimit(args.Limit)
	if err != nil {
		return nil, err
	}
	if err := charge(ctx, 1+n); err != nil {
		return nil, err
	}
	id := p.p.ID
	l, err := p.rt.svc.Products.FindProducts(ctx, kassa.ProductFilter{VariantOf: &id, Page: kassa.Page{Limit: n}})
	if err != nil {
		return nil, err
	}
	read(ctx, 1+len(l.Items))
	return p.rt.productsOf(ctx, l.Items)
}
