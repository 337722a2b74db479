package sqlite

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"kassa.dev/shared/kassa"
)

// MustOpenDB opens a fresh store in a temporary directory, closed when the
// test ends.
func MustOpenDB(t *testing.T) *DB {
	t.Helper()
	db, err := Open(context.Background(), filepath.Join(t.TempDir(), "k.db"), Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

// mustOrg inserts an org row and returns its id.
func mustOrg(t *testing.T, db *DB) string {
	t.Helper()
	id := db.NewID()
	now := fmtTime(db.Now())
	_, err := db.Writer.Exec(`INSERT INTO orgs (id, name, currency, settings, created_at, updated_at, hlc, origin) VALUES (?, ?, 'EUR', '{}', ?, ?, ?, ?)`,
		id, "org "+id, now, now, db.Clock.Now().String(), db.NodeID)
	if err != nil {
		t.Fatal(err)
	}
	return id
}

// mustLocation inserts a location row of org and returns its id.
func mustLocation(t *testing.T, db *DB, orgID string) string {
	t.Helper()
	id := db.NewID()
	now := fmtTime(db.Now())
	_, err := db.Writer.Exec(`INSERT INTO locations (id, org_id, name, timezone, address, currency, created_at, updated_at, hlc, origin) VALUES (?, ?, 'Shop', 'Europe/Berlin', '', 'EUR', ?, ?, ?, ?)`,
		id, orgID, now, now, db.Clock.Now().String(), db.NodeID)
	if err != nil {
		t.Fatal(err)
	}
	return id
}

func orgCtx(orgID string) context.Context {
	return kassa.WithActor(context.Background(), &kassa.Actor{OrgID: orgID, Role: kassa.RoleOwner})
}

func mustProduct(t *testing.T, ctx context.Context, db *DB, sku string) *kassa.Product {
	t.Helper()
	price := int64(250)
	p, err := NewProductService(db).CreateProduct(ctx, &kassa.ProductCreate{Name: "Product " + sku, SKU: sku, BasePrice: &price})
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// outboxCount counts the change records of one row.
func outboxCount(t *testing.T, db *DB, entity entity, id string) int {
	t.Helper()
	var n int
	if err := db.Reader.QueryRow(`SELECT count(*) FROM outbox WHERE entity = ? AND entity_id = ?`, entity.Name, id).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

// outboxTotal counts all change records.
func outboxTotal(t *testing.T, db *DB) int {
	t.Helper()
	var n int
	if err := db.Reader.QueryRow(`SELECT count(*) FROM outbox`).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

func wantKind(t *testing.T, err error, kind kassa.Kind) {
	t.Helper()
	if kassa.ErrorKind(err) != kind {
		t.Fatalf("error = %v, want kind %s", err, kind)
	}
}

// wantInvalid checks that err is EInvalid naming field.
func wantInvalid(t *testing.T, err error, field string) {
	t.Helper()
	var e *kassa.Error
	if !errors.As(err, &e) || e.Kind != kassa.EInvalid {
		t.Fatalf("error = %v, want %s", err, kassa.EInvalid)
	}
	for _, f := range e.Fields {
		if f.Field == field {
			return
		}
	}
	t.Fatalf("error fields = %+v, want one for %s", e.Fields, field)
}

func ptr[T any](v T) *T { return &v }

// collect walks all pages of size limit and returns the ids in order and
// the number of pages, checking the cursor contract on the way.
func collect[T any](t *testing.T, limit int, page func(kassa.Page) (kassa.List[T], error), idOf func(*T) string) ([]string, int) {
	t.Helper()
	var ids []string
	p := kassa.Page{Limit: limit}
	for pages := 1; ; pages++ {
		l, err := page(p)
		if err != nil {
			t.Fatal(err)
		}
		if len(l.Items) > limit {
			t.Fatalf("page of %d items, limit %d", len(l.Items), limit)
		}
		for i := range l.Items {
			ids = append(ids, idOf(&l.Items[i]))
		}
		if l.HasMore != (l.NextCursor != "") {
			t.Fatalf("has_more %v with next_cursor %q", l.HasMore, l.NextCursor)
		}
		if !l.HasMore {
			return ids, pages
		}
		p.Cursor = l.NextCursor
		if pages > 100 {
			t.Fatal("paging does not end")
		}
	}
}

func TestCategoryCreateUpdateFind(t *testing.T) {
	db := MustOpenDB(t)
	ctx := orgCtx(mustOrg(t, db))
	s := NewCategoryService(db)

	root, err := s.CreateCategory(ctx, &kassa.CategoryCreate{Name: "Drinks", SortOrder: 2})
	if err != nil {
		t.Fatal(err)
	}
	if root.Name != "Drinks" || !root.IsActive || root.ParentID != nil || root.SortOrder != 2 || root.CreatedAt.IsZero() {
		t.Fatalf("created %+v", root)
	}
	child, err := s.CreateCategory(ctx, &kassa.CategoryCreate{Name: "Coffee", ParentID: &root.ID, Description: ptr("hot"), IsActive: ptr(false)})
	if err != nil {
		t.Fatal(err)
	}
	if child.ParentID == nil || *child.ParentID != root.ID || child.IsActive || *child.Description != "hot" {
		t.Fatalf("created %+v", child)
	}
	if n := outboxCount(t, db, entCategory, child.ID); n != 1 {
		t.Fatalf("outbox after create = %d, want 1", n)
	}

	got, err := s.FindCategoryByID(ctx, child.ID)
	if err != nil || got.Name != "Coffee" {
		t.Fatalf("find = %+v, %v", got, err)
	}

	up, err := s.UpdateCategory(ctx, child.ID, &kassa.CategoryUpdate{
		Name: kassa.Some("Hot coffee"), Description: kassa.Opt[string]{Set: true, Null: true},
		IsActive: kassa.Some(true), SortOrder: kassa.Some(7),
	})
	if err != nil {
		t.Fatal(err)
	}
	if up.Name != "Hot coffee" || up.Description != nil || !up.IsActive || up.SortOrder != 7 || *up.ParentID != root.ID {
		t.Fatalf("updated %+v", up)
	}
	if n := outboxCount(t, db, entCategory, child.ID); n != 2 {
		t.Fatalf("outbox after update = %d, want 2", n)
	}

	// The same values again: no write, no change record.
	same, err := s.UpdateCategory(ctx, child.ID, &kassa.CategoryUpdate{Name: kassa.Some("Hot coffee"), ParentID: kassa.Some(root.ID), SortOrder: kassa.Some(7)})
	if err != nil {
		t.Fatal(err)
	}
	if n := outboxCount(t, db, entCategory, child.ID); n != 2 {
		t.Fatalf("outbox after no-op update = %d, want 2", n)
	}
	if !same.UpdatedAt.Equal(up.UpdatedAt) {
		t.Fatalf("no-op update moved updated_at from %v to %v", up.UpdatedAt, same.UpdatedAt)
	}

	// Clearing the parent makes it a root category.
	top, err := s.UpdateCategory(ctx, child.ID, &kassa.CategoryUpdate{ParentID: kassa.Opt[string]{Set: true, Null: true}})
	if err != nil {
		t.Fatal(err)
	}
	if top.ParentID != nil {
		t.Fatalf("parent_id = %v, want null", *top.ParentID)
	}

	if _, err := s.FindCategoryByID(ctx, db.NewID()); kassa.ErrorKind(err) != kassa.ENotFound {
		t.Fatalf("find unknown: %v", err)
	}
	if _, err := s.UpdateCategory(ctx, db.NewID(), &kassa.CategoryUpdate{Name: kassa.Some("x")}); kassa.ErrorKind(err) != kassa.ENotFound {
		t.Fatalf("update unknown: %v", err)
	}
	if _, err := s.FindCategories(context.Background(), kassa.CategoryFilter{}); kassa.ErrorKind(err) != kassa.EUnauthorized {
		t.Fatalf("list without actor: %v", err)
	}
}

func TestCategoryFiltersAndPaging(t *testing.T) {
	db := MustOpenDB(t)
	ctx := orgCtx(mustOrg(t, db))
	s := NewCategoryService(db)

	root, err := s.CreateCategory(ctx, &kassa.CategoryCreate{Name: "Root"})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{root.ID}
	var children []string
	for i := range 4 {
		c, err := s.CreateCategory(ctx, &kassa.CategoryCreate{Name: fmt.Sprintf("C%d", i), ParentID: &root.ID, IsActive: ptr(i%2 == 0)})
		if err != nil {
			t.Fatal(err)
		}
		want = append(want, c.ID)
		children = append(children, c.ID)
	}

	for _, limit := range []int{1, 2, 5, 10} {
		ids, _ := collect(t, limit, func(p kassa.Page) (kassa.List[kassa.Category], error) {
			return s.FindCategories(ctx, kassa.CategoryFilter{Page: p})
		}, categoryID)
		if !slices.Equal(ids, want) {
			t.Fatalf("limit %d: ids %v, want %v", limit, ids, want)
		}
	}
	// Exactly a multiple of the page size: the last page has no cursor.
	ids, pages := collect(t, 2, func(p kassa.Page) (kassa.List[kassa.Category], error) {
		return s.FindCategories(ctx, kassa.CategoryFilter{ParentID: &root.ID, Page: p})
	}, categoryID)
	if !slices.Equal(ids, children) || pages != 2 {
		t.Fatalf("children %v in %d pages, want %v in 2", ids, pages, children)
	}

	inactive, err := s.FindCategories(ctx, kassa.CategoryFilter{IsActive: ptr(false)})
	if err != nil {
		t.Fatal(err)
	}
	if len(inactive.Items) != 2 || inactive.Items[0].ID != children[1] || inactive.Items[1].ID != children[3] {
		t.Fatalf("inactive = %+v", inactive.Items)
	}
	activeChildren, err := s.FindCategories(ctx, kassa.CategoryFilter{ParentID: &root.ID, IsActive: ptr(true)})
	if err != nil {
		t.Fatal(err)
	}
	if len(activeChildren.Items) != 2 {
		t.Fatalf("active children = %+v", activeChildren.Items)
	}

	if _, err := s.FindCategories(ctx, kassa.CategoryFilter{Page: kassa.Page{Cursor: "nope"}}); kassa.ErrorKind(err) != kassa.EBadRequest {
		t.Fatalf("bad cursor: %v", err)
	}
}

func TestCategoryParentRules(t *testing.T) {
	db := MustOpenDB(t)
	ctx := orgCtx(mustOrg(t, db))
	other := orgCtx(mustOrg(t, db))
	s := NewCategoryService(db)

	a, err := s.CreateCategory(ctx, &kassa.CategoryCreate{Name: "A"})
	if err != nil {
		t.Fatal(err)
	}
	b, err := s.CreateCategory(ctx, &kassa.CategoryCreate{Name: "B", ParentID: &a.ID})
	if err != nil {
		t.Fatal(err)
	}
	c, err := s.CreateCategory(ctx, &kassa.CategoryCreate{Name: "C", ParentID: &b.ID})
	if err != nil {
		t.Fatal(err)
	}
	foreign, err := s.CreateCategory(other, &kassa.CategoryCreate{Name: "Foreign"})
	if err != nil {
		t.Fatal(err)
	}
	before := outboxTotal(t, db)

	// A parent that does not exist, or exists in another org.
	_, err = s.CreateCategory(ctx, &kassa.CategoryCreate{Name: "X", ParentID: ptr(db.NewID())})
	wantInvalid(t, err, "parent_id")
	_, err = s.CreateCategory(ctx, &kassa.CategoryCreate{Name: "X", ParentID: &foreign.ID})
	wantInvalid(t, err, "parent_id")
	_, err = s.UpdateCategory(ctx, a.ID, &kassa.CategoryUpdate{ParentID: kassa.Some(foreign.ID)})
	wantInvalid(t, err, "parent_id")
	_, err = s.UpdateCategory(ctx, a.ID, &kassa.CategoryUpdate{ParentID: kassa.Some("not-an-id")})
	wantInvalid(t, err, "parent_id")

	// Cycles: itself, its child, its grandchild.
	for _, parent := range []string{a.ID, b.ID, c.ID} {
		_, err = s.UpdateCategory(ctx, a.ID, &kassa.CategoryUpdate{Name: kassa.Some("renamed"), ParentID: kassa.Some(parent)})
		wantKind(t, err, kassa.EConflict)
	}
	_, err = s.UpdateCategory(ctx, b.ID, &kassa.CategoryUpdate{ParentID: kassa.Some(c.ID)})
	wantKind(t, err, kassa.EConflict)

	// Invalid bodies.
	_, err = s.CreateCategory(ctx, &kassa.CategoryCreate{Name: ""})
	wantInvalid(t, err, "name")
	_, err = s.UpdateCategory(ctx, a.ID, &kassa.CategoryUpdate{Name: kassa.Opt[string]{Set: true, Null: true}})
	wantInvalid(t, err, "name")
	_, err = s.UpdateCategory(ctx, a.ID, &kassa.CategoryUpdate{SortOrder: kassa.Some(2_000_000)})
	wantInvalid(t, err, "sort_order")

	if n := outboxTotal(t, db); n != before {
		t.Fatalf("refused writes left %d change records", n-before)
	}
	got, err := s.FindCategoryByID(ctx, a.ID)
	if err != nil || got.Name != "A" || got.ParentID != nil {
		t.Fatalf("a after refused updates = %+v, %v", got, err)
	}
	list, err := s.FindCategories(ctx, kassa.CategoryFilter{})
	if err != nil || len(list.Items) != 3 {
		t.Fatalf("list after refused creates = %d items, %v", len(list.Items), err)
	}

	// Moving a leaf under a sibling branch is fine.
	moved, err := s.UpdateCategory(ctx, c.ID, &kassa.CategoryUpdate{ParentID: kassa.Some(a.ID)})
	if err != nil || *moved.ParentID != a.ID {
		t.Fatalf("move = %+v, %v", moved, err)
	}
}

func TestModifierGroupProductLinks(t *testing.T) {
	db := MustOpenDB(t)
	ctx := orgCtx(mustOrg(t, db))
	s := NewModifierGroupService(db)
	products := NewProductService(db)
	p1, p2, p3 := mustProduct(t, ctx, db, "P1"), mustProduct(t, ctx, db, "P2"), mustProduct(t, ctx, db, "P3")

	g, err := s.CreateModifierGroup(ctx, &kassa.ModifierGroupCreate{
		Name: "Milk",
		Options: []kassa.ModifierOptionInput{
			{Name: "Whole", IsDefault: true},
			{Name: "Oat", PriceAdjustment: 40},
		},
		ProductIDs: []string{p2.ID, p1.ID, p2.ID},
	})
	if err != nil {
		t.Fatal(err)
	}
	if g.MaxSelections != 2 || g.MinSelections != 0 || g.Required || len(g.Options) != 2 {
		t.Fatalf("created %+v", g)
	}
	for _, o := range g.Options {
		if !kassa.ValidID(o.ID) {
			t.Fatalf("option without id: %+v", o)
		}
	}
	if !slices.Equal(g.ProductIDs, []string{p1.ID, p2.ID}) {
		t.Fatalf("product_ids = %v, want [%s %s]", g.ProductIDs, p1.ID, p2.ID)
	}
	for _, p := range []*kassa.Product{p1, p2} {
		got, err := products.FindProductByID(ctx, p.ID)
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(got.ModifierGroupIDs, []string{g.ID}) {
			t.Fatalf("product %s groups = %v", p.SKU, got.ModifierGroupIDs)
		}
		if n := outboxCount(t, db, entProduct, p.ID); n != 2 {
			t.Fatalf("product %s outbox = %d, want 2", p.SKU, n)
		}
	}
	if n := outboxCount(t, db, entProduct, p3.ID); n != 1 {
		t.Fatalf("p3 outbox = %d, want 1", n)
	}
	if n := outboxCount(t, db, entModifierGroup, g.ID); n != 1 {
		t.Fatalf("group outbox = %d, want 1", n)
	}

	// Relink: p1 loses the group, p2 keeps it, p3 gains it; the group row
	// itself does not change.
	g2, err := s.UpdateModifierGroup(ctx, g.ID, &kassa.ModifierGroupUpdate{ProductIDs: kassa.Some([]string{p3.ID, p2.ID})})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(g2.ProductIDs, []string{p2.ID, p3.ID}) {
		t.Fatalf("product_ids = %v", g2.ProductIDs)
	}
	for p, want := range map[*kassa.Product]int{p1: 3, p2: 2, p3: 2} {
		if n := outboxCount(t, db, entProduct, p.ID); n != want {
			t.Fatalf("product %s outbox = %d, want %d", p.SKU, n, want)
		}
	}
	if n := outboxCount(t, db, entModifierGroup, g.ID); n != 1 {
		t.Fatalf("group outbox = %d, want 1", n)
	}
	if got, _ := products.FindProductByID(ctx, p1.ID); len(got.ModifierGroupIDs) != 0 {
		t.Fatalf("p1 groups = %v, want none", got.ModifierGroupIDs)
	}

	// A product linked to the group from the product side shows up too.
	g3, err := s.CreateModifierGroup(ctx, &kassa.ModifierGroupCreate{Name: "Size", Required: true, MinSelections: 1, MaxSelections: ptr(1),
		Options: []kassa.ModifierOptionInput{{Name: "S"}, {Name: "L", PriceAdjustment: 50}}})
	if err != nil {
		t.Fatal(err)
	}
	if len(g3.ProductIDs) != 0 {
		t.Fatalf("unlinked group product_ids = %v", g3.ProductIDs)
	}
	if _, err := products.UpdateProduct(ctx, p3.ID, &kassa.ProductUpdate{ModifierGroupIDs: kassa.Some([]string{g.ID, g3.ID})}); err != nil {
		t.Fatal(err)
	}
	got3, err := s.FindModifierGroupByID(ctx, g3.ID)
	if err != nil || !slices.Equal(got3.ProductIDs, []string{p3.ID}) {
		t.Fatalf("g3 = %+v, %v", got3, err)
	}

	// Filter by product.
	for p, want := range map[*kassa.Product][]string{p1: {}, p2: {g.ID}, p3: {g.ID, g3.ID}} {
		l, err := s.FindModifierGroups(ctx, &p.ID, kassa.Page{})
		if err != nil {
			t.Fatal(err)
		}
		ids := []string{}
		for _, x := range l.Items {
			ids = append(ids, x.ID)
		}
		if !slices.Equal(ids, want) {
			t.Fatalf("groups of %s = %v, want %v", p.SKU, ids, want)
		}
	}
	all, err := s.FindModifierGroups(ctx, nil, kassa.Page{})
	if err != nil || len(all.Items) != 2 || !slices.Equal(all.Items[0].ProductIDs, []string{p2.ID, p3.ID}) {
		t.Fatalf("all groups = %+v, %v", all.Items, err)
	}

	// Removing one link from the product that also has another group keeps the other.
	if _, err := s.UpdateModifierGroup(ctx, g.ID, &kassa.ModifierGroupUpdate{ProductIDs: kassa.Opt[[]string]{Set: true, Null: true}}); err != nil {
		t.Fatal(err)
	}
	if got, _ := products.FindProductByID(ctx, p3.ID); !slices.Equal(got.ModifierGroupIDs, []string{g3.ID}) {
		t.Fatalf("p3 groups = %v, want [%s]", got.ModifierGroupIDs, g3.ID)
	}
}

func TestModifierGroupUpdate(t *testing.T) {
	db := MustOpenDB(t)
	ctx := orgCtx(mustOrg(t, db))
	s := NewModifierGroupService(db)
	p1 := mustProduct(t, ctx, db, "P1")

	g, err := s.CreateModifierGroup(ctx, &kassa.ModifierGroupCreate{
		Name:       "Extras",
		Options:    []kassa.ModifierOptionInput{{Name: "Cream"}, {Name: "Syrup", PriceAdjustment: 30}},
		ProductIDs: []string{p1.ID},
	})
	if err != nil {
		t.Fatal(err)
	}
	keep := g.Options[1]

	// Replace the options, keeping one by id; add a new one.
	up, err := s.UpdateModifierGroup(ctx, g.ID, &kassa.ModifierGroupUpdate{
		Name:    kassa.Some("Add-ons"),
		Options: kassa.Some([]kassa.ModifierOptionInput{{ID: keep.ID, Name: "Syrup", PriceAdjustment: 35}, {Name: "Shot", PriceAdjustment: 60}, {Name: "Ice"}}),
	})
	if err != nil {
		t.Fatal(err)
	}
	if up.Name != "Add-ons" || len(up.Options) != 3 || up.Options[0].ID != keep.ID || up.Options[0].PriceAdjustment != 35 ||
		up.Options[1].ID == "" || up.Options[1].ID == g.Options[0].ID || up.MaxSelections != 2 {
		t.Fatalf("updated %+v", up)
	}
	if !slices.Equal(up.ProductIDs, []string{p1.ID}) {
		t.Fatalf("product_ids = %v", up.ProductIDs)
	}
	if n := outboxCount(t, db, entModifierGroup, g.ID); n != 2 {
		t.Fatalf("group outbox = %d, want 2", n)
	}

	// No-op: same values, same links.
	before := outboxTotal(t, db)
	opts := []kassa.ModifierOptionInput{}
	for _, o := range up.Options {
		opts = append(opts, kassa.ModifierOptionInput(o))
	}
	same, err := s.UpdateModifierGroup(ctx, g.ID, &kassa.ModifierGroupUpdate{
		Name: kassa.Some("Add-ons"), Required: kassa.Some(false), MaxSelections: kassa.Some(2),
		Options: kassa.Some(opts), ProductIDs: kassa.Some([]string{p1.ID}),
	})
	if err != nil {
		t.Fatal(err)
	}
	if n := outboxTotal(t, db); n != before {
		t.Fatalf("no-op update left %d change records", n-before)
	}
	if !same.UpdatedAt.Equal(up.UpdatedAt) {
		t.Fatal("no-op update moved updated_at")
	}

	// Refused: each leaves the group and its links as they were.
	foreignOrg := orgCtx(mustOrg(t, db))
	foreign := mustProduct(t, foreignOrg, db, "F1")
	before = outboxTotal(t, db)
	for name, tc := range map[string]struct {
		in    kassa.ModifierGroupUpdate
		field string
	}{
		"max above options":        {kassa.ModifierGroupUpdate{MaxSelections: kassa.Some(4)}, "max_selections"},
		"required without min":     {kassa.ModifierGroupUpdate{Required: kassa.Some(true)}, "min_selections"},
		"min above max":            {kassa.ModifierGroupUpdate{MinSelections: kassa.Some(3)}, "min_selections"},
		"options shrink below max": {kassa.ModifierGroupUpdate{Options: kassa.Some([]kassa.ModifierOptionInput{{Name: "Only"}})}, "max_selections"},
		"no options":               {kassa.ModifierGroupUpdate{Options: kassa.Opt[[]kassa.ModifierOptionInput]{Set: true, Null: true}}, "options"},
		"duplicate option ids":     {kassa.ModifierGroupUpdate{Options: kassa.Some([]kassa.ModifierOptionInput{{ID: keep.ID, Name: "A"}, {ID: keep.ID, Name: "B"}})}, "options"},
		"null name":                {kassa.ModifierGroupUpdate{Name: kassa.Opt[string]{Set: true, Null: true}}, "name"},
		"unknown product":          {kassa.ModifierGroupUpdate{Name: kassa.Some("New"), ProductIDs: kassa.Some([]string{db.NewID()})}, "product_ids"},
		"foreign product":          {kassa.ModifierGroupUpdate{ProductIDs: kassa.Some([]string{foreign.ID})}, "product_ids"},
		"bad product id":           {kassa.ModifierGroupUpdate{ProductIDs: kassa.Some([]string{"x"})}, "product_ids"},
	} {
		_, err := s.UpdateModifierGroup(ctx, g.ID, &tc.in)
		if err == nil {
			t.Fatalf("%s: accepted", name)
		}
		wantInvalid(t, err, tc.field)
	}
	_, err = s.CreateModifierGroup(ctx, &kassa.ModifierGroupCreate{Name: "X", Options: []kassa.ModifierOptionInput{{Name: "A"}}, ProductIDs: []string{p1.ID, foreign.ID}})
	wantInvalid(t, err, "product_ids")
	_, err = s.CreateModifierGroup(ctx, &kassa.ModifierGroupCreate{Name: "X"})
	wantInvalid(t, err, "options")
	if n := outboxTotal(t, db); n != before {
		t.Fatalf("refused writes left %d change records", n-before)
	}
	got, err := s.FindModifierGroupByID(ctx, g.ID)
	if err != nil || got.Name != "Add-ons" || len(got.Options) != 3 || !slices.Equal(got.ProductIDs, []string{p1.ID}) {
		t.Fatalf("after refused updates %+v, %v", got, err)
	}
	if p, _ := NewProductService(db).FindProductByID(ctx, p1.ID); !slices.Equal(p.ModifierGroupIDs, []string{g.ID}) {
		t.Fatalf("p1 groups = %v", p.ModifierGroupIDs)
	}
	if l, _ := s.FindModifierGroups(ctx, nil, kassa.Page{}); len(l.Items) != 1 {
		t.Fatalf("refused create stored a group: %d", len(l.Items))
	}
	if _, err := s.UpdateModifierGroup(ctx, db.NewID(), &kassa.ModifierGroupUpdate{Name: kassa.Some("x")}); kassa.ErrorKind(err) != kassa.ENotFound {
		t.Fatalf("update unknown: %v", err)
	}
}

func TestModifierGroupPaging(t *testing.T) {
	db := MustOpenDB(t)
	ctx := orgCtx(mustOrg(t, db))
	s := NewModifierGroupService(db)
	var want []string
	for i := range 5 {
		g, err := s.CreateModifierGroup(ctx, &kassa.ModifierGroupCreate{Name: fmt.Sprintf("G%d", i), Options: []kassa.ModifierOptionInput{{Name: "A"}}})
		if err != nil {
			t.Fatal(err)
		}
		want = append(want, g.ID)
	}
	for _, limit := range []int{1, 2, 5, 6} {
		ids, _ := collect(t, limit, func(p kassa.Page) (kassa.List[kassa.ModifierGroup], error) {
			return s.FindModifierGroups(ctx, nil, p)
		}, modifierGroupID)
		if !slices.Equal(ids, want) {
			t.Fatalf("limit %d: %v, want %v", limit, ids, want)
		}
	}
}

func TestPriceList(t *testing.T) {
	db := MustOpenDB(t)
	org := mustOrg(t, db)
	ctx := orgCtx(org)
	s := NewPriceListService(db)
	l1, l2 := mustLocation(t, db, org), mustLocation(t, db, org)
	p1, p2 := mustProduct(t, ctx, db, "P1"), mustProduct(t, ctx, db, "P2")
	start := time.Date(2030, 1, 1, 8, 0, 0, 123_456_789, time.FixedZone("X", 3600))

	pl, err := s.CreatePriceList(ctx, &kassa.PriceListCreate{
		Name: "Happy hour", LocationIDs: []string{l1, l1},
		Prices:   []kassa.PriceListPrice{{ProductID: p1.ID, Price: 199}},
		StartsAt: &start,
	})
	if err != nil {
		t.Fatal(err)
	}
	if pl.Name != "Happy hour" || !pl.IsActive || !slices.Equal(pl.LocationIDs, []string{l1}) || len(pl.Prices) != 1 ||
		pl.Prices[0] != (kassa.PriceListPrice{ProductID: p1.ID, Price: 199}) || pl.EndsAt != nil ||
		!pl.StartsAt.Equal(start.Truncate(time.Millisecond)) || pl.StartsAt.Location() != time.UTC {
		t.Fatalf("created %+v", pl)
	}
	if n := outboxCount(t, db, entPriceList, pl.ID); n != 1 {
		t.Fatalf("outbox after create = %d", n)
	}
	empty, err := s.CreatePriceList(ctx, &kassa.PriceListCreate{Name: "Empty", IsActive: ptr(false)})
	if err != nil {
		t.Fatal(err)
	}
	if empty.LocationIDs == nil || empty.Prices == nil || empty.IsActive {
		t.Fatalf("empty list %+v", empty)
	}

	byLocation := func(loc string) []string {
		t.Helper()
		l, err := s.FindPriceLists(ctx, &loc, kassa.Page{})
		if err != nil {
			t.Fatal(err)
		}
		ids := []string{}
		for _, x := range l.Items {
			ids = append(ids, x.ID)
		}
		return ids
	}
	if got := byLocation(l1); !slices.Equal(got, []string{pl.ID}) {
		t.Fatalf("lists at l1 = %v", got)
	}
	if got := byLocation(l2); len(got) != 0 {
		t.Fatalf("lists at l2 = %v", got)
	}

	end := start.Add(2 * time.Hour)
	up, err := s.UpdatePriceList(ctx, pl.ID, &kassa.PriceListUpdate{
		LocationIDs: kassa.Some([]string{l2, l1}),
		Prices:      kassa.Some([]kassa.PriceListPrice{{ProductID: p1.ID, Price: 150}, {ProductID: p2.ID, Price: 0}}),
		EndsAt:      kassa.Some(end),
	})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(up.LocationIDs, []string{l2, l1}) || len(up.Prices) != 2 || up.EndsAt == nil || !up.EndsAt.Equal(end.Truncate(time.Millisecond)) {
		t.Fatalf("updated %+v", up)
	}
	if got := byLocation(l2); !slices.Equal(got, []string{pl.ID}) {
		t.Fatalf("lists at l2 = %v", got)
	}
	if n := outboxCount(t, db, entPriceList, pl.ID); n != 2 {
		t.Fatalf("outbox after update = %d", n)
	}
	if !up.ActiveAt(start.Add(time.Hour)) || up.ActiveAt(end) {
		t.Fatal("window not applied")
	}

	// No-op.
	before := outboxTotal(t, db)
	if _, err := s.UpdatePriceList(ctx, pl.ID, &kassa.PriceListUpdate{
		Name: kassa.Some("Happy hour"), LocationIDs: kassa.Some([]string{l2, l1}), StartsAt: kassa.Some(start), IsActive: kassa.Some(true),
	}); err != nil {
		t.Fatal(err)
	}
	if n := outboxTotal(t, db); n != before {
		t.Fatalf("no-op update left %d change records", n-before)
	}

	// Refused.
	foreignOrg := mustOrg(t, db)
	foreignLoc := mustLocation(t, db, foreignOrg)
	foreignProduct := mustProduct(t, orgCtx(foreignOrg), db, "F1")
	before = outboxTotal(t, db)
	for name, tc := range map[string]struct {
		in    kassa.PriceListUpdate
		field string
	}{
		"ends before stored start": {kassa.PriceListUpdate{EndsAt: kassa.Some(start.Add(-time.Hour))}, "ends_at"},
		"start after stored end":   {kassa.PriceListUpdate{StartsAt: kassa.Some(end)}, "ends_at"},
		"unknown location":         {kassa.PriceListUpdate{LocationIDs: kassa.Some([]string{l1, db.NewID()})}, "location_ids"},
		"foreign location":         {kassa.PriceListUpdate{LocationIDs: kassa.Some([]string{foreignLoc})}, "location_ids"},
		"foreign product":          {kassa.PriceListUpdate{Prices: kassa.Some([]kassa.PriceListPrice{{ProductID: foreignProduct.ID, Price: 1}})}, "prices"},
		"negative price":           {kassa.PriceListUpdate{Prices: kassa.Some([]kassa.PriceListPrice{{ProductID: p1.ID, Price: -1}})}, "prices"},
		"duplicate product":        {kassa.PriceListUpdate{Prices: kassa.Some([]kassa.PriceListPrice{{ProductID: p1.ID, Price: 1}, {ProductID: p1.ID, Price: 2}})}, "prices"},
		"null name":                {kassa.PriceListUpdate{Name: kassa.Opt[string]{Set: true, Null: true}}, "name"},
		"null is_active":           {kassa.PriceListUpdate{IsActive: kassa.Opt[bool]{Set: true, Null: true}}, "is_active"},
	} {
		_, err := s.UpdatePriceList(ctx, pl.ID, &tc.in)
		if err == nil {
			t.Fatalf("%s: accepted", name)
		}
		wantInvalid(t, err, tc.field)
	}
	_, err = s.CreatePriceList(ctx, &kassa.PriceListCreate{Name: "X", LocationIDs: []string{foreignLoc}})
	wantInvalid(t, err, "location_ids")
	_, err = s.CreatePriceList(ctx, &kassa.PriceListCreate{Name: "X", Prices: []kassa.PriceListPrice{{ProductID: db.NewID(), Price: 5}}})
	wantInvalid(t, err, "prices")
	_, err = s.CreatePriceList(ctx, &kassa.PriceListCreate{Name: "X", StartsAt: &end, EndsAt: &start})
	wantInvalid(t, err, "ends_at")
	if n := outboxTotal(t, db); n != before {
		t.Fatalf("refused writes left %d change records", n-before)
	}
	got, err := s.FindPriceListByID(ctx, pl.ID)
	if err != nil || !slices.Equal(got.LocationIDs, []string{l2, l1}) || len(got.Prices) != 2 || !got.EndsAt.Equal(*up.EndsAt) {
		t.Fatalf("after refused updates %+v, %v", got, err)
	}

	// Null removes a bound.
	open, err := s.UpdatePriceList(ctx, pl.ID, &kassa.PriceListUpdate{EndsAt: kassa.Opt[time.Time]{Set: true, Null: true}})
	if err != nil || open.EndsAt != nil {
		t.Fatalf("clear ends_at = %+v, %v", open, err)
	}
	if n := outboxCount(t, db, entPriceList, pl.ID); n != 3 {
		t.Fatalf("outbox after clearing = %d", n)
	}

	// Paging.
	want := []string{pl.ID, empty.ID}
	for range 3 {
		x, err := s.CreatePriceList(ctx, &kassa.PriceListCreate{Name: "More"})
		if err != nil {
			t.Fatal(err)
		}
		want = append(want, x.ID)
	}
	for _, limit := range []int{1, 2, 5, 7} {
		ids, _ := collect(t, limit, func(p kassa.Page) (kassa.List[kassa.PriceList], error) {
			return s.FindPriceLists(ctx, nil, p)
		}, priceListID)
		if !slices.Equal(ids, want) {
			t.Fatalf("limit %d: %v, want %v", limit, ids, want)
		}
	}
}

func TestCatalogOrgIsolation(t *testing.T) {
	db := MustOpenDB(t)
	orgA := mustOrg(t, db)
	a, b := orgCtx(orgA), orgCtx(mustOrg(t, db))
	cats, groups, lists := NewCategoryService(db), NewModifierGroupService(db), NewPriceListService(db)
	loc := mustLocation(t, db, orgA)
	p := mustProduct(t, a, db, "P1")

	c, err := cats.CreateCategory(a, &kassa.CategoryCreate{Name: "A"})
	if err != nil {
		t.Fatal(err)
	}
	g, err := groups.CreateModifierGroup(a, &kassa.ModifierGroupCreate{Name: "G", Options: []kassa.ModifierOptionInput{{Name: "O"}}, ProductIDs: []string{p.ID}})
	if err != nil {
		t.Fatal(err)
	}
	pl, err := lists.CreatePriceList(a, &kassa.PriceListCreate{Name: "L", LocationIDs: []string{loc}, Prices: []kassa.PriceListPrice{{ProductID: p.ID, Price: 1}}})
	if err != nil {
		t.Fatal(err)
	}
	before := outboxTotal(t, db)

	_, err = cats.FindCategoryByID(b, c.ID)
	wantKind(t, err, kassa.ENotFound)
	_, err = cats.UpdateCategory(b, c.ID, &kassa.CategoryUpdate{Name: kassa.Some("mine")})
	wantKind(t, err, kassa.ENotFound)
	_, err = groups.FindModifierGroupByID(b, g.ID)
	wantKind(t, err, kassa.ENotFound)
	_, err = groups.UpdateModifierGroup(b, g.ID, &kassa.ModifierGroupUpdate{Name: kassa.Some("mine")})
	wantKind(t, err, kassa.ENotFound)
	_, err = lists.FindPriceListByID(b, pl.ID)
	wantKind(t, err, kassa.ENotFound)
	_, err = lists.UpdatePriceList(b, pl.ID, &kassa.PriceListUpdate{Name: kassa.Some("mine")})
	wantKind(t, err, kassa.ENotFound)

	if l, err := cats.FindCategories(b, kassa.CategoryFilter{}); err != nil || len(l.Items) != 0 {
		t.Fatalf("b sees categories %+v, %v", l.Items, err)
	}
	if l, err := groups.FindModifierGroups(b, nil, kassa.Page{}); err != nil || len(l.Items) != 0 {
		t.Fatalf("b sees groups %+v, %v", l.Items, err)
	}
	if l, err := groups.FindModifierGroups(b, &p.ID, kassa.Page{}); err != nil || len(l.Items) != 0 {
		t.Fatalf("b sees groups of a's product %+v, %v", l.Items, err)
	}
	if l, err := lists.FindPriceLists(b, nil, kassa.Page{}); err != nil || len(l.Items) != 0 {
		t.Fatalf("b sees price lists %+v, %v", l.Items, err)
	}
	if l, err := lists.FindPriceLists(b, &loc, kassa.Page{}); err != nil || len(l.Items) != 0 {
		t.Fatalf("b sees price lists at a's location %+v, %v", l.Items, err)
	}
	// b cannot link a's product or use a's category as a parent.
	_, err = groups.CreateModifierGroup(b, &kassa.ModifierGroupCreate{Name: "G", Options: []kassa.ModifierOptionInput{{Name: "O"}}, ProductIDs: []string{p.ID}})
	wantInvalid(t, err, "product_ids")
	_, err = cats.CreateCategory(b, &kassa.CategoryCreate{Name: "B", ParentID: &c.ID})
	wantInvalid(t, err, "parent_id")
	if n := outboxTotal(t, db); n != before {
		t.Fatalf("refused writes left %d change records", n-before)
	}

	// a still sees its own.
	if l, err := groups.FindModifierGroups(a, &p.ID, kassa.Page{}); err != nil || len(l.Items) != 1 || l.Items[0].ID != g.ID {
		t.Fatalf("a's groups of p = %+v, %v", l.Items, err)
	}
}
