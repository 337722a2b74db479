package sqlite

import (
	"context"
	"fmt"
	"io/fs"
	"maps"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"

	"kassa.dev/sync/change"
)

// TestTheCurrentFormatCarriesTheReplicatedSchema fails when a migration
// after the current format's changes a replicated table: an edge of this
// format would be sent fields its store lacks. Bump change.Format and map
// the new format to that migration in the formats of the nouns it changed
// (registry.go).
func TestTheCurrentFormatCarriesTheReplicatedSchema(t *testing.T) {
	ctx := context.Background()
	names, err := fs.Glob(migrationFS, "migrations/*.sql")
	if err != nil {
		t.Fatal(err)
	}
	sort.Strings(names)
	latest, err := schemaAt(ctx, migrationNumber(names[len(names)-1]))
	if err != nil {
		t.Fatal(err)
	}
	cur, err := SchemaOf(ctx, change.Format)
	if err != nil {
		t.Fatal(err)
	}
	var changed []string
	for _, table := range replicatedTables() {
		if fmt.Sprint(cur.Columns[table]) != fmt.Sprint(latest.Columns[table]) {
			changed = append(changed, fmt.Sprintf("%s %v → %v", table, cur.Columns[table], latest.Columns[table]))
		}
	}
	if len(changed) > 0 {
		t.Fatalf("migrations after %d change replicated tables: bump change.Format and add the step to the formats of the nouns it changed\n%s",
			formatMigrations()[change.Format], strings.Join(changed, "\n"))
	}
	if _, err := SchemaOf(ctx, change.Format+1); err == nil {
		t.Fatal("a format this build does not know has a schema")
	}
}

// TestAnOlderEdgeGetsWhatItsStoreHoldsAndVerifies plays an edge of a
// release before campaigns (migration 0010) against a hub of today: the
// hub's log as it is does not apply there (orders carry voucher_code and
// campaigns); downgraded to the edge's schema it applies, and the hub's
// digests at that schema equal the edge's own.
func TestAnOlderEdgeGetsWhatItsStoreHoldsAndVerifies(t *testing.T) {
	ctx := context.Background()
	open := func(migrateTo int) *DB {
		db, err := Open(ctx, filepath.Join(t.TempDir(), "k.db"), Options{MigrateTo: migrateTo})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { db.Close() })
		return db
	}
	hub := wrapNode(t, open(0))
	old := open(10)
	// Today's apply records what it applied for the live feeds (migration
	// 0016, a node-local table): give the older store those columns. Only
	// the replicated tables are under test here.
	live, err := migrationFS.ReadFile("migrations/0016_live.sql")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := old.Writer.ExecContext(ctx, string(live)); err != nil {
		t.Fatal(err)
	}
	w := seed(t, hub)
	for range 3 {
		sell(t, hub, w, w.p1, 2)
	}
	es, err := hub.db.ChangesAfter(ctx, 0, 100000, LogFilter{Scope: &Scope{OrgID: w.org, LocationID: w.loc}, ExcludeOrigin: old.NodeID})
	if err != nil {
		t.Fatal(err)
	}
	cs := wire(t, es)
	if _, err := old.Apply(ctx, cs, false); err == nil {
		t.Fatal("an older store applied fields it has no columns for")
	}
	s10, err := schemaAt(ctx, 10)
	if err != nil {
		t.Fatal(err)
	}
	var down []change.Change
	stripped := 0
	for _, c := range cs {
		d, ok := s10.Downgrade(c)
		if !ok {
			continue
		}
		if len(d.Fields) < len(c.Fields) {
			stripped++
			if _, kept := c.Fields["voucher_code"]; kept && c.Entity == "order" {
				if _, still := d.Fields["voucher_code"]; still {
					t.Fatal("voucher_code kept for a store without the column")
				}
			}
		}
		down = append(down, d)
	}
	if stripped == 0 {
		t.Fatal("nothing was downgraded: the test does not exercise the older schema")
	}
	if _, err := old.Apply(ctx, down, false); err != nil {
		t.Fatalf("the downgraded log does not apply at the older store: %v", err)
	}
	hd, err := hub.db.DigestsAt(ctx, w.org, w.loc, s10)
	if err != nil {
		t.Fatal(err)
	}
	// The older store holds exactly that schema's columns, so this is its
	// own "SELECT *" digest, over the tables it has.
	od, err := old.DigestsAt(ctx, w.org, w.loc, s10)
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := hd["campaigns"]; ok {
		t.Fatal("the hub digests a table the older edge does not have")
	}
	for _, table := range slices.Sorted(maps.Keys(hd)) {
		if hd[table] != od[table] {
			t.Errorf("%s: hub %s, older edge %s", table, hd[table], od[table])
		}
	}
	if len(hd) != len(od) {
		t.Errorf("the hub digests %d tables, the older edge %d", len(hd), len(od))
	}
}

// TestTheHubsScopeIndexIsAtTheHubOnly: outbox_scope serves the hub's
// pending-down counts; an edge's sales would pay for it for nothing. That
// holds for a store made today and for one of v0.6.0, whose migration
// 0015 (as it shipped, migrations up to 0018) made the index at every
// node: upgraded as an edge it loses it (edgeIndexes at Open), upgraded as a
// hub it has it (hubIndexes, made after the migrations).
func TestTheHubsScopeIndexIsAtTheHubOnly(t *testing.T) {
	ctx := context.Background()
	for _, upgraded := range []bool{false, true} {
		for _, hub := range []bool{true, false} {
			path := filepath.Join(t.TempDir(), "k.db")
			if upgraded {
				old, err := Open(ctx, path, Options{MigrateTo: 18})
				if err != nil {
					t.Fatal(err)
				}
				_, err = old.Writer.ExecContext(ctx, `CREATE INDEX outbox_scope ON outbox(org_id, location_id, seq, origin)`)
				old.Close()
				if err != nil {
					t.Fatal(err)
				}
			}
			db, err := Open(ctx, path, Options{Hub: hub})
			if err != nil {
				t.Fatal(err)
			}
			var n int
			if err := db.Reader.QueryRowContext(ctx, `SELECT count(*) FROM sqlite_master WHERE type = 'index' AND name = 'outbox_scope'`).Scan(&n); err != nil {
				t.Fatal(err)
			}
			db.Close()
			if (n == 1) != hub {
				t.Errorf("hub %v, upgraded from v0.6.0 %v: outbox_scope present %v", hub, upgraded, n == 1)
			}
		}
	}
}

// TestMigration19KeepsTheRedemptionsAStoreHeld: a hub of format 1 held
// edges' redemption rows and its own amounts beside them
// (redemption_amounts); migration 0019 keeps one row per order and
// campaign with the hub's amounts where it had them, dated at the sale,
// and drops the side table.
func TestMigration19KeepsTheRedemptionsAStoreHeld(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "k.db")
	old, err := Open(ctx, path, Options{Hub: true, MigrateTo: 18})
	if err != nil {
		t.Fatal(err)
	}
	exec := func(q string, args ...any) {
		t.Helper()
		if _, err := old.Writer.ExecContext(ctx, q, args...); err != nil {
			t.Fatal(err)
		}
	}
	// Today's services seed the old store: they read locations'
	// day_cutoff_hour (migration 0030), users' location_ids and
	// pin_hash (0035), products' cost (0036) and tax_category_id (0042),
	// categories' tax_category_id (0042), points entries' payment_id (0043),
	// customers' store credit (0045, the balance a customer shows),
	// added for the seed and
	// dropped again, so that the store reopens as release 18 left it.
	exec(`ALTER TABLE locations ADD COLUMN day_cutoff_hour INTEGER NOT NULL DEFAULT 0`)
	exec(`ALTER TABLE users ADD COLUMN location_ids TEXT NOT NULL DEFAULT '[]'`)
	exec(`ALTER TABLE users ADD COLUMN pin_hash TEXT NOT NULL DEFAULT ''`)
	exec(`ALTER TABLE products ADD COLUMN cost INTEGER`)
	exec(`ALTER TABLE products ADD COLUMN tax_category_id TEXT`)
	exec(`ALTER TABLE categories ADD COLUMN tax_category_id TEXT`)
	exec(`ALTER TABLE points_transactions ADD COLUMN payment_id TEXT`)
	exec(`CREATE TABLE store_credits (id TEXT PRIMARY KEY, org_id TEXT, balance INTEGER)`)
	w := seed(t, wrapNode(t, old))
	exec(`ALTER TABLE locations DROP COLUMN day_cutoff_hour`)
	exec(`ALTER TABLE users DROP COLUMN location_ids`)
	exec(`ALTER TABLE users DROP COLUMN pin_hash`)
	exec(`ALTER TABLE products DROP COLUMN cost`)
	exec(`ALTER TABLE products DROP COLUMN tax_category_id`)
	exec(`ALTER TABLE categories DROP COLUMN tax_category_id`)
	exec(`ALTER TABLE points_transactions DROP COLUMN payment_id`)
	exec(`DROP TABLE store_credits`)
	campaign, order1, order2 := old.NewID(), old.NewID(), old.NewID()
	row := func(id, order string, amount int64, created string) {
		exec(`INSERT INTO campaign_redemptions (id, org_id, location_id, campaign_id, order_id, customer_id, amount, order_total, created_at, updated_at, hlc, origin)
			VALUES (?, ?, ?, ?, ?, NULL, ?, 1000, ?, ?, 'h', 'n')`, id, w.org, w.loc, campaign, order, amount, created, created)
	}
	r1, r2, dup := old.NewID(), old.NewID(), old.NewID()
	row(r1, order1, 999999, "2026-10-01T09:00:00.000Z") // an edge's claim; the hub computed 100
	exec(`INSERT INTO redemption_amounts (redemption_id, org_id, amount, order_total) VALUES (?, ?, 100, 900)`, r1, w.org)
	row(r2, order2, 50, "2026-10-02T09:00:00.000Z") // the hub's own sale
	row(dup, order2, 50, "2026-10-02T09:00:01.000Z")
	old.Close()

	db, err := Open(ctx, path, Options{Hub: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	got := dumpRows(t, db, `SELECT order_id, amount, order_total, occurred_at FROM campaign_redemptions WHERE campaign_id = ? ORDER BY occurred_at`, campaign)
	want := fmt.Sprint([][]any{{order1, int64(100), int64(900), "2026-10-01T09:00:00.000Z"}, {order2, int64(50), int64(1000), "2026-10-02T09:00:00.000Z"}})
	if fmt.Sprint(got) != want {
		t.Fatalf("after migration 0019: %v, want %v", got, want)
	}
	var n int
	if err := db.Reader.QueryRowContext(ctx, `SELECT count(*) FROM sqlite_master WHERE name = 'redemption_amounts'`).Scan(&n); err != nil || n != 0 {
		t.Fatalf("redemption_amounts is still there (%d, %v)", n, err)
	}
}

// TestTheRegistryNamesAMigrationForEveryFormat: the formats the nouns
// register (registry.go) run from 1 to this build's change.Format without
// a gap, each carrying a later schema than the one before.
func TestTheRegistryNamesAMigrationForEveryFormat(t *testing.T) {
	m := formatMigrations()
	for f := 1; f <= change.Format; f++ {
		if _, ok := m[f]; !ok {
			t.Fatalf("no noun registers a migration for format %d (formats %v)", f, m)
		}
		if f > 1 && m[f] <= m[f-1] {
			t.Errorf("format %d carries migration %d, not later than format %d's %d", f, m[f], f-1, m[f-1])
		}
	}
	if len(m) != change.Format {
		t.Errorf("the nouns register formats %v; this build writes format %d", m, change.Format)
	}
}
