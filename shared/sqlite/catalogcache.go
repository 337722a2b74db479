package sqlite

import (
	"context"
	"slices"
	"sync"
	"time"

	"kassa.dev/shared/kassa"
	"kassa.dev/shared/sqlite/engine"
)

// catalogCache is what pricing read of each org's catalog: products,
// their variants, modifier groups, the price lists applying at a location
// and the active markdowns, so that a sale does not query them again
// (buildLines; docs/write-path.md); and the bundles' components the
// completion takes out of stock (CompleteOrder). It follows the campaign cache's rule
// (campaignCache): a caller takes the org's generation (view) before it
// begins the snapshot it reads on, and a committed write of the org's
// products, price lists, markdowns or modifier groups, local or synced,
// moves the generation on (catalogWatcher); what was read under an older
// generation is never used. The time windows of price lists and
// markdowns are applied at each sale, not when read.
//
// Off on PostgreSQL (catalogIn), as the session cache (sessionCache).
type catalogCache struct {
	mu   sync.Mutex
	gens map[string]uint64
	orgs map[string]*orgCatalog
}

// orgCatalog is one org's cached catalog, read under generation gen.
type orgCatalog struct {
	gen       uint64
	products  map[string]*kassa.Product
	variants  map[string][]string
	groups    map[string]*kassa.ModifierGroup
	lists     map[string][]priceListRow   // by location
	markdowns map[string][]kassa.Markdown // "": the org's active ones
	bundles   map[string]bundleComponents // "": the org's bundles
}

// bundleComponents is an org's bundles' components by bundle id
// (bundlesOf); shared when cached, never written after it is read.
type bundleComponents = map[string][]kassa.BundleComponent

// maxCatalogOrgs bounds the cache: past it, it starts again empty.
const maxCatalogOrgs = 1000

func (c *catalogCache) generation(orgID string) uint64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.gens[orgID]
}

// ended moves the orgs' generations on, after a commit that changed
// their catalogs.
func (c *catalogCache) ended(orgIDs ...string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.gens == nil {
		c.gens = map[string]uint64{}
	}
	for _, org := range orgIDs {
		c.gens[org]++
	}
}

// current is orgID's catalog read under gen, made empty when it was read
// under another; nil when gen is no longer the org's. Called under c.mu.
func (c *catalogCache) current(orgID string, gen uint64) *orgCatalog {
	if c.gens[orgID] != gen {
		return nil
	}
	o := c.orgs[orgID]
	if o == nil || o.gen != gen {
		if c.orgs == nil || len(c.orgs) >= maxCatalogOrgs {
			c.orgs = map[string]*orgCatalog{}
		}
		o = &orgCatalog{gen: gen, products: map[string]*kassa.Product{}, variants: map[string][]string{},
			groups: map[string]*kassa.ModifierGroup{}, lists: map[string][]priceListRow{}, markdowns: map[string][]kassa.Markdown{},
			bundles: map[string]bundleComponents{}}
		c.orgs[orgID] = o
	}
	return o
}

// cachedRead is the value of key in the map of v's org catalog that part
// picks, loaded on v's snapshot when the cache does not hold it (or is
// off) and kept when v's generation is still the org's.
func cachedRead[T any](v catalogView, part func(*orgCatalog) map[string]T, key string, load func() (T, error)) (T, error) {
	if v.cache == nil {
		return load()
	}
	v.cache.mu.Lock()
	o := v.cache.current(v.orgID, v.gen)
	if o != nil {
		if x, ok := part(o)[key]; ok {
			v.cache.mu.Unlock()
			return x, nil
		}
	}
	v.cache.mu.Unlock()
	x, err := load()
	if err != nil {
		return x, err
	}
	v.cache.mu.Lock()
	defer v.cache.mu.Unlock()
	if o := v.cache.current(v.orgID, v.gen); o != nil {
		part(o)[key] = x
	}
	return x, nil
}

// catalogView reads an org's catalog for pricing: from the cache, else on
// q, a snapshot begun after gen was taken (catalogIn(db).view).
type catalogView struct {
	cache *catalogCache // nil: off
	gen   uint64
	orgID string
	q     querier
}

// catalogOf is the view of orgID's catalog to read on a snapshot begun
// after this call.
func catalogOf(db *DB, orgID string) catalogView {
	if engine.D(db.DB).Name() != "sqlite" {
		return catalogView{orgID: orgID}
	}
	c := db.States[entProduct].(*productState).catalog
	return catalogView{cache: c, gen: c.generation(orgID), orgID: orgID}
}

// product is the org's product id (a copy: the cached one is shared).
func (v catalogView) product(ctx context.Context, id string) (*kassa.Product, error) {
	p, err := cachedRead(v, func(o *orgCatalog) map[string]*kassa.Product { return o.products }, id,
		func() (*kassa.Product, error) { return findProduct(ctx, v.q, v.orgID, id) })
	if err != nil {
		return nil, err
	}
	cp := *p
	return &cp, nil
}

func (v catalogView) variants(ctx context.Context, id string) ([]string, error) {
	return cachedRead(v, func(o *orgCatalog) map[string][]string { return o.variants }, id,
		func() ([]string, error) { return variantIDs(ctx, v.q, v.orgID, id) })
}

func (v catalogView) group(ctx context.Context, id string) (*kassa.ModifierGroup, error) {
	g, err := cachedRead(v, func(o *orgCatalog) map[string]*kassa.ModifierGroup { return o.groups }, id,
		func() (*kassa.ModifierGroup, error) { return findModifierGroupTx(ctx, v.q, v.orgID, id) })
	if err != nil {
		return nil, err
	}
	cp := *g
	return &cp, nil
}

// prices are the product prices of the newest price list active at t
// that applies to the location (activePrices).
func (v catalogView) prices(ctx context.Context, locationID string, t time.Time) (map[string]int64, error) {
	lists, err := cachedRead(v, func(o *orgCatalog) map[string][]priceListRow { return o.lists }, locationID,
		func() ([]priceListRow, error) { return priceListsAt(ctx, v.q, v.orgID, locationID) })
	if err != nil {
		return nil, err
	}
	return pricesAt(lists, t), nil
}

// markdowns are the org's active markdowns (kassa.BestMarkdown applies
// their windows), a copy.
func (v catalogView) markdowns(ctx context.Context) ([]kassa.Markdown, error) {
	ms, err := cachedRead(v, func(o *orgCatalog) map[string][]kassa.Markdown { return o.markdowns }, "",
		func() ([]kassa.Markdown, error) { return activeMarkdowns(ctx, v.q, v.orgID) })
	return slices.Clone(ms), err
}

// bundles are the org's bundles' components (bundlesOf), shared: the
// caller only reads them.
func (v catalogView) bundles(ctx context.Context) (bundleComponents, error) {
	return cachedRead(v, func(o *orgCatalog) map[string]bundleComponents { return o.bundles }, "",
		func() (bundleComponents, error) { return bundlesOf(ctx, v.q, v.orgID) })
}

// productState is what a store keeps in memory of its products: the
// catalog cache pricing reads (catalogCache).
type productState struct {
	catalog *catalogCache
	catalogWatcher
}

// catalogWatcher is the state of a noun pricing reads (products, price
// lists, markdowns, modifier groups): a committed write of an org's rows
// moves the catalog cache's generation on (engine.UnitWatcher).
type catalogWatcher struct{ db *engine.DB }

func newCatalogWatcher(db *engine.DB) any { return catalogWatcher{db} }

func (w catalogWatcher) Writing(string) {}

func (w catalogWatcher) Undone([]string) {}

func (w catalogWatcher) Settled(orgIDs []string, _ bool) {
	w.db.States[entProduct].(*productState).catalog.ended(orgIDs...)
}

var _ engine.UnitWatcher = catalogWatcher{}
