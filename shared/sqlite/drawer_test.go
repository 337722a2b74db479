package sqlite

import (
	"context"
	"testing"

	"kassa.dev/shared/kassa"
	"kassa.dev/sync/change"
)

// TestAnEdgeOfFormat3IsServedNoDrawers: its store has no register or
// drawer tables and no day_cutoff_hour, so the hub leaves those records
// and that field out of what it serves it; an edge of format 4 gets them.
func TestAnEdgeOfFormat3IsServedNoDrawers(t *testing.T) {
	ctx := context.Background()
	for _, entity := range []string{"register", "drawer_session", "drawer_entry", "z_report"} {
		c := change.Change{Entity: entity, Op: change.OpInsert, Fields: map[string]any{"name": "Front"}}
		for format, want := range map[int]bool{3: false, 4: true} {
			s, err := SchemaOf(ctx, format)
			if err != nil {
				t.Fatal(err)
			}
			if _, ok := s.Downgrade(c); ok != want {
				t.Errorf("%s at format %d: served %v, want %v", entity, format, ok, want)
			}
		}
	}
	s3, err := SchemaOf(ctx, 3)
	if err != nil {
		t.Fatal(err)
	}
	loc := change.Change{Entity: "location", Op: change.OpUpdate, Fields: map[string]any{"day_cutoff_hour": int64(2), "timezone": "Australia/Sydney"}}
	d, ok := s3.Downgrade(loc)
	if _, has := d.Fields["day_cutoff_hour"]; !ok || has || d.Fields["timezone"] != "Australia/Sydney" {
		t.Errorf("a location's update at format 3: %v (%v), want its timezone without day_cutoff_hour", d.Fields, ok)
	}
	if _, ok := s3.Downgrade(change.Change{Entity: "location", Op: change.OpUpdate, Fields: map[string]any{"day_cutoff_hour": int64(2)}}); ok {
		t.Error("an update of only day_cutoff_hour is served to a format-3 edge")
	}
}

// TestTheHubLeavesAnEdgesDrawersToIt: a register can be made at the hub
// for a store with an enrolled edge, but its drawer is opened at the
// store; the hub refuses (409), so two nodes never number one register's
// Z reports. A location without an edge keeps its drawers at the hub.
func TestTheHubLeavesAnEdgesDrawersToIt(t *testing.T) {
	ew := mustEdgeWorld(t)
	regs, drawers := NewRegisterService(ew.hub.db), NewDrawerService(ew.hub.db)
	amount := int64(1000)
	for _, c := range []struct {
		loc  string
		want kassa.Kind
	}{{ew.loc, kassa.EConflict}, {ew.loc2, ""}} {
		r, err := regs.CreateRegister(ew.ctx, &kassa.RegisterCreate{LocationID: c.loc, Name: "Till"})
		if err != nil {
			t.Fatal(err)
		}
		_, err = drawers.OpenDrawer(ew.ctx, &kassa.DrawerOpenRequest{RegisterID: r.ID, Float: kassa.CashCount{Amount: &amount}})
		kind := kassa.Kind("")
		if err != nil {
			kind = kassa.ErrorKind(err)
		}
		if kind != c.want {
			t.Errorf("open a drawer at the hub for location %s: %v, want %q", c.loc, err, c.want)
		}
	}
}

func TestCashCurrencyDecimalsComeFromTheCurrency(t *testing.T) {
	for code, want := range map[string]int{"AUD": 2, "JPY": 0, "BHD": 3, "EUR": 2, "XYZ": 2} {
		if got := cashCurrency(code).Decimals; got != want {
			t.Errorf("%s: %d decimals, want %d", code, got, want)
		}
	}
	if got := cashCurrency("JPY").MaxCash(); got != kassa.MaxCashCount {
		t.Errorf("JPY: at most %d, want a million yen", got)
	}
}
