package sqlite

import (
	"context"
	"fmt"
	"slices"

	"kassa.dev/shared/kassa"
	"kassa.dev/shared/sqlite/engine"
	"kassa.dev/sync/change"
)

// ModifierGroupService implements kassa.ModifierGroupService. Which products
// offer a group is stored on the products (products.modifier_group_ids); a
// group's ProductIDs are derived from them, and setting them writes the
// affected product rows.
type ModifierGroupService struct{ db *DB }

// NewModifierGroupService returns the modifier group service of db.
func NewModifierGroupService(db *DB) *ModifierGroupService { return &ModifierGroupService{db: db} }

var _ kassa.ModifierGroupService = (*ModifierGroupService)(nil)

const modifierGroupCols = `SELECT id, org_id, name, required, min_selections, max_selections, options, created_at, updated_at FROM modifier_groups`

func scanModifierGroup(s scanner) (*kassa.ModifierGroup, error) {
	var g kassa.ModifierGroup
	var options, created, updated string
	if err := s.Scan(&g.ID, &g.OrgID, &g.Name, &g.Required, &g.MinSelections, &g.MaxSelections, &options, &created, &updated); err != nil {
		return nil, err
	}
	g.CreatedAt, g.UpdatedAt = parseTime(created), parseTime(updated)
	g.Options = []kassa.ModifierOption{}
	g.ProductIDs = []string{}
	return &g, decodeJSON(options, &g.Options)
}

func modifierGroupID(g *kassa.ModifierGroup) string { return g.ID }

// FindModifierGroups lists the org's modifier groups by id; with productID,
// only the groups that product offers.
func (s *ModifierGroupService) FindModifierGroups(ctx context.Context, productID *string, p kassa.Page) (kassa.List[kassa.ModifierGroup], error) {
	a, err := kassa.MustActor(ctx)
	if err != nil {
		return kassa.List[kassa.ModifierGroup]{}, err
	}
	w := orgFilter(a.OrgID)
	if productID != nil {
		w.and(`EXISTS (SELECT 1 FROM products p, `+engine.D(s.db.Reader).JSONValues("p.modifier_group_ids", "j")+`
			WHERE p.org_id = modifier_groups.org_id AND p.id = ? AND j.value = modifier_groups.id)`, *productID)
	}
	list, err := findPage(ctx, s.db.Reader, modifierGroupCols, w, p, scanModifierGroup, modifierGroupID)
	if err != nil {
		return list, err
	}
	return list, fillGroupProducts(ctx, s.db.Reader, a.OrgID, list.Items)
}

// FindModifierGroupByID returns one modifier group of the org, or ENotFound.
func (s *ModifierGroupService) FindModifierGroupByID(ctx context.Context, id string) (*kassa.ModifierGroup, error) {
	return readOwn(ctx, s.db, findModifierGroup, id)
}

func findModifierGroup(ctx context.Context, q querier, orgID, id string) (*kassa.ModifierGroup, error) {
	g, err := findByID(ctx, q, modifierGroupCols, "modifier group", orgID, id, scanModifierGroup)
	if err != nil {
		return nil, err
	}
	groups := []kassa.ModifierGroup{*g}
	if err := fillGroupProducts(ctx, q, orgID, groups); err != nil {
		return nil, err
	}
	return &groups[0], nil
}

// fillGroupProducts sets the ProductIDs of groups, in id order, with one
// query over the org's products.
func fillGroupProducts(ctx context.Context, q querier, orgID string, groups []kassa.ModifierGroup) error {
	if len(groups) == 0 {
		return nil
	}
	idx := make(map[string]int, len(groups))
	args := []any{orgID}
	for i := range groups {
		groups[i].ProductIDs = []string{}
		idx[groups[i].ID] = i
		args = append(args, groups[i].ID)
	}
	rows, err := q.QueryContext(ctx, `SELECT DISTINCT p.id, j.value FROM products p, `+engine.D(q).JSONValues("p.modifier_group_ids", "j")+`
		WHERE p.org_id = ? AND j.value IN (`+placeholders(len(groups))+`) ORDER BY p.id`, args...)
	if err != nil {
		return err
	}
	defer rows.Close()
	for rows.Next() {
		var pid, gid string
		if err := rows.Scan(&pid, &gid); err != nil {
			return err
		}
		if i, ok := idx[gid]; ok {
			groups[i].ProductIDs = append(groups[i].ProductIDs, pid)
		}
	}
	return rows.Err()
}

// CreateModifierGroup validates and stores a new group and links it to the
// listed products. Errors: EInvalid (also for products not in the org).
func (s *ModifierGroupService) CreateModifierGroup(ctx context.Context, in *kassa.ModifierGroupCreate) (*kassa.ModifierGroup, error) {
	a, err := kassa.MustActor(ctx)
	if err != nil {
		return nil, err
	}
	if err := in.Validate(); err != nil {
		return nil, err
	}
	options, err := s.modifierOptions(ctx, s.db.Reader, a.OrgID, "", in.Options)
	if err != nil {
		return nil, err
	}
	maxSel := len(options)
	if in.MaxSelections != nil {
		maxSel = *in.MaxSelections
	}
	products := dedupe(in.ProductIDs)
	id := s.db.NewID()
	return writeRead(ctx, s.db, findModifierGroup, a.OrgID, id, func(tx *Tx) error {
		if err := checkExist(ctx, tx, "products", a.OrgID, "product_ids", "no such product: %s", products); err != nil {
			return err
		}
		if err := tx.Insert(ctx, entModifierGroup, a.OrgID, id, map[string]any{
			"name": in.Name, "required": in.Required, "min_selections": in.MinSelections,
			"max_selections": maxSel, "options": options,
		}); err != nil {
			return err
		}
		return linkGroupProducts(ctx, tx, a.OrgID, id, nil, products)
	})
}

// UpdateModifierGroup applies a partial update; the merged group must be
// valid as a whole. Product links, when present, replace the group's
// links: the products no longer listed lose the group, the new ones gain it.
// Errors: ENotFound, EInvalid.
func (s *ModifierGroupService) UpdateModifierGroup(ctx context.Context, id string, in *kassa.ModifierGroupUpdate) (*kassa.ModifierGroup, error) {
	a, err := kassa.MustActor(ctx)
	if err != nil {
		return nil, err
	}
	if err := in.Validate(); err != nil {
		return nil, err
	}
	return writeRead(ctx, s.db, findModifierGroup, a.OrgID, id, func(tx *Tx) error {
		g, err := findModifierGroup(ctx, tx, a.OrgID, id)
		if err != nil {
			return err
		}
		merged := kassa.ModifierGroupCreate{
			Name: g.Name, Required: g.Required, MinSelections: g.MinSelections,
			MaxSelections: &g.MaxSelections,
		}
		for _, o := range g.Options {
			merged.Options = append(merged.Options, kassa.ModifierOptionInput(o))
		}
		in.Name.To(&merged.Name)
		in.Required.To(&merged.Required)
		in.MinSelections.To(&merged.MinSelections)
		takeAs(&merged.MaxSelections, in.MaxSelections, func(n int) *int { return &n })
		in.Options.To(&merged.Options)
		takeAs(&merged.ProductIDs, in.ProductIDs, dedupe)
		if err := merged.Validate(); err != nil {
			return err
		}
		cols := map[string]any{}
		patchIf(cols, in.Name.Set, "name", g.Name, merged.Name)
		patchIf(cols, in.Required.Set, "required", g.Required, merged.Required)
		patchIf(cols, in.MinSelections.Set, "min_selections", g.MinSelections, merged.MinSelections)
		patchIf(cols, in.MaxSelections.Set, "max_selections", g.MaxSelections, *merged.MaxSelections)
		if in.Options.Set {
			options, err := s.modifierOptions(ctx, tx, a.OrgID, id, merged.Options)
			if err != nil {
				return err
			}
			changed(cols, "options", g.Options, options)
		}
		if in.ProductIDs.Set {
			if err := checkExist(ctx, tx, "products", a.OrgID, "product_ids", "no such product: %s", merged.ProductIDs); err != nil {
				return err
			}
		}
		if err := tx.Update(ctx, entModifierGroup, a.OrgID, id, cols); err != nil {
			return err
		}
		if !in.ProductIDs.Set {
			return nil
		}
		return linkGroupProducts(ctx, tx, a.OrgID, id, g.ProductIDs, merged.ProductIDs)
	})
}

// modifierOptions gives id-less options a new id and refuses an id listed
// twice or one that belongs to another group of the org (order lines name
// options by id, so an id must mean one option).
func (s *ModifierGroupService) modifierOptions(ctx context.Context, q querier, orgID, groupID string, in []kassa.ModifierOptionInput) ([]kassa.ModifierOption, error) {
	out := make([]kassa.ModifierOption, 0, len(in))
	seen := map[string]bool{}
	for _, o := range in {
		if o.ID == "" {
			o.ID = s.db.NewID()
		} else {
			var n int
			err := q.QueryRowContext(ctx, `SELECT count(*) FROM modifier_groups g, `+engine.D(q).JSONElements("g.options", "j")+`
				WHERE g.org_id = ? AND g.id != ? AND `+engine.D(q).JSONText("j.value", "id")+` = ?`, orgID, groupID, o.ID).Scan(&n)
			if err != nil {
				return nil, err
			}
			if n > 0 {
				return nil, kassa.InvalidField("options", fmt.Sprintf("option %s belongs to another group", o.ID))
			}
		}
		if seen[o.ID] {
			return nil, kassa.InvalidField("options", fmt.Sprintf("option %s is listed twice", o.ID))
		}
		seen[o.ID] = true
		out = append(out, kassa.ModifierOption(o))
	}
	return out, nil
}

// linkGroupProducts moves the group's links from the products in old to
// those in new: one product row write for each product that gains or loses
// the group.
func linkGroupProducts(ctx context.Context, tx *Tx, orgID, groupID string, old, new []string) error {
	for _, pid := range new {
		if slices.Contains(old, pid) {
			continue
		}
		if err := editProductGroups(ctx, tx, orgID, pid, func(ids []string) []string {
			if slices.Contains(ids, groupID) {
				return ids
			}
			return append(ids, groupID)
		}); err != nil {
			return err
		}
	}
	for _, pid := range old {
		if slices.Contains(new, pid) {
			continue
		}
		if err := editProductGroups(ctx, tx, orgID, pid, func(ids []string) []string {
			return slices.DeleteFunc(ids, func(id string) bool { return id == groupID })
		}); err != nil {
			return err
		}
	}
	return nil
}

func editProductGroups(ctx context.Context, tx *Tx, orgID, productID string, edit func([]string) []string) error {
	p, err := findProduct(ctx, tx, orgID, productID)
	if err != nil {
		return err
	}
	cols := map[string]any{}
	changed(cols, "modifier_group_ids", p.ModifierGroupIDs, orEmpty(edit(slices.Clone(orEmpty(p.ModifierGroupIDs)))))
	return tx.Update(ctx, entProduct, orgID, productID, cols)
}

var entModifierGroup = new(noun)

func init() {
	register(entModifierGroup, noun{Name: "modifier_group", Table: "modifier_groups", Digest: orgRows,
		Edge: &edgeRule{Update: []string{"name", "required", "min_selections", "max_selections", "options"},
			Scopes: catalogWrite, Check: checkModifierGroup},
		NewState: newCatalogWatcher})
}

func checkModifierGroup(_ context.Context, _ *admitter, c *change.Change, f map[string]any) error {
	return checkAs(c, f, &kassa.ModifierGroupCreate{}, &kassa.ModifierGroupUpdate{})
}
