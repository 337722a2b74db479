package sqlite

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"strconv"
	"time"

	"kassa.dev/shared/kassa"
	"kassa.dev/shared/sqlite/engine"
	"kassa.dev/sync/change"
)

// Markdowns (docs/catalog.md): scheduled price reductions, written at the
// hub (an enrolled edge answers 409, like campaigns) and replicated to
// every store, which prices with them offline. Each write also keeps the
// markdown's state in the node-local markdown_versions (migration 0047),
// so that the hub checks an edge's marked-down line against the markdown
// as it stood when the sale was made (checkLineMarkdown).

// MarkdownService implements kassa.MarkdownService.
type MarkdownService struct{ db *DB }

// NewMarkdownService returns the markdown service of db.
func NewMarkdownService(db *DB) *MarkdownService { return &MarkdownService{db: db} }

var _ kassa.MarkdownService = (*MarkdownService)(nil)

const markdownCols = `SELECT id, org_id, name, type, value, product_ids, category_ids, starts_at, ends_at, is_active, created_at, updated_at FROM markdowns`

func scanMarkdown(s scanner) (*kassa.Markdown, error) {
	var m kassa.Markdown
	var products, categories, starts, ends, created, updated string
	if err := s.Scan(&m.ID, &m.OrgID, &m.Name, &m.Type, &m.Value, &products, &categories, &starts, &ends, &m.IsActive, &created, &updated); err != nil {
		return nil, err
	}
	m.StartsAt, m.EndsAt, m.CreatedAt, m.UpdatedAt = parseTime(starts), parseTime(ends), parseTime(created), parseTime(updated)
	return &m, errors.Join(decodeJSON(products, &m.ProductIDs), decodeJSON(categories, &m.CategoryIDs))
}

func markdownID(m *kassa.Markdown) string { return m.ID }

func findMarkdown(ctx context.Context, q querier, orgID, id string) (*kassa.Markdown, error) {
	return findByID(ctx, q, markdownCols, "markdown", orgID, id, scanMarkdown)
}

// FindMarkdowns lists the org's markdowns by id; f.ActiveAt keeps those
// applying then.
func (s *MarkdownService) FindMarkdowns(ctx context.Context, f kassa.MarkdownFilter) (kassa.List[kassa.Markdown], error) {
	a, err := kassa.MustActor(ctx)
	if err != nil {
		return kassa.List[kassa.Markdown]{}, err
	}
	w := orgFilter(a.OrgID)
	if f.ActiveAt != nil {
		at := fmtTime(*f.ActiveAt)
		w.and("is_active = 1 AND starts_at <= ? AND ends_at > ?", at, at)
	}
	return findPage(ctx, s.db.Reader, markdownCols, w, f.Page, scanMarkdown, markdownID)
}

// FindMarkdownByID returns one markdown of the org, or ENotFound.
func (s *MarkdownService) FindMarkdownByID(ctx context.Context, id string) (*kassa.Markdown, error) {
	return readOwn(ctx, s.db, findMarkdown, id)
}

// markdownColumns are the stored columns of a markdown.
func markdownColumns(in *kassa.MarkdownCreate) map[string]any {
	return map[string]any{"name": in.Name, "type": in.Type, "value": *in.Value, "product_ids": dedupe(in.ProductIDs),
		"category_ids": dedupe(in.CategoryIDs), "starts_at": truncMilli(in.StartsAt), "ends_at": truncMilli(in.EndsAt),
		"is_active": in.IsActive == nil || *in.IsActive}
}

// CreateMarkdown validates and stores a markdown. Errors: EInvalid (also
// products or categories not in the org, and a new price not below every
// price it would apply to, naming value), EConflict at an enrolled edge.
func (s *MarkdownService) CreateMarkdown(ctx context.Context, in *kassa.MarkdownCreate) (*kassa.Markdown, error) {
	a, err := kassa.MustActor(ctx)
	if err != nil {
		return nil, err
	}
	if err := in.Validate(); err != nil {
		return nil, err
	}
	id := s.db.NewID()
	return writeRead(ctx, s.db, findMarkdown, a.OrgID, id, func(tx *Tx) error {
		if err := checkMarkdownRefs(ctx, tx, a.OrgID, in); err != nil {
			return err
		}
		return tx.Insert(ctx, entMarkdown, a.OrgID, id, markdownColumns(in))
	})
}

// UpdateMarkdown applies a partial update; the merged markdown is checked
// as a new one would be. Errors: ENotFound, EInvalid, EConflict at an
// enrolled edge.
func (s *MarkdownService) UpdateMarkdown(ctx context.Context, id string, in *kassa.MarkdownUpdate) (*kassa.Markdown, error) {
	a, err := kassa.MustActor(ctx)
	if err != nil {
		return nil, err
	}
	return updateRead(ctx, s.db, entMarkdown, findMarkdown, a.OrgID, id, func(tx *Tx, old *kassa.Markdown, cols map[string]any) error {
		merged, err := in.Merged(old)
		if err != nil {
			return err
		}
		if err := checkMarkdownRefs(ctx, tx, a.OrgID, merged); err != nil {
			return err
		}
		now := markdownColumns(merged)
		was := markdownColumns(&kassa.MarkdownCreate{Name: old.Name, Type: old.Type, Value: &old.Value, ProductIDs: old.ProductIDs,
			CategoryIDs: old.CategoryIDs, StartsAt: &old.StartsAt, EndsAt: &old.EndsAt, IsActive: &old.IsActive})
		for k, v := range now {
			changed(cols, k, was[k], v)
		}
		return nil
	})
}

// checkMarkdownRefs checks a markdown's products and categories are the
// org's, and that a new price is below the price of every product it
// names, each product's variants, and every product of its categories: a
// markdown never raises a price.
func checkMarkdownRefs(ctx context.Context, q querier, orgID string, in *kassa.MarkdownCreate) error {
	if err := checkExist(ctx, q, "products", orgID, "product_ids", "no such product: %s", in.ProductIDs); err != nil {
		return err
	}
	if err := checkExist(ctx, q, "categories", orgID, "category_ids", "no such category: %s", in.CategoryIDs); err != nil {
		return err
	}
	if in.Type != kassa.MarkdownPrice {
		return nil
	}
	products, _ := json.Marshal(orEmpty(in.ProductIDs))
	categories, _ := json.Marshal(orEmpty(in.CategoryIDs))
	var sku string
	var price int64
	d := engine.D(q)
	err := q.QueryRowContext(ctx, `SELECT sku, base_price FROM products WHERE org_id = ?1 AND base_price <= ?2
		AND (id IN (SELECT p.value FROM `+d.JSONValues("?3", "p")+`) OR variant_of IN (SELECT p.value FROM `+d.JSONValues("?3", "p")+`)
		OR category_id IN (SELECT c.value FROM `+d.JSONValues("?4", "c")+`))
		ORDER BY base_price LIMIT 1`, orgID, *in.Value, string(products), string(categories)).Scan(&sku, &price)
	if errors.Is(err, sql.ErrNoRows) {
		return nil
	}
	if err != nil {
		return err
	}
	return kassa.InvalidField("value", "a markdown lowers prices: the new price is not below the price of "+sku+" ("+strconv.FormatInt(price, 10)+")")
}

// activeMarkdowns are the org's active markdowns, for pricing
// (kassa.BestMarkdown applies their windows at the sale's time).
func activeMarkdowns(ctx context.Context, q querier, orgID string) ([]kassa.Markdown, error) {
	rows, err := q.QueryContext(ctx, markdownCols+` WHERE org_id = ? AND is_active = 1`, orgID)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []kassa.Markdown
	for rows.Next() {
		m, err := scanMarkdown(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, *m)
	}
	return out, rows.Err()
}

// markDown lowers the line's unit price by the best markdown applying to
// what it sells at at (kassa.BestMarkdown), keeping the price before it.
func (b *builtLine) markDown(ms []kassa.Markdown, at time.Time) {
	if len(ms) == 0 {
		return
	}
	item := kassa.MarkdownedItem{ProductID: b.product.ID, VariantID: b.item.ID, CategoryID: deref(b.product.CategoryID)}
	if m, price := kassa.BestMarkdown(ms, item, b.unitPrice, at); m != nil {
		original := b.unitPrice
		b.original, b.markdown, b.unitPrice = &original, m, price
	}
}

// variantID is the variant the line sells, nil for its product.
func (b *builtLine) variantID() *string {
	if b.item == nil || b.item.ID == b.product.ID {
		return nil
	}
	return &b.item.ID
}

// markdownID is the markdown that lowered the line's price, nil for none.
func (b *builtLine) markdownID() *string {
	if b.markdown == nil {
		return nil
	}
	return &b.markdown.ID
}

// Markdowns: written at the hub only, replicated to every store.
var entMarkdown = new(noun)

func init() {
	register(entMarkdown, noun{Name: "markdown", Table: "markdowns", Digest: orgRows, Formats: []formatStep{{Format: 5, Migration: 46}},
		Written: recordMarkdownVersion, NewState: newCatalogWatcher})
}

// recordMarkdownVersion keeps, in the unit that wrote markdown id, its new
// state in markdown_versions, valid from the unit's time.
func recordMarkdownVersion(ctx context.Context, tx *Tx, orgID, id string) error {
	m, err := findMarkdown(ctx, tx, orgID, id)
	if err != nil {
		return err
	}
	state, err := json.Marshal(m)
	if err != nil {
		return err
	}
	_, err = tx.ExecContext(ctx, `INSERT INTO markdown_versions (org_id, markdown_id, valid_from, state) VALUES (?, ?, ?, ?)`,
		orgID, id, fmtTime(tx.Now), string(state))
	return err
}

// markdownAt is markdown id as this node had it at at: its newest version
// valid then, its first for an instant before it existed, its row when it
// has no versions (written before this node kept them); nil when unknown.
func markdownAt(ctx context.Context, q querier, orgID, id string, at time.Time) (*kassa.Markdown, error) {
	var state string
	err := q.QueryRowContext(ctx, `SELECT state FROM markdown_versions WHERE org_id = ?1 AND markdown_id = ?2
		ORDER BY valid_from <= ?3 DESC, CASE WHEN valid_from <= ?3 THEN valid_from END DESC, CASE WHEN valid_from <= ?3 THEN id END DESC, valid_from, id LIMIT 1`,
		orgID, id, fmtTime(at)).Scan(&state)
	if errors.Is(err, sql.ErrNoRows) {
		m, err := findMarkdown(ctx, q, orgID, id)
		if kassa.ErrorKind(err) == kassa.ENotFound {
			return nil, nil
		}
		return m, err
	}
	if err != nil {
		return nil, err
	}
	var m kassa.Markdown
	return &m, json.Unmarshal([]byte(state), &m)
}

// checkLineMarkdown checks, at the hub, an edge's line that claims a
// markdown: the markdown, as it stood here when the order was made (its
// occurred_at, or up to the hub's allowed clock skew later, never after
// now), applied to the line's product and lowered original_price to
// unit_price. A line without a markdown must not claim an original price
// other than its own. A forged markdown is refused.
func checkLineMarkdown(ctx context.Context, ad *admitter, c *change.Change, f map[string]any) error {
	unit, _ := intField(f, "unit_price")
	original, hasOriginal := intField(f, "original_price")
	id, _ := f["markdown_id"].(string)
	if id == "" {
		if hasOriginal && original != unit {
			return refuse(RefusedValue, "original_price %d without a markdown differs from unit_price %d", original, unit)
		}
		return nil
	}
	if !hasOriginal {
		return refuse(RefusedValue, "a marked-down line carries its original_price")
	}
	item, at, err := markdownedLine(ctx, ad, c.OrgID, f)
	if err != nil {
		return err
	}
	for _, t := range []time.Time{earlier(at, ad.Tx.Now), earlier(at.Add(ad.Tx.DB.MaxSkew), ad.Tx.Now)} {
		m, err := markdownAt(ctx, ad.Tx, c.OrgID, id, t)
		if err != nil {
			return err
		}
		if m != nil && m.AppliesTo(item, t) && m.Lower(original) == unit && unit < original {
			return nil
		}
	}
	return refuse(RefusedValue, "markdown %s did not lower %d to %d for this product when the order was made", id, original, unit)
}

// markdownedLine is a pushed line's product as markdowns see it, and its
// order's occurred_at.
func markdownedLine(ctx context.Context, ad *admitter, orgID string, f map[string]any) (kassa.MarkdownedItem, time.Time, error) {
	var item kassa.MarkdownedItem
	var occurred string
	item.ProductID, _ = f["product_id"].(string)
	item.VariantID, _ = f["variant_id"].(string)
	order, _ := f["order_id"].(string)
	err := ad.Tx.QueryRowContext(ctx, `SELECT o.occurred_at, coalesce(p.category_id, '') FROM orders o
		LEFT JOIN products p ON p.org_id = o.org_id AND p.id = ?3 WHERE o.id = ?1 AND o.org_id = ?2`, order, orgID, item.ProductID).
		Scan(&occurred, &item.CategoryID)
	if err != nil {
		return item, time.Time{}, err
	}
	at, err := time.Parse(time.RFC3339Nano, occurred)
	if err != nil {
		at = ad.Tx.Now
	}
	return item, at, nil
}
