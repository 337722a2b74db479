package graphqlapi

import (
	"context"
	"time"

	graphql "github.com/graph-gophers/graphql-go"

	"kassa.dev/shared/kassa"
)

// The object types of spec 2.3 over kassa's catalog types. Lists are never
// null ([String!]!): a product without tags has [].

// A product carries its currency's scale, read once per request before it
// is made (productsOf): its fields then take no context and return no
// error, so the library resolves them in line. A field method with a
// context or an error is resolved in a goroutine of its own — for a list
// of 200 products, thousands, at many times the work (BenchmarkGraphQL;
// docs/performance.md).
type product struct {
	p     *kassa.Product
	rt    *root
	scale int
	cat   *category // read when the query selects category (productsOf)
}

func (p *product) ID() graphql.ID       { return graphql.ID(p.p.ID) }
func (p *product) OrgID() string        { return p.p.OrgID }
func (p *product) Name() string         { return p.p.Name }
func (p *product) Description() *string { return p.p.Description }
func (p *product) SKU() string          { return p.p.SKU }
func (p *product) Barcodes() []string   { return orEmpty(p.p.Barcodes) }
func (p *product) IsActive() bool       { return p.p.IsActive }
func (p *product) CategoryID() *string  { return p.p.CategoryID }
func (p *product) Tags() []string       { return orEmpty(p.p.Tags) }
func (p *product) CreatedAt() string    { return timestamp(p.p.CreatedAt) }
func (p *product) UpdatedAt() string    { return timestamp(p.p.UpdatedAt) }

func (p *product) BasePrice() float64 { return toMajor(p.p.BasePrice, p.scale) }

// Cost is the product's cost in major units, nil when not known.
func (p *product) Cost() *float64 {
	if p.p.Cost == nil {
		return nil
	}
	v := toMajor(*p.p.Cost, p.scale)
	return &v
}

func (p *product) Category() *category { return p.cat }

type category struct {
	c  *kassa.Category
	rt *root
}

func (c *category) ID() graphql.ID       { return graphql.ID(c.c.ID) }
func (c *category) OrgID() string        { return c.c.OrgID }
func (c *category) Name() string         { return c.c.Name }
func (c *category) Description() *string { return c.c.Description }
func (c *category) ParentID() *string    { return c.c.ParentID }
func (c *category) SortOrder() int32     { return int32(c.c.SortOrder) }
func (c *category) IsActive() bool       { return c.c.IsActive }

func (c *category) Products(ctx context.Context, args struct {
	IsActive *bool
	Limit    *int32
}) ([]*product, error) {
	return c.rt.products(ctx, &c.c.ID, args.IsActive, args.Limit)
}

type modifierGroup struct {
	g     *kassa.ModifierGroup
	scale int
}

func (g *modifierGroup) ID() graphql.ID       { return graphql.ID(g.g.ID) }
func (g *modifierGroup) Name() string         { return g.g.Name }
func (g *modifierGroup) Required() bool       { return g.g.Required }
func (g *modifierGroup) MinSelections() int32 { return int32(g.g.MinSelections) }
func (g *modifierGroup) MaxSelections() int32 { return int32(g.g.MaxSelections) }

func (g *modifierGroup) Options() []*modifierOption {
	out := make([]*modifierOption, len(g.g.Options))
	for i := range g.g.Options {
		out[i] = &modifierOption{o: &g.g.Options[i], scale: g.scale}
	}
	return out
}

type modifierOption struct {
	o     *kassa.ModifierOption
	scale int
}

func (o *modifierOption) ID() graphql.ID  { return graphql.ID(o.o.ID) }
func (o *modifierOption) Name() string    { return o.o.Name }
func (o *modifierOption) IsDefault() bool { return o.o.IsDefault }

func (o *modifierOption) PriceAdjustment() float64 { return toMajor(o.o.PriceAdjustment, o.scale) }

func orEmpty(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

// timestamp is a time as the REST API writes it: RFC 3339 in UTC.
func timestamp(t time.Time) string { return t.UTC().Format(time.RFC3339Nano) }
